"""Function: forward/backward pairs that record themselves in the graph when applied.

Built-in ops and user code use the same class::

    class MyReLU(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return grad_output * (x > 0)

    y = MyReLU.apply(x)
"""
import functools
import inspect
import itertools
import warnings
from typing import Any, Optional

from .. import tensor as _tensor_mod
from ..backend import get_array_module
from ..tensor import Tensor
from .grad_mode import state as _state
from .graph import FunctionCtx, Node, pack_saved

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable",
           "InplaceFunction", "NestedIOFunction"]

_LEGACY_MSG = (
    "Legacy autograd function with non-static forward method is deprecated. Please use new-style "
    "autograd function with static forward method:\n"
    "    class %s(torch.autograd.Function):\n"
    "        @staticmethod\n"
    "        def forward(ctx, input): ...   # ctx.save_for_backward(input)\n"
    "        @staticmethod\n"
    "        def backward(ctx, grad_output): ...   # input, = ctx.saved_tensors\n"
    "and call it as %s.apply(input).")


class BackwardCFunction(Node, FunctionCtx):
    """The ctx of one call of a Function, and its node in the graph."""

    _forward_cls = None
    _legacy_node = False
    _fast = True
    _edge_marks = None

    def mark_edges(self, *positions):
        """List only the arguments at ``positions`` in this call's ``next_functions`` (a
        Function of three or more arguments): torch's differentiable inputs of the overload the
        call stands for. A listed argument that is a number, None or needs no gradient shows
        as a None edge; the others show nothing. ``backward`` still returns one gradient per
        argument (an ember extension, as ``set_node_name``)."""
        self._edge_marks = positions

    def _call_backward(self, grads, create_graph=True):
        if not create_graph and self._array_backward is not None:
            return self._array_backward(self, *grads)
        return self._forward_cls.backward(self, *grads)

    def apply(self, *grads):
        return self._forward_cls.backward(self, *grads)


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        fwd = inspect.getattr_static(cls, "forward", None)
        cls._is_legacy = fwd is not None and not isinstance(fwd, (staticmethod, classmethod)) \
            and fwd is not globals().get("_base_forward")
        # torch 2's style: ``forward(*args)`` without ctx, then ``setup_context(ctx, inputs,
        # output)``, chosen by overriding setup_context
        setup = inspect.getattr_static(cls, "setup_context", None)
        cls._forward_fn = None if setup is None or setup is globals().get("_base_setup") \
            else staticmethod(_with_setup_context(cls))
        # under forward AD: "jvp" (a user Function with its own jvp and no backward: its jvp
        # gives the tangents), "raise" (another user Function: torch's error), None (ember's
        # own ops: tangents by the double-vjp of forward_ad)
        jvp = inspect.getattr_static(cls, "jvp", None)
        bwd = inspect.getattr_static(cls, "backward", None)
        base_jvp, base_bwd = globals().get("_base_jvp"), globals().get("_base_backward")
        if base_jvp is None or cls.__module__.startswith("ember."):
            cls._fw_mode = None
        elif jvp is not base_jvp:
            cls._fw_mode = "jvp" if bwd is base_bwd else None
        else:
            cls._fw_mode = "raise"
        cls._user = not cls.__module__.startswith("ember.")
        node_name = attrs.get("node_name") or name + "Backward"
        cls._backward_cls = type(node_name, (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": cls.__module__,
                                  "__qualname__": node_name,
                                  "_array_backward": _declared_array_backward(cls)})


def _with_setup_context(cls):
    """``forward`` of a Function that defines ``setup_context``: forward without ctx, then
    setup_context with the inputs and the output."""
    def run(ctx, *args, **kwargs):
        out = cls.forward(*args, **kwargs)
        cls.setup_context(ctx, args, out)
        return out
    return run


def _declared_array_backward(cls):
    """The ``array_backward`` declared beside the ``backward`` that ``cls`` uses (or None).

    An op may declare, once, a second form of its gradient written on raw arrays: the engine
    calls it instead of ``backward`` when no graph is being built (``create_graph=False``), and
    the op database checks that both give the same gradients for every op.
    """
    for klass in cls.__mro__:
        if "backward" in klass.__dict__:
            fn = klass.__dict__.get("array_backward")
            return None if fn is None else staticmethod(fn.__func__ if isinstance(
                fn, staticmethod) else fn)
    return None


