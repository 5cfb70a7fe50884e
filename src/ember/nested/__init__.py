"""Nested (ragged) tensors, as ``torch.nested``: a batch of tensors whose first dims differ.

A nested tensor holds its components as ordinary tensors; element-wise ops, ``nn.Linear``,
``matmul`` and ``F.scaled_dot_product_attention`` run once per component (so autograd reaches
the components, or the ``values`` a jagged tensor was cut from), and ``to_padded_tensor`` packs
them into one dense tensor. Both of torch's layouts: ``torch.strided`` (printed as
``nested_tensor([...])``) and ``torch.jagged`` (one ragged dim, ``values()`` and ``offsets()``).

Example:
    >>> import warnings, ember
    >>> warnings.simplefilter("ignore")
    >>> nt = ember.nested.nested_tensor([ember.ones(2), ember.zeros(1)])
    >>> ember.nested.to_padded_tensor(nt + 1, 0.0)
    tensor([[2., 2.],
            [1., 0.]])
"""
import warnings

from .. import _torch_function, dtypes as _dt
from ..tensor import Size, Tensor

__all__ = ["nested_tensor", "as_nested_tensor", "to_padded_tensor", "nested_tensor_from_jagged",
           "narrow"]

_PROTOTYPE = ("The PyTorch API of nested tensors is in prototype stage and will change in the "
              "near future. We recommend specifying layout=torch.jagged when constructing a nested "
              "tensor, as this layout receives active development, has better operator coverage, "
              "and works with torch.compile. (Triggered internally at "
              "/__w/pytorch/pytorch/aten/src/ATen/NestedTensorImpl.cpp:177.)")
_NO_SIZES = "Internal error: NestedTensorImpl doesn't support sizes. Please file an issue."
_jcount = [0]
# Element-wise ops torch's strided (NestedTensorCPU) kernels lack; the jagged layout has them.
_STRIDED_MISSING = {"sigmoid", "exp", "log", "rsqrt", "square", "sign", "floor", "ceil", "round",
                    "reciprocal", "erf", "exp2", "log1p", "expm1", "tan", "pow", "maximum",
                    "minimum", "atan2", "remainder", "rsub", "__rsub__", "__rtruediv__",
                    "__rdiv__", "__rpow__", "ne", "lt", "le", "ge", "sum", "mean", "cumsum"}
# Ops whose arguments at these positions (or keywords) are dims of the nested tensor.
_DIM_ARGS = {"softmax": ((1, "dim"),), "log_softmax": ((1, "dim"),),
             "transpose": ((1, "dim0"), (2, "dim1")), "unflatten": ((1, "dim"),),
             "flatten": ((1, "start_dim"), (2, "end_dim")), "sum": ((1, "dim"),),
             "mean": ((1, "dim"),), "narrow": ((1, "dim"),), "unsqueeze": ((1, "dim"),),
             "squeeze": ((1, "dim"),), "chunk": ((2, "dim"),), "select": ((1, "dim"),)}


class _JaggedDim(int):
    """A ragged dim's size: prints as torch's symbolic ``j1``."""

    def __repr__(self):
        return "j%d" % self._j

    __str__ = __repr__


def _jdim(j):
    d = _JaggedDim(-1)
    d._j = j
    return d


def _aten_missing(name, jagged):
    if jagged:
        return NotImplementedError("aten.%s.default" % name)
    return NotImplementedError(
        "Could not run 'aten::%s' with arguments from the 'NestedTensorCPU' backend. This could "
        "be because the operator doesn't exist for this backend, or was omitted during the "
        "selective/custom build process (if using custom build). If you are a Facebook employee "
        "using PyTorch on mobile, please visit https://fburl.com/ptmfixes for possible "
        "resolutions." % name)


