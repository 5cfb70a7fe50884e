"""torch's storage names: ``TypedStorage``, ``UntypedStorage`` and the typed legacy classes
(``torch.FloatStorage(3)``, ``torch.FloatStorage([1, 2])``: a ``TypedStorage`` of that dtype)."""
import builtins as _builtins

from ._tensor_compat import TypedStorage, UntypedStorage, _warn_typed_storage_removal
from .dtypes import (bfloat16, bool, complex64, complex128, float16, float32, float64, int8,
                     int16, int32, int64, uint8)
from .ops import tensor, zeros


class _LegacyStorageMeta(type):
    def __instancecheck__(cls, instance):
        return type(instance) is TypedStorage and instance.dtype == cls.dtype


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    """torch's typed storage classes: ``FloatStorage(3)`` or ``FloatStorage([1, 2])`` is a
    ``TypedStorage`` of the class's dtype (and ``isinstance`` checks that dtype)."""

    def __new__(cls, *args):
        _warn_typed_storage_removal(stacklevel=3)
        if not args:
            data = []
        elif len(args) == 1 and isinstance(args[0], _builtins.int) and not isinstance(
                args[0], _builtins.bool):
            data = zeros(args[0], dtype=cls.dtype)
        elif len(args) == 1 and isinstance(args[0], (list, tuple)):
            data = args[0]
        else:
            raise TypeError("%s.__new__ received an invalid combination of arguments. Expected "
                            "one of:\n * no arguments\n * (int size)\n * (Sequence data)\n * (*, "
                            "UntypedStorage wrap_storage)\nArgument type not recognized: %s"
                            % (cls, type(args[-1])))
        return TypedStorage(tensor(data, dtype=cls.dtype))


for _name, _d in (("Float", float32), ("Double", float64), ("Half", float16), ("Long", int64),
                  ("Int", int32), ("Short", int16), ("Char", int8), ("Byte", uint8),
                  ("Bool", bool), ("BFloat16", bfloat16), ("ComplexFloat", complex64),
                  ("ComplexDouble", complex128)):
    globals()[_name + "Storage"] = _LegacyStorageMeta(_name + "Storage", (_LegacyStorage,),
                                                      {"dtype": _d, "__module__": "ember"})
FloatStorage = globals()["FloatStorage"]
Storage = FloatStorage  # (torch's alias)

__all__ = ["TypedStorage", "UntypedStorage", "Storage"] + [
    n + "Storage" for n in ("Float", "Double", "Half", "Long", "Int", "Short", "Char", "Byte",
                            "Bool", "BFloat16", "ComplexFloat", "ComplexDouble")]
