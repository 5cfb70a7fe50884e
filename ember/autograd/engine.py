"""backward(): an iterative walk of the graph from the outputs to the leaves, latest node first.

Each node runs once, when every consumer has sent its gradient; gradients that meet at a node
are summed first. Leaves receive theirs through ``.grad`` (or are captured for
``autograd.grad``).
"""
import sys
import weakref
from heapq import heappop as _heappop, heappush as _heappush

import numpy as np

from .graph import Node
from .grad_mode import state as _state

__all__ = ["backward", "grad"]


def _make_grads(outputs, grad_outputs):
    Tensor = _Tensor or _tensor_cls()
    grads = []
    for i, t in enumerate(outputs):
        g = None if grad_outputs is None else grad_outputs[i]
        if g is None:
            arr = t._array
            if arr.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs "
                                   "(output %d has shape %s); pass gradient= with that shape"
                                   % (i, tuple(arr.shape)))
            if arr.ndim:
                g = Tensor._wrap(np.ones(arr.shape, dtype=arr.dtype))
            else:
                g = Tensor._wrap(np.array(1, dtype=arr.dtype))
        else:
            if not isinstance(g, Tensor):
                from .. import ops
                g = ops.as_tensor(g, dtype=t.dtype)
            if g._array.shape != t._array.shape:
                raise RuntimeError("Mismatch in shape: grad_output[%d] has a shape of %r and "
                                   "output[%d] has a shape of %r."
                                   % (i, g.shape, i, t.shape))
            if g._array.dtype != t._array.dtype:
                g = Tensor._wrap(g._array.astype(t._array.dtype))
        grads.append(g)
    return grads


def _roots(outputs):
    roots = []
    for i, t in enumerate(outputs):
        if t._base is not None and t._requires_grad:
            from .function import refresh_view
            refresh_view(t)
        if t.grad_fn is not None:
            roots.append((t.grad_fn, t._output_nr))
        elif t._requires_grad:
            roots.append((t, 0))
        else:
            raise RuntimeError("element %d of tensors does not require grad and does not have a "
                               "grad_fn" % i)
    return roots


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Sum the gradients of ``tensors`` into the ``.grad`` of the leaves (or of ``inputs``)."""
    Tensor = _Tensor or _tensor_cls()
    if isinstance(tensors, Tensor):
        tensors = (tensors,)
    if isinstance(grad_tensors, Tensor):
        grad_tensors = (grad_tensors,)
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(tensors, grad_tensors)
    targets = None
    if inputs is not None:
        if isinstance(inputs, Tensor):
            inputs = (inputs,)
        if len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        targets = {id(t): t for t in inputs}
    _execute(_roots(tensors), grads, retain_graph, create_graph, targets, None)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return the gradients of ``outputs`` with respect to ``inputs`` (no ``.grad`` is written).

    Example:
        >>> import ember
        >>> x = ember.tensor(2.0, requires_grad=True)
        >>> (dy,) = ember.autograd.grad(x ** 3, x, create_graph=True)
        >>> ember.autograd.grad(dy, x)[0]
        tensor(12.)
    """
    Tensor = _Tensor or _tensor_cls()
    single = isinstance(inputs, Tensor)
    if isinstance(outputs, Tensor):
        outputs = (outputs,)
    if single:
        inputs = (inputs,)
    inputs = tuple(inputs)
    if isinstance(grad_outputs, Tensor):
        grad_outputs = (grad_outputs,)
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    for i, t in enumerate(inputs):
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors (input %d) does not require "
                               "grad" % i)
    grads = _make_grads(outputs, grad_outputs)
    capture = {}
    for t in inputs:
        key = (id(t.grad_fn), t._output_nr) if t.grad_fn is not None else id(t)
        capture[key] = None
    _execute(_roots(outputs), grads, retain_graph, create_graph, None, capture)
    result = []
    for i, t in enumerate(inputs):
        key = (id(t.grad_fn), t._output_nr) if t.grad_fn is not None else id(t)
        g = capture[key]
        if g is None:
            if materialize_grads:
                g = Tensor._wrap(np.zeros_like(t._array))
            elif not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been "
                                   "used in the graph (input %d). Set allow_unused=True if this "
                                   "is the desired behavior." % i)
        result.append(g)
    return tuple(result)


def _add(a, b):
    if a is None:
        return b
    return a + b


