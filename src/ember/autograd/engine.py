"""backward(): one iterative walk of the graph from the outputs to the leaves, latest node first.

Nodes run latest-recorded first, as in torch's ready queue: a node is recorded after the nodes
of its inputs, so it runs once every consumer has sent its gradient, with no dependency pass.
Gradients that meet at a node are summed first. Leaves receive theirs through ``.grad`` (or are
captured for ``autograd.grad``). Hooks are a policy of the walk: a node without hooks has its
backward called directly; one with hooks goes through ``_run_node``.
"""
from __future__ import annotations

import warnings
import weakref
from heapq import heappop as _heappop, heappush as _heappush
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ..backend import get_array_module, silence, unsilence
from ..dtypes import from_numpy_dtype
from ..tensor import Tensor
from ._sum_to import sum_to_size
from .function import Stack, refresh_view
from .graph import Node, _type_name
from .grad_mode import state as _state

__all__ = ["backward", "grad", "queue_callback"]

_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_GradTensors = Union[Tensor, Sequence[Optional[Tensor]], None]


def _make_grads(outputs, grad_outputs):
    grads = []
    n = len(outputs) if grad_outputs is None else min(len(outputs), len(grad_outputs))
    for i, t in enumerate(outputs[:n]):
        g = None if grad_outputs is None else grad_outputs[i]
        if g is None:
            arr = t._array
            # (as torch: checked for outputs that require grad, the others fail in _roots)
            if t._requires_grad and arr.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if t._requires_grad and arr.dtype.kind == "c":
                raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                                   "but got %s" % t.dtype)
            g = Tensor._wrap(get_array_module(arr).ones(arr.shape, dtype=arr.dtype))
        else:
            if not isinstance(g, Tensor):
                raise TypeError("gradients can be either Tensors or None, but got %s"
                                % type(g).__name__)
            if g._array.shape != t._array.shape:
                raise RuntimeError("Mismatch in shape: grad_output[%d] has a shape of %r and "
                                   "output[%d] has a shape of %r."
                                   % (i, g.shape, i, t.shape))
            if g._array.dtype != t._array.dtype:
                if (g._array.dtype.kind == "c") != (t._array.dtype.kind == "c"):
                    raise RuntimeError(
                        "For complex Tensors, both grad_output and output are required to have "
                        "the same dtype. Mismatch in dtype: grad_output[%d] has a dtype of %s "
                        "and output[%d] has a dtype of %s." % (i, g.dtype, i, t.dtype))
                g = Tensor._wrap(g._array.astype(t._array.dtype))
        grads.append(g)
    if n < len(outputs):    # (torch's engine check, after the per-gradient ones)
        raise RuntimeError("got %d tensors and %d gradients" % (len(outputs), n))
    return grads


def _roots(outputs):
    roots = []
    for i, t in enumerate(outputs):
        if t._base is not None and t._requires_grad:
            refresh_view(t)
        if t.grad_fn is not None:
            roots.append((t.grad_fn, t._output_nr))
        elif t._requires_grad:
            roots.append((t, 0))
        else:
            raise RuntimeError("element %d of tensors does not require grad and does not have a "
                               "grad_fn" % i)
    return roots


