"""Stochastic gradient descent with momentum, dampening, Nesterov momentum and weight decay."""
from .optimizer import Optimizer, _check_fused_args, _check_tensor_lr, _grad_array, required
from .optimizer import _with_weight_decay
from ..ops.sparse import _add_sparse_rows_, _assign_sparse_, _sparse_add
from ..tensor import Tensor

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum). Matches ``torch.optim.SGD``.

    Update rule, for each parameter ``p`` with gradient ``g`` (``-g`` when ``maximize``)::

        g = g + weight_decay * p
        if momentum != 0:
            b = g                                        (first step)
            b = momentum * b + (1 - dampening) * g       (later steps)
            g = g + momentum * b if nesterov else b
        p = p - lr * g

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate (default 1e-3).
        momentum: momentum factor (default 0).
        dampening: dampening for momentum (default 0).
        weight_decay: L2 penalty (default 0).
        nesterov: enables Nesterov momentum (default False).
        maximize: maximize the objective instead of minimizing (default False).

    Example:
        >>> import ember
        >>> w = ember.nn.Parameter(ember.tensor([1.0, 2.0]))
        >>> opt = ember.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> w
        Parameter containing:
        tensor([0.8000, 1.6000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        _check_tensor_lr(lr)
        if lr is not required and lr < 0.0:
            raise ValueError("Invalid learning rate: %s" % lr)
        if momentum < 0.0:
            raise ValueError("Invalid momentum value: %s" % momentum)
        if weight_decay < 0.0:
            raise ValueError("Invalid weight_decay value: %s" % weight_decay)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused_args(fused, foreach, differentiable)

    _complex_as_real = False     # (torch updates a complex parameter as complex)

    def _update(self, p, group, state):
        if group["momentum"] == 0 and not state:
            del self.state[p]       # (torch keeps no state for SGD without momentum)
        if p._grad.is_sparse:
            return self._sparse_update(p, group, state)
        g = _with_weight_decay(_grad_array(p, group["maximize"]), p, group["weight_decay"])
        momentum = group["momentum"]
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = Tensor._wrap(g.copy())
            else:
                b = buf._array
                b *= momentum
                b += (1 - group["dampening"]) * g
            g = g + momentum * buf._array if group["nesterov"] else buf._array
        p._array -= group["lr"] * g

    def _sparse_update(self, p, group, state):
        """The rule above for a sparse ``p.grad``, in torch's sparse arithmetic."""
        g = -p._grad if group["maximize"] else p._grad
        if group["weight_decay"] != 0:
            g = g.add(p, alpha=group["weight_decay"])      # (torch's error: sparse + dense)
        momentum = group["momentum"]
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = g.clone().detach()
            else:
                _assign_sparse_(buf, _sparse_add(buf * momentum, g, 1 - group["dampening"]))
            g = _sparse_add(g, buf, momentum) if group["nesterov"] else buf
        _add_sparse_rows_(p._array, g, -group["lr"])
