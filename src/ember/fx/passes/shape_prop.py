"""``torch.fx.passes.shape_prop.ShapeProp``: run a graph on example inputs and record each
Node's output shape and dtype in ``node.meta['tensor_meta']``."""
from typing import Any, NamedTuple

from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ["TensorMetadata", "ShapeProp"]


class TensorMetadata(NamedTuple):
    shape: Any
    dtype: Any
    requires_grad: bool
    stride: Any
    memory_format: Any
    is_quantized: bool
    qparams: dict


def _extract_tensor_metadata(result):
    import ember
    memory_format = None
    for fmt in ("contiguous_format", "channels_last", "channels_last_3d"):
        mf = getattr(ember, fmt, None)
        if mf is not None and result.is_contiguous(memory_format=mf):
            memory_format = mf
            break
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(),
                          memory_format, False, {})


class ShapeProp(Interpreter):
    """Interpreter that stores ``TensorMetadata`` (shape, dtype, ...) of each Node's
    result in ``node.meta['tensor_meta']`` and its type in ``node.meta['type']``."""

    def __init__(self, gm, fake_mode=None):
        super().__init__(gm)

    def run_node(self, n):
        import ember
        result = super().run_node(n)
        found = []

        def extract(obj):
            if isinstance(obj, ember.Tensor):
                found.append(True)
                return _extract_tensor_metadata(obj)
            return obj
        meta = map_aggregate(result, extract)
        if found:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        """Run the graph on ``args``, recording metadata; returns the result."""
        return super().run(*args)
