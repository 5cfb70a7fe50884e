"""``autocast``: inside it, the ops torch lists run in a lower precision (matrix products and
convolutions in bfloat16 on the CPU, float16 on CUDA) and the ops it lists as needing float32
run in float32, as torch's autocast policy; the state lives in ``autograd.grad_mode.state``,
where ``Function.apply`` reads it."""
import collections.abc
import functools
import warnings

from .. import dtypes as _dt
from ..autograd import _autocast
from ..autograd import function as _function
from ..autograd.grad_mode import state as _state
from ..tensor import Tensor

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available",
           "is_autocast_enabled", "get_autocast_dtype", "set_autocast_enabled",
           "set_autocast_dtype"]

_DEFAULT = {"cpu": _dt.bfloat16, "cuda": _dt.float16}
_SUPPORTED = {"cpu": (_dt.bfloat16, _dt.float16), "cuda": (_dt.float16, _dt.bfloat16)}


# torch's device types, for its error on a string that names none of them
_TORCH_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip",
                       "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                       "privateuseone")


def _parse_type(device_type):
    kind = device_type.split(":", 1)[0]
    if kind not in _TORCH_DEVICE_TYPES:
        raise RuntimeError("Expected one of %s device type at start of device string: %s"
                           % (", ".join(_TORCH_DEVICE_TYPES), kind))
    return kind


def is_autocast_available(device_type):
    """True where ember runs autocast for ``device_type`` ("cpu" and "cuda")."""
    if not isinstance(device_type, str):
        raise TypeError("_is_autocast_available(): argument 'device_type' (position 1) must be "
                        "str, not %s" % type(device_type).__name__)
    return _parse_type(device_type) in _DEFAULT


def _check_device(device_type):
    if not isinstance(device_type, str):
        raise ValueError("Expected `device_type` of type `str`, got: `%s`" % type(device_type))
    if _parse_type(device_type) not in _DEFAULT or ":" in device_type:
        raise RuntimeError("User specified an unsupported autocast device_type '%s'"
                           % device_type)


def is_autocast_enabled(device_type=None):
    """True inside an enabled ``autocast`` for ``device_type`` (CUDA when omitted, as
    torch)."""
    return (device_type or "cuda") in _state.autocast


# device types torch has no autocast for (its get_autocast_dtype fails on them so)
_NO_AUTOCAST = ("mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "lazy", "vulkan",
                "meta")


def get_autocast_dtype(device_type):
    if isinstance(device_type, str) and _parse_type(device_type) in _NO_AUTOCAST:
        raise RuntimeError("unsupported scalarType")
    _check_device(device_type)
    return _state.autocast_dtypes.get(device_type, _DEFAULT[device_type])


def set_autocast_enabled(device_type, enabled=None):
    if enabled is None:           # (torch's one-argument form is CUDA's)
        device_type, enabled = "cuda", device_type
    _check_device(device_type)
    on = dict(_state.autocast)
    was = device_type in on
    if enabled:
        on[device_type] = get_autocast_dtype(device_type)
    else:
        on.pop(device_type, None)
    _state.autocast = on
    if enabled and not was:
        _install()
    elif was and not enabled:
        _uninstall()


def set_autocast_dtype(device_type, dtype):
    _check_device(device_type)
    dtypes = dict(_state.autocast_dtypes)
    dtypes[device_type] = dtype
    _state.autocast_dtypes = dtypes
    if device_type in _state.autocast:
        on = dict(_state.autocast)
        on[device_type] = dtype
        _state.autocast = on


# torch's autocast policy by op (named here by the op's node): "lower" casts floating inputs
# (not float64) to the autocast dtype, "fp32" to float32, "promote" to the widest floating
# input dtype. Ops composed of several nodes get the policy of the nodes they are made of.
_LINALG32 = ("LinalgInvExBackward0", "LinalgCholeskyExBackward0", "LinalgSvdBackward0",
             "LinalgEighBackward0", "LinalgEigBackward0", "LinalgQrBackward0",
             "LinalgSolveExBackward0", "LinalgLstsqBackward0", "LinalgLuSolveBackward0",
             "LinalgHouseholderProductBackward0", "CholeskyInverseBackward0",
             "CholeskySolveBackward0", "CholeskyBackward0", "OrmqrBackward0",
             "TriangularSolveBackward0", "GeqrfBackward0", "LinalgSolveTriangularBackward0",
             "FftR2CBackward0", "FftC2CBackward0", "FftC2RBackward0")
