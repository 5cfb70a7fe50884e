"""The ``ember.linalg`` kernels: vector and matrix norms, inverse, determinant, linear solves,
with torch's backward formulas (the matrix products live in ``matmul``)."""
import functools
import math

import numpy as np

from .. import dtypes as _dt
from ..autograd import _autocast
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..backend import errstate
from ..tensor import Tensor
from .. import return_types as _rt
from ..backend import backend_of
from ._util import (binary_arrays, cpu_vendor, get_array_module, sum_to, warn_once as _warn_once,
                    wrap_dim, wrap_dims, xp_of)
from ._out import can_cast, with_out
from .matmul import _check_batches, _shape_str, _tname, matmul, vdot

__all__ = ["det", "inverse", "cholesky", "cholesky_solve", "cholesky_inverse", "qr", "svd",
           "slogdet", "logdet", "pinverse", "matrix_power", "matrix_exp", "triangular_solve",
           "lu", "lu_solve", "lu_unpack", "geqrf", "orgqr", "ormqr", "cross", "vander"]


# kernels torch does not reach (so whose dtype error does not come) for an empty input
_EMPTY_SKIPS = frozenset(("lu_cpu", "cholesky_cpu", "linalg_svd_cpu", "linalg_eigh_cpu",
                          "ldl_factor_kernel_cpu"))


def _lapack_dtype(arr, op, kernel=None):
    """torch's dtype checks of a LAPACK-backed op. Integer and bool inputs get ``op``'s
    "Expected a floating point or complex tensor" RuntimeError (``op`` None: they reach the
    kernel, as every dtype LAPACK lacks does); float16 and bfloat16 get ``kernel``'s
    NotImplementedError, or ``op``'s "Low precision dtypes" RuntimeError when ``kernel`` is
    None."""
    if arr.dtype.char in "fdFD":
        return
    name = _tname(arr.dtype)
    if op is not None:
        _float_or_complex(op, arr)
    if kernel is None:
        raise RuntimeError("%s: Low precision dtypes not supported. Got %s" % (op, name))
    if arr.size == 0 and kernel in _EMPTY_SKIPS:
        return
    raise NotImplementedError("\"%s\" not implemented for '%s'" % (kernel, name))


def _float_or_complex(op, arr):
    if _dt.kind(arr.dtype) not in "fc":
        raise RuntimeError("%s: Expected a floating point or complex tensor as input. Got %s"
                           % (op, _tname(arr.dtype)))


def _square_check(op, arr, kernel=None, dtype_op=True):
    """torch's checks of a square-matrix op: at least 2-D, square, then :func:`_lapack_dtype`
    (``dtype_op`` False: no "Expected a floating point" check of its own)."""
    _square_shape(op, arr)
    _lapack_dtype(arr, op if dtype_op else None, kernel)


def _square_shape(op, arr):
    if arr.ndim < 2:
        raise RuntimeError("%s: The input tensor A must have at least 2 dimensions." % op)
    if arr.shape[-1] != arr.shape[-2]:
        raise RuntimeError("%s: A must be batches of square matrices, but they are %d by %d "
                           "matrices" % (op, arr.shape[-2], arr.shape[-1]))


def _real_dtype(arr):
    """The real dtype of ``arr``'s values (float64 for complex128, ...)."""
    return arr.real.dtype if arr.dtype.kind == "c" else arr.dtype


