"""``torch.types``: the type aliases torch's signatures use (for annotations)."""
import os
from typing import IO, Union

from .backend import device as _device
from .tensor import Size, Tensor

__all__ = ["Number", "Device", "FileLike", "Storage", "SymInt", "SymFloat", "SymBool",
           "IntLikeType", "FloatLikeType", "BoolLikeType", "Tensor"]

_int, _float, _bool, _complex, _str, _bytes = int, float, bool, complex, str, bytes
_device = _device
_size = Union[Size, list, tuple]
Number = Union[int, float, bool]
_Number = (int, float, bool)
Device = Union[_device, str, int, None]
FileLike = Union[str, os.PathLike, IO[bytes]]
SymInt, SymFloat, SymBool = int, float, bool     # (ember has no symbolic shapes)
IntLikeType = Union[int, SymInt]
FloatLikeType = Union[float, SymFloat]
BoolLikeType = Union[bool, SymBool]
py_sym_types = (SymInt, SymFloat, SymBool)
Storage = Tensor        # (ember tensors own their data; no separate storage type)
_TensorOrTensors = Union[Tensor, tuple]
