"""RAdam: Adam with a rectified (variance-stabilised) adaptive learning rate."""
from ..ops._util import xp_of
from .adam import _check_adam_args
from .optimizer import Optimizer, _grad_array, _lerp_, _scalar_state, _zeros_like

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam. Matches ``torch.optim.RAdam``.

    Update rule at step ``t`` (``rho_inf = 2 / (1 - beta2) - 1``)::

        g = g + weight_decay * p            (or p *= 1 - lr * weight_decay, decoupled)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g^2
        rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
        if rho_t > 5: p -= lr * m / (1 - beta1^t) * r_t * sqrt(1 - beta2^t) / (sqrt(v) + eps)
        else:         p -= lr * m / (1 - beta1^t)

    with ``r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))``.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    _sparse_error = "RAdam does not support sparse gradients"

    def _update(self, p, group, state):
        if not state:
            state["step"] = _scalar_state()
            state["exp_avg"] = _zeros_like(p)
            state["exp_avg_sq"] = _zeros_like(p)
        xp = xp_of(p)
        g = _grad_array(p, group["maximize"])
        state["step"]._array += 1
        step = float(state["step"]._array)
        lr, wd, eps = group["lr"], group["weight_decay"], group["eps"]
        beta1, beta2 = group["betas"]
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p._array *= 1 - lr * wd
            else:
                g = g + wd * p._array
        m, v = state["exp_avg"]._array, state["exp_avg_sq"]._array
        _lerp_(m, g, 1 - beta1)
        v *= beta2
        v += (1 - beta2) * g * g
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        corrected = m / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive = (bias_correction2 ** 0.5) / (xp.sqrt(v) + eps)
            p._array -= corrected * lr * adaptive * rect
        else:
            p._array -= corrected * lr