def _execute(roots, grads, retain_graph, create_graph, targets, capture):
    """Run the graph from ``roots`` (pairs (node or leaf, output_nr)) with ``grads``.

    Nodes run latest-recorded first, as in torch's ready queue: a node is recorded after the
    nodes of its inputs, so it runs once every consumer has sent its gradient, with no
    dependency pass. Leaves accumulate once all nodes have run, in the order first reached;
    when a leaf of this graph has a hook, a pass counts each leaf's uses, and a leaf
    accumulates as soon as its last use has run, as in torch, so that hooks run in its order.
    """
    Tensor = _Tensor or _tensor_cls()
    needed = receivers = None
    if capture is not None:
        # grad(): only what leads to a requested input runs (as torch); the rest of the graph
        # keeps its saved tensors for a later backward.
        needed, receivers = _prune(_reachable(roots), capture, [r for r, _ in roots])
    buffers = {}
    heap = []
    leaves = {}
    for (r, nr), g in zip(roots, grads):
        if receivers is not None and r not in receivers:
            continue
        if isinstance(r, Node):
            buf = buffers.get(r)
            if buf is None:
                buf = buffers[r] = [None] * r._n_out
                _heappush(heap, (-r._seq, r))
            buf[nr] = _add(buf[nr], g)
        else:
            leaves[r] = _add(leaves.get(r), g)
    plain = capture is None and targets is None and not _state.anomaly
    uses = _leaf_uses(roots) if _hooked_leaves else None
    done = []
    prev = _state.enabled
    _state.enabled = bool(create_graph)
    try:
        while heap:
            target = _heappop(heap)[1]
            buf = buffers.pop(target)
            edges = target._edges
            if plain and target._fast and len(buf) == 1 and buf[0] is not None:
                # the common case: no hooks, one output; the Function's backward called as is
                grads_in = target._forward_cls.backward(target, buf[0]) if create_graph or \
                    target._array_backward is None else target._array_backward(target, buf[0])
                if type(grads_in) is not tuple:
                    grads_in = (grads_in,)
                if len(grads_in) != len(edges):
                    grads_in = _check_count(target, grads_in)
            else:
                grads_in = _run_node(target, buf, capture, create_graph, targets,
                                     needed is None or target in needed)
            i = -1
            for e, g in zip(edges, grads_in):
                i += 1
                if e is None or (receivers is not None and e[0] not in receivers):
                    continue
                nxt, nr = e
                if isinstance(nxt, Node):
                    # (a node reached only by None still runs, empty, and frees what it saved,
                    # as in torch)
                    if g is not None:
                        shape, dtype = nxt._out_meta[nr]
                        if type(g) is not Tensor or g._array.shape != shape or \
                                (g._array.dtype is not dtype and g._array.dtype != dtype):
                            g = _check_grad(target, i, g, (shape, dtype))
                    b = buffers.get(nxt)
                    if b is None:
                        _heappush(heap, (-nxt._seq, nxt))
                        if nxt._n_out == 1:
                            buffers[nxt] = [g]
                        else:
                            b = buffers[nxt] = [None] * nxt._n_out
                            b[nr] = g
                    elif g is not None:
                        old = b[nr]
                        b[nr] = g if old is None else _sum(old, g, create_graph)
                else:
                    if g is not None:
                        arr = nxt._array
                        if type(g) is not Tensor or g._array.shape != arr.shape or \
                                (g._array.dtype is not arr.dtype and g._array.dtype != arr.dtype):
                            g = _check_grad(target, i, g, (arr.shape, arr.dtype))
                        old = leaves.get(nxt)
                        leaves[nxt] = g if old is None else _sum(old, g, create_graph)
                    if uses is not None:
                        uses[nxt] -= 1
                        if not uses[nxt] and nxt in leaves:
                            done.append(nxt)
            grads_in = buf = g = old = b = None    # hold no gradient here (see _accumulate)
            if not retain_graph and target._saved is not None and \
                    (needed is None or target in needed):
                target._release()
            while done:     # leaves whose last use just ran (only when a leaf has a hook)
                t = done.pop(0)
                g = leaves.pop(t)
                _leaf(t, g, create_graph, targets, capture)
                g = None
        for t in list(leaves):
            g = leaves.pop(t)
            _leaf(t, g, create_graph, targets, capture)
            g = None
    finally:
        _state.enabled = prev


_hooked_leaves = weakref.WeakValueDictionary()   # id -> live leaf that has (had) a hook


def note_leaf_hook(leaf):
    """Called when a hook is registered on ``leaf``: backward calls that reach it order leaf
    accumulation as torch does (see ``_execute``)."""
    _hooked_leaves[id(leaf)] = leaf


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
    if create_graph:
        return a + b
    Tensor = _Tensor or _tensor_cls()
    return Tensor._wrap(a._array + b._array)    # no graph to record: skip the op's wrapper


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


