"""Fused losses: cross_entropy (log-softmax + NLL in one Function), nll_loss, and the
unreduced binary cross entropy behind ``binary_cross_entropy``.

The other losses are composed from element-wise ops in ``ember.nn.functional``.
"""
import math
import warnings

import numpy as np

from .. import dtypes as _dt
from ..autograd import _autocast
from ..autograd.grad_mode import is_grad_enabled, state as _ac_state
from ..autograd.function import Function, once_differentiable
from ..backend import errstate, get_array_module
from ..tensor import Tensor
from ._inplace import _KIND_RANK
from ._util import not_implemented_for, wrap_dim, xp_of
from .comparison import where
from .reduction import VectorNorm
from .activation import LogSoftmax, Softplus
from .arithmetic import AddScalar, DivScalar, MulScalar
from .matmul import addmm, matmul
from .shape import t as _t
from .unary import clamp, logit, sigmoid

# (``torch.ctc_loss`` is the C++ form in ``ember._torch_ns``: ``reduction`` as an int)
__all__ = ["cross_entropy", "nll_loss"]
# (``linear_cross_entropy`` is ``nn.functional``'s only, not ``torch.NAME``)

_REDUCTIONS = ("none", "mean", "sum")


def _log_softmax(x):
    if x.size == 0:
        return x.copy()
    xp = get_array_module(x)
    z = x - x.max(axis=1, keepdims=True)   # NOTE: a row holding +inf gives NaN, as torch
    with errstate(divide="ignore", over="ignore", under="ignore"):
        s = xp.exp(z).sum(axis=1, keepdims=True)
        z -= xp.log(s, out=s)
    return z


def _coefficients(target, shape, dtype, weight, ignore_index, reduction, label_smoothing):
    """``(A, empty)``: loss = sum_c A[..c..] * -logp, per element or reduced, as torch defines
    it; ``empty`` when a mean counts nothing (every target ignored)."""
    xp = get_array_module(target)
    c = shape[1]
    w = xp.ones(c, dtype=dtype) if weight is None else weight.astype(dtype, copy=False)
    wshape = (1, c) + (1,) * (len(shape) - 2)
    if _dt.kind(target.dtype) == "f":
        t = target.astype(dtype, copy=False)
        if label_smoothing > 0:
            t = t * (1 - label_smoothing) + label_smoothing / c
        a = t * w.reshape(wshape)
        if reduction == "mean":
            if not c:       # (torch's mean is then 0 / (0 / 0): NaN)
                return a, True
            a = a / (a.size // c)
        return a, False
    valid = target != ignore_index
    safe = xp.where(valid, target, 0)
    if bool(valid.any()) and (int(safe.min()) < 0 or int(safe.max()) >= c):
        bad = safe[(safe < 0) | (safe >= c)][0]
        raise IndexError("Target %d is out of bounds." % int(bad))
    onehot = (xp.arange(c).reshape(wshape) == xp.expand_dims(safe, 1)).astype(dtype)
    wt = w[safe] * valid
    nll = onehot * xp.expand_dims(wt, 1)
    if reduction == "mean":
        total = wt.sum(dtype=dtype)
        if float(total) == 0:    # NOTE: torch's loss is then 0/0 = nan, but its gradient is 0
            return xp.zeros(shape, dtype=dtype), True
        nll = nll / total
    if label_smoothing <= 0:
        return nll, False
    smooth = xp.broadcast_to(w.reshape(wshape), shape) * xp.expand_dims(valid, 1)
    if reduction == "mean":
        smooth = smooth / (wt.sum(dtype=dtype) if weight is not None else valid.sum(dtype=dtype))
    return (1 - label_smoothing) * nll + (label_smoothing / c) * smooth, False


def _expand(grad_output, reduction):
    return grad_output.unsqueeze(1) if reduction == "none" else grad_output


def _graph_input_grad(a, grad_output, reduction, logp):
    """d/d input of ``sum(a * -logp)`` as Tensor ops, so that it can be differentiated again;
    ``logp`` is the node's own log-softmax output for logits (None for log-probabilities)."""
    ga = _expand(grad_output, reduction) * (-a)
    if logp is None:
        return ga
    return ga - logp.exp() * ga.sum(1, keepdim=True)


def _log_softmax_grad(grad_logp, logp):
    """The gradient through ``logp = log_softmax(input)`` (Tensor ops)."""
    return grad_logp - logp.exp() * grad_logp.sum(1, keepdim=True)


def _finish(ctx, loss, logp, x, logits):
    """The loss tensor (and, for logits, the log-softmax as a second output that the node
    saves: double backward differentiates through it, as through torch's LogSoftmax node)."""
    out = Tensor._wrap(get_array_module(x).asarray(loss, dtype=x.dtype))
    if not logits:
        return out
    ctx.set_materialize_grads(False)
    return out, Tensor._wrap(logp)


class CrossEntropy(Function):
    """Weighted / smoothed / N-d cross entropy and NLL loss (probability targets included).

    For logits the input is not kept (as torch, whose LogSoftmax keeps its output): the node
    saves its log-softmax output, the coefficients, the target and the weight.
    """

    node_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, input, target, weight, ignore_index, reduction, label_smoothing, logits):
        # (an integer target and the weight come boxed in tuples: no gradient, so no edge)
        target = target[0] if isinstance(target, tuple) else target
        weight, = weight
        x = input._array
        xp = xp_of(input)
        with errstate(invalid="ignore", divide="ignore"):
            logp = _log_softmax(x) if logits else x
            a, empty = _coefficients(target._array, x.shape, x.dtype,
                                     None if weight is None else weight._array, ignore_index,
                                     reduction, label_smoothing)
            prod = xp.where(a != 0, a * logp, 0)
            # NOTE: 0 - x, not -x: ignored targets and empty sums give +0.0, as torch; its
            # probability-target loss is -x (-0.0 there).
            loss = prod.sum(axis=1) if reduction == "none" else prod.sum()
            loss = -loss if _dt.kind(target._array.dtype) == "f" else 0 - loss
            if empty:
                loss = float("nan")
        ctx.reduction, ctx.smoothing, ctx.logits = reduction, label_smoothing, logits
        if x.ndim == 4 and _dt.kind(target._array.dtype) != "f":
            ctx.set_node_name("NllLoss2DBackward0")
        out = _finish(ctx, loss, logp, x, logits)
        ctx.save_for_backward(out[1] if logits else input, Tensor._wrap(a), target, weight)
        return out

    @staticmethod
    def array_backward(ctx, grad_output, grad_logp=None):
        if grad_logp is not None:
            return CrossEntropy.backward(ctx, grad_output, grad_logp)
        lp, a, _, weight = ctx.saved_tensors
        logp, a = lp._array, a._array
        reduction, eps = ctx.reduction, ctx.smoothing
        xp = get_array_module(logp)
        g = grad_output._array
        g = xp.expand_dims(g, 1) if reduction == "none" else g
        ga = -a * g
        grad_input = grad_target = None
        if ctx.needs_input_grad[0]:
            if ctx.logits:
                grad_input = ga - xp.exp(logp) * ga.sum(axis=1, keepdims=True)
            else:
                grad_input = ga
            grad_input = Tensor._wrap(grad_input.astype(logp.dtype, copy=False))
        if ctx.needs_input_grad[1]:
            da = -logp * g * (1 - eps)
            if reduction == "mean":
                da = da / (logp.size // logp.shape[1] if logp.shape[1] else 1)
            if weight is not None:
                da = da * weight._array.reshape((1, -1) + (1,) * (logp.ndim - 2))
            grad_target = Tensor._wrap(da.astype(logp.dtype, copy=False))
        return grad_input, grad_target, None, None, None, None, None

    @staticmethod
    def backward(ctx, grad_output, grad_logp=None):
        lp, a, t, weight = ctx.saved_tensors
        reduction, eps, logits = ctx.reduction, ctx.smoothing, ctx.logits
        shape = lp.shape
        n = lp.numel() // shape[1] if shape[1] else 1     # (no classes: empty gradients)
        w = None if weight is None else weight.reshape((1, -1) + (1,) * (len(shape) - 2))
        if ctx.needs_input_grad[1]:    # probabilities: the coefficients depend on them
            a = t * (1 - eps) + eps / shape[1] if eps > 0 else t
            a = a if w is None else a * w
            a = a / n if reduction == "mean" else a
        gi = gt = None
        if grad_output is not None:
            if ctx.needs_input_grad[0]:
                gi = _graph_input_grad(a, grad_output, reduction, lp if logits else None)
            if ctx.needs_input_grad[1]:
                da = lp * _expand(grad_output, reduction) * (eps - 1)
                if reduction == "mean":
                    da = da / n
                gt = da if w is None else da * w
        if grad_logp is not None and ctx.needs_input_grad[0]:
            extra = _log_softmax_grad(grad_logp, lp)
            gi = extra if gi is None else gi + extra
        return gi, gt, None, None, None, None, None


class ClassNll(Function):
    """The common case: (N, C) input, class-index target, no weight and no smoothing."""

    node_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, input, target, ignore_index, reduction, logits):
        target, = target    # (boxed: an integer target has no edge)
        x, t = input._array, target._array
        xp = xp_of(input)
        n, c = x.shape
        valid = t != ignore_index
        all_valid = bool(valid.all())
        if not all_valid:
            t = xp.where(valid, t, 0)
        if n and (int(t.min()) < 0 or int(t.max()) >= c):
            raise IndexError("Target %d is out of bounds." % int(t[(t < 0) | (t >= c)][0]))
        count = n if all_valid else int(xp.count_nonzero(valid))
        with errstate(invalid="ignore", divide="ignore"):
            logp = _log_softmax(x) if logits else x
            picked = logp[xp.arange(n), t]
            if not all_valid:
                picked = xp.where(valid, picked, 0)
            # NOTE: 0 - x, not -x: ignored targets and empty sums give +0.0, as torch.
            if reduction == "none":
                loss = 0 - picked
            else:
                loss = 0 - picked.sum()
                if reduction == "mean":
                    loss = loss / x.dtype.type(count)
        ctx.ignore_index, ctx.reduction, ctx.logits = ignore_index, reduction, logits
        ctx.count, ctx.all_valid = count, all_valid
        out = _finish(ctx, loss, logp, x, logits)
        # (what torch's nodes save, in order, as a pack hook sees them: LogSoftmax's result,
        # then NllLoss's self, target and total weight)
        total = Tensor._wrap(xp.asarray(count if reduction != "none" else 0, dtype=x.dtype))
        if logits:
            ctx.save_for_backward(out[1], out[1], target, total)
        else:
            ctx.save_for_backward(input, target, total)
        return out

    @staticmethod
    def array_backward(ctx, grad_output, grad_logp=None):
        if grad_logp is not None:
            return ClassNll.backward(ctx, grad_output, grad_logp)
        lp, target = ctx.saved_tensors[-3:-1]
        logp, t = lp._array, target._array
        xp = get_array_module(logp)
        g = grad_output._array.astype(logp.dtype, copy=False)
        n = logp.shape[0]
        with errstate(invalid="ignore", divide="ignore"):
            k = g / logp.dtype.type(ctx.count) if ctx.reduction == "mean" else g
            k = xp.broadcast_to(k, (n,))
            if not ctx.all_valid:
                valid = t != ctx.ignore_index
                t = xp.where(valid, t, 0)
                k = xp.where(valid, k, 0).astype(logp.dtype, copy=False)
            if ctx.logits:
                grad = xp.exp(logp)
                grad *= k[:, None]
            else:
                grad = xp.zeros_like(logp)
            grad[xp.arange(n), t] -= k
        return Tensor._wrap(grad), None, None, None, None

    @staticmethod
    def backward(ctx, grad_output, grad_logp=None):
        lp, target = ctx.saved_tensors[-3:-1]
        gi = None
        if grad_output is not None:
            a = _coefficients(target._array, lp.shape, lp._array.dtype, None, ctx.ignore_index,
                              ctx.reduction, 0.0)[0]
            gi = _graph_input_grad(Tensor._wrap(a), grad_output, ctx.reduction,
                                   lp if ctx.logits else None)
        if grad_logp is not None:
            extra = _log_softmax_grad(grad_logp, lp)
            gi = extra if gi is None else gi + extra
        return gi, None, None, None, None


