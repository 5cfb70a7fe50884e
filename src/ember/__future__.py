"""``torch.__future__``: switches for behaviour that will become the default.

``set_overwrite_module_params_on_conversion(True)``: ``Module._apply`` (``to``, ``double``,
``half`` ...) puts new ``Parameter`` objects in the module instead of changing the old ones'
data. ``set_swap_module_params_on_conversion(True)``: it swaps the converted tensors into the
existing Parameters with ``ember.utils.swap_tensors`` (so references stay valid), and
``load_state_dict`` swaps in ``param.module_load(value, assign)`` instead of ``param.copy_``.
"""
_overwrite_module_params_on_conversion: bool = False
_swap_module_params_on_conversion: bool = False

__all__ = ["set_overwrite_module_params_on_conversion", "get_overwrite_module_params_on_conversion",
           "set_swap_module_params_on_conversion", "get_swap_module_params_on_conversion"]


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """Whether converting a module assigns new Parameters (``True``) or edits the old ones."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion() -> bool:
    """The value set by ``set_overwrite_module_params_on_conversion`` (default ``False``)."""
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value: bool) -> None:
    """Whether module conversion and ``load_state_dict`` swap tensors in place (``True``).
    Takes precedence over the overwrite switch."""
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion() -> bool:
    """The value set by ``set_swap_module_params_on_conversion`` (default ``False``)."""
    return _swap_module_params_on_conversion
