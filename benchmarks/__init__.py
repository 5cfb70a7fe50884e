"""Benchmarks: training workloads timed in ember and PyTorch in one process.

Run ``python -m benchmarks.run`` (``--only W3``, ``--json out.json``, ``--quick``).
"""

__all__ = []