class BinaryCrossEntropy(Function):
    """Unreduced, unweighted binary cross entropy with torch's clamps (log >= -100)."""

    node_name = "BinaryCrossEntropyBackward0"

    @staticmethod
    def forward(ctx, input, target, weight=(None,), reduction="none"):
        # (``weight`` comes boxed in a tuple: it takes no gradient, so it has no edge)
        weight, = weight
        x, t = input._array, target._array
        xp = xp_of(input)
        with errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            log_x = xp.maximum(xp.log(x), -100)
            log_1mx = xp.maximum(xp.log1p(-x), -100)
        loss = (t - 1) * log_1mx - t * log_x
        if weight is not None:
            loss = loss * weight._array
        ctx.reduction = reduction
        ctx.save_for_backward(input, target, weight)
        return _reduced(input, loss.astype(x.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, grad_output):
        input, target, weight = ctx.saved_tensors
        grad_output = _upstream(grad_output, ctx.reduction, input)
        if weight is not None:
            grad_output = grad_output * weight
        grad_input = grad_target = None
        if ctx.needs_input_grad[0]:
            # NOTE: torch divides by max(x (1 - x), 1e-12): finite at x = 0 and x = 1.
            denom = clamp((1 - input) * input, min=1e-12)
            grad_input = grad_output * (input - target) / denom
        if ctx.needs_input_grad[1]:
            # NOTE: unclamped, as torch's binary_cross_entropy_target_backward (inf at 0, 1).
            grad_target = -grad_output * logit(input)
        return grad_input, grad_target, None, None


def _weight_check(weight, n_classes, prefix=""):
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError("%sweight tensor should be defined either for all %d classes or no "
                           "classes but got weight tensor of shape: %s"
                           % (prefix, n_classes, list(weight.shape)))


def _nll_target_dtype_check(target):
    if target._array.dtype not in (np.int64, np.uint8):
        raise RuntimeError("expected target dtype to be Long or Byte, but got %s"
                           % _dt.scalar_type_name(target._array.dtype))


def _nll_check(input, target, weight):
    """torch's checks of ``nll_loss_nd`` (and the nll_loss / nll_loss2d kernels it calls), in
    its order; returns the target to use (a 1-D input takes a 0-D or a size-1 target)."""
    nd = input.dim()
    xs, ts = tuple(input.shape), tuple(target.shape)
    if nd < 1:
        raise ValueError("Expected 1 or more dimensions (got %d)" % nd)
    if nd != 1 and xs[0] != (ts[0] if ts else 0):
        raise ValueError("Expected input batch_size (%d) to match target batch_size (%d)."
                         % (xs[0], ts[0] if ts else 0))
    if nd <= 2:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        _nll_target_dtype_check(target)
        if nd == 1 and target.dim() == 1:
            if ts[0] != 1:
                raise ValueError("For 1D input, 1D target must have size 1, but got target "
                                 "size: %d" % ts[0])
            target = target.reshape(())
        if not (nd == 1 and target.dim() == 0) and xs[0] != target.shape[0]:
            raise RuntimeError("size mismatch (got input: %s, target: %s)"
                               % (list(xs), list(target.shape)))
        _weight_check(weight, xs[-1])
        kernel = "nll_loss_out_frame"
    else:
        if nd == 4 and target.dim() != 3:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                               "targets of dimension: %d" % target.dim())
        if nd != 4 and ts[1:] != xs[2:]:
            raise RuntimeError("Expected target size %s, got %s"
                               % (list(xs[:1] + xs[2:]), list(ts)))
        _nll_target_dtype_check(target)
        if weight is not None and weight.numel() != xs[1]:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
        if nd == 4 and (xs[0], xs[2], xs[3]) != ts:
            raise RuntimeError("size mismatch (got input: %s , target: %s"
                               % (list(xs), list(ts)))
        kernel = "nll_loss2d_forward_out_frame"
    not_implemented_for(input._array, kernel, "biuc")
    if weight is not None and weight._array.dtype != input._array.dtype:
        raise RuntimeError("expected scalar type %s but found %s"
                           % (_dt.scalar_type_name(input._array.dtype),
                              _dt.scalar_type_name(weight._array.dtype)))
    return target