class NestedTensor(Tensor):
    """A nested tensor (``is_nested``): made by ``nested_tensor``, ``as_nested_tensor`` and
    ``nested_tensor_from_jagged``. Its components come back from ``unbind()`` or iteration."""

    is_nested = True

    def __init__(self, *args, **kwargs):
        pass

    @property
    def layout(self):
        return self._nlayout

    @property
    def dtype(self):
        return self._comps[0].dtype if self._comps else _dt.get_default_dtype()

    @property
    def device(self):
        return self._comps[0].device if self._comps else Tensor._wrap(0.0).device

    @property
    def requires_grad(self):
        return any(c.requires_grad for c in self._comps)

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        for c in self._comps:
            c.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return self._comps[0].grad_fn if self._comps else None

    @grad_fn.setter
    def grad_fn(self, node):
        self._grad_fn = node

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad(self):
        if not self._comps or self._comps[0].grad is None:
            return None
        return _like(self, [c.grad for c in self._comps])

    @grad.setter
    def grad(self, value):
        for i, c in enumerate(self._comps):
            c.grad = None if value is None else value._comps[i]

    @property
    def shape(self):
        if self._nlayout is _dt.strided:
            raise RuntimeError(_NO_SIZES)
        return Size([self.size(i) for i in range(self.dim())])

    def size(self, dim=None):
        """Dim ``dim``'s length (``j1`` for a jagged tensor's ragged dim)."""
        if dim is None:
            return self.shape
        d = dim + self.dim() if dim < 0 else dim
        if d == 0:
            return len(self._comps)
        if self._nlayout is _dt.jagged and d == self._ragged:
            return _jdim(self._j)
        lens = {c.shape[d - 1] for c in self._comps}
        if len(lens) > 1:
            raise RuntimeError("Given dimension %d is irregular and does not have a size." % dim)
        return lens.pop()

    def dim(self):
        return self._comps[0].dim() + 1 if self._comps else 1

    ndimension = dim

    @property
    def ndim(self):
        return self.dim()

    def numel(self):
        return sum(c.numel() for c in self._comps)

    def stride(self, dim=None):
        raise RuntimeError("Internal error: NestedTensorImpl doesn't support strides. Please "
                           "file an issue.")

    def is_contiguous(self, memory_format=None):
        return self._nlayout is _dt.strided or (self._ragged == 1 and self._contig)

    def contiguous(self, memory_format=None):
        return self

    def unbind(self, dim=0):
        """The components, as a tuple."""
        if dim != 0:
            raise RuntimeError("unbind(): only supported for NestedTensor on dim=0")
        return tuple(self._comps)

    def __iter__(self):
        return iter(self._comps)

    def __len__(self):
        if self._nlayout is _dt.strided:
            raise RuntimeError(_NO_SIZES)
        return len(self._comps)

    def __getitem__(self, i):
        if isinstance(i, int):
            return self._comps[i]
        raise _aten_missing("index", self._nlayout is _dt.jagged)

    def values(self):
        """A jagged tensor's packed buffer: the components joined along the ragged dim."""
        from .. import ops
        if self._nlayout is not _dt.jagged:
            return ops.cat([c.reshape(-1) for c in self._comps], 0)
        if self._buffer is not None:
            return self._buffer
        return ops.cat(self._comps, self._ragged - 1)

    def offsets(self):
        """A jagged tensor's component boundaries in ``values()`` (int64, ``B + 1`` long)."""
        if self._nlayout is not _dt.jagged:
            raise AttributeError("'Tensor' object has no attribute 'offsets'")
        return self._offsets

    def to_padded_tensor(self, padding, output_size=None):
        return to_padded_tensor(self, padding, output_size)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from ..autograd import backward
        grads = None if gradient is None else list(gradient._comps)
        backward(list(self._comps), grads, retain_graph=retain_graph,
                 create_graph=create_graph)

    def __repr__(self):
        if self._nlayout is _dt.jagged:
            size = ", ".join(str(self.size(i)) for i in range(self.dim()))
            extra = ""
            if self.grad_fn is not None and self._fn_name:
                extra = ", grad_fn=<%s object at %#x>" % (self._fn_name, id(self.grad_fn))
            elif self.grad_fn is not None:
                extra = ", grad_fn=<%s object at %#x>" % (self.grad_fn.name(), id(self.grad_fn))
            elif self.requires_grad:
                extra = ", requires_grad=True"
            return "NestedTensor(size=(%s), offsets=%r%s, contiguous=%s)" % (
                size, self._offsets, extra, self.is_contiguous())
        grad = self.requires_grad
        body = ",\n".join("  " + "\n  ".join(repr(c.detach().requires_grad_(grad)).split("\n"))
                          for c in self._comps)
        tail = ""
        if self.grad_fn is not None:
            tail = ", grad_fn=<%s>" % (self._fn_name or self.grad_fn.name())
        elif self.requires_grad:
            tail = ", requires_grad=True"
        return "nested_tensor([\n%s\n]%s)" % (body or "", tail)

    __str__ = __repr__

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return _dispatch(func, args, kwargs or {})


