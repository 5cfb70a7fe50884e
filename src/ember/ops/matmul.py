"""Matrix products: mm, bmm, mv, dot, matmul, addmm/addmv/baddbmm/addbmm, outer, kron,
einsum, tensordot, with torch's backward formulas and node names."""
import math
import warnings

import numpy as np

from ..autograd._sum_to import sum_to_array
from ..autograd import _autocast
from ..autograd.function import Function, plain_apply  # (a product inside an op: no autocast)
from ..autograd.grad_mode import state as _grad_state
from ..backend import errstate, get_array_module, same_device
from ..tensor import Tensor
from ._out import _RESIZE_MSG
from ._index import _iter_perm
from ._inplace import _KIND_RANK
from ._util import (R_TO_C_MSG, binary_arrays, check_real_grad, cpu_has, deprecated_overload, mm2d,
                    not_implemented_for, sum_to, warn_once, wrap_dim, xp_of)
from ..dtypes import from_numpy_dtype, get_default_dtype, kind as _kind, scalar_type_name as _tname
from .shape import (Clone, Expand, Reshape, Squeeze, T, Transpose, Unsqueeze, reshape,
                    view_strides)

__all__ = ["mm", "matmul", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm",
           "baddbmm", "addmv", "addbmm", "einsum", "tensordot", "kron", "chain_matmul"]


def _shape_str(shape):
    return "x".join(str(d) for d in shape)


# the C++ type names torch's mm and baddbmm print for a dtype mismatch
_CPP_NAMES = {"Float": "float", "Double": "double", "Long": "long int", "Int": "int",
              "Short": "short int", "Char": "signed char", "Byte": "unsigned char",
              "Bool": "bool", "Half": "c10::Half", "BFloat16": "c10::BFloat16",
              "ComplexFloat": "c10::complex<float>", "ComplexDouble": "c10::complex<double>"}


def _cpp_name(dtype):
    name = _tname(dtype)
    return _CPP_NAMES.get(name, name)


def _no_bool(arr, kernel):
    """torch's error for a product kernel, which has no bool version."""
    not_implemented_for(arr, kernel, "b")


class Mm(Function):
    node_name = "MmBackward0"

    @staticmethod
    def forward(ctx, a, b):
        aa, bb = a._array, b._array
        if type(aa) is not type(bb):
            same_device(aa, bb)     # (torch's mixed-device message)
        if aa.ndim != 2:
            raise RuntimeError("self must be a matrix")
        if bb.ndim != 2:
            raise RuntimeError("mat2 must be a matrix")
        if aa.shape[1] != bb.shape[0]:
            raise RuntimeError("mat1 and mat2 shapes cannot be multiplied (%s and %s)"
                               % (_shape_str(aa.shape), _shape_str(bb.shape)))
        if aa.dtype is not bb.dtype and aa.dtype != bb.dtype:
            raise RuntimeError("expected m1 and m2 to have the same dtype, but got: %s != %s"
                               % (_cpp_name(aa.dtype), _cpp_name(bb.dtype)))
        if aa.size and bb.size:     # (torch skips its kernel when there is nothing to sum)
            _no_bool(aa, "addmm_impl_cpu_")
        need = ctx.needs_input_grad
        ctx.save_for_backward(a if need[1] else None, b if need[0] else None)
        # (a C-contiguous input, the common case, needs no second look at its flags)
        ctx.layouts = (not aa.flags.c_contiguous and _transposed(aa),
                       not bb.flags.c_contiguous and _transposed(bb))
        # (a large bfloat16 product comes back float32: rounded once, as torch)
        return Tensor._wrap(mm2d(aa, bb).astype(aa.dtype, copy=False))

    @staticmethod
    def array_backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        g = grad_output._array
        if g.dtype.kind == "c":
            return Mm.backward(ctx, grad_output)
        t1, t2 = ctx.layouts
        return (Tensor._wrap(_mat1_grad(g, b._array, t1)) if need[0] else None,
                Tensor._wrap(_mat2_grad(a._array, g, t2)) if need[1] else None)

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        ga = _mm1(grad_output, b, ctx.layouts[0]) if need[0] else None
        gb = _mm2(a, grad_output, ctx.layouts[1]) if need[1] else None
        return ga, gb


def _mm1(g, b, transposed):
    """``g @ b^H`` in mat1's layout (torch's mm_mat1_backward; ``_mat1_grad`` on Tensors)."""
    return mm(_conj(b), g.t()).t() if transposed else mm(g, _adj(b))


def _mm2(a, g, transposed):
    """``a^H @ g`` in mat2's layout (torch's mm_mat2_backward)."""
    return mm(g.t(), _conj(a)).t() if transposed else mm(_adj(a), g)


def _adj(t):
    """The adjoint in a product's gradient: the transpose of the last two dims (``t()`` for a
    matrix, as torch's graph names it), conjugated for complex tensors."""
    out = t.t() if t._array.ndim == 2 else t.transpose(-1, -2)
    return out.conj() if t._array.dtype.kind == "c" else out


def _conj(t):
    return t.conj() if t._array.dtype.kind == "c" else t


def _transposed(arr):
    """A 2-D array laid out as the transpose of a C-contiguous one (``weight.t()``)."""
    return arr.ndim == 2 and not arr.flags.c_contiguous and arr.flags.f_contiguous


def _mat1_grad(g, m2, transposed):
    """``g @ m2.T``, in the layout of mat1 (torch's mm_mat1_backward): a transposed mat1 gets
    the transpose of a C-contiguous product, so that its leaf's ``.grad`` needs no copy."""
    if transposed:
        return mm2d(m2, g.T).astype(g.dtype, copy=False).T
    return mm2d(g, m2.T).astype(g.dtype, copy=False)


def _mat2_grad(m1, g, transposed):
    """``m1.T @ g``, in the layout of mat2 (torch's mm_mat2_backward; see ``_mat1_grad``)."""
    if transposed:
        return mm2d(g.T, m1).astype(g.dtype, copy=False).T
    return mm2d(m1.T, g).astype(g.dtype, copy=False)


