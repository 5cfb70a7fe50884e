"""Fused classification losses: cross_entropy (log-softmax + NLL in one Function), nll_loss.

The other losses are composed from element-wise ops in ``ember.nn.functional``.
"""
import numpy as np

from ..autograd.function import Function
from ..autograd.grad_mode import state as _grad
from ..autograd.graph import _version_message
from ..tensor import Tensor
from .activation import log_softmax, softmax

__all__ = ["cross_entropy", "nll_loss"]

_REDUCTIONS = ("none", "mean", "sum")


def _log_softmax(x):
    z = x - x.max(axis=1, keepdims=True)   # NOTE: a row holding +inf gives NaN, as torch
    with np.errstate(divide="ignore", over="ignore", under="ignore"):
        s = np.exp(z).sum(axis=1, keepdims=True)
        z -= np.log(s, out=s)
    return z


def _coefficients(target, shape, dtype, weight, ignore_index, reduction, label_smoothing):
    """``(A, empty)``: loss = sum_c A[..c..] * -logp, per element or reduced, as torch defines
    it; ``empty`` when a mean counts nothing (every target ignored)."""
    c = shape[1]
    w = np.ones(c, dtype=dtype) if weight is None else weight.astype(dtype, copy=False)
    wshape = (1, c) + (1,) * (len(shape) - 2)
    if target.dtype.kind == "f":
        t = target.astype(dtype, copy=False)
        if label_smoothing > 0:
            t = t * (1 - label_smoothing) + label_smoothing / c
        a = t * w.reshape(wshape)
        if reduction == "mean":
            a = a / (a.size // c if c else 1)
        return a, False
    valid = target != ignore_index
    safe = np.where(valid, target, 0)
    if valid.any() and (safe.min() < 0 or safe.max() >= c):
        bad = safe[(safe < 0) | (safe >= c)][0]
        raise IndexError("Target %d is out of bounds." % bad)
    onehot = np.zeros(shape, dtype=dtype)
    np.put_along_axis(onehot, np.expand_dims(safe, 1), 1, axis=1)
    wt = w[safe] * valid
    nll = onehot * np.expand_dims(wt, 1)
    if reduction == "mean":
        total = wt.sum(dtype=dtype)
        if total == 0:    # NOTE: torch's loss is then 0/0 = nan, but its gradient is 0
            return np.zeros(shape, dtype=dtype), True
        nll = nll / total
    if label_smoothing <= 0:
        return nll, False
    smooth = np.broadcast_to(w.reshape(wshape), shape) * np.expand_dims(valid, 1)
    if reduction == "mean":
        smooth = smooth / (wt.sum(dtype=dtype) if weight is not None else valid.sum(dtype=dtype))
    return (1 - label_smoothing) * nll + (label_smoothing / c) * smooth, False


def _source(saved, node):
    """A loss's input kept as ``(tensor, version)``, for a double backward, which needs it
    unchanged since forward."""
    x, version = saved
    if x._version_ref[0] != version:
        raise RuntimeError(_version_message(node, x, version))
    return x


def _expand(grad_output, reduction):
    return grad_output.unsqueeze(1) if reduction == "none" else grad_output


def _graph_input_grad(ctx, a, grad_output, reduction, logits):
    """d/d input of ``sum(a * -logp)`` (``logp = log_softmax(input)`` for logits) as Tensor ops,
    so that it can be differentiated again."""
    ga = _expand(grad_output, reduction) * (-a if isinstance(a, Tensor) else Tensor._wrap(-a))
    if not logits:
        return ga
    return ga - softmax(_source(ctx.source, ctx), 1) * ga.sum(1, keepdim=True)


class CrossEntropy(Function):
    node_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, input, target, weight, ignore_index, reduction, label_smoothing, logits):
        x = input._array
        with np.errstate(invalid="ignore", divide="ignore"):
            logp = _log_softmax(x) if logits else x
            a, empty = _coefficients(target._array, x.shape, x.dtype,
                                     None if weight is None else weight._array, ignore_index,
                                     reduction, label_smoothing)
            prod = np.where(a != 0, a * logp, 0)
            # NOTE: 0 - x, not -x: ignored targets and empty sums give +0.0, as torch.
            loss = 0 - (prod.sum(axis=1) if reduction == "none" else prod.sum())
            if empty:
                loss = np.nan
        ctx.conf = (a, logp, logits, reduction, label_smoothing)
        ctx.weight_arr = None if weight is None else weight._array
        ctx.source = (input, input._version_ref[0])
        ctx.target = (target, target._version_ref[0])
        return Tensor._wrap(np.asarray(loss, dtype=x.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        a, logp, logits, reduction, eps = ctx.conf
        if _grad.enabled:   # create_graph=True: the gradients as Tensor ops (double backward)
            w = None if ctx.weight_arr is None else \
                Tensor._wrap(ctx.weight_arr.reshape((1, -1) + (1,) * (logp.ndim - 2)))
            if ctx.needs_input_grad[1]:    # probabilities: the coefficients depend on them
                t = _source(ctx.target, ctx)
                a = t * (1 - eps) + eps / logp.shape[1] if eps > 0 else t
                a = a if w is None else a * w
                a = a / (logp.size // logp.shape[1]) if reduction == "mean" else a
            gi = _graph_input_grad(ctx, a, grad_output, reduction, logits) \
                if ctx.needs_input_grad[0] else None
            gt = None
            if ctx.needs_input_grad[1]:
                x = _source(ctx.source, ctx)
                da = (log_softmax(x, 1) if logits else x) * _expand(grad_output, reduction) \
                    * (eps - 1)
                if reduction == "mean":
                    da = da / (logp.size // logp.shape[1])
                gt = da if w is None else da * w
            return gi, gt, None, None, None, None, None
        g = grad_output._array
        g = np.expand_dims(g, 1) if reduction == "none" else g
        ga = -a * g
        grad_input = grad_target = None
        if ctx.needs_input_grad[0]:
            if logits:
                grad_input = ga - np.exp(logp) * ga.sum(axis=1, keepdims=True)
            else:
                grad_input = ga
            grad_input = Tensor._wrap(grad_input.astype(logp.dtype, copy=False))
        if ctx.needs_input_grad[1]:
            da = -logp * g * (1 - eps)
            if reduction == "mean":
                da = da / (logp.size // logp.shape[1])
            w = ctx.weight_arr
            if w is not None:
                da = da * w.reshape((1, -1) + (1,) * (logp.ndim - 2))
            grad_target = Tensor._wrap(da.astype(logp.dtype, copy=False))
        return grad_input, grad_target, None, None, None, None, None


class ClassNll(Function):
    """The common case: (N, C) input, class-index target, no weight and no smoothing."""

    node_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, input, target, ignore_index, reduction, logits):
        x, t = input._array, target._array
        n, c = x.shape
        valid = t != ignore_index
        if valid.all():
            valid = None
        else:
            t = np.where(valid, t, 0)
        if n and (t.min() < 0 or t.max() >= c):
            raise IndexError("Target %d is out of bounds." % t[(t < 0) | (t >= c)][0])
        with np.errstate(invalid="ignore", divide="ignore"):
            logp = _log_softmax(x) if logits else x
            rows = np.arange(n)
            picked = logp[rows, t]
            if valid is not None:
                picked = np.where(valid, picked, 0)
            count = x.dtype.type(n if valid is None else np.count_nonzero(valid))
            # NOTE: 0 - x, not -x: ignored targets and empty sums give +0.0, as torch.
            if reduction == "none":
                loss = 0 - picked
            else:
                loss = 0 - picked.sum()
                if reduction == "mean":
                    loss = loss / count
        ctx.conf = (logp, t, valid, count, reduction, logits)
        ctx.source = (input, input._version_ref[0])
        return Tensor._wrap(np.asarray(loss, dtype=x.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        logp, t, valid, count, reduction, logits = ctx.conf
        if _grad.enabled:   # create_graph=True: the gradient as Tensor ops (double backward)
            a = _coefficients(t if valid is None else np.where(valid, t, -1), logp.shape,
                              logp.dtype, None, -1, reduction, 0.0)[0]
            return _graph_input_grad(ctx, a, grad_output, reduction, logits), None, None, None, \
                None
        g = grad_output._array.astype(logp.dtype, copy=False)
        n = logp.shape[0]
        with np.errstate(invalid="ignore", divide="ignore"):
            k = g / count if reduction == "mean" else g
            k = np.broadcast_to(k, (n,))
            if valid is not None:
                k = np.where(valid, k, 0).astype(logp.dtype, copy=False)
            if logits:
                grad = np.exp(logp)
                grad *= k[:, None]
            else:
                grad = np.zeros_like(logp)
            grad[np.arange(n), t] -= k
        return Tensor._wrap(grad), None, None, None, None


def _check(op, input, target, weight, reduction, probs_ok):
    if reduction not in _REDUCTIONS:
        raise ValueError("%s is not a valid value for reduction" % reduction)
    if input.dim() < 1:
        raise RuntimeError("%s: input tensor should be 1D or more, got 0-D" % op)
    x_shape = tuple(input.shape)
    t_shape = tuple(target.shape)
    if probs_ok and target.is_floating_point():
        if t_shape != x_shape:
            raise RuntimeError("Expected target size %s, got %s" % (list(x_shape), list(t_shape)))
        return
    if target.is_floating_point():
        raise RuntimeError("expected scalar type Long but found %s" % target.dtype)
    n_in = x_shape[0] if input.dim() > 1 else None
    if input.dim() == 1:
        if target.dim() != 0:
            raise RuntimeError("%s: expected target to be 0-D for a 1-D input, got shape %s"
                               % (op, t_shape))
    elif t_shape[:1] != (n_in,):
        raise ValueError("Expected input batch_size (%d) to match target batch_size (%d)."
                         % (n_in, t_shape[0] if t_shape else 0))
    elif t_shape != x_shape[:1] + x_shape[2:]:
        raise RuntimeError("%s: expected target of shape %s for input of shape %s, got %s"
                           % (op, x_shape[:1] + x_shape[2:], x_shape, t_shape))
    if weight is not None and tuple(weight.shape) != (x_shape[0 if input.dim() == 1 else 1],):
        raise RuntimeError("weight tensor should be defined either for all %d classes or no "
                           "classes but got weight tensor of shape: %s"
                           % (x_shape[0 if input.dim() == 1 else 1], list(weight.shape)))


def _apply(input, target, weight, ignore_index, reduction, label_smoothing, logits):
    unbatched = input.dim() == 1
    if unbatched:
        input = input.unsqueeze(0)
        target = target.unsqueeze(0)
    if (weight is None and label_smoothing <= 0 and input.dim() == 2
            and target._array.dtype.kind in "iu"):
        out = ClassNll.apply(input, target, ignore_index, reduction, logits)
    else:
        out = CrossEntropy.apply(input, target, weight, ignore_index, reduction,
                                 label_smoothing, logits)
    return out.squeeze(0) if unbatched and reduction == "none" else out


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross entropy of logits ``input`` (N, C, ...) against class indices or probabilities.

    One fused Function (stable log-softmax + weighted NLL). Matches
    ``torch.nn.functional.cross_entropy``, including ``weight``, ``ignore_index`` and
    ``label_smoothing``.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check("cross_entropy", input, target, weight, reduction, True)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError("label_smoothing must be between 0.0 and 1.0. Got: %s"
                           % label_smoothing)
    return _apply(input, target, weight, ignore_index, reduction, label_smoothing, True)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log-likelihood of log-probabilities ``input`` (N, C, ...) at class indices.

    Matches ``torch.nn.functional.nll_loss``.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check("nll_loss", input, target, weight, reduction, False)
    return _apply(input, target, weight, ignore_index, reduction, 0.0, False)


def _legacy_reduction(size_average, reduce, reduction):
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"
