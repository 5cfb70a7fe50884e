"""The namespace the distributions compute with: ember's ops, ``linalg``, ``special`` and ``nn``,
plus the random primitives of ``_fallback``.

The distribution files read ``ember.NAME`` from here as torch's read ``torch.NAME``.
"""
import builtins
import math
from typing import Any, Union

from .. import nn  # noqa: F401
from ..autograd.grad_mode import enable_grad, no_grad  # noqa: F401
from ..dtypes import *  # noqa: F401,F403
from ..dtypes import finfo, get_default_dtype  # noqa: F401
from ..ops import *  # noqa: F401,F403
from ..tensor import Size, Tensor  # noqa: F401
from .. import linalg  # noqa: F401,F811  (the public ember.linalg, not ops.linalg)
from .. import special  # noqa: F401
from ._fallback import (_dirichlet_grad, _sample_dirichlet, _standard_gamma,  # noqa: F401
                        _standard_gamma_grad)

inf = math.inf
nan = math.nan
_Number = Union[builtins.int, builtins.float, builtins.bool]
Number = _Number
_size = Any
_dtype = Any
Device = Any
contiguous_format = None
SymInt = builtins.int


def is_tensor_like(x):
    return isinstance(x, Tensor)


def _is_all_true(t):
    return builtins.bool(t.all())