class Bmm(Function):
    node_name = "BmmBackward0"

    @staticmethod
    def forward(ctx, a, b, kernel="bmm"):
        aa, bb = a._array, b._array
        if type(aa) is not type(bb):
            same_device(aa, bb)     # (torch's mixed-device message)
        if aa.ndim != 3:
            raise RuntimeError("batch1 must be a 3D tensor")
        if bb.ndim != 3:
            raise RuntimeError("batch2 must be a 3D tensor")
        if bb.shape[:2] != (aa.shape[0], aa.shape[2]):
            raise RuntimeError("Expected size for first two dimensions of batch2 tensor to be: "
                               "[%d, %d] but got: [%d, %d]."
                               % (aa.shape[0], aa.shape[2], bb.shape[0], bb.shape[1]))
        need = ctx.needs_input_grad
        ctx.save_for_backward(a if need[1] else None, b if need[0] else None)
        if not (aa.size and bb.size):
            # (torch returns before its kernel: no dtype checks, and batch2's dtype)
            return Tensor._wrap(xp_of(a).zeros(aa.shape[:2] + bb.shape[2:], dtype=bb.dtype))
        _no_bool(aa, kernel)
        if aa.dtype != bb.dtype:
            raise RuntimeError("expected scalar type %s but found %s"
                               % (_tname(aa.dtype), _tname(bb.dtype)))
        if _small_complex(aa, bb):
            with errstate(invalid="ignore", over="ignore"):
                return Tensor._wrap((aa[:, :, :, None] * bb[:, None, :, :]).sum(2))
        # (bfloat16 products come back float32: rounded once to bfloat16, as torch)
        return Tensor._wrap(xp_of(a).matmul(aa, bb).astype(aa.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        ga = bmm(grad_output, _adj(b)) if need[0] else None
        gb = bmm(_adj(a), grad_output) if need[1] else None
        check_real_grad(ga, ctx, 0)
        check_real_grad(gb, ctx, 1)
        return ga, gb, None


def _differentiable(out, *inputs):
    """``out``, or torch's error for a result that cannot carry a gradient (an empty product
    takes batch2's or input's dtype) of inputs that require one in grad mode."""
    dtype = out._array.dtype
    if dtype.kind not in "fcV" and _grad_state.enabled and \
            any(t._requires_grad for t in inputs):
        raise RuntimeError("Autograd not support dtype: %s" % _tname(dtype))
    return out


def _check_grad_dtype(dtype, ctx, i):
    """torch's engine check of a gradient of ``dtype`` for input ``i``: a real input takes no
    complex one, a complex input a floating or complex one."""
    if _kind(dtype) != "f" and (dtype.kind == "c") != (ctx._input_meta(i)[1].kind == "c"):
        raise RuntimeError(R_TO_C_MSG)


def _small_complex(aa, bb):
    """A complex bmm that torch's CPU kernel computes with its own loop (under 400
    multiply-adds per matrix), not BLAS: plain products summed, whose infinities and NaNs
    differ from BLAS's."""
    return aa.dtype.kind == "c" and aa.shape[1] * aa.shape[2] * bb.shape[2] < 400


class Mv(Function):
    node_name = "MvBackward0"

    @staticmethod
    def forward(ctx, m, v):
        ma, va = m._array, v._array
        if ma.ndim != 2 or va.ndim != 1:
            raise RuntimeError("vector + matrix @ vector expected, got 1, %d, %d"
                               % (ma.ndim, va.ndim))
        if ma.shape[1] != va.shape[0]:
            raise RuntimeError("size mismatch, got input (%d), mat (%s), vec (%d)"
                               % (ma.shape[0], _shape_str(ma.shape), va.shape[0]))
        if ma.dtype != va.dtype:
            raise RuntimeError("addmv input tensors must have the same dtype, but got %s, %s, "
                               "and %s" % (_tname(va.dtype), _tname(ma.dtype), _tname(va.dtype)))
        if ma.size:     # (torch skips its kernel for an empty matrix)
            _no_bool(ma, "addmv_impl_cpu")
        need = ctx.needs_input_grad
        ctx.save_for_backward(m if need[1] else None, v if need[0] else None)
        return Tensor._wrap((ma @ va).astype(ma.dtype, copy=False))    # (bfloat16: see Bmm)

    @staticmethod
    def backward(ctx, grad_output):
        m, v = ctx.saved_tensors
        need = ctx.needs_input_grad
        gm = outer(grad_output, _conj(v)) if need[0] else None
        gv = mv(_adj(m), grad_output) if need[1] else None
        return gm, gv


class Dot(Function):
    node_name = "DotBackward0"

    @staticmethod
    def forward(ctx, a, b):
        aa, bb = a._array, b._array
        if type(aa) is not type(bb):
            same_device(aa, bb)     # (torch's mixed-device message)
        if aa.ndim != 1 or bb.ndim != 1:
            raise RuntimeError("1D tensors expected, but got %dD and %dD tensors"
                               % (aa.ndim, bb.ndim))
        if aa.shape[0] != bb.shape[0]:
            raise RuntimeError("inconsistent tensor size, expected tensor [%d] and src [%d] to "
                               "have the same number of elements, but got %d and %d elements "
                               "respectively" % (aa.size, bb.size, aa.size, bb.size))
        if aa.dtype != bb.dtype:
            raise RuntimeError("dot : expected both vectors to have same dtype, but found %s "
                               "and %s" % (_tname(aa.dtype), _tname(bb.dtype)))
        _no_bool(aa, "dot")
        need = ctx.needs_input_grad
        ctx.save_for_backward(a if need[1] else None, b if need[0] else None)
        xp = xp_of(a)
        return Tensor._wrap(xp.asarray(xp.dot(aa, bb)))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (grad_output * _conj(b) if need[0] else None), \
            (grad_output * _conj(a) if need[1] else None)


class Matmul(Function):
    """``matmul`` for the batched cases (1-D x 1-D, 2-D x 2-D, 2-D x 1-D use dot, mm, mv).

    The node takes the name of the op torch ends with: 1-D @ 2-D runs
    ``unsqueeze(0).mm(other).squeeze_(0)``; 2-D @ batched with a 2-D input requiring grad folds
    the batch into one mm and ends with ``.mT.contiguous()``.
    """

    node_name = "UnsafeViewBackward0"

    @staticmethod
    def forward(ctx, a, b):
        aa, bb = binary_arrays("matmul", a, b) if a._array.dtype != b._array.dtype else \
            (a._array, b._array)
        k_a = aa.shape[-1]
        k_b = bb.shape[0] if bb.ndim == 1 else bb.shape[-2]
        if k_a != k_b:
            if bb.ndim == 1:
                raise RuntimeError("size mismatch, got input (%d), mat (%s), vec (%d)"
                                   % (aa.shape[-2], _shape_str(aa.shape[-2:]), k_b))
            raise RuntimeError("mat1 and mat2 shapes cannot be multiplied (%s and %s)"
                               % (_shape_str((math.prod(aa.shape[:-1]), k_a)),
                                  _shape_str(bb.shape[-2:])))
        _check_batches(aa.shape[:-2], bb.shape[:-2])
        out = xp_of(a).matmul(aa, bb)
        if aa.ndim == 1 and bb.ndim == 2:
            ctx.set_node_name("SqueezeBackward4")
        elif aa.ndim == 2 and bb.ndim >= 3 and a._requires_grad:
            ctx.set_node_name("CloneBackward0")
        ctx.save_for_backward(a, b)
        return Tensor._wrap(xp_of(a).asarray(out))

    @staticmethod
    def backward(ctx, grad_output):
        from .shape import unsqueeze, reshape
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        a2 = unsqueeze(a, 0) if a._array.ndim == 1 else a
        b2 = unsqueeze(b, -1) if b._array.ndim == 1 else b
        g = grad_output
        if a._array.ndim == 1:
            g = unsqueeze(g, -2)
        if b._array.ndim == 1:
            g = unsqueeze(g, -1)
        ga = gb = None
        if need[0]:
            ga = matmul(g, _adj(b2))
            ga = reshape(sum_to(ga, a2._array.shape), a._array.shape)
        if need[1]:
            gb = matmul(_adj(a2), g)
            gb = reshape(sum_to(gb, b2._array.shape), b._array.shape)
        return ga, gb


class _AddProduct(Function):
    """``beta * input + alpha * prod(m1, m2)`` for addmm, addmv, baddbmm (input broadcast)."""

    node_name = "AddmmBackward0"
    prod = staticmethod(lambda a, b: plain_apply(Mm, (a, b), {}))

    @classmethod
    def _run(cls, ctx, inp, m1, m2, beta, alpha):
        ia, a1, a2 = inp._array, m1._array, m2._array
        if not type(ia) is type(a1) is type(a2):
            same_device(ia, a1, a2)     # (torch's mixed-device message)
        cls._check_dtypes(ia, a1, a2)
        ctx.layouts = (_transposed(a1), _transposed(a2))
        dtype = None
        if _low(a1.dtype) and a1.dtype == a2.dtype == ia.dtype and a1.size and a2.size:
            # (torch's half and bfloat16 kernels: the product, alpha, beta and input in
            # float32, rounded once at the end)
            dtype = a1.dtype
            a1, a2, ia = a1.astype(np.float32), a2.astype(np.float32), ia.astype(np.float32)
        if cls is Addmm and a1.ndim == 2 and a2.ndim == 2 and a1.shape[1] == a2.shape[0] \
                and a1.size and a2.size:
            if a1.dtype == np.bool_:
                _no_bool(a1, "addmm_impl_cpu_")
            prod = mm2d(a1, a2)     # (mm's checks pass: no Mm node is needed for them)
        else:
            prod = cls.prod(Tensor._wrap(a1), Tensor._wrap(a2))._array
        base = _expand_input(xp_of(inp), ia, prod.shape)
        need = ctx.needs_input_grad
        if not (a1.size and a2.size):
            out = cls._nothing_to_sum(ia, base, prod, beta)
            beta, alpha = _kernel_scalars(ia.dtype, beta, alpha)
        else:
            beta, alpha = _kernel_scalars(ia.dtype, beta, alpha)
            out = prod      # a new array: the rest is done in place
            if cls is Baddbmm and _small_complex(a1, a2):
                # (torch's own small complex kernel scales by 1 + 0j too: inf * 0j is NaN)
                with errstate(invalid="ignore", over="ignore"):
                    out *= alpha
                    if beta != 0:
                        out += base * beta
            elif dtype is not None and cls is Addmv and (a1.size <= 4096 or not cpu_has(
                    "fp16" if dtype == np.float16 else "bf16")):
                out = _small_gemv(out, base, beta, alpha, dtype, ctx.layouts[0])
            else:
                if alpha != 1:
                    out *= alpha
                if beta != 0:
                    out += base * beta if beta != 1 else base
        ctx.beta, ctx.alpha = beta, alpha
        ctx.save_for_backward(m1 if need[2] else None, m2 if need[1] else None)
        xp = xp_of(inp)
        if not out.ndim:    # (an addmv of an empty matrix keeps a 0-d input's shape)
            return Tensor._wrap(xp.asarray(out, dtype=prod.dtype))
        return Tensor._wrap(xp.ascontiguousarray(out, dtype=dtype or prod.dtype))

    @staticmethod
    def _nothing_to_sum(ia, base, prod, beta):
        """torch's result when the product has no terms: ``beta * input`` (its in-place
        ``mul_``, so a number of a higher kind than the result is refused), or zeros."""
        if prod.size == 0 or beta == 0:
            return prod
        _check_scale(prod.dtype, beta)
        return base * beta

    @classmethod
    def _grads(cls, ctx, g, prod_a, prod_b):
        m1, m2 = ctx.saved_tensors
        need = ctx.needs_input_grad
        gi = g1 = g2 = None
        if need[0]:
            # NOTE: beta == 0 gives a zero gradient (torch ignores input entirely).
            gi = sum_to(g * ctx.beta if ctx.beta != 1 else g, ctx._input_meta(0)[0])
        if need[1]:
            g1 = prod_a(g, m2)
            g1 = g1 * ctx.alpha if ctx.alpha != 1 else g1
        if need[2]:
            g2 = prod_b(m1, g)
            g2 = g2 * ctx.alpha if ctx.alpha != 1 else g2
        # (an empty baddbmm mixes dtypes: batch2's result dtype reaches real inputs)
        for i, gr in enumerate((gi, g1, g2)):
            check_real_grad(gr, ctx, i)
        return gi, g1, g2, None, None


def _low(dtype):
    """float16 or bfloat16: torch's kernels accumulate these in float32."""
    return dtype == np.float16 or dtype.kind == "V"


def _small_gemv(acc, base, beta, alpha, dtype, col_major):
    """torch's own gemv loop for a half or bfloat16 ``addmv`` of at most 4096 matrix entries
    (larger ones run oneDNN, rounded once, where the CPU has its fp16/bf16 support): alpha and
    beta rounded to ``dtype``; a row-major matrix rounds ``beta * input``, then the sum; a
    column-major one rounds ``alpha * acc`` and ``beta * input`` (beta not 1), then their sum.
    ``acc``, ``base``: float32."""
    xp = get_array_module(acc)
    a32, b32 = float(np.float32(dtype.type(alpha))), float(np.float32(dtype.type(beta)))
    acc = acc * a32
    if col_major:
        acc = acc.astype(dtype).astype(np.float32)
    if beta == 0:
        return acc
    if beta != 1 or not col_major:
        base = (base * b32).astype(dtype).astype(np.float32)
    return xp.add(acc, base)


def _kernel_scalars(dtype, beta, alpha):
    """beta and alpha as torch's kernel takes them: cast to an integer result's type."""
    if dtype.kind in "iu":
        return int(beta), int(alpha)
    if dtype.kind == "b":
        return bool(beta), bool(alpha)
    return beta, alpha


# the kind order of torch's in-place cast check, and a Python number's kind in it


def _check_scale(dtype, beta):
    """torch's error for ``result.mul_(beta)`` when ``beta`` is of a higher kind than the
    result (an int into bool, a float into an integer type, a complex into a real type)."""
    rank = 0 if isinstance(beta, (bool, np.bool_)) else 1 if isinstance(beta, (int, np.integer)) \
        else 3 if isinstance(beta, complex) else 2
    if rank <= _KIND_RANK[dtype.kind]:
        return
    if rank == 1:
        name = "Long"
    elif rank == 2:
        name = _tname(get_default_dtype().np)
    else:
        name = "ComplexDouble" if dtype == np.float64 else "ComplexFloat"
    raise RuntimeError("result type %s can't be cast to the desired output type %s"
                       % (name, _tname(dtype)))


def _addmm_dtypes(ia, a1, a2):
    """torch's dtype checks of addmm and addbmm."""
    if ia.dtype != a2.dtype:
        raise RuntimeError("self and mat2 must have the same dtype, but got %s and %s"
                           % (_tname(ia.dtype), _tname(a2.dtype)))
    if a1.dtype != a2.dtype:
        raise RuntimeError("mat1 and mat2 must have the same dtype, but got %s and %s"
                           % (_tname(a1.dtype), _tname(a2.dtype)))


class Addmm(_AddProduct):
    node_name = "AddmmBackward0"
    _check_dtypes = staticmethod(_addmm_dtypes)

    @staticmethod
    def forward(ctx, inp, m1, m2, beta, alpha):
        return Addmm._run(ctx, inp, m1, m2, beta, alpha)

    @staticmethod
    def array_backward(ctx, grad_output):
        m1, m2 = ctx.saved_tensors
        need = ctx.needs_input_grad
        g = grad_output._array
        if g.dtype.kind == "c":
            return Addmm.backward(ctx, grad_output)
        beta, alpha = ctx.beta, ctx.alpha
        gi = g1 = g2 = None
        if need[0]:
            shape = ctx._input_meta(0)[0]
            if g.shape != shape:
                gi = Tensor._wrap(sum_to_array(g * beta if beta != 1 else g, shape))
            elif beta != 1:
                gi = Tensor._wrap(g * beta)
            else:
                gi = grad_output
        t1, t2 = ctx.layouts
        if need[1]:
            d = _mat1_grad(g, m2._array, t1)
            g1 = Tensor._wrap(d * alpha if alpha != 1 else d)
        if need[2]:
            d = _mat2_grad(m1._array, g, t2)
            g2 = Tensor._wrap(d * alpha if alpha != 1 else d)
        return gi, g1, g2, None, None

    @staticmethod
    def backward(ctx, grad_output):
        return Addmm._grads(ctx, grad_output, lambda g, b: _mm1(g, b, ctx.layouts[0]),
                            lambda a, g: _mm2(a, g, ctx.layouts[1]))


def _addmv_dtypes(ia, a1, a2):
    """torch's checks of addmv: its meta function's dimensions and sizes, then the dtypes."""
    if not (a1.ndim == 2 and a2.ndim == 1 and ia.ndim <= 1):
        raise RuntimeError("vector + matrix @ vector expected, got %d, %d, %d"
                           % (ia.ndim, a1.ndim, a2.ndim))
    if not (a1.shape[1] == a2.shape[0] and (a1.shape[0] == ia.size or ia.size == 1)):
        if not ia.ndim:     # (torch's message reads input.size(0))
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        raise RuntimeError("size mismatch, got input (%d), mat (%dx%d), vec (%d)"
                           % (ia.shape[0], a1.shape[0], a1.shape[1], a2.shape[0]))
    if not ia.dtype == a1.dtype == a2.dtype:
        raise RuntimeError("addmv input tensors must have the same dtype, but got %s, %s, and %s"
                           % (_tname(ia.dtype), _tname(a1.dtype), _tname(a2.dtype)))


def _baddbmm_dtypes(ia, a1, a2):
    """torch's meta check of baddbmm: input and batch1 only (batch2 is its kernel's)."""
    if ia.dtype != a1.dtype:
        raise RuntimeError("Input dtypes must be the same, got: input %s, batch1: %s, batch2: %s"
                           % (_cpp_name(ia.dtype), _cpp_name(a1.dtype), _cpp_name(a2.dtype)))


def check_inplace_product(op, input, a, b):
    """torch's check that ``addmm_``, ``addmv_`` or ``baddbmm_`` (``op`` without the
    underscore) would write a result of ``input``'s own dtype and shape, made after the op's
    dtype checks; operands whose shapes don't multiply are left to the op's own error."""
    ia, aa, ba = input._array, a._array, b._array
    if op == "addmv":
        _addmv_dtypes(ia, aa, ba)
        if aa.ndim != 2 or ba.ndim != 1 or aa.shape[1] != ba.shape[0]:
            return
        shape = (aa.shape[0],)
    elif op == "addmm":
        _addmm_dtypes(ia, aa, ba)
        if aa.ndim != 2 or ba.ndim != 2 or aa.shape[1] != ba.shape[0]:
            return
        shape = (aa.shape[0], ba.shape[1])
    else:
        if aa.ndim != 3 or ba.ndim != 3 or aa.shape[0] != ba.shape[0] or \
                aa.shape[2] != ba.shape[1]:
            return
        shape = (aa.shape[0], aa.shape[1], ba.shape[2])
        _expand_input(xp_of(input), ia, shape)
        _baddbmm_dtypes(ia, aa, ba)
    if ia.dtype != ba.dtype:
        raise RuntimeError("Bad in-place call: input tensor dtype %s and output tensor dtype %s "
                           "should match" % (_cpp_name(ia.dtype), _cpp_name(ba.dtype)))
    if ia.shape != shape:
        raise RuntimeError("Bad in-place call: input tensor size %s and output tensor size %s "
                           "should match" % (list(ia.shape), list(shape)))


class Addmv(_AddProduct):
    node_name = "AddmvBackward0"
    prod = staticmethod(lambda m, v: plain_apply(Mv, (m, v), {}))
    _check_dtypes = staticmethod(_addmv_dtypes)

    @staticmethod
    def _nothing_to_sum(ia, base, prod, beta):
        """torch's result for an empty matrix: zeros, or ``input * beta`` in the shape of the
        input itself (not broadcast), with beta cast to the input's dtype."""
        if beta == 0:
            return prod
        if ia.shape != prod.shape and prod.size:   # (torch's out= resize warning)
            warnings.warn(_RESIZE_MSG % (list(prod.shape), list(ia.shape)), UserWarning,
                          stacklevel=2)
        return ia * _kernel_scalars(ia.dtype, beta, beta)[0]

    @staticmethod
    def forward(ctx, inp, m1, m2, beta, alpha):
        return Addmv._run(ctx, inp, m1, m2, beta, alpha)

    @staticmethod
    def backward(ctx, grad_output):
        return Addmv._grads(ctx, grad_output, lambda g, v: outer(g, _conj(v)),
                            lambda m, g: mv(_adj(m), g))


class Baddbmm(_AddProduct):
    node_name = "BaddbmmBackward0"
    prod = staticmethod(lambda a, b: plain_apply(Bmm, (a, b, "baddbmm"), {}))
    _check_dtypes = staticmethod(_baddbmm_dtypes)

    @staticmethod
    def forward(ctx, inp, m1, m2, beta, alpha):
        return Baddbmm._run(ctx, inp, m1, m2, beta, alpha)

    @staticmethod
    def backward(ctx, grad_output):
        return Baddbmm._grads(ctx, grad_output, lambda g, b: bmm(g, _adj(b)),
                              lambda a, g: bmm(_adj(a), g))


def mm(input, mat2, *, out=None):
    """Matrix product of two 2-D tensors.

    Raises RuntimeError "mat1 and mat2 shapes cannot be multiplied (AxB and CxD)" on mismatch.
    """
    return Mm.apply(input, mat2)


def bmm(input, mat2, *, out=None):
    """Batched matrix product of two 3-D tensors ``(b, n, m) @ (b, m, p)`` (no broadcasting)."""
    return _differentiable(Bmm.apply(input, mat2), input, mat2)


def mv(input, vec, *, out=None):
    """Matrix-vector product ``(n, m) @ (m,)``."""
    return Mv.apply(input, vec)


def dot(input, tensor, *, out=None):
    """Inner product of two 1-D tensors of equal length and dtype (a 0-d tensor)."""
    return Dot.apply(input, tensor)


class Vdot(Function):
    node_name = "VdotBackward0"

    @staticmethod
    def forward(ctx, a, b):
        out = Dot.forward(ctx, a, b)
        if a._array.dtype.kind == "c":
            xp = xp_of(a)
            return Tensor._wrap(xp.asarray(xp.vdot(a._array, b._array)))
        return out

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (_conj(grad_output) * b if need[0] else None), \
            (grad_output * a if need[1] else None)


def vdot(input, other, *, out=None):
    """``sum(conj(input) * other)`` of two 1-D tensors of equal length and dtype."""
    if input._array.ndim != 1 or other._array.ndim != 1:
        raise RuntimeError("1D tensors expected, but got %dD and %dD tensors"
                           % (input._array.ndim, other._array.ndim))
    return Vdot.apply(input, other)


def outer(input, vec2, *, out=None):
    """Outer product of two 1-D tensors: ``out[i, j] = input[i] * vec2[j]``."""
    from .shape import reshape
    if input._array.ndim != 1 or vec2._array.ndim != 1:
        raise RuntimeError("outer: Expected 1-D argument self, but got %d-D"
                           % (input._array.ndim if input._array.ndim != 1
                              else vec2._array.ndim))
    return reshape(input, (-1, 1)) * vec2


ger = outer


def matmul(input, other, *, out=None):
    """Matrix product with torch's rules for 1-D, 2-D and batched (broadcast) operands.

    The graph is torch's (``_matmul_impl``): 1-D @ 2-D is ``unsqueeze(0).mm(.).squeeze_(0)``;
    a batched operand times a matrix or vector is folded into one ``mm``/``mv``; other batched
    products expand both operands and run one ``bmm``.

    Example:
        >>> import ember
        >>> ember.matmul(ember.ones(2, 3), ember.ones(3)).shape
        torch.Size([2])
    """
    na, nb = input._array.ndim, other._array.ndim
    if na == 0 or nb == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are %dD "
                           "and %dD" % (na, nb))
    if na == 2 and nb == 2:
        return Mm.apply(input, other)
    if na == 1 and nb == 1:
        return Dot.apply(input, other)
    if na == 2 and nb == 1:
        return Mv.apply(input, other)
    if na == 1 and nb == 2:
        return Squeeze.apply(Mm.apply(Unsqueeze.apply(input, 0), other), (0,),
                             "SqueezeBackward4")
    if _should_fold(input, other):
        return _folded(input, other)
    _check_batches(input._array.shape[:-2], other._array.shape[:-2])
    return _batched(input, other)


def _check_batches(sa, sb):
    """torch's ``infer_size`` error for batch shapes that don't broadcast: the rightmost
    mismatch, numbered in the broadcast shape."""
    n = max(len(sa), len(sb))
    for i in range(n - 1, -1, -1):
        k = n - 1 - i
        da = sa[len(sa) - 1 - k] if k < len(sa) else 1
        db = sb[len(sb) - 1 - k] if k < len(sb) else 1
        if da != db and da != 1 and db != 1:
            raise RuntimeError("The size of tensor a (%d) must match the size of tensor b (%d) "
                               "at non-singleton dimension %d" % (da, db, i))


def _mT(t):
    return Transpose.apply(t, t._array.ndim - 2, t._array.ndim - 1)


def _should_fold(a, b):
    """torch's should_fold: fold the larger operand's batch into one mm/mv (no extra copy)."""
    a_larger = a._array.ndim >= b._array.ndim
    t1 = a._array if a_larger else b._array.swapaxes(-1, -2)
    dim_t2 = b._array.ndim if a_larger else a._array.ndim
    if not (t1.ndim >= 3 and dim_t2 <= 2):
        return False
    if (b if a_larger else a)._requires_grad:
        return True
    if a._array.ndim == 2:
        return False
    if t1.size == 0:
        return True
    shape, strides = t1.shape, t1.strides
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(t1.ndim - 2))