class LinalgInv(Function):
    node_name = "LinalgInvExBackward0"

    @staticmethod
    def forward(ctx, a):
        arr = a._array
        _square_check("linalg.inv", arr)
        try:
            out = xp_of(a).linalg.inv(arr)
        except np.linalg.LinAlgError:
            _raise_info("linalg.inv", _lu_arrays(arr)[2], _singular_msg)
        out = Tensor._wrap(_colmajor(_nan_matrices(arr, out).astype(arr.dtype, copy=False)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        inv_t, = ctx.saved_tensors
        inv_h = inv_t.mH
        return -matmul(matmul(inv_h, grad_output), inv_h)


def _nan_matrices(arr, out):
    """``out`` with every matrix whose ``arr`` holds a nan made all nan (LAPACK's LU spreads a
    nan over the whole factorisation, as torch's results show)."""
    xp = get_array_module(arr)
    if not arr.size or not out.size:
        return out
    nan_in = xp.isnan(arr).any(axis=(-2, -1))
    if bool(nan_in.any()):
        out = xp.where(nan_in[..., None, None], out.dtype.type(np.nan), out)
    return out


def _singular_msg(i):
    return ("The diagonal element %d is zero, the inversion could not be completed because the "
            "input matrix is singular." % i)


def _inv(a):
    return LinalgInv.apply(a)


class LinalgDet(Function):
    node_name = "LinalgDetBackward0"

    @staticmethod
    def forward(ctx, a):
        arr = a._array
        _square_check("linalg.det", arr, "lu_cpu")
        ctx.save_for_backward(a)
        xp = xp_of(a)
        if arr.size == 0:
            return Tensor._wrap(xp.ones(arr.shape[:-2], dtype=arr.dtype))
        return Tensor._wrap(xp.asarray(xp.linalg.det(arr)).astype(arr.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        from .shape import unsqueeze
        a, = ctx.saved_tensors
        if a._array.size == 0:
            from .creation import zeros_like
            return zeros_like(a)
        # NOTE: d det(A) / dA = det(A) * A^{-T} (conjugated for complex A). For an exactly
        # singular A torch's LU solve scales by det = 0 and returns zeros; swapping in I keeps
        # the inverse finite.
        d = det(a)
        xp = xp_of(a)
        singular = xp.asarray(d._array == 0)
        if bool(singular.any()):
            from .comparison import where
            eye = Tensor._wrap(xp.eye(a._array.shape[-1], dtype=a._array.dtype))
            a = where(Tensor._wrap(singular[..., None, None]), eye, a)
        scale = unsqueeze(unsqueeze(grad_output * d.conj(), -1), -1)
        return scale * _inv(a).mH


def inverse(input, *, out=None):
    """The inverse of a square matrix (or a batch of them)."""
    return _inv(input)


def det(input, *, out=None):
    """The determinant of a square matrix (or a batch of them)."""
    return LinalgDet.apply(input)


class LinalgSolve(Function):
    node_name = "LinalgSolveExBackward0"

    @staticmethod
    def forward(ctx, a, b, left, vector):
        aa, ba = a._array, b._array
        _square_shape("linalg.solve", aa)
        _float_or_complex("linalg.solve", aa)
        if vector:
            ba = ba[..., None]
        b_shape = ba.shape[-2:]     # (as torch's message shows B: a vector as a column)
        if aa.dtype != ba.dtype:
            raise RuntimeError("linalg.solve: Expected A and B to have the same dtype, but found "
                               "A of type %s and B of type %s instead"
                               % (_tname(aa.dtype), _tname(ba.dtype)))
        _lapack_dtype(aa, None, "lu_cpu")
        if not left:
            aa, ba = aa.mT, ba.mT
        if ba.shape[-2] != aa.shape[-1]:
            raise RuntimeError("linalg.solve: Incompatible shapes of A and B for the equation "
                               "%s (%s and %s)" % ("AX = B" if left else "XA = B",
                                                   _shape_str(a._array.shape[-2:]),
                                                   _shape_str(b_shape)))
        batch = np.broadcast_shapes(aa.shape[:-2], ba.shape[:-2])
        xp = xp_of(a)
        aa = xp.broadcast_to(aa, batch + aa.shape[-2:])
        ba = xp.broadcast_to(ba, batch + ba.shape[-2:])
        try:
            x = xp.linalg.solve(aa, ba) if aa.size and ba.size else \
                xp.zeros(ba.shape, dtype=ba.dtype)
        except np.linalg.LinAlgError:
            raise _LinAlgError("torch.linalg.solve: The solver failed because the input matrix "
                               "is singular.") from None
        x = _nan_matrices(aa, x)
        if not left:
            x = x.mT
        if vector:
            x = x[..., 0]
        ctx.left, ctx.vector = left, vector
        out = Tensor._wrap(x.astype(aa.dtype, copy=False))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        a, x = ctx.saved_tensors
        left, vector = ctx.left, ctx.vector
        gb = LinalgSolve.apply(a.mH, grad_output, left, vector)
        ga = None
        if ctx.needs_input_grad[0]:
            gm, xm = (gb.unsqueeze(-1), x.unsqueeze(-1)) if vector else (gb, x)
            ga = -matmul(gm, xm.mH) if left else -matmul(xm.mH, gm)
            ga = sum_to(ga, ctx._input_meta(0)[0])
        gb = sum_to(gb, ctx._input_meta(1)[0]) if ctx.needs_input_grad[1] else None
        return ga, gb, None, None


def _solve(a, b, left=True, vector=False):
    return LinalgSolve.apply(a, b, left, vector)


class LinalgVectorNorm(Function):
    node_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, x, ord, dims, keepdim):
        arr = x._array
        xp = xp_of(x)
        a = xp.abs(arr)
        with errstate(over="ignore", invalid="ignore", divide="ignore"):
            if ord == float("inf"):
                out = a.max(axis=dims, keepdims=keepdim) if a.size else \
                    xp.zeros(_reduced(a.shape, dims, keepdim), a.dtype)
            elif ord == float("-inf"):
                out = a.min(axis=dims, keepdims=keepdim)
            elif ord == 0:
                out = (a != 0).sum(axis=dims, keepdims=keepdim)
            elif math.prod(a.shape[d] for d in dims) == 1:     # (one element: |x|, as torch's
                out = a.sum(axis=dims, keepdims=keepdim)        # kernel, for any ord, even nan)
            elif ord == 1:
                out = a.sum(axis=dims, keepdims=keepdim)
            elif ord == 2:
                out = xp.sqrt((a * a).sum(axis=dims, keepdims=keepdim))
            elif any(a.shape[d] == 0 for d in dims):
                out = xp.zeros(_reduced(a.shape, dims, keepdim), a.dtype)   # (even a nan ord)
            else:
                out = (a ** ord).sum(axis=dims, keepdims=keepdim) ** (1.0 / ord)
        ctx.ord, ctx.dims, ctx.keepdim = ord, dims, keepdim
        out = Tensor._wrap(xp.asarray(out, dtype=_real_dtype(arr)))
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        from .comparison import where, isnan
        from .reduction import sum as _sum
        from .shape import reshape
        x, norm = ctx.saved_tensors
        p, dims = ctx.ord, ctx.dims
        shape = ctx._input_meta(0)[0]
        if not ctx.keepdim:
            kept = _reduced(shape, dims, True)
            grad_output = reshape(grad_output, kept)
            norm = reshape(norm, kept)
        if p == 0:
            return None, None, None, None
        if p == 1:
            return x.sgn() * grad_output, None, None, None
        if p == 2:
            return x * where(norm == 0, 0.0, grad_output / norm), None, None, None
        if p in (float("inf"), float("-inf")):
            ax = x.abs()
            mask = ((ax == norm) | isnan(ax)).to(x.dtype)
            # NOTE: ties share the gradient evenly, as torch's amax backward does.
            return x.sgn() * ((grad_output / _sum(mask, dims, True)) * mask), None, None, None
        if p < 1:
            scaled = where(x == 0, 0.0, x.sgn() * x.abs() ** (p - 1))
            return scaled * grad_output * norm ** (1 - p), None, None, None
        if p < 2:
            scaled = x.sgn() * x.abs() ** (p - 1)
        else:
            scaled = x * x.abs() ** (p - 2)
        scale = where(norm == 0, 0.0, grad_output / norm ** (p - 1))
        return scaled * scale, None, None, None


def _reduced(shape, dims, keepdim):
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


class Amax(Function):
    """``amax``/``amin`` over ``dims``; ties share the gradient evenly (torch's rule)."""

    node_name = "AmaxBackward0"

    @staticmethod
    def forward(ctx, x, dims, keepdim, largest):
        arr = x._array
        out = arr.max(axis=dims, keepdims=keepdim) if largest else \
            arr.min(axis=dims, keepdims=keepdim)
        ctx.dims, ctx.keepdim = dims, keepdim
        if not largest:
            ctx.set_node_name("AminBackward0")
        out = Tensor._wrap(xp_of(x).asarray(out))
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        from .reduction import sum as _sum
        from .shape import reshape
        x, out = ctx.saved_tensors
        if not ctx.keepdim:
            kept = _reduced(x._array.shape, ctx.dims, True)
            grad_output, out = reshape(grad_output, kept), reshape(out, kept)
        mask = (x == out).to(x.dtype)
        return grad_output * mask / _sum(mask, ctx.dims, True), None, None, None


def _svdvals(a):
    """The singular values (the S of ``linalg.svd``, so U and V stay in the graph)."""
    return LinalgSvd.apply(a, False)[1]


def _check_arg(fn, name, value, pos, types, what):
    """torch's argument-parser error when ``value`` is not one of ``types`` (a 0-d tensor
    passes)."""
    if isinstance(value, Tensor) and value._array.ndim == 0:
        return
    if not isinstance(value, types) or (what == "int" and isinstance(value, bool)):
        raise TypeError("%s(): argument '%s' (position %d) must be %s, not %s"
                        % (fn, name, pos, what, type(value).__name__))


def _check_svd_driver(driver):
    if driver is not None:      # (ember's devices have no cuSOLVER)
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The ``ord``-norm of ``x`` over ``dim`` (all elements when None), as a vector."""
    from .conversion import to
    _check_arg("linalg_vector_norm", "ord", ord, 2, (int, float, np.number), "Number")
    if dtype is not None:
        x = to(x, dtype)
    _float_or_complex("linalg.vector_norm", x._array)
    n = x._array.ndim
    if (ord < 0 or ord == float("inf")) and x._array.size == 0:
        given = [] if dim is None else [dim] if isinstance(dim, (int, np.integer)) else list(dim)
        if not given or n == 0:
            raise RuntimeError("linalg.vector_norm cannot compute the %g norm on an empty "
                               "tensor because the operation does not have an identity" % ord)
        for d in given:     # (torch's words, its missing space and the dim as given)
            if x._array.shape[wrap_dim(d, n)] == 0:
                raise RuntimeError("linalg.vector_norm cannot compute the %g norm on the "
                                   "dimension %dbecause this dimension is empty and the "
                                   "operation does not have an identity" % (ord, d))
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        dims = tuple(range(n))      # (an empty dim list reduces every dim, as torch)
    elif isinstance(dim, (int, np.integer)):
        dims = (wrap_dim(dim, n, "linalg.vector_norm"),)
    else:
        dims = wrap_dims(tuple(dim), n, "linalg.vector_norm")
    if n == 0:
        dims = ()       # (a 0-d tensor's dim 0 or -1 is the tensor itself)
    return LinalgVectorNorm.apply(x, float(ord), dims, keepdim)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """Frobenius, nuclear, 1, -1, 2, -2, inf or -inf norm of the matrices in ``A``."""
    from .conversion import to
    from .reduction import sum as _sum
    from .shape import unsqueeze, movedim
    if dtype is not None:
        A = to(A, dtype)
    n = A._array.ndim
    if n < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    _float_or_complex("linalg.matrix_norm", A._array)
    if isinstance(dim, (int, np.integer)):
        dim = (dim,)
    if len(dim) != 2:
        raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got %s"
                           % " ".join(str(d) for d in dim))
    d0, d1 = (wrap_dim(d, n, "linalg.matrix_norm") for d in dim)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        _lapack_dtype(A._array, "linalg.matrix_norm")
        m = movedim(A, (d0, d1), (-2, -1))
        s = _svdvals(m)
        if ord == "nuc":
            res = _sum(s, -1)
        else:
            res = _norm_extreme(s, s._array.ndim - 1, False, ord == 2, -1)
        if keepdim:
            res = unsqueeze(unsqueeze(res, min(d0, d1)), max(d0, d1))
        return res
    if ord in (1, -1, float("inf"), float("-inf")):
        sum_dim, max_dim = (d0, d1) if abs(ord) == 1 else (d1, d0)
        if not keepdim and sum_dim < max_dim:
            max_dim -= 1
        s = vector_norm(A, 1, sum_dim, keepdim)
        return _norm_extreme(s, max_dim, keepdim, ord > 0, max_dim)
    raise RuntimeError("linalg.matrix_norm: Order %s not supported." % (ord,))


def _norm_extreme(s, dim, keepdim, largest, shown):
    """The max (a 0 without grad_fn over an empty dim, as torch) or min (torch's amin error
    over an empty dim, naming it ``shown``) of the nonnegative ``s`` over ``dim``."""
    if s._array.shape[dim] == 0:
        if not largest:
            raise IndexError("amin(): Expected reduction dim %d to have non-zero size." % shown)
        shape = list(s._array.shape)    # (torch's result has no grad_fn)
        shape[dim:dim + 1] = [1] if keepdim else []
        return Tensor._wrap(get_array_module(s._array).zeros(tuple(shape), s._array.dtype))
    return Amax.apply(s, (dim,), keepdim, largest)


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):
    """``linalg.norm``: a vector norm or a matrix norm depending on ``ord`` and ``dim``."""
    if isinstance(dim, (int, np.integer)):
        dim = (dim,)
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError("linalg.norm: If dim is specified, it must be of length 1 or 2. Got %s"
                           % list(dim))
    if isinstance(ord, str):     # (torch's string overload: always a matrix norm)
        if dim is None and A._array.ndim not in (1, 2):
            raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must "
                               "be 1D or 2D. Got %dD." % A._array.ndim)
        return matrix_norm(A, ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    if ord is None:
        if dim is not None and len(dim) == 2:
            return matrix_norm(A, "fro", dim, keepdim, dtype=dtype)
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        n = A._array.ndim
        if n == 1:
            return vector_norm(A, ord, None, keepdim, dtype=dtype)
        if n == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be "
                           "1D or 2D. Got %dD." % n)
    if len(dim) == 1:
        return vector_norm(A, ord, dim, keepdim, dtype=dtype)
    return matrix_norm(A, ord, dim, keepdim, dtype=dtype)


def solve(A, B, *, left=True, out=None):
    """Solve ``A X = B`` (or ``X A = B`` when ``left=False``); ``B`` may be a batch of vectors."""
    return _solve(A, B, left, _solve_is_vector(A, B))


def _solve_is_vector(A, B):
    """torch's rule: ``B`` is a (batch of) vector(s) when 1-D or of ``A``'s batch shape."""
    na, nb = A._array.ndim, B._array.ndim
    return nb == 1 or (nb == na - 1 and B._array.shape == A._array.shape[:-1])


class _LinAlgError(RuntimeError):
    """Raised when a matrix is singular or not positive-definite (``torch.linalg.LinAlgError``)."""


_LinAlgError.__module__ = "torch._C"
LinAlgError = _LinAlgError
_w = Tensor._wrap


def _matrix_check(op, arr, kernel=None, dtype_op=True):
    """torch's checks: at least 2-D, then :func:`_lapack_dtype`."""
    if arr.ndim < 2:
        raise RuntimeError("%s: The input tensor A must have at least 2 dimensions." % op)
    _lapack_dtype(arr, op if dtype_op else None, kernel)


def _raise_info(op, info_arr, message, error=None):
    """Raise ``LinAlgError(op: [(Batch element i): ]message(info))`` for the first nonzero info."""
    flat = info_arr.reshape(-1)
    bad = flat != 0
    if not bool(bad.any()):
        return
    i = int(bad.argmax())
    batch = "(Batch element %d): " % i if info_arr.ndim > 0 else ""
    raise (error or _LinAlgError)("%s: %s%s" % (op, batch, message(int(flat[i]))))


def _lapack(arr, name):
    """The LAPACK routine ``?name`` for ``arr``'s dtype, on its device."""
    prefix = {"f": "s", "d": "d", "F": "c", "D": "z"}[arr.dtype.char]
    return getattr(backend_of(arr).scipy("linalg").lapack, prefix + name)


def _per_matrix(arr, fn):
    """``fn(matrix)`` -> tuple of results, for each matrix of ``arr``, stacked back per batch."""
    xp = get_array_module(arr)
    batch = arr.shape[:-2]
    flat = arr.reshape((-1,) + arr.shape[-2:])
    outs = [fn(flat[i]) for i in range(flat.shape[0])]
    if not outs:
        return None
    res = []
    for j in range(len(outs[0])):
        parts = [xp.asarray(o[j]) for o in outs]
        stacked = xp.stack(parts)
        res.append(stacked.reshape(batch + stacked.shape[1:]))
    return res


def _not_pd(k):
    return ("The factorization could not be completed because the input is not "
            "positive-definite (the leading minor of order %d is not positive-definite)." % k)


def _potrf(arr):
    """Lower Cholesky factor and LAPACK info of each matrix."""
    xp = get_array_module(arr)
    if arr.size == 0:
        return arr.copy(), xp.zeros(arr.shape[:-2], dtype=np.int32)
    potrf = _lapack(arr, "potrf")
    c, info = _per_matrix(arr, lambda m: potrf(m, lower=1, clean=1))
    # NOTE: a NaN pivot is reported as a failed minor, as torch's LAPACK does (OpenBLAS may not).
    bad = ~(get_array_module(c).diagonal(c, 0, -2, -1) > 0)
    first = bad.argmax(-1).astype(np.int32) + 1
    info = xp.where((info == 0) & bad.any(-1), first, info)
    return xp.tril(c).astype(arr.dtype, copy=False), info.astype(np.int32)


class LinalgCholeskyEx(Function):
    node_name = "LinalgCholeskyExBackward0"

    @staticmethod
    def forward(ctx, a, upper, check_errors, op):
        arr = a._array
        _square_check(op, arr, "cholesky_cpu", op != "cholesky")
        low, info = _potrf(arr)
        if check_errors:
            _raise_info(op, info, _not_pd)
        if op == "cholesky":
            ctx.set_node_name("CholeskyBackward0")
        ctx.upper = upper
        out = _w(low.mT.conj() if upper else low)
        ctx.save_for_backward(out)
        return out, _w(info)

    @staticmethod
    def backward(ctx, grad_output, grad_info):
        out, = ctx.saved_tensors
        low, g = (out.mH, grad_output.mH) if ctx.upper else (out, grad_output)
        ga = matmul(low.mH, g).tril()
        ga = 0.5 * (ga + ga.tril(-1).mH)
        ga = _solve_tri(low.mH, ga, True, True, False)
        return _solve_tri(low, ga, False, False, False), None, None, None


def _eye_like(arr, n, m=None):
    return _w(get_array_module(arr).eye(n, m, dtype=arr.dtype))


def _tri_mask(t, upper, unit):
    """The triangle of ``t`` a triangular solve reads."""
    if upper:
        return t.triu(1 if unit else 0)
    return t.tril(-1 if unit else 0)


def _broadcast_batch(aa, ba):
    """``aa`` and ``ba`` broadcast to their common batch shape."""
    xp = get_array_module(aa)
    batch = np.broadcast_shapes(aa.shape[:-2], ba.shape[:-2])
    return xp.broadcast_to(aa, batch + aa.shape[-2:]), xp.broadcast_to(ba, batch + ba.shape[-2:])


def _tri_args(op, aa, ba, left=True, kernel="triangular_solve_cpu"):
    """torch's checks of a triangular solve's ``A`` and ``B``, in its order; ``B`` taken in
    ``A``'s dtype (torch's result has it: a complex ``B`` loses its imaginary part silently).
    The two broadcast to their common batch shape."""
    for name, arr in (("A", aa), ("B", ba)):
        if arr.ndim < 2:
            raise RuntimeError("%s: The input tensor %s must have at least 2 dimensions."
                               % (op, name))
    _square_shape(op, aa)
    n = aa.shape[-1]
    if (ba.shape[-2] if left else ba.shape[-1]) != n:
        raise RuntimeError("%s: Incompatible shapes of A and B for the equation %s (%s and %s)"
                           % (op, "AX = B" if left else "XA = B",
                              _shape_str(aa.shape[-2:]), _shape_str(ba.shape[-2:])))
    _check_batches(ba.shape[:-2], aa.shape[:-2])
    _lapack_dtype(aa, None, kernel)
    if ba.dtype != aa.dtype:
        ba = (ba.real if aa.dtype.kind != "c" else ba).astype(aa.dtype)
    return _broadcast_batch(aa, ba)


def _triangular_solve_args(aa, ba):
    """torch.triangular_solve's checks (its own words, unlike linalg.solve_triangular's); the
    two broadcast to their common batch shape."""
    for name, arr in (("b", ba), ("A", aa)):
        if arr.ndim < 2:
            raise RuntimeError("torch.triangular_solve: Expected %s to have at least 2 "
                               "dimensions, but it has %d dimensions instead" % (name, arr.ndim))
    if aa.dtype != ba.dtype:
        raise RuntimeError("Expected b and A to have the same dtype, but found b of type %s and "
                           "A of type %s instead." % (_tname(ba.dtype), _tname(aa.dtype)))
    if aa.shape[-1] != aa.shape[-2]:
        raise RuntimeError("A must be batches of square matrices, but they are %d by %d matrices"
                           % aa.shape[-2:])
    if aa.shape[-1] != ba.shape[-2]:
        raise RuntimeError("Incompatible matrix sizes for triangular_solve: each A matrix is %d "
                           "by %d but each b matrix is %d by %d" % (aa.shape[-2:] + ba.shape[-2:]))
    _check_batches(ba.shape[:-2], aa.shape[:-2])
    _lapack_dtype(ba, None, "triangular_solve_cpu")
    return _broadcast_batch(aa, ba)


class LinalgSolveTriangular(Function):
    node_name = "LinalgSolveTriangularBackward0"

    @staticmethod
    def forward(ctx, a, b, upper, left, unitriangular):
        aa, ba = _tri_args("linalg.solve_triangular", a._array, b._array, left)
        out = _tri_solve(aa, ba, upper, left, unitriangular, True)
        ctx.upper, ctx.left, ctx.unit = upper, left, unitriangular
        out = _w(_colmajor(out))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        a, x = ctx.saved_tensors
        upper, left, unit = ctx.upper, ctx.left, ctx.unit
        gb = _solve_tri(a.mH, grad_output, not upper, left, unit)
        ga = None
        if ctx.needs_input_grad[0]:
            ga = -matmul(gb, x.mH) if left else -matmul(x.mH, gb)
            ga = sum_to(_tri_mask(ga, upper, unit), ctx._input_meta(0)[0])
        gb = sum_to(gb, ctx._input_meta(1)[0]) if ctx.needs_input_grad[1] else None
        return ga, gb, None, None, None


class TriangularSolve(Function):
    """``torch.triangular_solve``: ``(X, A.clone())`` with ``op(A) X = b``."""

    node_name = "TriangularSolveBackward0"

    @staticmethod
    def forward(ctx, b, a, upper, transpose, unitriangular):
        aa, ba = _triangular_solve_args(a._array, b._array)
        x = _tri_solve(aa.mT if transpose else aa, ba, upper != transpose, True, unitriangular,
                       True)
        ctx.flags = upper, transpose, unitriangular
        ctx.set_materialize_grads(False)
        x = _w(_colmajor(x))
        ctx.save_for_backward(a, x)
        # (torch's clone of A: broadcast to the batch, each matrix column by column)
        xp = get_array_module(aa)
        return x, _w(xp.swapaxes(xp.swapaxes(aa, -1, -2).copy(), -1, -2))

    @staticmethod
    def backward(ctx, gx, gm):
        from .creation import zeros_like
        a, x = ctx.saved_tensors
        upper, transpose, unit = ctx.flags
        gb = ga = None
        if gx is not None:
            gb = TriangularSolve.apply(gx, a.conj(), upper, not transpose, unit)[0]
            if ctx.needs_input_grad[1]:
                ga = -matmul(x.conj(), gb.mT) if transpose else -matmul(gb, x.mH)
                ga = _tri_mask(ga, upper, unit)
        if ctx.needs_input_grad[1] and gm is not None:
            ga = gm if ga is None else ga + gm
        if ctx.needs_input_grad[0] and gb is None and gm is not None:
            gb = zeros_like(x)
        need_b = ctx.needs_input_grad[0] and gb is not None
        gb = sum_to(gb, ctx._input_meta(0)[0]) if need_b else None
        ga = sum_to(ga, ctx._input_meta(1)[0]) if ga is not None else None
        return gb, ga, None, None, None


def _tri_solve(aa, ba, upper, left, unit, trsm=False):
    """Triangular solve on arrays (inf/nan for a zero diagonal, as LAPACK's trsm).

    ``trsm``: a complex non-finite pivot gives NaN, as torch's triangular solves (not lu_solve),
    except complex128 with several columns on an Intel CPU (MKL's path there divides as NumPy).
    """
    xp = get_array_module(aa)
    if aa.size == 0 or ba.size == 0:
        return xp.zeros(ba.shape, dtype=ba.dtype)
    if not left:
        return _tri_solve(aa.mT, ba.mT, not upper, True, unit, trsm).mT.copy()
    n = aa.shape[-1]
    eye = xp.eye(n, dtype=bool)
    t = xp.triu(aa) if upper else xp.tril(aa)
    if trsm and aa.dtype.kind == "c" and not unit and (
            ba.shape[-1] == 1 or aa.itemsize == 8 or cpu_vendor() != "GenuineIntel"):
        t = xp.where(eye & ~xp.isfinite(t), aa.dtype.type(complex("nan+nanj")), t)
    with errstate(divide="ignore", invalid="ignore", over="ignore"):
        if n > 16:
            if unit:
                t = xp.where(eye, aa.dtype.type(1), t)
            try:
                sl = backend_of(aa).scipy("linalg")
                return xp.asarray(sl.solve_triangular(t, ba, lower=not upper,
                                                      check_finite=False)).astype(ba.dtype)
            except np.linalg.LinAlgError:
                pass
        # (the diagonal kept apart, so an inf pivot meets no 0 * inf)
        diag = xp.ones(aa.shape[:-1], dtype=aa.dtype) if unit else xp.diagonal(t, 0, -2, -1)
        off = xp.where(eye, aa.dtype.type(0), t)
        x = xp.zeros(ba.shape, dtype=ba.dtype)
        rows = range(n - 1, -1, -1) if upper else range(n)
        for i in rows:
            acc = ba[..., i, :] - (off[..., i:i + 1, :] @ x)[..., 0, :]
            x[..., i, :] = acc / diag[..., i][..., None]
    return x


def _solve_tri(a, b, upper, left, unitriangular):
    return LinalgSolveTriangular.apply(a, b, upper, left, unitriangular)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """Solve the triangular system ``A X = B`` (``X A = B`` when ``left=False``)."""
    return _solve_tri(A, B, upper, left, unitriangular)


def _phase_check(a, b, msg):
    """torch's gauge check: ``allclose(a, b)`` (lax tolerances) or a RuntimeError."""
    xp = get_array_module(a)
    if not bool(xp.allclose(a, b, rtol=1e-2, atol=1e-2)):
        raise RuntimeError(msg)


_SVD_PHASE = ("svd_backward: The singular vectors in the complex case are specified up to "
              "multiplication by e^{i phi}. The specified loss function depends on this phase "
              "term, making it ill-defined.")


def _svd_backward(gU, gS, gVh, U, S, Vh):
    """torch's ``svd_backward`` (reduced U, Vh)."""
    from .shape import diag_embed
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:
        if gS is None:
            return None
        return matmul(U, gS.unsqueeze(-1) * Vh) if m >= n else matmul(U * gS.unsqueeze(-2), Vh)
    k = S.shape[-1]
    cplx = U._array.dtype.kind == "c"
    UhgU = matmul(U.mH, gU) if gU is not None else None
    UhgU = UhgU - UhgU.mH if UhgU is not None else None
    VhgV = matmul(Vh, gVh.mH) if gVh is not None else None
    VhgV = VhgV - VhgV.mH if VhgV is not None else None
    if cplx:
        xp = get_array_module(U._array)
        zero = xp.zeros(S._array.shape, dtype=S._array.dtype)
        im_u = UhgU._array.diagonal(0, -2, -1).imag if UhgU is not None else zero
        im_v = VhgV._array.diagonal(0, -2, -1).imag if VhgV is not None else zero
        _phase_check(im_u, -im_v, _SVD_PHASE)
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + _eye_like(S._array, k)
    if UhgU is not None and VhgV is not None:
        gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E
    elif UhgU is not None:
        gA = (UhgU / E) * S.unsqueeze(-2)
    else:
        gA = S.unsqueeze(-1) * (VhgV / E)
    if gS is not None:
        gA = gA + diag_embed(gS)
    if cplx and UhgU is not None:
        # NOTE: the imaginary diagonal carries the relative phase of u_i and v_i.
        gA = gA + diag_embed(UhgU.diagonal(0, -2, -1) / (2. * S))
    if m > k and gU is not None:
        gA = matmul(U, gA)
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - matmul(U, matmul(U.mH, gUSinv))
        return matmul(gA, Vh)
    if n > k and gVh is not None:
        gA = matmul(gA, Vh)
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = gA + SinvgVh - matmul(matmul(SinvgVh, Vh.mH), Vh)
        return matmul(U, gA)
    return matmul(U, matmul(gA, Vh)) if m >= n else matmul(matmul(U, gA), Vh)


def _check_finite(op, arr):
    if arr.size and not bool(get_array_module(arr).isfinite(arr).all()):
        raise _LinAlgError("%s: The algorithm failed to converge because the input matrix "
                           "contained non-finite values." % op)


def _finite_matrices(arr):
    """``(arr, bad)`` for an SVD: torch's error for a matrix holding a NaN (LAPACK's ``?gesdd``
    rejects it); ``bad`` (None when every matrix is finite) marks the matrices holding an
    infinity, replaced by zeros in the returned ``arr`` so that LAPACK never sees them."""
    xp = get_array_module(arr)
    if not arr.size or bool(xp.isfinite(arr).all()):
        return arr, None
    _raise_info("linalg.svd", xp.isnan(arr).any((-2, -1)), lambda i: "The algorithm failed "
                "to converge because the input matrix contained non-finite values.")
    bad = ~xp.isfinite(arr).all((-2, -1))
    return xp.where(bad[..., None, None], 0, arr), bad


def _nan_where(bad, arr):
    """``arr`` with the matrices (or vectors: ``arr`` has one more dim than ``bad``) that
    ``bad`` marks set to NaN."""
    if bad is None:
        return arr
    extra = (None,) * (arr.ndim - bad.ndim)
    nan = complex(np.nan, np.nan) if arr.dtype.kind == "c" else np.nan
    return get_array_module(arr).where(bad[(Ellipsis,) + extra], nan, arr).astype(arr.dtype)


class LinalgSvd(Function):
    node_name = "LinalgSvdBackward0"

    @staticmethod
    def forward(ctx, a, full_matrices):
        arr = a._array
        _matrix_check("linalg.svd", arr, "linalg_svd_cpu")
        # NOTE: torch's LAPACK gives NaN singular values for a matrix holding an infinity, and
        # U, Vh (and so the gradients) that depend on its internals (sometimes an error): here
        # all three are NaN for such a matrix.
        arr, bad = _finite_matrices(arr)
        xp = xp_of(a)
        m, n = arr.shape[-2:]
        k = min(m, n)
        if arr.size == 0:
            b = arr.shape[:-2]
            u = xp.broadcast_to(xp.eye(m, m if full_matrices else k, dtype=arr.dtype),
                                b + (m, m if full_matrices else k)).copy()
            vh = xp.broadcast_to(xp.eye(n if full_matrices else k, n, dtype=arr.dtype),
                                 b + (n if full_matrices else k, n)).copy()
            s = xp.zeros(b + (k,), dtype=_real_dtype(arr))
        else:
            u, s, vh = (xp.asarray(r) for r in xp.linalg.svd(arr, full_matrices=full_matrices))
        ctx.set_materialize_grads(False)
        ctx.full = full_matrices
        u, s, vh = (_nan_where(bad, r) for r in (u, s, vh))
        outs = (_w(_colmajor(u.astype(arr.dtype))), _w(s.astype(_real_dtype(arr))),
                _w(_colmajor(vh.astype(arr.dtype))))
        ctx.save_for_backward(*outs)
        return outs

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        U, S, Vh = ctx.saved_tensors
        if ctx.full:
            k = S.shape[-1]
            U, Vh = U[..., :k], Vh[..., :k, :]
            gU = gU[..., :k] if gU is not None else None
            gVh = gVh[..., :k, :] if gVh is not None else None
        return _svd_backward(gU, gS, gVh, U, S, Vh), None


class LinalgEigh(Function):
    node_name = "LinalgEighBackward0"

    @staticmethod
    def forward(ctx, a, uplo, op):
        arr = a._array
        _square_check(op, arr, "linalg_eigh_cpu", False)
        if uplo not in ("L", "U", "l", "u"):
            raise RuntimeError("Expected UPLO argument to be 'L' or 'U', but got %s" % uplo)
        xp = xp_of(a)
        if arr.size == 0:
            w, v = xp.zeros(arr.shape[:-1], dtype=_real_dtype(arr)), arr.copy()
        else:
            w, v = _syevd(arr, uplo.upper() == "L")
        ctx.set_materialize_grads(False)
        L, V = _w(w.astype(_real_dtype(arr))), _w(_colmajor(v.astype(arr.dtype)))
        ctx.save_for_backward(L, V)
        return L, V

    @staticmethod
    def backward(ctx, gL, gV):
        L, V = ctx.saved_tensors
        return _eig_backward(gL, gV, L, V, True), None, None


def _syevd(arr, lower):
    """LAPACK's ``?syevd``/``?heevd`` on each matrix (torch's driver); torch's error when one
    fails to converge."""
    syevd = _lapack(arr, "heevd" if arr.dtype.kind == "c" else "syevd")
    with errstate(invalid="ignore", over="ignore"):
        w, v, info = _per_matrix(arr, lambda m: syevd(m, compute_v=1, lower=int(lower)))
    _raise_info("linalg.eigh", info, lambda i: "The algorithm failed to converge because the "
                "input matrix is ill-conditioned or has too many repeated eigenvalues (error "
                "code: %d)." % i)
    return w, v


def _eig_backward(gL, gV, L, V, hermitian):
    """torch's ``linalg_eig_backward``: ``gA`` for ``A V = V diag(L)``."""
    from .shape import diag_embed
    if gV is None:
        if gL is None:
            return None
        if hermitian:
            return matmul(V * gL.unsqueeze(-2), V.mH)
        return _solve(V.mH, gL.unsqueeze(-1) * V.mH)
    VhgV = matmul(V.mH, gV)
    diag = VhgV.diagonal(0, -2, -1)
    if V._array.dtype.kind == "c":
        im = diag._array.imag
        _phase_check(im, get_array_module(im).zeros_like(im),
                     "%s: The eigenvectors in the complex case are specified up to "
                     "multiplication by e^{i phi}. The specified loss function depends on this "
                     "quantity, so it is ill-defined."
                     % ("linalg_eigh_backward" if hermitian else "linalg_eig_backward"))
    if hermitian:
        VhgV = 0.5 * (VhgV - VhgV.mH)
    else:
        VhgV = VhgV - matmul(V.mH, V * diag.real.unsqueeze(-2))
    Lc = L.conj()
    E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1) + _eye_like(L._array, L.shape[-1])
    gA = VhgV / E
    if gL is not None:
        # NOTE: torch overwrites the diagonal with gL (it holds only rounding error).
        gA = gA - diag_embed(gA.diagonal(0, -2, -1)) + diag_embed(gL)
    if hermitian:
        return matmul(V, matmul(gA, V.mH))
    return _solve(V.mH, matmul(gA, V.mH))


def _copyltu(M):
    # NOTE: the diagonal keeps only its real part doubled over for complex M (torch's rule:
    # the phase of R's diagonal is fixed, so its imaginary part carries no gradient).
    if M._array.dtype.kind == "c":
        return M.tril(-1) + M.tril(-1).mH + M.diagonal(0, -2, -1).real.diag_embed().to(M.dtype)
    return M.tril() + M.tril(-1).mH


def _qr_square_backward(gQ, gR, Q, R):
    """gA for ``A = QR`` with m >= n (reduced)."""
    M = matmul(R, gR.mH) - matmul(gQ.mH, Q)
    X = gQ + matmul(Q, _copyltu(M))
    return _solve_tri(R.mH, X, False, False, False)


class LinalgQr(Function):
    node_name = "LinalgQrBackward0"

    @staticmethod
    def forward(ctx, a, mode):
        arr = a._array
        _matrix_check("linalg.qr", arr, "geqrf_cpu")
        if mode not in ("reduced", "complete", "r"):
            raise RuntimeError("qr received unrecognized mode '%s' but expected one of "
                               "'reduced' (default), 'r', or 'complete'" % mode)
        xp = xp_of(a)
        m, n = arr.shape[-2:]
        k = min(m, n)
        b = arr.shape[:-2]
        if arr.size == 0:
            qc = m if mode == "complete" else k
            q = xp.broadcast_to(xp.eye(m, qc, dtype=arr.dtype), b + (m, qc)).copy()
            r = xp.zeros(b + (qc, n), dtype=arr.dtype)
        elif arr.dtype.char == "F":       # (complex64 LAPACK, as torch's: NumPy's is complex128)
            qr_ = backend_of(arr).scipy("linalg").qr
            full = "full" if mode == "complete" else "economic"
            q, r = _per_matrix(arr, lambda x: qr_(x, mode=full, check_finite=False))
        else:
            q, r = (xp.asarray(t) for t in xp.linalg.qr(arr, mode="complete" if mode ==
                                                         "complete" else "reduced"))
        if mode == "r":
            q = xp.zeros((0,), dtype=arr.dtype)
        ctx.mode = mode
        ctx.set_materialize_grads(False)
        Q, R = _w(q.astype(arr.dtype)), _w(r.astype(arr.dtype))
        ctx.save_for_backward(Q, R)
        return Q, R

    @staticmethod
    def backward(ctx, gQ, gR):
        from .creation import zeros_like
        from .shape import cat
        Q, R = ctx.saved_tensors
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                               "when mode='r'. Please use linalg.qr(A, mode='reduced') if you "
                               "are going to differentiate through linalg.qr.")
        m, n = Q.shape[-2], R.shape[-1]
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                               "and nrows > ncols.")
        gQ = zeros_like(Q) if gQ is None else gQ
        gR = zeros_like(R) if gR is None else gR
        if m >= n:
            return _qr_square_backward(gQ, gR, Q, R), None
        gY = matmul(Q, gR[..., m:])
        Y = matmul(Q, R[..., m:])
        gX = _qr_square_backward(gQ + matmul(Y, gR[..., m:].mH), gR[..., :m], Q, R[..., :m])
        return cat([gX, gY], -1), None


