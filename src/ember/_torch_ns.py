"""The ``torch.*`` forms of neural-network functions (``torch.dropout``, ``torch.kl_div``,
``torch.conv3d``, ...): torch's own signatures (positional flags, ``reduction`` as an int: 0
none, 1 mean, 2 sum; when left out, 0, as torch's bindings) over ``ember.nn.functional``.
``ember.NAME`` loads them on first use."""
import warnings

import numpy as np

from . import dtypes as _dt
from . import linalg
from .autograd import anomaly_mode
from .autograd.function import Function
from .autograd.grad_mode import is_grad_enabled, no_grad
from .backend import get_array_module
from .nn import functional as F
from ._tensor_compat import REMOVED
from .tensor import Tensor
from .ops import creation as _creation
from .ops._util import not_implemented_for as _not_implemented_for, warn_once as _warn_once
from .ops.conv import convolution_cxx as _convolution_cxx
from .ops.loss import BroadcastNoBackward as _BroadcastNoBackward
from .ops.normalization import batch_norm_cxx as _batch_norm_cxx
from .ops.normalization import group_norm as _group_norm
from .ops import normalization as _normalization
from .ops.normalization import check_stats_dtype as _check_stats_dtype

_REDUCTION = {0: "none", 1: "mean", 2: "sum"}


def _reduction(r, op, pos):
    """torch's int ``reduction`` as F's string (1 mean, 2 sum, any other int none)."""
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)):
        raise TypeError("%s(): argument 'reduction' (position %d) must be int, not %s"
                        % (op, pos, type(r).__name__))
    return _REDUCTION.get(int(r), "none")


def _p_check(p):
    if p < 0 or p > 1:
        raise RuntimeError("dropout probability has to be between 0 and 1, but got %s"
                           % (int(p) if float(p).is_integer() else p))
    return p


def dropout(input, p, train):
    return F.dropout(input, _p_check(p), train)


def dropout_(input, p, train):
    return F.dropout(input, _p_check(p), train, inplace=True)


def alpha_dropout(input, p, train):
    return F.alpha_dropout(input, _p_check(p), train)


def alpha_dropout_(input, p, train):
    return F.alpha_dropout(input, _p_check(p), train, inplace=True)


def feature_dropout(input, p, train):
    return _feature(F.dropout2d, input, _p_check(p), train, False)


def feature_dropout_(input, p, train):
    return _feature(F.dropout2d, input, _p_check(p), train, True)


def feature_alpha_dropout(input, p, train):
    return F.feature_alpha_dropout(input, _p_check(p), train)


def feature_alpha_dropout_(input, p, train):
    return F.feature_alpha_dropout(input, _p_check(p), train, inplace=True)


def _feature(fn, input, p, train, inplace):
    with warnings.catch_warnings():     # (torch's feature dropout takes any rank >= 2)
        warnings.simplefilter("ignore")
        return fn(input, p, train, inplace)


def native_dropout(input, p, train):
    """``(output, mask)``: in training (``train`` True or None) ``output`` is ``input * mask /
    (1 - p)`` with a bool ``mask``; otherwise a copy and an all-True mask. An empty input
    gives a mask of its own dtype, as torch's CPU kernel."""
    if input.is_complex() and input.requires_grad and is_grad_enabled():
        raise RuntimeError("native_dropout does not support automatic differentiation for "
                           "outputs with complex dtype.")
    if input.numel() == 0:
        return input.clone(), input.new_empty(input.shape)
    if train is None or train:
        p1m = 1.0 - p
        if not 0 <= p1m <= 1:
            raise RuntimeError("bernoulli_ expects p to be in [0, 1], but got p=%g" % p1m)
        if not (input.is_floating_point() or input.is_complex()):
            raise RuntimeError("result type Float can't be cast to the desired output type %s"
                               % _dt.scalar_type_name(input._array.dtype))
        keep = input.new_empty(input.shape, dtype=_dt.float32).bernoulli_(p1m).bool()
        scale = 0.0 if p1m == 0 else 1.0 / p1m
        return input * keep * scale, keep
    return input.clone(), input.new_ones(input.shape).bool()


