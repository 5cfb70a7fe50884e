"""torch's checks of a user autograd.Function applied under a torch.func transform."""
import inspect

from ..autograd import function as _function
from ..autograd.function import Function

_FUNC_DOCS = " For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"
_BASE_VMAP = inspect.getattr_static(Function, "vmap")


def check_transformable(cls):
    """torch's errors for a user Function applied under a torch.func transform: it needs
    ``setup_context``, and under vmap a ``vmap`` staticmethod or ``generate_vmap_rule``."""
    if cls._forward_fn is None:
        raise RuntimeError("In order to use an autograd.Function with functorch transforms "
                           "(vmap, grad, jvp, jacrev, ...), it must override the setup_context "
                           "staticmethod." + _FUNC_DOCS)
    if "vmap" not in _function.func_transforms:
        return
    own_rule = inspect.getattr_static(cls, "vmap", None) is not _BASE_VMAP
    if getattr(cls, "generate_vmap_rule", False):
        if own_rule:
            raise RuntimeError("You tried to vmap over %s, but it has both "
                               "generate_vmap_rule=True and an overridden vmap staticmethod. "
                               "Please set generate_vmap_rule=False or delete the overridden "
                               "vmap staticmethod to avoid ambiguity." % cls.__name__ + _FUNC_DOCS)
    elif not own_rule:
        raise RuntimeError("You tried to vmap over %s, but it does not have vmap support. Please "
                           "override and implement the vmap staticmethod or set "
                           "generate_vmap_rule=True." % cls.__name__ + _FUNC_DOCS)


class under_transform:
    """Context manager: a torch.func transform of ``kind`` ("vmap" or "grad") runs; user
    Functions applied meanwhile are checked."""

    __slots__ = ("kind",)

    def __init__(self, kind):
        self.kind = kind

    def __enter__(self):
        _function.transform_check = check_transformable
        _function.func_transforms.append(self.kind)

    def __exit__(self, *exc):
        _function.func_transforms.pop()
