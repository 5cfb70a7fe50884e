"""Fake quantization (``fake_quantize_per_tensor_affine``, ``fake_quantize_per_channel_affine``):
quantization-aware training's rounding, with straight-through gradients."""
import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import not_implemented_for, wrap_dim, xp_of

__all__ = ["fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine"]

_QMIN_MAX = "`quant_min` should be less than or         equal to `quant_max`."
_ZP_RANGE = "`zero_point` must be between `quant_min` and `quant_max`."


class FakeQuantizePerTensorAffineCachemask(Function):
    """The fake-quantized ``out_arr`` of ``input``; the gradient passes where ``mask_arr``."""

    node_name = "FakeQuantizePerTensorAffineCachemaskBackward0"

    @staticmethod
    def forward(ctx, input, out_arr, mask_arr):
        ctx.save_for_backward(Tensor._wrap(mask_arr))
        return Tensor._wrap(out_arr)

    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        return grad_output * mask, None, None


class FakeQuantizePerTensorAffineCachemaskTensorQparams(FakeQuantizePerTensorAffineCachemask):
    """(the Tensor ``scale``/``zero_point`` form's node)"""

    node_name = "FakeQuantizePerTensorAffineCachemaskTensorQparamsBackward0"


class FakeQuantizePerChannelAffineCachemask(FakeQuantizePerTensorAffineCachemask):
    """(the per-channel form's node)"""

    node_name = "FakeQuantizePerChannelAffineCachemaskBackward0"


def _fake_quant(input, scale, zp, qmin, qmax, kernel, int_cast):
    """torch's CPU kernels: ``(clamp(zp + rint(x * (1/scale))) - zp) * scale`` with the scale
    and its inverse in float32, the product in float32 (float64 for a float64 input) and the
    clamp in float64. ``int_cast``: the rounded value goes through int64 (NaN and overflow
    become INT64_MIN), as the per-channel kernel's does. Returns (output, in-range mask)."""
    a = input._array
    not_implemented_for(a, kernel, "biuc")
    xp = xp_of(input)
    cdt = np.float64 if a.dtype == np.float64 else np.float32
    scale = xp.asarray(scale).astype(np.float32)
    zp = xp.asarray(zp)
    with np.errstate(all="ignore"):
        inv = (np.float32(1) / scale).astype(cdt)
        if zp.dtype.kind == "f":      # (float zero points: lrintf(zp + x / scale))
            q = xp.rint((a.astype(cdt) * inv + zp.astype(cdt)).astype(np.float32))
        else:
            q = xp.rint(a.astype(cdt) * inv) + zp.astype(cdt)
        q = q.astype(np.float64)
        mask = (q >= qmin) & (q <= qmax)
        if int_cast:
            q = xp.where(xp.abs(q) < 2.0**63, q, -2.0**63)
        out = (xp.fmin(xp.fmax(q, qmin), qmax) - zp) * scale.astype(np.float64)
    out = out.astype(a.dtype) if a.dtype == np.float64 else out.astype(np.float32).astype(a.dtype)
    return out, mask


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _check_args(name, args, kinds, labels):
    """torch's TypeError for the first argument not of its kind (``Tensor``, ``int``)."""
    for i, (v, kind, label) in enumerate(zip(args, kinds, labels)):
        ok = isinstance(v, Tensor) if kind == "Tensor" else _is_int(v)
        if not ok:
            raise TypeError("%s(): argument '%s' (position %d) must be %s, not %s"
                            % (name, label, i + 1, kind, type(v).__name__))


def _no_grad_qparams(fn, scale, zero_point):
    for label, t in (("scale", scale), ("zero_point", zero_point)):
        if t.requires_grad:
            raise RuntimeError("The function '%s' is not differentiable with respect to "
                               "argument '%s'. This input cannot have requires_grad True."
                               % (fn, label))