def _make(comps, layout, offsets=None, ragged=1, j=None, buffer=None, fn_name=None,
          contig=True):
    _torch_function.enable()
    comps = list(comps)
    dtype = comps[0].dtype if comps else _dt.get_default_dtype()
    from .. import ops
    t = ops.empty(0, dtype=dtype)
    t.__class__ = NestedTensor
    t._comps, t._nlayout, t._ragged, t._buffer = comps, layout, ragged, buffer
    t._fn_name, t._contig = fn_name, contig
    if layout is _dt.jagged:
        if offsets is None:
            lens = [0] + [int(c.shape[ragged - 1]) for c in comps]
            offsets = ops.tensor(lens).cumsum(0)
        j = j or offsets.__dict__.get("_nested_j")
        if j is None:
            _jcount[0] += 1     # (torch numbers each offsets tensor's ragged size: j1, j2...)
            j = offsets._nested_j = _jcount[0]
    t._offsets, t._j = offsets, j
    return t


def _like(nt, comps, ragged=None, fn_name=None):
    """A nested tensor of ``nt``'s layout and ragged structure around ``comps``."""
    return _make(comps, nt._nlayout, nt._offsets, nt._ragged if ragged is None else ragged,
                 nt._j, fn_name=fn_name, contig=nt._contig and ragged in (None, 1))


def _check_layout(layout, dtype=None):
    if layout is None:
        return _dt.strided
    if layout not in (_dt.strided, _dt.jagged):
        raise RuntimeError("Specified layout is unsupported for nested tensors: %s" % layout)
    return layout


def _components(tensor_list, dtype, device, copy):
    from .. import ops
    if isinstance(tensor_list, Tensor) and not copy:
        return list(tensor_list.unbind(0))
    if not isinstance(tensor_list, (list, tuple)):
        raise TypeError("Only lists (List[Tensor] and List[List...[Scalar]]) are accepted in "
                        "nested_tensor")
    if dtype is None and not all(isinstance(t, Tensor) for t in tensor_list):
        dtype = ops.tensor(_flat(tensor_list)).dtype
    comps = []
    for t in tensor_list:
        if not isinstance(t, Tensor):
            t = ops.tensor(t, dtype=dtype)
        elif copy:
            t = t.detach().clone()
        comps.append(t.to(device=device, dtype=dtype) if dtype or device else t)
    for i, c in enumerate(comps):
        if c.dim() != comps[0].dim():
            raise RuntimeError("All Tensors given to nested_tensor must have the same dimension. "
                               "Found dimension %d for Tensor at index %d and dimension %d for "
                               "Tensor at index 0." % (c.dim(), i, comps[0].dim()))
    return comps


def _flat(obj):
    if isinstance(obj, (list, tuple)):
        return [x for o in obj for x in _flat(o)]
    return [obj.item()] if isinstance(obj, Tensor) else [obj]


def _jagged(comps):
    if any(c.shape[1:] != comps[0].shape[1:] for c in comps):
        raise RuntimeError("Cannot represent given tensor list as a nested tensor with the jagged "
                           "layout. Note that the jagged layout only allows for a single ragged "
                           "dimension. For example: (B, *, D_0, D_1, ..., D_N), with ragged * dim.")
    return _make(comps, _dt.jagged)


