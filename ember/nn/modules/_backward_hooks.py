"""Full backward hooks: identity Functions around a module's inputs and outputs."""
from ...autograd.function import Function
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
        for hook in list(self.module._backward_hooks.values()):
            r = hook(self.module, grad_inputs, self.grad_outputs)
            if r is not None:
                r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
                if len(r) != len(grad_inputs):
                    raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                       "got %d, but expected %d" % (len(r), len(grad_inputs)))
                grad_inputs = r
        return grad_inputs
