"""Built-in ops: Functions grouped by family, each exposed as ``ember.NAME`` (and as a Tensor
method where torch has one)."""
from . import (activation, arithmetic, comparison, conversion, conv, creation, indexing,
               linalg, loss, normalization, pooling, reduction, shape, sorting, special, unary)
from . import matmul as _matmul    # (``from .matmul import *`` rebinds ``matmul`` to the op)
from . import extra as _extra  # (more of torch's functions; see extra.py)
from . import complex as _complex  # (``from .complex import *`` rebinds ``complex``)
from . import scatter as _scatter  # (``from .scatter import *`` rebinds ``scatter`` to the op)
from ._util import wrap_dim as _wrap_dim, scalar_like as _scalar_like
from .activation import *  # noqa: F401,F403
from .arithmetic import *  # noqa: F401,F403
from .comparison import *  # noqa: F401,F403
from .conversion import *  # noqa: F401,F403
from .conversion import _type_to_dtype  # noqa: F401
from .creation import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .indexing import _getitem, _setitem  # noqa: F401
from .matmul import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .reduction import *  # noqa: F401,F403
from .scatter import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
from .unary import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .sorting import *  # noqa: F401,F403
from .complex import *  # noqa: F401,F403
from .special import *  # noqa: F401,F403
from .extra import *  # noqa: F401,F403
from .view_copy import *  # noqa: F401,F403
from .spectral import *  # noqa: F401,F403
from .quant import *  # noqa: F401,F403

# Families whose functions are also Tensor methods (conv, pooling, loss ... are not).
_FAMILIES = (activation, arithmetic, comparison, _complex, _extra, conversion, indexing, linalg,
             _matmul, reduction, _scatter, shape, sorting, special, unary)
# (functions torch has no Tensor method for)
_NOT_METHODS = {"device", "is_tensor", "where", "gradient", "trapezoid", "trapz",
                "cumulative_trapezoid", "isin", "cdist", "histogramdd", "block_diag",
                "cartesian_prod", "combinations", "tril_indices", "triu_indices", "hann_window",
                "hamming_window", "blackman_window", "bartlett_window", "kaiser_window", "fill",
                "unravel_index", "can_cast", "threshold", "threshold_", "vander", "lu_unpack",
                "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors",
                "bucketize", "cat", "celu", "celu_", "chain_matmul", "column_stack", "complex",
                "concat", "concatenate", "dstack", "einsum", "hstack", "meshgrid", "poisson",
                "polar", "row_stack", "rsub", "searchsorted", "selu", "selu_", "stack",
                "std_mean", "tensordot", "var_mean", "view_as_complex", "view_as_real",
                "vstack"}

# Names callable as ``tensor.NAME(...)``: every family function taking the tensor first.
_TENSOR_METHODS = frozenset(
    [n for fam in _FAMILIES for n in fam.__all__ if n not in _NOT_METHODS]
    + ["bernoulli", "multinomial", "poisson", "diagonal_scatter", "select_scatter",
       "slice_scatter", "as_strided_scatter", "narrow_copy", "nonzero_static", "stft",
       "istft"])

# ``out=`` for the module-level functions that take it in torch (``ember.add(a, b, out=o)``).
# Tensor methods and operators take no ``out=`` in torch: ``_PLAIN`` keeps the unwrapped
# functions for them (name -> function).
from ._out import OUT_NAMES as _OUT_NAMES, with_out as _with_out  # noqa: E402
_PLAIN = {}
for _name in _OUT_NAMES:
    if _name in globals():
        _PLAIN[_name] = globals()[_name]
        globals()[_name] = _with_out(_PLAIN[_name], _name)
del _name
_PLAIN["repeat_interleave"] = _scatter._repeat_interleave_method   # (torch's method errors)
# (methods that take several ints where the function takes a tuple: ``t.squeeze(0, 1)``)
_PLAIN["broadcast_to"] = shape._broadcast_to_method
_PLAIN["squeeze"] = shape._squeeze_method
_PLAIN["squeeze_"] = shape._squeeze__method


from ..tensor import Tensor as _Tensor  # noqa: E402


def _split_method(self, split_size: "int | list[int] | tuple[int, ...]",
                  dim: int = 0) -> "tuple[_Tensor, ...]":
    """``Tensor.split``: the method names its argument ``split_size`` (the function does not)."""
    return shape.split(self, split_size, dim)


_split_method.__name__, _split_method.__qualname__ = "split", "Tensor.split"
_PLAIN["split"] = _split_method


_custom_namespace = None    # (``ember.library`` sets it: its custom-op namespaces)


def __getattr__(name):
    """``ember.ops.<ns>``: operators from ``ember.library`` (``custom_op``, ``Library``)."""
    import importlib.util
    ns = None if (_custom_namespace is None or name.startswith("_") or importlib.util.find_spec(
        __name__ + "." + name) is not None) else _custom_namespace(name)    # (not a submodule)
    if ns is None:
        raise AttributeError("module 'ember.ops' has no attribute %r" % name)
    return ns
