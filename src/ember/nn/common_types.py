"""``torch.nn.common_types``: the type aliases of layer signatures (for annotations)."""
from typing import TypeVar, Union

from ..tensor import Tensor

T = TypeVar("T")
_scalar_or_tuple_any_t = Union[T, tuple]
_scalar_or_tuple_1_t = _scalar_or_tuple_2_t = _scalar_or_tuple_3_t = Union[T, tuple]
_scalar_or_tuple_4_t = _scalar_or_tuple_5_t = _scalar_or_tuple_6_t = Union[T, tuple]
_size_any_t = _size_1_t = _size_2_t = _size_3_t = Union[int, tuple]
_size_4_t = _size_5_t = _size_6_t = Union[int, tuple]
_size_any_opt_t = _size_2_opt_t = _size_3_opt_t = Union[int, None, tuple]
_ratio_2_t = _ratio_3_t = _ratio_any_t = Union[float, tuple]
_tensor_list_t = Union[Tensor, tuple]
_maybe_indices_t = Union[Tensor, tuple]
