"""Complex tensors: real/imag views, view_as_real/view_as_complex, complex, polar, angle, conj.

Gradients follow torch's convention for complex inputs: ``z.grad`` is the conjugate Wirtinger
derivative ``dL/d(conj z)`` times 2, i.e. ``dL/dRe(z) + i dL/dIm(z)`` for a real loss ``L``.
"""
import math

from .. import dtypes as _dt
from ..autograd.function import Function
from ..backend import quiet as _quiet
from ..dtypes import complex32
from ..tensor import Tensor
from ._util import check_shapes_broadcast, need_tensors, sum_to, xp_of
from ._inplace import inplace
from .shape import Clone, _view_of, select
from .unary import sgn

__all__ = ["real", "imag", "view_as_real", "view_as_complex", "complex", "polar", "angle",
           "conj", "conj_physical", "conj_physical_", "resolve_conj", "resolve_neg", "is_conj",
           "is_neg", "is_complex"]


def _zeros_like(t):
    return Tensor._wrap(xp_of(t).zeros_like(t._array))


def _pairs(xp, re, im):
    """The complex array ``re + 1j * im`` (broadcast; exact also for infinite parts)."""
    shape = check_shapes_broadcast("complex", re.shape, im.shape)
    pairs = xp.stack([xp.broadcast_to(re, shape), xp.broadcast_to(im, shape)], axis=-1)
    return pairs.view(_dt.from_numpy_dtype(re.dtype).to_complex().np)[..., 0]


class Complex(Function):
    """``real + 1j * imag`` from two real tensors of one floating dtype (broadcasting)."""

    node_name = "ComplexBackward0"

    @staticmethod
    def forward(ctx, re, im):
        return Tensor._wrap(_pairs(xp_of(re), re._array, im._array))

    @staticmethod
    def backward(ctx, grad_output):
        need = ctx.needs_input_grad
        gr = sum_to(real(grad_output), ctx._input_meta(0)[0]) if need[0] else None
        gi = sum_to(imag(grad_output), ctx._input_meta(1)[0]) if need[1] else None
        return gr, gi


class Polar(Function):
    """``abs * (cos(angle) + 1j * sin(angle))``."""

    node_name = "PolarBackward0"

    @staticmethod
    def forward(ctx, r, theta):
        xp = xp_of(r)
        ra, ta = r._array, theta._array
        check_shapes_broadcast("polar", ra.shape, ta.shape)
        out = Tensor._wrap(_pairs(xp, ra * xp.cos(ta), ra * xp.sin(ta)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        out, = ctx.saved_tensors
        need = ctx.needs_input_grad
        g = conj(grad_output)
        # NOTE: torch's polar_backward: Re(conj(grad) * sgn(out)) for abs (so a negative abs
        # flips the sign and a zero one gets 0) and Re(conj(grad) * 1j * out) for angle.
        gr = sum_to(real(g * sgn(out)), ctx._input_meta(0)[0]) if need[0] else None
        gt = sum_to(real(g * (out * 1j)), ctx._input_meta(1)[0]) if need[1] else None
        return gr, gt


class ViewAsReal(Function):
    """A complex tensor as a real one with a last dimension of 2 (real, imag), a view."""

    node_name = "ViewAsRealBackward0"

    @staticmethod
    def forward(ctx, a):
        arr = a._array
        real_np = _dt.from_numpy_dtype(arr.dtype).to_real().np
        return _view_of(a, arr[..., None].view(real_np), ViewAsReal)

    @staticmethod
    def backward(ctx, grad_output):
        return view_as_complex(grad_output.contiguous())


class ViewAsComplex(Function):
    """A real tensor with a last dimension of 2 as a complex one, a view."""

    node_name = "ViewAsComplexBackward0"

    @staticmethod
    def forward(ctx, a):
        arr = a._array
        cplx = _dt.from_numpy_dtype(arr.dtype).to_complex().np
        if arr.size == 0:     # (no memory to share; NumPy may give an empty array any strides)
            return _view_of(a, xp_of(a).empty(arr.shape[:-1], dtype=cplx), ViewAsComplex)
        return _view_of(a, arr.view(cplx)[..., 0], ViewAsComplex)

    @staticmethod
    def backward(ctx, grad_output):
        return ViewAsReal.apply(grad_output)     # (the data is conjugated already)


class Conj(Function):
    """The complex conjugate (a copy: ember has no conjugate bit)."""

    node_name = "ConjBackward0"

    @staticmethod
    def forward(ctx, a, name=None):
        out = Tensor._wrap(xp_of(a).conj(a._array))
        if name is not None:
            ctx.set_node_name(name)
        else:   # (torch's lazy conj: the result reports is_conj() until resolved)
            out._conj_bit = True
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return conj(grad_output), None


class Angle(Function):
    """The argument of each element (0 or pi for real tensors)."""

    node_name = "AngleBackward0"

    @staticmethod
    def forward(ctx, a):
        xp = xp_of(a)
        arr = a._array
        if arr.dtype.kind in "iub":
            arr = arr.astype(_dt.get_default_dtype().np)
        ctx.save_for_backward(a)
        if arr.dtype.kind != "c":   # (torch: pi below 0, else 0 (-0.0 too); nan stays nan)
            t = arr.dtype.type
            out = xp.where(xp.isnan(arr), arr, xp.where(arr < 0, t(math.pi), t(0)))
            return Tensor._wrap(out)
        with _quiet():
            out = xp.angle(arr)
        return Tensor._wrap(xp.asarray(out, dtype=_dt.from_numpy_dtype(arr.dtype).to_real().np))

    @staticmethod
    def backward(ctx, grad_output):
        from .comparison import where
        a, = ctx.saved_tensors
        if a._array.dtype.kind != "c":    # (zeros: an inf/nan upstream gradient gives 0)
            return Tensor._wrap(xp_of(grad_output).zeros_like(grad_output._array))
        # d angle = (x dy - y dx) / |z|^2: the gradient grad * i z / |z|^2, 0 at 0
        r2 = real(a) * real(a) + imag(a) * imag(a)
        g = Complex.apply(-grad_output * imag(a), grad_output * real(a)) / r2
        return where(r2 == 0, 0.0, g)


def real(input):
    """The real part: a view of a complex tensor, ``input`` itself for a real one.

    Example:
        >>> import ember
        >>> z = ember.tensor([1 + 2j, 3 - 1j])
        >>> z.real
        tensor([1., 3.])
    """
    if input._array.dtype.kind != "c":
        return input
    if is_conj(input):      # (torch's graph: Select over ViewAsReal over _conj)
        return select(ViewAsReal.apply(Conj.apply(input, "ConjBackward0")), -1, 0)
    return select(view_as_real(input), -1, 0)     # (torch's graph: Select over ViewAsReal)


def imag(input):
    """The imaginary part of a complex tensor, as a view."""
    if input._array.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    if is_conj(input):      # (torch's graph: Select over NegView over ViewAsReal over _conj)
        return select(_NegView.apply(ViewAsReal.apply(Conj.apply(input, "ConjBackward0"))),
                      -1, 1)
    return select(view_as_real(input), -1, 1)


def view_as_real(input):
    """A complex tensor seen as real with a trailing dimension of size 2 (a view)."""
    if input._array.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if is_conj(input):
        raise RuntimeError(
            "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the "
            "conjugate tensor so you can view it as real, use self.resolve_conj(); however, be "
            "warned that the resulting tensor will NOT alias the original.")
    return ViewAsReal.apply(input)


class _NegView(Function):
    """``-a`` as torch's lazy negative view (the imaginary part of a conjugated tensor)."""

    node_name = "NegViewBackward0"

    @staticmethod
    def forward(ctx, a):
        return Tensor._wrap(-a._array)

    @staticmethod
    def backward(ctx, grad_output):
        return -grad_output


def view_as_complex(input):
    """A real tensor with a trailing dimension of size 2 seen as complex (a view)."""
    arr = input._array
    if arr.dtype.kind != "f":
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           "tensors, but got a tensor of scalar type: %s"
                           % _dt.scalar_type_name(arr.dtype))
    if arr.ndim == 0 or arr.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    item = arr.itemsize
    if arr.size and arr.strides[-1] != item:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if arr.size and any(st % (2 * item) for n, st in zip(arr.shape[:-1], arr.strides[:-1])
                        if n > 1):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if arr.dtype.itemsize == 2:
        complex32.np    # raises: NumPy has no complex32
    return ViewAsComplex.apply(input)


def _same_float(a, b):
    da, db = a._array.dtype, b._array.dtype
    names = (_dt.scalar_type_name(da), _dt.scalar_type_name(db))
    if da.kind != "f" or db.kind != "f":
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got %s "
                           "and %s" % names)
    if da != db:
        raise RuntimeError("Expected object of scalar type %s but got scalar type %s for second "
                           "argument" % names)
    if da.itemsize == 2:
        complex32.np    # raises: NumPy has no complex32


