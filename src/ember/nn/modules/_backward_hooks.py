"""Full backward hooks: identity Functions around a module's inputs and outputs; legacy
(non-full) hooks: node hooks on the grad_fn of the module's output."""
import warnings
import weakref

from ...autograd.function import Function
from ...autograd.graph import _WRAPS_SCALARS
from ...tensor import Tensor


class _InputHook(Function):
    node_name = "BackwardHookFunctionBackward"

    @staticmethod
    def forward(ctx, state, *tensors):
        ctx.state = state
        return tuple(t.detach() for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.state.run_hooks(grads))


class _OutputHook(Function):
    node_name = "BackwardHookFunctionBackward"

    @staticmethod
    def forward(ctx, state, *tensors):
        ctx.state = state
        return tuple(t.detach() for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.state.got_outputs(grads))


class BackwardHook:
    """Collects grad_output at the module's outputs and grad_input at its inputs, then calls
    the module's full backward (pre-)hooks."""

    def __init__(self, module):
        self.module = module
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_wrapped = False

    def setup_input(self, args):
        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        self.n_inputs = len(idx)
        # NOTE: as torch, every tensor argument is wrapped once any of them requires grad, so
        # grad_input has one entry per tensor argument.
        if not any(args[i].requires_grad for i in idx):
            return args
        self.input_wrapped = True
        self.input_pos = idx
        wrapped = _InputHook.apply(self, *[args[i] for i in idx])
        if not isinstance(wrapped, tuple):
            wrapped = (wrapped,)
        args = list(args)
        for i, w in zip(idx, wrapped):
            args[i] = w
        return tuple(args)

    def setup_output(self, out):
        single = isinstance(out, Tensor)
        outs = (out,) if single else out
        if not isinstance(outs, tuple):
            return out
        idx = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
        if not idx:
            return out
        wrapped = _OutputHook.apply(self, *[outs[i] for i in idx])
        if not isinstance(wrapped, tuple):
            wrapped = (wrapped,)
        outs = list(outs)
        for i, w in zip(idx, wrapped):
            outs[i] = w
        return outs[0] if single else tuple(outs)

    def got_outputs(self, grads):
        for hook in list(self.module._backward_pre_hooks.values()):
            r = hook(self.module, tuple(grads))
            if r is not None:
                grads = tuple(r) if isinstance(r, (tuple, list)) else (r,)
        self.grad_outputs = tuple(grads)
        if not self.input_wrapped:
            self._call((None,) * max(self.n_inputs, 1))
        return grads

    def run_hooks(self, grads):
        return self._call(tuple(grads))

    def _call(self, grad_inputs):
        if self.module.__dict__.get("_is_full_backward_hook") is False:
            return grad_inputs      # (legacy hooks run on the output's node instead)
        for hook in list(self.module._backward_hooks.values()):
            r = hook(self.module, grad_inputs, self.grad_outputs)
            if r is not None:
                r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
                if len(r) != len(grad_inputs):
                    raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                       "got %d, but expected %d" % (len(r), len(grad_inputs)))
                grad_inputs = r
        return grad_inputs


class LegacyHook:
    """A hook from ``Module.register_backward_hook`` on the grad_fn of the module's (first)
    output: ``hook(module, grad_input, grad_output)`` with that node's gradients, one
    ``grad_input`` entry per ``next_functions`` edge, as torch's non-full hooks."""

    def __init__(self, hook, module, node):
        self.hook = hook
        self.module = weakref.ref(module)
        mask = node._tensor_args
        if mask is None or node.name() in _WRAPS_SCALARS:
            mask = (True,) * len(node._edges)
        self.positions = [i for i, m in enumerate(mask) if m]

    def __call__(self, grad_inputs, grad_outputs):
        module = self.module()
        if module is None:
            raise RuntimeError("You are trying to call the hook of a dead Module!")
        pos = self.positions
        r = self.hook(module, tuple(grad_inputs[i] for i in pos), tuple(grad_outputs))
        if r is None:
            return None
        r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
        if len(r) != len(pos):
            raise RuntimeError("hook '%s' has returned an incorrect number of values (got %d, "
                               "but expected %d)" % (getattr(self.hook, "__name__", "hook"),
                                                     len(r), len(pos)))
        out = list(grad_inputs)
        for i, g in zip(pos, r):
            out[i] = g
        return tuple(out)


def attach_legacy_hooks(module, hooks, args, result):
    """Register ``hooks`` (non-full backward hooks) on the grad_fn of ``result``'s first
    tensor and warn where torch warns that they miss some gradients."""
    var = result
    while not isinstance(var, Tensor):
        if isinstance(var, dict):
            var = next(v for v in var.values() if isinstance(v, Tensor))
        else:
            var = var[0]
    grad_fn = var.grad_fn
    if grad_fn is None:
        return
    for hook in hooks:
        grad_fn.register_hook(LegacyHook(hook, module, grad_fn))
    _maybe_warn(args, result, grad_fn)


def _warn(msg):
    warnings.warn(msg, FutureWarning, stacklevel=4)


def _maybe_warn(inputs, result, grad_fn):
    """torch's FutureWarnings for non-full backward hooks, under the same conditions."""
    if not isinstance(result, Tensor):
        if not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
            _warn("Using non-full backward hooks on a Module that does not return a single "
                  "Tensor or a tuple of Tensors is deprecated and will be removed in future "
                  "versions. This hook will be missing some of the grad_output. Please use "
                  "register_full_backward_hook to get the documented behavior.")
            return
    else:
        result = (result,)
    if not isinstance(inputs, Tensor):
        if not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
            _warn("Using non-full backward hooks on a Module that does not take as input a "
                  "single Tensor or a tuple of Tensors is deprecated and will be removed in "
                  "future versions. This hook will be missing some of the grad_input. Please "
                  "use register_full_backward_hook to get the documented behavior.")
            return
    else:
        inputs = (inputs,)
    out_fns = {r.grad_fn for r in result if r.grad_fn is not None}
    if len(out_fns) == 0 or (len(out_fns) == 1 and grad_fn not in out_fns):
        _warn("Using a non-full backward hook when outputs are nested in python data structure "
              "is deprecated and will be removed in future versions. This hook will be missing "
              "some grad_output.")
    elif len(out_fns) > 1:
        _warn("Using a non-full backward hook when outputs are generated by different autograd "
              "Nodes is deprecated and will be removed in future versions. This hook will be "
              "missing some grad_output. Please use register_full_backward_hook to get the "
              "documented behavior.")
    else:
        inputs_fns = {i.grad_fn for i in inputs if i.grad_fn is not None}
        if inputs_fns != {n for n, _ in grad_fn.next_functions}:
            _warn("Using a non-full backward hook when the forward contains multiple autograd "
                  "Nodes is deprecated and will be removed in future versions. This hook will be "
                  "missing some grad_input. Please use register_full_backward_hook to get the "
                  "documented behavior.")
