"""``torch.utils.hooks``: the handle every ``register_*hook`` returns, and hook helpers."""
import warnings

from ..nn.modules.module import _ModuleBackwardHook as BackwardHook
from ..tensor import RemovableHandle

__all__ = ["RemovableHandle", "BackwardHook", "unserializable_hook", "warn_if_has_hooks"]


def unserializable_hook(f):
    """Mark ``f`` as a hook that is not serialized, which silences ``warn_if_has_hooks``."""
    f.__torch_unserializable__ = True
    return f


def _tensor_hooks(tensor):
    """The hooks registered on ``tensor`` with ``register_hook``, in order."""
    node = tensor.grad_fn
    if node is not None:
        return list(((node._tensor_hooks or {}).get(tensor._output_nr) or {}).values())
    return list((tensor._hooks or {}).values())


def warn_if_has_hooks(tensor):
    """Warn for each backward hook on ``tensor`` that serializing it will drop."""
    for hook in _tensor_hooks(tensor):
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {repr(hook)} on tensor will not be serialized.  If "
                          "this is expected, you can decorate the function with "
                          "@torch.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=2)
