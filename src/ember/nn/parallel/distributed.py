"""DistributedDataParallel: one model replica per rank, gradients averaged during backward."""
from __future__ import annotations

import weakref
from contextlib import contextmanager
from typing import Any, List

from ... import distributed as dist
from ...autograd.graph import Node
from ...autograd.grad_mode import is_grad_enabled
from ...distributed._reducer import Reducer, sync_tensors, verify_params_across_processes
from ...tensor import Tensor
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024


def _find_tensors(obj: Any) -> List[Tensor]:
    """The tensors inside ``obj`` (a tensor, or lists, tuples and dicts of them)."""
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _find_tensors(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _find_tensors(o)]
    return []


def _reached_leaves(outputs: List[Tensor]) -> set:
    """ids of the leaf tensors the autograd graph behind ``outputs`` leads to."""
    found = set()
    stack, seen = [], set()
    for t in outputs:
        if t.grad_fn is not None:
            stack.append(t.grad_fn)
        else:
            found.add(id(t))
    while stack:
        node = stack.pop()
        for e in node._edges:
            if e is None:
                continue
            target = e[0]
            if isinstance(target, Node):
                if id(target) not in seen:
                    seen.add(id(target))
                    stack.append(target)
            else:
                found.add(id(target))
    return found


class DistributedDataParallel(Module):
    """Data parallelism across the ranks of a process group, as ``torch.nn.parallel``'s.

    At construction, rank 0's parameters and buffers are broadcast to every rank (after
    checking that all ranks hold the same parameter shapes). During backward, gradients are
    averaged by bucketed nonblocking all-reduces that start as soon as a bucket's gradients
    are all accumulated; ``backward()`` returns with ``.grad`` averaged on every rank, so any
    optimizer then takes the same step everywhere.

    Args:
        module: the model (``.module`` afterwards; ``state_dict`` keys get ``module.``).
        broadcast_buffers: broadcast rank 0's buffers at each forward (default True).
        process_group: the group to average over (default: the world).
        bucket_cap_mb: bucket size in MiB (default 25; the first bucket is 1 MiB).
        find_unused_parameters: look through the forward's output graph for parameters that
            will get no gradient this iteration, and count them as ready.
        init_sync: broadcast rank 0's parameters and buffers at construction (default True).

    ``device_ids``, ``output_device``, ``dim``, ``check_reduction``, ``gradient_as_bucket_view``
    and ``static_graph`` are accepted for compatibility; gradients are copied out of the
    buckets (``gradient_as_bucket_view=False`` behaviour).
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False):
        super().__init__()
        pg = dist.distributed_c10d._group(process_group)
        if pg is None:
            raise ValueError("DistributedDataParallel: this rank is not in process_group")
        self.module = module
        self.process_group = pg
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = True if broadcast_buffers is None else bool(broadcast_buffers)
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        if bucket_cap_mb is None:
            bucket_cap_mb = 25
        self.bucket_bytes_cap = int(bucket_cap_mb * 1024 * 1024)
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        params = [p for _, p in named]
        self._param_names = [n for n, _ in named]
        verify_params_across_processes(pg, params)
        if init_sync:
            sync_tensors(pg, list(module.parameters()) + list(module.buffers()))
        self.reducer = Reducer(params, pg, self.bucket_bytes_cap,
                               min(_DEFAULT_FIRST_BUCKET_BYTES, self.bucket_bytes_cap),
                               find_unused_parameters)
        self._hook_handles = []
        me = weakref.ref(self)
        for i, p in enumerate(params):
            self._hook_handles.append(p.register_post_accumulate_grad_hook(_hook(me, i)))

    def forward(self, *inputs, **kwargs):
        grad_sync = is_grad_enabled() and self.require_backward_grad_sync
        if self.broadcast_buffers and self.require_forward_param_sync and \
                self.process_group.size() > 1:
            sync_tensors(self.process_group, list(self.module.buffers()))
        output = self.module(*inputs, **kwargs)
        if grad_sync:
            self.require_forward_param_sync = True
            unused = None
            if self.find_unused_parameters:
                reached = _reached_leaves(_find_tensors(output))
                unused = [i for i, p in enumerate(self.reducer.params) if id(p) not in reached]
            self.reducer.prepare_for_backward(unused)
        else:
            self.require_forward_param_sync = False
        return output

    @contextmanager
    def no_sync(self):
        """Inside this context, forward/backward accumulate gradients locally, unaveraged; the
        first backward after a forward outside it averages everything accumulated."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _remove_hooks(self):
        for h in self._hook_handles:
            h.remove()
        self._hook_handles = []

    def __del__(self):
        try:
            self._remove_hooks()
        except Exception:     # interpreter shutdown
            pass


def _hook(ref, i):
    def post_accumulate_grad_hook(param):
        ddp = ref()
        if ddp is not None:
            ddp.reducer.autograd_hook(i)
    return post_accumulate_grad_hook
