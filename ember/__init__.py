"""ember: PyTorch's autograd and training API, rebuilt in plain Python on NumPy.

``import ember as torch`` runs PyTorch-style code: tensors record the operations applied to
them, ``backward()`` walks the graph, ``nn``, ``optim`` and ``utils.data`` train models.
"""
from . import dtypes
from .dtypes import (bool, float, float16, float32, float64, double, half, int, int8, int16,
                     int32, int64, long, short, uint8, bfloat16, dtype, finfo, iinfo,
                     get_default_dtype, set_default_dtype, promote_types)
from .tensor import (Tensor, Size, FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor,
                     ShortTensor, CharTensor, ByteTensor, BoolTensor)
from .tensor import _bind as _bind_tensor
from ._tensor_str import set_printoptions, get_printoptions
from .random import (Generator, manual_seed, seed, initial_seed, get_rng_state, set_rng_state,
                     default_generator)
from .ops import *  # noqa: F401,F403
from .ops import _getitem  # noqa: F401
from .backend import device, set_default_device, get_default_device  # noqa: F401
from .autograd.grad_mode import (no_grad, enable_grad, set_grad_enabled, is_grad_enabled,
                                 inference_mode, is_inference_mode_enabled)
from . import autograd, ops, return_types  # noqa: F401
from . import cuda  # noqa: F401
from .serialization import *  # noqa: F401,F403

_bind_tensor(ops, autograd.engine)    # Tensor's methods dispatch into ops (see tensor.py)
# ``from .ops import *`` bound ``linalg`` to ``ops.linalg``; load the public ``ember.linalg``.
linalg = __import__("importlib").import_module(__name__ + ".linalg")

__version__ = "0.1.0"


def result_type(tensor1, tensor2):
    """The dtype torch would give an op on ``tensor1`` and ``tensor2``."""
    return dtypes.result_type(tensor1, tensor2)


def typename(obj):
    if isinstance(obj, Tensor):
        return "torch." + obj.dtype._legacy
    return type(obj).__name__


_LAZY = ("nn", "optim", "utils", "viz", "datasets", "fft", "special", "distributions", "func",
         "distributed")


def __getattr__(name):
    # Heavier or optional sub-packages load on first use, keeping ``import ember`` fast.
    if name in _LAZY:
        import importlib
        return importlib.import_module("ember." + name)
    raise AttributeError("module 'ember' has no attribute %r" % name)
