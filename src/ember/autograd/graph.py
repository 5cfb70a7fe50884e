"""Graph nodes: the ``grad_fn`` objects, AccumulateGrad for leaves, ``next_functions``, hooks."""
import re
import weakref

from typing import NamedTuple, Optional

from .. import tensor as _tensor_mod
from ..tensor import RemovableHandle, Tensor, _add_hook
from .grad_mode import state as _state

__all__ = ["Node", "AccumulateGrad", "FunctionCtx", "saved_tensors_hooks",
           "save_on_cpu", "disable_saved_tensors_hooks", "register_multi_grad_hook",
           "allow_mutation_on_saved_tensors", "GradientEdge", "get_gradient_edge",
           "increment_version"]

_FREED = ("Trying to backward through the graph a second time (or directly access saved tensors "
          "after they have already been freed). Saved intermediate values of the graph are freed "
          "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
          "backward through the graph a second time or if you need to access saved tensors after "
          "calling backward.")
_INFERENCE_SAVED = ("Inference tensors cannot be saved for backward. Please do not use Tensors "
                    "created in inference mode in computation tracked by autograd. To work around "
                    "this, you can make a clone to get a normal tensor and use it in autograd, or "
                    "use `torch.no_grad()` instead of `torch.inference_mode()`.")


_VARIANTS: dict = {}     # (node class, name) -> its subclass named for set_node_name

_WRAPS_SCALARS = frozenset(["AddBackward0", "SubBackward0", "MulBackward0", "DivBackward0",
                            "WhereBackward0"])


# node name -> {torch's name of a saved attribute: reader(node)}; filled by ember/_saved_names.py
_SAVED_NAMES: dict = {}


def _saved_names(node):
    if not _SAVED_NAMES:    # (the table loads on first use, by name: its module sits above)
        __import__("ember._saved_names")
    return _SAVED_NAMES.get(type(node).__name__, {})


class Node:
    """A backward function in the graph (``tensor.grad_fn``).

    ``_edges[i]`` is ``(node, output_nr)`` for a non-leaf input, ``(leaf_tensor, 0)`` for a leaf
    that requires grad, and ``None`` for an input that needs no gradient.
    """

    _edges = ()
    needs_input_grad = ()
    _n_out = 1
    _out_meta = ()
    _tensor_hooks = None     # {output_nr: {id: hook}}
    _retains = None          # {output_nr: weakref to the tensor}
    _post_hooks = None       # {id: hook(grad_inputs, grad_outputs)}
    _pre_hooks = None        # {id: hook(grad_outputs)}
    _saved = None
    _freed = False
    _trace = None            # forward stack under anomaly mode
    _tensor_args = None      # which forward arguments were Tensors (for next_functions)
    _fast = False            # the engine may call backward directly (no hooks, not legacy)
    _seq = 0                 # order of recording (a node is recorded after its inputs' nodes)
    _array_backward = None   # a Function's declared array-level backward (see function.py)
    _namespace = ""          # torch's C++ namespace in name() (torch::autograd:: for some)

    def name(self):
        return self._namespace + type(self).__name__

    def __getattr__(self, attr):
        # torch's ``grad_fn._saved_<name>`` (only reached when ordinary lookup fails)
        read = _saved_names(self).get(attr[7:]) if attr.startswith("_saved_") else None
        if read is not None:
            return read(self)
        raise AttributeError("'%s' object has no attribute '%s'" % (type(self).__name__, attr))

    def __dir__(self):
        names = _saved_names(self)
        return sorted(set(super().__dir__()) | {"_saved_" + k for k in names})

    def __repr__(self):
        # (torch prints a custom Function's node under torch.autograd.function, a built-in's
        # bare)
        fwd = getattr(type(self), "_forward_cls", None)
        custom = fwd is not None and not fwd.__module__.startswith("ember.")
        return "<%s%s object at %#x>" % ("torch.autograd.function." if custom else "",
                                         type(self).__name__, id(self))

    @property
    def next_functions(self):
        out = []
        mask = self._tensor_args
        # a Function may declare which argument positions torch gives an edge (``edge_args``:
        # none for an index, a mask or a condition, which torch's node never differentiates)
        if mask is not None and self.name() in _WRAPS_SCALARS:
            mask = None     # torch turns a Python number operand of these into a tensor
        slots = getattr(getattr(type(self), "_forward_cls", None), "edge_args", None)
        if slots is not None:     # (a declared position given a Python number has no edge)
            mask = [i in slots and (mask is None or mask[i] is not False)
                    for i in range(len(self._edges))]
        for i, e in enumerate(self._edges):
            if mask is not None and not mask[i]:
                continue    # as torch: one entry per tensor input, none for Python values
            if e is None:
                out.append((None, 0))
            elif isinstance(e[0], Node):
                out.append(e)
            else:
                out.append((_accumulate_grad_of(e[0]), 0))
        return tuple(out)

    @property
    def metadata(self):
        d = self.__dict__.get("_metadata")
        if d is None:
            d = self.__dict__["_metadata"] = {}
        return d

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` after this node runs; may return new grad_inputs."""
        self._fast = False
        if self._post_hooks is None:
            self._post_hooks = {}
        return _add_hook(self._post_hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` before this node runs; may return new grad_outputs."""
        self._fast = False
        if self._pre_hooks is None:
            self._pre_hooks = {}
        return _add_hook(self._pre_hooks, fn)

    def _add_tensor_hook(self, nr, hook):
        self._fast = False
        if self._tensor_hooks is None:
            self._tensor_hooks = {}
        return _add_hook(self._tensor_hooks.setdefault(nr, {}), hook)

    def _add_retain(self, nr, wref):
        self._fast = False
        if self._retains is None:
            self._retains = {}
        self._retains[nr] = wref

    def _release(self):
        if self._saved is not None:
            self._saved = None
            self._freed = True

    def _input_meta(self, i):
        """(shape, numpy dtype) the gradient of input ``i`` must have."""
        e = self._edges[i]
        target = e[0]
        if isinstance(target, Node):
            return target._out_meta[e[1]]
        arr = target._array
        return arr.shape, arr.dtype


class AccumulateGrad(Node):
    """The node that writes a leaf's gradient into ``.grad``."""

    _namespace = "torch::autograd::"

    def __init__(self, variable):
        self.variable = variable


