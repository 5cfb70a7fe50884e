"""Muon: momentum SGD whose update is orthogonalised by a bfloat16 Newton-Schulz iteration."""
import math

import numpy as np

from ..autograd.grad_mode import no_grad
from ..backend import get_array_module
from ..tensor import Tensor
from .optimizer import Optimizer

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _opmath(dtype):
    """The dtype torch's CPU kernels compute in for ``dtype``: float64 stays, others float32."""
    return np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)


def _is_bf16(dtype):
    return dtype.kind == "V" and dtype.itemsize == 2


def _round(x64, dtype):
    """A float64 result rounded as torch's kernels round it: to the compute dtype, then ``dtype``.

    Every product of two float32 numbers is exact in float64, so ``a * b + c`` computed in
    float64 and rounded once is the fused multiply-add torch's vectorised kernels use.
    """
    out = x64.astype(_opmath(dtype))
    return out if out.dtype == dtype else out.astype(dtype)


def _lerp(start, end, weight):
    """``torch.lerp(start, end, weight)`` with its vectorised CPU formula, as a new array."""
    f64 = np.float64
    op = _opmath(start.dtype)
    s, e = start.astype(op), end.astype(op)
    diff = (e - s).astype(f64)
    w = op.type(weight)
    if abs(w) < 0.5:
        return _round(f64(w) * diff + s.astype(f64), start.dtype)
    return _round(f64(w - op.type(1)) * diff + e.astype(f64), start.dtype)


def _bf16(x):
    """Values rounded to bfloat16 through float32 (a float kernel's bfloat16 output), returned
    as float64. Rounds the float32 bits to nearest-even, so any array library can run it."""
    xp = get_array_module(x)
    bits = x.astype(np.float32).view(np.uint32)
    bits = bits + (np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1)))
    out = (bits & np.uint32(0xFFFF0000)).view(np.float32).astype(np.float64)
    return xp.where(xp.isnan(x), x.astype(np.float64), out)


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """The quintic Newton-Schulz orthogonalisation of a 2-D array, in bfloat16 as torch runs it:
    each matmul/addmm accumulates in float and rounds its result to bfloat16 once. Returns the
    bfloat16 values as float64."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    xp = get_array_module(grad)
    a, b, c = (float(v) for v in ns_coefficients)
    f64 = np.float64
    x64 = _bf16(grad)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x64 = x64.T
    norm = _bf16(xp.sqrt((x64 * x64).sum()))
    norm = xp.maximum(norm, _bf16(xp.asarray(eps, dtype=f64)))
    x64 = _bf16(x64 / norm)
    a64, b64, c64 = f64(np.float32(a)), f64(np.float32(b)), f64(np.float32(c))
    for _ in range(ns_steps):
        gram = _bf16(x64 @ x64.T)
        gram_update = _bf16(b64 * gram + c64 * (gram @ gram))
        x64 = _bf16(a64 * x64 + gram_update @ x64)
    return x64.T if tall else x64


def _adjust_lr(lr, adjust_lr_fn, param_shape):
    """The learning rate scaled for a ``param_shape`` matrix ("original" or "match_rms_adamw")."""
    rows, cols = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """Muon (MomentUm Orthogonalized by Newton-Schulz). Matches ``torch.optim.Muon``.

    Only 2-D parameters are supported; optimise biases and embeddings with e.g. AdamW.
    Update rule, for each parameter ``p`` with gradient ``g``::

        B = lerp(B, g, 1 - momentum)                  (B starts at zero)
        U = lerp(g, B, momentum) if nesterov else B
        O = NewtonSchulz_{ns_steps}^{(a, b, c)}(U; eps)   (in bfloat16)
        p = p * (1 - lr * weight_decay)
        p = p - adjust_lr(lr, p.shape) * O

    Args:
        params: 2-D parameters or parameter groups to optimize.
        lr: learning rate (default 1e-3).
        weight_decay: decoupled weight decay (default 0.1).
        momentum: momentum factor (default 0.95).
        nesterov: enables Nesterov momentum (default True).
        ns_coefficients: coefficients ``(a, b, c)`` of the Newton-Schulz polynomial
            (default (3.4445, -4.775, 2.0315)).
        eps: added to the norm before normalising (default 1e-7).
        ns_steps: number of Newton-Schulz steps, below 100 (default 5).
        adjust_lr_fn: ``None``/"original" (``sqrt(max(1, A / B))``) or "match_rms_adamw"
            (``0.2 * sqrt(max(A, B))``) scaling of ``lr`` for an ``A x B`` parameter.

    Example:
        >>> import ember
        >>> w = ember.nn.Parameter(ember.ones(2, 2))
        >>> opt = ember.optim.Muon([w], lr=0.1)
        >>> (w * ember.tensor([[1.0, 0.0], [0.0, 2.0]])).sum().backward()
        >>> opt.step()
        >>> w.shape
        torch.Size([2, 2])
    """

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS,
                 ns_steps=DEFAULT_NS_STEPS, adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _init_group(self, group):
        params = []
        for p in group["params"]:
            if p._grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
            if p._grad.is_sparse:
                raise RuntimeError("Muon does not support sparse gradients")
            params.append(p)
            state = self.state[p]
            if "momentum_buffer" not in state:
                g = p._grad._array
                state["momentum_buffer"] = Tensor._wrap(get_array_module(g).zeros_like(g))
        return params

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the model, returns the loss."""
        loss = self._run_closure(closure)
        with no_grad():
            for group in self.param_groups:
                params = self._init_group(group)
                lr = group["lr"]
                lr = lr.item() if isinstance(lr, Tensor) else lr
                momentum = group["momentum"]
                for p in params:
                    grad = p._grad._array
                    if grad.ndim != 2:
                        raise ValueError("Param gradient must be a 2D matrix")
                    buf = self.state[p]["momentum_buffer"]._array
                    buf[...] = _lerp(buf, grad, 1 - momentum)
                    update = _lerp(grad, buf, momentum) if group["nesterov"] else buf
                    update = _zeropower_via_newtonschulz(update, group["ns_coefficients"],
                                                         group["ns_steps"], group["eps"])
                    adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
                    x = p._array
                    op = _opmath(x.dtype)
                    x[...] = _round(x.astype(op) * op.type(1 - lr * group["weight_decay"]),
                                    x.dtype)
                    # NOTE: torch adds the bfloat16 update in the promoted dtype: a bfloat16 p
                    # keeps alpha in bfloat16, and the transposed (strided) update of a tall
                    # matrix takes its scalar loop, where alpha * update rounds first.
                    same = _is_bf16(x.dtype)
                    alpha = np.float64((x.dtype if same else op).type(-adjusted_lr))
                    if same and grad.shape[0] > grad.shape[1]:
                        update = _round(update * alpha, x.dtype).astype(np.float64)
                        x[...] = _round(update + x.astype(np.float64), x.dtype)
                    else:
                        x[...] = _round(update * alpha + x.astype(np.float64), x.dtype)
                    p._bump()
        return loss
