"""The ``ember.linalg`` kernels: vector and matrix norms, inverse, determinant, linear solves,
with torch's backward formulas (the matrix products live in ``matmul``)."""
import numpy as np

from ..autograd.function import Function
from ..backend import errstate
from ..tensor import Tensor
from ._util import get_array_module, sum_to, wrap_dim, xp_of
from .matmul import _shape_str, _tname, matmul

__all__ = ["det", "inverse"]


def _square_check(op, arr):
    if arr.ndim < 2:
        raise RuntimeError("%s: The input tensor A must have at least 2 dimensions." % op)
    if arr.shape[-1] != arr.shape[-2]:
        raise RuntimeError("%s: A must be batches of square matrices, but they are %d by %d "
                           "matrices" % (op, arr.shape[-2], arr.shape[-1]))
    if arr.dtype.kind != "f":
        raise RuntimeError("%s: Expected a floating point or complex tensor as input. Got %s"
                           % (op, _tname(arr.dtype)))


class LinalgInv(Function):
    node_name = "LinalgInvExBackward0"

    @staticmethod
    def forward(ctx, a):
        arr = a._array
        _square_check("linalg.inv", arr)
        try:
            out = xp_of(a).linalg.inv(arr)
        except np.linalg.LinAlgError:
            raise RuntimeError("linalg.inv: The diagonal element %d is zero, the inversion could "
                               "not be completed because the input matrix is singular."
                               % _singular_pivot(arr)) from None
        out = Tensor._wrap(out.astype(arr.dtype, copy=False))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        inv_t, = ctx.saved_tensors
        inv_h = inv_t.mT
        return -matmul(matmul(inv_h, grad_output), inv_h)


def _singular_pivot(arr):
    """1-based index of the first zero pivot of an LU factorisation (torch's message)."""
    xp = get_array_module(arr)
    m = arr.reshape(-1, arr.shape[-2], arr.shape[-1])[0].astype(np.float64)
    n = m.shape[0]
    for k in range(n):
        p = k + int(xp.argmax(xp.abs(m[k:, k])))
        if float(m[p, k]) == 0:
            return k + 1
        m[[k, p]] = m[[p, k]]
        m[k + 1:] -= xp.outer(m[k + 1:, k] / m[k, k], m[k])
    return n


def _inv(a):
    return LinalgInv.apply(a)


