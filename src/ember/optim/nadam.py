"""NAdam: Adam with Nesterov momentum."""
from ..ops._util import xp_of
from .adam import _check_adam_args
from .optimizer import Optimizer, _grad_array, _lerp_, _scalar_state, _zeros_like

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam. Matches ``torch.optim.NAdam``.

    Update rule at step ``t`` for parameter ``p`` with gradient ``g`` (``-g`` when
    ``maximize``)::

        g = g + weight_decay * p           (p = p * (1 - lr * weight_decay) if decoupled)
        mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay));  prod = prod * mu_t
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        denom = sqrt(v / (1 - beta2**t)) + eps
        p = p - lr * (1 - mu_t) / (1 - prod) * g / denom
              - lr * mu_{t+1} / (1 - prod * mu_{t+1}) * m / denom

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate (default 2e-3).
        betas: running-average coefficients (default (0.9, 0.999)).
        eps: term added to the denominator (default 1e-8).
        weight_decay: weight decay (default 0).
        momentum_decay: the ``momentum_decay`` of the schedule of ``mu`` (default 4e-3).
        decoupled_weight_decay: decay the weights directly as AdamW does (default False).
        maximize: maximize the objective (default False).
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError("Invalid momentum_decay value: %s" % momentum_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    _capturable_names = ("params, mu_products and state_steps",
                         "params, mu_products, and state_steps")

    _sparse_error = "NAdam does not support sparse gradients"

    def _update(self, p, group, state):
        if not state:
            state["step"] = _scalar_state()
            state["mu_product"] = _scalar_state(1.0)
            state["exp_avg"] = _zeros_like(p)
            state["exp_avg_sq"] = _zeros_like(p)
        g = _grad_array(p, group["maximize"])
        lr, wd, decay = group["lr"], group["weight_decay"], group["momentum_decay"]
        beta1, beta2 = group["betas"]
        state["step"]._array += 1
        step = float(state["step"]._array)
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p._array *= 1 - lr * wd
            else:
                g = g + wd * p._array
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * decay)))
        prod = state["mu_product"]._array
        prod *= mu
        mu_product = float(prod)
        m, v = state["exp_avg"]._array, state["exp_avg_sq"]._array
        _lerp_(m, g, 1 - beta1)
        v *= beta2
        v += (1 - beta2) * g * g
        denom = xp_of(p).sqrt(v / (1 - beta2 ** step))
        denom += group["eps"]
        p._array += (-lr * (1.0 - mu) / (1.0 - mu_product)) * g / denom
        p._array += ((-lr * mu_next) / (1.0 - mu_product * mu_next)) * m / denom
