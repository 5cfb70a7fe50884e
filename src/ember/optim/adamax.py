"""Adamax: Adam with the infinity norm."""
from ..ops._util import xp_of
from .adam import _check_adam_args
from .optimizer import Optimizer, _grad_array, _lerp_, _scalar_state, _with_weight_decay
from .optimizer import _zeros_like

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax. Matches ``torch.optim.Adamax``.

    Update rule at step ``t`` for parameter ``p`` with gradient ``g`` (``-g`` when
    ``maximize``)::

        g = g + weight_decay * p
        m = beta1 * m + (1 - beta1) * g
        u = max(beta2 * u, |g| + eps)
        p = p - lr / (1 - beta1**t) * m / u

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate (default 2e-3).
        betas: running-average coefficients (default (0.9, 0.999)).
        eps: term added to the denominator (default 1e-8).
        weight_decay: L2 penalty (default 0).
        maximize: maximize the objective (default False).
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    _sparse_error = "Adamax does not support sparse gradients"

    def _update(self, p, group, state):
        if not state:
            state["step"] = _scalar_state()
            state["exp_avg"] = _zeros_like(p)
            state["exp_inf"] = _zeros_like(p)
        g = _with_weight_decay(_grad_array(p, group["maximize"]), p, group["weight_decay"])
        beta1, beta2 = group["betas"]
        state["step"]._array += 1
        step = float(state["step"]._array)
        m, u = state["exp_avg"]._array, state["exp_inf"]._array
        _lerp_(m, g, 1 - beta1)
        u *= beta2
        xp = xp_of(p)
        bound = xp.abs(g)
        bound += group["eps"]
        xp.maximum(u, bound, out=u)
        clr = group["lr"] / (1 - beta1 ** step)
        p._array += -clr * m / u