def _lu_arrays(arr):
    """``(LU, pivots (1-based int32), info)`` of each matrix (LAPACK's getrf)."""
    xp = get_array_module(arr)
    m, n = arr.shape[-2:]
    k = min(m, n)
    if arr.size == 0:
        return (arr.copy(), xp.ones(arr.shape[:-2] + (k,), dtype=np.int32),
                xp.zeros(arr.shape[:-2], dtype=np.int32))
    getrf = _lapack(arr, "getrf")
    lu, piv, info = _per_matrix(arr, lambda a: getrf(a))
    return lu.astype(arr.dtype, copy=False), (piv + 1).astype(np.int32), info.astype(np.int32)


def _perm_arrays(piv, m):
    """Permutation matrices ``P`` with ``A = P L U`` from LAPACK's 1-based pivots."""
    xp = get_array_module(piv)
    batch, k = piv.shape[:-1], piv.shape[-1]
    p = piv.reshape((int(math.prod(batch)), k)).astype(np.int64) - 1
    nb = p.shape[0]
    perm = xp.broadcast_to(xp.arange(m), (nb, m)).copy()
    bidx = xp.arange(nb)
    for i in range(k):
        j = p[:, i]
        pi = perm[:, i].copy()
        perm[:, i] = perm[bidx, j]
        perm[bidx, j] = pi
    return perm.reshape(batch + (m,))


def _perm_matrix(perm, dtype):
    xp = get_array_module(perm)
    m = perm.shape[-1]
    eye = xp.eye(m, dtype=dtype)
    # P[perm[i], i] = 1: the columns of P are unit vectors e_{perm[i]}.
    return eye[perm].mT.copy()


def _lu_unpack_t(LU, P_arr):
    """``(P, L, U)`` Tensors from a packed LU Tensor and a permutation array."""
    m, n = LU.shape[-2:]
    k = min(m, n)
    eye = _eye_like(LU._array, m, k)
    L = LU[..., :, :k].tril(-1) + eye
    U = LU[..., :k, :].triu()
    return _w(_perm_matrix(P_arr, LU._array.dtype)), L, U