def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max):
    """``(clamp(round(input / scale) + zero_point, quant_min, quant_max) - zero_point) * scale``
    (round half to even), its gradient passed straight through where no clamp applied. ``scale``
    and ``zero_point`` are numbers or one-element Tensors. Matches
    ``torch.fake_quantize_per_tensor_affine``."""
    args = (input, scale, zero_point, quant_min, quant_max)
    if isinstance(scale, Tensor) and isinstance(zero_point, Tensor):
        ok = [isinstance(input, Tensor), True, True, _is_int(quant_min), _is_int(quant_max)]
        node = FakeQuantizePerTensorAffineCachemaskTensorQparams
    else:
        scale = scale.item() if isinstance(scale, Tensor) and scale.dim() == 0 else scale
        zero_point = (zero_point.item() if isinstance(zero_point, Tensor)
                      and zero_point.dim() == 0 else zero_point)
        ok = [isinstance(input, Tensor), isinstance(scale, (float, int, np.number))
              and not isinstance(scale, bool), _is_int(zero_point), _is_int(quant_min),
              _is_int(quant_max)]
        node = FakeQuantizePerTensorAffineCachemask
    if not all(ok):
        tensor_ok = [isinstance(v, Tensor) for v in args[:3]] + ok[3:]
        float_ok = ok if node is FakeQuantizePerTensorAffineCachemask else [
            ok[0], isinstance(scale, float), _is_int(zero_point)] + ok[3:]

        def marked(flags):
            return ", ".join(t if f else "!%s!" % t for t, f in zip(got, flags))
        got = [type(v).__name__ for v in args]
        raise TypeError(
            "fake_quantize_per_tensor_affine() received an invalid combination of arguments - "
            "got (%s), but expected one of:\n * (Tensor input, Tensor scale, Tensor zero_point, "
            "int quant_min, int quant_max)\n      didn't match because some of the arguments "
            "have invalid types: (%s)\n * (Tensor input, float scale, int zero_point, int "
            "quant_min, int quant_max)\n      didn't match because some of the arguments have "
            "invalid types: (%s)\n" % (", ".join(got), marked(tensor_ok), marked(float_ok)))
    if quant_min > quant_max:
        raise RuntimeError(_QMIN_MAX)
    if node is FakeQuantizePerTensorAffineCachemaskTensorQparams:
        _no_grad_qparams("_fake_quantize_per_tensor_affine_cachemask_tensor_qparams", scale,
                         zero_point)
        scale, zero_point = scale.item(), int(zero_point.item())
    elif not quant_min <= zero_point <= quant_max:
        raise RuntimeError(_ZP_RANGE)
    out, mask = _fake_quant(input, scale, np.int64(zero_point), quant_min, quant_max,
                            "fake_quantize_tensor_cachemask_kernel_type_handling", False)
    return node.apply(input, out, mask)


def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    """:func:`fake_quantize_per_tensor_affine` with one ``scale`` and ``zero_point`` per slice
    of ``input`` along ``axis`` (1-D Tensors: float32 scales; int32, float or half zero
    points). Matches ``torch.fake_quantize_per_channel_affine``."""
    _check_args("fake_quantize_per_channel_affine",
                (input, scale, zero_point, axis, quant_min, quant_max),
                ("Tensor",) * 3 + ("int",) * 3,
                ("input", "scale", "zero_point", "axis", "quant_min", "quant_max"))
    sd, zd = scale._array.dtype, zero_point._array.dtype
    if sd != np.float32 and sd.kind != "V":
        raise RuntimeError("Scale must be Float or BFloat16, found %s" % scale.dtype._legacy[:-6])
    if zd not in (np.int32, np.float32, np.float16):
        raise RuntimeError("Zero-point must be Int32, Float or Half, found %s"
                           % zero_point.dtype._legacy[:-6])
    if scale.dim() != 1:
        raise RuntimeError("scale should be a 1-D tensor")
    if zero_point.dim() != 1:
        raise RuntimeError("zero point should be a 1-D tensor")
    if scale.numel() != zero_point.numel():
        raise RuntimeError("scale and zero-point need to have the same dimensions")
    if input.dim() == 0:
        raise IndexError("Dimension specified as %d but tensor has no dimensions" % axis)
    if scale.numel() != input.shape[wrap_dim(axis, input.dim())]:
        raise RuntimeError("dimensions of scale and zero-point are not consistent with input "
                           "tensor")
    if quant_min > quant_max:
        raise RuntimeError(_QMIN_MAX)
    if zd == np.int32 and zero_point.numel() and not (
            zero_point.min().item() >= quant_min and zero_point.max().item() <= quant_max):
        raise RuntimeError(_ZP_RANGE)
    if axis < 0:
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")
    _no_grad_qparams("fake_quantize_per_channel_affine_cachemask", scale, zero_point)
    shape = [1] * input.dim()
    shape[axis] = -1
    out, mask = _fake_quant(input, scale._array.reshape(shape), zero_point._array.reshape(shape),
                            quant_min, quant_max,
                            "fake_quantize_channel_cachemask_cpu_type_handling", True)
    return FakeQuantizePerChannelAffineCachemask.apply(input, out, mask)
