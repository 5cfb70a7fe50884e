"""``torch.cuda.amp`` and ``torch.cpu.amp``: the device-specific spellings of ``torch.amp``
that older programs use (deprecated in torch, with a ``FutureWarning``, as here)."""
import types
import warnings

from .. import dtypes
from .autocast_mode import autocast as _autocast
from .autocast_mode import custom_bwd as _amp_custom_bwd
from .autocast_mode import custom_fwd as _amp_custom_fwd
from .grad_scaler import GradScaler as _GradScaler


def _cuda_custom_fwd(*args, **kwargs):
    """``torch.cuda.amp.custom_fwd``: ``torch.amp.custom_fwd(..., device_type="cuda")``."""
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.", FutureWarning,
                  stacklevel=2)

    def custom_fwd(fwd=None, *, cast_inputs=None):
        return _amp_custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)
    custom_fwd.__qualname__ = "custom_fwd"      # (for the TypeError of a bad call)
    return custom_fwd(*args, **kwargs)


def _cuda_custom_bwd(*args, **kwargs):
    """``torch.cuda.amp.custom_bwd``: ``torch.amp.custom_bwd(..., device_type="cuda")``."""
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.", FutureWarning,
                  stacklevel=2)

    def custom_bwd(bwd):
        return _amp_custom_bwd(bwd, device_type="cuda")
    custom_bwd.__qualname__ = "custom_bwd"
    return custom_bwd(*args, **kwargs)


def _module(device, default_dtype):
    """The module ``ember.<device>.amp``: ``autocast`` and ``GradScaler`` bound to ``device``."""
    prefix = "torch.%s.amp" % device

    class autocast(_autocast):      # noqa: N801 (torch's name)
        def __init__(self, enabled=True, dtype=default_dtype, cache_enabled=True):
            if device == "cuda":
                warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                              "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning,
                              stacklevel=2)
            super().__init__(device, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    class GradScaler(_GradScaler):
        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                     growth_interval=2000, enabled=True):
            warnings.warn("`%s.GradScaler(args...)` is deprecated. Please use "
                          "`torch.amp.GradScaler('%s', args...)` instead." % (prefix, device),
                          FutureWarning, stacklevel=2)
            super().__init__(device, init_scale=init_scale, growth_factor=growth_factor,
                             backoff_factor=backoff_factor, growth_interval=growth_interval,
                             enabled=enabled)

    mod = types.ModuleType("ember.%s.amp" % device, __doc__)
    mod.autocast, mod.GradScaler = autocast, GradScaler
    autocast.__module__ = GradScaler.__module__ = mod.__name__
    if device == "cuda":
        mod.custom_fwd, mod.custom_bwd = _cuda_custom_fwd, _cuda_custom_bwd
        _cuda_custom_fwd.__name__, _cuda_custom_bwd.__name__ = "custom_fwd", "custom_bwd"
    mod.__all__ = [n for n in ("autocast", "GradScaler", "custom_fwd", "custom_bwd")
                   if hasattr(mod, n)]
    return mod


cuda = _module("cuda", dtypes.float16)
cpu = _module("cpu", dtypes.bfloat16)
