"""default_collate and default_convert: samples to batches, as torch builds them.

Samples that are NumPy arrays or Python numbers are host data and become CPU tensors; tensor
samples are stacked on their own device.
"""
import collections.abc
import copy
import re

import numpy as np

from ...backend import get_array_module
from ...tensor import Tensor

__all__ = ["default_collate", "default_convert", "collate", "default_collate_fn_map"]

_NP_STR = re.compile(r"[SaUO]")
_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        "found {}")


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


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


def _rebuild_mapping(elem, items):
    """A mapping like ``elem`` holding ``items`` (a dict), as torch rebuilds it."""
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)     # keeps the mapping's extra state (defaultdict...)
            clone.update(items)
            return clone
        return type(elem)(items)
    except TypeError:
        return items


def _rebuild_sequence(elem, values):
    """A sequence like ``elem`` holding ``values`` (a list), as torch rebuilds it."""
    try:
        if isinstance(elem, collections.abc.MutableSequence):
            clone = copy.copy(elem)
            for i, v in enumerate(values):
                clone[i] = v
            return clone
        return type(elem)(values)
    except TypeError:
        return values


def default_convert(data):
    """Turn NumPy arrays and scalars (also inside mappings/sequences) into tensors.

    Arrays become tensors sharing their memory, as ``torch.as_tensor`` does; string and object
    arrays, and everything else, are returned unchanged.
    """
    if isinstance(data, Tensor):
        return data
    if type(data).__module__ == "numpy" and not isinstance(data, (np.str_, np.bytes_)):
        if isinstance(data, np.ndarray) and _NP_STR.search(data.dtype.str) is not None:
            return data
        from ... import as_tensor
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {k: default_convert(data[k]) for k in data})
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def collate(batch, *, collate_fn_map=None):
    """Collate ``batch`` recursively, dispatching element types through ``collate_fn_map``.

    An element whose type is a key of ``collate_fn_map`` (exactly, else the first key it is an
    instance of, in insertion order) goes to that function, called as
    ``fn(batch, collate_fn_map=collate_fn_map)``; mappings, namedtuples and sequences are
    collated field by field (tuples become lists, as in torch).
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {key: collate([d[key] for d in batch],
                                                    collate_fn_map=collate_fn_map)
                                       for key in elem})
    if _is_namedtuple(elem):
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map)
                           for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return transposed
        return _rebuild_sequence(elem, transposed)
    raise TypeError(_ERR.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    """Stack a batch of tensors along a new first dimension."""
    return _stack(batch)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    """Turn NumPy arrays into tensors and collate those (string/object arrays are an error)."""
    if _NP_STR.search(batch[0].dtype.str) is not None:
        raise TypeError(_ERR.format(batch[0].dtype))
    return collate([Tensor._wrap(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    """A batch of NumPy scalars as one tensor of their dtype."""
    from ... import as_tensor
    return as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None):
    """Python floats as a float64 tensor."""
    from ... import float64, tensor
    return tensor(batch, dtype=float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    """Python ints as an int64 tensor (bools as a bool tensor)."""
    from ... import tensor
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    """Strings and bytes stay a list."""
    return batch


default_collate_fn_map = {Tensor: collate_tensor_fn, np.ndarray: collate_numpy_array_fn,
                          (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
                          float: collate_float_fn, int: collate_int_fn, str: collate_str_fn,
                          bytes: collate_str_fn}


def default_collate(batch):
    """Stack a list of samples into a batch, recursively, the way torch does.

    Tensors and NumPy arrays are stacked along a new first dimension; Python floats become a
    float64 tensor, ints an int64 tensor, bools a bool tensor; strings stay a list; dicts,
    namedtuples and sequences are collated field by field (tuples become lists, as in torch).
    Extend it through ``default_collate_fn_map`` or call ``collate`` with a map of your own.

    Example:
        >>> import ember
        >>> default_collate([(ember.tensor([1.0]), 0), (ember.tensor([2.0]), 1)])
        [tensor([[1.],
                [2.]]), tensor([0, 1])]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