def complex(real, imag, *, out=None):
    """``real + 1j * imag`` from two real tensors of the same floating dtype.

    Example:
        >>> import ember
        >>> ember.complex(ember.tensor([1., 2.]), ember.tensor([3., -4.]))
        tensor([1.+3.j, 2.-4.j])
    """
    need_tensors("complex", real, imag, ("real", "imag"))
    _same_float(real, imag)
    return Complex.apply(real, imag)


def polar(abs, angle, *, out=None):
    """The complex tensor ``abs * exp(1j * angle)``."""
    need_tensors("polar", abs, angle, ("abs", "angle"))
    if abs._array.dtype == angle._array.dtype == _dt.float16.np:
        raise NotImplementedError("\"polar_cpu\" not implemented for '%s'"
                                  % _dt.scalar_type_name(abs._array.dtype))
    _same_float(abs, angle)
    return Polar.apply(abs, angle)


def angle(input, *, out=None):
    """The argument of each element in radians (a real tensor)."""
    return Angle.apply(input)


def conj(input):
    """The complex conjugate; ``input`` itself for a real tensor."""
    if input._array.dtype.kind != "c":
        return input
    out = Conj.apply(input)
    if getattr(input, "_conj_bit", False):     # (conj of a conj view: the bit cancels)
        del out._conj_bit
    return out


def conj_physical(input, *, out=None):
    """The complex conjugate (computed now); ``input`` itself for a real tensor."""
    if input._array.dtype.kind != "c":
        return input
    return Conj.apply(input, "ConjPhysicalBackward0")


def conj_physical_(input):
    """Conjugate ``input`` in place."""
    if input._array.dtype.kind != "c":
        return input
    return inplace(input, conj_physical)


def resolve_conj(input):
    """``input`` with its conjugation applied: a copy for the result of ``conj`` (ember
    conjugates eagerly, so only the copy and its graph node remain), else ``input`` itself."""
    if getattr(input, "_conj_bit", False):
        return Clone.apply(input)
    return input


def resolve_neg(input):
    """``input`` with its negation applied (ember negates eagerly: ``input`` itself)."""
    return input


def is_conj(input):
    """Whether ``input`` is the unresolved result of ``conj`` (torch's conjugate bit)."""
    return getattr(input, "_conj_bit", False)


def is_neg(input):
    """Whether ``input`` carries a lazy negative bit (never in ember)."""
    return False


def is_complex(input):
    """Whether ``input`` has a complex dtype."""
    return input._array.dtype.kind == "c"
