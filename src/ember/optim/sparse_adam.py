"""SparseAdam: Adam for sparse gradients, updating only the rows they hold."""
import math

from .adam import _check_adam_args
from .optimizer import Optimizer
from ..ops.creation import zeros_like

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam (lazy Adam). Matches ``torch.optim.SparseAdam``.

    Update rule at step ``t`` for the rows ``i`` a sparse gradient ``g`` (coalesced; ``-g`` when
    ``maximize``) holds; other rows and their state are left alone::

        m[i] = m[i] + (1 - beta1) * (g - m[i])
        v[i] = v[i] + (1 - beta2) * (g * g - v[i])
        p[i] = p[i] - lr * sqrt(1 - beta2 ** t) / (1 - beta1 ** t) * m[i] / (sqrt(v[i]) + eps)

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate (default 1e-3).
        betas: coefficients of the running averages of ``g`` and ``g * g`` (default
            (0.9, 0.999)).
        eps: term added to the denominator (default 1e-8).
        maximize: maximize the objective (default False).
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        _check_adam_args(lr, betas, eps, 0)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        complex_params = []
        for index, group in enumerate(self.param_groups):
            for d_index, d_param in enumerate(group["params"]):
                if d_param.is_complex():
                    complex_params.append([index, d_index])
        if complex_params:
            raise ValueError("Complex params at indices %s: SparseAdam does not support "
                             "complex parameters" % complex_params)

    def _update(self, p, group, state):
        if not p._grad.is_sparse:
            raise RuntimeError("SparseAdam does not support dense gradients, please consider "
                               "Adam instead")
        if not state:
            state["step"] = 0
            state["exp_avg"], state["exp_avg_sq"] = zeros_like(p), zeros_like(p)
        state["step"] += 1
        g = (-p._grad if group["maximize"] else p._grad).coalesce()
        values = g._sp_values
        if values.size == 0:
            return
        at = tuple(g._sp_indices)
        beta1, beta2 = group["betas"]
        m, v = state["exp_avg"]._array, state["exp_avg_sq"]._array
        old_m, old_v = m[at], v[at]
        m_update = (values - old_m) * values.dtype.type(1 - beta1)
        m[at] += m_update
        v_update = (values * values - old_v) * values.dtype.type(1 - beta2)
        v[at] += v_update
        numer = m_update + old_m
        denom = (v_update + old_v) ** 0.5 + values.dtype.type(group["eps"])
        step = state["step"]
        step_size = group["lr"] * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
        p._array[at] += values.dtype.type(-step_size) * (numer / denom)