_LOSS32 = ("MseLossBackward0", "NllLossBackward0", "NllLoss2DBackward0",
           "BinaryCrossEntropyBackward0", "BinaryCrossEntropyWithLogitsBackward0",
           "SmoothL1LossBackward0", "HuberLossBackward0", "SoftMarginLossBackward0",
           "MultiMarginLossBackward0", "MultilabelMarginLossBackward0", "CtcLossBackward0",
           "CdistBackward0")
_POLICY = {
    "cpu": dict(
        [(n, "lower") for n in ("MmBackward0", "AddmmBackward0", "BmmBackward0",
                                "BaddbmmBackward0", "ConvolutionBackward0",
                                "PreluKernelBackward0", "ConvTbcBackward0", "AddbmmBackward0",
                                "MkldnnRnnLayerBackward0")]
        + [(n, "fp32") for n in _LINALG32 + _LOSS32 + (
            "ProdBackward0", "ProdBackward1", "TraceBackward0", "AvgPool3DBackward0",
            "MaxPool3DWithIndicesBackward0", "AdaptiveAvgPool3DBackward0",
            "AdaptiveMaxPool3DBackward0", "FractionalMaxPool2DBackward0",
            "FractionalMaxPool3DBackward0", "MaxUnpool2DBackward0", "MaxUnpool3DBackward0",
            "ReflectionPad1DBackward0", "ReflectionPad2DBackward0",
            "ReplicationPad1DBackward0", "ReplicationPad2DBackward0",
            "ReplicationPad3DBackward0", "GridSampler2DBackward0", "PolarBackward0",
            "ViewAsComplexBackward0")]
        + [(n, "promote") for n in ("CatBackward0", "StackBackward0", "IndexCopyBackward0")]),
    "cuda": dict(
        [(n, "lower") for n in ("MmBackward0", "AddmmBackward0", "BmmBackward0",
                                "BaddbmmBackward0", "ConvolutionBackward0",
                                "PreluKernelBackward0", "ConvTbcBackward0", "MvBackward0",
                                "AddmvBackward0", "AddrBackward0", "AddbmmBackward0",
                                "DotBackward0")]
        + [(n, "fp32") for n in _LINALG32 + _LOSS32 + (
            "AcosBackward0", "AsinBackward0", "CoshBackward0", "ErfinvBackward0",
            "ExpBackward0", "Expm1Backward0", "LogBackward0", "Log10Backward0",
            "Log2Backward0", "Log1PBackward0", "ReciprocalBackward0", "RsqrtBackward0",
            "SinhBackward0", "TanBackward0", "PowBackward0", "PowBackward1", "PowBackward2",
            "SoftplusBackward0", "NativeLayerNormBackward0", "NativeGroupNormBackward0",
            "DistBackward0", "PdistBackward0", "RenormBackward0", "LogsumexpBackward0",
            "SoftmaxBackward0", "LogSoftmaxBackward0", "CumprodBackward0",
            "CumsumBackward0", "SumBackward0", "SumBackward1", "ProdBackward0",
            "ProdBackward1", "LinalgVectorNormBackward0", "UpsampleNearest2DBackward0",
            "UpsampleBilinear2DBackward0", "UpsampleNearest1DBackward0",
            "UpsampleNearest3DBackward0", "UpsampleBicubic2DBackward0")]
        + [(n, "promote") for n in ("AddcdivBackward0", "AddcmulBackward0", "Atan2Backward0",
                                    "LinalgCrossBackward0", "IndexPutBackward0",
                                    "ScatterAddBackward0", "CatBackward0",
                                    "StackBackward0")]),
}


