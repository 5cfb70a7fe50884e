"""ASGD: averaged stochastic gradient descent."""
from .optimizer import Optimizer, _grad_array, _scalar_state, _with_weight_decay, _zeros_like
from .optimizer import _check_tensor_lr

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged SGD. Matches ``torch.optim.ASGD``.

    Update rule at step ``t``::

        g = g + weight_decay * p
        p = p * (1 - lambd * eta) - eta * g
        ax = ax + mu * (p - ax)           (ax = p while mu == 1)
        eta = lr / (1 + lambd * lr * t)^alpha
        mu = 1 / max(1, t - t0)
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: %s" % lr)
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: %s" % weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    _capturable_names = ("params, mus, etas, and state_steps",) * 2

    _sparse_error = "ASGD does not support sparse gradients"

    def _update(self, p, group, state):
        if not state:
            state["step"] = _scalar_state()
            state["eta"] = _scalar_state(group["lr"])
            state["mu"] = _scalar_state(1.0)
            state["ax"] = _zeros_like(p)
        state["step"]._array += 1
        g = _with_weight_decay(_grad_array(p, group["maximize"]), p, group["weight_decay"])
        eta = float(state["eta"]._array)
        lambd, lr = group["lambd"], group["lr"]
        p._array *= 1 - lambd * eta
        p._array -= eta * g
        ax = state["ax"]._array
        if float(state["mu"]._array) != 1:
            ax += (p._array - ax) * state["mu"]._array.astype(ax.dtype)
        else:
            ax[...] = p._array
        step = float(state["step"]._array)
        state["eta"]._array[...] = lr / ((1 + lambd * lr * step) ** group["alpha"])
        state["mu"]._array[...] = 1 / max(1, step - group["t0"])