def backward(tensors: _TensorOrTensors, grad_tensors: _GradTensors = None,
             retain_graph: Optional[bool] = None, create_graph: bool = False,
             inputs: Optional[_TensorOrTensors] = None) -> None:
    """Sum the gradients of ``tensors`` into the ``.grad`` of the leaves (or of ``inputs``)."""
    if isinstance(tensors, Tensor):
        tensors = (tensors,)
    if isinstance(grad_tensors, Tensor):
        grad_tensors = (grad_tensors,)
    elif grad_tensors is not None:
        grad_tensors = tuple(grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph and not _cycle_warned:
        _warn_cycle()
    grads = _make_grads(tensors, grad_tensors)
    targets = None
    if inputs is not None:
        if isinstance(inputs, Tensor):
            inputs = (inputs,)
        if len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        for t in inputs:        # (torch retains each input's grad: a non-leaf keeps its .grad)
            t.retain_grad()
        targets = {id(t): t for t in inputs}
    _execute(_roots(tensors), grads, retain_graph, create_graph, targets, None)


_cycle_warned = False


def _warn_cycle() -> None:
    """torch's warning, once per process, for ``backward(create_graph=True)``."""
    global _cycle_warned
    _cycle_warned = True
    warnings.warn("Using backward() with create_graph=True will create a reference cycle between "
                  "the parameter and its gradient which can cause a memory leak. We recommend "
                  "using autograd.grad when creating the graph to avoid this. If you have to use "
                  "this function, make sure to reset the .grad fields of your parameters to None "
                  "after use to break the cycle and avoid the leak.", UserWarning, stacklevel=4)


def grad(outputs: _TensorOrTensors, inputs: _TensorOrTensors, grad_outputs: _GradTensors = None,
         retain_graph: Optional[bool] = None, create_graph: bool = False, only_inputs: bool = True,
         allow_unused: Optional[bool] = None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> Tuple[Tensor, ...]:
    """Return the gradients of ``outputs`` with respect to ``inputs`` (no ``.grad`` is written).

    Example:
        >>> import ember
        >>> x = ember.tensor(2.0, requires_grad=True)
        >>> (dy,) = ember.autograd.grad(x ** 3, x, create_graph=True)
        >>> ember.autograd.grad(dy, x)[0]
        tensor(12.)
    """
    outputs = (outputs,) if isinstance(outputs, Tensor) else outputs
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). "
                      "To accumulate gradient for other parts of the graph, please use "
                      "torch.autograd.backward.", FutureWarning, stacklevel=2)
    if isinstance(grad_outputs, Tensor):
        grad_outputs = (grad_outputs,)
    elif grad_outputs is not None:
        grad_outputs = tuple(grad_outputs)
    allow_unused = materialize_grads if allow_unused is None else allow_unused
    retain_graph = create_graph if retain_graph is None else retain_graph
    for i, t in enumerate(inputs):
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused, materialize_grads)
    grads = _make_grads(outputs, grad_outputs)
    capture: Dict[Any, Optional[Tensor]] = {}
    for t in inputs:
        key = (id(t.grad_fn), t._output_nr) if t.grad_fn is not None else id(t)
        capture[key] = None
    _execute(_roots(outputs), grads, retain_graph, create_graph, None, capture)
    result: List[Any] = []     # (None for an unused input: torch's annotation leaves it out)
    for i, t in enumerate(inputs):
        key = (id(t.grad_fn), t._output_nr) if t.grad_fn is not None else id(t)
        g = capture[key]
        if g is None:
            if materialize_grads:
                g = Tensor._wrap(get_array_module(t._array).zeros_like(t._array))
            elif not allow_unused:
                raise RuntimeError("The differentiated Tensor at index %d appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior." % i)
        result.append(g)
    return tuple(result)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """``grad`` with ``is_grads_batched``: dimension 0 of each grad_output indexes independent
    vector-Jacobian products, whose results are stacked (torch vmaps one backward; here one
    backward per row, the graph kept until the last, so with ``create_graph`` the results'
    grad_fn is a StackBackward0, not the batched op's node)."""
    given = grad_outputs or (None,) * len(outputs)
    for i, (t, g) in enumerate(zip(outputs, given)):
        if isinstance(g, Tensor) and g._array.shape[1:] != t._array.shape:
            if g.dim() == 0:
                raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python "
                                 "or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a "
                                 "number")
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions are "
                "expected to match the shape of corresponding output, but a mismatch was "
                "detected: grad_output[%d] has a shape of %r and output[%d] has a shape of %r. "
                "If you only want some tensors in `grad_output` to be considered batched, "
                "consider using vmap." % (i, g.shape[2:], i, t.shape))
    # (torch's checks of the rest: implicit grads only for scalars, and then not batched)
    made = _make_grads(outputs, [g[0] if isinstance(g, Tensor) else g for g in given])
    made = [g if g is None or given[i] is None else given[i] for i, g in enumerate(made)]
    if any(g is not None and g.dim() == 0 for g in made):
        raise ValueError("vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some input, but "
                         "that input is a Tensor of dimensionality 0 so expected in_dim to "
                         "satisfy 0 <= in_dim < 0.")
    sizes = [g.shape[0] for g in made if g is not None]
    if len(set(sizes)) > 1:
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         "dimension, got sizes %s for the mapped dimension" % sizes)
    rows = [grad(outputs, inputs, [None if g is None else g[b] for g in made],
                 retain_graph if b == sizes[0] - 1 else True, create_graph,
                 allow_unused=allow_unused or materialize_grads) for b in range(sizes[0])]
    result = []
    for i, t in enumerate(inputs):
        col = [r[i] for r in rows]
        if col[0] is not None:
            result.append(Stack.apply(*col))
        elif materialize_grads:     # (unbatched, as torch's: zeros of the input's shape)
            result.append(Tensor._wrap(get_array_module(t._array).zeros_like(t._array)))
        else:
            result.append(None)
    return tuple(result)


