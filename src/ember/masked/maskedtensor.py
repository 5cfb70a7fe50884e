"""``MaskedTensor``: a tensor whose elements where ``mask`` is False are absent."""
import warnings

from .. import _torch_function, dtypes as _dt
from ..tensor import Tensor

__all__ = ["MaskedTensor", "masked_tensor", "as_masked_tensor", "is_masked_tensor"]

_PROTOTYPE = ("The PyTorch API of MaskedTensors is in prototype stage and will change in the near "
              "future. Please open a Github issue for features requests and see our documentation "
              "on the torch.masked module for further information about the project.")
_REDUCTIONS = ("sum", "mean", "amin", "amax", "argmin", "argmax", "prod", "all", "norm", "var",
               "std")
_DTYPES = (_dt.float16, _dt.float32, _dt.float64, _dt.bool, _dt.int8, _dt.int16, _dt.int32,
           _dt.int64)


def is_masked_tensor(obj):
    """Whether ``obj`` is a ``MaskedTensor``."""
    return isinstance(obj, MaskedTensor)


def _validate(data, mask):
    if is_masked_tensor(data) or not isinstance(data, Tensor):
        raise TypeError("data must be a Tensor")
    if is_masked_tensor(mask) or not isinstance(mask, Tensor):
        raise TypeError("mask must be a Tensor")
    if mask.dtype is not _dt.bool:
        raise TypeError("mask must have dtype bool.")
    if data.dtype not in _DTYPES:
        raise TypeError("%s is not supported in MaskedTensor." % data.dtype)
    if data.dim() != mask.dim():
        raise ValueError("data.dim() must equal mask.dim()")
    if data.shape != mask.shape:
        raise ValueError("data.size() must equal mask.size()")


def _wrap(t, mask):
    """``t`` (a fresh result) turned into a MaskedTensor with ``mask``, graph kept."""
    _torch_function.enable()
    t.__class__ = MaskedTensor
    t._masked_mask = mask
    return t


class MaskedTensor(Tensor):
    """A tensor with a boolean ``mask``: made by ``masked_tensor`` and ``as_masked_tensor``."""

    def __new__(cls, data, mask, requires_grad=False):
        warnings.warn(_PROTOTYPE, UserWarning, stacklevel=2)
        if isinstance(data, Tensor) and data.requires_grad:
            warnings.warn("It is not recommended to create a MaskedTensor with a tensor that "
                          "requires_grad. To avoid this, you can use data.detach().clone()",
                          UserWarning, stacklevel=2)
        _validate(data, mask)
        out = _wrap(data.detach().clone(), mask.clone())
        if requires_grad:
            out.requires_grad_(True)
        return out

    def __init__(self, *args, **kwargs):
        pass

    def get_data(self):
        """The data (all elements), in this tensor's graph."""
        return _torch_function.as_subclass(self, Tensor)

    def get_mask(self):
        """The boolean mask."""
        return self._masked_mask

    def to_tensor(self, value):
        """A plain tensor: the data with masked-out elements set to ``value``."""
        return self.get_data().masked_fill(~self.get_mask(), value)

    @property
    def is_sparse(self):
        return False

    def is_sparse_coo(self):
        return False

    def is_sparse_csr(self):
        return False

    @property
    def grad(self):
        g = self._grad
        return None if g is None else _wrap(g.detach(), self._masked_mask)

    @grad.setter
    def grad(self, value):
        self._grad = value.get_data().detach() if is_masked_tensor(value) else value

    @grad.deleter
    def grad(self):
        self._grad = None

    def __repr__(self):
        data, mask = self.get_data().detach(), self.get_mask()
        if data.dim() == 0:
            s = _fmt(data.item())
            return "MaskedTensor(%s, %s)" % (s if mask.item() else "--", mask.item())
        body = "\n".join("  " + line for line in _str(data.tolist(), mask.tolist()).split("\n"))
        return "MaskedTensor(\n" + body + "\n)"

    __str__ = __repr__

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return _dispatch(func, args, kwargs or {})


def _fmt(v):
    return "{0:8.4f}".format(v) if isinstance(v, float) else str(v)


def _str(data, mask):
    if data and not isinstance(data[0], list):
        items = [_fmt(d) for d in data]
        width = max(len(e) if m else 8 for e, m in zip(items, mask))
        return "[" + ", ".join(e if m else "--".rjust(width) for e, m in zip(items, mask)) + "]"
    subs = ["\n".join("  " + si for si in _str(d, m).split("\n")) for d, m in zip(data, mask)]
    return "[\n" + ",\n".join(subs) + "\n]"