def _run_node(node, buf, capture, create_graph, targets, run=True):
    """Call one node's backward on its summed output gradients; check what it returns
    (with ``run`` False only capture the gradients: nothing requested lies behind the node)."""
    n_in = len(node._edges)
    if all(g is None for g in buf):
        return (None,) * n_in    # no gradient reached it: it runs empty (no hooks), as torch
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
                r = hook(g)
                if r is not None:
                    g = r
            buf[nr] = g
    if node._retains:
        for nr, ref in node._retains.items():
            t = ref()
            if t is not None and buf[nr] is not None and capture is None:
                _accumulate(t, buf[nr], create_graph)
    if capture is not None or targets is not None:
        for nr in range(len(buf)):
            key = (id(node), nr)
            if capture is not None and key in capture and buf[nr] is not None:
                capture[key] = _add(capture[key], buf[nr])
    if targets is not None:
        for t in targets.values():
            if t.grad_fn is node and buf[t._output_nr] is not None:
                _accumulate(t, buf[t._output_nr], create_graph)
    if not run:
        return (None,) * n_in
    n_none = 0
    for g in buf:
        if g is None:
            n_none += 1
    if n_none == len(buf):
        return (None,) * n_in
    if n_none and node._materialize:
        meta = node._out_meta
        Tensor = _Tensor or _tensor_cls()
        for i, g in enumerate(buf):
            if g is None and meta[i] is not None:
                buf[i] = Tensor._wrap(np.zeros(meta[i][0], dtype=meta[i][1]))
    result = node._call_backward(buf, create_graph)
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
    if _state.anomaly:
        from .anomaly_mode import check_nan
        check_nan(node, result)
    return result


_Tensor = None


def _tensor_cls():
    global _Tensor
    from ..tensor import Tensor
    _Tensor = Tensor
    return Tensor


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
        target = e[0]
        if isinstance(target, Node):
            meta = target._out_meta[e[1]]
        else:
            meta = target._array.shape, target._array.dtype
        checked = _check_grad(node, i, g, meta)
        if checked is not g:
            if out is None:
                out = list(result)
            out[i] = checked
    return result if out is None else out


def _check_grad(node, i, g, meta):
    """Gradient ``g`` (index ``i`` of ``node``'s result) given the input's (shape, dtype)."""
    Tensor = _Tensor or _tensor_cls()
    if not isinstance(g, Tensor):
        raise TypeError("function %s returned a gradient of type %s at index %d; expected a "
                        "Tensor or None" % (node.name(), type(g).__name__, i))
    shape, dtype = meta
    arr = g._array
    if arr.shape == shape and arr.dtype == dtype:
        return g
    if arr.shape != shape:
        if _expandable(shape, arr.shape):
            from .. import ops
            g = ops.sum_to_size(g, shape)
        else:
            raise RuntimeError("Function %s returned an invalid gradient at index %d - got "
                               "%s but expected shape compatible with %s"
                               % (node.name(), i, list(arr.shape), list(shape)))
    if g._array.dtype != dtype:
        if g._array.dtype.kind not in "fc":
            raise RuntimeError("Function %s returned an invalid gradient at index %d - "
                               "expected dtype %s but got %s"
                               % (node.name(), i, dtype, g._array.dtype))
        g = g.to(_dtype_of(dtype))
    return g


def _dtype_of(np_dtype):
    from ..dtypes import from_numpy_dtype
    return from_numpy_dtype(np_dtype)


def _expandable(shape, grad_shape):
    """True when ``shape`` broadcasts to ``grad_shape`` (the grad can be summed back)."""
    if len(shape) > len(grad_shape):
        return False
    for s, g in zip(reversed(shape), reversed(grad_shape)):
        if s != g and s != 1:
            return False
    return True


def _leaf(t, g, create_graph, targets, capture):
    if t._hooks:
        for hook in list(t._hooks.values()):
            r = hook(g)
            if r is not None:
                g = r
    if capture is not None:
        if id(t) in capture:
            capture[id(t)] = _add(capture[id(t)], g)
        return
    if targets is not None and id(t) not in targets:
        return
    _accumulate(t, g, create_graph)
    post = t.__dict__.get("_post_hooks") if hasattr(t, "__dict__") else None
    if post:
        for hook in list(post.values()):
            hook(t)


_getrefcount = sys.getrefcount
_UNSHARED = 4   # _execute's, _leaf's and our local names, and getrefcount's argument


def _accumulate(t, g, create_graph):
    """Add ``g`` into ``t.grad``: in place normally; out of place (keeping the graph) otherwise."""
    Tensor = _Tensor or _tensor_cls()
    arr = g._array
    if arr.dtype != t._array.dtype:
        arr = arr.astype(t._array.dtype)
        g = Tensor._wrap(arr)
    old = t._grad
    if create_graph:
        t._grad = g if old is None else old + g
        return
    if old is None:
        # A gradient array that nothing else references becomes .grad as is (as torch steals
        # it); any other holder (a view, a hook, another leaf, a saved tensor) forces a copy.
        if arr.base is None and _getrefcount(arr) <= 3 and _getrefcount(g) <= _UNSHARED:
            t._grad = Tensor._wrap(arr)
        else:
            t._grad = Tensor._wrap(np.array(arr, copy=True))
    elif old._requires_grad:
        t._grad = Tensor._wrap(old._array + arr)
    else:
        np.add(old._array, arr, out=old._array)