def _folded(a, b):
    transpose = b._array.ndim > a._array.ndim
    t1 = _mT(b) if transpose else a
    t2 = (T.apply(a) if a._array.ndim == 2 else a) if transpose else b
    sizes = t1._array.shape
    out_shape = sizes[:-1]
    t1f = reshape(t1, (math.prod(out_shape), sizes[-1]))
    if t2._array.ndim == 2:
        out = Reshape.apply(Mm.apply(t1f, t2), out_shape + (t2._array.shape[1],))
        if transpose:
            out = _mT(out)
            out = out if out._array.flags.c_contiguous else Clone.apply(out)
        return out
    return Reshape.apply(Mv.apply(t1f, t2), out_shape)


def _batched(a, b):
    aa, bb = a._array, b._array
    na, nb = aa.ndim, bb.ndim
    if na == 3 and nb == 3 and aa.shape[0] != bb.shape[0]:
        if aa.shape[0] == 1 and a._requires_grad:
            return matmul(Squeeze.apply(a, (0,), "SqueezeBackward1"), b)
        if bb.shape[0] == 1 and b._requires_grad:
            return matmul(a, Squeeze.apply(b, (0,), "SqueezeBackward1"))
    n = aa.shape[-2] if na > 1 else 1
    m1 = aa.shape[-1]
    m2 = bb.shape[-2] if nb > 1 else bb.shape[0]
    p = bb.shape[-1] if nb > 1 else 1
    batch = tuple(np.broadcast_shapes(aa.shape[:-2], bb.shape[:-2]))
    nbatch = math.prod(batch)
    a3 = reshape(Expand.apply(a, batch + (n, m1)), (nbatch, n, m1))
    if nb == 1:
        b3 = Unsqueeze.apply(reshape(Expand.apply(b, batch + (m2,)), (nbatch, m2)), 2)
    else:
        b3 = reshape(Expand.apply(b, batch + (m2, p)), (nbatch, m2, p))
    out_shape = batch + ((n,) if na > 1 else ()) + ((p,) if nb > 1 else ())
    out = _differentiable(Bmm.apply(a3, b3), a3, b3)
    if nb == 1:
        out = Squeeze.apply(out, (2,), "SqueezeBackward1")
    return Reshape.apply(out, out_shape)