def _add(a, b):
    if a is None:
        return b
    return a + b


def _execute(roots, grads, retain_graph, create_graph, targets, capture):
    """Run the graph from ``roots`` (pairs (node or leaf, output_nr)) with ``grads``.

    ``targets`` (``backward(inputs=...)``) limits which leaves accumulate; ``capture``
    (``grad()``) collects gradients instead of accumulating, and only the nodes that lead to a
    requested input run (the rest keep their saved tensors for a later backward, as in torch).
    """
    walk = _Walk(create_graph, targets, capture)
    if capture is not None or targets is not None:
        # (``backward(inputs=)`` runs only the nodes that lead to an input, as ``grad()``:
        # the hooks of the rest do not fire, as in torch)
        wanted = capture if capture is not None else {
            (id(t.grad_fn), t._output_nr) if t.grad_fn is not None else id(t): None
            for t in targets.values()}
        walk.needed, walk.receivers = _prune(_reachable(roots), wanted, [r for r, _ in roots])
    for (r, nr), g in zip(roots, grads):
        if walk.receivers is None or r in walk.receivers:
            walk.send_root(r, nr, g)
    if _hooked_leaves:
        walk.uses = _leaf_uses(roots)
    plain = capture is None and targets is None and not _state.anomaly
    needed = walk.needed
    buffers = walk.buffers
    heap = walk.heap
    ready = walk.ready
    send = walk.send_all
    prev, prev_retain = _state.enabled, _state.retain
    _state.enabled, _state.retain = True if create_graph else 0, bool(retain_graph)
    callbacks: List[Any] = []
    _final_callbacks.append(callbacks)
    _partial.append(capture is not None or targets is not None)
    fp = silence()      # (inf/nan gradients arise silently, as in torch's kernels)
    try:
        while heap:
            node = _heappop(heap)[1]
            buf = buffers.pop(node)
            # NOTE: the one fast path: a node without hooks whose one output got a gradient
            # has its backward called directly (W1/W2 in benchmarks/: every node of a step)
            if plain and node._fast and node._n_out == 1 and buf[0] is not None:
                array_backward = node._array_backward
                if create_graph or array_backward is None:
                    grads = node._forward_cls.backward(node, buf[0])
                    fresh = None
                else:
                    grads = array_backward(node, buf[0])
                    fresh = buf[0]
                if type(grads) is not tuple:
                    grads = (grads,)
                if len(grads) != len(node._edges):
                    grads = _check_count(node, grads)
                send(node, grads, fresh)
                run = True
            else:
                run = needed is None or node in needed
                if _state.anomaly:
                    send(node, _run_node_anomaly(node, buf, walk, run), None)
                else:
                    send(node, _run_node(node, buf, walk, run), None)
            grads = buf = None    # hold no gradient here (see _accumulate)
            if not retain_graph and node._saved is not None and run:
                node._release()
            if ready:
                walk.flush(ready)
        if walk.leaves:
            walk.flush(list(walk.leaves))
        while callbacks:
            callbacks.pop(0)()
    finally:
        _final_callbacks.pop()
        _partial.pop()
        _state.enabled, _state.retain = prev, prev_retain
        unsilence(fp)


# one list per running backward (innermost last): callbacks queued during it run at its end
_final_callbacks: List[List[Any]] = []
_partial: List[bool] = []       # and whether it is a grad() or a backward(inputs=) run


def queue_callback(callback: Any) -> None:
    """Run ``callback()`` once the current ``backward()`` has delivered every gradient (torch's
    ``Variable._execution_engine.queue_callback``; DistributedDataParallel waits for its
    all-reduces there)."""
    if not _final_callbacks:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _final_callbacks[-1].append(callback)


