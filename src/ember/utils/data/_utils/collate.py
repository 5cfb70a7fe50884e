"""torch.utils.data._utils.collate: ``collate`` and its ``default_collate_fn_map`` registry."""
from .._collate import (collate, collate_float_fn, collate_int_fn,  # noqa: F401
                        collate_numpy_array_fn, collate_numpy_scalar_fn, collate_str_fn,
                        collate_tensor_fn, default_collate, default_collate_fn_map,
                        default_convert)
