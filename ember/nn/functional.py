"""nn.functional: the maths behind the layers (modules are thin wrappers around these)."""
import math

import numpy as np

from .. import ops
from ..ops.conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d
from ..ops.loss import cross_entropy, nll_loss, _legacy_reduction
from ..ops.normalization import batch_norm, group_norm, layer_norm
from ..ops.pooling import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d,
                           adaptive_max_pool2d, avg_pool1d, avg_pool2d, max_pool1d, max_pool2d)
from ..ops._inplace import inplace as _inplace
from ..ops._util import backend_of, xp_of
from ..ops.padding import Pad as _Pad
from ..ops.sparse import Embedding as _Embedding
from ..tensor import Tensor
from ..ops.activation import Gelu, Hardswish, Hardtanh, LeakyRelu, Softplus
from ..ops.loss import BinaryCrossEntropy

__all__ = [
    "linear", "bilinear", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d",
    "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "batch_norm", "layer_norm", "group_norm",
    "relu", "relu_", "relu6", "leaky_relu", "prelu", "elu", "selu", "celu", "gelu", "silu",
    "mish", "softplus", "softsign", "sigmoid", "logsigmoid", "tanh", "hardtanh", "hardsigmoid",
    "hardswish", "softmax", "log_softmax", "softmin", "threshold",
    "dropout", "dropout2d", "embedding", "one_hot", "pad", "interpolate",
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "cosine_embedding_loss", "margin_ranking_loss", "triplet_margin_loss", "cosine_similarity",
    "pairwise_distance", "normalize", "scaled_dot_product_attention",
]


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` (one fused GEMM, ``addmm``, for 2-D input)."""
    x = input._array
    if x.ndim >= 2 and bias is not None and bias.dim() == 1 and weight.dim() == 2 and \
            x.dtype == weight._array.dtype == bias._array.dtype and \
            (x.ndim == 2 or x.flags.c_contiguous):
        if x.shape[-1] != weight.shape[1]:
            raise RuntimeError("mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)"
                               % (x.size // max(x.shape[-1], 1), x.shape[-1],
                                  weight.shape[1], weight.shape[0]))
        if x.ndim == 2:
            return ops.addmm(bias, input, ops.t(weight))
        # NOTE: as torch, a contiguous N-d input is folded to 2-D: View(Addmm(view(x))).
        out = ops.addmm(bias, input.reshape(-1, x.shape[-1]), ops.t(weight))
        return out.view(*x.shape[:-1], weight.shape[0])
    out = ops.matmul(input, ops.t(weight))
    if bias is not None:
        out = out + bias
    return out


def bilinear(input1, input2, weight, bias=None):
    """``y_k = x1 @ W_k @ x2 + b_k``. Matches ``torch.nn.functional.bilinear``."""
    # (..., 1, 1, i) @ (o, i, j) -> (..., o, 1, j); then dot with x2.
    t = ops.matmul(input1.unsqueeze(-2).unsqueeze(-2), weight)
    out = ops.matmul(t, input2.unsqueeze(-2).unsqueeze(-1)).squeeze(-1).squeeze(-1)
    if bias is not None:
        out = out + bias
    return out


def relu(input, inplace=False):
    """``max(input, 0)``."""
    return ops.relu_(input) if inplace else ops.relu(input)


def relu_(input):
    return ops.relu_(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """Clamp to ``[min_val, max_val]`` (zero gradient at and beyond the ends)."""
    if inplace:
        return _inplace(input, hardtanh, min_val, max_val)
    return Hardtanh.apply(input, min_val, max_val)


def relu6(input, inplace=False):
    """``min(max(input, 0), 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``x`` for ``x > 0``, else ``negative_slope * x``."""
    if inplace:
        return _inplace(input, leaky_relu, negative_slope)
    return LeakyRelu.apply(input, negative_slope)


def prelu(input, weight):
    """Leaky ReLU with a learned slope per channel (dim 1)."""
    w = weight
    if input.dim() >= 2 and weight.numel() > 1:
        w = weight.reshape((1, -1) + (1,) * (input.dim() - 2))
    return ops.where(input > 0, input, input * w)


def elu(input, alpha=1.0, inplace=False):
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    if inplace:
        return _inplace(input, elu, alpha)
    from ..ops.activation import _elu
    return _elu(input, alpha)


def selu(input, inplace=False):
    """Scaled ELU with torch's constants."""
    if hasattr(ops, "selu"):
        return ops.selu_(input) if inplace else ops.selu(input)
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return elu(input, alpha) * scale


def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if hasattr(ops, "celu"):
        return ops.celu_(input, alpha) if inplace else ops.celu(input, alpha)
    neg = ops.expm1(ops.clamp(input, max=0) / alpha) * alpha
    return ops.where(input > 0, input, neg)


def gelu(input, approximate="none"):
    """Gaussian error linear unit; ``approximate='tanh'`` uses torch's tanh formula."""
    if approximate == "tanh":
        inner = (input + input * input * input * 0.044715) * math.sqrt(2 / math.pi)
        return input * 0.5 * (ops.tanh(inner) + 1)
    if approximate != "none":
        raise RuntimeError("approximate argument must be either none or tanh.")
    return Gelu.apply(input)


def silu(input, inplace=False):
    """``x * sigmoid(x)``."""
    if inplace:
        return _inplace(input, silu)
    return input * ops.sigmoid(input)


def mish(input, inplace=False):
    """``x * tanh(softplus(x))``."""
    if inplace:
        return _inplace(input, mish)
    return input * ops.tanh(softplus(input))


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * x)) / beta``, computed stably; ``x`` where ``beta * x > threshold``.

    Example:
        >>> import ember
        >>> ember.nn.functional.softplus(ember.tensor([-1e4, 0.0, 1e4]))
        tensor([0.0000e+00, 6.9315e-01, 1.0000e+04])
    """
    return Softplus.apply(input, beta, threshold)


def softsign(input):
    """``x / (1 + |x|)``."""
    return input / (ops.abs(input) + 1)


def sigmoid(input):
    return ops.sigmoid(input)


def tanh(input):
    return ops.tanh(input)


def logsigmoid(input):
    """``log(sigmoid(x))``, stable for large ``|x|``."""
    return -Softplus.apply(-input, 1.0, math.inf)


def hardsigmoid(input, inplace=False):
    """``relu6(x + 3) / 6``."""
    if inplace:
        return _inplace(input, hardsigmoid)
    return Hardtanh.apply(input + 3, 0.0, 6.0) / 6


def hardswish(input, inplace=False):
    """``x * relu6(x + 3) / 6``."""
    if inplace:
        return _inplace(input, hardswish)
    return Hardswish.apply(input)


def threshold(input, threshold, value, inplace=False):
    """``x`` where ``x > threshold``, else ``value``."""
    if inplace:
        return _inplace(input, _THRESHOLD, threshold, value)
    return ops.where(input > threshold, input, ops.full_like(input, value))


_THRESHOLD = threshold   # the function, for the in-place path (its argument shadows the name)


def _softmax_dim(ndim):
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim`` (stable)."""
    if dim is None:
        dim = _softmax_dim(input.dim())
    return ops.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``x - logsumexp(x)`` along ``dim`` (stable)."""
    if dim is None:
        dim = _softmax_dim(input.dim())
    return ops.log_softmax(input, dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-x)``."""
    return softmax(-input, dim, dtype=dtype)


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError("dropout probability has to be between 0 and 1, but got %s" % p)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``.

    The mask comes from the global generator (``ember.manual_seed``).
    """
    _check_p(p)
    if not training or p == 0.0:
        return input
    if inplace:
        return _inplace(input, dropout, p, training)
    if p == 1.0:
        out = input * 0
    else:
        mask = ops.empty_like(input).bernoulli_(1 - p)
        out = input * mask * (1.0 / (1 - p))
    return out


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels (dim 1 of ``(N, C, H, W)``) with probability ``p``."""
    _check_p(p)
    if input.dim() not in (3, 4):
        raise RuntimeError("dropout2d: Expected 3D or 4D input, got %dD of shape %s"
                           % (input.dim(), tuple(input.shape)))
    if not training or p == 0.0:
        return input
    if inplace:
        return _inplace(input, dropout2d, p, training)
    batched = input.dim() == 4
    shape = tuple(input.shape[:2]) + (1, 1) if batched else (input.shape[0], 1, 1)
    if p == 1.0:
        out = input * 0
    else:
        mask = ops.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)
        out = input * mask * (1.0 / (1 - p))
    return out


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` at the integer ``input``; no gradient flows to ``padding_idx``."""
    if input.is_floating_point():
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got %s instead"
                           % input.dtype)
    idx = input._array
    n = weight.shape[0]
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n):
        raise IndexError("index out of range in self")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += n
    if max_norm is not None:
        w = weight._array
        xp = xp_of(weight)
        rows = xp.unique(idx)
        norms = (xp.abs(w[rows]) ** norm_type).sum(-1) ** (1.0 / norm_type)
        scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        w[rows] *= scale[:, None].astype(w.dtype)
    return _Embedding.apply(weight, input, padding_idx)


def one_hot(tensor, num_classes=-1):
    """Long tensor with a trailing dim of size ``num_classes``, 1 at each index."""
    if tensor.is_floating_point():
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    idx = tensor._array
    if num_classes == -1:
        num_classes = int(idx.max()) + 1 if idx.size else 0
    if idx.size and int(idx.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if idx.size and int(idx.max()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    xp = xp_of(tensor)
    return Tensor._wrap((idx[..., None] == xp.arange(num_classes)).astype(np.int64))


def pad(input, pad, mode="constant", value=None):
    """Pad the last ``len(pad) // 2`` dims; ``pad`` lists (left, right) from the last dim.

    ``mode`` is ``'constant'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.
    """
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    k = len(pad) // 2
    if k > input.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           "dimension but got padding length %d and input of dimension %d"
                           % (len(pad), input.dim()))
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError("Unrecognised padding mode %s" % mode)
    pads = [(0, 0)] * (input.dim() - k) + [(int(pad[2 * i]), int(pad[2 * i + 1]))
                                           for i in reversed(range(k))]
    if mode == "reflect":
        for a, (lo, hi) in reversed(list(enumerate(pads))):    # (torch checks the last dim first)
            if max(lo, hi) >= input.shape[a] and (lo or hi):
                raise RuntimeError("Argument #%d: Padding size should be less than the "
                                   "corresponding input dimension, but got: padding (%d, %d) at "
                                   "dimension %d of input %s" % (4 + 2 * (input.dim() - 1 - a),
                                                                 lo, hi, a, list(input.shape)))
    return _Pad.apply(input, pads, mode, 0 if value is None else value, k)


def _interp_matrix(backend, n_in, n_out, mode, align_corners, scale, dtype):
    """The (n_out, n_in) resampling matrix of one spatial dim, on ``backend``'s device."""
    xp = backend.xp
    m = xp.zeros((n_out, n_in), dtype=np.float64)
    dst = xp.arange(n_out, dtype=np.float64)
    rows = xp.arange(n_out)
    if mode == "nearest":
        src = xp.minimum(xp.floor(dst * scale).astype(np.int64), n_in - 1)
        m[rows, src] = 1
        return m.astype(dtype)
    if align_corners:
        src = dst * ((n_in - 1) / (n_out - 1)) if n_out > 1 else dst * 0
    else:
        src = xp.maximum((dst + 0.5) * scale - 0.5, 0)
    i0 = xp.minimum(xp.floor(src).astype(np.int64), n_in - 1)
    i1 = xp.minimum(i0 + 1, n_in - 1)
    lam = src - i0
    backend.scatter_add(m, (rows, i0), 1 - lam)
    backend.scatter_add(m, (rows, i1), lam)
    return m.astype(dtype)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims (``nearest``, ``linear``, ``bilinear``), as torch does.

    The resampling is separable, so it runs as one small matmul per spatial dim.
    """
    nd = input.dim() - 2
    if mode not in ("nearest", "linear", "bilinear"):
        raise NotImplementedError("interpolate: mode %r is not supported" % mode)
    if mode == "nearest" and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    in_sizes = tuple(input.shape[2:])
    if size is not None:
        out_sizes = tuple(size) if isinstance(size, (list, tuple)) else (size,) * nd
        scales = [i / o for i, o in zip(in_sizes, out_sizes)]
    else:
        sf = tuple(scale_factor) if isinstance(scale_factor, (list, tuple)) \
            else (scale_factor,) * nd
        out_sizes = tuple(int(math.floor(i * s)) for i, s in zip(in_sizes, sf))
        scales = [1.0 / s for s in sf] if not recompute_scale_factor else \
            [i / o for i, o in zip(in_sizes, out_sizes)]
    out = input
    dt = input._array.dtype
    backend = backend_of(input._array)
    for a in range(nd):
        m = _interp_matrix(backend, in_sizes[a], out_sizes[a], mode, bool(align_corners),
                           scales[a], dt)
        axis = 2 + a
        moved = ops.transpose(out, axis, -1)
        moved = ops.matmul(moved, Tensor._wrap(m.T))
        out = ops.transpose(moved, axis, -1)
    return out.contiguous()


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError("%s is not a valid value for reduction" % reduction)


def _check_same(op, input, target):
    if tuple(input.shape) != tuple(target.shape):
        import warnings
        warnings.warn("Using a target size (%s) that is different to the input size (%s). This "
                      "will likely lead to incorrect results due to broadcasting. Please ensure "
                      "they have the same size." % (target.shape, input.shape), stacklevel=3)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_same("mse_loss", input, target)
    d = input - target
    return _reduce(d * d, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mean absolute error."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_same("l1_loss", input, target)
    return _reduce(ops.abs(input - target), reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Quadratic below ``beta`` (``0.5 d^2 / beta``), linear above (``|d| - 0.5 beta``)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    z = input - target
    d = ops.abs(z)
    if beta == 0:
        return _reduce(d, reduction)
    # NOTE: z * z, not d * d: abs's zero slope at 0 would lose the curvature 1 / beta there.
    loss = ops.where(d < beta, z * z * (0.5 / beta), d - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Quadratic below ``delta`` (``0.5 d^2``), linear above (``delta (|d| - 0.5 delta)``)."""
    z = input - target
    d = ops.abs(z)
    loss = ops.where(d < delta, z * z * 0.5, (d - 0.5 * delta) * delta)
    return _reduce(loss, reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """``-(t log x + (1 - t) log(1 - x))`` with each log clamped at -100, as torch."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError("Using a target size (%s) that is different to the input size (%s) is "
                         "deprecated. Please ensure they have the same size."
                         % (target.shape, input.shape))
    x = input._array
    if x.size and (float(x.min()) < 0 or float(x.max()) > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    loss = BinaryCrossEntropy.apply(input, target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Sigmoid + binary cross entropy in one stable formula (finite at any logit)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError("Target size (%s) must be the same as input size (%s)"
                         % (target.shape, input.shape))
    sp = Softplus.apply(-input, 1.0, math.inf)   # log(1 + exp(-x)) = -log(sigmoid(x))
    if pos_weight is not None:
        lw = (pos_weight - 1) * target + 1
        loss = (1 - target) * input + lw * sp
    else:
        loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """``target * (log(target) - input)`` (``input`` holds log-probabilities)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if log_target:
        loss = ops.exp(target) * (target - input)
    else:
        # NOTE: xlogy as torch, so a zero target gives the same (nan) target gradient.
        loss = ops.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.dim() else 1)
    return _reduce(loss, reduction)


