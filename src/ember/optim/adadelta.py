"""Adadelta: per-element step sizes from running averages of squared gradients and steps."""
from ..ops._util import xp_of
from .optimizer import Optimizer, _grad_array, _scalar_state, _with_weight_decay, _zeros_like
from .optimizer import _check_tensor_lr

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta. Matches ``torch.optim.Adadelta``.

    Update rule::

        g = g + weight_decay * p
        v = rho * v + (1 - rho) * g^2
        d = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * d^2
        p = p - lr * d
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: %s" % lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError("Invalid rho value: %s" % rho)
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: %s" % eps)
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: %s" % weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    _capturable_xla = (False, False)

    def _updates_real_view(self, group):
        return False        # (torch updates the complex parameter itself)

    _sparse_error = "Adadelta does not support sparse gradients"

    def _update(self, p, group, state):
        if not state:
            state["step"] = _scalar_state()
            state["square_avg"] = _zeros_like(p)
            state["acc_delta"] = _zeros_like(p)
        xp = xp_of(p)
        state["step"]._array += 1
        g = _with_weight_decay(_grad_array(p, group["maximize"]), p, group["weight_decay"])
        rho, eps = group["rho"], group["eps"]
        v, u = state["square_avg"]._array, state["acc_delta"]._array
        v *= rho
        v += (1 - rho) * g * g
        std = xp.sqrt(v + eps)
        delta = xp.sqrt(u + eps)
        delta /= std
        delta *= g
        u *= rho
        u += (1 - rho) * delta * delta
        p._array -= group["lr"] * delta
