"""parameters_to_vector and vector_to_parameters."""
from ... import ops
from ...tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """All parameters flattened and concatenated into one 1-D tensor."""
    return ops.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of the 1-D ``vec`` into the parameters' data."""
    if not isinstance(vec, Tensor):
        raise TypeError("expected torch.Tensor, but got: %s" % type(vec).__name__)
    pointer = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[pointer:pointer + n].view_as(p).data
        pointer += n
