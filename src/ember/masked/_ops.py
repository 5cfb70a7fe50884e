"""torch.masked's functional reductions: ``sum``, ``mean``, ``amax``, ... with a ``mask`` whose
False elements take no part (torch/masked/_ops.py's semantics: masked-out elements become the
reduction's identity; a mean, var or std over nothing is nan; softmax gives them 0)."""
import math

from .. import dtypes as _dt

__all__ = ["sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "norm", "var", "std",
           "softmax", "log_softmax", "softmin", "normalize"]

_SMALL_INTS = (_dt.uint8, _dt.bool, _dt.int8, _dt.int16, _dt.int32)


def _torch():
    import ember
    return ember


def _identity(op, input, ord=2):
    dtype = input.dtype
    if op in ("sum", "norm"):
        return math.inf if op == "norm" and ord == -math.inf else 0
    if op == "prod":
        return 1
    if op in ("amax", "argmax", "amin", "argmin"):
        sign = 1 if op in ("amin", "argmin") else -1
        if dtype.is_floating_point:
            return sign * math.inf
        info = _dt.iinfo(dtype)
        return info.max if sign > 0 else info.min
    raise NotImplementedError("identity of %s on %s input" % (op, dtype))


def _canonical_dim(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = []
    for d in dims:
        if d in out:
            raise RuntimeError("dim=%s appears multiple times in the list of dims" % d)
        if d >= ndim or d < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but "
                             "got %d)" % (-max(ndim, 1), max(ndim, 1) - 1, d))
        out.append(d % ndim if ndim else 0)
    return tuple(out)


def _input_mask(input, mask):
    torch = _torch()
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if mask.shape != input.shape:
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality "
                             "higher than of the input)")
        mask = torch.broadcast_to(mask.clone(), input.shape)
    return mask.to(dtype=_dt.bool)


_COMBINE: list = []


def _combine_fn():
    if not _COMBINE:
        from ..autograd.function import Function

        class Combine(Function):
            """Masked-out elements replaced by ``fill``; the gradient passes unmasked."""

            @staticmethod
            def forward(ctx, input, mask, fill):
                return _torch().where(mask, input, fill)

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output, None, None
        _COMBINE.append(Combine.apply)
    return _COMBINE[0]