def _scalar(x):
    return x.item() if isinstance(x, Tensor) else x


def _beta_first(op, pos, beta, alpha):
    """``(input, m1, m2, beta, alpha)`` of torch's deprecated calls ``op(beta, input, [alpha,]
    m1, m2)`` and ``input.op(beta, [alpha,] m1, m2)`` (``pos``: the positional arguments)."""
    method = isinstance(pos[0], Tensor)
    if len(pos) > 5 or beta != 1 or alpha != 1 or isinstance(pos[method], Tensor):
        raise TypeError("%s() takes %d positional arguments but %d were given"
                        % (op, 3 - method, len(pos) - method))
    mats = "Tensor %s, Tensor %s" % {"addmm": ("mat1", "mat2"), "addmv": ("mat", "vec")}.get(
        op, ("batch1", "batch2"))
    old = ("(Number beta, " + ("" if method else "Tensor input, ")
           + ("Number alpha, " if len(pos) == 5 else "") + mats + ("" if method else ", *, "
                                                                  "Tensor out = None") + ")")
    new = ["(%s, *, Number beta = 1, Number alpha = 1)" % mats] if method else [
        "(Tensor input, %s%s, *, Number beta = 1, Number alpha = 1, Tensor out = None)"
        % (mats, dt) for dt in ("", ", torch.dtype out_dtype")[:1 + (op in ("addmm", "baddbmm"))]]
    deprecated_overload("This overload of %s is deprecated:\n\t%s%s\nConsider using one of the "
                        "following signatures instead:%s" % (op, op, old, "".join(
                            "\n\t" + op + n for n in new)))
    rest = pos[2:] if len(pos) == 5 else (1,) + pos[2:]
    return pos[0] if method else pos[1], rest[1], rest[2], pos[1] if method else pos[0], rest[0]