class _Walk:
    """The state of one backward call: pending gradients of nodes and leaves."""

    __slots__ = ("buffers", "heap", "leaves", "owned", "ready", "uses", "needed", "receivers",
                 "create_graph", "targets", "capture")

    def __init__(self, create_graph, targets, capture):
        self.buffers = {}       # node -> its output gradients so far
        self.heap = []          # (-seq, node): the latest-recorded node first
        self.leaves = {}        # leaf -> its gradient so far
        self.owned = set()      # leaves and one-output nodes whose pending gradient nothing
        #                         else holds (a leaf's may become its .grad as is)
        self.ready = []         # leaves whose last use has run (when counting uses)
        self.uses = None        # leaf -> edges still to run (only when a leaf has a hook)
        self.needed = self.receivers = None     # grad(): the nodes to run / to receive
        self.create_graph = create_graph
        self.targets = targets
        self.capture = capture

    def send_all(self, node, grads, fresh):
        """Send each gradient of ``node``'s result along its edge (checked against the input).

        ``fresh`` is the incoming gradient when ``grads`` come from the node's built-in
        ``array_backward`` (else None). Gradient ownership: a gradient that array_backward
        allocated, or the incoming gradient (or a view of it) passed on by a one-input node
        when nothing else held it, is the engine's to keep: it may become a leaf's ``.grad``
        without a copy. Every other gradient is copied first, so no ``.grad`` aliases another
        array.
        """
        receivers = self.receivers
        i = -1
        for e, g in zip(node._edges, grads):
            i += 1
            if e is None or (receivers is not None and e[0] not in receivers):
                continue
            target, nr = e
            own = False
            is_node = isinstance(target, Node)
            if g is not None:
                if is_node:
                    shape, dtype = target._out_meta[nr]
                else:
                    shape = target._array.shape
                    dtype = target._array.dtype
                arr = g._array if type(g) is Tensor else None
                if arr is None or arr.shape != shape or (arr.dtype is not dtype and
                                                         arr.dtype != dtype):
                    g = _check_grad(node, i, g, (shape, dtype))
                    own = True
                elif arr.size >= _ADOPT_MIN and fresh is not None and (
                        not is_node or _alone(target._edges)):
                    # (only a leaf, or a one-input node that may pass it on to one, cares)
                    own = self._owns(node, g, arr, fresh, grads)
            if not is_node:
                if g is not None:
                    leaves = self.leaves
                    old = leaves.get(target)
                    if old is None:
                        leaves[target] = g
                        if own:
                            self.owned.add(target)
                    else:
                        leaves[target] = _sum(old, g, self.create_graph)
                        self.owned.add(target)
                if self.uses is not None:
                    self._used(target)
                continue
            # a node: its gradients so far (a node reached only by None still runs, empty,
            # and frees what it saved, as in torch)
            b = self.buffers.get(target)
            if b is None:
                _heappush(self.heap, (-target._seq, target))
                if target._n_out == 1:
                    self.buffers[target] = [g]
                    if own:
                        self.owned.add(target)
                    continue
                b = self.buffers[target] = [None] * target._n_out
            if g is not None:
                if b[nr] is not None:
                    g = _sum(b[nr], g, self.create_graph)
                    own = True
                b[nr] = g
                if own and target._n_out == 1:
                    self.owned.add(target)   # (a later gradient is summed: the sum is owned)

    def _owns(self, node, g, arr, go, grads):
        """Whether gradient ``g`` (array ``arr``) of ``node``, whose incoming gradient was
        ``go``, is the engine's to keep (see ``send_all``)."""
        base = arr.base
        go_arr = go._array
        if g is go or (base is not None and (base is go_arr or base is go_arr.base)):
            # passed on by a one-input node (a node runs once: its entry needs no removal)
            return node in self.owned and _alone(grads)
        return len(grads) == 1 or _once(g, grads)   # allocated by array_backward

    def send_root(self, target, nr, g):
        """Start from root ``target`` (a node, or a leaf) with gradient ``g``."""
        if isinstance(target, Node):
            b = self.buffers.get(target)
            if b is None:
                _heappush(self.heap, (-target._seq, target))
                b = self.buffers[target] = [None] * target._n_out
            b[nr] = g if b[nr] is None else _sum(b[nr], g, self.create_graph)
        else:
            old = self.leaves.get(target)
            self.leaves[target] = g if old is None else _sum(old, g, self.create_graph)

    def _used(self, leaf):
        """One more use of ``leaf`` has run; at its last, it is ready to accumulate."""
        self.uses[leaf] -= 1
        if not self.uses[leaf] and leaf in self.leaves:
            self.ready.append(leaf)

    def flush(self, leaves):
        """Deliver the pending gradients of ``leaves`` (hooks, ``.grad`` or capture), in
        order."""
        pending = self.leaves
        owned = self.owned
        for t in leaves:
            g = pending.pop(t)
            own = t in owned
            if own:
                owned.discard(t)
            _leaf(t, g, own, self)
            g = None
        leaves.clear()


