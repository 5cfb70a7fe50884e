"""Adafactor: Adam-like steps with a factored (row x column) second moment."""
import numpy as np

from ..ops._util import xp_of
from ..tensor import Tensor
from .optimizer import Optimizer, _check_tensor_lr, _grad_array, _lerp_, _scalar_state, _zeros_like

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Adafactor. Matches ``torch.optim.Adafactor``.

    Update rule at step ``t`` (``beta2_t = 1 - t^beta2_decay``)::

        rho = min(lr, 1 / sqrt(t));  alpha = max(eps2, RMS(p)) * rho
        p = p * (1 - lr * weight_decay)
        matrices: R = lerp(R, mean_cols(g^2)), C = lerp(C, mean_rows(g^2)),
                  v = R C / max(mean(R), eps1);   vectors: v = lerp(v, g^2)
        u = g / sqrt(max(v, eps1^2))
        p = p - alpha / max(1, RMS(u) / d) * u
    """

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        _check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError("Learning rate should be >= 0 but is: %s" % lr)
        if not 0.0 >= beta2_decay:
            raise ValueError("beta2_decay should be <= 0 but is: %s" % beta2_decay)
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError("epsilon1 should be >= 0 but is: %s" % eps[0])
        if not 0.0 <= eps[1]:
            raise ValueError("epsilon2 should be >= 0 but is: %s" % eps[1])
        if not 1.0 <= d:
            raise ValueError("Clipping threshold d should be >= 1 but is: %s" % d)
        if not 0.0 <= weight_decay:
            raise ValueError("weight_decay should be >= 0 but is: %s" % weight_decay)
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    _complex_as_real = False     # (complex parameters are refused before any update)

    def _params_with_grad(self, group):
        """The group's parameters with a gradient, refusing a complex one or a sparse grad."""
        params = super()._params_with_grad(group)
        for p in params:
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            if p._grad.is_sparse:
                raise RuntimeError("Adafactor does not support sparse gradients")
        return params

    def _update(self, p, group, state):
        xp = xp_of(p)
        g = _grad_array(p, group["maximize"])
        if not state:
            state["step"] = _scalar_state()
            if g.ndim > 1:
                row = list(g.shape)
                row[-1] = 1
                state["row_var"] = Tensor._wrap(xp.zeros(row, dtype=g.dtype))
                col = list(g.shape)
                col[-2] = 1
                state["col_var"] = Tensor._wrap(xp.zeros(col, dtype=g.dtype))
            else:
                state["variance"] = _zeros_like(p)
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = float(np.finfo(p._array.dtype).eps)
        lr, d = group["lr"], group["d"]
        state["step"]._array += 1
        step = float(state["step"]._array)
        one_minus_beta2_t = step ** group["beta2_decay"]
        rho_t = min(lr, 1 / (step ** 0.5))
        x = p._array
        alpha = max(eps2, float(xp.sqrt((x * x).sum())) / (x.size ** 0.5)) * rho_t
        if group["weight_decay"] != 0:
            x *= 1 - lr * group["weight_decay"]
        if g.ndim > 1:
            row_var, col_var = state["row_var"]._array, state["col_var"]._array
            row_mean = (g * g).sum(-1, keepdims=True) / g.shape[-1]
            _lerp_(row_var, row_mean, one_minus_beta2_t)
            col_mean = (g * g).sum(-2, keepdims=True) / g.shape[-2]
            _lerp_(col_var, col_mean, one_minus_beta2_t)
            var_estimate = row_var @ col_var
            var_estimate /= xp.maximum(row_var.mean(-2, keepdims=True), eps1)
        else:
            variance = state["variance"]._array
            _lerp_(variance, g * g, one_minus_beta2_t)
            var_estimate = variance.copy()
        update = 1 / xp.sqrt(xp.maximum(var_estimate, eps1 * eps1))
        update *= g
        denom = max(1.0, float(xp.sqrt((update * update).sum())) / ((update.size ** 0.5) * d))
        x -= (alpha / denom) * update
