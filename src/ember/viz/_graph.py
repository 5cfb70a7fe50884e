"""Walk a backward graph once into plain records that the DOT, HTML and summary views share."""
from ..autograd.graph import AccumulateGrad, _accumulate_grad_of
from ..backend import backend_of
from ..tensor import Tensor

__all__ = ["walk", "GraphRecord"]


def _shape(arr):
    return "(" + ", ".join(str(d) for d in arr.shape) + ("," if arr.ndim == 1 else "") + ")"


def _dtype_name(arr):
    return str(arr.dtype)


class GraphRecord:
    """The graph as lists: ``nodes`` (dicts in traversal order) and ``edges`` (src, dst, label).

    Edges point the way ``next_functions`` do: from a node to the node that computes the
    gradient of one of its inputs.
    """

    def __init__(self):
        self.nodes = []
        self.edges = []


def _saved_info(node):
    """Saved tensors of ``node`` as dicts: shape, dtype, saved and current version, bytes."""
    saved = node.__dict__.get("_saved") if hasattr(node, "__dict__") else None
    if saved is None:
        saved = getattr(node, "_saved", None)
    out = []
    for i, entry in enumerate(saved or ()):
        if entry is None:
            out.append({"index": i, "none": True})
            continue
        t, version, out_nr, _unpack = entry
        arr = t._array
        if arr is None:
            value = getattr(t, "value", None)
            arr = value._array if isinstance(value, Tensor) else None
        current = t._version_ref[0]
        info = {"index": i, "none": False, "version": version, "current": current,
                "stale": current != version, "is_output": out_nr is not None}
        if arr is not None:
            info.update(shape=_shape(arr), dtype=_dtype_name(arr), bytes=int(arr.nbytes),
                        array_id=id(arr), data_ptr=backend_of(arr).data_ptr(arr))
        else:
            info.update(shape="?", dtype="packed " + type(getattr(t, "value", t)).__name__,
                        bytes=0, array_id=None)
        out.append(info)
    return out


def _ctx_attrs(node):
    """Public attributes stored on a ctx: tensors (a warning sign) and plain values."""
    d = getattr(node, "__dict__", {})
    tensors, values = [], []
    for k in sorted(d):
        if k.startswith("_") or k in ("needs_input_grad", "variable"):
            continue
        v = d[k]
        if isinstance(v, Tensor):
            tensors.append({"name": k, "shape": _shape(v._array), "dtype": _dtype_name(v._array)})
        else:
            text = repr(v)
            values.append({"name": k, "value": text if len(text) <= 40 else text[:37] + "..."})
    return tensors, values


def _hooks(node):
    n = 0
    for d in (node._pre_hooks, node._post_hooks):
        n += len(d) if d else 0
    if node._tensor_hooks:
        n += sum(len(h) for h in node._tensor_hooks.values())
    if isinstance(node, AccumulateGrad):
        var = node.variable
        n += len(var._hooks) if var._hooks else 0
        n += len(var.__dict__.get("_post_hooks") or ())
    return n


def walk(output, params=None):
    """Walk the graph behind ``output`` (a Tensor or a sequence of Tensors) breadth-first.

    Node ids are ``n0, n1, ...`` in traversal order, so the result does not depend on memory
    addresses. ``params`` maps names to tensors, used to label the leaves.
    """
    outputs = list(output) if isinstance(output, (list, tuple)) else [output]
    names = {}
    for name, p in (params or {}).items():
        names[id(p)] = name
    rec = GraphRecord()
    ids = {}
    by_id = {}
    queue = []

    def visit(node):
        key = id(node)
        if key in ids:
            return ids[key]
        nid = "n%d" % len(ids)
        ids[key] = nid
        rec.nodes.append(_describe(node, nid, names))
        by_id[nid] = rec.nodes[-1]
        queue.append(node)
        return nid

    for k, t in enumerate(outputs):
        if not isinstance(t, Tensor):
            raise TypeError("make_dot expects a Tensor or a sequence of Tensors, got %s"
                            % type(t).__name__)
        oid = "out%d" % k
        name = names.get(id(t), "output" if len(outputs) == 1 else "output %d" % k)
        rec.nodes.append({"id": oid, "kind": "output", "name": name, "shape": _shape(t._array),
                          "dtype": _dtype_name(t._array), "saved": [], "freed": False,
                          "hooks": 0, "needs_input_grad": None, "ctx_tensors": [],
                          "ctx_values": [], "trace": None})
        root = t.grad_fn
        if root is None and t._requires_grad:
            root = _accumulate_grad_of(t)
        if root is not None:
            rec.edges.append((oid, visit(root), ""))
    head = 0
    while head < len(queue):
        node = queue[head]
        head += 1
        src = ids[id(node)]
        record = by_id[src]
        inputs = []
        for i, (nxt, _nr) in enumerate(node.next_functions if not isinstance(node, AccumulateGrad)
                                       else ()):
            if nxt is None:
                inputs.append("%d: None (needs no gradient)" % i)
                continue
            dst = visit(nxt)
            inputs.append("%d: %s (%s)" % (i, nxt.name(), dst))
            rec.edges.append((src, dst, str(i)))
        if record["kind"] == "fn":
            record["inputs"] = inputs
    return rec


def _builtin(node):
    """True for ember's own ops (their ctx attributes are internals, not the user's)."""
    return type(node).__module__.split(".")[0] == "ember"


def _describe(node, nid, names):
    if isinstance(node, AccumulateGrad):
        var = node.variable
        return {"id": nid, "kind": "leaf", "name": "AccumulateGrad",
                "param": names.get(id(var), ""), "shape": _shape(var._array),
                "dtype": _dtype_name(var._array), "saved": [], "freed": False,
                "hooks": _hooks(node), "needs_input_grad": None, "ctx_tensors": [],
                "ctx_values": [], "trace": None}
    tensors, values = ([], []) if _builtin(node) else _ctx_attrs(node)
    outputs = ["%s %s" % ("(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1
                                                                   else "") + ")", dtype)
               for shape, dtype in (node._out_meta or ())]
    needs = node.needs_input_grad
    mask = getattr(node, "_tensor_args", None)
    if mask is not None and len(mask) == len(needs):
        needs = [b for b, is_tensor in zip(needs, mask) if is_tensor]   # one per tensor input
    nig = tuple(bool(b) for b in needs)
    return {"id": nid, "kind": "fn", "name": type(node).__name__, "saved": _saved_info(node),
            "freed": bool(node._freed), "hooks": _hooks(node), "needs_input_grad": nig,
            "ctx_tensors": tensors, "ctx_values": values, "trace": node._trace,
            "outputs": outputs, "inputs": []}
