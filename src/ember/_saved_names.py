"""torch's saved attributes of its common graph nodes (``grad_fn._saved_self``, ``_saved_dim``):
node name -> {torch's name: reader(node)}, registered in autograd's table (graph.py reads it
for ``Node.__getattr__`` and ``dir``). ``_T(i)`` reads the node's i-th saved tensor."""
import math

import numpy as np

from . import dtypes as _dt
from .autograd import graph as _graph
from .tensor import Tensor
from .ops._util import xp_of
from .ops.creation import tensor as _tensor

_INT64_MAX = 2 ** 63 - 1
_RED = {"none": 0, "mean": 1, "sum": 2}


def _u(v):
    """An int64 argument as torch's binding returns it (a negative one wraps to unsigned)."""
    return v + 2 ** 64 if isinstance(v, int) and not isinstance(v, bool) and v < 0 else v


def _T(i):
    return lambda n: (n.saved_tensors[i:i + 1] or (None,))[0]


def _A(name, default=None, fn=None):
    def read(n):
        v = n.__dict__.get(name, default)
        return fn(v) if fn is not None else v
    return read


def _opt(i):
    """Saved tensor ``i``, None for the 0-element placeholder of an absent parameter."""
    def read(n):
        t = n.saved_tensors[i]
        return None if t is None or t.numel() == 0 else t
    return read


def _C(value):
    return lambda n: value


def _size(i):
    return lambda n: tuple(n._input_meta(i)[0])


def _numel(n):
    return math.prod(n._input_meta(0)[0])


def _out(n):
    return tuple(n._out_meta[0][0])


def _shape(s, i):
    """Input ``i``'s sizes: its edge's, else its saved tensor's (saved tensor ``s``)."""
    def read(n):
        return tuple(n._input_meta(i)[0] if n._edges[i] else n.saved_tensors[s].shape)
    return read


def _strides(s, i):
    """Input ``i``'s strides where torch keeps them (when it needs a gradient), else ()."""
    def read(n):
        if not n.needs_input_grad[i]:
            return ()
        t = n.saved_tensors[s]
        if t is not None:
            return tuple(t.stride())
        # NOTE: an unsaved input (the other operand needs no gradient): its contiguous strides
        size = n._input_meta(i)[0]
        return tuple(math.prod(size[k + 1:]) for k in range(len(size)))
    return read


def _wrapped(n):
    s = n.__dict__["scalar"]
    if isinstance(s, Tensor):
        return s
    return _tensor(s, dtype={float: _dt.float64, complex: _dt.complex128}.get(type(s)))


def _key(n):
    """(dim, entry) of the one indexed dim of a basic-indexing node's key."""
    key = n.__dict__["index"]
    key = key if isinstance(key, tuple) else (key,)
    for d, k in enumerate(key):
        if k is Ellipsis:
            break
        if not (isinstance(k, slice) and k == slice(None)):
            return d, k
    return 0, key[0]


def _slice(n):
    k = _key(n)[1]
    return (0 if k.start is None else _u(k.start), _INT64_MAX if k.stop is None else _u(k.stop),
            1 if k.step is None else k.step)


def _var(n):
    dims, size = n.__dict__["dims"], n._input_meta(0)[0]
    c = math.prod(size[d] for d in dims) - n.__dict__["denom"]
    return None if n.__dict__["whole"] and c == 1 else c


def _dims(n):
    return None if n.__dict__.get("whole") else tuple(n.__dict__["dims"])


def _keepdim(n):
    return len(_out(n)) == len(n._input_meta(0)[0]) and len(_out(n)) > 0


def _conv(part):
    def read(n):
        if type(n)._forward_cls.__name__ != "Convolution":
            raise AttributeError("'%s' object has no attribute '_saved_%s'" % (n.name(), part))
        stride, pad, dil, groups, one_d = n.__dict__["conf"]
        lo = slice(1, None) if one_d else slice(None)
        v = {"stride": tuple(stride[lo]), "dilation": tuple(dil[lo]), "groups": groups,
             "padding": tuple(pad[2 * one_d::2]), "transposed": False}
        v["output_padding"] = (0,) * len(v["stride"])
        return v[part]
    return read