def _lu_backward(gL, gU, P, L, U):
    """torch's ``linalg_lu_backward`` (any of gL, gU may be None)."""
    from .creation import zeros_like
    from .shape import cat
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    gL = zeros_like(L) if gL is None else gL
    gU = zeros_like(U) if gU is None else gU
    if m == n:
        phi = matmul(L.mH, gL).tril(-1) + matmul(gU, U.mH).triu()
        ga = _solve_tri(L.mH, phi, True, True, True)
        return matmul(P, _solve_tri(U.mH, ga, False, False, False))
    if m < n:
        U1, U2, gU1, gU2 = U[..., :k], U[..., k:], gU[..., :k], gU[..., k:]
        phi = (matmul(L.mH, gL) - matmul(gU2, U2.mH)).tril(-1) + matmul(gU1, U1.mH).triu()
        ga1 = _solve_tri(U1.mH, _solve_tri(L.mH, phi, True, True, True), False, False, False)
        ga2 = _solve_tri(L.mH, gU2, True, True, True)
        return matmul(P, cat([ga1, ga2], -1))
    L1, L2, gL1, gL2 = L[..., :k, :], L[..., k:, :], gL[..., :k, :], gL[..., k:, :]
    phi = matmul(L1.mH, gL1).tril(-1) + (matmul(gU, U.mH) - matmul(L2.mH, gL2)).triu()
    ga1 = _solve_tri(U.mH, _solve_tri(L1.mH, phi, True, True, True), False, False, False)
    ga2 = _solve_tri(U.mH, gL2, False, False, False)
    return matmul(P, cat([ga1, ga2], -2))


def _lu_dims(op, arr):
    if arr.ndim < 2:
        raise RuntimeError("%s: Expected tensor with 2 or more dimensions. Got size: %s instead"
                           % (op, list(arr.shape)))


class LinalgLuFactorEx(Function):
    node_name = "LinalgLuFactorExBackward0"

    @staticmethod
    def forward(ctx, a, pivot, check_errors, op):
        arr = a._array
        _lu_dims("torch.lu_factor", arr)
        _matrix_check(op, arr, "lu_cpu", False)
        if not pivot:
            raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the "
                               "CPU")
        lu, piv, info = _lu_arrays(arr)
        if check_errors:
            _raise_info(op, info, lambda i: "U[%d,%d] is zero and using it on lu_solve would "
                        "result in a division by zero. If you still want to perform the "
                        "factorization, consider calling linalg.lu(A, pivot) or "
                        "linalg.lu_factor_ex(A, pivot)" % (i, i), RuntimeError)
        LU = _w(lu)
        ctx.save_for_backward(LU, _w(piv))
        return LU, _w(piv), _w(info)

    @staticmethod
    def backward(ctx, gLU, gpiv, ginfo):
        LU, piv = ctx.saved_tensors
        m, n = LU.shape[-2:]
        k = min(m, n)
        P, L, U = _lu_unpack_t(LU.detach(), _perm_arrays(piv._array, m))
        L, U = LU[..., :, :k].tril(-1) + _eye_like(LU._array, m, k), LU[..., :k, :].triu()
        ga = _lu_backward(gLU[..., :, :k].tril(-1), gLU[..., :k, :].triu(), P, L, U)
        return ga, None, None, None


class LinalgLu(Function):
    node_name = "LinalgLuBackward0"

    @staticmethod
    def forward(ctx, a, pivot):
        arr = a._array
        _lu_dims("linalg.lu", arr)
        _matrix_check("linalg.lu", arr, "lu_cpu", False)
        if not pivot:
            raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the "
                               "CPU")
        lu, piv, _ = _lu_arrays(arr)
        P, L, U = _lu_unpack_t(_w(lu), _perm_arrays(piv, arr.shape[-2]))
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(P, L, U)
        ctx.mark_non_differentiable(P)
        return P, L, U

    @staticmethod
    def backward(ctx, gP, gL, gU):
        P, L, U = ctx.saved_tensors
        return _lu_backward(gL, gU, P, L, U), None


class LinalgSlogdet(Function):
    node_name = "LinalgSlogdetBackward0"

    @staticmethod
    def forward(ctx, a, op):
        arr = a._array
        _square_check(op, arr)
        xp = xp_of(a)
        sign, logabs = (xp.asarray(r) for r in xp.linalg.slogdet(arr))
        ctx.set_materialize_grads(False)
        sign_t = _w(sign.astype(arr.dtype))
        ctx.save_for_backward(a, sign_t)
        return sign_t, _w(logabs.astype(_real_dtype(arr)))

    @staticmethod
    def backward(ctx, gsign, glogabs):
        a, sign = ctx.saved_tensors
        g = glogabs
        if gsign is not None and a._array.dtype.kind == "c":
            # NOTE: the phase of det(A) moves with the imaginary part of d log det(A).
            dphase = (gsign * sign.conj()).imag * 1j
            g = dphase if g is None else g + dphase
        if g is None:
            return None, None
        return g.unsqueeze(-1).unsqueeze(-1) * _inv(a).mH, None


def _float_double(arr):
    if arr.dtype.char not in "fdFD":
        raise RuntimeError("This function doesn't handle types other than float and double")


def _pinv_backward(grad, pinvA, A):
    """torch's ``pinv_backward``."""
    m, n = A.shape[-2:]
    pinvAh = pinvA.mH
    gradh = grad.mH
    if m <= n:
        K = matmul(gradh, pinvA)
        KpinvAh = matmul(K, pinvAh)
        return (-matmul(pinvA, K).mH + KpinvAh - matmul(matmul(A, pinvA), KpinvAh)
                + matmul(matmul(pinvAh, pinvA), gradh - matmul(K, A)))
    K = matmul(pinvA, gradh)
    pinvAhK = matmul(pinvAh, K)
    return (-matmul(K, pinvA).mH + matmul(matmul(gradh - matmul(A, K), pinvA), pinvAh)
            + pinvAhK - matmul(matmul(pinvAhK, pinvA), A))


def _eps(arr):
    """torch's ``_get_epsilon`` of ``arr``'s real dtype (times nothing)."""
    real = _real_dtype(arr)
    if real.char not in "fd":
        raise RuntimeError("This function doesn't handle types other than float and double")
    return float(np.finfo(real).eps)


def _atol_rtol(arr, atol, rtol, fname):
    """torch's ``get_atol_rtol``: the tolerances as arrays (0-d float64 ones for Python numbers
    and for the defaults: atol 0, rtol ``eps * max(m, n)``, or 0 where atol > 0)."""
    xp = get_array_module(arr)

    def as_arr(v, name):
        if not isinstance(v, Tensor):
            return xp.asarray(float(v), dtype=np.float64)
        if v._array.dtype.kind == "c":
            raise RuntimeError("%s: %s tensor of complex type is not supported. Got %s"
                               % (fname, name, _tname(v._array.dtype)))
        return v._array
    atol_a = xp.zeros((), dtype=np.float64) if atol is None else as_arr(atol, "atol")
    if rtol is not None:
        rtol_a = as_arr(rtol, "rtol")
    else:
        default = xp.asarray(_eps(arr) * max(arr.shape[-2:]), dtype=np.float64)
        rtol_a = default if atol is None else xp.where(atol_a > 0, 0.0, default)
    return atol_a, rtol_a


def _bcast(a_shape, b_shape):
    """The broadcast of two shapes, or torch's error."""
    try:
        return np.broadcast_shapes(a_shape, b_shape)
    except ValueError:
        for i, (x, y) in enumerate(zip(reversed(a_shape), reversed(b_shape))):
            if x != y and x != 1 and y != 1:
                raise RuntimeError("The size of tensor a (%d) must match the size of tensor b (%d) "
                                   "at non-singleton dimension %d"
                                   % (x, y, max(len(a_shape), len(b_shape)) - 1 - i)) from None
        raise


def _promote(*arrs):
    out = _dt.from_numpy_dtype(arrs[0].dtype)
    for x in arrs[1:]:
        out = _dt.promote_types(out, _dt.from_numpy_dtype(x.dtype))
    return out.np


def _tolerance(atol_a, rtol_a, s_max):
    """``max(atol[..., None], rtol[..., None] * s_max)`` with torch's broadcasting and dtypes."""
    xp = get_array_module(s_max)
    at, rt = atol_a[..., None], rtol_a[..., None]
    _bcast(rt.shape, s_max.shape)
    prod = (rt * s_max).astype(_promote(rt, s_max), copy=False)
    _bcast(at.shape, prod.shape)
    return xp.maximum(at, prod).astype(_promote(at, prod), copy=False)


class LinalgPinv(Function):
    node_name = "LinalgPinvBackward0"

    @staticmethod
    def forward(ctx, a, atol_a, rtol_a, hermitian, lower=None):
        arr = a._array
        xp = xp_of(a)
        m, n = arr.shape[-2:]
        # (under autocast torch's last matmul runs in the lower dtype: ``lower``)
        dot = xp.matmul if lower is None else (lambda p, q: xp.matmul(
            p.astype(lower).astype(np.float32), q.astype(lower).astype(np.float32)))
        if arr.size == 0:
            out = xp.zeros(arr.shape[:-2] + (n, m), dtype=arr.dtype)
        elif hermitian:
            w, v = _syevd(arr, True)
            w_abs = xp.abs(w)
            tol = _tolerance(atol_a, rtol_a, w_abs.max(-1, keepdims=True))
            _bcast(w_abs.shape, tol.shape)
            with errstate(divide="ignore"):
                winv = xp.where(w_abs > tol, 1 / w, 0).astype(arr.dtype)
            out = dot(v * winv[..., None, :], xp.conj(v).mT)
        else:
            # NOTE: NaN for a matrix holding an infinity (torch's is LAPACK's NaN or 0).
            arr, bad = _finite_matrices(arr)
            u, s, vh = (xp.asarray(r) for r in xp.linalg.svd(arr, full_matrices=False))
            tol = _tolerance(atol_a, rtol_a, s[..., :1])
            _bcast(s.shape, tol.shape)
            with errstate(divide="ignore"):
                sinv = xp.where(s > tol, 1 / s, 0).astype(arr.dtype)
            out = _nan_where(bad, dot(xp.conj(vh).mT * sinv[..., None, :], xp.conj(u).mT))
        out = _w(xp.asarray(out).astype(arr.dtype if lower is None else lower))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        a, out = ctx.saved_tensors
        with errstate(invalid="ignore"):    # (an infinity in A meets a NaN pinv, quietly)
            grad = _pinv_backward(grad_output, out, a)
        if tuple(grad.shape) != tuple(a.shape):
            grad = sum_to(grad, tuple(a.shape))
        return grad, None, None, None, None


class LinalgMatrixExp(Function):
    node_name = "LinalgMatrixExpBackward0"

    @staticmethod
    def forward(ctx, a):
        arr = a._array
        _square_shape("linalg.matrix_exp", arr)
        _float_or_complex("linalg.matrix_exp", arr)
        if arr.size == 0:
            out = arr.copy()
        else:
            sl = backend_of(arr).scipy("linalg")
            out = xp_of(a).asarray(sl.expm(arr)).astype(arr.dtype)
        ctx.save_for_backward(a)
        return _w(out)

    @staticmethod
    def backward(ctx, grad_output):
        from .creation import zeros_like
        from .shape import cat
        a, = ctx.saved_tensors
        n = a.shape[-1]
        at = a.mH
        big = cat([cat([at, grad_output], -1), cat([zeros_like(at), at], -1)], -2)
        return LinalgMatrixExp.apply(big)[..., :n, n:]


class LinalgCross(Function):
    node_name = "LinalgCrossBackward0"

    @staticmethod
    def forward(ctx, a, b, dim):
        aa, ba = binary_arrays("linalg.cross", a, b)
        ctx.dim = dim
        ctx.save_for_backward(a, b)
        return _w(xp_of(a).cross(aa, ba, axis=dim))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = sum_to(LinalgCross.apply(b.conj(), grad_output, ctx.dim), ctx._input_meta(0)[0])
        if ctx.needs_input_grad[1]:
            gb = sum_to(LinalgCross.apply(grad_output, a.conj(), ctx.dim), ctx._input_meta(1)[0])
        return ga, gb, None


class _NoGrad(Function):
    """Outputs computed by ``fn`` whose backward raises torch's "not implemented" error."""

    @staticmethod
    def forward(ctx, a, fn, aten):
        ctx.aten = aten
        return fn()

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("derivative for %s is not implemented" % ctx.aten)


class _NoDerivative(Function):
    """Outputs computed by ``fn`` whose backward raises torch's NotImplementedError for an op
    without a derivative formula (its node is ``<Aten>Backward0``)."""

    @staticmethod
    def forward(ctx, a, fn, aten):
        ctx.aten = aten
        ctx.set_node_name(aten.capitalize() + "Backward0")
        return fn()

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError("the derivative for '%s' is not implemented." % ctx.aten)


class LinalgLstsq(Function):
    node_name = "LinalgLstsqBackward0"

    @staticmethod
    def forward(ctx, a, b, rcond, driver, vec):
        aa, ba = a._array, b._array
        if vec:
            ba = ba[..., None]
        xp = xp_of(a)
        sl = backend_of(aa).scipy("linalg")
        batch = np.broadcast_shapes(aa.shape[:-2], ba.shape[:-2])
        m, n = aa.shape[-2:]
        k = ba.shape[-1]
        rdt = _real_dtype(aa)
        nb = int(math.prod(batch))
        ab = xp.broadcast_to(aa, batch + aa.shape[-2:]).reshape((nb, m, n))
        bb = xp.broadcast_to(ba, batch + ba.shape[-2:]).reshape((nb, m, k))
        lapack_driver = "gelsy" if driver == "gels" else driver
        x = xp.zeros((ab.shape[0], n, k), dtype=aa.dtype)
        # NOTE: LAPACK factors A once per batch entry of A: rank and singular values follow
        # A's own batch shape, as torch's do.
        na = int(math.prod(aa.shape[:-2]))
        rank = xp.zeros((na,), dtype=np.int64)
        sv = xp.zeros((na, min(m, n)), dtype=rdt)
        a_idx = xp.broadcast_to(xp.arange(na).reshape(aa.shape[:-2]), batch).reshape(-1)
        for i in range(ab.shape[0] if m and n and k else 0):
            xi, _, ri, si = sl.lstsq(ab[i], bb[i], cond=rcond, lapack_driver=lapack_driver,
                                     check_finite=False)
            x[i] = xp.asarray(xi)
            j = int(a_idx[i])
            rank[j] = int(ri)
            if si is not None:
                sv[j] = xp.asarray(si)
        x = x.reshape(batch + (n, k))
        res = xp.zeros((0,), dtype=rdt)
        if m > n and driver != "gelsy" and (driver == "gels" or bool((rank == n).all())):
            r = xp.matmul(xp.broadcast_to(aa, batch + aa.shape[-2:]), x) - ba
            res = (r.real ** 2 + r.imag ** 2 if r.dtype.kind == "c" else r * r).sum(-2)
        rank = rank.reshape(aa.shape[:-2])
        sv = sv.reshape(aa.shape[:-2] + (min(m, n),))
        if driver == "gels":
            rank = xp.zeros((0,), dtype=np.int64)
        if driver in ("gels", "gelsy"):
            sv = xp.zeros((0,), dtype=rdt)
        # NOTE: LAPACK writes X into B's column-major buffer of max(m, n) rows: torch's strides
        buf = _colmajor(xp.zeros(batch + (max(m, n), k), dtype=aa.dtype))
        buf[..., :n, :] = x
        X = _w(buf[..., :n, 0] if vec else buf[..., :n, :])
        outs = (X, _w(res.astype(rdt, copy=False)), _w(rank), _w(sv.astype(rdt, copy=False)))
        ctx.mark_non_differentiable(outs[2], outs[3])
        ctx.set_materialize_grads(False)
        ctx.vec = vec
        ctx.save_for_backward(a, b, X)
        return outs

    @staticmethod
    def backward(ctx, gX, gres, grank, gsv):
        a, b, X = ctx.saved_tensors
        vec = ctx.vec
        ga = gb = None
        if gX is None and gres is None:
            return None, None, None, None, None
        B = b.unsqueeze(-1) if vec else b
        Xm = X.unsqueeze(-1) if vec else X
        if gX is not None:
            gX = gX.unsqueeze(-1) if vec else gX
            pinvA = LinalgPinv.apply(a, *_atol_rtol(a._array, None, None, ""), False)
            if ctx.needs_input_grad[0]:
                ga = _pinv_backward(matmul(gX, B.mH), pinvA, a)
            if ctx.needs_input_grad[1]:
                gb = matmul(pinvA.mH, gX)
        if gres is not None and gres.numel():
            # NOTE: X minimises the residual, so only its explicit dependence on A and B counts.
            R = 2 * (matmul(a, Xm) - B) * gres.unsqueeze(-2)
            if ctx.needs_input_grad[0]:
                gaR = matmul(R, Xm.mH)
                ga = gaR if ga is None else ga + gaR
            if ctx.needs_input_grad[1]:
                gb = -R if gb is None else gb - R
        if ga is not None:
            ga = sum_to(ga, ctx._input_meta(0)[0])
        if gb is not None:
            gb = sum_to(gb.squeeze(-1) if vec else gb, ctx._input_meta(1)[0])
        return ga, gb, None, None, None


