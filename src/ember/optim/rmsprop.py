"""RMSprop, plain or centered, with optional momentum."""
from ..ops._util import xp_of
from .optimizer import Optimizer, _grad_array, _lerp_, _scalar_state, _with_weight_decay
from .optimizer import _check_tensor_lr
from .optimizer import _zeros_like

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop. Matches ``torch.optim.RMSprop``.

    Update rule for parameter ``p`` with gradient ``g`` (``-g`` when ``maximize``)::

        g = g + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g
        avg = sqrt(v - gm * gm) + eps    with gm = alpha * gm + (1 - alpha) * g  (centered)
        avg = sqrt(v) + eps                                                    (otherwise)
        b = momentum * b + g / avg; p = p - lr * b     (momentum > 0)
        p = p - lr * g / avg                           (otherwise)

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate (default 1e-2).
        alpha: smoothing constant (default 0.99).
        eps: term added to the denominator (default 1e-8).
        weight_decay: L2 penalty (default 0).
        momentum: momentum factor (default 0).
        centered: normalise by the estimated variance of the gradient (default False).
        maximize: maximize the objective (default False).
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        _check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: %s" % lr)
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: %s" % eps)
        if not 0.0 <= momentum:
            raise ValueError("Invalid momentum value: %s" % momentum)
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: %s" % weight_decay)
        if not 0.0 <= alpha:
            raise ValueError("Invalid alpha value: %s" % alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    _capturable_xla = (True, True)

    _sparse_error = "RMSprop does not support sparse gradients"

    def _update(self, p, group, state):
        if not state:
            state["step"] = _scalar_state()
            state["square_avg"] = _zeros_like(p)
            if group["momentum"] > 0:
                state["momentum_buffer"] = _zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = _zeros_like(p)
        g = _with_weight_decay(_grad_array(p, group["maximize"]), p, group["weight_decay"])
        alpha = group["alpha"]
        state["step"]._array += 1
        v = state["square_avg"]._array
        v *= alpha
        v += (1 - alpha) * g * g
        if group["centered"]:
            gm = _lerp_(state["grad_avg"]._array, g, 1 - alpha)
            avg = xp_of(p).sqrt(v - gm * gm)
        else:
            avg = xp_of(p).sqrt(v)
        avg += group["eps"]
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]._array
            buf *= group["momentum"]
            buf += g / avg
            p._array -= group["lr"] * buf
        else:
            p._array += -group["lr"] * g / avg