# Functions that name their node per call (ctx.set_node_name): the node name from the apply
# arguments, so the policy follows the op torch runs (reflection_pad2d, adaptive_avg_pool3d...).
_PAD_NAMES = {"reflect": "ReflectionPad%dDBackward0", "replicate": "ReplicationPad%dDBackward0"}
_NAME_BY_ARGS = {
    "Pad": lambda args: (_PAD_NAMES[args[2]] % args[4] if len(args) > 4
                         and args[2] in _PAD_NAMES else None),
    "AdaptiveAvgPool": lambda args: "AdaptiveAvgPool%dDBackward0" % len(args[1]),
    "MaxPoolIndexed": lambda args: args[3][0],
}


def _node_name(cls, args):
    resolve = _NAME_BY_ARGS.get(cls.__name__)
    return cls.node_name if resolve is None else resolve(args)


def _cast_hook(cls, args, kwargs):
    """``Function.apply`` inside autocast: the op's inputs cast by its policy, then applied."""
    if _state.autocast:
        dev = _autocast.device_type(args)
        if dev is not None:
            policy = _POLICY[dev].get(_node_name(cls, args))
            if policy is not None:
                args = _autocast.inputs(policy, args)
    nxt = _next[0]
    return _function.plain_apply(cls, args, kwargs) if nxt is None else nxt(cls, args, kwargs)


_active = [0]
_next = [None]      # the hook that held Function.apply before autocast's (vmap's), if any


def _install():
    if _active[0] == 0 and _function._hook is not _cast_hook:
        _next[0] = _function._hook
        _function._hook = _cast_hook
    _active[0] += 1


def _uninstall():
    _active[0] -= 1
    if _active[0] == 0 and _function._hook is _cast_hook:
        _function._hook = _next[0]
        _next[0] = None


class autocast:
    """Context manager and decorator: ops in the region run in mixed precision for
    ``device_type`` (``"cpu"``: bfloat16 by default; ``"cuda"``: float16)."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError("Expected `device_type` of type `str`, got: `%s`"
                             % type(device_type))
        self.fast_dtype = dtype if dtype is not None else get_autocast_dtype(device_type)
        _check_device(device_type)
        self.device = device_type
        self._enabled = enabled
        if enabled and self.fast_dtype not in _SUPPORTED[device_type]:
            if device_type == "cpu":
                warnings.warn("In CPU autocast, but the target dtype is not supported. "
                              "Disabling autocast.\nCPU Autocast only supports dtypes of "
                              "torch.bfloat16, torch.float16 currently.", UserWarning,
                              stacklevel=2)
            else:
                warnings.warn("In CUDA autocast, but the target dtype %s is not supported. "
                              "Disabling autocast." % (self.fast_dtype,), UserWarning,
                              stacklevel=2)
            self._enabled = False

    def __enter__(self):
        self._prev = (_state.autocast, _state.autocast_dtypes)
        on = dict(_state.autocast)
        if self._enabled:
            on[self.device] = self.fast_dtype
        else:
            on.pop(self.device, None)
        _state.autocast = on
        dtypes = dict(_state.autocast_dtypes)
        dtypes[self.device] = self.fast_dtype
        _state.autocast_dtypes = dtypes
        _install()
        return self

    def __exit__(self, *exc):
        _state.autocast, _state.autocast_dtypes = self._prev
        _uninstall()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled):
                return fn(*args, **kwargs)
        return wrapper


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom ``Function.forward``: runs it with autocast as it was outside,
    or (``cast_inputs``) with autocast off and floating tensor inputs cast to that dtype."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        args[0]._fwd_used_autocast = False
        if not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type, enabled=False):
            return fwd(*_cast(args, device_type, cast_inputs),
                       **_cast(kwargs, device_type, cast_inputs))
    return decorate_fwd


def _cast(value, device_type, dtype):
    """``value`` with its floating tensors on ``device_type`` (not float64) cast to ``dtype``,
    inside lists, tuples, dicts and other iterables too (torch's ``amp._cast``)."""
    if isinstance(value, Tensor):
        eligible = (value.is_floating_point() and value.device.type == device_type
                    and value.dtype is not _dt.float64)
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)) or type(value).__name__ == "ndarray":
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        iterable = (_cast(v, device_type, dtype) for v in value)
        return type(value)(iterable) if isinstance(value, (list, tuple)) else iterable
    return value


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom ``Function.backward``: runs it under the autocast state its
    forward ran with."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