def bilinear(input1, input2, weight, bias=None):
    out = F.bilinear(input1, input2, weight, bias)
    if out.is_complex() and is_grad_enabled() and \
            any(t is not None and t.requires_grad for t in (input1, input2, weight)):
        raise RuntimeError("_trilinear does not support automatic differentiation for outputs "
                           "with complex dtype.")
    return out


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    """torch's C++ form: the target (and weights) broadcast against the input, the loss takes
    the target's shape (``(1 - target).mul_(input)``), no size check."""
    if is_grad_enabled():       # (torch's autograd check precedes every other)
        for name, t in (("weight", weight), ("pos_weight", pos_weight)):
            if t is not None and t.requires_grad:
                raise RuntimeError("The function 'binary_cross_entropy_with_logits' is not "
                                   "differentiable with respect to argument '%s'. This input "
                                   "cannot have requires_grad True." % name)
    reduction = _reduction(reduction, "binary_cross_entropy_with_logits", 5)
    _not_implemented_for(input._array, "log_sigmoid_cpu", "biuc")
    x_shape, t_shape = tuple(input.shape), tuple(target.shape)
    if pos_weight is not None:
        lw_shape = _broadcast(tuple(pos_weight.shape), t_shape)
        _inplace_shape(x_shape, lw_shape)
    shape = _inplace_shape(t_shape, x_shape)
    if weight is not None:
        _inplace_shape(shape, tuple(weight.shape))
    if shape != x_shape and pos_weight is None:
        # (torch's backward writes sigmoid(input) - target into the input's shape)
        input = _BroadcastNoBackward.apply(input, shape, _shape_msg(x_shape, shape))
    elif shape != x_shape:
        input = input.expand(shape)
    if weight is not None and tuple(weight.shape) != shape:
        weight = weight.expand(shape)
    if pos_weight is not None and tuple(pos_weight.shape) != shape:
        pos_weight = pos_weight.expand(shape)
    out = F.binary_cross_entropy_with_logits(input, target, weight, reduction=reduction,
                                             pos_weight=pos_weight)
    if out.dtype.is_complex and is_grad_enabled() and \
            (input.requires_grad or target.requires_grad):
        raise RuntimeError("binary_cross_entropy_with_logits does not support automatic "
                           "differentiation for outputs with complex dtype.")
    return out


def _broadcast(a, b):
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        raise RuntimeError("The size of tensor a (%d) must match the size of tensor b (%d) at "
                           "non-singleton dimension" % (a[-1], b[-1])) from None


def _shape_msg(out, shape):
    return "output with shape %s doesn't match the broadcast shape %s" % (list(out), list(shape))


def _inplace_shape(out, other):
    """``out``, if an in-place op on a tensor of shape ``out`` can take ``other`` (torch's
    error otherwise)."""
    shape = _broadcast(out, other)
    if shape != out:
        raise RuntimeError(_shape_msg(out, shape))
    return out


def channel_shuffle(input, groups):
    return F.channel_shuffle(input, groups)


native_channel_shuffle = F.native_channel_shuffle


def constant_pad_nd(input, pad, value=0):
    """``input`` padded with ``value`` (a negative pad trims), with torch's checks."""
    pad = tuple(pad)
    if len(pad) % 2:
        raise RuntimeError("Length of pad must be even but instead it equals %d" % len(pad))
    nd, n_pad = input.dim(), len(pad) // 2
    if nd < n_pad:
        raise RuntimeError("Length of pad should be no more than twice the number of dimensions "
                           "of the input. Pad length is %dwhile the input has %ddimensions."
                           % (len(pad), nd))
    sizes = list(input.shape)
    for i in range(nd - n_pad, nd):
        k = 2 * (nd - i - 1)
        for p in pad[k:k + 2]:
            if p < 0:
                sizes[i] += p
                if sizes[i] < 0:
                    raise RuntimeError("narrow(): length must be non-negative.")
    if any(p > 0 for p in pad):
        for i in range(n_pad):
            k = len(pad) - 2 * (i + 1)
            d = nd - n_pad + i
            if input.shape[d] + pad[k] + pad[k + 1] < 0:
                raise RuntimeError(
                    "The input size %d, plus negative padding %d and %d resulted in a negative "
                    "output size, which is invalid. Check dimension %d of your input."
                    % (input.shape[d], pad[k], pad[k + 1], d))
    if not pad:
        return input.clone()
    return F.pad(input, pad, "constant", value)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return F.conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return F.conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