class Function(Node, FunctionCtx, metaclass=_FunctionMeta):
    """Base class of differentiable operations.

    Subclass it with static ``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)`` and
    call ``YourFunction.apply(*args)``. ``backward`` returns one gradient (or ``None``) per
    forward argument. The legacy style (instance methods, ``YourFunction()(x)``) still runs,
    with a DeprecationWarning; its instance becomes the output's ``grad_fn``/``creator``.

    Example:
        >>> import ember
        >>> class Cube(ember.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x ** 3
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         x, = ctx.saved_tensors
        ...         return grad * 3 * x ** 2
        >>> x = ember.tensor([1.0, 2.0], requires_grad=True)
        >>> y = Cube.apply(x) + 1
        >>> y
        tensor([2., 9.], grad_fn=<AddBackward0>)
        >>> y.sum().backward()
        >>> x.grad
        tensor([ 3., 12.])
    """

    node_name: Optional[str] = None
    _legacy_node = True      # a legacy Function instance is its own node
    _edge_marks = None

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        return None

    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError("To use autograd.Function with vmap, you must either override "
                                  "the vmap staticmethod or set generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args, **kwargs):
        if cls._is_legacy:
            raise RuntimeError(_LEGACY_MSG % (cls.__name__, cls.__name__) +
                               " (this class defines forward as an instance method)")
        if fw_duals and cls._fw_mode is not None:
            return fw_apply(cls, args, kwargs)     # a dual level holds tangents
        if func_transforms and cls._user:
            transform_check(cls)
        if _hook is not None:
            return _hook(cls, args, kwargs)     # ember.compile or amp.autocast sees this call
        node = cls._backward_cls()
        forward = cls._forward_fn or cls.forward
        if not _state.enabled:
            # NOTE: nothing can be recorded (no_grad; the ops inside a backward): straight to
            # forward (W2's update step in benchmarks/)
            node.needs_input_grad = _needs_grad(args)
            if _state.inference:
                return mark_inference(forward(node, *args, **kwargs))
            return forward(node, *args, **kwargs)
        return _apply(forward, node, args, kwargs)

    def __init__(self, *args, **kwargs):
        warnings.warn("%s should not be instantiated. Methods on autograd functions are all "
                      "static, so you should invoke them on the class itself. Instantiating an "
                      "autograd function will raise an error in a future version of PyTorch."
                      % type(self), DeprecationWarning, stacklevel=2)

    def __call__(self, *args):
        cls = type(self)
        if not cls._is_legacy:      # (torch's words; the class is new-style: cls.apply)
            raise RuntimeError("Legacy autograd function with non-static forward method is "
                               "deprecated. Please use new-style autograd function with static "
                               "forward method. (Example: https://pytorch.org/docs/stable/"
                               "autograd.html#torch.autograd.Function)")
        warnings.warn(_LEGACY_MSG % (cls.__name__, cls.__name__), DeprecationWarning,
                      stacklevel=2)
        return _apply(lambda ctx, *a: self.forward(*a), self, args, {})

    def _call_backward(self, grads, create_graph=True):
        return self.backward(*grads)


# the tangents of the open forward-AD level (forward_ad's ``_duals``) and forward_ad's
# ``custom_apply``, which applies a user Function while some are held
fw_duals: dict = {}
fw_apply: Any = None

# the torch.func transforms running now, innermost last ("vmap" or "grad"), and their check
# of a user Function applied under one (both set by ember.func)
func_transforms: list = []
transform_check: Any = None


# ember.compile's recorder while it records a call, or amp.autocast's caster while one is
# active (else None): ``apply`` hands it each call; it ends in ``plain_apply``
_hook = None


def plain_apply(cls, args, kwargs):
    """``cls.apply(*args, **kwargs)`` without the hook."""
    node = cls._backward_cls()
    forward = cls._forward_fn or cls.forward
    if not _state.enabled:
        node.needs_input_grad = _needs_grad(args)
        if _state.inference:
            return mark_inference(forward(node, *args, **kwargs))
        return forward(node, *args, **kwargs)
    return _apply(forward, node, args, kwargs)


def mark_inference(out):
    """Mark the tensors of ``out`` (made inside ``inference_mode()``) as inference tensors."""
    for t in (out,) if isinstance(out, Tensor) else out if isinstance(out, (tuple, list)) else ():
        if isinstance(t, Tensor):
            t._inference = True
            _state.inference_made = True
    return out

_base_forward = inspect.getattr_static(Function, "forward")
_base_setup = inspect.getattr_static(Function, "setup_context")
_base_jvp = inspect.getattr_static(Function, "jvp")
_base_backward = inspect.getattr_static(Function, "backward")
Function._is_legacy = False
Function._fw_mode = None
Function._forward_fn = None


class InplaceFunction(Function):
    """A Function with an ``inplace`` flag (compatibility)."""

    def __init__(self, inplace=False):
        self.inplace = inplace


NestedIOFunction = Function


def _apply(forward, node, args, kwargs):
    """Run ``forward`` with recording off; record ``node`` when grad mode is on and some input
    requires grad."""
    needs = node.needs_input_grad = _needs_grad(args)
    state = _state
    if not state.enabled:
        out = forward(node, *args, **kwargs)
        if state.inference:
            mark_inference(out)
        if node._legacy_node:
            _mark_creator(node, out)
        return out
    state.enabled = 0   # (off for the op's own work: 0, not the user's False; see _view_of)
    try:
        out = forward(node, *args, **kwargs) if kwargs else forward(node, *args)
    finally:
        state.enabled = True
    if True not in needs:
        if node._legacy_node:
            _mark_creator(node, out)
        return out
    _record_inputs(node, args, needs)
    n = len(args)
    if type(out) is Tensor and not node._marked and out is not args[0] and (
            n == 1 or out is not args[1] and (n == 2 or not _is_in(out, args))):
        # NOTE: one new output, nothing marked: the common case, without the general loop
        # (W1/W2 in benchmarks/ are sequences of such ops).
        arr = out._array
        if arr.dtype.kind in "fcV":     # (V: bfloat16, from ml_dtypes)
            out._grad_fn = node
            out._output_nr = 0
            out._requires_grad = True
            if out._base is not None:
                out.__dict__["_view_version"] = out._version_ref[0]
        node._out_meta = ((arr.shape, arr.dtype),)
    else:
        out = _record_outputs(node, out, args)
    if node._to_save is not None:
        pack_saved(node, node._to_save)
    if state.anomaly:
        from .anomaly_mode import record_trace
        record_trace(node)
    return out


def _needs_grad(args):
    """``needs_input_grad``: which arguments are Tensors that require grad."""
    # NOTE: one and two arguments without a comprehension's frame: most ops (W1/W2 in
    # benchmarks/ are sequences of them).
    n = len(args)
    if n == 2:
        a, b = args
        return (isinstance(a, Tensor) and a._requires_grad,
                isinstance(b, Tensor) and b._requires_grad)
    if n == 1:
        a = args[0]
        return (isinstance(a, Tensor) and a._requires_grad,)
    return tuple([isinstance(a, Tensor) and a._requires_grad for a in args])


def _record_inputs(node, args, needs):
    """The node's edges (one per argument: None for one that needs no gradient), which of them
    ``next_functions`` lists, and its sequence number, drawn after its inputs' nodes (a view's
    regenerated one too)."""
    n = len(args)
    if n == 1:
        # NOTE: unary and binary ops without the general loop and with ``_edge`` inlined
        # (W1/W2 in benchmarks/ are sequences of them)
        a = args[0]
        if a._base is not None:
            refresh_view(a)
        fn = a._grad_fn
        node._edges = ((fn, a._output_nr) if fn is not None else (a, 0),)
    elif n == 2:
        a, b = args
        if needs[0]:
            if a._base is not None:
                refresh_view(a)
            fn = a._grad_fn
            ea = (fn, a._output_nr) if fn is not None else (a, 0)
        else:
            ea = None
        node._edges = (ea, _edge(b) if needs[1] else None)
        if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
            node._tensor_args = (isinstance(a, Tensor), isinstance(b, Tensor))
    else:
        edges = []
        all_tensors = True
        for a, need in zip(args, needs):
            if not need:
                edges.append(None)
                all_tensors = all_tensors and isinstance(a, Tensor)
                continue
            edges.append(_edge(a))
        node._edges = tuple(edges)
        marks = node._edge_marks
        if marks is not None:
            node._tensor_args = tuple([i in marks for i in range(n)])
        elif not all_tensors:
            # (None for an argument given as None: an edge torch keeps, e.g. conv's bias)
            node._tensor_args = tuple([a if a is None else isinstance(a, Tensor) for a in args])
    node._seq = _next_seq()


def _edge(a):
    """The edge to input ``a`` (its node and output index, or the leaf itself); a stale view
    gets its regenerated node first."""
    if a._base is not None:
        refresh_view(a)
    fn = a._grad_fn
    return (fn, a._output_nr) if fn is not None else (a, 0)


def _set_output(node, o, i):
    """Make ``o`` output ``i`` of ``node`` (integer outputs never require grad)."""
    if o._array.dtype.kind not in "fcV":
        o._requires_grad = False
        return
    o._grad_fn = node
    o._output_nr = i
    o._requires_grad = True
    if o._base is not None:
        o.__dict__["_view_version"] = o._version_ref[0]


def _record_outputs(node, out, args):
    """Connect every output to ``node``: dirty (in-place) outputs bump their version, an input
    returned as is becomes a view of it, non-differentiable ones need no grad. Returns what
    ``apply`` returns (the outputs, a tuple when forward returned one)."""
    if not isinstance(out, (tuple, Tensor)) and out is not None:
        raise TypeError("%s.forward must return a Tensor or a tuple of Tensors, but returned "
                        "%s" % (_fn_name(node), type(out).__name__))
    outs = out if isinstance(out, tuple) else (out,)
    results = []
    meta = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            results.append(o)
            meta.append(None)
            continue
        if node._dirty and _is_in(o, node._dirty):
            if o.grad_fn is None and o._requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                   "in-place operation.")
            o._version_ref[0] += 1
        elif _is_in(o, args):
            view = Tensor._wrap(o._array)   # an input returned as-is becomes a view of it
            view._version_ref = o._version_ref
            view._base = o._base if o._base is not None else o
            if o._base is not None and "_view_fn" in o.__dict__:
                view.__dict__["_view_fn"] = o.__dict__["_view_fn"]
            o = view
        if node._non_diff and _is_in(o, node._non_diff):
            o._requires_grad = False
        else:
            _set_output(node, o, i)
        results.append(o)
        meta.append((o._array.shape, o._array.dtype))
    node._n_out = len(outs)
    node._out_meta = tuple(meta)
    return tuple(results) if isinstance(out, tuple) else results[0]