def _log_softmax_check(input, class_dim):
    """The checks of ``log_softmax(input, class_dim)`` that cross_entropy runs first."""
    wrap_dim(class_dim, input.dim(), "log_softmax")
    if input._array.size:
        not_implemented_for(input._array, "log_softmax_lastdim_kernel_impl", "biuc")
    _complex_autograd_check(input, "_log_softmax")


def _apply(input, target, weight, ignore_index, reduction, label_smoothing, logits):
    unbatched = input.dim() == 1
    if unbatched:
        input = input.unsqueeze(0)
        target = target.unsqueeze(0)
    indices = target._array.dtype.kind in "iu"
    if indices and label_smoothing <= 0 and logits:
        # NOTE: torch's graph for class indices: NllLossBackward0 <- LogSoftmaxBackward0
        input, logits = LogSoftmax.apply(input, 1), False
    out_size = None
    if indices and not logits and input.dim() >= 3 and input.dim() != 4:
        # NOTE: torch's nll_loss_nd folds the dims past 2 into a 4-D nll_loss2d (View nodes)
        n, c = input.shape[:2]
        out_size = (n,) + tuple(input.shape[2:])
        input = input.view(n, c, 1, -1) if input.numel() else input.view(n, c, 0, 0)
        target = target.contiguous().view(n, 1, -1) if target.numel() else \
            target.view(n, 0, 0)
    if weight is None and label_smoothing <= 0 and input.dim() == 2 and indices:
        out = ClassNll.apply(input, (target,), ignore_index, reduction, logits)
    else:
        out = CrossEntropy.apply(input, (target,) if indices else target, (weight,),
                                 ignore_index, reduction, label_smoothing, logits)
    if logits:
        out = out[0]    # (the log-softmax output is the node's, for double backward)
    if out_size is not None and reduction == "none":
        return out.view(out_size)
    return out.squeeze(0) if unbatched and reduction == "none" else out


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross entropy of logits ``input`` (N, C, ...) against class indices or probabilities.

    One fused Function (stable log-softmax + weighted NLL). Matches
    ``torch.nn.functional.cross_entropy``, including ``weight``, ``ignore_index`` and
    ``label_smoothing``.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in _REDUCTIONS:
        raise ValueError("%s is not a valid value for reduction" % reduction)
    if _ac_state.autocast:
        input, target, weight = _autocast.inputs("fp32", (input, target, weight))
    class_dim = 0 if input.dim() == 1 else 1
    if tuple(input.shape) == tuple(target.shape):
        if not target.is_floating_point():
            raise RuntimeError("Expected floating point type for target with class "
                               "probabilities, got %s" % _dt.scalar_type_name(target._array.dtype))
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        if input.dim() == 0:
            raise IndexError("Dimension specified as 1 but tensor has no dimensions")
        _weight_check(weight, input.shape[class_dim], "cross_entropy: ")
        _log_softmax_check(input, class_dim)
        if label_smoothing > 1.0:
            raise RuntimeError("label_smoothing must be between 0.0 and 1.0. Got: %s"
                               % _fmt_float(label_smoothing))
        return _prob_target_loss(input, target, weight, reduction, max(label_smoothing, 0.0))
    if label_smoothing > 0:
        if label_smoothing > 1.0:
            raise RuntimeError("label_smoothing must be between 0.0 and 1.0. Got: %s"
                               % _fmt_float(label_smoothing))
        _log_softmax_check(input, class_dim)
        _nll_check(input, target, weight)
        return _smoothed_loss(input, target, weight, reduction, ignore_index, label_smoothing)
    _log_softmax_check(input, class_dim)
    target = _nll_check(input, target, weight)
    return _apply(input, target, weight, ignore_index, reduction, 0.0, True)


def _fmt_float(v):
    """A double as torch's messages print it (``2``, ``1.5``)."""
    return "%g" % v if float(v).is_integer() else repr(float(v))


def _class_weight(weight, ndim, class_dim):
    if ndim <= 1:
        return weight
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return weight.view(shape)