def nested_tensor(tensor_list, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """``torch.nested.nested_tensor``: a nested tensor (a leaf) copied from a list of tensors
    (or nested lists of numbers)."""
    layout = _check_layout(layout)
    comps = _components(tensor_list, dtype, device, True)
    if layout is _dt.strided:
        warnings.warn(_PROTOTYPE, UserWarning, stacklevel=2)
        nt = _make(comps, layout)
    else:
        nt = _jagged(comps)
    if requires_grad:
        nt.requires_grad_(True)
    return nt


def as_nested_tensor(ts, dtype=None, device=None, layout=None):
    """``torch.nested.as_nested_tensor``: a nested tensor whose components keep the autograd
    history of the tensors in ``ts`` (a list, or a tensor unbound along dim 0)."""
    layout = _check_layout(layout)
    if not isinstance(ts, (list, tuple, Tensor)):
        raise TypeError("as_nested_tensor(): Expected first argument to be a tensor or a list / "
                        "tuple of tensors")
    comps = _components(list(ts.unbind(0)) if isinstance(ts, Tensor) else ts, dtype, device,
                        False)
    # (the components stay in their tensors' graphs behind one node, as torch's)
    comps = [_torch_function._alias()(c) if c.requires_grad else c for c in comps]
    if layout is _dt.strided:
        warnings.warn(_PROTOTYPE, UserWarning, stacklevel=2)
        nt = _make(comps, layout)
    else:
        nt = _jagged(comps)
    nt._fn_name = "NestedTensorFromTensorListBackward0"
    return nt


def nested_tensor_from_jagged(values, offsets=None, lengths=None, jagged_dim=None,
                              min_seqlen=None, max_seqlen=None):
    """``torch.nested.nested_tensor_from_jagged``: a jagged tensor viewing ``values`` cut at
    ``offsets`` along dim 0 (gradients reach ``values``)."""
    if offsets is None:
        if lengths is None:
            raise RuntimeError("nested_tensor_from_jagged(): At least one of offsets or lengths "
                               "is required.")
        from .. import ops
        offsets = ops.cat([ops.zeros(1, dtype=lengths.dtype), lengths.cumsum(0)])
    bounds = [int(v) for v in offsets.tolist()]
    comps = [values.narrow(0, a, b - a) for a, b in zip(bounds[:-1], bounds[1:])]
    return _make(comps, _dt.jagged, offsets, buffer=values,
                 fn_name="NestedViewFromJaggedBackward0")


def to_padded_tensor(input, padding, output_size=None):
    """``torch.nested.to_padded_tensor``: the components stacked into one dense tensor, each
    padded with ``padding`` up to the largest size per dim (or ``output_size``)."""
    comps = input._comps
    dims = comps[0].dim() if comps else 0
    top = [max(c.shape[d] for c in comps) for d in range(dims)]
    size = [len(comps)] + top
    if output_size is not None:
        size = list(output_size)
        if len(size) != dims + 1 or any(o < t for o, t in zip(size, [len(comps)] + top)):
            raise RuntimeError("Value in output_size is less than NestedTensor padded size. "
                               "Truncation is not supported.")
    return _padded()(tuple(size), padding, *comps)


_PADDED: list = []


def _padded():
    if not _PADDED:
        from ..autograd.function import Function
        from .. import ops

        class ToPadded(Function):
            node_name = "ToPaddedTensorBackward0"

            @staticmethod
            def forward(ctx, size, padding, *comps):
                ctx.shapes = [tuple(c.shape) for c in comps]
                out = ops.full(size, padding, dtype=comps[0].dtype)
                for i, c in enumerate(comps):
                    out[(i,) + tuple(slice(0, n) for n in c.shape)] = c
                return out

            @staticmethod
            def backward(ctx, grad_output):
                return (None, None) + tuple(
                    grad_output[(i,) + tuple(slice(0, n) for n in shape)]
                    for i, shape in enumerate(ctx.shapes))
        _PADDED.append(ToPadded.apply)
    return _PADDED[0]


def narrow(tensor, dim, start, length, layout=None):
    """``torch.nested.narrow``: a jagged tensor of ``tensor``'s rows, row ``i`` cut to
    ``[start[i], start[i] + length[i])`` along ``dim`` (1)."""
    layout = _check_layout(layout)
    if dim != 1:
        raise RuntimeError("narrow(): only dim=1 supported for nested tensors")
    def _at(v, i):
        return int(v[i]) if isinstance(v, Tensor) else int(v)
    rows = range(tensor.shape[0])
    comps = [tensor[i].narrow(0, _at(start, i), _at(length, i)) for i in rows]
    if layout is _dt.strided:
        return _make(comps, layout)
    from .. import ops
    bounds = [_at(start, i) + i * tensor.shape[1] for i in rows]
    offsets = ops.tensor(bounds + [bounds[-1] + _at(length, len(bounds) - 1)])
    return _make(comps, _dt.jagged, offsets, contig=False)


def _shift(d, ndim, name):
    if d is None:
        return None
    d = d + ndim if d < 0 else d
    if d == 0:
        raise RuntimeError("%s(): not supported for NestedTensor on dim=0" % name)
    return d - 1


def _dispatch(func, args, kwargs):
    """Run ``func`` once per component of its nested arguments."""
    name = getattr(func, "__name__", "")
    nts = [a for a in list(args) + list(kwargs.values()) if isinstance(a, NestedTensor)]
    nt = nts[0]
    jagged = nt._nlayout is _dt.jagged
    if name in ("__get__",):
        raise RuntimeError(_NO_SIZES)
    if name in ("linear", "scaled_dot_product_attention", "layer_norm", "dropout", "bmm",
                "matmul", "__matmul__", "mm"):
        return _structured(name, func, nt, args, kwargs)
    if not jagged and name in _STRIDED_MISSING:
        raise _aten_missing(name, False)
    if name in _DIM_ARGS:
        return _dim_op(name, func, nt, args, kwargs)
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, NestedTensor):
            if a._nlayout is not nt._nlayout:
                raise RuntimeError(_NO_SIZES)
            if len(a._comps) != len(nt._comps):
                raise RuntimeError("%s does not support broadcasting when given a NestedTensor"
                                   % name)
        elif isinstance(a, Tensor) and a.dim() > 0:
            if not jagged:
                raise RuntimeError("Expected both self and other to be nested, but got a nested "
                                   "self and non-nested other")
            if a.dim() > nt.dim() - 1:
                raise RuntimeError("%s does not support broadcasting when given a NestedTensor"
                                   % name)
    out = [func(*_pick(args, i), **_pick(kwargs, i)) for i in range(len(nt._comps))]
    if out and all(isinstance(o, Tensor) and o.shape == c.shape
                   for o, c in zip(out, nt._comps)):
        return _like(nt, out)
    if out and all(o is None for o in out):
        return None
    raise _aten_missing(name, jagged)