def refresh_view(view):
    """Give ``view`` a grad_fn through its base's current one when the base (or another view
    of it) was modified in place after ``view`` was made, as torch regenerates it: the view op
    that made it (``_view_fn``, set by ops) is replayed on the base."""
    d = view.__dict__
    version = d.get("_view_version")
    if version is None or version == view._version_ref[0] or not view._base._requires_grad:
        return
    fn = d.get("_view_fn")
    if fn is None:
        return
    prev = _state.enabled
    _state.enabled = True
    try:
        fresh = fn(view._base)
    finally:
        _state.enabled = prev
    if fresh is None:
        return
    view._grad_fn = fresh._grad_fn
    view._output_nr = fresh._output_nr
    d["_view_version"] = view._version_ref[0]


def _is_in(o, seq):
    """``o`` is one of ``seq`` (by identity: ``in`` would call Tensor.__eq__)."""
    for x in seq:
        if x is o:
            return True
    return False


_next_seq = itertools.count(1).__next__


def _mark_creator(node, out):
    """Legacy Functions name themselves as ``.creator`` even when nothing is recorded."""
    for o in (out if isinstance(out, tuple) else (out,)):
        if isinstance(o, Tensor):
            o.__dict__["_creator"] = node


def _fn_name(node):
    cls = getattr(node, "_forward_cls", None) or type(node)
    return cls.__name__