def _alone(items):
    """Exactly one of ``items`` is not None (a node with one differentiable input)."""
    n = 0
    for x in items:
        if x is not None:
            n += 1
    return n == 1


def _once(g, grads):
    """``g`` appears once in ``grads`` (by identity)."""
    n = 0
    for x in grads:
        if x is g:
            n += 1
    return n == 1


# id -> live leaf that has (had) a hook
# id -> weak reference to a live leaf that has (had) a hook (a plain dict: tested per backward)
_hooked_leaves: Dict[int, Any] = {}


def note_leaf_hook(leaf: Tensor) -> None:
    """Called when a hook is registered on ``leaf``: backward calls that reach it accumulate
    each leaf as soon as its last use has run, as torch does, so that hooks run in its order."""
    key = id(leaf)

    def forget(_ref: Any) -> None:
        _hooked_leaves.pop(key, None)
    _hooked_leaves[key] = weakref.ref(leaf, forget)


def _leaf_uses(roots):
    """How many edges of the graph behind ``roots`` lead to each leaf; None when no leaf of
    this graph has a hook (then the order of accumulation cannot be observed)."""
    uses = {}
    hooked = False
    for node in _reachable(roots):
        for e in node._edges:
            if e is not None and not isinstance(e[0], Node):
                leaf = e[0]
                uses[leaf] = uses.get(leaf, 0) + 1
                hooked = hooked or bool(leaf._hooks) or "_post_hooks" in leaf.__dict__
    return uses if hooked else None


def _reachable(roots):
    """The nodes reachable from ``roots``."""
    stack = [r for r, _ in roots if isinstance(r, Node)]
    seen = set(stack)
    while stack:
        for e in stack.pop()._edges:
            if e is not None and e[0] not in seen and isinstance(e[0], Node):
                seen.add(e[0])
                stack.append(e[0])
    return seen


def _sum(a, b, create_graph):
    """Two gradients of one input (same shape and dtype, already checked), added."""
    if create_graph or a.is_sparse:     # (torch's InputBuffer adds new + old when old is sparse)
        return a + b if create_graph else b + a
    return Tensor._wrap(_plus(a._array, b._array))    # no graph to record: skip the op's wrapper


def _plus(x, y):
    """``x + y`` as torch's add kernel: ``x + (1+0j) * y`` for complex (an infinite part of
    ``y`` turns its other part NaN)."""
    return x + y * (1 + 0j) if x.dtype.kind == "c" else x + y


def _check_count(node, result):
    """``result`` cut to one gradient per input, or torch's error when the count is wrong."""
    n_in = len(node._edges)
    if len(result) < n_in or any(g is not None for g in result[n_in:]):
        raise RuntimeError("function %s returned an incorrect number of gradients (expected "
                           "%d, got %d)" % (node.name(), n_in, len(result)))
    return result[:n_in]


def _prune(seen, capture, roots):
    """The nodes to run for ``grad()``: those from which a requested input is reachable; and
    the nodes and leaves that receive gradients (those plus the requested ones themselves,
    which are captured, not run)."""
    parents = {}
    for node in seen:
        for e in node._edges:
            if e is not None:
                parents.setdefault(e[0], []).append(node)
    wanted = []
    for x in parents.keys() | seen | set(roots):
        if isinstance(x, Node):
            if any((id(x), nr) in capture for nr in range(x._n_out)):
                wanted.append(x)
        elif id(x) in capture:
            wanted.append(x)
    needed = set()
    frontier = list(wanted)
    while frontier:
        for p in parents.get(frontier.pop(), ()):
            if p not in needed:
                needed.add(p)
                frontier.append(p)
    return needed, needed.union(wanted)


