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

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # as torch: an uninitialized parameter or buffer is saved as it is, not detached
        for name, p in self._parameters.items():
            if p is not None:
                lazy = isinstance(p, UninitializedParameter)
                destination[prefix + name] = p if lazy or keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                lazy = isinstance(b, UninitializedBuffer)
                destination[prefix + name] = b if lazy or keep_vars else b.detach()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)
        # as torch's load hook: an uninitialized entry takes the shape of an initialized value
        lazy_types = (UninitializedParameter, UninitializedBuffer)
        for name, p in list(self._parameters.items()) + list(self._buffers.items()):
            key = prefix + name
            if p is not None and key in state_dict and isinstance(p, lazy_types):
                value = state_dict[key]
                if not isinstance(value, lazy_types):
                    p.materialize(value.shape)

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