def once_differentiable(fn):
    """Decorate a ``backward`` that is not itself differentiable (it may use raw arrays).

    Under ``create_graph=True`` its results are marked so that a second backward through them
    raises a clear error instead of silently giving a wrong answer.
    """
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _state.enabled
        _state.enabled = 0     # (an op's own work, not the user's no_grad: see _view_of)
        try:
            outputs = fn(ctx, *args)
        finally:
            _state.enabled = prev
        if not prev:
            return outputs
        if not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        marked = tuple(_OnceDifferentiable.apply(o, *args) if isinstance(o, Tensor) else o
                       for o in outs)
        return marked[0] if single else marked
    return wrapper


class _OnceDifferentiable(Function):
    node_name = "DelayedError"

    @staticmethod
    def forward(ctx, out, *grads):
        return out.detach()

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")


_tensor_mod._refresh_view = refresh_view     # (Tensor.grad_fn regenerates stale views)


class Stack(Function):
    """Stack same-shaped tensors along a new first dim (differentiable: jacobian rows and
    batched gradients)."""

    node_name = "StackBackward0"

    @staticmethod
    def forward(ctx, *tensors):
        arrays = [t._array for t in tensors]
        return Tensor._wrap(get_array_module(*arrays).stack(arrays))

    @staticmethod
    def backward(ctx, grad_output):
        return tuple(grad_output[i] if need else None
                     for i, need in enumerate(ctx.needs_input_grad))