def _pick(obj, i):
    """``obj`` with each nested tensor in it replaced by its ``i``-th component."""
    if isinstance(obj, NestedTensor):
        return obj._comps[i]
    if isinstance(obj, dict):
        return {k: _pick(v, i) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_pick(v, i) for v in obj)
    return obj


def _dim_op(name, func, nt, args, kwargs):
    args, kwargs = list(args), dict(kwargs)
    ndim = nt.dim()
    if name in ("unflatten", "flatten") and nt._nlayout is _dt.strided:
        raise RuntimeError(_NO_SIZES)
    if name == "narrow" and args[1] == 0 and nt._nlayout is _dt.strided:
        return _make(nt._comps[args[2]:args[2] + args[3]], nt._nlayout)
    shifted = []
    for pos, key in _DIM_ARGS[name]:
        where = kwargs if key in kwargs else (args if pos < len(args) else None)
        k = key if where is kwargs else pos
        if where is None or where[k] is None:
            if name in ("sum", "mean") and nt._nlayout is _dt.jagged:
                total = sum(func(c, *args[1:], **kwargs).sum() for c in nt._comps)
                return total / nt.numel() if name == "mean" else total
            continue
        d = where[k]
        if name == "transpose" and (d == 0 or d == -ndim):
            if nt._nlayout is _dt.jagged:
                raise ValueError("Transpose is not supported on the batch dimension for jagged NT")
            raise RuntimeError("Nested tensor dimension 0 cannot be transposed")
        if isinstance(d, (list, tuple)):
            where[k] = type(d)(_shift(x, ndim, name) for x in d)
        else:
            where[k] = _shift(d, ndim, name)
        shifted.append(where[k])
    out = [func(*_pick(args, i), **_pick(kwargs, i)) for i in range(len(nt._comps))]
    ragged = nt._ragged
    if name == "transpose" and ragged - 1 in shifted:
        ragged = shifted[1] + 1 if shifted[0] == ragged - 1 else shifted[0] + 1
    elif name == "unflatten" and shifted[0] < ragged - 1:
        ragged += len(args[2] if len(args) > 2 else kwargs["sizes"]) - 1
    if all(isinstance(o, Tensor) for o in out):
        return _like(nt, out, ragged)
    if all(isinstance(o, (list, tuple)) for o in out):
        return type(out[0])(_like(nt, list(parts), ragged) for parts in zip(*out))
    raise _aten_missing(name, nt._nlayout is _dt.jagged)


def _structured(name, func, nt, args, kwargs):
    """Ops that mix a nested tensor with dense weights, or nested tensors of one structure."""
    jagged = nt._nlayout is _dt.jagged
    if name in ("matmul", "__matmul__", "bmm", "mm"):
        a, b = args[0], args[1]
        both = isinstance(a, NestedTensor) and isinstance(b, NestedTensor)
        if not jagged and not both:
            raise RuntimeError("Expected both to be nested, but got a nested self and "
                               "non-nested other")
        if jagged and both:
            raise RuntimeError("matmul(): not supported between inputs of shapes (%s) and "
                               "torch.Size([%s])" % (", ".join(map(str, a.shape)),
                                                      ", ".join(map(str, b.shape))))
        if jagged and name == "bmm":
            raise _aten_missing("bmm", True)
        func = Tensor.matmul      # (a nested bmm multiplies component by component)
    if name == "linear" and not jagged and (nt.dim() != 3 or args[1].dim() != 2):
        raise RuntimeError("Linear requires nested_tensor.dim == 3 and dense_matrix.dim == 2. "
                           "Nested tensor dim: %d. Dense tensor dim: %d"
                           % (nt.dim(), args[1].dim()))
    if name == "layer_norm" and not jagged:
        weight = args[2] if len(args) > 2 else kwargs.get("weight")
        bias = args[3] if len(args) > 3 else kwargs.get("bias")
        if weight is None or bias is None:
            raise ValueError("NestedTensor layer_norm requires weight and bias")
    out = [func(*_pick(args, i), **_pick(kwargs, i)) for i in range(len(nt._comps))]
    return _like(nt, out, fn_name={"linear": "LinearBackward0"}.get(name))