def _run_node(node, buf, walk, run=True):
    """One node through the general path: hooks, retained and captured gradients, missing
    gradients materialised, the result checked (with ``run`` False only capture: nothing
    requested lies behind the node)."""
    n_in = len(node._edges)
    if all(g is None for g in buf):
        return (None,) * n_in    # no gradient reached it: it runs empty (no hooks), as torch
    buf = _pre_hooks(node, buf)
    _observe(node, buf, walk)
    if not run or all(g is None for g in buf):
        return (None,) * n_in
    if node._materialize and any(g is None for g in buf):
        for i, g in enumerate(buf):
            meta = node._out_meta[i]
            if g is None and meta is not None:
                buf[i] = Tensor._wrap(_zeros_like_meta(node, meta))
    result = node._call_backward(buf, walk.create_graph)
    if type(result) is not tuple:
        result = (result,)
    if len(result) != n_in:
        result = _check_count(node, result)
    result = _validate(node, result)
    if node._post_hooks:
        for hook in list(node._post_hooks.values()):
            r = hook(result, tuple(buf))
            if r is not None:
                result = tuple(r)
    return result


def _run_node_anomaly(node, buf, walk, run):
    """``_run_node`` under anomaly mode: the result checked for NaN, and any error warned
    with the forward stack of the node that raised it (as torch)."""
    from .anomaly_mode import check_nan, warn_stack
    try:
        result = _run_node(node, buf, walk, run)
        check_nan(node, result)
    except Exception:
        warn_stack(node)
        raise
    return result


def _zeros_like_meta(node, meta):
    """Zeros of an output's (shape, dtype), on the device of the node's gradients."""
    for e in node._edges:
        if e is not None and not isinstance(e[0], Node):
            return get_array_module(e[0]._array).zeros(meta[0], dtype=meta[1])
    return _zeros_on_device(node, meta)


def _zeros_on_device(node, meta):
    saved = node._saved or ()
    for entry in saved:
        if entry is not None and getattr(entry[0], "_array", None) is not None:
            return get_array_module(entry[0]._array).zeros(meta[0], dtype=meta[1])
    return get_array_module().zeros(meta[0], dtype=meta[1])


def _pre_hooks(node, buf):
    """The node's pre-hooks and its outputs' tensor hooks, which may replace gradients."""
    if node._pre_hooks:
        for hook in list(node._pre_hooks.values()):
            r = hook(tuple(buf))
            if r is not None:
                buf = list(r)
    if node._tensor_hooks:
        for nr, hooks in node._tensor_hooks.items():
            g = buf[nr]
            if g is None:
                continue
            for hook in list(hooks.values()):
                g = _call_hook(hook, g)
            buf[nr] = g
    return buf


def _call_hook(hook, g):
    """A tensor hook's gradient, checked as torch's: None (keep ``g``) or a tensor of ``g``'s
    size and type."""
    r = hook(g)
    if r is None:
        return g
    if not isinstance(r, Tensor):
        raise TypeError("expected Variable, but hook returned '%s'" % type(r).__name__)
    name = getattr(hook, "__name__", type(hook).__name__)
    if r.shape != g.shape:
        raise RuntimeError("hook '%s' has changed the size of value" % name)
    if _type_name(r) != _type_name(g):
        raise RuntimeError("hook '%s' has changed the type of value (was %s got %s)"
                           % (name, _type_name(g), _type_name(r)))
    return r


def _observe(node, buf, walk):
    """Gradients of the node's outputs that are kept: ``retain_grad`` (``backward(inputs=...)``
    naming a non-leaf retains it) and ``grad()``'s capture."""
    if node._retains and walk.capture is None:
        for nr, ref in node._retains.items():
            t = ref()
            if t is not None and buf[nr] is not None:
                _accumulate(t, buf[nr], walk.create_graph, False)
    if walk.capture is not None:
        for nr, g in enumerate(buf):
            key = (id(node), nr)
            if key in walk.capture and g is not None:
                walk.capture[key] = _add(walk.capture[key], g)


def _validate(node, result):
    """Check each gradient against its input's shape and dtype (summing or casting if allowed)."""
    out = None
    edges = node._edges
    for i, g in enumerate(result):
        e = edges[i]
        if e is None or g is None:
            if e is None and g is not None:
                if out is None:
                    out = list(result)
                out[i] = None
            continue
        checked = _check_grad(node, i, g, node._input_meta(i))
        if checked is not g:
            if out is None:
                out = list(result)
            out[i] = checked
    return result if out is None else out


