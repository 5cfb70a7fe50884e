"""Adam and its shared update (also used by AdamW)."""
import numpy as np

from ..tensor import Tensor
from ..ops._util import xp_of
from .optimizer import Optimizer, _check_fused_args, _grad_array, _lerp_, _scalar_state
from .optimizer import _check_tensor_lr, _scratch, _zeros_like

__all__ = ["Adam"]


def _check_adam_args(lr, betas, eps, weight_decay):
    _check_tensor_lr(lr)
    if not 0.0 <= lr:
        raise ValueError("Invalid learning rate: %s" % lr)
    if not 0.0 <= eps:
        raise ValueError("Invalid epsilon value: %s" % eps)
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError("Invalid beta parameter at index 0: %s" % betas[0])
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError("Invalid beta parameter at index 1: %s" % betas[1])
    if not 0.0 <= weight_decay:
        raise ValueError("Invalid weight_decay value: %s" % weight_decay)


class Adam(Optimizer):
    """Adam: adaptive moment estimation. Matches ``torch.optim.Adam``.

    Update rule at step ``t`` for parameter ``p`` with gradient ``g`` (``-g`` when
    ``maximize``)::

        g = g + weight_decay * p             (p = p * (1 - lr * weight_decay) if decoupled)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        v_max = max(v_max, v)                (amsgrad; then v_max replaces v below)
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate (default 1e-3).
        betas: coefficients of the running averages of the gradient and its square.
        eps: term added to the denominator (default 1e-8).
        weight_decay: L2 penalty (default 0).
        amsgrad: use the AMSGrad variant (default False).
        maximize: maximize the objective (default False).
        decoupled_weight_decay: AdamW's decoupled weight decay (default False).

    Example:
        >>> import ember
        >>> w = ember.nn.Parameter(ember.tensor([1.0, -2.0]))
        >>> opt = ember.optim.Adam([w], lr=0.1)
        >>> for _ in range(3):
        ...     opt.zero_grad()
        ...     loss = (w * w).sum()
        ...     loss.backward()
        ...     opt.step()
        >>> w
        Parameter containing:
        tensor([ 0.7016, -1.7006], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        if not (all(isinstance(b, float) for b in betas)
                or all(isinstance(b, Tensor) for b in betas)):
            raise ValueError("betas must be either both floats or both Tensors")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        _check_fused_args(fused, foreach, differentiable)

    def _updates_real_view(self, group):
        # (torch decays the complex parameter itself before viewing it as real)
        return not (group["decoupled_weight_decay"] and group["weight_decay"] != 0)

    _sparse_error = "Adam does not support sparse gradients, please consider SparseAdam instead"

    def _update(self, p, group, state):
        if not state:
            state["step"] = _scalar_state()
            state["exp_avg"] = _zeros_like(p)
            state["exp_avg_sq"] = _zeros_like(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = _zeros_like(p)
        _adam_update(p, group, state, group["decoupled_weight_decay"], self)


_BLOCK = 32768    # elements per chunk: the update's six arrays stay in the L2 cache


def _adam_update(p, group, state, decoupled, opt=None):
    """One Adam step on ``p`` in place; with ``opt``, chunk by chunk in its reused work arrays."""
    g = _grad_array(p, group["maximize"])
    lr, wd, eps = group["lr"], group["weight_decay"], group["eps"]
    beta1, beta2 = group["betas"]
    state["step"]._array += 1
    step = float(state["step"]._array)
    if wd != 0:
        if decoupled:
            p._array *= 1 - lr * wd
        else:
            g = g + wd * p._array
    m, v = state["exp_avg"]._array, state["exp_avg_sq"]._array
    step_size = lr / (1 - beta1 ** step)
    bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
    pa = p._array
    xp = xp_of(p)
    # The chunked loop is a CPU cache optimisation: on a GPU it would only add launches.
    if opt is None or group["amsgrad"] or type(pa) is not np.ndarray or not (
            pa.flags.c_contiguous and m.flags.c_contiguous and v.flags.c_contiguous):
        _lerp_(m, g, 1 - beta1)
        v *= beta2
        v += (1 - beta2) * g * g
        if group["amsgrad"]:
            v_max = state["max_exp_avg_sq"]._array
            xp.maximum(v_max, v, out=v_max)
            v = v_max
        denom = xp.sqrt(v)
        denom /= bias_correction2_sqrt
        denom += eps
        update = xp.multiply(m, -step_size)
        update /= denom
        pa += update
        return
    # The same operations in torch's order, on chunks that stay in cache.
    n = pa.size
    g, pa, m, v = xp.ascontiguousarray(g).reshape(-1), pa.reshape(-1), m.reshape(-1), \
        v.reshape(-1)
    w1, w2 = 1 - beta1, 1 - beta2
    eps_bc2, scale = eps * bias_correction2_sqrt, -step_size * bias_correction2_sqrt
    t1_all = _scratch(opt, g[:_BLOCK], 0)
    t2_all = _scratch(opt, g[:_BLOCK], 1)
    for i in range(0, n, _BLOCK):
        j = min(i + _BLOCK, n)
        gb, mb, vb, pb, t1, t2 = g[i:j], m[i:j], v[i:j], pa[i:j], t1_all[:j - i], t2_all[:j - i]
        _lerp_(mb, gb, w1, t1)
        vb *= beta2
        xp.multiply(gb, w2, out=t1)
        t1 *= gb
        vb += t1
        # NOTE: sqrt(v) / bc2 + eps == (sqrt(v) + eps * bc2) / bc2: one pass fewer.
        xp.sqrt(vb, out=t2)
        t2 += eps_bc2
        xp.divide(mb, t2, out=t1)
        t1 *= scale
        pb += t1