def _square_eye(A):
    return _eye_like(A._array, A.shape[-1])


def linalg_cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """``(L, info)``: the Cholesky factor and LAPACK's info (0, or the order of the first
    leading minor that is not positive-definite)."""
    L, info = LinalgCholeskyEx.apply(A, upper, check_errors, "linalg.cholesky_ex")
    return _rt.linalg_cholesky_ex(L, info)


def linalg_cholesky(A, *, upper=False, out=None):
    """The Cholesky factor ``L`` (``A = L L^T``; ``U`` with ``A = U^T U`` when ``upper``)."""
    return LinalgCholeskyEx.apply(A, upper, True, "linalg.cholesky")[0]


def cholesky(input, upper=False, *, out=None):
    """``torch.cholesky``: the Cholesky factor (lower unless ``upper``; deprecated, as in
    torch)."""
    _warn_once("cholesky", "torch.cholesky is deprecated in favor of torch.linalg.cholesky and "
               "will be removed in a future PyTorch release.\nL = torch.cholesky(A)\nshould be "
               "replaced with\nL = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, "
               "upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\nThis "
               "transform will produce equivalent results for all valid (symmetric positive "
               "definite) inputs.")
    return LinalgCholeskyEx.apply(input, upper, True, "cholesky")[0]


def _cho_solve(ba, la, upper, trsm=False):
    """``A^{-1} B`` on arrays from the Cholesky factor of ``A``."""
    lo, up = (la.mT.conj(), la) if upper else (la, la.mT.conj())
    return _tri_solve(up, _tri_solve(lo, ba, False, True, False, trsm), True, True, False, trsm)


def _cholesky_solve_check(ba, la):
    """torch's checks of ``cholesky_solve``'s ``B`` and ``L`` (its ``linearSolveCheckInputs``)."""
    for name, arr in (("b", ba), ("u", la)):
        if arr.ndim < 2:
            raise RuntimeError("%s should have at least 2 dimensions, but has %d dimensions "
                               "instead" % (name, arr.ndim))
    if ba.dtype != la.dtype:
        raise RuntimeError("Expected b and A to have the same dtype, but found b of type %s and A "
                           "of type %s instead." % (_tname(ba.dtype), _tname(la.dtype)))
    if la.shape[-1] != la.shape[-2]:
        raise RuntimeError("A must be batches of square matrices, but they are %d by %d matrices"
                           % la.shape[-2:])
    if la.shape[-1] != ba.shape[-2]:
        raise RuntimeError("Incompatible matrix sizes for cholesky_solve: each A matrix is %d by "
                           "%d but each b matrix is %d by %d"
                           % ((la.shape[-1],) * 2 + ba.shape[-2:]))
    _bcast(ba.shape[:-2], la.shape[:-2])


class CholeskySolve(Function):
    node_name = "CholeskySolveBackward0"

    @staticmethod
    def forward(ctx, b, L, upper):
        _cholesky_solve_check(b._array, L._array)
        la, ba = _tri_args("cholesky_solve", L._array, b._array, kernel="cholesky_solve_cpu")
        x = _w(_colmajor(_cho_solve(ba, la, upper, True)))
        ctx.upper = upper
        ctx.save_for_backward(L, x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        L, x = ctx.saved_tensors
        gb = CholeskySolve.apply(grad_output, L, ctx.upper)
        gL = None
        if ctx.needs_input_grad[1]:
            common = matmul(gb, x.mH)
            common = common + common.mH
            gL = -matmul(L, common) if ctx.upper else -matmul(common, L)
            gL = sum_to(gL, ctx._input_meta(1)[0])
        gb = sum_to(gb, ctx._input_meta(0)[0]) if ctx.needs_input_grad[0] else None
        return gb, gL, None


def cholesky_solve(B, L, upper=False, *, out=None):
    """Solve ``A X = B`` given the Cholesky factor ``L`` of ``A``."""
    return CholeskySolve.apply(B, L, upper)


class CholeskyInverse(Function):
    node_name = "CholeskyInverseBackward0"

    @staticmethod
    def forward(ctx, L, upper):
        la = L._array
        _square_check("cholesky_inverse", la, "cholesky_inverse_out_cpu", False)
        xp = xp_of(L)
        eye = xp.broadcast_to(xp.eye(la.shape[-1], dtype=la.dtype), la.shape)
        out = _w(_cho_solve(eye, la, upper))
        ctx.upper = upper
        ctx.save_for_backward(L, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        L, inv = ctx.saved_tensors
        common = matmul(inv, matmul(grad_output + grad_output.mH, inv))
        return (-matmul(L, common) if ctx.upper else -matmul(common, L)), None


def cholesky_inverse(L, upper=False, *, out=None):
    """The inverse of ``A`` from its Cholesky factor ``L``."""
    return CholeskyInverse.apply(L, upper)


def linalg_svd(A, full_matrices=True, *, driver=None, out=None):
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, singular values in descending order."""
    _check_svd_driver(driver)
    return _rt.linalg_svd(*LinalgSvd.apply(A, full_matrices))


def svd(input, some=True, compute_uv=True, *, out=None):
    """``torch.svd``: ``(U, S, V)`` (``V``, not ``Vh``); reduced unless ``some=False``."""
    from .creation import zeros
    if not compute_uv:
        s = LinalgSvd.apply(input, False)[1]
        m, n = input.shape[-2:]
        b = tuple(input.shape[:-2])
        return _rt.svd(zeros(b + (m, m), dtype=input.dtype, device=input.device), s,
                       zeros(b + (n, n), dtype=input.dtype, device=input.device))
    u, s, vh = LinalgSvd.apply(input, not some)
    return _rt.svd(u, s, vh.mH)


def linalg_eigh(A, UPLO="L", *, out=None):
    """``(eigenvalues, eigenvectors)`` of a symmetric matrix, eigenvalues ascending."""
    return _rt.linalg_eigh(*LinalgEigh.apply(A, UPLO, "linalg.eigh"))


def linalg_eigvalsh(A, UPLO="L", *, out=None):
    """The eigenvalues of a symmetric matrix, ascending."""
    return LinalgEigh.apply(A, UPLO, "linalg.eigvalsh")[0]


def _eig_arrays(A, op):
    arr = A._array
    if _dt.kind(arr.dtype) not in "fc":
        raise RuntimeError("Unknown Complex ScalarType for %s" % _tname(arr.dtype))
    _square_check(op, arr, "linalg_eig_out_cpu", False)
    xp = xp_of(A)
    bad = None
    if arr.size and not bool(xp.isfinite(arr).all()):
        if op == "linalg.eig":
            raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
        # (eigvals: LAPACK's values for a non-finite matrix are artefacts; NaN here)
        bad = ~xp.isfinite(arr).all(axis=(-2, -1))
        arr = xp.where(bad[..., None, None], 0, arr)
    cd = np.result_type(arr.dtype, np.complex64)
    if arr.size == 0:
        return (xp.zeros(arr.shape[:-1], dtype=cd), xp.zeros(arr.shape, dtype=cd))
    sl = backend_of(arr).scipy("linalg")
    if arr.dtype.char in "fF" and hasattr(sl, "eig"):
        # (single precision: LAPACK's sgeev/cgeev, as torch; NumPy's eig runs in double, whose
        # eigenvalues can come in another order)
        w, v = _per_matrix(arr, sl.eig)
    else:
        w, v = (xp.asarray(r) for r in xp.linalg.eig(arr))
    return _nan_where(bad, w.astype(cd)), _nan_where(bad, v.astype(cd))


class LinalgEig(Function):
    node_name = "LinalgEigBackward0"

    @staticmethod
    def forward(ctx, a, op):
        w, v = _eig_arrays(a, op)
        ctx.set_materialize_grads(False)
        ctx.real = a._array.dtype.kind != "c"
        L, V = _w(w), _w(v)
        ctx.save_for_backward(L, V)
        return L, V

    @staticmethod
    def backward(ctx, gL, gV):
        L, V = ctx.saved_tensors
        gA = _eig_backward(gL, gV, L, V, False)
        return (gA.real if ctx.real and gA is not None else gA), None


def linalg_eig(A, *, out=None):
    """Eigenvalues and eigenvectors of a general square matrix (complex results)."""
    return _rt.linalg_eig(*LinalgEig.apply(A, "linalg.eig"))


def linalg_eigvals(A, *, out=None):
    """Eigenvalues of a general square matrix (complex results)."""
    return LinalgEig.apply(A, "linalg.eigvals")[0]


def linalg_qr(A, mode="reduced", *, out=None):
    """``(Q, R)``: ``A = QR``; ``mode`` is ``"reduced"``, ``"complete"`` or ``"r"``."""
    return _rt.linalg_qr(*LinalgQr.apply(A, mode))


def qr(input, some=True, *, out=None):
    """``torch.qr``: ``(Q, R)``, reduced unless ``some=False`` (deprecated, as in torch)."""
    _warn_once("qr", "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a "
               "future PyTorch release.\nThe boolean parameter 'some' has been replaced with a "
               "string parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\nQ, "
               "R = torch.linalg.qr(A, 'reduced' if some else 'complete')")
    return _rt.qr(*LinalgQr.apply(input, "reduced" if some else "complete"))


def linalg_lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """``(LU, pivots, info)``: the packed LU factorisation with partial pivoting."""
    return _rt.linalg_lu_factor_ex(*LinalgLuFactorEx.apply(A, pivot, check_errors,
                                                           "linalg.lu_factor_ex"))


def linalg_lu_factor(A, *, pivot=True, out=None):
    """``(LU, pivots)``: the packed LU factorisation (raises when ``U`` is singular)."""
    LU, piv, _ = LinalgLuFactorEx.apply(A, pivot, True, "torch.linalg.lu_factor")
    return _rt.linalg_lu_factor(LU, piv)


def linalg_lu(A, *, pivot=True, out=None):
    """``(P, L, U)`` with ``A = P L U``."""
    return _rt.linalg_lu(*LinalgLu.apply(A, pivot))


def lu(A, pivot=True, get_infos=False, out=None):
    """``torch.lu``: ``(LU, pivots)`` (and ``infos`` when ``get_infos``; deprecated, as in torch).
    A singular ``A`` does not raise: torch's ``_lu_with_info`` ignores ``check_errors``."""
    _warn_once("lu", "torch.lu is deprecated in favor of torch.linalg.lu_factor / "
               "torch.linalg.lu_factor_ex and will be removed in a future PyTorch release.\nLU, "
               "pivots = torch.lu(A, compute_pivots)\nshould be replaced with\nLU, pivots = "
               "torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = torch.lu(A, "
               "compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
               "torch.linalg.lu_factor_ex(A, compute_pivots)")
    LU, piv, info = LinalgLuFactorEx.apply(A, pivot, False, "torch.linalg.lu_factor")
    return (LU, piv, info) if get_infos else (LU, piv)


class LuUnpack(Function):
    node_name = "LuUnpackBackward0"

    @staticmethod
    def forward(ctx, LU, pivots, unpack_data, unpack_pivots):
        lu = LU._array
        xp = xp_of(LU)
        m, n = lu.shape[-2:]
        k = min(m, n)
        empty = xp.zeros((0,), dtype=lu.dtype)
        L = U = P = empty
        if unpack_data:
            L = xp.tril(lu[..., :, :k], -1) + xp.eye(m, k, dtype=lu.dtype)
            U = xp.triu(lu[..., :k, :])
        if unpack_pivots:
            P = _perm_matrix(_perm_arrays(pivots._array, m), lu.dtype)
        ctx.set_materialize_grads(False)
        ctx.mark_edges(0)
        ctx.shape = (m, n)
        P = _w(P)
        ctx.mark_non_differentiable(P)
        return P, _w(L), _w(U)

    @staticmethod
    def backward(ctx, gP, gL, gU):
        from .creation import zeros
        from .shape import cat
        m, n = ctx.shape
        k = min(m, n)
        # NOTE: the empty 1-D L and U of unpack_data=False reach torch's triu/tril and fail there.
        for name, gr in (("triu", gU), ("tril", gL)):
            if gr is not None and gr.ndim < 2:
                raise RuntimeError("%s: input tensor must have at least 2 dimensions" % name)
        g = None
        if gL is not None and gL.shape[-1] == k:
            g = gL.tril(-1)
            if n > k:
                g = cat([g, zeros(tuple(g.shape[:-1]) + (n - k,), dtype=g.dtype,
                                  device=g.device)], -1)
        if gU is not None and gU.shape[-2] == k:
            gu = gU.triu()
            if m > k:
                gu = cat([gu, zeros(tuple(gu.shape[:-2]) + (m - k, n), dtype=gu.dtype,
                                    device=gu.device)], -2)
            g = gu if g is None else g + gu
        return g, None, None, None


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """``(P, L, U)`` from a packed LU factorisation and its pivots."""
    if unpack_pivots and LU_pivots._array.dtype != np.int32:    # (only read when unpacked)
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used with "
                           "the output produced by torch.linalg.lu_factor")
    return _rt.lu_unpack(*LuUnpack.apply(LU_data, LU_pivots, unpack_data, unpack_pivots))


def _lu_solve_arrays(lu, piv, b, left, adjoint):
    """``op(A)^{-1} B`` (``B op(A)^{-1}`` when not ``left``) on arrays, ``A = P L U``."""
    xp = get_array_module(lu)
    m = lu.shape[-1]
    P = _perm_matrix(_perm_arrays(piv, m), lu.dtype)
    L = xp.tril(lu, -1) + xp.eye(m, dtype=lu.dtype)
    U = xp.triu(lu)
    if left and not adjoint:
        return _tri_solve(U, _tri_solve(L, P.mT @ b, False, True, True), True, True, False)
    if left:
        y = _tri_solve(U.mT.conj(), b, False, True, False)
        return P @ _tri_solve(L.mT.conj(), y, True, True, True)
    if not adjoint:
        y = _tri_solve(U, b, True, False, False)
        return _tri_solve(L, y, False, False, True) @ P.mT
    y = _tri_solve(L.mT.conj(), b @ P, True, False, True)
    return _tri_solve(U.mT.conj(), y, False, False, False)


class LinalgLuSolve(Function):
    node_name = "LinalgLuSolveBackward0"

    @staticmethod
    def forward(ctx, LU, pivots, B, left, adjoint):
        op = "torch.linalg.lu_solve"
        lu, pv, b = LU._array, pivots._array, B._array
        _float_or_complex(op, lu)
        if lu.dtype != b.dtype:
            raise RuntimeError("linalg.lu_solve: Expected LU and B to have the same dtype, but "
                               "found LU of type %s and B of type %s instead"
                               % (_tname(lu.dtype), _tname(b.dtype)))
        if pv.dtype != np.int32:
            raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type "
                               "torch.int32")
        _square_shape(op, lu)
        if b.ndim < 2:
            raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 "
                               "dimensions.")
        if (b.shape[-2] if left else b.shape[-1]) != lu.shape[-1]:
            raise RuntimeError("linalg.lu_solve: Incompatible shapes of A and B for the equation "
                               "%s (%s and %s)" % ("AX = B" if left else "XA = B",
                                                   _shape_str(lu.shape[-2:]),
                                                   _shape_str(b.shape[-2:])))
        if pv.shape[-1:] != lu.shape[-1:]:
            raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as "
                               "the dimension of the matrix")
        if pv.shape != lu.shape[:-1]:
            raise RuntimeError("linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be "
                               "the same, but got pivots with shape [%s] instead"
                               % ", ".join(str(d) for d in pv.shape))
        xp = xp_of(LU)
        batch = _bcast(lu.shape[:-2], b.shape[:-2])
        lu = xp.broadcast_to(lu, batch + lu.shape[-2:])
        pv = xp.broadcast_to(pv, batch + pv.shape[-1:])
        b = xp.broadcast_to(b, batch + b.shape[-2:])
        if b.size == 0:
            x = xp.zeros(b.shape, dtype=b.dtype)
        else:
            _lapack_dtype(lu, None, "linalg.lu_solve_cpu")
            x = _lu_solve_arrays(lu, pv, b, left, adjoint).astype(b.dtype, copy=False)
        ctx.left, ctx.adjoint = left, adjoint
        ctx.mark_edges(0, 2)
        X = _w(x)
        ctx.save_for_backward(LU, pivots, X)
        return X

    @staticmethod
    def backward(ctx, gX):
        LU, pivots, X = ctx.saved_tensors
        left, adjoint = ctx.left, ctx.adjoint
        gLU = gB = None
        if ctx.needs_input_grad[2]:
            gB = sum_to(LinalgLuSolve.apply(LU, pivots, gX, left, not adjoint),
                        ctx._input_meta(2)[0])
        if ctx.needs_input_grad[0]:
            P, L, U = lu_unpack(LU, pivots)
            if left != adjoint:
                gR = -matmul(gX if left else gX.mH, X.mH if left else X)
                gR = _solve_tri(U.mH, gR, False, True, False)
                gL = _solve_tri(L.mH, matmul(gR, U.mH), True, True, True).tril(-1)
                gLU = gL + gR.triu()
            else:
                gR = -matmul(matmul(matmul(P.mT, X if left else X.mH),
                                    gX.mH if left else gX), P)
                gR = _solve_tri(L.mH, gR, True, False, True)
                gU = _solve_tri(U.mH, matmul(L.mH, gR), False, False, False).triu()
                gLU = gR.tril(-1) + gU
            gLU = sum_to(gLU, ctx._input_meta(0)[0])
        return gLU, None, gB, None, None