def masked_tensor(data, mask, requires_grad=False):
    """``torch.masked.masked_tensor``: a new leaf MaskedTensor holding a copy of ``data``."""
    return MaskedTensor(data, mask, requires_grad)


def as_masked_tensor(data, mask):
    """``torch.masked.as_masked_tensor``: a MaskedTensor that stays in ``data``'s graph."""
    warnings.warn(_PROTOTYPE, UserWarning, stacklevel=2)
    _validate(data, mask)
    return _constructor()(data, mask)


_CONSTRUCTOR: list = []


def _constructor():
    if not _CONSTRUCTOR:
        from ..autograd.function import Function

        class Constructor(Function):
            """``data`` as a MaskedTensor; its gradient comes back masked."""

            node_name = "ConstructorBackward"

            @staticmethod
            def forward(ctx, data, mask):
                ctx.save_for_backward(mask)
                return _wrap(Tensor._wrap(data._array), mask)

            @staticmethod
            def backward(ctx, grad_output):
                if is_masked_tensor(grad_output):
                    return grad_output, None
                return _wrap(grad_output.detach(), ctx.saved_tensors[0]), None
        _CONSTRUCTOR.append(Constructor.apply)
    return _CONSTRUCTOR[0]


def _masks(obj, out):
    if is_masked_tensor(obj):
        out.append(obj._masked_mask)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _masks(o, out)
    return out


def _reduce(name, args, kwargs):
    from . import _ops
    self = args[0]
    mask = self.get_mask()
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    if dim is None and len(args) == 1 and not kwargs:
        if name == "all":
            return as_masked_tensor(self.get_data().masked_fill(~mask, True).all(), mask.any())
        return as_masked_tensor(getattr(_ops, name)(self, mask=mask), mask.any())
    keepdim = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    dtype = args[3] if len(args) > 3 else kwargs.get("dtype")
    if name == "all":
        data = self.get_data().masked_fill(~mask, True).all(dim, keepdim=keepdim)
    else:
        data = getattr(_ops, name)(self, dim, keepdim=keepdim, dtype=dtype, mask=mask)
    out_mask = mask
    for d in sorted([dim] if isinstance(dim, int) else dim, reverse=True):
        out_mask = out_mask.any(d, keepdim=keepdim)
    return as_masked_tensor(data, out_mask)


def _same_op_on_mask(func, args, kwargs):
    """The mask of a view-like result (indexing, ``transpose``, ...): the op on the mask."""
    if not is_masked_tensor(args[0] if args else None):
        return None
    try:
        with _torch_function.DisableTorchFunctionSubclass():
            mask = func(args[0]._masked_mask, *args[1:], **kwargs)
    except Exception:   # noqa: BLE001  (an op that is not a view: the result stays plain)
        return None
    return mask if isinstance(mask, Tensor) and mask.dtype is _dt.bool else None


def _dispatch(func, args, kwargs):
    """Ops on masked tensors: reductions skip masked-out elements, the rest keep the mask."""
    name = getattr(func, "__name__", "")
    if name in _REDUCTIONS and is_masked_tensor(args[0] if args else None):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return _reduce(name, args, kwargs)
    if name in ("softmax", "log_softmax", "softmin") and is_masked_tensor(args[0]):
        from . import _ops
        dim = args[1] if len(args) > 1 else kwargs["dim"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return as_masked_tensor(getattr(_ops, name)(args[0], dim), args[0].get_mask())
    masks = _masks(list(args) + list(kwargs.values()), [])
    with _torch_function.DisableTorchFunctionSubclass():
        ret = func(*args, **kwargs)
        if name == "where" and len(args) == 3:
            m = [a._masked_mask if is_masked_tensor(a) else None for a in args[1:]]
            if m[0] is not None and m[1] is not None:
                masks = [args[0].logical_and(m[0]).logical_or(args[0].logical_not() & m[1])]
        elif any(m is not masks[0] and not bool((m == masks[0]).all()) for m in masks):
            raise ValueError("Input masks must match. If you need support for this, please open "
                             "an issue on Github.")
    if not isinstance(ret, Tensor) or not masks:
        return ret
    if ret.shape != masks[0].shape:
        mask = _same_op_on_mask(func, args, kwargs)
        return ret if mask is None or mask.shape != ret.shape else _wrap(ret, mask)
    if any(ret is a for a in args):
        return ret
    return _wrap(ret, masks[0])
