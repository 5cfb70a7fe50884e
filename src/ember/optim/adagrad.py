"""Adagrad: per-coordinate learning rates from the sum of squared gradients."""
from ..ops._util import xp_of
from ..ops.sparse import _add_sparse_rows_, _with_values
from .optimizer import Optimizer, _check_fused_args, _grad_array, _scalar_state
from .optimizer import _check_tensor_lr, _with_weight_decay
from ..tensor import Tensor

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad. Matches ``torch.optim.Adagrad``.

    Update rule at step ``t`` for parameter ``p`` with gradient ``g`` (``-g`` when
    ``maximize``)::

        g = g + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g                      (s starts at initial_accumulator_value)
        p = p - clr * g / (sqrt(s) + eps)

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate (default 1e-2).
        lr_decay: learning-rate decay (default 0).
        weight_decay: L2 penalty (default 0).
        initial_accumulator_value: starting value of the sum of squares (default 0).
        eps: term added to the denominator (default 1e-10).
        maximize: maximize the objective (default False).
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: %s" % lr)
        if not 0.0 <= lr_decay:
            raise ValueError("Invalid lr_decay value: %s" % lr_decay)
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: %s" % weight_decay)
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: %s"
                             % initial_accumulator_value)
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: %s" % eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        _check_fused_args(fused, foreach, differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _scalar_state()
                value = group["initial_accumulator_value"]
                if p.is_complex():      # (the real view's both halves start at the value)
                    value = complex(value, value)
                state["sum"] = Tensor._wrap(xp_of(p).full_like(p._array, value))

    def _update(self, p, group, state):
        if p._grad.is_sparse:
            state["step"]._array += 1
            if group["weight_decay"] != 0:
                raise RuntimeError("weight_decay option is not compatible with sparse gradients")
            return self._sparse_update(p, group, state)
        g = _with_weight_decay(_grad_array(p, group["maximize"]), p, group["weight_decay"])
        state["step"]._array += 1
        step = float(state["step"]._array)
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        s = state["sum"]._array
        s += g * g
        std = xp_of(p).sqrt(s)
        std += group["eps"]
        p._array += -clr * g / std

    def _sparse_update(self, p, group, state):
        """The rule above at the rows a sparse ``p.grad`` (coalesced) holds."""
        g = (-p._grad if group["maximize"] else p._grad).coalesce()
        step = float(state["step"]._array)
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        values = g._sp_values
        at = tuple(g._sp_indices)
        s = state["sum"]._array
        s[at] += values * values
        std = xp_of(p).sqrt(s[at])
        std += group["eps"]
        _add_sparse_rows_(p._array, _with_values(g, Tensor._wrap(values / std), True, None),
                          -clr)