def addmm(input, mat1, mat2, *args, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)``; ``input`` broadcasts to the product's shape.
    torch's deprecated ``addmm(beta, input, [alpha,] mat1, mat2)`` forms are accepted."""
    if args:
        input, mat1, mat2, beta, alpha = _beta_first("addmm", (input, mat1, mat2) + args, beta,
                                                     alpha)
    return _differentiable(Addmm.apply(input, mat1, mat2, _scalar(beta), _scalar(alpha)),
                           input, mat1, mat2)


def addmv(input, mat, vec, *args, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat @ vec)``."""
    if args:    # (torch's deprecated beta-first forms)
        input, mat, vec, beta, alpha = _beta_first("addmv", (input, mat, vec) + args, beta, alpha)
    return _differentiable(Addmv.apply(input, mat, vec, _scalar(beta), _scalar(alpha)),
                           input, mat, vec)


def baddbmm(input, batch1, batch2, *args, beta=1, alpha=1, out=None):
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    if args:    # (torch's deprecated beta-first forms)
        input, batch1, batch2, beta, alpha = _beta_first("baddbmm", (input, batch1, batch2)
                                                             + args, beta, alpha)
    return _differentiable(Baddbmm.apply(input, batch1, batch2, _scalar(beta),
                                         _scalar(alpha)), input, batch1, batch2)


def addbmm(input, batch1, batch2, *args, beta=1, alpha=1, out=None):
    """``beta * input + alpha * bmm(batch1, batch2).sum(0)``."""
    if args:    # (torch's deprecated beta-first forms)
        input, batch1, batch2, beta, alpha = _beta_first("addbmm", (input, batch1, batch2)
                                                             + args, beta, alpha)
    from .reduction import sum as _sum
    input, batch1, batch2 = _autocast.inputs("lower", (input, batch1, batch2))
    ia, b1, b2 = input._array, batch1._array, batch2._array
    _addbmm_shapes(input, b1, b2)
    if not (b1.size and b2.size):
        return _differentiable(
            AddbmmEmpty.apply(input, batch1, batch2, _scalar(beta), _scalar(alpha)),
            input, batch1, batch2)
    _addmm_dtypes(ia, b1, b2)
    _no_bool(b1, "addmm_impl_cpu_")
    if ia.dtype.kind in "iu":   # (torch casts the scalars to the integer type)
        beta, alpha = int(_scalar(beta)), int(_scalar(alpha))
    if _low(ia.dtype):
        # (torch's loop of addmm_ calls, each rounded once to half or bfloat16)
        out = input.expand(b1.shape[1], b2.shape[2])
        for i in range(b1.shape[0]):
            out = addmm(out, batch1[i], batch2[i], beta=beta if i == 0 else 1, alpha=alpha)
        return out
    prod = _sum(bmm(batch1, batch2), 0, dtype=input.dtype if ia.dtype.kind in "iu" else None)
    prod = prod * alpha if alpha != 1 else prod
    return prod + (input * beta if beta != 1 else input)


def _addbmm_shapes(input, b1, b2):
    """torch's checks of addbmm before its per-batch ``addmm_`` calls (whose dtype checks
    come later): input expands to the result, then the batches' dimensions and sizes."""
    shape = (b1.shape[wrap_dim(1, b1.ndim)], b2.shape[wrap_dim(2, b2.ndim)])
    _expand_input(xp_of(input), input._array, shape)
    if b1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if b1.shape[0] != b2.shape[0]:
        raise RuntimeError("batch1 and batch2 must have same number of batches, got %d and %d"
                           % (b1.shape[0], b2.shape[0]))
    if b1.shape[2] != b2.shape[1]:
        raise RuntimeError("Incompatible matrix sizes for bmm (%dx%d and %dx%d)"
                           % (b1.shape[1], b1.shape[2], b2.shape[1], b2.shape[2]))