def _combine(op, input, mask, *args):
    """``input`` with its masked-out elements set to ``op``'s identity."""
    torch = _torch()
    if hasattr(input, "_masked_mask"):      # (a MaskedTensor: its own mask decides)
        data = input.get_data()
        fill = torch.tensor(_identity(op, data, *args), dtype=data.dtype)
        return _combine_fn()(data, input.get_mask(), fill)
    if mask is None:
        return input
    fill = torch.tensor(_identity(op, input, *args), dtype=input.dtype)
    return torch.where(_input_mask(input, mask), input, fill)


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Sum of the elements ``mask`` keeps (0 where it keeps none)."""
    if dtype is None:
        dtype = _dt.int64 if input.dtype in _SMALL_INTS else input.dtype
    dims = _canonical_dim(dim, input.ndim)
    return _torch().sum(_combine("sum", input, mask), dims, bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Product of the elements ``mask`` keeps (1 where it keeps none)."""
    if dtype is None:
        dtype = _dt.int64 if input.dtype in _SMALL_INTS else input.dtype
    out = _combine("prod", input, mask).to(dtype)
    for d in sorted(_canonical_dim(dim, input.ndim), reverse=True):
        out = out.prod(d, keepdim=bool(keepdim))
    return out


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Maximum of the elements ``mask`` keeps (-inf, or the dtype's min, where none)."""
    dtype = dtype or input.dtype
    dims = _canonical_dim(dim, input.ndim)
    return _torch().amax(_combine("amax", input, mask), dims, bool(keepdim)).to(dtype=dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Minimum of the elements ``mask`` keeps (inf, or the dtype's max, where none)."""
    dtype = dtype or input.dtype
    dims = _canonical_dim(dim, input.ndim)
    return _torch().amin(_combine("amin", input, mask), dims, bool(keepdim)).to(dtype=dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Index of the largest kept element, as ``dtype`` (the input's by default)."""
    dtype = dtype or input.dtype
    return _torch().argmax(_combine("argmax", input, mask), dim, bool(keepdim)).to(dtype=dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Index of the smallest kept element, as ``dtype`` (the input's by default)."""
    dtype = dtype or input.dtype
    return _torch().argmin(_combine("argmin", input, mask), dim, bool(keepdim)).to(dtype=dtype)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Mean of the kept elements (nan where none is kept)."""
    source = "Optional" if dtype is not None else "Input"
    dtype = dtype or input.dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError("mean(): Could not infer output dtype. %s dtype must be either a "
                         "floating point or complex dtype. Got: %s" % (source, dtype))
    torch = _torch()
    if mask is None:
        count = sum(torch.ones(input.shape, dtype=_dt.int64), dim, keepdim=keepdim)
        total = sum(input, dim, keepdim=keepdim, dtype=dtype)
    else:
        inmask = _input_mask(input, mask)
        count = inmask.sum(dim=_canonical_dim(dim, input.ndim), keepdim=bool(keepdim))
        total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask)
    return total / count


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Vector ``ord``-norm of the kept elements."""
    dtype = dtype or input.dtype
    from .. import linalg
    return linalg.vector_norm(_combine("norm", input, mask, ord), ord,
                              _canonical_dim(dim, input.ndim), bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt):
    torch = _torch()
    corr = 1.0
    if unbiased is not None:
        corr = 1.0 if unbiased else 0.0
    if correction is not None:
        corr = float(correction)
    if dtype is None:
        dtype = input.dtype if input.dtype.is_floating_point else _dt.float32
    dims = _canonical_dim(dim, input.ndim)
    if mask is None:
        count = sum(torch.ones(input.shape, dtype=_dt.int64), dim, keepdim=True)
        total = sum(input, dim, keepdim=True, dtype=dtype)
    else:
        inmask = _input_mask(input, mask)
        count = inmask.sum(dim=dims, keepdim=True)
        total = sum(input, dim, keepdim=True, dtype=dtype, mask=inmask)
    x = input - total / count
    if mask is None:
        total = sum(x * x, dim, keepdim=keepdim, dtype=dtype)
    else:
        total = sum(x * x, dim, keepdim=keepdim, dtype=dtype, mask=inmask)
    if not keepdim:
        count = count.reshape(total.shape)
    if corr != 0:
        count = (count.to(dtype) - corr).clamp(min=0)
    out = (total / count).to(dtype=dtype)
    return out.sqrt() if take_sqrt else out


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    """Variance of the kept elements (nan where none is kept)."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    """Standard deviation of the kept elements (nan where none is kept)."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def softmax(input, dim, *, dtype=None, mask=None):
    """Softmax over the kept elements; masked-out ones get 0 (a row with none: nan)."""
    from ..nn import functional as F
    d = _canonical_dim(dim, input.ndim)[0]
    return F.softmax(_combine("amax", input, mask), d, dtype=dtype or input.dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    """Log-softmax over the kept elements; masked-out ones get -inf."""
    from ..nn import functional as F
    d = _canonical_dim(dim, input.ndim)[0]
    return F.log_softmax(_combine("amax", input, mask), d, dtype=dtype or input.dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    """Softmin over the kept elements; masked-out ones get 0."""
    from ..nn import functional as F
    d = _canonical_dim(dim, input.ndim)[0]
    return F.softmin(_combine("amin", input, mask), d, dtype=dtype or input.dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """``input`` divided by the ``ord``-norm of its kept elements along ``dim``."""
    dtype = dtype or input.dtype
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return _torch().divide(_combine("sum", input, mask), nrm.clamp(min=eps)).to(dtype)