def _norm_dim(d):
    return None if d is None else tuple(map(_u, d)) if isinstance(d, (tuple, list)) else (_u(d),)


def _pool_indices(n):
    """torch's flat (per plane) indices of the maxima, from the saved offsets in the window."""
    k, st, pad, dil, _, shape = n.__dict__["conf"][:6]
    off = n.saved_tensors[0]
    xp, off = xp_of(off), off._array
    oh = xp.arange(off.shape[-2]).reshape(-1, 1)
    ow = xp.arange(off.shape[-1])
    ki, kj = off.astype(np.int64) // k[1], off.astype(np.int64) % k[1]
    row = oh * st[0] - pad[0] + ki * dil[0]
    out = row * shape[-1] + ow * st[1] - pad[1] + kj * dil[1]
    return Tensor._wrap(out[0] if n.__dict__.get("unbatched") else out)


def _bn_stats(i):
    """Batch norm's saved mean (0) and invstd (1) of the batch, computed when read (ember's
    node recomputes them in backward); empty in evaluation mode, as torch's."""
    def read(n):
        x = n.saved_tensors[0]
        xp, x = xp_of(x), x._array
        if n.saved_tensors[3] is not None:
            return Tensor._wrap(xp.zeros((0,), x.dtype))
        axes = n.__dict__["axes"]
        m = x.mean(axis=axes, keepdims=True)
        out = m if i == 0 else 1 / xp.sqrt(((x - m) ** 2).mean(axis=axes, keepdims=True)
                                            + n.__dict__["eps"])
        return Tensor._wrap(out.reshape(-1))
    return read


def _bias_sizes(n):
    if n._tensor_args is not None and n._tensor_args[2] is None:
        return (0,)     # (no bias: torch's undefined tensor)
    return tuple(n._input_meta(2)[0]) if n._edges[2] else (n.saved_tensors[1].shape[0],)


def _pool(i):
    return lambda n: n.__dict__["args"][i]


_SELF, _RES = {"self": _T(0)}, {"result": _T(0)}
_SIZES = {"self_sym_sizes": _size(0)}
_REDUCE = {"dim": _A("dims", fn=tuple), "keepdim": _A("keepdim"), "self_sym_sizes": _size(0)}
_MM = {"self": _T(0), "mat2": _T(1), "self_sym_sizes": _shape(0, 0),
       "mat2_sym_sizes": _shape(1, 1),
       "self_sym_strides": _strides(0, 0), "mat2_sym_strides": _strides(1, 1)}
_LOSS = {"self": _T(0), "target": _T(1), "reduction": _A("reduction", fn=_RED.get)}
_NORM = {"input": _T(0), "weight": _opt(1)}

