"""``torch.nn.attention``: choosing the kernels of ``scaled_dot_product_attention``.

ember always computes attention with the math formula, so the choice is kept as flags (read
back by ``torch.backends.cuda.flash_sdp_enabled()`` and its siblings) and changes no result.
"""
import contextlib

from ...backends import SDPBackend, _SDP

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Enable only ``backends`` (one ``SDPBackend`` or a list) inside a ``with`` block.

    Example:
        >>> import ember
        >>> from ember.nn.attention import SDPBackend, sdpa_kernel
        >>> with sdpa_kernel(SDPBackend.MATH):
        ...     ember.backends.cuda.flash_sdp_enabled()
        False
    """
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             "instances, got %s" % type(backends).__name__)
    if isinstance(backends, SDPBackend):
        backends = [backends]
    previous = dict(_SDP)
    try:
        for b in _SDP:
            _SDP[b] = b in backends
        yield {}
    finally:
        _SDP.update(previous)
