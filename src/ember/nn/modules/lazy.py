"""LazyModuleMixin: modules whose parameter shapes come from their first input."""
from ..parameter import UninitializedParameter

__all__ = ["LazyModuleMixin", "UninitializedBuffer"]


class LazyModuleMixin:
    """Parameters start as ``UninitializedParameter``; the first ``forward`` call infers their
    shapes from the input, initialises them and turns the module into ``cls_to_become``."""

    cls_to_become = None

    def has_uninitialized_params(self):
        """Whether any parameter or buffer is still uninitialized."""
        return any(isinstance(p, UninitializedParameter)
                   for p in list(self._parameters.values()) + list(self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError

    def __call__(self, *args, **kwargs):
        if self.has_uninitialized_params():
            self.initialize_parameters(*args, **kwargs)
            if self.cls_to_become is not None:
                self.__class__ = self.cls_to_become
                return type(self).__call__(self, *args, **kwargs)
        return super().__call__(*args, **kwargs)


class UninitializedBuffer:
    """A buffer whose shape is not known yet (a placeholder for lazy modules)."""

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        self.requires_grad, self.device, self.dtype = requires_grad, device, dtype
        self.persistent = persistent

    def __repr__(self):
        return "<UninitializedBuffer>"
