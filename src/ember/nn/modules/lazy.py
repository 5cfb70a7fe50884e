"""LazyModuleMixin: modules whose parameter shapes come from their first input."""
from ..parameter import UninitializedBuffer, UninitializedParameter

__all__ = ["LazyModuleMixin", "UninitializedBuffer"]


class LazyModuleMixin:
    """Parameters start as ``UninitializedParameter`` (buffers as ``UninitializedBuffer``); the
    first call runs ``initialize_parameters`` on its input, then turns the module into
    ``cls_to_become``."""

    cls_to_become = None

    def has_uninitialized_params(self):
        """Whether any parameter or buffer is still uninitialized."""
        return any(isinstance(p, (UninitializedParameter, UninitializedBuffer))
                   for p in list(self._parameters.values()) + list(self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError

    def __call__(self, *args, **kwargs):
        # (torch's one-shot pre-hook: runs on the first call even with nothing to infer)
        if not self.__dict__.get("_lazy_initialized", False):
            self.initialize_parameters(*args, **kwargs)
            if self.has_uninitialized_params():
                raise RuntimeError("module %s has not been fully initialized" % self._get_name())
            self.__dict__["_lazy_initialized"] = True
            if self.cls_to_become is not None:
                self.__class__ = self.cls_to_become
                return type(self).__call__(self, *args, **kwargs)
        return super().__call__(*args, **kwargs)
