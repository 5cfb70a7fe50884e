"""Forward-mode AD (torch.autograd.forward_ad): dual tensors and their tangents.

A dual tensor is its primal recorded as a graph root that requires grad, with the tangent kept
beside it. ``unpack_dual(y)`` computes ``y``'s tangent ``J v`` with the double-vjp trick: the
gradient with respect to a dummy cotangent ``u`` of the vector-Jacobian product ``u^T J``. This
is exact and works for every op whose backward is differentiable. A custom
``autograd.Function`` that defines ``jvp`` (and no ``backward``) gets its outputs' tangents from
``jvp`` instead: its outputs are new roots (their node has no edges) held with those tangents;
a user Function with neither raises torch's error.

Deliberate differences from torch: a dual tensor and what is computed from it require grad
(``requires_grad`` is True and ``grad_fn`` is set), and a tangent derived through ops takes
the output's dtype.
"""
import collections

from ..backend import get_array_module
from ..tensor import Tensor
from . import function as _function
from .engine import grad as _grad
from .graph import Node

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]

_current_level = -1
_duals: dict = _function.fw_duals   # id(dual) -> (dual, tangent), for the current level


class UnpackedDualTensor(collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])):
    """What ``unpack_dual`` returns: the ``primal`` and its ``tangent`` (None if it has none)."""


def enter_dual_level():
    """Open a forward-AD level and return its index (levels do not nest, as in torch)."""
    global _current_level
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level = 0
    return _current_level


def exit_dual_level(*, level=None):
    """Close the forward-AD level ``level`` (the current one by default); its tangents are
    forgotten."""
    global _current_level
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    _duals.clear()
    _current_level = -1


class dual_level:
    """Context manager for a forward-AD level: tangents live while it is open.

    Example:
        >>> import ember
        >>> import ember.autograd.forward_ad as fwAD
        >>> with fwAD.dual_level():
        ...     x = fwAD.make_dual(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 0.0]))
        ...     fwAD.unpack_dual(x ** 2).tangent
        tensor([2., 0.])
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()


def _check_float(t, what):
    if not t.dtype.is_floating_point and not t.dtype.is_complex:
        raise ValueError("Expected %s to be floating point or complex, but got: %s"
                         % (what, t.dtype))


def _check_tangent(primal, tangent):
    _check_float(primal, "primal")
    _check_float(tangent, "tangent")
    if tuple(primal.shape) != tuple(tangent.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than "
                           "that of the original Tensor, this is not supported. Tensor is of "
                           "size %s while the given forward gradient is of size %s."
                           % (list(primal.shape), list(tangent.shape)))


def make_dual(tensor, tangent, *, level=None):
    """A tensor with the value of ``tensor`` whose tangent is ``tangent`` at the level."""
    if _current_level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if level is not None and level != _current_level:
        raise RuntimeError("Invalid level given to _make_dual")
    _check_tangent(tensor, tangent)
    dual = _root(tensor)
    _duals[id(dual)] = (dual, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of ``tensor``; the tangent is None outside a level or when
    ``tensor`` does not depend on a dual tensor."""
    if level is None:
        level = _current_level
    if level < 0 or level != _current_level or not _duals or not tensor.requires_grad:
        return UnpackedDualTensor(tensor, None)
    entry = _duals.get(id(tensor))
    if entry is not None and entry[0] is tensor:
        return UnpackedDualTensor(_primal(tensor, ()), entry[1])
    duals = [d for d, _ in _duals.values()]
    tangents = [v for _, v in _duals.values()]
    own = {id(d) for d in duals if d.grad_fn is None}
    lin = Linearized([tensor], duals, own)
    (out,) = lin.apply(tangents, keep=depends_outside([tensor] + tangents, own))
    return UnpackedDualTensor(_primal(tensor, duals), out)


def _primal(t, duals):
    own = {id(d) for d in duals if d.grad_fn is None} | {id(t)}
    return t if depends_outside([t], own) else t.detach()


def _root(t):
    """``t`` as a new graph root that requires grad (a view when ``t`` already requires grad,
    so that the graph still reaches ``t``)."""
    if t.requires_grad:
        return t.view_as(t)
    return t.detach().requires_grad_(True)


def zeros_like(t, requires_grad=False):
    """A new zero tensor shaped, typed and placed like ``t`` (no graph)."""
    arr = t._array
    return Tensor._wrap(get_array_module(arr).zeros(arr.shape, dtype=arr.dtype),
                        requires_grad=requires_grad)


