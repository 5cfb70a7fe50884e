"""``skip_init``: build a module without running its parameter initialisation."""
import inspect

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """An instance of ``module_cls(*args, **kwargs)`` whose parameters are left uninitialised
    (their values are unspecified; the class must accept a ``device`` argument)."""
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    module = module_cls(*args, **kwargs)
    return module.to(final_device)