class LinalgDet(Function):
    node_name = "LinalgDetBackward0"

    @staticmethod
    def forward(ctx, a):
        arr = a._array
        _square_check("linalg.det", arr)
        ctx.save_for_backward(a)
        xp = xp_of(a)
        return Tensor._wrap(xp.asarray(xp.linalg.det(arr)).astype(arr.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        from .shape import unsqueeze
        a, = ctx.saved_tensors
        # NOTE: d det(A) / dA = det(A) * A^{-T}. For an exactly singular A torch's LU solve
        # scales by det = 0 and returns zeros; swapping in I keeps the inverse finite.
        d = det(a)
        xp = xp_of(a)
        singular = xp.asarray(d._array == 0)
        if bool(singular.any()):
            from .comparison import where
            eye = Tensor._wrap(xp.eye(a._array.shape[-1], dtype=a._array.dtype))
            a = where(Tensor._wrap(singular[..., None, None]), eye, a)
        scale = unsqueeze(unsqueeze(grad_output * d, -1), -1)
        return scale * _inv(a).mT


def inverse(input, *, out=None):
    """The inverse of a square matrix (or a batch of them)."""
    return _inv(input)


def det(input, *, out=None):
    """The determinant of a square matrix (or a batch of them)."""
    return LinalgDet.apply(input)


class LinalgSolve(Function):
    node_name = "LinalgSolveExBackward0"

    @staticmethod
    def forward(ctx, a, b):
        aa, ba = a._array, b._array
        _square_check("linalg.solve", aa)
        if aa.dtype != ba.dtype:
            raise RuntimeError("linalg.solve: Expected A and B to have the same dtype, but found "
                               "A of type %s and B of type %s instead"
                               % (_tname(aa.dtype), _tname(ba.dtype)))
        if ba.shape[-2] != aa.shape[-1]:
            raise RuntimeError("linalg.solve: Incompatible shapes of A and B for the equation "
                               "AX = B (%s and %s)" % (_shape_str(aa.shape[-2:]),
                                                       _shape_str(ba.shape[-2:])))
        batch = np.broadcast_shapes(aa.shape[:-2], ba.shape[:-2])
        xp = xp_of(a)
        aa = xp.broadcast_to(aa, batch + aa.shape[-2:])
        ba = xp.broadcast_to(ba, batch + ba.shape[-2:])
        try:
            x = xp.linalg.solve(aa, ba)
        except np.linalg.LinAlgError:
            raise RuntimeError("linalg.solve: The solver failed because the input matrix is "
                               "singular.") from None
        out = Tensor._wrap(x.astype(aa.dtype, copy=False))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        a, x = ctx.saved_tensors
        gb = _solve(a.mT, grad_output)
        ga = None
        if ctx.needs_input_grad[0]:
            ga = sum_to(-matmul(gb, x.mT), ctx._input_meta(0)[0])
        return ga, sum_to(gb, ctx._input_meta(1)[0]) if ctx.needs_input_grad[1] else None


def _solve(a, b):
    return LinalgSolve.apply(a, b)


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
            elif ord == 1:
                out = a.sum(axis=dims, keepdims=keepdim)
            elif ord == 2:
                out = xp.sqrt((a * a).sum(axis=dims, keepdims=keepdim))
            else:
                out = (a ** ord).sum(axis=dims, keepdims=keepdim) ** (1.0 / ord)
        ctx.ord, ctx.dims, ctx.keepdim = ord, dims, keepdim
        out = Tensor._wrap(xp.asarray(out, dtype=arr.dtype))
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
            return x.sign() * grad_output, None, None, None
        if p == 2:
            return x * where(norm == 0, 0.0, grad_output / norm), None, None, None
        if p in (float("inf"), float("-inf")):
            ax = x.abs()
            mask = ((ax == norm) | isnan(ax)).to(x.dtype)
            # NOTE: ties share the gradient evenly, as torch's amax backward does.
            return x.sign() * ((grad_output / _sum(mask, dims, True)) * mask), None, None, None
        if p < 1:
            scaled = where(x == 0, 0.0, x.sign() * x.abs() ** (p - 1))
            return scaled * grad_output * norm ** (1 - p), None, None, None
        if p < 2:
            scaled = x.sign() * x.abs() ** (p - 1)
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


class Svdvals(Function):
    node_name = "LinalgSvdBackward0"

    @staticmethod
    def forward(ctx, a):
        xp = xp_of(a)
        # NOTE: asarray: the strict device leaves the arrays of NumPy's SVDResult unwrapped.
        u, s, vh = (xp.asarray(r) for r in xp.linalg.svd(a._array, full_matrices=False))
        ctx.save_for_backward(Tensor._wrap(u), Tensor._wrap(vh))
        return Tensor._wrap(s.astype(a._array.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        from .shape import unsqueeze
        u, vh = ctx.saved_tensors
        # NOTE: dA = U diag(g) V^H (exact for distinct singular values; U, V held constant).
        return matmul(u * unsqueeze(grad_output, -2), vh)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The ``ord``-norm of ``x`` over ``dim`` (all elements when None), as a vector."""
    from .conversion import to
    if dtype is not None:
        x = to(x, dtype)
    if x._array.dtype.kind != "f":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           "input. Got %s" % _tname(x._array.dtype))
    n = x._array.ndim
    if dim is None:
        dims = tuple(range(n))
    elif isinstance(dim, (int, np.integer)):
        dims = (wrap_dim(dim, n, "linalg.vector_norm"),)
    else:
        dims = tuple(sorted(wrap_dim(d, n, "linalg.vector_norm") for d in dim))
    if ord < 0 or ord == float("inf"):
        for d in (dims or tuple(range(n))):
            if x._array.shape[d] == 0:
                raise RuntimeError("linalg.vector_norm cannot compute the %s norm on an empty "
                                   "tensor because the operation does not have an identity"
                                   % ord)
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
    d0, d1 = (wrap_dim(d, n, "linalg.matrix_norm") for d in dim)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        m = movedim(A, (d0, d1), (-2, -1))
        s = Svdvals.apply(m)
        if ord == "nuc":
            res = _sum(s, -1)
        else:
            res = Amax.apply(s, (s._array.ndim - 1,), False, ord == 2)
        if keepdim:
            res = unsqueeze(unsqueeze(res, min(d0, d1)), max(d0, d1))
        return res
    if ord in (1, -1, float("inf"), float("-inf")):
        sum_dim, max_dim = (d0, d1) if abs(ord) == 1 else (d1, d0)
        s = _sum(A.abs(), sum_dim, True)
        res = Amax.apply(s, (max_dim,), True, ord > 0)
        if not keepdim:
            from .shape import squeeze
            res = squeeze(res, (d0, d1))
        return res
    raise RuntimeError("linalg.matrix_norm: Order %s not supported." % (ord,))


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):
    """``linalg.norm``: a vector norm or a matrix norm depending on ``ord`` and ``dim``."""
    if isinstance(dim, (int, np.integer)):
        dim = (dim,)
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
    from .shape import unsqueeze, squeeze
    if not left:
        return solve(A.mT, B.mT).mT
    na, nb = A._array.ndim, B._array.ndim
    vector = nb == 1 or (nb == na - 1 and B._array.shape == A._array.shape[:-1])
    if vector:
        return squeeze(_solve(A, unsqueeze(B, -1)), -1)
    return _solve(A, B)