def _check_grad(node, i, g, meta):
    """Gradient ``g`` (index ``i`` of ``node``'s result) given the input's (shape, dtype)."""
    if not isinstance(g, Tensor):
        raise RuntimeError("expected Variable or None (got %s)" % type(g).__name__)
    shape, dtype = meta
    arr = g._array
    if arr.shape == shape and arr.dtype == dtype:
        return g
    if arr.shape != shape:
        if _expandable(shape, arr.shape):
            g = sum_to_size(g, shape)
        else:
            raise RuntimeError("Function %s returned an invalid gradient at index %d - got "
                               "%s but expected shape compatible with %s"
                               % (node.name(), i, list(arr.shape), list(shape)))
    if g._array.dtype != dtype:
        if g._array.dtype.kind == "c" and dtype.kind != "c":
            g = g.real      # (a real input's gradient is the real part, as torch)
        if g._array.dtype == dtype:
            return g
        if g._array.dtype.kind not in "fcV":
            raise RuntimeError("Function %s returned an invalid gradient at index %d - "
                               "expected dtype %s but got %s"
                               % (node.name(), i, dtype, g._array.dtype))
        g = g.to(from_numpy_dtype(dtype))
    return g


def _expandable(shape, grad_shape):
    """True when ``shape`` broadcasts to ``grad_shape`` (the grad can be summed back)."""
    if len(shape) > len(grad_shape):
        return False
    for s, g in zip(reversed(shape), reversed(grad_shape)):
        if s != g and s != 1:
            return False
    return True


def _leaf(t, g, own, walk):
    """A leaf's summed gradient: its hooks, then capture or ``.grad`` and post hooks."""
    if t._hooks:
        own = False     # a hook may keep the gradient it was given
        for hook in list(t._hooks.values()):
            g = _call_hook(hook, g)
    capture = walk.capture
    if capture is not None:
        if id(t) in capture:
            capture[id(t)] = _add(capture[id(t)], g)
        return
    if walk.targets is not None and id(t) not in walk.targets:
        return
    _accumulate(t, g, walk.create_graph, own)
    post = t.__dict__.get("_post_hooks")
    if post:
        for hook in list(post.values()):
            hook(t)


def _accumulate(t, g, create_graph, own):
    """Add ``g`` into ``t.grad``: in place normally; out of place (keeping the graph) under
    ``create_graph``. A gradient the engine owns (``own``) becomes ``.grad`` without a copy."""
    if g.is_sparse or t._grad is not None and t._grad.is_sparse:     # (torch's rules: ops/sparse)
        return (g if g.is_sparse else t._grad)._sparse_accumulate(t, g, create_graph)
    arr = g._array
    if arr.dtype != t._array.dtype:
        arr = arr.astype(t._array.dtype)
        g = Tensor._wrap(arr)
        own = True
    old = t._grad
    if create_graph:
        # (torch's first .grad under create_graph: a copy laid out as the leaf, CopyBackwards)
        t._grad = Tensor._wrap(get_array_module(arr).empty_like(t._array)).copy_(g) \
            if old is None else old + g
    elif old is None:
        if not (own and _adoptable(arr, t._array)):
            arr = _copy_like(arr, t._array)
        t._grad = Tensor._wrap(arr)
    elif old._requires_grad:
        t._grad = Tensor._wrap(_plus(old._array, arr))
    else:
        old._array += arr * (1 + 0j) if arr.dtype.kind == "c" else arr


# NOTE: below this size a gradient is copied into .grad rather than tracked for ownership: the
# checks cost more than the copy (W1 in benchmarks/: 16 elements); above, the copy costs more
# (W3: 512x512 weights).
_ADOPT_MIN = 4096


def _adoptable(arr, leaf):
    """An owned gradient array that may become ``.grad`` as is: laid out as the leaf (C order,
    or the leaf's strides where they differ), and all of its memory (not a window)."""
    ok = arr.flags.c_contiguous if leaf.flags.c_contiguous else arr.strides == leaf.strides
    return ok and (arr.base is None or getattr(arr.base, "nbytes", -1) == arr.nbytes)


def _copy_like(arr, leaf):
    """A copy of the gradient ``arr`` laid out as torch's AccumulateGrad lays out a first
    ``.grad``: with the leaf's strides when the leaf is dense, else in C order."""
    buf = arr if leaf.flags.c_contiguous else get_array_module(leaf).empty_like(leaf)
    if buf is arr or buf.strides != leaf.strides:     # (empty_like keeps a dense leaf's strides)
        return arr.copy()
    buf[...] = arr
    return buf
