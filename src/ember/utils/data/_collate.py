"""default_collate and default_convert: samples to batches, as torch builds them.

Samples that are NumPy arrays or Python numbers are host data and become CPU tensors; tensor
samples are stacked on their own device.
"""
import collections.abc
import re

import numpy as np

from ...backend import get_array_module
from ...tensor import Tensor

__all__ = ["default_collate", "default_convert"]

_NP_STR = re.compile(r"[SaUO]")
_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        "found {}")


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _rebuild_mapping(elem, items):
    try:
        out = type(elem)(items)
        return out
    except TypeError:
        return dict(items)


def _stack(batch):
    """``torch.stack(batch)`` on the raw arrays (samples from a dataset carry no graph)."""
    shape = batch[0]._array.shape
    for i, t in enumerate(batch):
        if not isinstance(t, Tensor):
            raise TypeError("expected Tensor as element %d in argument 0, but got %s"
                            % (i, type(t).__name__))
        if t._array.shape != shape:
            raise RuntimeError("stack expects each tensor to be equal size, but got %s at entry "
                               "0 and %s at entry %d" % (list(shape), list(t._array.shape), i))
    if any(t.requires_grad for t in batch):
        from ... import ops
        return ops.stack(batch, 0)
    arrays = [t._array for t in batch]
    return Tensor._wrap(get_array_module(*arrays).stack(arrays))    # on the samples' device


def default_convert(data):
    """Turn NumPy arrays (and arrays inside dicts/lists/tuples) into tensors, leave the rest."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        if _NP_STR.search(data.dtype.str) is not None:
            return data
        return Tensor._wrap(np.array(data, copy=True))
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return Tensor._wrap(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, [(k, default_convert(v)) for k, v in data.items()])
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Stack a list of samples into a batch, recursively, the way torch does.

    Tensors and NumPy arrays are stacked along a new first dimension; Python floats become a
    float64 tensor, ints an int64 tensor, bools a bool tensor; strings stay a list; dicts,
    namedtuples and sequences are collated field by field (tuples become lists, as in torch).

    Example:
        >>> import ember
        >>> default_collate([(ember.tensor([1.0]), 0), (ember.tensor([2.0]), 1)])
        [tensor([[1.],
                [2.]]), tensor([0, 1])]
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack(batch)
    if isinstance(elem, np.ndarray):
        if _NP_STR.search(elem.dtype.str) is not None:
            raise TypeError(_ERR.format(elem.dtype))
        return default_collate([Tensor._wrap(b) for b in batch])
    if isinstance(elem, np.generic) and not isinstance(elem, (np.str_, np.bytes_)):
        return Tensor._wrap(np.array(batch, dtype=elem.dtype))
    if isinstance(elem, bool):
        return Tensor._wrap(np.array(batch, dtype=np.bool_))
    if isinstance(elem, float):
        return Tensor._wrap(np.array(batch, dtype=np.float64))
    if isinstance(elem, int):
        return Tensor._wrap(np.array(batch, dtype=np.int64))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, [(k, default_collate([d[k] for d in batch]))
                                       for k in elem])
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            return type(elem)([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_ERR.format(type(elem)))