def _accumulate_grad_of(leaf):
    ref = leaf._accum
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(leaf)
        leaf._accum = weakref.ref(node)
    return node


class FunctionCtx:
    """What ``forward(ctx, ...)`` receives: save tensors, mark outputs, set flags."""

    _to_save = None
    _dirty = ()
    _non_diff = ()
    _marked = False         # mark_dirty or mark_non_differentiable was called
    _materialize = True

    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument %d is "
                                "of type %s" % (i, type(t).__name__))
        self._to_save = tensors

    def set_node_name(self, name):
        """Name this call's node ``name`` (e.g. ``"RsubBackward1"``, torch's name for the
        scalar variant of an op) instead of the Function's ``node_name`` (an ember extension:
        one Function serves the variants torch names apart)."""
        cls = type(self)
        if cls.__name__ != name:
            key = (cls, name)
            variant = _VARIANTS.get(key)
            if variant is None:
                variant = _VARIANTS[key] = type(cls)(name, (cls,), {"__qualname__": name,
                                                                   "__module__": cls.__module__})
            self.__class__ = variant

    def save_for_forward(self, *tensors):
        self._to_save_fwd = tensors

    def mark_dirty(self, *tensors):
        self._dirty = tensors
        self._marked = True

    def mark_non_differentiable(self, *tensors):
        self._non_diff = tensors
        self._marked = True

    def set_materialize_grads(self, value):
        self._materialize = bool(value)

    @property
    def saved_tensors(self):
        saved = self._saved
        if saved is None:
            if self._freed:
                raise RuntimeError(_FREED)
            return tuple(self._to_save or ())
        out = []
        for entry in saved:
            if entry is None:
                out.append(None)
                continue
            t, version, out_nr, unpack = entry
            if t._version_ref[0] != version:
                raise RuntimeError(_version_message(self, t, version, out_nr))
            if unpack is not None:
                t = unpack(t)
            if out_nr is not None and _state.enabled:
                t = _output_alias(t, self, out_nr)
            out.append(t)
        return tuple(out)

    saved_variables = saved_tensors


