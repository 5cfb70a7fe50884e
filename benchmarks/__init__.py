"""Benchmarks: training workloads timed in ember and PyTorch in one process.

Run ``python -m benchmarks.run`` (``--only W3``, ``--json out.json``, ``--quick``), and
``python -m benchmarks.floors`` for what NumPy's matrix products alone cost in W3 and W6.
"""

__all__ = []
