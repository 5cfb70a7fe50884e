"""AdamW: Adam with decoupled weight decay."""
from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """Adam with decoupled weight decay. Matches ``torch.optim.AdamW``.

    Update rule at step ``t`` (see ``Adam``), the decay applied to the weights directly::

        p = p * (1 - lr * weight_decay)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate (default 1e-3).
        betas: running-average coefficients (default (0.9, 0.999)).
        eps: term added to the denominator (default 1e-8).
        weight_decay: decoupled weight decay (default 1e-2).
        amsgrad: use the AMSGrad variant (default False).
        maximize: maximize the objective (default False).
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
