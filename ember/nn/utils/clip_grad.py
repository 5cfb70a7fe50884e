"""Gradient clipping: clip_grad_norm_, clip_grad_value_."""
import math

import numpy as np

from ...tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_"]


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale all gradients together so that their joint ``norm_type`` norm is at most
    ``max_norm``; returns the norm before clipping (a 0-d tensor).

    The scale is ``min(1, max_norm / (total_norm + 1e-6))``, as torch.
    """
    grads = _grads(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not grads:
        return Tensor._wrap(np.asarray(0.0, dtype=np.float32))
    dtype = grads[0]._array.dtype
    if norm_type == math.inf:
        norms = [np.abs(g._array).max() if g._array.size else dtype.type(0) for g in grads]
        total = np.max(np.asarray(norms, dtype=dtype))
    else:
        norms = [(np.abs(g._array).astype(dtype) ** norm_type).sum() ** (1.0 / norm_type)
                 for g in grads]
        total = (np.asarray(norms, dtype=dtype) ** norm_type).sum() ** (1.0 / norm_type)
    total = np.asarray(total, dtype=dtype)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError("The total norm of order %s for gradients from `parameters` is "
                           "non-finite, so it cannot be clipped. To disable this error and "
                           "scale the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`" % norm_type)
    coef = np.minimum(dtype.type(max_norm) / (total + dtype.type(1e-6)), dtype.type(1.0))
    for g in grads:
        g._array *= coef.astype(g._array.dtype)
        g._bump()
    return Tensor._wrap(total)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element into ``[-clip_value, clip_value]`` in place."""
    clip_value = float(clip_value)
    for g in _grads(parameters):
        np.clip(g._array, -clip_value, clip_value, out=g._array)
        g._bump()
