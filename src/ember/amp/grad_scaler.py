"""``GradScaler``: multiply the loss by a scale so small float16 gradients do not underflow,
divide the gradients back before the step, skip steps whose gradients hold inf/NaN and adapt
the scale, as torch's."""
import warnings
from collections import defaultdict
from enum import Enum

from ..autograd.grad_mode import no_grad
from ..ops import full, isfinite
from ..tensor import Tensor

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _cuda_available():
    from .. import cuda
    return cuda.is_available()


class GradScaler:
    """Loss scaling for mixed-precision training (``scale``, ``unscale_``, ``step``,
    ``update``)."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled and not _cuda_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", UserWarning, stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._scale = None
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._growth_tracker = 0
        self._per_optimizer_states = defaultdict(_refresh)

    def _lazy_init(self, like):
        self._scale = full((), self._init_scale, device=like.device)

    def scale(self, outputs):
        """``outputs`` (a tensor, or tensors in lists/tuples) times the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init(outputs)
            return outputs * self._scale.to(outputs.device)
        if isinstance(outputs, (list, tuple)):
            out = [self.scale(o) for o in outputs]
            return type(outputs)(out) if isinstance(outputs, tuple) else out
        if hasattr(outputs, "__iter__"):
            return map(self.scale, outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _unscale_grads_(self, optimizer, inv_scale, allow_fp16):
        found = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if not allow_fp16 and p.grad.dtype is _fp16():
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    if not bool(isfinite(p.grad).all()):
                        found = True
                    p.grad.mul_(inv_scale)
        return found

    def unscale_(self, optimizer):
        """Divide ``optimizer``'s gradients by the scale (once per ``update``)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv = (1.0 / self._scale.double()).float()
        state["found_inf"] = self._unscale_grads_(optimizer, inv, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` unless the unscaled gradients hold inf or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        retval = None
        if not state["found_inf"]:
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Adapt the scale: times ``backoff_factor`` after a skipped step, times
        ``growth_factor`` after ``growth_interval`` good ones (or set it to ``new_scale``)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                if not (isinstance(new_scale, Tensor) and new_scale.numel() == 1
                        and not new_scale.requires_grad):
                    raise AssertionError("new_scale should be a float or a 1-element "
                                         "torch.cuda.FloatTensor or torch.FloatTensor with "
                                         "requires_grad=False.")
                self._scale.copy_(new_scale)
        else:
            found = [s["found_inf"] for s in self._per_optimizer_states.values()
                     if "found_inf" in s]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                self._scale.mul_(self._backoff_factor)
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale.mul_(self._growth_factor)
                    self._growth_tracker = 0
        self._per_optimizer_states = defaultdict(_refresh)

    def _check_scale_growth_tracker(self, funcname):
        if self._scale is None:
            raise AssertionError("Attempted %s but _scale is None.  This may indicate your "
                                 "script did not use scaler.scale(loss or outputs) earlier in "
                                 "the iteration." % funcname)

    def get_scale(self):
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._growth_tracker = state_dict["_growth_tracker"]


def _refresh():
    return {"stage": OptState.READY}


def _fp16():
    from .. import dtypes
    return dtypes.float16