TABLE = {
    "AddBackward0": {"alpha": _A("alpha", 1)}, "SubBackward0": {"alpha": _A("alpha", 1)},
    "RsubBackward1": {"alpha": _A("alpha", 1)},
    "MulBackward0": {"other": lambda n: _wrapped(n) if "scalar" in n.__dict__ else _T(0)(n),
                     "self": lambda n: None if "scalar" in n.__dict__ else _T(1)(n)},
    "PowBackward0": {"self": _T(0), "exponent": _A("e")},
    "PowBackward1": {"exponent": _T(0), "self": _T(1), "result": _T(2)},
    "PowBackward2": {"result": _T(0), "exponent": _T(1), "self": _A("s")},
    "ExpBackward0": _RES, "TanhBackward0": _RES, "SigmoidBackward0": _RES, "SqrtBackward0": _RES,
    "RsqrtBackward0": _RES, "ReluBackward0": _RES, "LogBackward0": _SELF, "SinBackward0": _SELF,
    "CosBackward0": _SELF, "AbsBackward0": _SELF, "SiluBackward0": _SELF,
    "ClampBackward1": {"self": _T(0), "min": _A("bounds", fn=lambda b: b[0]),
                       "max": _A("bounds", fn=lambda b: b[1])},
    "SumBackward0": _SIZES, "SumBackward1": _REDUCE,
    "MeanBackward0": {"self_sym_sizes": _size(0), "self_sym_numel": _numel},
    "MeanBackward1": dict(_REDUCE, self_sym_numel=_numel),
    "MaxBackward1": {"self": _T(0), "result": _T(1)}, "MinBackward1": {"self": _T(0),
                                                                        "result": _T(1)},
    "MaxBackward0": {"dim": _A("dim", fn=_u), "indices": _T(0), "keepdim": _keepdim,
                     "self_sym_sizes": _size(0)},
    "AmaxBackward0": {"self": _T(0), "result": _T(1), "dim": _A("dims", fn=tuple),
                      "keepdim": _A("keepdim")},
    "ProdBackward0": {"self": _T(0), "result": _T(1)},
    "ProdBackward1": {"self": _T(0), "result": _T(1), "dim": _A("dim", fn=_u),
                      "keepdim": _A("keepdim")},
    "VarBackward0": {"self": _T(0), "dim": _dims, "keepdim": _A("keepdim"), "correction": _var},
    "CumsumBackward0": {"dim": _A("dim", fn=_u)},
    "SoftmaxBackward0": {"result": _T(0), "dim": lambda n: _u(
        n.given if isinstance(n.__dict__.get("given"), int) else n.dim)},
    "MmBackward0": _MM, "BmmBackward0": {"self": _T(0), "mat2": _T(1)},
    "AddmmBackward0": {"mat1": _T(0), "mat2": _T(1), "alpha": _A("alpha"), "beta": _A("beta"),
                       "mat1_sym_sizes": _shape(0, 1), "mat2_sym_sizes": _shape(1, 2),
                       "mat1_sym_strides": _strides(0, 1), "mat2_sym_strides": _strides(1, 2)},
    "MvBackward0": {"self": _T(0), "vec": _T(1)}, "DotBackward0": {"self": _T(0), "tensor": _T(1)},
    "BaddbmmBackward0": {"batch1": _T(0), "batch2": _T(1), "alpha": _A("alpha"),
                         "beta": _A("beta")},
    "ScaledDotProductFlashAttentionForCpuBackward0": dict(
        {k: _T(i) for i, k in enumerate(("attn_mask", "key", "query", "value", "logsumexp",
                                         "output"))},
        dropout_p=_A("dropout_p"), is_causal=_A("causal"), scale=_A("given_scale")),
    "ViewBackward0": _SIZES, "ExpandBackward0": _SIZES, "SqueezeBackward0": _SIZES,
    "SqueezeBackward1": dict(_SIZES, dim=_A("dims", fn=lambda d: d[0] if d else 0)),
    "PermuteBackward0": {"dims": _A("dims", fn=lambda d: tuple(map(_u, d)))},
    "TransposeBackward0": {"dim0": _A("dims", fn=lambda d: _u(d[0])),
                           "dim1": _A("dims", fn=lambda d: _u(d[1]))},
    "UnsqueezeBackward0": {"dim": _A("dim", fn=_u)},
    "SelectBackward0": {"dim": lambda n: _key(n)[0], "index": lambda n: _u(_key(n)[1]),
                        "self_sym_sizes": _size(0)},
    "SliceBackward0": {"dim": lambda n: _key(n)[0], "start": lambda n: _slice(n)[0],
                       "end": lambda n: _slice(n)[1], "step": lambda n: _slice(n)[2],
                       "self_sym_sizes": _size(0)},
    "IndexBackward0": {"indices": lambda n: tuple(n.saved_tensors), "self_sym_sizes": _size(0)},
    "CatBackward0": {"dim": _A("dim", fn=_u)}, "StackBackward0": {"dim": _A("dim", fn=_u)},
    "SplitBackward0": {"dim": _A("dim", fn=_u), "self_sym_sizes": _size(0),
                       "split_size": lambda n: _out(n)[n.__dict__["dim"]]},
    "UnbindBackward0": {"dim": _A("dim", fn=_u)},
    "GatherBackward0": {"dim": _A("dim", fn=_u), "index": _T(0)},
    "LinalgVectorNormBackward0": {
        "self": _T(0), "result": _T(1), "keepdim": _A("keepdim"),
        "ord": lambda n: n.given[0] if n.__dict__.get("given") else n.__dict__.get("p", n.ord),
        "dim": lambda n: _norm_dim(n.given[1]) if n.__dict__.get("given") else tuple(n.dims)},
    "MaxPool2DWithIndicesBackward0": {"result1": _pool_indices, "self": _T(1), **{
        k: _A("conf", fn=lambda c, i=i: tuple(c[i]) if i < 6 else c[i]) for i, k in (
            (0, "kernel_size"), (2, "padding"), (3, "dilation"), (6, "ceil_mode"))}},
    "ScatterBackward0": {"dim": _A("dim", fn=_u), "index": _T(0)},
    "IndexSelectBackward0": {"dim": _A("dim", fn=_u), "index": _T(0),
                             "self_sym_sizes": _size(0)},
    "MaskedFillBackward0": {"mask": _T(0)}, "WhereBackward0": {"condition": _T(0)},
    "GeluBackward0": {"self": _T(0), "approximate": _A("approximate")},
    "LeakyReluBackward0": {"self": _T(0), "negative_slope": _A("slope")},
    "EluBackward0": {"self": _T(0), "alpha": _A("conf", fn=lambda c: c[0]),
                     "scale": _A("conf", fn=lambda c: 1 if c[1] == 1 else c[1]),
                     "input_scale": _A("conf", fn=lambda c: 1 if c[2] == 1 else c[2])},
    "NativeLayerNormBackward0": dict(
        _NORM, bias=_opt(2), normalized_shape=_A("pshape", fn=tuple),
        result1=lambda n: _T(5)(n).reshape(_T(5)(n).shape + (1,) * len(n.__dict__["pshape"])),
        result2=lambda n: _T(6)(n).reshape(_T(6)(n).shape + (1,) * len(n.__dict__["pshape"]))),
    "NativeGroupNormBackward0": dict(
        _NORM, result1=_T(5), result2=_T(6), eps=_A("eps"),
        N=lambda n: n._input_meta(0)[0][0], C=lambda n: n._input_meta(0)[0][1],
        HxW=lambda n: math.prod(n._input_meta(0)[0][2:]), group=_A("gshape", fn=lambda g: g[1])),
    "ConvolutionBackward0": dict(
        _NORM, bias_sym_sizes_opt=_bias_sizes,
        **{k: _conv(k) for k in ("stride", "padding", "dilation", "groups", "transposed",
                                 "output_padding")}),
    "AvgPool2DBackward0": dict(_SELF, **{k: _pool(i) for i, k in enumerate(
        ("kernel_size", "", "padding", "ceil_mode", "count_include_pad", "divisor_override"))
        if k}),
    "NativeBatchNormBackward0": {"input": _T(0), "weight": _opt(1), "eps": _A("eps"),
                                 "training": lambda n: n.saved_tensors[3] is None,
                                 "result1": _bn_stats(0), "result2": _bn_stats(1)},
    "AdaptiveAvgPool2DBackward0": _SELF,
    "EmbeddingBackward0": {"indices": _T(0), "padding_idx": _A("padding_idx", fn=lambda p: _u(
        -1 if p is None else p)), "scale_grad_by_freq": _A("scale"), "sparse": _C(False),
        "weight_sym_argsize_0": lambda n: n._input_meta(0)[0][0]},
    "NllLossBackward0": dict(_LOSS, total_weight=_T(2), weight=_C(None),
                             ignore_index=_A("ignore_index", fn=_u)),
    "MseLossBackward0": _LOSS, "SmoothL1LossBackward0": dict(_LOSS, beta=_A("beta")),
    "BinaryCrossEntropyBackward0": dict(_LOSS, weight=_T(2)),
    "BinaryCrossEntropyWithLogitsBackward0": dict(_LOSS, weight=_T(2), pos_weight=_T(3)),
}
TABLE["DivBackward0"] = TABLE["MulBackward0"]
TABLE["MinBackward0"] = TABLE["MaxBackward0"]
TABLE["LogSoftmaxBackward0"] = TABLE["SoftmaxBackward0"]
TABLE["StdBackward0"] = dict(TABLE["VarBackward0"], result=_T(1))
_graph._SAVED_NAMES.update(TABLE)