def conv_tbc(input, weight, bias, pad=0):
    return F.conv_tbc(input, weight, bias, pad)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """The convolution (``transposed``: its adjoint) of ``input.dim() - 2`` spatial dims."""
    return _convolution_cxx(input, weight, bias, stride, padding, dilation, transposed,
                            output_padding, groups)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1,
             zero_infinity=False):
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction(reduction, "ctc_loss", 6), zero_infinity)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction, "cosine_embedding_loss", 5))


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    return F.cosine_similarity(x1, x2, dim, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``F.embedding`` with torch's C++ argument order (``weight`` first; ``padding_idx=-1``
    means none)."""
    return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def embedding_renorm_(input, indices, max_norm, norm_type):
    """Rows ``indices`` of ``input`` rescaled in place to norm at most ``max_norm``."""
    F._no_grad_embedding_renorm_(input, indices, max_norm, norm_type)
    return input


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return F.hinge_embedding_loss(input, target, margin,
                                  reduction=_reduction(reduction, "hinge_embedding_loss", 4))


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    """torch's C++ instance norm (none of F.instance_norm's Python checks)."""
    return F.instance_norm_cxx(input, weight, bias, running_mean, running_var, use_input_stats,
                               momentum, eps)


def kl_div(input, target, reduction=0, *, log_target=False):
    with warnings.catch_warnings():     # (torch's C++ form does not warn about 'mean')
        warnings.simplefilter("ignore")
        return F.kl_div(input, target, reduction=_reduction(reduction, "kl_div", 3),
                        log_target=log_target)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    return F._margin_ranking_loss(input1, input2, target, margin,
                                  _reduction(reduction, "margin_ranking_loss", 5))


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    if 0 in (stride if isinstance(stride, (list, tuple)) else [stride]):
        raise RuntimeError("stride should not be zero")     # (torch's first check here)
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode,
                        return_indices=True)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool3d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    """Batch norm with torch's C++ argument order and checks (not F.batch_norm's)."""
    return _batch_norm_cxx(input, weight, bias, running_mean, running_var, training, momentum,
                           eps)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """``(output, save_mean, save_invstd)`` of batch norm (the saved statistics are empty
    outside training, as torch's CPU kernel)."""
    if input.dim() < 2:
        input.size(1)       # (torch's IndexError for the channel dim comes first)
    if training:
        _check_stats_dtype(input, weight, bias, running_mean, running_var)
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be "
                         "None")
    _not_implemented_for(input._array, "batch_norm", "biuc")
    if input.numel() == 0:
        raise RuntimeError("input tensor must have at least one element, but got input_sizes = "
                           "%s" % list(input.shape))
    out = _batch_norm_cxx(input, weight, bias, running_mean, running_var, training, momentum,
                          eps)
    if not training:
        empty = input.new_empty((0,))
        return out, empty, empty
    dims = (0,) + tuple(range(2, input.dim()))
    # (torch's CPU statistics, no gradient back through them)
    mean, invstd = _normalization.batch_stats(input._array, weight, bias, dims, eps)
    return out, Tensor._wrap(mean.reshape(-1)), Tensor._wrap(invstd.reshape(-1))


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """``(output, mean, rstd)`` of layer norm; the statistics keep the normalized dims as 1."""
    out = F.layer_norm(input, normalized_shape, weight, bias, eps)
    k = len(normalized_shape)
    dims = list(range(input.dim() - k, input.dim()))
    stat_shape = tuple(input.shape[:input.dim() - k]) + (1,) * k
    if any(input.shape[d] == 0 for d in dims):
        mean = input.new_zeros(stat_shape)
        return out, mean, mean.detach() * float("nan")
    # (torch's statistics outputs take no gradient here: its kernel's moments, no graph)
    mean, rstd = _normalization.layer_norm_stats(input.detach(), tuple(normalized_shape), weight,
                                                 bias, eps)
    return out, mean, rstd


