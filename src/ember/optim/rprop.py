"""Rprop: resilient backpropagation (sign-based steps with adaptive sizes)."""
from ..ops._util import xp_of
from ..tensor import Tensor
from .optimizer import Optimizer, _check_tensor_lr, _grad_array, _scalar_state, _zeros_like

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop. Matches ``torch.optim.Rprop``.

    Update rule per element, with ``s = sign(g * g_prev)``::

        size = clamp(size * (etaplus if s > 0 else etaminus if s < 0 else 1), *step_sizes)
        g = 0 where s < 0
        p = p - sign(g) * size
        g_prev = g
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: %s" % lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError("Invalid eta values: %s, %s" % (etas[0], etas[1]))
        defaults = dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    _capturable_xla = (True, True)

    _sparse_error = "Rprop does not support sparse gradients"

    def _update(self, p, group, state):
        xp = xp_of(p)
        if not state:
            state["step"] = _scalar_state()
            state["prev"] = _zeros_like(p)
            state["step_size"] = Tensor._wrap(xp.full_like(p._array, group["lr"]))
        state["step"]._array += 1
        g = _grad_array(p, group["maximize"])
        etaminus, etaplus = group["etas"]
        size_min, size_max = group["step_sizes"]
        prev, size = state["prev"]._array, state["step_size"]._array
        sign = xp.sign(g * prev)
        factor = xp.where(sign > 0, etaplus, xp.where(sign < 0, etaminus, 1)).astype(size.dtype)
        size *= factor
        xp.clip(size, size_min, size_max, out=size)
        g = xp.where(factor == etaminus, 0, g).astype(g.dtype)
        p._array -= xp.sign(g) * size
        prev[...] = g