def _prob_target_loss(input, target, weight, reduction, label_smoothing):
    """Cross entropy against class probabilities, composed as torch's graph is."""
    class_dim = 0 if input.dim() == 1 else 1
    n_classes = input.shape[class_dim]
    logp = LogSoftmax.apply(input, class_dim)
    if label_smoothing > 0:
        target = AddScalar.apply(MulScalar.apply(target, 1 - label_smoothing),
                                 label_smoothing / n_classes)
    prod = logp * target
    if weight is not None:
        prod = prod * _class_weight(weight, logp.dim(), class_dim)
    if reduction == "none":
        return -prod.sum(class_dim)
    loss = -prod.sum()
    if reduction == "sum":
        return loss
    # NOTE: an empty input's mean is NaN (torch fills it), with an empty gradient.
    return DivScalar.apply(loss, logp.numel() // n_classes if logp.numel() else 0.0)


def _smoothed_loss(input, target, weight, reduction, ignore_index, label_smoothing):
    """Label-smoothed cross entropy at class indices, composed as torch's graph is."""
    class_dim = 0 if input.dim() == 1 else 1
    n_classes = input.shape[class_dim]
    logp = LogSoftmax.apply(input, class_dim)
    nll = _apply(logp, target, weight, ignore_index, reduction, 0.0, False)
    ignore_mask = target == ignore_index
    if weight is not None:
        smooth = -(logp * _class_weight(weight, logp.dim(), class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth.masked_fill_(ignore_mask, 0.0)
    if reduction == "mean":
        if weight is not None:
            picked = target.masked_select(~ignore_mask).flatten()
            ret = smooth.sum() / weight.gather(0, picked).sum()
        else:
            ret = smooth.sum() / (~ignore_mask).sum()
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    return MulScalar.apply(nll, 1 - label_smoothing) + \
        MulScalar.apply(ret, label_smoothing / n_classes)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log-likelihood of log-probabilities ``input`` (N, C, ...) at class indices.

    Matches ``torch.nn.functional.nll_loss``.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in _REDUCTIONS:
        raise ValueError("%s is not a valid value for reduction" % reduction)
    target = _nll_check(input, target, weight)
    return _apply(input, target, weight, ignore_index, reduction, 0.0, False)


def _legacy_reduction(size_average, reduce, reduction):
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn("size_average and reduce args will be deprecated, please use reduction='%s' "
                  "instead." % reduction, UserWarning, stacklevel=3)
    return reduction


def _lse(xp, *arrays):
    """Element-wise log(sum(exp)) of equally shaped arrays, -inf where all are -inf (NaN
    with a +inf term, as torch's kernels: only a -inf maximum is replaced by 0)."""
    stacked = xp.stack(arrays, 0)
    m = stacked.max(0)
    safe = xp.where(m == -xp.inf, 0, m)
    with errstate(divide="ignore", invalid="ignore"):
        return xp.log(xp.exp(stacked - safe).sum(0)) + safe


def _lse_step(xp, acc, new):
    """torch's running ``acc log+= new``: ``new`` itself where ``acc`` is -inf; else the
    log-sum-exp about ``std::max(acc, new)`` (a NaN ``acc`` stays the maximum)."""
    m = xp.where(acc < new, new, acc)
    with errstate(over="ignore", invalid="ignore"):
        both = xp.log(xp.exp(acc - m) + xp.exp(new - m)) + m
    return xp.where(acc == -xp.inf, new, both)


def _ctc_labels(xp, targets, in_lens, tgt_lens, blank):
    """The blank-extended labels (N, 2 L + 1) and the skip mask of each position."""
    n = len(tgt_lens)
    max_l = max(tgt_lens) if tgt_lens else 0
    ext = xp.full((n, 2 * max_l + 1), blank, dtype=xp.int64)
    t = targets
    off = 0
    for b in range(n):
        lab = t[b, :tgt_lens[b]] if t.ndim == 2 else t[off:off + tgt_lens[b]]
        off += tgt_lens[b]
        ext[b, 1:2 * tgt_lens[b]:2] = lab
    skip = xp.zeros(ext.shape, dtype=bool)
    # NOTE: torch's rule: a position may be reached from two back when its label differs
    # (so a target label equal to ``blank`` can be skipped to, as in torch's kernel)
    skip[:, 2:] = ext[:, 2:] != ext[:, :-2]
    return ext, skip


class CtcLoss(Function):
    """Per-sequence CTC negative log likelihood ``(N,)`` of ``log_probs`` (T, N, C).

    The gradient is torch's: ``exp(lp) - exp(log(sum alpha beta) + nll - lp)`` (which assumes
    ``log_probs`` come from a log_softmax), 0 past each input length.
    """

    node_name = "CtcLossBackward0"
    edge_args = (0,)        # (targets and lengths are not inputs of torch's node)

    @staticmethod
    def forward(ctx, log_probs, targets, in_lens, tgt_lens, blank, zero_infinity):
        xp = xp_of(log_probs)
        lp = log_probs._array.astype(xp.float64)
        steps, n, _ = lp.shape
        ext, skip = _ctc_labels(xp, targets._array, in_lens, tgt_lens, blank)
        width = ext.shape[1]
        rows = xp.arange(n)[:, None]
        lpe = lp[:, rows, ext]                                  # (T, N, S')
        neg = -xp.inf
        alpha = xp.full((steps, n, width), neg)
        alpha[0, :, 0] = lpe[0, :, 0]
        if width > 1:
            has = xp.asarray([tl > 0 for tl in tgt_lens])
            alpha[0, :, 1] = xp.where(has, lpe[0, :, 1], neg)
        for t in range(1, steps):
            prev = alpha[t - 1]
            s1 = xp.concatenate([xp.full((n, 1), neg), prev[:, :-1]], 1)
            s2 = xp.concatenate([xp.full((n, 2), neg), prev[:, :-2]], 1)[:, :width]
            s2 = xp.where(skip, s2, neg)
            with errstate(invalid="ignore"):
                alpha[t] = _lse(xp, prev, s1, s2) + lpe[t]
        last = xp.asarray([il - 1 for il in in_lens])
        end = xp.asarray([2 * tl for tl in tgt_lens])
        a_end = alpha[last, xp.arange(n), end]
        a_pre = alpha[last, xp.arange(n), xp.maximum(end - 1, 0)]
        # torch: an empty target ends at the blank alone; an empty input has likelihood 1
        # for an empty target, else 0
        nll = xp.where(end > 0, -_lse(xp, a_end, a_pre), -a_end)
        nll = xp.where(last < 0, xp.where(end > 0, xp.inf, -0.0), nll)
        ctx.conf = (in_lens, tgt_lens, zero_infinity)
        ctx.save_for_backward(log_probs, Tensor._wrap(alpha), Tensor._wrap(nll),
                              Tensor._wrap(ext), Tensor._wrap(skip))
        return Tensor._wrap(nll.astype(log_probs._array.dtype))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        log_probs, alpha, nll, ext, skip = ctx.saved_tensors
        in_lens, tgt_lens, zero_infinity = ctx.conf
        xp = xp_of(log_probs)
        lp = log_probs._array.astype(xp.float64)
        alpha, nll, ext, skip = alpha._array, nll._array, ext._array, skip._array
        steps, n, classes = lp.shape
        width = ext.shape[1]
        rows = xp.arange(n)[:, None]
        lpe = lp[:, rows, ext]
        neg = -xp.inf
        in_arr = xp.asarray(in_lens)
        end = xp.asarray([2 * tl for tl in tgt_lens])
        pos = xp.arange(width)[None, :]
        init = (pos == end[:, None]) | ((pos == end[:, None] - 1) & (end[:, None] > 0))
        beta = xp.full((steps, n, width), neg)
        # skip into s + 2 from s: allowed where position s + 2 may skip back to s
        skip_next = xp.concatenate([skip[:, 2:], xp.zeros((n, 2), dtype=bool)], 1)[:, :width]
        nxt = xp.full((n, width), neg)
        for t in range(steps - 1, -1, -1):
            s1 = xp.concatenate([nxt[:, 1:], xp.full((n, 1), neg)], 1)
            s2 = xp.concatenate([nxt[:, 2:], xp.full((n, 2), neg)], 1)[:, :width]
            s2 = xp.where(skip_next, s2, neg)
            with errstate(invalid="ignore"):
                rec = _lse(xp, nxt, s1, s2) + lpe[t]
            at_end = (t == in_arr - 1)[:, None]
            cur = xp.where(at_end, xp.where(init, lpe[t], neg), rec)
            cur = xp.where((t < in_arr)[:, None] & (pos <= end[:, None]), cur, neg)
            beta[t] = cur
            nxt = cur
        with errstate(invalid="ignore"):
            ab = alpha + beta                                     # (T, N, S')
        lcab = xp.full((steps, n, classes), neg)
        cols = xp.arange(n)
        # frames before each last one: torch's kernel adds in each position s <= 2 L from
        # the top, one pairwise log-sum-exp at a time (a first term is taken as it is)
        inner = xp.arange(steps)[:, None] < (in_arr - 1)[None, :]
        for s in range(width - 1, -1, -1):
            idx = ext[:, s]
            cur = lcab[:, cols, idx]
            new = ab[:, :, s]
            use = inner & (s <= end)[None, :]
            lcab[:, cols, idx] = xp.where(use, _lse_step(xp, cur, new), cur)
        for b in range(n):
            # torch's last frame: the blank's end term, then the last label's (replacing the
            # blank's when that label is the blank); every other class stays -inf
            tl, il = tgt_lens[b], in_lens[b]
            if il > 0:
                lcab[il - 1, b, ext[b, 0]] = ab[il - 1, b, 2 * tl]
                if tl > 0:
                    lcab[il - 1, b, ext[b, 2 * tl - 1]] = ab[il - 1, b, 2 * tl - 1]
        with errstate(over="ignore", invalid="ignore"):
            grad = xp.exp(lp) - xp.exp(lcab + nll[None, :, None] - lp)
            grad = grad * grad_output._array.astype(xp.float64)[None, :, None]
        valid = (xp.arange(steps)[:, None] < in_arr[None, :])[:, :, None]
        grad = xp.where(valid, grad, 0.0)
        if zero_infinity:
            grad = xp.where((nll == xp.inf)[None, :, None], 0.0, grad)
        return (Tensor._wrap(grad.astype(log_probs._array.dtype)), None, None, None, None,
                None)


def _lengths(v):
    if isinstance(v, Tensor):
        return [int(x) for x in v.reshape(-1).tolist()]
    return [int(x) for x in v]


def _is_int_like(x):
    """Whether torch's argument parser takes ``x`` as an int (a Python int or 0-d int tensor)."""
    if isinstance(x, Tensor):
        return x.dim() == 0 and _dt.kind(x._array.dtype) in "iu"
    return isinstance(x, int) and not isinstance(x, bool)


def _arg_type(v):
    """A value's type as torch's argument parser prints it (``list of [int, int]`` ...)."""
    if isinstance(v, Tensor):
        return "Tensor"
    if isinstance(v, list):
        return "list of [%s]" % ", ".join(_arg_type(x) for x in v)
    if isinstance(v, tuple):
        return "tuple of (%s)" % ", ".join(_arg_type(x) for x in v)
    return type(v).__name__


def _ctc_signature_check(input_lengths, target_lengths):
    """torch's parser for ``torch.ctc_loss``: both lengths Tensors, or both sequences of ints."""
    pair = (input_lengths, target_lengths)
    if all(isinstance(v, Tensor) for v in pair):
        return
    if all(isinstance(v, (list, tuple)) and (not v or _is_int_like(v[0])) for v in pair):
        for name, v in zip(("input_lengths", "target_lengths"), pair):
            for pos, x in enumerate(v):
                if not _is_int_like(x):
                    raise TypeError("ctc_loss(): argument '%s' failed to unpack the object at pos "
                                    "%d with error \"type must be tuple of ints,but got %s\""
                                    % (name, pos + 1, type(x).__name__))
        return
    got = ", ".join(type(v).__name__ if not isinstance(v, Tensor) else "Tensor" for v in pair)
    ints = ", ".join("!%s!" % _arg_type(v) for v in pair)
    tens = ", ".join("Tensor" if isinstance(v, Tensor) else "!%s!" % _arg_type(v) for v in pair)
    tail = ("int blank = 0, int reduction = at::Reduction::Mean, bool zero_infinity = False)\n"
            "      didn't match because some of the arguments have invalid types: (Tensor, "
            "Tensor, %s, !int!, !int!, !bool!)\n")
    raise TypeError(
        "ctc_loss() received an invalid combination of arguments - got (Tensor, Tensor, %s, int, "
        "int, bool), but expected one of:\n * (Tensor log_probs, Tensor targets, tuple of ints "
        "input_lengths, tuple of ints target_lengths, " % got + tail % ints
        + " * (Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, "
        + tail % tens)


def _ctc_check(log_probs, targets, in_lens, tgt_lens, blank):
    """The argument checks of torch's ``ctc_loss_allocate_outputs``, in its order."""
    where = " (while checking arguments for ctc_loss_allocate_outputs)"
    if log_probs.dim() != 3:
        raise RuntimeError("Expected 3-dimensional tensor, but got %d-dimensional tensor for "
                           "argument #1 'log_probs'%s" % (log_probs.dim(), where))
    if targets.dim() not in (1, 2):
        raise RuntimeError("Expected 1 to 2 dimensions, but got %d-dimensional tensor for "
                           "argument #2 'targets'%s" % (targets.dim(), where))
    steps, n, classes = log_probs.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    if len(in_lens) != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tgt_lens) != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    for v in tgt_lens:
        if v < 0:
            raise RuntimeError("Expected target_lengths to have value at least 0, but got value "
                               "%d%s" % (v, where))
    size_msg = "Expected tensor to have size %s%d at dimension %d, but got size %d for " \
        "argument #2 'targets'" + where
    if targets.dim() == 1:
        if targets.shape[0] != sum(tgt_lens):
            raise RuntimeError(size_msg % ("", sum(tgt_lens), 0, targets.shape[0]))
    else:
        if targets.shape[0] != n:
            raise RuntimeError(size_msg % ("", n, 0, targets.shape[0]))
        longest = max(tgt_lens, default=0)
        if targets.shape[1] < longest:
            raise RuntimeError(size_msg % ("at least ", longest, 1, targets.shape[1]))
    for v in in_lens:
        if v < 0:
            raise RuntimeError("Expected input_lengths to have value at least 0, but got value "
                               "%d%s" % (v, where))
        if v > steps:
            raise RuntimeError("Expected input_lengths to have value at most %d, but got value "
                               "%d%s" % (steps, v, where))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist temporal classification loss. Matches ``torch.nn.functional.ctc_loss``."""
    if reduction not in _REDUCTIONS:
        raise ValueError("%s is not a valid value for reduction" % reduction)
    _ctc_signature_check(input_lengths, target_lengths)
    if isinstance(input_lengths, Tensor):
        for name, v in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
            if _dt.kind(v._array.dtype) not in "iu":
                raise RuntimeError("%s must be integral" % name)
    # torch: anything but 3-D is one sequence, given a batch dim of 1
    unbatched = log_probs.dim() != 3
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
    if log_probs._array.dtype not in (np.float32, np.float64):
        not_implemented_for(log_probs._array, "ctc_loss_cpu", log_probs._array.dtype.kind)
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    if targets._array.dtype != np.int64:
        targets = Tensor._wrap(targets._array.astype(np.int64))
    in_lens, tgt_lens = _lengths(input_lengths), _lengths(target_lengths)
    _ctc_check(log_probs, targets, in_lens, tgt_lens, blank)
    loss = CtcLoss.apply(log_probs, targets, in_lens, tgt_lens, blank, zero_infinity)
    if zero_infinity:
        inf = Tensor._wrap(loss._array == float("inf"))
        loss = where(inf, Tensor._wrap(xp_of(loss).zeros((), dtype=loss._array.dtype)), loss)
    if unbatched:
        loss = loss.squeeze(0)
    if reduction == "mean":
        lens = Tensor._wrap(xp_of(log_probs).asarray(tgt_lens, dtype=log_probs._array.dtype))
        lens = clamp(lens, min=1)
        return (loss / (lens.squeeze(0) if unbatched else lens)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss


# Element-wise losses with torch's own node (MseLossBackward0, ...): the reduction happens
# inside the node, as in torch.

def _reduced(input, loss, reduction):
    """The loss array reduced as ``reduction`` says, wrapped, in the input's dtype."""
    return _reduced_as(loss, reduction, input._array.dtype, xp_of(input))


def _reduced_as(loss, reduction, dtype, xp):
    """The loss array reduced as ``reduction`` says, wrapped, in ``dtype``."""
    if reduction == "mean":
        # the mean of nothing is NaN, without NumPy's "Mean of empty slice" warning
        loss = loss.mean() if loss.size else xp.full((), xp.nan, dtype=loss.dtype)
    elif reduction == "sum":
        loss = loss.sum()
    return Tensor._wrap(xp.asarray(loss, dtype=dtype))


def _upstream(grad_output, reduction, input):
    """The upstream gradient of each element of the unreduced loss."""
    if reduction == "none":
        return grad_output
    if reduction == "mean":
        grad_output = grad_output / max(input.numel(), 1)
    return grad_output.expand(input.shape)


def _as(t, np_dtype):
    """``t`` in ``np_dtype`` (a differentiable cast only when the dtype differs)."""
    return t if t._array.dtype == np_dtype else t.to(_dt.to_dtype(np_dtype))


def _cast_check(src, dst):
    """torch's error for writing a ``src``-dtype result into a ``dst``-dtype output."""
    if _KIND_RANK[src.kind] > _KIND_RANK[dst.kind]:
        raise RuntimeError("result type %s can't be cast to the desired output type %s"
                           % (_dt.scalar_type_name(src), _dt.scalar_type_name(dst)))




def _grads_as_inputs(ctx, grad_input, grad_target):
    """The gradients cast to their inputs' dtypes."""
    gi = gt = None
    if ctx.needs_input_grad[0]:
        gi = _as(grad_input, ctx._input_meta(0)[1])
    if ctx.needs_input_grad[1]:
        gt = _as(grad_target, ctx._input_meta(1)[1])
    return gi, gt


class MseLoss(Function):
    """``(input - target) ** 2``, reduced, computed in ``common`` (the promoted dtype)."""

    node_name = "MseLossBackward0"

    @staticmethod
    def forward(ctx, input, target, reduction, common):
        d = input._array.astype(common, copy=False) - target._array.astype(common, copy=False)
        ctx.reduction, ctx.common = reduction, common
        ctx.save_for_backward(input, target)
        return _reduced_as(d * d, reduction, common, xp_of(input))

    @staticmethod
    def backward(ctx, grad_output):
        input, target = ctx.saved_tensors
        d = _as(input, ctx.common) - _as(target, ctx.common)
        grad = _upstream(grad_output, ctx.reduction, d) * d * 2
        return _grads_as_inputs(ctx, grad, -grad) + (None, None)


class SmoothL1Loss(Function):
    """``0.5 d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``d = input -
    target``); ``delta * (|d| - 0.5 delta)`` above ``delta`` for the Huber variant, whose
    output keeps the input's dtype."""

    node_name = "SmoothL1LossBackward0"

    @staticmethod
    def forward(ctx, input, target, reduction, beta, huber, common):
        if huber and not beta > 0:
            raise RuntimeError("huber_loss does not support non-positive values for delta.")
        if not huber and beta < 0:
            raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
        xp = xp_of(input)
        d = input._array.astype(common, copy=False) - target._array.astype(common, copy=False)
        ad = xp.abs(d)
        with errstate(invalid="ignore"):
            if huber:
                ctx.set_node_name("HuberLossBackward0")
                loss = xp.where(ad < beta, 0.5 * d * d, beta * (ad - 0.5 * beta))
            else:
                loss = xp.where(ad < beta, 0.5 * d * d / beta, ad - 0.5 * beta)
        ctx.reduction, ctx.beta, ctx.huber, ctx.common = reduction, beta, huber, common
        ctx.save_for_backward(input, target)
        out_dtype = input._array.dtype if huber else common
        return _reduced_as(loss.astype(common, copy=False), reduction, out_dtype, xp)

    @staticmethod
    def backward(ctx, grad_output):
        input, target = ctx.saved_tensors
        if ctx.huber and input._array.dtype != target._array.dtype:
            raise RuntimeError("Found dtype %s but expected %s"
                               % (_dt.scalar_type_name(target._array.dtype),
                                  _dt.scalar_type_name(input._array.dtype)))
        d = _as(input, ctx.common) - _as(target, ctx.common)
        g = _upstream(grad_output, ctx.reduction, d)
        beta = ctx.beta
        # NOTE: torch's kernel: -1 below -beta, 1 above beta, the quadratic slope otherwise (so
        # a NaN difference gives a NaN gradient); at |d| = beta both branches have the same
        # slope and the curvature is 0 there, as torch's double backward.
        outer = beta if ctx.huber else 1.0
        inner = d if ctx.huber else d / beta
        slope = where(d.abs() >= beta, d.sign() * outer, inner)
        grad = g * slope
        return _grads_as_inputs(ctx, grad, -grad) + (None, None, None, None)


class SoftMarginLoss(Function):
    """``log(1 + exp(-target * input))``, reduced. ``target_arr`` is a raw array: torch gives
    the target no edge."""

    node_name = "SoftMarginLossBackward0"

    @staticmethod
    def forward(ctx, input, target_arr, reduction):
        x = input._array
        with errstate(over="ignore"):
            loss = xp_of(input).log1p(xp_of(input).exp(-x * target_arr))
        ctx.reduction = reduction
        ctx.save_for_backward(input, Tensor._wrap(target_arr))
        return _reduced(input, loss.astype(x.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, grad_output):
        input, target = ctx.saved_tensors
        if target._array.dtype == bool:
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                               "If you are trying to invert a mask, use the `~` or "
                               "`logical_not()` operator instead.")
        g = _upstream(grad_output, ctx.reduction, input)
        # NOTE: torch's formula -t * z / (1 + z), z = exp(-t * x) (NaN where z overflows; -t
        # wraps for an unsigned target), not the stable sigmoid form
        z = (-target * input).exp()
        return _as(-(g * target * z) / (z + 1), input._array.dtype), None, None


class BinaryCrossEntropyWithLogits(Function):
    """``(1 - t) x + ((pw - 1) t + 1) softplus(-x)``, times ``weight``, reduced. ``extra`` is
    ``(weight, pos_weight)``: a tuple, as neither takes a gradient (no edge, as torch)."""

    node_name = "BinaryCrossEntropyWithLogitsBackward0"

    @staticmethod
    def forward(ctx, input, target, extra, reduction):
        weight, pos_weight = extra
        x, t = input._array, target._array
        xp = xp_of(input)
        # NOTE: torch's log_sigmoid(input) keeps input's dtype, but computes a half/bfloat16
        # input in float32 and rounds once
        xc = x.astype(np.float32) if x.dtype.itemsize == 2 and x.dtype.kind in "fV" else x
        with errstate(over="ignore", under="ignore"):
            sp = xp.log1p(xp.exp(-xp.abs(xc))) + xp.maximum(-xc, 0)  # softplus(-x), stable
        sp = sp.astype(x.dtype, copy=False)
        lw = 1 if pos_weight is None else (pos_weight._array - 1) * t + 1
        loss = (1 - t) * x + lw * sp
        if weight is not None:
            loss = loss * weight._array
        ctx.reduction = reduction
        ctx.save_for_backward(input, target, weight, pos_weight)
        # (torch's kernel writes into (1 - target): the loss has the target's dtype)
        return _reduced_as(loss.astype(t.dtype, copy=False), reduction, t.dtype, xp)

    @staticmethod
    def backward(ctx, grad_output):
        input, target, weight, pos_weight = ctx.saved_tensors
        # NOTE: torch's formulas step by step, each in-place step keeping its tensor's dtype
        # (the rounding of a half/bfloat16 input with a wider target matches)
        g = grad_output
        gi = gt = None
        if ctx.needs_input_grad[0]:
            if pos_weight is None:
                gi = sigmoid(input) - target
            else:
                pt = pos_weight * target
                gi = pt + 1 - target
                gi = _as(gi * sigmoid(input), gi._array.dtype) - pt
            gi = _bce_logits_scale(ctx, gi, g, weight, input)
        if ctx.needs_input_grad[1]:
            if pos_weight is None:
                gt = -input * g
            else:
                dt = input._array.dtype
                gt = -Softplus.apply(input, 1.0, math.inf) - _as(
                    -Softplus.apply(-input, 1.0, math.inf) * pos_weight, dt)
                gt = _as(gt * g, dt)
            gt = _bce_logits_scale(ctx, gt, None, weight, input)
        return _grads_as_inputs(ctx, gi, gt) + (None, None)


def _bce_logits_scale(ctx, grad, g, weight, input):
    """``grad.mul_(g).mul_(weight).div_(numel)`` as torch (each in ``grad``'s dtype)."""
    dt = grad._array.dtype
    if g is not None:
        grad = _as(grad * g, dt)
    if weight is not None:
        grad = _as(grad * weight, dt)
    if ctx.reduction == "mean":
        grad = grad / max(input.numel(), 1)
    return grad


class BroadcastNoBackward(Function):
    """``input`` broadcast to ``shape``, for a kernel that reads it broadcast but whose torch
    backward fails (``message``) writing the gradient in place into the input's shape."""

    node_name = "BinaryCrossEntropyWithLogitsBackward0"

    @staticmethod
    def forward(ctx, input, shape, message):
        ctx.message = message
        return Tensor._wrap(xp_of(input).broadcast_to(input._array, shape).copy())

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError(ctx.message)


class NormDim(VectorNorm):
    """torch's ``at::norm(x, p, dim, keepdim)``, the norm its C++ distances call
    (``pairwise_distance``): the vector norm with node ``NormBackward1``."""

    node_name = "NormBackward1"


def pairwise_norm(x, p, dim, keepdim=False):
    """The ``p``-norm of ``x`` over ``dim`` with torch's ``NormBackward1`` node."""
    if x._array.dtype.kind not in "fcV":
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           "Got %s instead." % _dt.scalar_type_name(x._array.dtype))
    # (a 0-d tensor's dim 0 / -1 is the tensor itself: nothing to reduce)
    dims = (wrap_dim(dim, x.dim(), "norm"),) if x.dim() else ()
    p = float(p)
    if p < 0 or p == math.inf:
        for d in dims:
            if x.shape[d] == 0:
                raise RuntimeError("linalg.vector_norm cannot compute the %g norm on the "
                                   "dimension %dbecause this dimension is empty and the "
                                   "operation does not have an identity" % (p, d))
    return NormDim.apply(x, p, dims, keepdim, None)


class _NoDerivative(Function):
    """A gradient computed by a node whose own backward torch does not implement: the result
    has a ``NotImplemented`` node that raises when differentiated (``grad`` its value)."""

    node_name = "NotImplemented"

    @staticmethod
    def forward(ctx, grad, name, *inputs):
        ctx.aten = name
        return Tensor._wrap(grad._array)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("derivative for aten::%s is not implemented" % ctx.aten)


def _complex_autograd_check(input, name):
    if input._array.dtype.kind == "c" and input.requires_grad and is_grad_enabled():
        raise RuntimeError("%s does not support automatic differentiation for outputs with "
                           "complex dtype." % name)


def _margin_output(x, per_frame, reduction, frame_shape):
    if reduction == "none":
        return per_frame.reshape(frame_shape)
    if not per_frame.size:
        # NOTE: torch returns its uninitialised output for an empty mean/sum; ember gives 0.
        return per_frame.sum()
    return per_frame.mean() if reduction == "mean" else per_frame.sum()


class MultiMarginLoss(Function):
    """``sum_{i != y} max(0, margin - x_y + x_i)^p * w_y / C`` per frame, reduced."""

    node_name = "MultiMarginLossBackward0"
    edge_args = (0,)

    @staticmethod
    def forward(ctx, input, target, p, margin, weight, reduction):
        x = input._array
        xp = xp_of(input)
        c = x.shape[-1] if x.ndim else 1
        x2 = x.reshape(-1, c)
        t = target._array.reshape(-1).astype("int64", copy=False)
        n = x2.shape[0]
        xt = x2[xp.arange(n), t][:, None]
        z = margin - xt + x2
        keep = (z > 0) & (xp.arange(c)[None, :] != t[:, None])
        h = z if p == 1 else z * z
        if weight is not None:
            h = h * weight._array[t][:, None]
        per = xp.where(keep, h, 0).sum(1) / x.dtype.type(c)
        frame_shape = (n,) if target.dim() > 0 else ()
        out = _margin_output(x, per, reduction, frame_shape)
        ctx.conf = (p, margin, reduction, c, n)
        ctx.save_for_backward(input, target, weight)
        return Tensor._wrap(xp.asarray(out, dtype=x.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        input, target, weight = ctx.saved_tensors
        p, margin, reduction, c, n = ctx.conf
        x = input._array
        xp = xp_of(input)
        x2 = x.reshape(-1, c)
        t = target._array.reshape(-1).astype("int64", copy=False)
        z = margin - x2[xp.arange(n), t][:, None] + x2
        keep = (z > 0) & (xp.arange(c)[None, :] != t[:, None])
        g = grad_output._array.astype(x.dtype).reshape(-1)
        scale = x.dtype.type(1.0 / (max(n, 1) * c) if reduction == "mean" else 1.0 / c)
        g = (g * scale)[:, None] if reduction == "none" else g * scale
        gh = xp.where(keep, 1.0 if p == 1 else 2 * z, 0) * g
        if weight is not None:
            gh = gh * weight._array[t][:, None]
        grad = gh.astype(x.dtype, copy=True)
        grad[xp.arange(n), t] -= gh.sum(1)
        return (_NoDerivative.apply(Tensor._wrap(grad.reshape(x.shape)),
                                    "multi_margin_loss_backward", grad_output, input),
                None, None, None, None, None)


class MultilabelMarginLoss(Function):
    """``sum_{j in targets} sum_{i not a target} max(0, 1 - (x_j - x_i)) / C`` per frame
    (the targets of a frame end at its first negative entry), reduced."""

    node_name = "MultilabelMarginLossBackward0"
    edge_args = (0,)

    @staticmethod
    def _terms(x, t):
        """The active hinge mask (N, J, C) and the target one-hots (N, J, C)."""
        xp = get_array_module(x)
        c = x.shape[1]
        valid = xp.cumprod(t >= 0, axis=1).astype(bool)
        safe = xp.where(valid, t, 0)
        onehot = (safe[:, :, None] == xp.arange(c)[None, None, :]) & valid[:, :, None]
        is_target = onehot.any(1)
        xt = xp.take_along_axis(x, safe, 1)
        z = 1 - xt[:, :, None] + x[:, None, :]
        active = (z > 0) & valid[:, :, None] & ~is_target[:, None, :]
        return z, active, onehot

    @staticmethod
    def forward(ctx, input, target, reduction):
        x = input._array
        if x.dtype not in (np.float32, np.float64):
            not_implemented_for(x, "multilabel_margin_loss_forward_out_frame", x.dtype.kind)
        xp = xp_of(input)
        c = x.shape[-1] if x.ndim else 1
        x2, t2 = x.reshape(-1, c), target._array.reshape(-1, c).astype("int64", copy=False)
        z, active, _ = MultilabelMarginLoss._terms(x2, t2)
        per = xp.where(active, z, 0).sum((1, 2)) / x.dtype.type(c)
        frame_shape = (x2.shape[0],) if target.dim() > 1 else ()
        out = _margin_output(x, per, reduction, frame_shape)
        ctx.conf = (reduction, c)
        ctx.save_for_backward(input, target)
        return Tensor._wrap(xp.asarray(out, dtype=x.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        input, target = ctx.saved_tensors
        reduction, c = ctx.conf
        x = input._array
        xp = xp_of(input)
        x2, t2 = x.reshape(-1, c), target._array.reshape(-1, c).astype("int64", copy=False)
        n = x2.shape[0]
        _, active, onehot = MultilabelMarginLoss._terms(x2, t2)
        g = grad_output._array.astype(x.dtype).reshape(-1)
        g = g * x.dtype.type(1.0 / (max(n, 1) * c) if reduction == "mean" else 1.0 / c)
        g = g[:, None] if reduction == "none" else g
        act = active.astype(x.dtype)
        grad = act.sum(1) - xp.einsum("nj,njc->nc", act.sum(2), onehot.astype(x.dtype))
        grad = (grad * g).astype(x.dtype, copy=False)
        return (_NoDerivative.apply(Tensor._wrap(grad.reshape(x.shape)),
                                    "multilabel_margin_loss_backward", grad_output, input),
                None, None)


def _linear(input, weight, bias):
    """``F.linear`` with torch's graph (Addmm for a 2-D or contiguous input with a bias)."""
    x = input._array
    if bias is not None and x.dtype == weight._array.dtype == bias._array.dtype and \
            (x.ndim == 2 or x.flags.c_contiguous) and x.shape[-1] == weight.shape[1]:
        if x.ndim == 2:
            return addmm(bias, input, _t(weight))
        out = addmm(bias, input.reshape(-1, x.shape[-1]), _t(weight))
        return out.view(*x.shape[:-1], weight.shape[0])
    out = matmul(input, _t(weight))
    return out if bias is None else out + bias


_CHUNKED = "GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_%sdefaultBackward"


class LinearCrossEntropyChunked(Function):
    """torch's chunked ``linear_cross_entropy`` op (``options`` given): logits, loss and the
    gradients in one forward; the backward scales the precomputed gradients (so it runs
    once, unless ``allow_retain_graph``, and has no double backward, as torch's).

    Edges: input, linear weight, linear bias (a 0-element placeholder when absent); the
    target and class weights come boxed (no edge).
    """

    node_name = _CHUNKED % ""

    @staticmethod
    def forward(ctx, input, linear_weight, linear_bias, boxed, reduction, ignore_index,
                retain):
        target, weight = boxed
        xp = xp_of(input)
        x, w = input._array, linear_weight._array
        acc = np.float32 if x.dtype in (np.float16,) else x.dtype
        has_bias = linear_bias.numel() > 0
        logits = x.astype(acc) @ w.astype(acc).T
        if has_bias:
            logits = logits + linear_bias._array.astype(acc)
        n, c = logits.shape
        t = target._array
        valid = t != ignore_index
        safe = xp.where(valid, t, 0)
        bad = (safe < 0) | (safe >= c)
        if bool(bad.any()):
            raise RuntimeError("index %d is out of bounds for dimension 1 with size %d"
                               % (int(safe[bad][0]), c))
        with errstate(invalid="ignore", divide="ignore"):
            logp = _log_softmax(logits)
            wt = valid.astype(acc) if weight is None else \
                weight._array.astype(acc)[safe] * valid
            nll = xp.where(valid, -logp[xp.arange(n), safe] * wt, 0)
            grad = xp.exp(logp)
            grad[xp.arange(n), safe] -= 1
            grad *= wt[:, None]
            if reduction == "none":
                ctx.set_node_name(_CHUNKED % "no_reduction_")
                loss = nll
            elif reduction == "sum":
                loss = nll.sum()
            else:
                total = wt.sum()
                loss = nll.sum() / total
                grad /= total
        ctx.conf = (reduction, has_bias, retain)
        ctx.save_for_backward(input, linear_weight, Tensor._wrap(grad))
        return Tensor._wrap(xp.asarray(loss, dtype=x.dtype))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        reduction, has_bias, retain = ctx.conf
        if ctx.conf[2] is None:
            raise RuntimeError("linear_cross_entropy chunked backward called twice; "
                               "retain_graph=True / double backward are not supported.")
        input, linear_weight, grad = ctx.saved_tensors
        if not retain and reduction != "none":
            ctx.conf = (reduction, has_bias, None)
        x, w, d = input._array, linear_weight._array, grad._array
        g = grad_output._array.astype(d.dtype)
        d = d * (g[:, None] if reduction == "none" else g)
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = Tensor._wrap((d @ w.astype(d.dtype)).astype(x.dtype, copy=False))
        if ctx.needs_input_grad[1]:
            gw = Tensor._wrap((d.T @ x.astype(d.dtype)).astype(w.dtype, copy=False))
        if has_bias and ctx.needs_input_grad[2]:
            gb = Tensor._wrap(d.sum(0).astype(w.dtype, copy=False))
        return gx, gw, gb, None, None, None, None


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """Cross entropy of ``linear(input, linear_weight, linear_bias)`` against ``target``.

    Equals ``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``; a
    ``linear_weight`` of shape ``(C, d_1, ..., d_K, in_features)`` gives logits
    ``(N, C, d_1, ..., d_K)`` (K-dimensional loss). ``ignore_index=None`` means -100.
    ``options`` (``nn.LinearCrossEntropyOptions``) selects torch's chunked op, which ember
    computes in one node for the whole batch (same values and gradients). Matches
    ``torch.nn.functional.linear_cross_entropy``.
    """
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError("expected input with dimensionality 1 or 2, got %d" % input.dim())
    if linear_weight.dim() < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got %d"
                           % linear_weight.dim())
    batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions "
                           "(in_features), got %d and %d, respectively"
                           % (in_features, linear_weight.shape[-1]))
    n_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (n_classes,) + out_features:
        raise RuntimeError("expected linear_bias shape %s, got %s"
                           % ((n_classes,) + out_features, tuple(linear_bias.shape)))
    if out_features and not batches:
        raise RuntimeError("K-dimensional loss defined by linear_weight shape %s requires "
                           "batched input, (N, %d), got unbatched input with shape %s"
                           % (tuple(linear_weight.shape), in_features, tuple(input.shape)))
    logits_shape = batches + (n_classes,) + out_features
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains "
                           "probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    chunked = reduction in _REDUCTIONS and label_smoothing == 0.0 and \
        target._array.dtype == np.int64 and not out_features
    if options is not None and not chunked:
        warnings.warn("linear_cross_entropy: ``options`` ignored; chunked path needs reduction "
                      "in {'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, "
                      "out_features == (). Got reduction=%r, label_smoothing=%s, target.dtype="
                      "%s, out_features=%s, tracing=False, linear_bias.shape=%s."
                      % (reduction, label_smoothing, target.dtype, out_features,
                         None if linear_bias is None else tuple(linear_bias.shape)),
                      stacklevel=2)
    if options is not None and chunked and _chunkable(input, linear_weight, linear_bias,
                                                      target, weight):
        unbatched = input.dim() == 1
        x, tg = (input.unsqueeze(0), target.unsqueeze(0)) if unbatched else (input, target)
        bias = linear_bias if linear_bias is not None else \
            Tensor._wrap(xp_of(input).empty(0, dtype=input._array.dtype))
        out = LinearCrossEntropyChunked.apply(x, linear_weight, bias, (tg, weight), reduction,
                                              ignore_index, bool(options.allow_retain_graph))
        return out.squeeze(0) if unbatched else out
    if out_features:
        rows = math.prod(out_features, start=n_classes)
        linear_weight = linear_weight.reshape(rows, in_features)
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = _linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)


def _chunkable(input, linear_weight, linear_bias, target, weight):
    """Whether the chunked node applies (else the reference path, with its checks)."""
    dt = input._array.dtype
    if dt.kind != "f" or linear_weight._array.dtype != dt or \
            (linear_bias is not None and linear_bias._array.dtype != dt):
        return False
    if weight is not None and (weight._array.dtype != dt or tuple(weight.shape) !=
                               (linear_weight.shape[0],)):
        return False
    return tuple(target.shape) == tuple(input.shape[:-1])


class Pdist(Function):
    """The ``p``-norm distances of the row pairs ``i < j`` of a 2-D input (torch's
    ``_pdist_forward``: one ``PdistBackward0`` node)."""

    node_name = "PdistBackward0"

    @staticmethod
    def forward(ctx, input, p):
        arr = input._array
        xp = xp_of(input)
        n, m = arr.shape
        if n * (n - 1) // 2 and m:
            not_implemented_for(arr, "pdist", "biucV" if arr.dtype != np.float16 else "")
            if arr.dtype == np.float16:
                not_implemented_for(arr, "pdist", "f")
        i, j = np.triu_indices(n, 1)                     # host: index arithmetic
        i, j = xp.asarray(i), xp.asarray(j)
        d = xp.abs(arr[i] - arr[j])
        with errstate(over="ignore", invalid="ignore", divide="ignore"):
            if m == 0:
                out = xp.zeros(len(i), dtype=arr.dtype)
            elif p == 0:     # (torch's min(ceil(|d|), 1): a NaN difference gives NaN)
                out = xp.minimum(xp.ceil(d), 1).sum(axis=1).astype(arr.dtype)
            elif p == 1:
                out = d.sum(axis=1)
            elif p == 2:
                out = xp.sqrt((d * d).sum(axis=1))
            elif math.isinf(p):
                out = d.max(axis=1)
            else:
                out = (d ** p).sum(axis=1) ** (1.0 / p)
        ctx.p = p
        ctx.save_for_backward(input, Tensor._wrap(out))
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        input, out = ctx.saved_tensors
        arr, dist, g = input._array, out._array, grad_output._array
        not_implemented_for(arr, "pdist_backward", "V" if arr.dtype != np.float16 else "f")
        xp = xp_of(input)
        p, n = ctx.p, arr.shape[0]
        i, j = np.triu_indices(n, 1)                     # host: index arithmetic
        i, j = xp.asarray(i), xp.asarray(j)
        diff = arr[i] - arr[j]
        dist, g = dist[:, None], g[:, None]
        with errstate(over="ignore", invalid="ignore", divide="ignore"):
            if p == 0 or arr.shape[1] == 0:
                pair = xp.zeros_like(diff)
            elif p == 1:
                pair = g * xp.sign(diff)
            elif p == 2:
                pair = xp.where(dist == 0, 0, g * diff / dist)
            elif math.isinf(p):
                pair = g * xp.sign(diff) * (xp.abs(diff) == dist)
            else:
                pair = xp.where((dist == 0) | ((diff == 0) & (p < 1)), 0,
                                xp.sign(diff) * xp.abs(diff) ** (p - 1) * g / dist ** (p - 1))
        grad = xp.zeros_like(arr)
        backend = get_array_module(arr)
        backend.add.at(grad, i, pair)                    # (row i: +, row j: -)
        backend.add.at(grad, j, -pair)
        return _PdistBackward.apply(Tensor._wrap(grad.astype(arr.dtype)), grad_output,
                                    input), None


class _PdistBackward(Function):
    """The gradient of ``pdist``: torch has no derivative for it."""

    node_name = "PdistBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, grad_output, input):
        return Tensor._wrap(grad._array)

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError("the derivative for '_pdist_backward' is not implemented.")