_NUMEL_MSG = ("Expected X.numel() == N * C * HxW to be true, but got false.  (Could this error "
              "message be improved?  If so, please report an enhancement request to PyTorch.)")


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """``(output, mean, rstd)`` of group norm; the statistics have shape ``(N, group)``."""
    if group <= 0:
        raise RuntimeError("Expected num groups to be greater than 0, got %d" % group)
    if C % group:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, "
                           "but got input of shape %s and num_groups=%d"
                           % (list(input.shape), group))
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != C):
            raise RuntimeError("Expected %s to be a vector of size equal to the number of "
                               "channels in input, but got %s of shape %s and input of shape %s"
                               % (name, name, list(t.shape), list(input.shape)))
    if input.numel() != N * C * HxW:
        raise RuntimeError(_NUMEL_MSG)
    if not input.is_contiguous():
        raise RuntimeError(_NUMEL_MSG.replace("X.numel() == N * C * HxW",
                                              "X.is_contiguous(memory_format)"))
    if input.numel() == 0:
        _not_implemented_for(input._array, "GroupNormKernelImpl", "biuc")
        out = input.clone()
        for p in (weight, bias):        # (their gradient: zeros, as torch's kernel gives)
            if p is not None:
                out = out + (p * 0).sum()
        empty = input.new_empty((N, group))
        return out, empty, empty.clone()
    out = _group_norm(input, group, weight, bias, eps)
    x = input.reshape(N, group, -1)
    mean = x.mean(2)
    var = x.var(2, unbiased=False)
    # (torch's Welford moments: an inf in a group makes its mean NaN, as its variance)
    mean = mean.masked_fill(var.isnan(), float("nan"))
    # (torch adds its double eps: the root in double, rounded to the dtype)
    return out, mean, (var.double() + eps).rsqrt().to(var.dtype)


def native_norm(input, p=2, dim=None, keepdim=False, dtype=None):
    """torch's ``native_norm`` exists for sparse tensors only: dense ones raise as torch."""
    raise NotImplementedError(
        "Could not run 'aten::native_norm' with arguments from the 'CPU' backend. This could be "
        "because the operator doesn't exist for this backend, or was omitted during the "
        "selective/custom build process (if using custom build).")


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dim but ``dim`` (shape 1 there, as weight norm),
    computed as torch's: through a 2-D view of ``v``."""
    if dim == -1:
        return v.norm(pow)
    last = v.dim() - 1
    if dim == 0:
        size = [1] * v.dim()
        if not v.dim():
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        size[0] = v.shape[0]
        return v.contiguous().view(size[0], -1).norm(pow, 1).view(size)
    if dim == last:
        size = [1] * v.dim()
        size[last] = v.shape[last]
        return v.contiguous().view(-1, v.shape[last]).norm(pow, 0).view(size)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def nuclear_norm(input, dim=None, keepdim=False):
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    dim = (-2, -1) if dim is None else tuple(dim)
    if len(dim) != 2:
        raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got %s"
                           % " ".join(str(d) for d in dim))
    if (input.is_floating_point() or input.is_complex()) and input.dim() >= 2:
        with no_grad():
            bad = ~input.isfinite()
            nonfinite = bool(bad.any()) and not bool(input.isnan().any())
        if nonfinite:
            # NOTE: torch's SVD (LAPACK) gives NaN singular values for a matrix holding an
            # infinity (and fails on a NaN, as ember's): such a matrix's norm and gradient are
            # NaN. The others are computed as usual; LAPACK never sees the infinities.
            with no_grad():
                bad = bad.any(dim[0], keepdim=True).any(dim[1], keepdim=True)
                weight = _creation.zeros(bad.shape, dtype=input.abs().dtype,
                                         device=input.device)
                weight = weight.masked_fill(bad, float("nan"))
            clean = input.masked_fill(bad, 0.0)
            return (linalg.matrix_norm(clean, "nuc", dim, keepdim)
                    + (input.abs() * weight).sum(dim, keepdim))
    return linalg.matrix_norm(input, "nuc", dim, keepdim)


def frobenius_norm(input, dim, keepdim=False):
    dim = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dim) > 2:
        raise RuntimeError("Expected at most 2 dimensions, but got %d dimensions instead."
                           % len(dim))
    return linalg.vector_norm(input, 2, dim, keepdim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return F.pairwise_distance(x1, x2, p, eps, keepdim)


def pdist(input, p=2.0):
    return F.pdist(input, p)


def pixel_shuffle(input, upscale_factor):
    return F.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    return F.pixel_unshuffle(input, downscale_factor)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction, "poisson_nll_loss", 6))


def prelu(input, weight):
    return F.prelu(input, weight)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return F.rms_norm(input, normalized_shape, weight, eps)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return F.rrelu(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return F.rrelu(input, lower, upper, training, inplace=True)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                        reduction=0):
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction, "triplet_margin_loss", 8))


