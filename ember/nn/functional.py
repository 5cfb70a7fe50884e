"""nn.functional: the maths behind the layers (modules are thin wrappers around these)."""
from .. import ops
from ..tensor import Tensor

__all__ = ["linear", "relu"]


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``."""
    out = ops.matmul(input, ops.t(weight))
    if bias is not None:
        out = out + bias
    return out


def relu(input, inplace=False):
    """``max(input, 0)``."""
    return ops.relu_(input) if inplace else ops.relu(input)
