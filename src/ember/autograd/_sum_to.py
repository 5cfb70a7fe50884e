"""Summing a broadcast gradient back to its input's shape (and expanding it again), for the
engine: a Function may return a gradient of the broadcast shape, as torch's engine allows."""
from __future__ import annotations

from typing import Sequence, Tuple

import numpy as np

from ..backend import get_array_module
from ..tensor import Tensor
from .function import Function


def _reduced_axes(shape: Tuple[int, ...], target: Sequence[int]) -> Tuple[int, ...]:
    """The axes of ``shape`` summed away to reach the (broadcastable) ``target``."""
    lead = len(shape) - len(target)
    axes = list(range(lead))
    for i, s in enumerate(target):
        if s == 1 and shape[lead + i] != 1:
            axes.append(lead + i)
    return tuple(axes)


def sum_to_array(arr, shape):
    """The array ``arr`` summed over the dims that broadcasting added to reach it from
    ``shape`` (``arr`` itself when nothing was added)."""
    axes = _reduced_axes(arr.shape, shape)
    if not axes:
        return arr
    if arr.dtype.itemsize == 2 and arr.dtype.kind in "fV":     # (float16/bfloat16: torch
        out = arr.sum(axis=axes, keepdims=True, dtype=np.float32).astype(arr.dtype)  # sums in f32)
    else:
        out = arr.sum(axis=axes, keepdims=True)
    return out.reshape(shape) if out.ndim != len(shape) else out


class SumToSize(Function):
    """``grad`` summed over its broadcast dims to ``shape`` (torch's ``sum_to_size``)."""

    node_name = "SumBackward1"      # (torch sums over the dims with keepdim ...)

    @staticmethod
    def forward(ctx, grad, shape):
        arr = grad._array
        lead = arr.ndim - len(shape)
        if lead < 0:
            raise RuntimeError("size {%s} is not expandable to size {%s}."
                               % (", ".join(map(str, shape)), ", ".join(map(str, arr.shape))))
        if lead:
            ctx.set_node_name("ViewBackward0")   # (... then views away the leading dims)
        ctx.in_shape = arr.shape
        return Tensor._wrap(sum_to_array(arr, shape))

    @staticmethod
    def backward(ctx, grad_output):
        return ExpandTo.apply(grad_output, ctx.in_shape), None


class ExpandTo(Function):
    """``grad`` broadcast to ``shape``."""

    node_name = "ExpandBackward0"

    @staticmethod
    def forward(ctx, grad, shape):
        arr = grad._array
        ctx.in_shape = arr.shape
        return Tensor._wrap(get_array_module(arr).broadcast_to(arr, shape))

    @staticmethod
    def backward(ctx, grad_output):
        return SumToSize.apply(grad_output, ctx.in_shape), None


def sum_to_size(grad: Tensor, shape: Sequence[int]) -> Tensor:
    """``grad`` summed to ``shape`` (recorded under create_graph, as any op)."""
    return SumToSize.apply(grad, tuple(shape))