def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """Solve ``A X = B`` (``X A = B`` when not ``left``; ``A^H`` when ``adjoint``) from
    ``lu_factor``'s output."""
    return LinalgLuSolve.apply(LU, pivots, B, left, adjoint)


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """``torch.lu_solve``: solve ``A X = b`` from ``torch.lu``'s output."""
    _warn_once("lu_solve", "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand "
               "will be removed in a future PyTorch release.\nNote that torch.linalg.lu_solve "
               "has its arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be "
               "replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)")
    return linalg_lu_solve(LU_data, LU_pivots, b)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """``torch.triangular_solve``: ``(solution, cloned_coefficient)`` of ``op(A) X = b``."""
    return _rt.triangular_solve(*TriangularSolve.apply(b, A, upper, transpose, unitriangular))


def linalg_slogdet(A, *, out=None):
    """``(sign, logabsdet)``: the sign and log-absolute value of the determinant."""
    return _rt.linalg_slogdet(*LinalgSlogdet.apply(A, "linalg.slogdet"))


def slogdet(input, *, out=None):
    """``torch.slogdet``: ``(sign, logabsdet)``."""
    return _rt.slogdet(*LinalgSlogdet.apply(input, "linalg.slogdet"))


def logdet(input):
    """The log of the determinant (nan when it is negative)."""
    from .comparison import where
    sign, logabs = LinalgSlogdet.apply(input, "logdet")
    if input._array.dtype.kind == "c":
        return sign.log() + logabs
    return where(sign == -1, float("nan"), logabs)


def linalg_pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The Moore-Penrose pseudo-inverse; singular values below ``max(atol, rtol * s_max)`` are
    treated as zero. Tensor tolerances broadcast against ``A``'s batch shape."""
    return _pinv(A, rcond, hermitian, atol, rtol, _autocast.inputs("lower", (A,))[0]._array.dtype)


def _pinv(A, rcond, hermitian, atol, rtol, lower):
    arr = A._array
    if arr.ndim < 2 or arr.dtype.char not in "fdFD":
        raise RuntimeError("linalg.pinv(%s{[%s]}): expected a tensor with 2 or more "
                           "dimensions of float, double, cfloat or cdouble types"
                           % (_tname(arr.dtype), ", ".join(str(d) for d in arr.shape)))
    if rcond is not None:
        if isinstance(rcond, Tensor) and rcond._array.dtype.kind == "c":
            raise RuntimeError("torch.linalg.pinv: rcond tensor of complex type is not "
                               "supported. Got %s" % _tname(rcond._array.dtype))
        atol, rtol = 0.0, rcond
    if is_grad_enabled():
        for name, v in (("atol", atol), ("rtol", rtol)):
            if isinstance(v, Tensor) and v.requires_grad:
                raise RuntimeError("The function 'linalg_pinv' is not differentiable with "
                                   "respect to argument '%s'. This input cannot have "
                                   "requires_grad True." % name)
    atol_a, rtol_a = _atol_rtol(arr, atol, rtol, "torch.linalg.pinv")
    return LinalgPinv.apply(A, atol_a, rtol_a, hermitian, None if lower == arr.dtype else lower)


def pinverse(input, rcond=1e-15):
    """``torch.pinverse``: the pseudo-inverse with relative cut-off ``rcond``."""
    input, = _autocast.inputs("fp32", (input,))     # (all in float32 under autocast)
    return _pinv(input, rcond, False, None, None, input._array.dtype)


def _resized(result_shape, shape):
    """torch's warning when an allocated result is resized to a broadcast shape."""
    if tuple(result_shape) != tuple(shape) and math.prod(result_shape) > 0:
        import warnings
        from ._out import _RESIZE_MSG
        warnings.warn(_RESIZE_MSG % (list(result_shape), list(shape)), UserWarning, stacklevel=3)


def linalg_matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The number of singular values above ``max(atol, rtol * s_max)`` (int64). Tensor
    tolerances broadcast against ``A``'s batch shape."""
    arr = A._array
    if arr.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at "
                           "least 2 dimensions.")
    if tol is not None:
        zero = tol._array.dtype if isinstance(tol, Tensor) else np.float64
        atol, rtol = tol, _w(xp_of(A).zeros((), dtype=zero))
    atol_a, rtol_a = _atol_rtol(arr, atol, rtol, "torch.linalg.matrix_rank")
    xp = xp_of(A)
    if arr.size == 0:
        return _w(xp.zeros(arr.shape[:-2], dtype=np.int64))
    if hermitian:
        s = xp.abs(linalg_eigvalsh(A.detach())._array)
        s_max = s.max(-1, keepdims=True)
    else:
        s = _svdvals(A.detach())._array
        s_max = s[..., :1]
    tol_a = _tolerance(atol_a, rtol_a, s_max)
    _bcast(s.shape, tol_a.shape)
    rank = (s > tol_a).sum(-1).astype(np.int64)
    _resized(arr.shape[:-2], rank.shape)
    return _w(rank)


def matrix_power(input, n, *, _name="matrix_power"):
    """``input`` multiplied by itself ``n`` times (the inverse's power when ``n < 0``)."""
    from .conversion import clone
    from .shape import broadcast_to
    _check_arg(_name, "n", n, 2, (int, np.integer), "int")
    arr = input._array
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they "
                           "are %s matrices" % (" by ".join(str(d) for d in arr.shape[-2:])
                                                if arr.ndim >= 2 else "1-D"))
    if n == 0:
        result = clone(input)
        return result.copy_(broadcast_to(_square_eye(input), input.shape))
    a = _inv(input) if n < 0 else input
    n = abs(n)
    if n == 1:
        return clone(a)
    if n == 2:
        return matmul(a, a)
    if n == 3:
        return matmul(matmul(a, a), a)
    z = result = None
    while n > 0:
        bit = n % 2
        n //= 2
        z = a if z is None else matmul(z, z)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


def matrix_exp(A):
    """The matrix exponential ``sum_k A^k / k!``."""
    return LinalgMatrixExp.apply(A)


def linalg_cross(input, other, *, dim=-1, out=None):
    """The cross product of 3-vectors along ``dim`` (broadcasting)."""
    n = max(input._array.ndim, other._array.ndim)
    d = wrap_dim(dim, n, "linalg.cross")
    sa = input.shape[d - n + input._array.ndim] if d - n + input._array.ndim >= 0 else 1
    sb = other.shape[d - n + other._array.ndim] if d - n + other._array.ndim >= 0 else 1
    if input._array.ndim != other._array.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if sa != 3 or sb != 3:
        raise RuntimeError("linalg.cross: inputs dimension %d must have length 3. Got %d and %d"
                           % (dim, sa, sb))
    if input._array.dtype == np.bool_:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    if input._array.dtype != other._array.dtype:
        raise RuntimeError("expected scalar type %s but found %s"
                           % (_tname(input._array.dtype), _tname(other._array.dtype)))
    return LinalgCross.apply(input, other, d - n)


def cross(input, other, dim=None, *, out=None):
    """``torch.cross``: the cross product along ``dim`` (the first size-3 dim when None)."""
    if dim is None:
        import warnings
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                      "Please either pass the dim explicitly or simply use torch.linalg.cross.\n"
                      "The default value of dim will change to agree with that of "
                      "linalg.cross in a future release.")
        shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim)


def vecdot(x, y, *, dim=-1, out=None):
    """The dot product of vectors along ``dim`` (broadcasting)."""
    from .reduction import sum as _sum
    x, y = _autocast.inputs("lower", (x, y))
    if x._array.dtype != y._array.dtype:
        raise RuntimeError("linalg.vecdot: Expected x and y to have the same dtype, but found x "
                           "of type %s and y of type %s instead" % (_tname(x._array.dtype),
                                                                    _tname(y._array.dtype)))
    _float_or_complex("linalg.vecdot", x._array)
    if x._array.ndim == 1 and y._array.ndim == 1:
        return vdot(x, y)      # (torch's 1-D path: no broadcasting, dim unchecked)
    return _sum(x.conj() * y, dim)


def _hh_arrays(a, tau, ncols):
    """``H_1 ... H_k`` applied to the first ``ncols`` columns of the identity (arrays)."""
    xp = get_array_module(a)
    m, k = a.shape[-2], tau.shape[-1]
    v_all = xp.tril(a[..., :, :k], -1) + xp.eye(m, k, dtype=a.dtype)
    q = xp.broadcast_to(xp.eye(m, ncols, dtype=a.dtype), a.shape[:-2] + (m, ncols))
    for i in range(k - 1, -1, -1):
        v = v_all[..., :, i:i + 1]
        q = q - tau[..., i:i + 1, None] * (v @ (xp.conj(xp.swapaxes(v, -1, -2)) @ q))
    return q


def _orgqr(a, tau):
    """LAPACK's ``?orgqr``/``?ungqr`` on each matrix (the same non-finite propagation as torch)."""
    if a.size == 0 or tau.shape[-1] == 0:
        return _hh_arrays(a, tau, a.shape[-1])
    xp = get_array_module(a)
    orgqr_ = _lapack(a, "ungqr" if a.dtype.kind == "c" else "orgqr")
    batch = a.shape[:-2]
    af, tf = a.reshape((-1,) + a.shape[-2:]), tau.reshape((-1, tau.shape[-1]))
    with errstate(invalid="ignore", over="ignore"):
        outs = [xp.asarray(orgqr_(af[i], tf[i])[0]) for i in range(af.shape[0])]
    return xp.stack(outs).reshape(batch + a.shape[-2:]).astype(a.dtype)


def _hh_vjp(A, tau, gQ, ncols):
    """The gradients of ``A`` and ``tau`` for ``Q = H_1 ... H_k I[:, :ncols]`` (Tensor ops)."""
    from .creation import zeros
    from .shape import cat
    m, n, k = A.shape[-2], A.shape[-1], tau.shape[-1]
    V = A[..., :, :k].tril(-1) + _eye_like(A._array, m, k)
    Q = _eye_like(A._array, m, ncols)
    inputs = []
    for i in range(k - 1, -1, -1):
        inputs.append(Q)
        v, t = V[..., :, i:i + 1], tau[..., i:i + 1].unsqueeze(-1)
        Q = Q - t * matmul(v, matmul(v.mH, Q))
    g = gQ
    gv, gt = [], []
    for i in range(k):
        Qi = inputs[k - 1 - i]
        v, t = V[..., :, i:i + 1], tau[..., i:i + 1].unsqueeze(-1)
        wH = matmul(Qi.mH, v)
        gHv = matmul(g.mH, v)
        gt.append(-matmul(matmul(v.mH, g), wH).squeeze(-1))
        gv.append(-t.conj() * matmul(g, wH) - t * matmul(Qi, gHv))
        g = g - t.conj() * matmul(v, gHv.mH)
    gA = cat(gv, -1).tril(-1) if k else None
    if k < n:
        pad = zeros(tuple(A.shape[:-1]) + (n - k,), dtype=A.dtype, device=A.device)
        gA = pad if gA is None else cat([gA, pad], -1)
    gtau = cat(gt, -1) if k else zeros(tuple(tau.shape), dtype=tau.dtype, device=tau.device)
    return gA, gtau


