"""``out=``: the result of an op written into given tensors, with torch's rules.

``with_out(fn, name)`` wraps a public op function: ``out=None`` goes straight to ``fn``;
otherwise the result is computed, checked against ``out`` (castable dtype, torch's resize rule)
and copied into it, and ``out`` (the same object; a tuple of them for ops with several results)
is returned with its version bumped. Applied once to the module-level names by
``ember/ops/__init__.py``.
"""
import functools
import warnings

import numpy as np

from ..autograd.grad_mode import state as _state
from ..backend import get_array_module
from ..dtypes import scalar_type_name as _legacy
from ..tensor import Tensor
from ._util import _OVERLAP_MSG, writable

__all__ = []

# The ops that take ``out=`` in torch (checked against torch 2.13 by tests/ops/test_out.py).
OUT_NAMES = frozenset("""
abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr all amax amin aminmax angle
any arange arccos arccosh arcsin arcsinh arctan arctan2 arctanh asin asinh atan atan2 atanh
baddbmm bernoulli bitwise_and bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift
bitwise_xor bmm bucketize cat ceil chain_matmul cholesky cholesky_inverse cholesky_solve clamp
clamp_max clamp_min clip column_stack complex concat concatenate conj_physical copysign cos cosh
cross cummax cummin cumprod cumsum deg2rad diag diff digamma div divide dot dstack empty
empty_permuted eq erf erfc erfinv exp exp2 expm1 eye fix float_power floor floor_divide fmax
fmin fmod frac frexp frobenius_norm full gather gcd ge geqrf ger greater greater_equal gt
hash_tensor heaviside histc histogram histogramdd hsmm hspmm hstack hypot i0 igamma igammac
index_select inner inverse isin isneginf isposinf kron kthvalue lcm ldexp le lerp less
less_equal lgamma linspace log log10 log1p log2 logaddexp logaddexp2 logcumsumexp logical_and
logical_not logical_or logical_xor logit logspace logsumexp lt lu lu_solve lu_unpack
masked_select matmul matrix_power max maximum mean median min minimum mm mode msort mul
multinomial multiply mv mvlgamma nan_to_num nanmean nanmedian nanquantile nansum narrow_copy ne
neg negative nextafter nonzero norm normal not_equal nuclear_norm ones orgqr ormqr outer polar
polygamma pow prod qr quantile rad2deg rand randint randn randperm range reciprocal remainder
renorm round row_stack rsqrt saddmm searchsorted sgn sigmoid sign signbit sin sinc sinh slogdet
sort sqrt square sspaddmm stack std sub subtract sum svd take take_along_dim tan tanh tensordot
topk triangular_solve tril triu true_divide trunc var vdot vstack where xlogy zeros
""".split())

# Factories: without ``dtype=``, the result takes ``out``'s dtype (torch).
_FACTORIES = frozenset("arange empty eye full linspace logspace ones rand randint randn randperm "
                       "range zeros".split())

# Ops whose integer results are indices: ``out`` for them must be int64 (torch).
_INDEX_OUTS = frozenset("argmax argmin cummax cummin kthvalue max median min mode nanmedian "
                        "nonzero sort topk".split())

# Structured kernels whose ``out`` must have the result's dtype exactly (torch).
_EXACT_OUTS = frozenset(("triangular_solve",))

# torch's name of the op in its error messages, where it differs from the function's.
_TORCH_NAME = {
    "absolute": "abs", "arccos": "acos", "arcsin": "asin", "arctan": "atan", "arctan2": "atan2",
    "clip": "clamp", "divide": "div", "true_divide": "div", "multiply": "mul",
    "subtract": "sub", "negative": "neg", "fix": "trunc", "greater": "gt",
    "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne",
    "concat": "cat", "concatenate": "cat", "hstack": "cat", "vstack": "cat", "row_stack": "cat",
    "dstack": "cat", "norm": "linalg_vector_norm", "square": "pow", "ger": "outer",
}

_GRAD_MSG = ("%s(): functions with out=... arguments don't support automatic differentiation, "
             "but one of the arguments requires grad.")