def depends_outside(tensors, own):
    """True when some tensor's graph reaches a leaf that requires grad and whose id is not in
    ``own``: then results must stay differentiable for an enclosing computation."""
    stack, seen = [], set()
    for t in tensors:
        if not isinstance(t, Tensor) or not t.requires_grad:
            continue
        if t.grad_fn is None:
            if id(t) not in own:
                return True
        else:
            stack.append(t.grad_fn)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for e in getattr(node, "_edges", ()):
            if e is None:
                continue
            if isinstance(e[0], Node):
                stack.append(e[0])
            elif id(e[0]) not in own:
                return True
    return False


class Linearized:
    """The linear map ``v -> J v`` of ``outputs`` with respect to ``inputs`` at the current
    point, by the double-vjp trick; ``apply`` may be called many times.

    ``own`` collects the ids of the graph roots made by the caller; the dummy cotangents are
    added to it.
    """

    def __init__(self, outputs, inputs, own):
        self.outputs = outputs
        self.diff = [i for i, o in enumerate(outputs) if o.requires_grad]
        self.us = [zeros_like(outputs[i], requires_grad=True) for i in self.diff]
        own.update(id(u) for u in self.us)
        if self.diff:
            self.gs = _grad([outputs[i] for i in self.diff], inputs, self.us,
                            create_graph=True, allow_unused=True)
        else:
            self.gs = (None,) * len(inputs)

    def connected(self):
        """Whether some output depends on some input."""
        return any(g is not None for g in self.gs)

    def apply(self, tangents, keep, only=None):
        """Tangents of the outputs (None for an output independent of every input) for input
        tangents ``tangents`` (None entries, or those outside ``only``, count as zero)."""
        outs = [None] * len(self.outputs)
        if not self.connected():
            return outs
        pairs = [(g, v) for k, (g, v) in enumerate(zip(self.gs, tangents))
                 if g is not None and g.requires_grad and v is not None
                 and (only is None or k == only)]
        res = [None] * len(self.us)
        if pairs:
            res = _grad([g for g, _ in pairs],
                        self.us, [v.to(g.dtype) if v.dtype != g.dtype else v for g, v in pairs],
                        retain_graph=True, create_graph=keep, allow_unused=True)
        for j, i in enumerate(self.diff):
            r = res[j]
            outs[i] = zeros_like(self.outputs[i]) if r is None else r
            if not keep:
                outs[i] = outs[i].detach()
        return outs


_JVP_MISSING = ("You must implement the jvp function for custom autograd.Function to use it "
                "with forward mode AD.")


def custom_apply(cls, args, kwargs):
    """``cls.apply(*args, **kwargs)`` for a user Function while a dual level holds tangents:
    with ``cls.jvp`` giving the outputs' tangents from the inputs' (None for an input without
    one), or torch's error for a Function without ``jvp``."""
    tangents = [unpack_dual(a).tangent if isinstance(a, Tensor) and a.requires_grad else None
                for a in args]
    if all(t is None for t in tangents):
        return _function.plain_apply(cls, args, kwargs)
    if cls._fw_mode == "raise":
        raise NotImplementedError(_JVP_MISSING)
    primals = [a.detach() if isinstance(a, Tensor) else a for a in args]
    node = cls._backward_cls()
    out = _function._apply(cls._forward_fn or cls.forward, node, primals, kwargs)
    node.needs_input_grad = tuple(t is not None for t in tangents)
    saved = getattr(node, "_to_save_fwd", None)
    if saved is not None:               # (what jvp's ctx.saved_tensors gives, as torch)
        node._to_save = saved
    outs = out if isinstance(out, tuple) else (out,)
    node._edges = (None,) * len(args)
    node._seq = _function._next_seq()
    node._n_out = len(outs)
    node._out_meta = tuple((o._array.shape, o._array.dtype) if isinstance(o, Tensor) else None
                           for o in outs)
    for i, o in enumerate(outs):
        if isinstance(o, Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex):
            _function._set_output(node, o, i)
    res = cls.jvp(node, *tangents)
    res = res if isinstance(res, tuple) else (res,)
    if len(res) != len(outs):
        raise RuntimeError("jvp() returned an incorrect number of outputs (expected %d, got %d)"
                           % (len(outs), len(res)))
    for o, t in zip(outs, res):
        if isinstance(o, Tensor) and o.requires_grad and t is not None:
            _check_tangent(o, t)
            _duals[id(o)] = (o, t)
    return out


_function.fw_apply = custom_apply