def _hh_reflect(K, v_full, t, j, left, narrow):
    """``(I - t v v^H) K`` (``left``) or ``K (I - t v v^H)``: torch's
    apply_simple_transformation; ``narrow`` (its in-place first-order form) touches only rows
    (columns) ``j:`` of ``K``, where ``v`` is nonzero."""
    from .shape import cat
    m = K.shape[-1]
    tt = t.unsqueeze(-1)
    if not narrow:
        if left:
            return K - (tt * v_full) * matmul(v_full.mH, K)
        return K - matmul(K, tt * v_full) * v_full.mH
    v = v_full[..., j:, :]
    if left:
        low = K[..., j:, :]
        return cat([K[..., :j, :], low - (tt * v) * matmul(v.mH, low)], -2) if j else \
            low - (tt * v) * matmul(v.mH, low)
    right = K[..., :, j:m]
    right = right - matmul(right, tt * v) * v.mH
    return cat([K[..., :, :j], right], -1) if j else right


def _hh_backward(grad, result, input_, tau):
    """torch's householder_product_backward (flip_order false): the gradients of ``input``
    and ``tau`` through ``K = result grad^H`` updated by one reflector at a time."""
    from .creation import zeros
    from .shape import cat, stack
    m, n, k = input_.shape[-2], input_.shape[-1], tau.shape[-1]
    narrow = not is_grad_enabled()     # (torch's in-place K updates of a first-order backward)
    inp = input_.tril(-1) + _eye_like(input_._array, m, n)
    cols = inp[..., :, :k]
    sigma = tau / (tau * (cols * cols.conj()).sum(-2) - 1.0)
    K = matmul(result, grad.mH)
    K = _hh_reflect(K, inp[..., :, 0:1], sigma[..., 0:1], 0, True, narrow)
    v_grads, t_grads = [], []
    for i in range(k):
        v_i, t_i = inp[..., :, i:i + 1], tau[..., i:i + 1]
        v = v_i[..., i:, :]
        vHK = matmul(v.mH, K[..., i:, :])
        Kv = matmul(K[..., :, i:], v)
        tt = t_i.unsqueeze(-1)
        v_grads.append((-tt * vHK).conj().squeeze(-2) - (tt * Kv).squeeze(-1))
        t_grads.append(-(matmul(vHK[..., :, i:], v)).conj().squeeze(-1).squeeze(-1))
        if i != k - 1:
            K = _hh_reflect(K, inp[..., :, i + 1:i + 2], sigma[..., i + 1:i + 2], i + 1, True,
                            narrow)
            K = _hh_reflect(K, v_i, t_i, i, False, narrow)
    gA = stack(v_grads, -1)
    if k < n:
        pad = zeros(tuple(input_.shape[:-1]) + (n - k,), dtype=input_.dtype,
                    device=input_.device)
        gA = cat([gA, pad], -1)
    return gA.tril(-1), stack(t_grads, -1)


def _colmajor(arr):
    """``arr`` with each matrix stored column by column (LAPACK's layout, as torch returns)."""
    xp = get_array_module(arr)
    if arr.ndim < 2:
        return arr
    return xp.swapaxes(xp.ascontiguousarray(xp.swapaxes(arr, -1, -2)), -1, -2)


class LinalgHouseholderProduct(Function):
    node_name = "LinalgHouseholderProductBackward0"

    @staticmethod
    def forward(ctx, a, tau):
        out = _w(_colmajor(_orgqr(a._array, tau._array)))
        ctx.save_for_backward(a, tau, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        a, tau, out = ctx.saved_tensors
        if a.numel() == 0 or tau.numel() == 0:
            return None, None           # (torch leaves both undefined)
        return _hh_backward(grad_output, out, a, tau)


def _hh_checks(op, A, tau, what):
    aa, ta = A._array, tau._array
    if aa.ndim - ta.ndim != 1:
        raise RuntimeError("%s: Expected tau to have one dimension less than input, but got "
                           "tau.ndim equal to %d and input.ndim is equal to %d"
                           % (op, ta.ndim, aa.ndim))
    if aa.ndim > 2 and ta.shape[:-1] != aa.shape[:-2]:
        raise RuntimeError("%s: Expected batch dimensions of %s to be equal to input.shape[:-2], "
                           "but got [%s]" % (op, what, ", ".join(str(d) for d in ta.shape[:-1])))


def householder_product(A, tau, *, out=None):
    """The first ``n`` columns of the product of Householder reflectors ``H_1 ... H_k``."""
    op = "torch.linalg.householder_product"
    if A._array.ndim < 2:
        raise RuntimeError("%s: input must have at least 2 dimensions." % op)
    m, n = A.shape[-2:]
    if m < n:
        raise RuntimeError("%s: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]" % op)
    if n < tau.shape[-1]:
        raise RuntimeError("%s: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]" % op)
    _hh_checks(op, A, tau, "tau")
    if tau._array.dtype != A._array.dtype:
        raise RuntimeError("%s: tau dtype %s does not match input dtype %s"
                           % (op, _tname(tau._array.dtype), _tname(A._array.dtype)))
    _lapack_dtype(A._array, None, "orgqr_cpu")
    return LinalgHouseholderProduct.apply(A, tau)


orgqr = householder_product


class Ormqr(Function):
    node_name = "OrmqrBackward0"

    @staticmethod
    def forward(ctx, a, tau, c, left, transpose):
        aa, ca = a._array, c._array
        xp = get_array_module(aa)
        q = _hh_arrays(aa, tau._array, aa.shape[-2])
        if transpose:
            q = xp.conj(xp.swapaxes(q, -1, -2))
        ctx.left, ctx.transpose = left, transpose
        ctx.save_for_backward(a, tau, c)
        return _w(_colmajor(q @ ca if left else ca @ q))

    @staticmethod
    def backward(ctx, grad_output):
        a, tau, c = ctx.saved_tensors
        left, transpose = ctx.left, ctx.transpose
        g = grad_output
        ga = gt = gc = None
        if ctx.needs_input_grad[2]:
            Q = LinalgHouseholderProduct.apply(Ormqr._square(a, tau), tau)
            Qop = Q.mH if transpose else Q
            gc = matmul(Qop.mH, g) if left else matmul(g, Qop.mH)
        # NOTE: torch leaves the reflectors' gradients undefined for empty inputs.
        if (ctx.needs_input_grad[0] or ctx.needs_input_grad[1]) and a.numel() and tau.numel():
            gQop = matmul(g, c.mH) if left else matmul(c.mH, g)
            gQ = gQop.mH if transpose else gQop
            ga, gt = _hh_vjp(a, tau, gQ, a.shape[-2])
        return ga, gt, gc, None, None

    @staticmethod
    def _square(a, tau):
        """The first ``max(k, ...)`` columns of ``a`` padded to a square ``m x m`` reflector
        matrix (its columns past ``k`` are never read)."""
        from .creation import zeros
        from .shape import cat
        m, n = a.shape[-2:]
        if n >= m:
            return a[..., :, :m]
        return cat([a, zeros(tuple(a.shape[:-1]) + (m - n,), dtype=a.dtype,
                             device=a.device)], -1)


def geqrf(input, *, out=None):
    """``(a, tau)``: LAPACK's packed QR factorisation (not differentiable, as torch's)."""
    arr = input._array
    _matrix_check("geqrf", arr, "geqrf_cpu", False)
    if arr.dtype.kind == "c" and input.requires_grad and is_grad_enabled():
        raise RuntimeError("geqrf does not support automatic differentiation for outputs with "
                           "complex dtype.")
    xp = xp_of(input)

    def run():
        m, n = arr.shape[-2:]
        if arr.size == 0:
            return _w(arr.copy()), _w(xp.zeros(arr.shape[:-2] + (min(m, n),), arr.dtype))
        geqrf_ = _lapack(arr, "geqrf")
        qr_, tau = _per_matrix(arr, lambda a: geqrf_(a)[:2])
        return _w(qr_.astype(arr.dtype)), _w(tau.astype(arr.dtype))
    return _rt.geqrf(*_NoDerivative.apply(input, run, "geqrf"))


def ormqr(input, input2, input3, left=True, transpose=False, *, out=None):
    """``Q @ input3`` (or ``input3 @ Q``, ``Q^H``) with ``Q`` given by Householder reflectors."""
    op = "torch.ormqr"
    A, tau, C = input, input2, input3
    aa, ta, ca = A._array, tau._array, C._array
    if aa.ndim < 2:
        raise RuntimeError("%s: input must have at least 2 dimensions." % op)
    if ca.ndim < 2:
        raise RuntimeError("%s: other must have at least 2 dimensions." % op)
    d = -2 if left else -1
    if ca.shape[d] != aa.shape[-2]:
        raise RuntimeError("%s: other.shape[%d] must be equal to input.shape[-2]" % (op, d))
    if ta.shape[-1] != min(ca.shape[d], aa.shape[-1]):
        raise RuntimeError("%s: tau.shape[-1] must be equal to min(other.shape[%d], "
                           "input.shape[-1])" % (op, d))
    _hh_checks(op, A, tau, "tau")
    if ca.ndim != aa.ndim:
        raise RuntimeError("%s: Expected other to have the same number of dimensions as input, "
                           "but got other.ndim equal to %d and input.ndim is equal to %d"
                           % (op, ca.ndim, aa.ndim))
    if aa.ndim > 2 and ca.shape[:-2] != aa.shape[:-2]:
        raise RuntimeError("%s: Expected batch dimensions of other to be equal to "
                           "input.shape[:-2], but got [%s]"
                           % (op, ", ".join(str(x) for x in ca.shape[:-2])))
    for name, t in (("tau", ta), ("other", ca)):
        if t.dtype != aa.dtype:
            raise RuntimeError("%s: Expected input and %s to have the same dtype, but input has "
                               "dtype%s and %s has dtype %s" % (op, name, _tname(aa.dtype), name,
                                                                _tname(t.dtype)))
    _lapack_dtype(aa, None, "ormqr_cpu")
    return Ormqr.apply(A, tau, C, left, transpose)


def _ldl_arrays(arr, hermitian):
    xp = get_array_module(arr)
    if arr.size == 0:
        n = arr.shape[-1]
        return (arr.copy(), xp.zeros(arr.shape[:-2] + (n,), dtype=np.int32),
                xp.zeros(arr.shape[:-2], dtype=np.int32))
    sytrf = _lapack(arr, "hetrf" if hermitian and arr.dtype.kind == "c" else "sytrf")
    ld, piv, info = _per_matrix(arr, lambda a: sytrf(a, lower=1))
    return xp.tril(ld).astype(arr.dtype), piv.astype(np.int32), info.astype(np.int32)


def linalg_ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """``(LD, pivots, info)``: the Bunch-Kaufman LDL^T factorisation (LAPACK's sytrf)."""
    _square_check("torch.linalg.ldl_factor_ex", A._array, "ldl_factor_kernel_cpu")

    def run():
        ld, piv, info = _ldl_arrays(A._array, hermitian)
        if check_errors:
            _raise_info("torch.linalg.ldl_factor_ex", info,
                        lambda i: "Unknown error code: %d." % i)
        return _w(ld), _w(piv), _w(info)
    return _rt.linalg_ldl_factor_ex(*_NoGrad.apply(A, run, "aten::linalg_ldl_factor_ex"))


def linalg_ldl_factor(A, *, hermitian=False, out=None):
    """``(LD, pivots)``: the LDL^T factorisation of a symmetric matrix."""
    LD, piv, info = linalg_ldl_factor_ex(A, hermitian=hermitian)
    _raise_info("torch.linalg.ldl_factor", info._array, lambda i: "Unknown error code: %d." % i)
    return _rt.linalg_ldl_factor(LD, piv)


def linalg_ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """Solve ``A X = B`` from ``ldl_factor``'s output (not differentiable, as torch's)."""
    op = "torch.linalg.ldl_solve"
    xp = xp_of(LD)
    ld, pv, b = LD._array, pivots._array, B._array
    _square_shape(op, ld)
    _float_or_complex(op, ld)
    if b.ndim < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got "
                         "-2)")
    if pv.shape != ld.shape[:-1]:
        raise RuntimeError("%s: Expected LD.shape[:-1] and pivots.shape to be the same, but got "
                           "pivots with shape [%s] instead"
                           % (op, ", ".join(str(d) for d in pv.shape)))
    if b.shape[-2] != ld.shape[-1]:
        raise RuntimeError("Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix "
                           "is %d by %d but each b matrix is %d by %d"
                           % (ld.shape[-2], ld.shape[-1], b.shape[-2], b.shape[-1]))
    if b.dtype != ld.dtype:
        raise RuntimeError("Expected b and A to have the same dtype, but found b of type %s and "
                           "A of type %s instead." % (_tname(b.dtype), _tname(ld.dtype)))
    if ld.size:
        _lapack_dtype(ld, None, "ldl_solve_kernel_cpu")
    batch = _bcast(ld.shape[:-2], b.shape[:-2])
    ld = xp.broadcast_to(ld, batch + ld.shape[-2:])
    pv = xp.broadcast_to(pv, batch + pv.shape[-1:]).astype(np.int32)
    b = xp.broadcast_to(b, batch + b.shape[-2:])

    def run():
        if b.size == 0:
            return _w(b.copy())
        sytrs = _lapack(ld, "hetrs" if hermitian and ld.dtype.kind == "c" else "sytrs")
        nb = int(math.prod(batch)) if batch else 1
        ldf, pvf = ld.reshape((nb,) + ld.shape[-2:]), pv.reshape((nb, -1))
        bf = b.reshape((nb,) + b.shape[-2:])
        outs = [xp.asarray(sytrs(ldf[i], pvf[i], bf[i], lower=1)[0]) for i in range(nb)]
        return _w(xp.stack(outs).reshape(b.shape).astype(b.dtype))
    return _NoGradB.apply(LD, B, run, "linalg_ldl_solve")


class _NoGradB(Function):
    """``_NoGrad`` for ops of two tensors."""

    node_name = "NotImplemented"

    @staticmethod
    def forward(ctx, a, b, fn, aten):
        ctx.aten = aten
        return fn()

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("the derivative for '%s' is not implemented." % ctx.aten)


def tensorinv(A, ind=2, *, out=None):
    """The inverse of ``A`` seen as a linear map from its first ``ind`` dims to the rest."""
    from .shape import reshape
    if ind <= 0:
        raise RuntimeError("Expected a strictly positive integer for 'ind', but got %d" % ind)
    shape = tuple(A.shape)
    rows, cols = int(math.prod(shape[:ind])), int(math.prod(shape[ind:]))
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           "prod(self.shape[:ind]), but got %d != %d" % (cols, rows))
    return reshape(_inv(reshape(A, (rows, cols))), shape[ind:] + shape[:ind])


