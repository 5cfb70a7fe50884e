"""Gradient clipping: clip_grad_norm_, clip_grad_value_, get_total_norm, clip_grads_with_norm_."""
import math

import numpy as np

from ...backend import backend_for, backend_of, get_array_module
from ...tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _no_sparse(tensors, kernel):
    """torch's error: the kernel has no sparse version (a sparse ``.grad`` from
    ``Embedding(sparse=True)``)."""
    if any(t.is_sparse for t in tensors):
        raise NotImplementedError(
            "Could not run 'aten::%s' with arguments from the 'SparseCPU' backend. This could be "
            "because the operator doesn't exist for this backend, or was omitted during the "
            "selective/custom build process (if using custom build)." % kernel)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale all gradients together so that their joint ``norm_type`` norm is at most
    ``max_norm``; returns the norm before clipping (a 0-d tensor on the gradients' device).

    The scale is ``min(1, max_norm / (total_norm + 1e-6))``, as torch.
    """
    grads = _grads(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not grads:
        return Tensor._wrap(backend_for(None).xp.asarray(0.0, dtype=np.float32))
    _no_sparse(grads, "linalg_vector_norm")
    total = _total_norm_array(grads, norm_type, error_if_nonfinite)
    # Python floats are weak scalars: the arithmetic stays in the gradients' dtype.
    coef = get_array_module(total).minimum(max_norm / (total + 1e-6), 1.0)
    for g in grads:
        arr = g._array
        c = coef if type(arr) is type(coef) else backend_of(arr).asarray(coef)
        arr *= c.astype(arr.dtype)
        g._bump()
    return Tensor._wrap(total)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element into ``[-clip_value, clip_value]`` in place."""
    clip_value = float(clip_value)
    grads = _grads(parameters)      # (``parameters`` may be a generator: read once)
    _no_sparse(grads, "clamp_min_" if clip_value else "clamp_")
    for g in grads:
        get_array_module(g._array).clip(g._array, -clip_value, clip_value, out=g._array)
        g._bump()


def _vector_norm(arr, norm_type, xp, dtype):
    """``linalg.vector_norm(arr, norm_type)`` on a raw array, in ``dtype``."""
    if norm_type == 0:
        return xp.asarray(xp.count_nonzero(arr), dtype=dtype)
    a = xp.abs(arr).astype(dtype, copy=False)
    if norm_type == math.inf:
        return a.max() if a.size else xp.zeros((), dtype)
    if norm_type == -math.inf:
        return a.min() if a.size else xp.asarray(math.inf, dtype=dtype)
    return (a ** norm_type).sum() ** (1.0 / norm_type)


def _total_norm_array(tensors, norm_type, error_if_nonfinite):
    first = tensors[0]._array
    dtype = first.dtype
    b = backend_of(first)     # per-tensor norms meet on the first tensor's device, as torch
    xp = b.xp
    norms = [_vector_norm(g._array, norm_type, get_array_module(g._array), dtype)
             for g in tensors]
    norms = xp.stack([b.asarray(n) for n in norms]).astype(dtype, copy=False)
    total = xp.asarray(_vector_norm(norms, norm_type, xp, dtype), dtype=dtype)
    if error_if_nonfinite and not bool(xp.isfinite(total)):
        raise RuntimeError("The total norm of order %s for gradients from `parameters` is "
                           "non-finite, so it cannot be clipped. To disable this error and "
                           "scale the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`" % norm_type)
    return total


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type`` norm of the norms of ``tensors`` (as if all were one vector)."""
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = list(tensors)
    if not tensors:
        return Tensor._wrap(backend_for(None).xp.asarray(0.0, dtype=np.float32))
    _no_sparse(tensors, "linalg_vector_norm")
    return Tensor._wrap(_total_norm_array(tensors, float(norm_type), error_if_nonfinite))


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients by ``min(1, max_norm / (total_norm + 1e-6))`` in place."""
    grads = _grads(parameters)
    if not grads:
        return
    t = total_norm._array if isinstance(total_norm, Tensor) else total_norm
    xp = get_array_module(t) if isinstance(total_norm, Tensor) else np
    coef = xp.minimum(float(max_norm) / (t + 1e-6), 1.0)
    for g in grads:
        arr = g._array
        c = backend_of(arr).asarray(coef)
        arr *= c.astype(arr.dtype)
        g._bump()


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    """Deprecated alias of :func:`clip_grad_norm_`."""
    import warnings
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