def _base_grid(theta, spatial, align_corners):
    """torch's base grid (D,) H, W, nd + 1 of ``affine_grid_generator`` in theta's dtype:
    x (W) first, then y (, z), then ones."""
    xp = get_array_module(theta._array)
    dt = theta._array.dtype
    if dt.kind == "b":
        _not_implemented_for(theta._array, "linspace_cpu", "b")
    nd = len(spatial)
    base = xp.zeros(tuple(spatial) + (nd + 1,), dtype=dt)
    for a, n in enumerate(spatial):
        if n <= 1:
            continue
        ramp = _creation._linspace(xp, -1, 1, n, dt)       # (torch's linspace in theta's dtype)
        if not align_corners:
            with np.errstate(over="ignore"):
                ramp = ramp * dt.type(n - 1)
            ramp = ramp.astype(np.float32) / n if dt.kind in "iu" else ramp / dt.type(n)
        shape = [1] * nd
        shape[a] = n
        base[..., nd - 1 - a] = ramp.reshape(shape).astype(dt)
    base[..., nd] = 1
    return base.reshape(-1, nd + 1)


def _complex_small_bmm(base, theta):
    """``base @ theta^T`` for complex ``base`` (P, K) and ``theta`` (N, D, K) as torch's small
    bmm: products ``(a.re*b.re - a.im*b.im, a.re*b.im + a.im*b.re)`` summed over K in order
    (where infinities make NaN parts)."""
    xp = get_array_module(base)
    br, bi = base.real[None, :, None, :], base.imag[None, :, None, :]
    tr, ti = theta.real[:, None, :, :], theta.imag[:, None, :, :]
    re = xp.zeros((theta.shape[0], base.shape[0], theta.shape[1]), dtype=base.real.dtype)
    im = xp.zeros_like(re)
    with np.errstate(invalid="ignore", over="ignore"):
        for k in range(base.shape[1]):
            re = re + (br[..., k] * tr[..., k] - bi[..., k] * ti[..., k])
            im = im + (br[..., k] * ti[..., k] + bi[..., k] * tr[..., k])
    out = xp.empty(re.shape, dtype=base.dtype)     # (not re + 1j * im: 1j * inf is NaN)
    out.real[...] = re
    out.imag[...] = im
    return out


class AffineGridGenerator(Function):
    """The sampling grid ``base @ theta^T`` of affine maps ``theta`` (N, nd, nd + 1)."""

    node_name = "AffineGridGeneratorBackward0"

    @staticmethod
    def forward(ctx, theta, size, align_corners):
        base = _base_grid(theta, size[2:], align_corners)
        ctx.save_for_backward(Tensor._wrap(base))
        if base.dtype.kind == "c":
            out = _complex_small_bmm(base, theta._array)
        else:
            out = get_array_module(base).matmul(base, theta._array.transpose(0, 2, 1))
        return Tensor._wrap(out.reshape((size[0],) + tuple(size[2:]) + (len(size) - 2,)))

    @staticmethod
    def backward(ctx, grad_output):
        (base,) = ctx.saved_tensors
        g = grad_output.reshape(grad_output.shape[0], base.shape[0], grad_output.shape[-1])
        return g.transpose(1, 2).matmul(base), None, None


def affine_grid_generator(theta, size, align_corners):
    """torch's ``affine_grid_generator`` (no Python checks of ``F.affine_grid``)."""
    size = [int(v) for v in size]
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    nd = len(size) - 2
    shape = [size[0]] + size[2:] + [nd + 1]
    for v in shape:
        if v < 0:
            raise RuntimeError("Trying to create tensor with negative dimension %d: %s"
                               % (v, shape))
    if theta._array.dtype.kind == "b":
        _not_implemented_for(theta._array, "linspace_cpu", "b")
    theta.transpose(1, 2)
    if theta.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if theta.shape[0] != size[0] or theta.shape[2] != nd + 1:
        raise RuntimeError("Expected size for first two dimensions of batch2 tensor to be: "
                           "[%d, %d] but got: [%d, %d]." % (size[0], nd + 1, theta.shape[0],
                                                           theta.shape[2]))
    if theta.is_complex() and is_grad_enabled() and theta.requires_grad:
        raise RuntimeError("affine_grid_generator does not support automatic differentiation "
                           "for outputs with complex dtype.")
    if theta.is_floating_point():       # (F.affine_grid's op: torch's small-bmm sums)
        return _vision.AffineGridGenerator.apply(theta, size, bool(align_corners))
    return AffineGridGenerator.apply(theta, size, bool(align_corners))