def tensorsolve(A, B, dims=None, *, out=None):
    """The ``X`` with ``tensordot(A, X, X.ndim) == B``."""
    from .shape import movedim, reshape
    if dims is not None:
        nd = A._array.ndim
        dims = [wrap_dim(d, nd, "linalg.tensorsolve") for d in dims]
        A = movedim(A, dims, list(range(nd - len(dims), nd)))
    rest = tuple(A.shape[B._array.ndim:])
    rows, cols = int(math.prod(B.shape)), int(math.prod(rest))
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:"
                           "]) == prod(self.shape[:other.ndim]), but got %d != %d" % (cols, rows))
    x = solve(reshape(A, (rows, cols)), reshape(B, (rows,)))
    return reshape(x, rest)


def linalg_vander(x, *, N=None):
    """The Vandermonde matrix ``x[..., i] ** j`` for ``j < N`` (increasing powers)."""
    from .reduction import cumprod
    from .shape import cat
    if x._array.dtype.char not in "fdFD" and x._array.dtype.kind not in "iu":
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, "
                           "but got %s" % _tname(x._array.dtype))
    x = x.unsqueeze(-1) if x._array.ndim == 0 else x
    shape = tuple(x.shape)
    n = shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = cumprod(x.unsqueeze(-1).expand(shape + (n - 1,)), -1)
    ones = powers.new_ones(shape + (1,))
    return cat([ones, powers], -1)


def vander(x, N=None, increasing=False):
    """``torch.vander``: powers of the 1-D ``x`` (decreasing unless ``increasing``)."""
    from .creation import empty
    from .reduction import cumprod
    from .shape import flip
    if x._array.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dt = np.dtype(np.int64) if x._array.dtype.kind in "biu" else x._array.dtype
    v = empty((x.shape[0], n), dtype=_dt.from_numpy_dtype(dt), device=x.device)
    # NOTE: built in place as torch builds it, so its backward fails as torch's does (cumprod's
    # saved input is overwritten by the second copy_).
    if n > 0:
        v.select(1, 0).fill_(1)
        if n > 1:
            v[:, 1:].copy_(x.unsqueeze(1))
            v[:, 1:].copy_(cumprod(v[:, 1:], 1))
    return v if increasing else flip(v, (1,))


def _ord_str(p):
    if isinstance(p, float) and p.is_integer():
        return str(int(p))
    return str(p)


def _cond_helper(A, p):
    """``norm(A) * norm(inv(A))``, infinite for a singular ``A`` (torch's cond helper)."""
    inverse, info = inv_ex(A)
    # NOTE: in place as torch's helper, so the backward through inv_ex fails as torch's does.
    inverse.masked_fill_(info.unsqueeze(-1).unsqueeze(-1) > 0, float("inf"))
    with errstate(invalid="ignore"):
        res = matrix_norm(A, p) * matrix_norm(inverse, p)
    return res.nan_to_num(float("inf"), float("inf"), -float("inf"))


def cond(A, p=None, *, out=None):
    """The condition number of ``A`` in the ``p`` norm (2-norm when None)."""
    from .creation import zeros
    from .shape import narrow
    arr = A._array
    if isinstance(p, str):
        op = "linalg.cond(ord=%s)" % p
        if arr.ndim < 2:
            raise RuntimeError("%s: The input tensor A must have at least 2 dimensions." % op)
        _square_shape(op, arr)
        if p not in ("fro", "nuc"):
            raise RuntimeError("linalg.cond got an invalid norm type: %s" % p)
    else:
        if arr.ndim < 2:
            raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
        p = 2 if p is None else p
        if abs(p) not in (1, 2, math.inf):
            raise RuntimeError("linalg.cond got an invalid norm type: %s" % _ord_str(p))
    if arr.size == 0:
        return zeros(arr.shape[:-2], dtype=_dt.from_numpy_dtype(_real_dtype(arr)),
                     device=A.device)
    if p == "nuc":
        s = _svdvals(A)
        return s.sum(-1) * s.reciprocal().sum(-1)
    if p in (2, -2):
        s = _svdvals(A)
        s_max, s_min = narrow(s, -1, 0, 1), narrow(s, -1, -1, 1)
        return (s_min / s_max if p == -2 else s_max / s_min).squeeze(-1)
    if not isinstance(p, str):
        _square_shape("linalg.cond(ord=%s)" % _ord_str(p), arr)
    return _cond_helper(A, p)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """``(result, info)`` of ``solve``; ``info`` is the first zero pivot (1-based) or 0."""
    from .creation import zeros
    from .. import int32
    info = _lu_arrays(A._array)[2] if A._array.ndim >= 2 and \
        A._array.shape[-1] == A._array.shape[-2] and A._array.dtype.char in "fdFD" else None
    if info is not None and bool((info != 0).any()):
        if check_errors:
            raise _LinAlgError("torch.linalg.solve_ex: The solver failed because the input "
                               "matrix is singular.")
        lu_, piv = linalg_lu_factor_ex(A)[:2]
        vec = B._array.ndim == 1 or (B._array.ndim == A._array.ndim - 1 and
                                     tuple(B.shape) == tuple(A.shape[:-1]))
        b = B.unsqueeze(-1) if vec else B
        res = linalg_lu_solve(lu_, piv, b, left=left)
        return _rt.linalg_solve_ex(res.squeeze(-1) if vec else res, _w(info))
    res = solve(A, B, left=left)
    return _rt.linalg_solve_ex(res, zeros(tuple(A.shape[:-2]), dtype=int32,
                                                      device=A.device))


def inv_ex(A, *, check_errors=False, out=None):
    """``(inverse, info)``; ``info`` is the first zero pivot (1-based) of a singular matrix."""
    from .creation import zeros
    from .shape import broadcast_to
    from .. import int32
    _square_check("linalg.inv_ex", A._array)
    info = _lu_arrays(A._array)[2]
    if bool((info != 0).any()):
        if check_errors:
            _raise_info("linalg.inv_ex", info, _singular_msg)
        lu_, piv = linalg_lu_factor_ex(A)[:2]
        res = linalg_lu_solve(lu_, piv, broadcast_to(_square_eye(A), A.shape))
        return _rt.linalg_inv_ex(res, _w(info))
    return _rt.linalg_inv_ex(_inv(A), zeros(tuple(A.shape[:-2]), dtype=int32,
                                                      device=A.device))


def lstsq(A, B, rcond=None, *, driver=None):
    """``(solution, residuals, rank, singular_values)`` of the least-squares problem
    ``min ||A X - B||``."""
    op = "torch.linalg.lstsq"
    aa, ba = A._array, B._array
    if aa.ndim < 2:
        raise RuntimeError("%s: input must have at least 2 dimensions." % op)
    if ba.ndim < 1:
        raise RuntimeError("%s: other must have at least 1 dimension." % op)
    # (torch's vector rule: other of input's batch shape, as linalg.solve)
    vec = ba.ndim == 1 or (ba.ndim == aa.ndim - 1 and ba.shape == aa.shape[:-1])
    if not (ba.ndim == aa.ndim - 1 or ba.ndim == aa.ndim):
        raise RuntimeError("%s: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1" % op)
    if aa.dtype != ba.dtype:
        raise RuntimeError("%s: Expected input and other to have the same dtype, but got "
                           "input's dtype %s and other's dtype %s"
                           % (op, _tname(aa.dtype), _tname(ba.dtype)))
    if aa.shape[-2] != ba.shape[-1 if vec else -2]:
        raise RuntimeError("%s: input.size(-2) should match other.size(%d)"
                           % (op, -1 if vec else -2))
    # (with one dim fewer, torch takes other.shape[:-1] as the batch shape: other's own matrix
    # repeated when it is not a vector)
    bbatch = ba.shape[:-1] if ba.ndim == aa.ndim - 1 else ba.shape[:-2]
    for i, (x, y) in enumerate(zip(aa.shape[:-2][::-1], bbatch[::-1])):
        if x != y and x != 1 and y != 1:
            raise RuntimeError("The size of tensor a (%d) must match the size of tensor b (%d) "
                               "at non-singleton dimension %d" % (x, y, aa.ndim - 3 - i))
    if not vec and ba.ndim == aa.ndim - 1:
        B = B.expand(np.broadcast_shapes(aa.shape[:-2], bbatch) + ba.shape[-2:])
    if driver is None:
        driver = "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("%s: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
                           % op)
    if rcond is None:
        _float_double(aa)
        rcond = float(np.finfo(_real_dtype(aa)).eps) * max(aa.shape[-2:])
    _lapack_dtype(aa, None, "linalg_lstsq_cpu")
    return _rt.linalg_lstsq(*LinalgLstsq.apply(A, B, rcond, driver, vec))


def _add_out(namespace, names, prefix):
    """``out=`` for the functions of a namespace (``ember.linalg``, ``ember.fft``,
    ``ember.special``): each function in ``names`` of ``namespace`` (a module's globals) that
    declares an ``out`` parameter is wrapped with ``with_out`` under torch's name
    ``prefix + name``."""
    for name in names:
        fn = inner = namespace.get(name)
        while hasattr(inner, "__wrapped__"):
            inner = inner.__wrapped__
        code = getattr(inner, "__code__", None)
        if code is None:
            continue
        if "out" in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
            namespace[name] = (_linalg_out(fn, name) if prefix == "linalg_" else
                               with_out(fn, prefix + name))


# torch.linalg's own out= dtype checks, where they are not the exact-dtype rule
# (name -> message over (expected, got) and the dtype names it uses; or, for the ops that only
# need a castable out, the prefix of their message and the names of their results).
_OUT_MESSAGES = {
    "vecdot": ("linalg.vecdot: Expected out of dtype%s but found %s", "legacy"),
    "norm": ("linalg.norm expected out tensor dtype %s but got: %s", "legacy"),
    "matrix_norm": ("linalg.matrix_norm expected out tensor dtype %s but got: %s", "legacy"),
    "multi_dot": ("multi_dot(): expected out tensor to have dtype %s but got %s", "cpp"),
    "solve_triangular": ("expected scalar type %s but found %s", "legacy"),
}
_OUT_CASTABLE = {
    "pinv": ("linalg.pinv", ("result",)), "tensorinv": ("tensorinv", ("result",)),
    "tensorsolve": ("tensorsolve", ("result",)), "cond": ("linalg.cond", ("result",)),
    "householder_product": ("torch.linalg.householder_product", ("result",)),
    "eig": ("torch.linalg.eig", ("eigenvalues", "eigenvectors")),
    "eigvals": ("torch.linalg.eigvals", ("eigenvalues",)),
    "matrix_power": ("matrix_power", ("result",)), "matrix_rank": None,
}
# arguments torch types by name: a keyword one's message has no "(position N)"
_KW_TYPES = {"matrix_power": ("n", (int, np.integer), "int"),
             "vector_norm": ("ord", (int, float, np.number), "Number")}
_CPP = {"float32": "float", "float64": "double", "float16": "c10::Half",
        "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int", "int16": "short int",
        "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
        "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _linalg_out(fn, name):
    """``ember.linalg.NAME`` taking ``out=``: ``with_out`` after torch.linalg's dtype checks."""
    wrapped = with_out(fn, "linalg_" + name)
    kw_type = _KW_TYPES.get(name)

    def op(*args, out=None, **kwargs):
        if kw_type is not None and kw_type[0] in kwargs:
            arg, types, what = kw_type
            value = kwargs[arg]
            if not (isinstance(value, Tensor) and value._array.ndim == 0) and (
                    not isinstance(value, types) or isinstance(value, bool) and what == "int"):
                raise TypeError("linalg_%s(): argument '%s' must be %s, not %s"
                                % (name, arg, what, type(value).__name__))
        if name == "matrix_rank":
            _matrix_rank_overload(args, kwargs, out)
        if out is None:
            return fn(*args, **kwargs)

        # (torch's matrix_power copies into ``out`` for n = 0 and 1: any castable dtype)
        exact = name != "matrix_power" or (args[1:2] or [kwargs.get("n")])[0] not in (0, 1)

        def checked(*a, **k):
            result = fn(*a, **k)
            _check_out_dtypes(name, result, out, exact)
            return result
        return with_out(checked, "linalg_" + name)(*args, out=out, **kwargs)
    return functools.update_wrapper(op, wrapped)


_MATRIX_RANK_SIGNATURES = (
    " * (Tensor input, *, Tensor atol = None, Tensor rtol = None, bool hermitian = False, Tensor "
    "out = None)\n * (Tensor input, *, float atol = None, float rtol = None, bool hermitian = "
    "False, Tensor out = None)\n * (Tensor input, Tensor tol, bool hermitian = False, *, Tensor "
    "out = None)\n * (Tensor input, float tol, bool hermitian = False, *, Tensor out = None)\n")


def _matrix_rank_overload(args, kwargs, out):
    """torch's TypeError for ``tol`` given together with ``atol=``/``rtol=`` (no overload of
    ``linalg.matrix_rank`` takes both)."""
    if not ((len(args) >= 2 or "tol" in kwargs) and ("atol" in kwargs or "rtol" in kwargs)):
        return
    given = dict(kwargs, **({} if out is None else {"out": out}))
    got = [type(a).__name__ for a in args] + ["%s=%s" % (k, type(v).__name__)
                                              for k, v in reversed(list(given.items()))]
    raise TypeError("linalg_matrix_rank() received an invalid combination of arguments - got "
                    "(%s), but expected one of:\n%s" % (", ".join(got), _MATRIX_RANK_SIGNATURES))


def _check_out_dtypes(name, result, out, exact=True):
    """torch.linalg's RuntimeError for an ``out`` of the wrong dtype (``with_out`` checks the
    rest: the count and kinds of ``out``)."""
    results = (result,) if isinstance(result, Tensor) else tuple(result)
    outs = (out,) if isinstance(out, Tensor) else tuple(out) if isinstance(
        out, (tuple, list)) else ()
    if len(outs) != len(results) or not all(isinstance(o, Tensor) for o in outs):
        return
    castable = _OUT_CASTABLE.get(name, False)
    for k, (r, o) in enumerate(zip(results, outs)):
        src, dst = r._array.dtype, o._array.dtype
        if castable:
            prefix, words = castable
            word = words[min(k, len(words) - 1)]
            if not can_cast(src, dst):
                raise RuntimeError("%s: Expected %s to be safely castable from %s dtype, but got "
                                   "%s with dtype %s" % (prefix, word, _dt.scalar_type_name(src),
                                                         word, _dt.scalar_type_name(dst)))
            if name != "matrix_power" or not exact:
                continue
        if castable is None or src == dst:
            continue
        message, names = _OUT_MESSAGES.get(
            name, ("Expected out tensor to have dtype %s, but got %s instead", "cpp"))
        spell = _dt.scalar_type_name if names == "legacy" else (
            lambda d: _CPP.get(d.name, d.name))
        raise RuntimeError(message % (spell(src), spell(dst)))