class AddbmmEmpty(Function):
    """``addbmm`` of a product with no terms (no batch, nothing to sum, or an empty result),
    as torch's loop of ``addmm_`` calls leaves it: ``beta * input`` or zeros."""

    node_name = "AddbmmBackward0"

    @staticmethod
    def forward(ctx, inp, batch1, batch2, beta, alpha):
        ia, b1, b2 = inp._array, batch1._array, batch2._array
        xp = xp_of(inp)
        shape = (b1.shape[1], b2.shape[2])
        base = _expand_input(xp, ia, shape)
        if b1.shape[0]:     # (each addmm_ call checks the dtypes; the first applies beta)
            _addmm_dtypes(ia, b1, b2)
        if beta == 0 or base.size == 0:
            out = xp.zeros(shape, dtype=ia.dtype)
        else:
            _check_scale(ia.dtype, beta)
            out = base * beta
        if b1.shape[0] > 1 and base.size:
            _check_scale(ia.dtype, 1)   # (the later calls scale by an int 1)
        ctx.beta = beta
        ctx.save_for_backward(batch1, batch2)
        return Tensor._wrap(xp.ascontiguousarray(out, dtype=ia.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        from .creation import zeros_like
        b1, b2 = ctx.saved_tensors
        need = ctx.needs_input_grad
        gi = sum_to(grad_output * ctx.beta, ctx._input_meta(0)[0]) if need[0] else None
        # (torch's formulas are empty bmm calls, of batch2's dtype for batch1 and the
        # gradient's for batch2: its engine checks those dtypes against the inputs)
        if need[1]:
            _check_grad_dtype(b2._array.dtype, ctx, 1)
        if need[2]:
            _check_grad_dtype(grad_output._array.dtype, ctx, 2)
        return (gi, zeros_like(b1) if need[1] else None, zeros_like(b2) if need[2] else None,
                None, None)


def _expand_input(xp, ia, shape):
    """``input`` broadcast to the product's ``shape``, with torch's expand error."""
    try:
        return xp.broadcast_to(ia, shape)
    except ValueError:
        pass
    shape = tuple(shape)
    if ia.ndim > len(shape):
        raise RuntimeError("expand(torch.%s{%s}, size=%s): the number of sizes provided (%d) must "
                           "be greater or equal to the number of dimensions in the tensor (%d)"
                           % (from_numpy_dtype(ia.dtype)._legacy, list(ia.shape), list(shape),
                              len(shape), ia.ndim))
    for d in range(len(shape) - 1, -1, -1):
        k = d - (len(shape) - ia.ndim)
        if k >= 0 and ia.shape[k] != 1 and ia.shape[k] != shape[d]:
            raise RuntimeError("The expanded size of the tensor (%d) must match the existing "
                               "size (%d) at non-singleton dimension %d.  Target sizes: %s.  "
                               "Tensor sizes: %s" % (shape[d], ia.shape[k], d, list(shape),
                                                     list(ia.shape)))
    raise AssertionError("unreachable")


def chain_matmul(*matrices, out=None):
    """``matrices[0] @ matrices[1] @ ...`` (deprecated in torch in favour of linalg.multi_dot)."""
    warn_once("chain_matmul", "torch.chain_matmul is deprecated and will be removed in a future "
              "PyTorch release. Use torch.linalg.multi_dot instead, which accepts a list of two "
              "or more tensors rather than multiple parameters.")
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m._array.ndim != 2:
            raise RuntimeError("Tensor dimension is %d, expected 2 instead." % m._array.ndim)
    if len(matrices) == 1:
        return Clone.apply(matrices[0])
    return _multi_dot(matrices)


def _multi_dot(tensors):
    """torch's linalg.multi_dot (and chain_matmul's product): the checks, then the cheapest
    order of the chain."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError("multi_dot(): expected at least 2 tensors but got %d" % n)
    dims = [t.dim() for t in tensors]
    if dims[0] not in (1, 2):
        raise RuntimeError("multi_dot(): the first tensor must be 1D or 2D but got %dD" % dims[0])
    if dims[-1] not in (1, 2):
        raise RuntimeError("multi_dot(): the last tensor must be 1D or 2D but got %dD" % dims[-1])
    for i in range(1, n - 1):
        if dims[i] != 2:
            raise RuntimeError("multi_dot(): tensor %d must be 2D but got %dD" % (i, dims[i]))
    for i in range(1, n):
        if tensors[i].dtype != tensors[0].dtype:
            raise RuntimeError("multi_dot(): all tensors must have be the same dtype but tensor 0 "
                               "is %s and tensor %d %s"
                               % (_cpp_name(tensors[0]._array.dtype), i,
                                  _cpp_name(tensors[i]._array.dtype)))
    shapes = [tuple(t.shape) for t in tensors]
    for i in range(n - 1):
        left = shapes[i][-1]
        right = shapes[i + 1][0]
        if left != right:
            raise RuntimeError("multi_dot(): tensors %d and %d with shapes [%s] and [%s] cannot be "
                               "multiplied" % (i, i + 1, ", ".join(map(str, shapes[i])),
                                               ", ".join(map(str, shapes[i + 1]))))
    ts = list(tensors)
    if dims[0] == 1:    # (a row vector, and a column vector last, as torch)
        ts[0] = ts[0].unsqueeze(0)
    if dims[-1] == 1:
        ts[-1] = ts[-1].unsqueeze(-1)
    if n == 3:      # (torch compares the two orders directly)
        a, b = ts[0].shape
        c, d = ts[2].shape
        if a * c * (b + d) > b * d * (a + c):
            res = mm(ts[0], mm(ts[1], ts[2]))
        else:
            res = mm(mm(ts[0], ts[1]), ts[2])
    else:
        res = _chain(ts, _chain_order(ts), 0, n - 1)
    shape = shapes[0][:-1] + shapes[-1][1:]
    return res.view(shape)


def _chain_order(ts):
    """The split points of the cheapest order of a matrix chain (Cormen et al., as torch)."""
    n = len(ts)
    p = [t.shape[0] for t in ts] + [ts[-1].shape[1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain(ts, split, i, j):
    if i == j:
        return ts[i]
    k = split[i][j]
    return mm(_chain(ts, split, i, k), _chain(ts, split, k + 1, j))


def kron(input, other, *, out=None):
    """Kronecker product."""
    a, b = input, other
    nd = max(a._array.ndim, b._array.ndim)
    sa = (1,) * (nd - a._array.ndim) + a._array.shape
    sb = (1,) * (nd - b._array.ndim) + b._array.shape
    shape_a = tuple(x for s in sa for x in (s, 1))
    shape_b = tuple(x for s in sb for x in (1, s))
    out_shape = tuple(x * y for x, y in zip(sa, sb))
    _check_kron_view(input._array, other._array, shape_a, shape_b, out_shape)
    # (torch's _unsafe_view of both inputs and of the product: UnsafeViewBackward0)
    return Reshape.apply(Reshape.apply(a, shape_a) * Reshape.apply(b, shape_b), out_shape)


def _check_kron_view(aa, bb, shape_a, shape_b, out_shape):
    """torch's kron views ``input * other`` (interleaved dims) as the result: the product,
    laid out by TensorIterator after its operands' strides, may not allow that view."""
    if not (aa.size and bb.size) or not aa.ndim or not bb.ndim:
        return
    pad_a, pad_b = (1,) * (len(shape_a) // 2 - aa.ndim), (1,) * (len(shape_b) // 2 - bb.ndim)
    ops_ = []
    for arr, pad, shape in ((aa, pad_a, shape_a), (bb, pad_b, shape_b)):
        st = view_strides(pad + arr.shape, (0,) * len(pad) + tuple(
            x // arr.itemsize for x in arr.strides), shape)
        ops_.append([0 if n == 1 and m != 1 else s * arr.itemsize
                     for s, n, m in zip(st, shape, np.broadcast_shapes(shape_a, shape_b))])
    full = np.broadcast_shapes(shape_a, shape_b)
    nd = len(full)
    perm = _iter_perm(full, ops_)     # (TensorIterator's order, fastest first)
    strides = [0] * nd
    step = 1
    for d in perm:
        strides[d] = step
        step *= full[d]
    if view_strides(full, strides, out_shape) is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.")


def _check_einsum_labels(equation):
    """torch's errors for a bad character or output subscript in an einsum equation."""
    arrow = equation.find("->")
    for i, c in enumerate(equation):
        if arrow >= 0 and arrow <= i <= arrow + 1 or c in ". " or c.isascii() and c.isalpha():
            continue
        if c == "," and (arrow < 0 or i < arrow):
            continue
        raise RuntimeError("einsum(): invalid subscript given at index %d in the equation "
                           "string, subscripts must be in [a-zA-Z]" % i)
    if arrow < 0:
        return
    seen = set()
    for c in equation[arrow + 2:]:
        if not c.isalpha():
            continue
        if c in seen:
            raise RuntimeError("einsum(): output subscript %s appears more than once in the "
                               "output" % c)
        if c not in equation[:arrow]:
            raise RuntimeError("einsum(): output subscript %s does not appear in the equation "
                               "for any input operand" % c)
        seen.add(c)


def _parse_einsum(equation, shapes):
    """Subscripts per operand and for the output, ellipses spelled out as capital letters."""
    _check_einsum_labels(equation)
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, rhs = eq.split("->")
    else:
        lhs, rhs = eq, None
    ins = lhs.split(",")
    if len(ins) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                           "equation")
    if len(ins) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    n_ell = 0
    for sub, shape in zip(ins, shapes):
        if "..." in sub:
            n_ell = max(n_ell, len(shape) - (len(sub) - 3))
    ell = "".join(chr(ord("A") + i) for i in range(n_ell))
    out_ins = []
    for k, (sub, shape) in enumerate(zip(ins, shapes)):
        if "..." in sub:
            n = len(shape) - (len(sub) - 3)
            sub = sub.replace("...", ell[n_ell - n:] if n else "")
        if len(sub) != len(shape):
            raise RuntimeError("einsum(): the number of subscripts in the equation (%d) does not "
                               "match the number of dimensions (%d) for operand %d%s"
                               % (len(sub), len(shape), k,
                                  "" if "..." in ins[k] else " and no ellipsis was given"))
        out_ins.append(sub)
    if rhs is None:
        letters = "".join(out_ins)
        rhs = ell + "".join(sorted(c for c in set(letters) if c.islower()
                                   and letters.count(c) == 1))
    else:
        rhs = rhs.replace("...", ell)
    return out_ins, rhs


def _einsum_apply(subs, out_sub, operands):
    """The einsum of operands that need no graph, in one array call."""
    eq = ",".join(subs) + "->" + out_sub
    arrs = [o._array for o in operands]
    xp = xp_of(operands[0])
    d = arrs[0].dtype
    if d.kind == "V":    # (bfloat16: computed in float32, rounded once, as torch)
        arrs = [x.astype(np.float32) for x in arrs]
    out = xp.asarray(xp.einsum(eq, *arrs, optimize=len(arrs) > 2))
    return Tensor._wrap(out.astype(d, copy=False))


def einsum(equation, *operands):
    """Einstein summation, e.g. ``einsum('bij,bjk->bik', a, b)``; ``...`` broadcasts.

    Example:
        >>> import ember
        >>> ember.einsum('ij,j->i', ember.ones(2, 3), ember.ones(3))
        tensor([3., 3.])
    """
    from .shape import expand
    if isinstance(equation, Tensor):
        equation, operands = _sublist_equation((equation,) + operands)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    subs, out_sub = _parse_einsum(equation, [o._array.shape for o in operands])
    # (the one-call path needs one float dtype; torch's own steps promote or refuse a
    # mixture, and give integer sums and bool products torch's dtypes and errors)
    d = operands[0]._array.dtype
    # (and under autocast: its products run as torch's bmm steps, each cast by autocast)
    graph = _grad_state.enabled and any(o._requires_grad for o in operands) or \
        d.kind in "biu" or any(o._array.dtype != d for o in operands) or \
        bool(_grad_state.autocast)
    sizes = {}
    for k, (sub, o) in enumerate(zip(subs, operands)):
        for c, n in zip(sub, o._array.shape):
            if c in sizes and sizes[c] != n and n != 1 and sizes[c] != 1:
                raise RuntimeError("einsum(): subscript %s has size %d for operand %d which does "
                                   "not broadcast with previously seen size %d"
                                   % (c, n, k, sizes[c]))
            if sizes.get(c, 1) == 1:
                sizes[c] = n
    if graph:
        return _einsum_graph(equation, operands)
    ops_ = []
    for sub, o in zip(subs, operands):
        want = tuple(sizes[c] for c in sub)
        if want != o._array.shape and len(set(sub)) == len(sub):
            o = expand(o, want)
        ops_.append(o)
    return _einsum_apply(subs, out_sub, ops_)


_ELLIPSIS = 52


def _label(c):
    """torch's subscript of a label: A-Z are 0-25, a-z are 26-51."""
    return ord(c) - ord("A") if c.isupper() else ord(c) - ord("a") + 26


def _einsum_graph(equation, operands):
    """``einsum`` as torch computes it (so with its graph): each operand's diagonals taken,
    missing dims unsqueezed and dims permuted to (output, contracted); then operands reduced
    left to right, each pair by ``_sumproduct_pair`` (permute, reshape, bmm)."""
    lhs, arrow, rhs = equation.partition("->")
    op_labels = [[_ELLIPSIS if c == "." else _label(c) for c in
                  part.replace(" ", "").replace("...", ".")] for part in lhs.split(",")]
    count = [0] * _ELLIPSIS
    ell_num_dim = 0
    for labels, o in zip(op_labels, operands):
        for s in labels:
            if s == _ELLIPSIS:
                ell_num_dim = max(ell_num_dim, o._array.ndim - len(labels) + 1)
            else:
                count[s] += 1
    perm_index = [-1] * _ELLIPSIS
    n_perm = ell_index = 0
    ell_in_output = not arrow
    if not arrow:   # (implicit output: the ellipsis, then the labels seen once, in order)
        n_perm = ell_num_dim
        for s in range(_ELLIPSIS):
            if count[s] == 1:
                perm_index[s] = n_perm
                n_perm += 1
    else:
        for c in rhs.replace(" ", "").replace("...", "."):
            if c == ".":
                ell_index, ell_in_output = n_perm, True
                n_perm += ell_num_dim
            else:
                perm_index[_label(c)] = n_perm
                n_perm += 1
    out_num_dim = n_perm
    if not ell_in_output:
        ell_index = n_perm
        n_perm += ell_num_dim
    for s in range(_ELLIPSIS):
        if count[s] and perm_index[s] == -1:
            perm_index[s] = n_perm
            n_perm += 1
    dim_counts = [0] * n_perm
    ops_ = []
    for labels, op in zip(op_labels, operands):
        perm = [-1] * n_perm
        dim = 0
        for s in labels:
            if s == _ELLIPSIS:
                ndim = op._array.ndim - len(labels) + 1
                for j in range(ell_num_dim - ndim, ell_num_dim):
                    if op._array.shape[dim] != 1:
                        dim_counts[ell_index + j] += 1
                    perm[ell_index + j] = dim
                    dim += 1
            elif perm[perm_index[s]] == -1:
                if op._array.shape[dim] != 1:
                    dim_counts[perm_index[s]] += 1
                perm[perm_index[s]] = dim
                dim += 1
            else:   # (a repeated label: its diagonal)
                prev = perm[perm_index[s]]
                op = op.diagonal(0, prev, dim).movedim(-1, prev)
        for k in range(n_perm):
            if perm[k] == -1:
                op = op.unsqueeze(dim)
                perm[k] = dim
                dim += 1
        ops_.append(op.permute(perm))
    while len(ops_) > 1:
        a, b = ops_[0], ops_[1]
        sum_dims, a_sum, b_sum = [], [], []
        for dim in range(out_num_dim, n_perm):
            if a._array.shape[dim] != 1 and b._array.shape[dim] != 1:
                dim_counts[dim] -= 1
                if dim_counts[dim] == 1:
                    sum_dims.append(dim)
                    dim_counts[dim] = 0
            elif dim_counts[dim] == 1:
                if a._array.shape[dim] != 1:
                    a_sum.append(dim)
                    dim_counts[dim] = 0
                elif b._array.shape[dim] != 1:
                    b_sum.append(dim)
                    dim_counts[dim] = 0
        if a_sum:
            a = a.sum(a_sum, True)
        if b_sum:
            b = b.sum(b_sum, True)
        ops_[:2] = [_sumproduct_pair(a, b, sum_dims)]
    out = ops_[0]
    if n_perm > out_num_dim:
        if len(operands) > 1:
            return out.view(out._array.shape[:out_num_dim])
        return out.sum(list(range(out_num_dim, n_perm)))
    return out


def _sumproduct_pair(left, right, sum_dims):
    """``(left * right).sum(sum_dims, keepdim=True)`` of two aligned operands, through one bmm
    (torch's sumproduct_pair)."""
    if not sum_dims:
        return left * right
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(left._array.ndim):
        nl, nr = left._array.shape[i], right._array.shape[i]
        if i in sum_dims:
            if nl != 1 and nr != 1:
                sum_size *= nl
            elif nl != 1:
                left = left.sum(i, True)
            elif nr != 1:
                right = right.sum(i, True)
        elif nl != 1 and nr != 1:
            lro.append(i)
            lro_size *= nl
        elif nl != 1:
            lo.append(i)
            lo_size *= nl
        else:
            ro.append(i)
            ro_size *= nr
    out_size = ([left._array.shape[d] for d in lro + lo] + [1] * len(sum_dims)
                + [right._array.shape[d] for d in ro])
    order = lro + lo + sum_dims + ro
    out_perm = [0] * len(order)
    for i, d in enumerate(order):
        out_perm[d] = i
    left = left.permute(order).reshape(lro_size, lo_size, sum_size)
    right = right.permute(lro + sum_dims + ro + lo).reshape(lro_size, sum_size, ro_size)
    return bmm(left, right).view(out_size).permute(out_perm)


def _sublist_equation(args):
    """``einsum(a, [0, 1], b, [1, 2], [0, 2])`` as an equation string and its operands (the
    subscripts in use become a, b, ... in their order)."""
    sublists = list(args[1::2])
    for sub in sublists:
        for s in sub:
            if s is not Ellipsis and not 0 <= s < 52:
                raise ValueError("einsum(): subscript in subscript list is not within the valid "
                                 "range [0, 52)")
    used = sorted({s for sub in sublists for s in sub if s is not Ellipsis})
    letter = {s: "abcdefghijklmnopqrstuvwxyz"[i] for i, s in enumerate(used)}

    def letters(sub):
        return "".join("..." if s is Ellipsis else letter[s] for s in sub)
    operands = args[0::2][:len(args) // 2]
    subs = [letters(s) for s in args[1::2][:len(args) // 2]]
    eq = ",".join(subs)
    if len(args) % 2:
        eq += "->" + letters(args[-1])
    return eq, tuple(operands)


def tensordot(a, b, dims=2, out=None):
    """Contract ``a``'s last ``dims`` dims with ``b``'s first (or the given pairs of dims)."""
    from .reduction import sum as _sum
    from .shape import permute, reshape, squeeze
    na, nb = a._array.ndim, b._array.ndim
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise RuntimeError("tensordot expects dims >= 0, but got dims=%d" % dims)
        if dims > min(na, nb):
            raise RuntimeError("tensordot expects dims < ndim_a or ndim_b, but got dims=%d"
                               % dims)
        given_a, given_b = list(range(-dims, 0)), list(range(dims))
    else:
        given_a, given_b = dims
        given_a = [given_a] if isinstance(given_a, int) else list(given_a)
        given_b = [given_b] if isinstance(given_b, int) else list(given_b)
    if len(given_a) != len(given_b):
        raise RuntimeError("both dimension lists should have same length")
    if a._array.dtype != b._array.dtype:
        raise RuntimeError("both inputs should have same dtype")
    da = [wrap_dim(d, na, "tensordot") for d in given_a]
    db = [wrap_dim(d, nb, "tensordot") for d in given_b]
    k = 1
    t1, t2 = a, b
    for x, y, gx, gy in zip(da, db, given_a, given_b):
        sa, sb = a._array.shape[x], b._array.shape[y]
        # (torch sums a dim that meets a broadcast size-1 dim right away)
        if sb == 1:
            t1 = _sum(t1, x, True, dtype=t1.dtype)
        elif sa == 1:
            t2 = _sum(t2, y, True, dtype=t2.dtype)
        elif sa != sb:
            raise RuntimeError("contracted dimensions need to match, but first has size %d in "
                               "dim %d and second has size %d in dim %d" % (sa, gx, sb, gy))
        else:
            k *= sa
    fa = [d for d in range(na) if d not in da]
    fb = [d for d in range(nb) if d not in db]
    size_a = math.prod(a._array.shape[d] for d in fa)
    size_b = math.prod(b._array.shape[d] for d in fb)
    shape = tuple(a._array.shape[d] for d in fa) + tuple(b._array.shape[d] for d in fb)
    pa, pb = permute(t1, fa + da), permute(t2, db + fb)
    if size_a == 1 and size_b == 1:
        # NOTE: torch takes dot for one output element when both permuted operands are
        # contiguous, else a product summed in the input dtype (which bool supports).
        if pa.is_contiguous() and pb.is_contiguous():
            flat_a = pa if pa.dim() == 1 else reshape(pa, (k,))     # (flatten: no node on 1-D)
            flat_b = pb if pb.dim() == 1 else reshape(pb, (k,))
            return reshape(dot(flat_a, flat_b), shape)
        prod = squeeze(pa) * squeeze(pb)
        return reshape(_sum(prod, dtype=prod.dtype), shape)
    return reshape(mm(reshape(pa, (size_a, k)), reshape(pb, (k, size_b))), shape)


def inner(input, other, *, out=None):
    """Sum-product over the last dims (``dot`` for 1-D inputs)."""
    if input._array.ndim == 0 or other._array.ndim == 0:
        return input * other
    sa, sb = input._array.shape, other._array.shape
    if sa[-1] != sb[-1]:
        raise RuntimeError("inner() the last dimension must match on both input tensors but got "
                           "shapes %s and %s" % (list(sa), list(sb)))
    return tensordot(input, other, ([-1], [-1]))