from .ops import vision as _vision  # noqa: E402
from .ops.vision import grid_sampler, grid_sampler_2d, grid_sampler_3d  # noqa: E402,F401


def _cell(kind):
    def cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
        if kind == "lstm" and len(hx) != 2:
            raise RuntimeError("lstm_cell expects two hidden states")
        if input.size(1) != w_ih.size(1):
            raise RuntimeError("input has inconsistent input_size: got %d expected %d"
                               % (input.size(1), w_ih.size(1)))
        for i, h in enumerate(hx if kind == "lstm" else (hx,)):
            if input.size(0) != h.size(0):
                raise RuntimeError("Input batch size %d doesn't match hidden%d batch size %d"
                                   % (input.size(0), i, h.size(0)))
            if h.size(1) != w_hh.size(1):
                raise RuntimeError("hidden%d has inconsistent hidden_size: got %d, expected %d"
                                   % (i, h.size(1), w_hh.size(1)))
        gi = F.linear(input, w_ih, b_ih)
        gh = F.linear(hx if kind != "lstm" else hx[0], w_hh, b_hh)
        if kind in ("lstm", "gru") and not ((gi + gh).is_floating_point()
                                            or (gi + gh).is_complex()):
            # (torch's gates are activated in place: sigmoid_ of an integer tensor)
            raise RuntimeError("result type Float can't be cast to the desired output type %s"
                               % _dt.scalar_type_name((gi + gh)._array.dtype))
        if kind == "tanh":
            return (gi + gh).tanh()
        if kind == "relu":
            return (gi + gh).relu()
        if kind == "lstm":
            i, f, g, o = (gi + gh).chunk(4, 1)
            c = f.sigmoid() * hx[1] + i.sigmoid() * g.tanh()
            return o.sigmoid() * c.tanh(), c
        ri, zi, ni = gi.chunk(3, 1)
        rh, zh, nh = gh.chunk(3, 1)
        r, z = (ri + rh).sigmoid(), (zi + zh).sigmoid()
        n = (ni + r * nh).tanh()
        return (1 - z) * n + z * hx
    cell.__name__ = {"tanh": "rnn_tanh_cell", "relu": "rnn_relu_cell", "lstm": "lstm_cell",
                     "gru": "gru_cell"}[kind]
    cell.__doc__ = "One step of torch's %s cell (``torch.%s``)." % (kind, cell.__name__)
    return cell


rnn_tanh_cell, rnn_relu_cell, lstm_cell, gru_cell = (_cell(k) for k in ("tanh", "relu", "lstm",
                                                                        "gru"))


# (torch keeps these names only to raise and say what replaced them; their signatures are
# torch's, so a wrong call raises Python's TypeError first, as there)
def eig(self, eigenvectors=False, *, e=None, v=None):
    raise RuntimeError(REMOVED["eig"])


def _symeig(input, eigenvectors=False, upper=True, *, out=None):
    raise RuntimeError(REMOVED["symeig"])


def lstsq(input, A, *, out=None):
    raise RuntimeError(REMOVED["lstsq"])


def solve(input, A, *, out=None):
    raise RuntimeError(REMOVED["solve"])


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    raise RuntimeError(REMOVED["matrix_rank"])


symeig = _symeig


is_anomaly_enabled = anomaly_mode.is_anomaly_enabled
is_anomaly_check_nan_enabled = anomaly_mode.is_anomaly_check_nan_enabled


def set_anomaly_enabled(enabled, check_nan=True):
    anomaly_mode.set_detect_anomaly(enabled, check_nan)


_warn_always = [False]


def set_warn_always(b):
    _warn_always[0] = bool(b)


def is_warn_always_enabled():
    return _warn_always[0]


_debug_mode = [0]


def set_deterministic_debug_mode(debug_mode):
    modes = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in modes:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               "`error`, but got %s" % debug_mode)
        debug_mode = modes[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError("invalid value of debug_mode, expected 0, 1, or 2, but got %s"
                           % debug_mode)
    from . import use_deterministic_algorithms
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)
    _debug_mode[0] = debug_mode


def get_deterministic_debug_mode():
    import ember
    if not ember.are_deterministic_algorithms_enabled():
        return 0
    return 1 if ember.is_deterministic_algorithms_warn_only_enabled() else 2


def set_flush_denormal(mode):
    """False: NumPy has no switch for flushing denormals (torch returns False where the CPU
    lacks the instruction, too)."""
    return False


