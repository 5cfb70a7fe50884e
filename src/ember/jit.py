"""``torch.jit``, accepted for torch's code: ember runs eagerly, so ``script`` and ``trace``
return what they are given (the same numbers as TorchScript, without its compilation), the
decorators leave functions as they are, and ``is_scripting()`` is False. Saving a TorchScript
archive is not available (``ember.save`` and ``state_dict`` are)."""
import typing
import warnings

__all__ = ["script", "trace", "trace_module", "ignore", "unused", "export", "interface",
           "is_scripting", "is_tracing", "annotate", "Final", "Attribute", "fork", "wait",
           "freeze", "optimize_for_inference", "ScriptModule", "ScriptFunction",
           "script_if_tracing", "save", "load", "Error", "TracerWarning", "isinstance",
           "enable_onednn_fusion", "onednn_fusion_enabled", "set_fusion_strategy",
           "optimized_execution", "strict_fusion", "script_method", "Future"]

from .nn.modules.module import Module as _Module  # noqa: E402

Final = typing.Final
Error = RuntimeError


class TracerWarning(Warning):
    """A warning ``trace`` gives about Python control flow it cannot record."""


class ScriptModule(_Module):
    """``torch.jit.ScriptModule``: an ``nn.Module`` (TorchScript-era code subclasses it; ember
    runs its ``script_method``s eagerly)."""


class ScriptFunction:
    """Marker type: ``torch.jit.ScriptFunction`` (ember never makes one)."""


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """``obj`` itself: ember runs it eagerly."""
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    """``func`` itself: ember runs it eagerly."""
    return func


def trace_module(mod, inputs, *args, **kwargs):
    return mod


def script_if_tracing(fn):
    return fn


def script_method(fn):
    return fn


def ignore(drop=False, **kwargs):
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    return fn


def interface(obj):
    return obj


def is_scripting():
    return False


def is_tracing():
    return False


def annotate(the_type, the_value):
    return the_value


class Attribute(typing.NamedTuple):
    value: typing.Any
    type: typing.Any


def isinstance(obj, target_type):      # noqa: A001 (torch.jit's name)
    import builtins
    return builtins.isinstance(obj, target_type)


class Future:
    """The result of ``fork``: already computed (ember runs the call at once)."""

    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value

    def done(self):
        return True

    def value(self):
        return self._value


def fork(func, *args, **kwargs):
    return Future(func(*args, **kwargs))


def wait(future):
    return future.wait()


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    return mod


def optimize_for_inference(mod, other_methods=None):
    return mod


def enable_onednn_fusion(enabled):
    pass


def onednn_fusion_enabled():
    return False


def set_fusion_strategy(strategy):
    return []


class optimized_execution:
    def __init__(self, should_optimize):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


strict_fusion = optimized_execution


def save(m, f, _extra_files=None):
    raise RuntimeError("ember.jit.save: ember does not write TorchScript archives (its modules "
                       "run eagerly); save the weights with ember.save(model.state_dict(), f)")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    raise RuntimeError("ember.jit.load: ember cannot run TorchScript archives; load a state "
                       "dict saved with torch.save(model.state_dict(), f) into the model "
                       "instead")


warnings.filterwarnings("default", category=TracerWarning)