_RESIZE_MSG = ("An output with one or more elements was resized since it had shape %s, which "
               "does not match the required output shape %s. This behavior is deprecated, and in "
               "a future PyTorch release outputs will not be resized unless they have zero "
               "elements. You can explicitly reuse an out tensor t by resizing it, inplace, to "
               "zero elements with t.resize_(0).")
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "int32": "int", "int16": "short", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}


def with_out(fn, name):
    """``fn`` taking ``out=`` (see the module's docstring)."""
    def op(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        return _into(fn, name, args, kwargs, out)
    functools.update_wrapper(op, fn)
    return op


def _requires_grad(x):
    if isinstance(x, Tensor):
        return x._requires_grad
    if isinstance(x, (list, tuple)):
        return any(_requires_grad(v) for v in x)
    return False


def _into(fn, name, args, kwargs, out):
    torch_name = _TORCH_NAME.get(name, name)
    outs = out if isinstance(out, (tuple, list)) else None
    if outs is None and not isinstance(out, Tensor):
        raise TypeError("%s(): argument 'out' must be Tensor, not %s"
                        % (torch_name, type(out).__name__))
    if outs is not None and not all(isinstance(o, Tensor) for o in outs):
        raise TypeError("%s(): argument 'out' must be Tensor, not %s"
                        % (torch_name, type(out).__name__))
    if _state.enabled and (_requires_grad(out) or _requires_grad(args) or
                           _requires_grad(tuple(kwargs.values()))):
        raise RuntimeError(_GRAD_MSG % torch_name)
    if name in _FACTORIES and kwargs.get("dtype") is None and outs is None:
        kwargs["dtype"] = out.dtype
    result = fn(*args, **kwargs)
    if isinstance(result, Tensor):
        if outs is not None:
            raise TypeError("%s(): argument 'out' must be Tensor, not %s"
                            % (torch_name, type(out).__name__))
        _check(result, out, name, False)
        _write(result, out)
        return out
    results = tuple(result)
    if outs is None:
        raise TypeError("%s(): argument 'out' must be tuple of Tensors, not Tensor" % torch_name)
    if len(outs) != len(results):
        raise RuntimeError("%s(): expected %d out tensors, but got %d"
                           % (torch_name, len(results), len(outs)))
    for i, (r, o) in enumerate(zip(results, outs)):
        _check(r, o, name, i > 0)
    for r, o in zip(results, outs):
        _write(r, o)
    return type(result)(*outs) if hasattr(result, "_fields") else tuple(outs)


def _check(result, out, name, second):
    src, dst = result._array.dtype, out._array.dtype
    if name in _INDEX_OUTS and src == np.int64 and (second or name in ("argmax", "argmin",
                                                                      "nonzero")):
        if dst != np.int64:
            raise RuntimeError("Expected out tensor to have dtype long int, but got %s instead"
                               % _CPP_NAMES.get(dst.name, dst.name))
        return
    if name in _EXACT_OUTS and src != dst:
        raise RuntimeError("Expected out tensor to have dtype %s, but got %s instead"
                           % (_CPP_NAMES.get(src.name, src.name),
                              _CPP_NAMES.get(dst.name, dst.name)))
    if not can_cast(src, dst):
        raise RuntimeError("result type %s can't be cast to the desired output type %s"
                           % (_legacy(src), _legacy(dst)))


def can_cast(src, dst):
    """torch's ``canCast``: no complex to real, no floating to integral, no number to bool."""
    s, d = src.kind, dst.kind
    if s == "c" and d != "c":
        return False
    if s == "f" and d in "iub":
        return False
    return not (s != "b" and d == "b")


def _write(result, out):
    arr = result._array
    dst = out._array
    if dst.shape != arr.shape:
        if dst.size:
            warnings.warn(_RESIZE_MSG % (list(dst.shape), list(arr.shape)), UserWarning,
                          stacklevel=4)
        out._array = dst = get_array_module(dst).empty(arr.shape, dtype=dst.dtype)
    elif dst.size and writable(dst) is None:
        raise RuntimeError(_OVERLAP_MSG)
    if dst.size:
        get_array_module(dst).copyto(dst, arr, casting="unsafe")
    out._version_ref[0] += 1