def init_num_threads():
    return None


def set_default_tensor_type(t):
    """torch's deprecated form of ``set_default_dtype``: ``torch.DoubleTensor`` or its name."""
    from . import dtypes, set_default_dtype
    _warn_once("set_default_tensor_type", "torch.set_default_tensor_type() is deprecated as of "
               "PyTorch 2.1, please use torch.set_default_dtype() and "
               "torch.set_default_device() as alternatives.")
    name = t if isinstance(t, str) else getattr(t, "__name__", "")
    name = name.rsplit(".", 1)[-1]
    for d in (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.bfloat16):
        if d._legacy == name:
            return set_default_dtype(d)
    raise TypeError("only floating-point types are supported as the default type")


def is_storage(obj):
    return False


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``torch.vmap``: ``torch.func.vmap``."""
    from .func import vmap as _vmap
    return _vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)


def sym_int(a):
    return int(a)


def sym_float(a):
    return float(a)


def sym_max(a, b):
    return max(a, b)


def sym_min(a, b):
    return min(a, b)


def sym_not(a):
    return not a


def sym_ite(b, t, f):
    return t if b else f


def sym_sum(args):
    return sum(args)


def sym_sqrt(a):
    import math
    return math.sqrt(a)


def autocast(device_type, dtype=None, enabled=True, cache_enabled=None):
    """``torch.autocast``: ``amp.autocast``."""
    from .amp import autocast as _autocast
    return _autocast(device_type, dtype, enabled, cache_enabled)


def is_autocast_enabled(device_type=None):
    from .amp import is_autocast_enabled as _on
    return _on(device_type)


def get_autocast_dtype(device_type):
    from .amp import get_autocast_dtype as _dtype
    return _dtype(device_type)


def set_autocast_enabled(device_type, enabled=None):
    from .amp import set_autocast_enabled as _set
    _set(device_type, enabled)


def set_autocast_dtype(device_type, dtype):
    from .amp import set_autocast_dtype as _set
    _set(device_type, dtype)


def is_autocast_cpu_enabled():
    return is_autocast_enabled("cpu")


def get_autocast_cpu_dtype():
    return get_autocast_dtype("cpu")


def get_autocast_gpu_dtype():
    return get_autocast_dtype("cuda")


def set_autocast_cpu_enabled(enabled):
    set_autocast_enabled("cpu", enabled)


def set_autocast_cpu_dtype(dtype):
    set_autocast_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype):
    set_autocast_dtype("cuda", dtype)


def is_autocast_cache_enabled():
    return True


def set_autocast_cache_enabled(enabled):
    pass


def clear_autocast_cache():
    pass


def GradScaler(device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
               growth_interval=2000, enabled=True):
    """``torch.GradScaler``: ``amp.GradScaler``."""
    from .amp import GradScaler as _GradScaler
    return _GradScaler(device, init_scale, growth_factor, backoff_factor, growth_interval,
                       enabled)


def cond(pred, true_fn, false_fn, operands=()):
    """``torch.cond``: ``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``."""
    if isinstance(operands, list):
        operands = tuple(operands)
    return true_fn(*operands) if bool(pred) else false_fn(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """``torch.while_loop``: ``body_fn`` applied while ``cond_fn`` holds."""
    if not isinstance(carried_inputs, tuple):
        raise RuntimeError("carried_inputs must be a tuple, got %s" % type(carried_inputs))
    while bool(cond_fn(*carried_inputs)):
        carried_inputs = body_fn(*carried_inputs)
        if not isinstance(carried_inputs, tuple):
            carried_inputs = (carried_inputs,)
    return carried_inputs


def compiled_with_cxx11_abi():
    return True


def is_vulkan_available():
    return False


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """An uninitialised ``size`` tensor whose dims lie in memory in ``physical_layout``
    order."""
    import ember
    if sorted(physical_layout) != list(range(len(size))):
        raise RuntimeError("Number of dimensions in size does not match the length of the "
                           "physical_layout; i.e. len(size) = %d is not equal to "
                           "len(physical_layout) = %d" % (len(size), len(physical_layout)))
    phys = ember.empty([size[p] for p in physical_layout], dtype=dtype, device=device)
    inverse = [0] * len(size)
    for i, p in enumerate(physical_layout):
        inverse[p] = i
    return phys.permute(inverse).requires_grad_(requires_grad)


def hash_tensor(input, dim=(), *, keepdim=False, mode=0):
    """torch's result is a uint64 tensor, which ember does not hold: a clear error."""
    raise TypeError("ember does not support torch.uint64 tensors, the dtype of "
                    "hash_tensor's result")