def _norm(x, p, dim, keepdim=False):
    # NOTE: torch's norm backward gives 0 where the norm is 0 (sqrt(0)' would be inf * 0 = nan).
    return ops.norm(x, p, dim, keepdim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``x1 . x2 / (max(|x1|, eps) * max(|x2|, eps))`` along ``dim``."""
    if tuple(x1.shape) != tuple(x2.shape):
        x1, x2 = ops.broadcast_tensors(x1, x2)
    n1 = ops.clamp(_norm(x1, 2, dim, True), min=eps)
    n2 = ops.clamp(_norm(x2, 2, dim, True), min=eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` over the last dim."""
    return _norm(x1 - x2 + eps, p, -1, keepdim)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``."""
    return input / ops.clamp(_norm(input, p, dim, True), min=eps)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """``1 - cos`` for target 1, ``max(0, cos - margin)`` for target -1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    eps = 1e-12
    prod = (input1 * input2).sum(-1)
    m1 = (input1 * input1).sum(-1) + eps
    m2 = (input2 * input2).sum(-1) + eps
    cos = prod / ops.sqrt(m1 * m2)
    zeros = ops.zeros_like(cos)
    pos = ops.where(target == 1, 1 - cos, zeros)
    neg = ops.where(target == -1, ops.clamp(cos - margin, min=0), zeros)
    return _reduce(pos + neg, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _reduce(ops.clamp(-target * (input1 - input2) + margin, min=0), reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the pairwise p-norm distance."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_swap = pairwise_distance(positive, negative, p, eps)
        d_neg = ops.minimum(d_neg, d_swap)   # NOTE: ties split the gradient, as torch
    return _reduce(ops.clamp(d_pos - d_neg + margin, min=0), reduction)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """``softmax(q @ k^T * scale + mask) @ v``; a boolean mask keeps the True positions."""
    e = query.shape[-1]
    scale = 1 / math.sqrt(e) if scale is None else scale
    scores = ops.matmul(query, ops.transpose(key, -2, -1)) * scale
    lq, lk = query.shape[-2], key.shape[-2]
    if is_causal:
        xp = xp_of(query)
        keep = xp.tril(xp.ones((lq, lk), dtype=bool))
        scores = ops.where(Tensor._wrap(keep), scores, ops.full_like(scores, -math.inf))
    if attn_mask is not None:
        if attn_mask._array.dtype == np.bool_:
            scores = ops.where(attn_mask, scores, ops.full_like(scores, -math.inf))
        else:
            scores = scores + attn_mask
    attn = ops.softmax(scores, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p)
    return ops.matmul(attn, value)