def _output_alias(t, node, nr):
    """A saved output, reconnected to its node so that double backward flows through it."""
    a = Tensor._wrap(t._array)
    a._version_ref = t._version_ref
    a._requires_grad = True
    a._grad_fn = node
    a._output_nr = nr
    return a


def _version_message(node, t, version, out_nr):
    """torch's message for a saved tensor changed in place since it was saved (under anomaly
    mode, after warning with the forward call that saved it, as torch)."""
    shape = ", ".join(str(d) for d in t._array.shape)
    made = ""
    if out_nr is not None:
        made = ", which is output %d of %s," % (out_nr, _op_name(node))
    elif t.grad_fn is not None and t._base is not None:
        # (torch regenerates a view's node once its base changed: as_strided of the base)
        made = ", which is output 0 of AsStrided,"
    elif t.grad_fn is not None:
        made = ", which is output %d of %s," % (t._output_nr, _op_name(t.grad_fn))
    if _state.anomaly:    # (the engine warns with the forward call that saved it)
        hint = ("the backtrace further above shows the operation that failed to compute its "
                "gradient. The variable in question was changed in there or anywhere later. "
                "Good luck!")
    else:
        hint = ("enable anomaly detection to find the operation that failed to compute its "
                "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
    return ("one of the variables needed for gradient computation has been modified by an "
            "inplace operation: [%s [%s]]%s is at version %d; expected version %d instead."
            " Hint: %s" % (_type_name(t), shape, made, t._version_ref[0], version, hint))


# the scalar types whose legacy tensor type torch's error messages print (``torch.FloatTensor``);
# the others keep the C++ name (``CPUBFloat16Type``, ``CPUComplexDoubleType``, ``CPUBoolType``)
_LEGACY_NAMES = frozenset(["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor",
                           "ShortTensor", "CharTensor", "ByteTensor"])


def _type_name(t):
    """A tensor's type as torch's version message prints it."""
    legacy = t.dtype._legacy
    cuda = t.device.type == "cuda"
    if legacy in _LEGACY_NAMES:
        return ("torch.cuda." if cuda else "torch.") + legacy
    return ("CUDA" if cuda else "CPU") + legacy[:-len("Tensor")] + "Type"


def _op_name(node):
    """A node's name as torch's version message gives it: ``ExpBackward0`` -> ``Exp``."""
    return re.sub(r"Backward\d*$", "", node.name())


_pack_hooks: list = []
_disabled_message: list = [None]     # set inside disable_saved_tensors_hooks
_mutation_allowed = [False]          # inside allow_mutation_on_saved_tensors


class saved_tensors_hooks:
    """Context manager: ``pack_hook(tensor)`` when a tensor is saved, ``unpack_hook`` on use."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _disabled_message[0] is not None:
            raise RuntimeError(_disabled_message[0])
        _pack_hooks.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _pack_hooks.pop()
        return False


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors already live on the CPU in ember; kept for API compatibility."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda t: t, lambda t: t)


class disable_saved_tensors_hooks:
    """Context manager under which registering saved-tensor hooks raises ``error_message``
    (entering it while such hooks are active raises it too, as torch)."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self._prev = _disabled_message[0]
        if _pack_hooks:
            raise RuntimeError(self.error_message)
        _disabled_message[0] = self.error_message

    def __exit__(self, *exc):
        _disabled_message[0] = self._prev
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with disable_saved_tensors_hooks(self.error_message):
                return fn(*args, **kwargs)
        return wrapper


class _AllowMutationOnSavedContext:
    """The state of an ``allow_mutation_on_saved_tensors`` block."""

    def clear(self):
        pass


class allow_mutation_on_saved_tensors:
    """Context manager under which tensors saved for backward may be changed in place: the
    saved values are kept apart from the tensors (a copy at save time), so backward uses the
    values as they were when saved."""

    def __enter__(self):
        if _mutation_allowed[0]:
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        _mutation_allowed[0] = True
        self._ctx = _AllowMutationOnSavedContext()
        return self._ctx

    def __exit__(self, *exc):
        self._ctx.clear()
        _mutation_allowed[0] = False
        return False


class GradientEdge(NamedTuple):
    """Where a tensor's gradient is computed in the graph: ``(node, output_nr)``."""

    node: Node
    output_nr: int
    ownership_token: Optional[Node] = None


def get_gradient_edge(tensor):
    """The ``GradientEdge`` at which ``tensor``'s gradient is computed."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    node = tensor.grad_fn
    if node is None:
        return GradientEdge(_accumulate_grad_of(tensor), 0)
    return GradientEdge(node, tensor._output_nr)


def increment_version(tensor):
    """Bump the version counter of ``tensor`` (or each of an iterable of tensors), as an
    in-place change ember did not see would."""
    tensors = (tensor,) if isinstance(tensor, Tensor) else tensor
    for t in tensors:
        if not t._inference:
            t._version_ref[0] += 1


class _MultiHandle(RemovableHandle):
    """The handle of a multi-grad hook: removes the hook from every tensor."""

    def __init__(self, handles):
        super().__init__({})
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()


def _current_backward():
    """The callback list of the running backward call (one per call, innermost last)."""
    return _tensor_mod._engine._final_callbacks[-1]


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call ``fn`` once per backward pass over ``tensors``' gradients.

    ``mode="all"``: ``fn(grads)`` with one entry per tensor (``None`` for a gradient not
    computed by that pass), once the pass has computed those it computes. ``mode="any"``:
    ``fn(grad)`` with the first of those gradients computed in the pass.
    """
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    tensors = list(tensors)
    buffers = {}     # id of the running backward -> [grad or None per tensor]

    def make_hook(idx):
        def inner_hook(grad):
            task = _current_backward()
            key = id(task)
            if mode == "any":
                if key not in buffers:
                    buffers[key] = True
                    task.append(lambda: buffers.pop(key, None))
                    fn(grad)
                return None
            buf = buffers.get(key)
            if buf is None:
                buf = buffers[key] = [None] * len(tensors)

                def finish():
                    grads = buffers.pop(key)
                    fn(grads)
                task.append(finish)
            buf[idx] = grad
            return None
        return inner_hook

    handles = [t.register_hook(make_hook(i)) for i, t in enumerate(tensors)
               if t.requires_grad]
    return _MultiHandle(handles)


class _Packed:
    """A saved tensor replaced by what a pack hook returned."""

    __slots__ = ("value", "_version_ref", "_array")

    def __init__(self, value, version_ref):
        self.value = value
        self._version_ref = version_ref
        self._array = None


def pack_saved(node, to_save):
    """Record ``to_save`` on ``node`` as (stored, version at save, output index or None,
    unpack); a saved output of the node is stored without its grad_fn (no cycle node -> output
    -> node) and reconnected when unpacked."""
    hooks = _pack_hooks[-1] if _pack_hooks else None
    if _state.inference_made and any(t is not None and t._inference for t in to_save):
        raise RuntimeError(_INFERENCE_SAVED)
    entries = []
    for t in to_save:
        if t is None:
            entries.append(None)
            continue
        if t.grad_fn is node:   # an output of this node (just recorded)
            out_nr = t._output_nr
            stored = Tensor._wrap(t._array)
            stored._version_ref = t._version_ref
        else:
            out_nr = None
            stored = t
        if _mutation_allowed[0]:      # a copy the user's in-place changes cannot reach
            if out_nr is None:
                stored = t.detach().clone()
                stored._requires_grad = t._requires_grad
                stored._grad_fn = t._grad_fn
                stored._output_nr = t._output_nr
            else:
                stored = Tensor._wrap(t._array.copy())
        if hooks is None:
            entries.append((stored, stored._version_ref[0], out_nr, None))
        else:
            packed = _Packed(hooks[0](stored if out_nr is None else t.detach()),
                             stored._version_ref)
            entries.append((packed, stored._version_ref[0], out_nr, _unpacker(hooks[1])))
    node._saved = tuple(entries)
    node._to_save = None


def _unpacker(unpack_hook):
    return lambda packed: unpack_hook(packed.value)