def detach_(input):
    if input._base is not None:
        raise RuntimeError(_DETACH_VIEW)
    return input.detach_()


_DETACH_VIEW = ("Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")


def as_strided_(input, size, stride, storage_offset=None):
    return input.as_strided_(size, stride, storage_offset)


def resize_as_(input, the_template, *, memory_format=None):
    return input.resize_as_(the_template)


def get_device_module(device=None):
    """The module for ``device``'s type (``ember.cpu``, ``ember.cuda``); the current
    accelerator's, else the CPU's, when omitted."""
    import importlib

    import ember
    if device is None:
        kind = "cuda" if ember.cuda.is_available() else "cpu"
    elif isinstance(device, str):
        kind = device.split(":")[0]
    else:
        kind = device.type
    if kind not in ("cpu", "cuda"):
        raise RuntimeError("Device '%s' does not have a corresponding module registered as "
                           "'torch.%s'." % (kind, kind))
    return importlib.import_module("ember." + kind)


_NESTING = [0]


def autocast_increment_nesting():
    _NESTING[0] += 1
    return _NESTING[0]


def autocast_decrement_nesting():
    _NESTING[0] -= 1
    return _NESTING[0]


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=False, requires_grad=False):
    """A 1-D tensor of ``size`` elements of ``dtype`` read from the start of ``filename``
    (``shared=True``: the file is mapped, and writes to the tensor reach it)."""
    import numpy as np

    import ember
    from . import dtypes
    d = dtype or dtypes.get_default_dtype()
    if shared:
        arr = np.memmap(filename, dtype=d.np, mode="r+", shape=(size,))  # host: a file
    else:
        arr = np.fromfile(filename, dtype=d.np, count=size)  # host: a file
        if arr.size < size:
            raise RuntimeError("Trying to read %d bytes from %s but the file holds %d"
                               % (size * arr.itemsize, filename, arr.nbytes))
    t = ember.from_numpy(arr)
    if device is not None:
        t = t.to(device)
    return t.requires_grad_(requires_grad)


def to_dlpack(tensor):
    """A DLPack capsule sharing ``tensor``'s memory (``from_dlpack`` reads it back)."""
    return tensor.detach()._array.__dlpack__()


class Stream:
    """``torch.Stream``: a device's stream of work (the CPU's runs work at once)."""

    def __init__(self, device=None, *, priority=0):
        import ember
        self.device = ember.device(device or "cpu")
        self.device_type = self.device.type
        self.device_index = -1 if self.device.index is None else self.device.index
        self.stream_id = 0
        self.priority = priority

    def query(self):
        return True

    def synchronize(self):
        pass

    def wait_stream(self, stream):
        pass

    def wait_event(self, event):
        pass

    def record_event(self, event=None):
        event = event or Event(self.device)
        event.record(self)
        return event

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return "torch.Stream device_type=%s, device_index=%d, stream_id=%d" % (
            self.device_type, self.device_index, self.stream_id)


class Event:
    """``torch.Event``: a point in a stream's work (always reached on the CPU)."""

    def __init__(self, device=None, *, enable_timing=False, blocking=False,
                 interprocess=False):
        import time
        self._clock = time.perf_counter
        self.device = device
        self._t = None

    def record(self, stream=None):
        self._t = self._clock()

    def query(self):
        return True

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass

    def elapsed_time(self, end_event):
        return (end_event._t - self._t) * 1000.0


from .cuda import OutOfMemoryError  # noqa: E402,F401  (torch.OutOfMemoryError)


class AcceleratorError(RuntimeError):
    """An error the accelerator reported."""


NAMES = frozenset(n for n, v in list(globals().items())
                  if not n.startswith("_") and callable(v)
                  and n not in ("F", "NAMES", "REMOVED", "linalg", "anomaly_mode", "no_grad",
                                "is_grad_enabled"))


def _with_out_forms():
    """``out=`` for the functions here that take it in torch (as ``ops`` gives its own)."""
    from .ops._out import OUT_NAMES, with_out
    for n in NAMES & OUT_NAMES:
        globals()[n] = with_out(globals()[n], n)


_with_out_forms()
