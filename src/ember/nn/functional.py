"""nn.functional: the maths behind the layers (modules are thin wrappers around these).

The N-d convolutions and poolings beyond the fused 1-D/2-D ops are composed from sliding
windows (``Tensor.unfold``) and one einsum or reduction, so their gradients follow.
"""
import math
import warnings as _warnings

import numpy as np

from .. import ops
from ..backend import errstate, same_device
from ..ops.conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d
from ..ops.conv import conv3d, conv_tbc, conv_transpose3d
from ..ops.pooling import (adaptive_avg_pool3d, adaptive_max_pool3d, avg_pool3d,
                           fractional_max_pool2d, fractional_max_pool3d, max_pool3d)
from ..ops import pooling as _pooling
from ..ops.vision import (channel_shuffle, fold, grid_sample, native_channel_shuffle,
                          pixel_shuffle, pixel_unshuffle, unfold)
from ..ops.vision import resample as _resample
from ..ops import vision as _vision
from ..ops.loss import (cross_entropy, ctc_loss, linear_cross_entropy, nll_loss,
                        _legacy_reduction)
from ..ops import loss as _loss
from ..ops.normalization import batch_norm, layer_norm
from ..ops import normalization as _normalization
from ..ops.pooling import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d,
                           adaptive_max_pool2d, avg_pool1d, avg_pool2d, max_pool1d, max_pool2d)
from ..autograd import _autocast
from ..backends import _SDP, SDPBackend
from ..autograd.grad_mode import is_grad_enabled, no_grad as _no_grad
from ..autograd.grad_mode import state as _ac_state
from ..ops._inplace import inplace as _inplace
from ..ops.creation import zeros
from ..ops import creation as _creation
from ..ops._util import not_implemented_for, wrap_dim, xp_of
from ..ops._util import check_shapes_broadcast as _check_shapes_broadcast
from .. import dtypes as _dt
from ..ops import activation as _act
from ..ops.padding import pad_nd as _pad_nd
from ..ops.sparse import Embedding as _Embedding
from ..ops.bilinear import Trilinear as _Trilinear
from ..ops import attention as _attention
from ..ops import sparse as _sparse
from ..tensor import Tensor
from ..ops.activation import (Gelu, Glu, Hardswish, Hardtanh, LeakyRelu, Mish, Pointwise,
                              PreluKernel, RreluWithNoise, Softplus, _rrelu_noise)
from ..ops.loss import SoftMarginLoss as _SoftMarginLoss
from ..ops.loss import (BinaryCrossEntropy, BinaryCrossEntropyWithLogits, MseLoss,
                        SmoothL1Loss)

__all__ = [
    "linear_cross_entropy",
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
    "multi_head_attention_forward",
]


def _linear_type_error(input, weight, bias):
    """torch's TypeError for the first argument of ``linear`` that is not a Tensor."""
    for pos, (name, arg) in enumerate((("input", input), ("weight", weight), ("bias", bias))):
        if not isinstance(arg, Tensor) and (arg is not None or pos < 2):
            raise TypeError("linear(): argument '%s' (position %d) must be Tensor, not %s"
                            % (name, pos + 1, type(arg).__name__))


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` (one fused GEMM, ``addmm``, for 2-D input)."""
    if not (isinstance(input, Tensor) and isinstance(weight, Tensor)
            and (bias is None or isinstance(bias, Tensor))):
        _linear_type_error(input, weight, bias)
    if _ac_state.autocast:
        input, weight, bias = _autocast.inputs("lower", (input, weight, bias))
    x = input._array
    if x.ndim == 0 or weight.dim() == 0:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are %dD "
                           "and %dD" % (x.ndim, weight.dim()))
    # NOTE: as torch, 2-D input (any bias) and contiguous input with a 1-D bias go through
    # addmm (which rejects a bias of another dtype and a 1-D weight); the rest is matmul then
    # an in-place add
    if bias is not None and (x.ndim == 2 or x.flags.c_contiguous and bias.dim() == 1):
        if weight.dim() == 1:
            raise RuntimeError("mat2 must be a matrix, got 1-D tensor")
        if x.shape[-1] != weight.shape[1]:
            raise RuntimeError("mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)"
                               % (x.size // max(x.shape[-1], 1), x.shape[-1],
                                  weight.shape[1], weight.shape[0]))
        if x.ndim == 2:
            return ops.addmm(bias, input, ops.t(weight))
        # NOTE: as torch, a contiguous 1-D or N-d input is folded to 2-D:
        # View(Addmm(view(x))).
        out = ops.addmm(bias, input.reshape(-1, x.shape[-1]), ops.t(weight))
        return out.view(*x.shape[:-1], weight.shape[0])
    out = ops.matmul(input, ops.t(weight))
    if bias is not None:
        out = out.add_(bias)
    return out


def bilinear(input1, input2, weight, bias=None):
    """``y_k = x1 @ W_k @ x2 + b_k``. Matches ``torch.nn.functional.bilinear``."""
    if _ac_state.autocast and input1.device.type == "cuda":     # (on torch's CUDA list only)
        input1, input2, weight, bias = _autocast.inputs("promote", (input1, input2, weight,
                                                                    bias))
    if not (input1.dtype == input2.dtype == weight.dtype) or \
            (bias is not None and bias.dtype != input1.dtype):
        raise RuntimeError("All tensors must have the same dtype, got input1: %s, input2: %s, "
                           "weight: %s%s" % (_c_name(input1), _c_name(input2), _c_name(weight),
                                             "" if bias is None else ", bias: " + _c_name(bias)))
    if input1.dim() != input2.dim():
        raise RuntimeError("bilinear(): input dimensions do not match: got %d and %d"
                           % (input1.dim(), input2.dim()))
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError("bilinear(): input batch dimensions do not match at dim %d: got "
                               "%d and %d" % (i, input1.shape[i], input2.shape[i]))
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError("bilinear(): input1 size does not match weight size: got %d but "
                           "expected %d" % (input1.shape[-1], weight.shape[1]))
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError("bilinear(): input2 size does not match weight size: got %d but "
                           "expected %d" % (input2.shape[-1], weight.shape[2]))
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError("bilinear(): bias size does not match weight size: got %d but "
                           "expected %d" % (bias.shape[0], weight.shape[0]))
    if input1.numel() and input2.numel() and weight.numel():
        not_implemented_for(input1._array, "bmm", "b")
    out_shape = tuple(input1.shape[:-1]) + (weight.shape[0],)
    out = _Trilinear.apply(input1.reshape(-1, input1.shape[-1]), weight,
                           input2.reshape(-1, input2.shape[-1])).reshape(out_shape)
    if out.is_complex() and is_grad_enabled() and \
            any(t.requires_grad for t in (input1, input2, weight)):
        raise RuntimeError("_trilinear does not support automatic differentiation for outputs "
                           "with complex dtype.")
    if bias is not None:
        out = out + bias
    return out


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Normalise over groups of channels (and all spatial dims)."""
    if input.dim() < 2:
        raise RuntimeError("Expected at least 2 dimensions for input tensor but received %d"
                           % input.dim())
    size = [input.shape[0] * input.shape[1] // num_groups, num_groups] + list(input.shape[2:])
    if math.prod([size[0]] + size[2:]) == 1:
        raise ValueError("Expected more than 1 value per channel when training, got input size "
                         "%s" % size)
    return _normalization.group_norm(input, num_groups, weight, bias, eps)


def relu(input, inplace=False):
    """``max(input, 0)``."""
    return ops.relu_(input) if inplace else ops.relu(input)


def relu_(input):
    return ops.relu_(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """Clamp to ``[min_val, max_val]`` (zero gradient at and beyond the ends)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if isinstance(input, Tensor) and input._array.dtype.kind in "iu":
        for v in (min_val, max_val):
            if not (math.isfinite(v) and -2 ** 63 <= v < 2 ** 63):
                raise RuntimeError("value cannot be converted to type int64_t without overflow")
    if inplace:
        return _inplace(input, hardtanh, min_val, max_val)
    return Hardtanh.apply(input, min_val, max_val)


def relu6(input, inplace=False):
    """``min(max(input, 0), 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``x`` for ``x > 0``, else ``negative_slope * x``."""
    if inplace:
        return _inplace(input, _leaky_relu_result, negative_slope)
    return LeakyRelu.apply(input, negative_slope)


def _leaky_relu_result(input, negative_slope):
    return LeakyRelu.apply(input, negative_slope, True)


_leaky_relu_result.__name__ = "leaky_relu"


def prelu(input, weight):
    """Leaky ReLU with a learned slope per channel (dim 1)."""
    if _ac_state.autocast:
        input, weight = _autocast.inputs("lower", (input, weight))
    if input.dtype != weight.dtype:
        raise RuntimeError("prelu: Type promoting not supported. Got %s and %s"
                           % (_dt.scalar_type_name(input._array.dtype),
                              _dt.scalar_type_name(weight._array.dtype)))
    nd, n = input.dim(), weight.numel()
    if n != 1:
        if nd == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if nd > 1 else 1
        if channels != n:
            raise RuntimeError("Mismatch of parameter numbers and input channel size. Found "
                               "parameter numbers = %d and channel size = %d." % (n, channels))
    if weight.dim() > 1:
        raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           "ndim = %d" % weight.dim())
    w = weight
    if nd != weight.dim():
        w = weight.reshape((1, n) + (1,) * (nd - 2) if nd > 1 else (1,) * nd)
    return PreluKernel.apply(input, w)


def elu(input, alpha=1.0, inplace=False):
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    if inplace:
        return _inplace(input, _act._elu_result, alpha)
    return _act._elu(input, alpha)


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
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return Gelu.apply(input, approximate)


def silu(input, inplace=False):
    """``x * sigmoid(x)``."""
    if inplace:
        return _inplace(input, silu)
    return Pointwise.apply(input, "silu")


def mish(input, inplace=False):
    """``x * tanh(softplus(x))``."""
    if inplace:
        return _inplace(input, mish)
    return Mish.apply(input)


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
    return Pointwise.apply(input, "logsigmoid")


def hardsigmoid(input, inplace=False):
    """``relu6(x + 3) / 6``."""
    if inplace:
        return _inplace(input, hardsigmoid)
    return Pointwise.apply(input, "hardsigmoid")


def hardswish(input, inplace=False):
    """``x * relu6(x + 3) / 6``."""
    if inplace:
        return _inplace(input, hardswish)
    return Hardswish.apply(input)


def threshold(input, threshold, value, inplace=False):
    """``x`` where ``x > threshold``, else ``value``."""
    if inplace:
        return _act.threshold_(input, threshold, value)
    return _act.threshold(input, threshold, value)


def _get_softmax_dim(name, ndim, stacklevel):
    """torch's deprecated implicit ``dim`` (0 for 0-, 1- and 3-d input, else 1), with its
    warning (``stacklevel`` counted from here, as torch's)."""
    import warnings
    warnings.warn("Implicit dimension choice for %s has been deprecated. Change the call to "
                  "include dim=X as an argument." % name, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim`` (stable)."""
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return ops.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``x - logsumexp(x)`` along ``dim`` (stable)."""
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return ops.log_softmax(input, dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-x)``."""
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    return ops.softmax(-input, dim, dtype=dtype)


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError("dropout probability has to be between 0 and 1, but got %s" % p)


def _check_p_native(p):
    # NOTE: aten's own check (after torch's Python one) also rejects a NaN probability
    if not 0 <= p <= 1:
        raise RuntimeError("dropout probability has to be between 0 and 1, but got %s" % p)


def _dropout_impl(input, p, train, feature=False, alpha=False):
    """torch's ``_dropout_impl``: the input times a Bernoulli noise (per channel for
    ``feature``), scaled to keep the mean (or SELU's statistics for ``alpha``)."""
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        return input * zeros((), dtype=input.dtype, device=input.device)
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    else:
        shape = tuple(input.shape)
    # NOTE: torch draws the noise into empty_like(input), so in the input's memory order
    noise = ops.empty(shape, dtype=input.dtype, device=input.device) if feature else \
        ops.empty_like(input)
    noise.bernoulli_(1 - p)
    if not alpha:
        noise.div_(1 - p)
        return input * noise
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    b = noise.add(-1).mul_(_ALPHA * a).add_(_ALPHA * a * p)
    noise.mul_(a)
    return input * noise + b


_ALPHA = 1.7580993408473766


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``.

    The mask comes from the global generator (``ember.manual_seed``).
    """
    _check_p(p)
    _check_p_native(p)
    if inplace:
        return _inplace(input, _dropout_impl, p, training) if training and p and \
            input.numel() else input
    return _dropout_impl(input, p, training)


def _feature_dropout_call(input, p, training, inplace):
    _check_p_native(p)
    if inplace:
        return _inplace(input, _dropout_impl, p, training, True) if training and p and \
            input.numel() else input
    return _dropout_impl(input, p, training, True)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels (dim 1) with probability ``p``; a 3-D input is read as ``(N, C, L)``,
    as torch does."""
    _check_p(p)
    import warnings
    nd = input.dim()
    if nd not in (3, 4):
        warnings.warn("dropout2d: Received a %d-D input to dropout2d, which is deprecated and "
                      "will result in an error in a future release. To retain the behavior and "
                      "silence this warning, please use dropout instead. Note that dropout2d "
                      "exists to provide channel-wise dropout on inputs with 2 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      "3D or 4D inputs)." % nd, stacklevel=2)
    if nd == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change in "
                      "a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout "
                      "behavior, please switch to using dropout1d instead.", stacklevel=2)
    return _feature_dropout_call(input, p, training, inplace)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` at the integer ``input``; no gradient flows to ``padding_idx``."""
    n = weight.shape[0] if weight.dim() else 0
    if padding_idx is not None:
        if (padding_idx > 0 and padding_idx >= n) or (padding_idx < 0 and padding_idx < -n):
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            padding_idx += n
    if max_norm is not None:
        _no_grad_embedding_renorm_(weight, input, max_norm, norm_type)
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if input._array.dtype not in (np.int64, np.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got %s instead (while "
                           "checking arguments for embedding)" % _index_type_name(input))
    _loss._complex_autograd_check(weight, "embedding")
    idx = input._array
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n):
        raise IndexError("index out of range in self")
    return _Embedding.apply(weight, input, padding_idx, bool(scale_grad_by_freq), bool(sparse))


def _index_type_name(t):
    """The name torch's index dtype checks give ``t`` (its CPU type for bool or complex)."""
    if t._array.dtype.kind in "bc":
        return "CPU%sType" % _dt.scalar_type_name(t._array.dtype)
    return t.type()


def _no_grad_embedding_renorm_(weight, input, max_norm, norm_type):
    """Rescale in place each row of ``weight`` that ``input`` names to norm at most
    ``max_norm`` (torch's ``embedding_renorm_``: rows in sorted order, stopping at the first
    index out of range; a negative one counts from the end)."""
    if weight.dim() != 2:
        raise RuntimeError("Expected 2-dimensional tensor, but got %d-dimensional tensor for "
                           "argument #1 'self' (while checking arguments for embedding_renorm_)"
                           % weight.dim())
    if input._array.dtype not in (np.int64, np.int32):
        raise RuntimeError("Expected tensor for argument #2 'indices' to have one of the "
                           "following scalar types: Long, Int; but got %s instead (while "
                           "checking arguments for embedding_renorm_)" % _index_type_name(input))
    xp = xp_of(weight)
    n, d = weight.shape
    rows = xp.unique(input._array).astype(np.int64)
    bad = xp.nonzero((rows < -n) | (rows >= n))[0]
    first_bad = int(bad[0]) if bad.size else rows.size
    if first_bad and not (weight.is_floating_point() or weight.is_complex()):
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           "Got %s instead." % _dt.scalar_type_name(weight._array.dtype))
    w = weight._array
    # (negative indices come first in sorted order; a row named twice is renormalised twice)
    ok = rows[:first_bad]
    for part in (ok[ok < 0] + n, ok[ok >= 0]):
        if not part.size:
            continue
        with _no_grad():
            norms = Tensor._wrap(w[part]).norm(p=norm_type, dim=1)._array.astype(np.float64)
        # (torch rescales only a row whose norm exceeds max_norm: not a NaN one)
        big = norms > max_norm
        scale = max_norm / (xp.where(big, norms, 1.0) + 1e-7)
        with errstate(invalid="ignore", over="ignore"):
            w[part[big]] *= scale[big][:, None].astype(w.dtype)
    if first_bad < rows.size:
        raise IndexError("select(): index %d out of range for tensor of size [%d, %d] at "
                         "dimension 0" % (int(rows[first_bad]), n, d))
    return weight


def one_hot(tensor, num_classes=-1):
    """Long tensor with a trailing dim of size ``num_classes``, 1 at each index."""
    if tensor.is_floating_point():
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor._array.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    idx = tensor._array
    if num_classes == -1:
        if not idx.size:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(idx.max()) + 1
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
    return _pad_nd(input, pad, mode, value)


_INTERP_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def _is_integer(x):
    return isinstance(x, (int, np.integer)) or (isinstance(x, Tensor)
                                                 and not x.is_floating_point())


def _interp_sizes(input, size, scale_factor, nd):
    """interpolate's ``(output sizes, scale factors)``: exactly one is a tuple, as torch's."""
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if not isinstance(size, (list, tuple)):
            return (size,) * nd, None
        if len(size) != nd:
            raise ValueError("Input and output must have the same number of spatial dimensions, "
                             "but got input with spatial dimensions of %s and output size of %s. "
                             "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                             "output size in (o1, o2, ...,oK) format." % (spatial, size))
        if not all(_is_integer(x) for x in size):
            raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                            "Tuple[int, int, int], but got size with types %s"
                            % [type(x) for x in size])
        return tuple(size), None
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if not isinstance(scale_factor, (list, tuple)):
        return None, (scale_factor,) * nd
    if len(scale_factor) != nd:
        raise ValueError("Input and scale_factor must have the same number of spatial dimensions, "
                         "but got input with spatial dimensions of %s and scale_factor of shape "
                         "%s. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                         "scale_factor in (s1, s2, ...,sK) format." % (spatial, scale_factor))
    return None, tuple(scale_factor)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims (``nearest``, ``nearest-exact``, ``linear``, ``bilinear``,
    ``bicubic``, ``trilinear``, ``area``), as torch does (its argument checks in its order).

    The resampling is separable, so it runs as one small matmul per spatial dim.
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    nd = input.dim() - 2
    out_sizes, sf = _interp_sizes(input, size, scale_factor, nd)
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and out_sizes is None:
        recompute_scale_factor = True
    in_sizes = tuple(input.shape[2:])
    if recompute_scale_factor:
        out_sizes = tuple(int(math.floor(i * s)) for i, s in zip(in_sizes, sf))
        scales = [i / o if o else 0.0 for i, o in zip(in_sizes, out_sizes)]
    elif out_sizes is None:
        out_sizes = tuple(int(math.floor(i * s)) for i, s in zip(in_sizes, sf))
        scales = [1.0 / s if s else 0.0 for s in sf]
    else:
        scales = [i / o if o else 0.0 for i, o in zip(in_sizes, out_sizes)]
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes "
                         "and requires a 4-D tensor as input")
    if mode == "lanczos" and input.dim() == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if antialias and mode == "lanczos":
        raise NotImplementedError("interpolate: mode='lanczos' is not supported")
    if mode in ("linear", "bilinear", "trilinear") and nd in (1, 2, 3) and \
            nd != _INTERP_DIMS[mode]:
        raise NotImplementedError("Got %dD input, but %s mode needs %dD input"
                                  % (input.dim(), mode, _INTERP_DIMS[mode] + 2))
    if nd not in (1, 2, 3) or mode not in ("nearest", "nearest-exact", "area") + tuple(
            _INTERP_DIMS) or (mode == "bicubic" and nd != 2):
        raise NotImplementedError("Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                                  "%dD) for the modes: nearest | linear | bilinear | bicubic | "
                                  "trilinear | lanczos | area | nearest-exact (got %s)"
                                  % (input.dim(), mode))
    if mode == "area":
        pool = {1: adaptive_avg_pool1d, 2: adaptive_avg_pool2d, 3: adaptive_avg_pool3d}[nd]
        return pool(input, out_sizes)
    kind = "cubic" if mode == "bicubic" else ("linear" if mode in _INTERP_DIMS else mode)
    return _resample(input, out_sizes, scales, kind, align_corners, mode, antialias)


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError("%s is not a valid value for reduction" % reduction)


def _check_reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError("%s is not a valid value for reduction" % reduction)


def _broadcast_pair(input, target, reduction):
    """``input`` and ``target`` broadcast to one shape (as torch's losses); a valid reduction."""
    _check_reduction(reduction)
    if tuple(input.shape) == tuple(target.shape):
        return input, target
    return tuple(ops.broadcast_tensors(input, target))


def _check_same(op, input, target):
    if type(input._array) is not type(target._array):
        same_device(input._array, target._array)    # (torch's mixed-device message)
    if tuple(input.shape) != tuple(target.shape):
        import warnings
        warnings.warn("Using a target size (%s) that is different to the input size (%s). This "
                      "will likely lead to incorrect results due to broadcasting. Please ensure "
                      "they have the same size." % (target.shape, input.shape), stacklevel=3)


def _not_implemented_dtype(d, kernel, kinds):
    """torch's error for a kernel with no version for dtype ``d`` (a NumPy dtype)."""
    if d.kind in kinds:
        raise NotImplementedError("\"%s\" not implemented for '%s'"
                                  % (kernel, _dt.scalar_type_name(d)))


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error."""
    if _ac_state.autocast:
        input, target, weight = _autocast.inputs("fp32", (input, target, weight))
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_same("mse_loss", input, target)
    if weight is not None:
        d = input - target
        return _reduce(d * d * weight, reduction)
    input, target = _broadcast_pair(input, target, reduction)
    common = _dt.result_type(input, target).np
    _not_implemented_dtype(common, "mse_cpu", "biuc")
    return MseLoss.apply(input, target, reduction, common)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mean absolute error."""
    if _ac_state.autocast:
        input, target = _autocast.inputs("fp32", (input, target))
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_same("l1_loss", input, target)
    input, target = _broadcast_pair(input, target, reduction)     # (then the dtypes promote)
    return _reduce(ops.abs(input - target), reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Quadratic below ``beta`` (``0.5 d^2 / beta``), linear above (``|d| - 0.5 beta``)."""
    if _ac_state.autocast:
        input, target = _autocast.inputs("fp32", (input, target))
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_same("smooth_l1_loss", input, target)
    if beta == 0:
        return l1_loss(input, target, reduction=reduction)
    input, target = _broadcast_pair(input, target, reduction)
    common = _dt.result_type(input, target).np
    _not_implemented_dtype(common, "smooth_l1_cpu", "biuc")
    return SmoothL1Loss.apply(input, target, reduction, float(beta), False, common)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Quadratic below ``delta`` (``0.5 d^2``), linear above (``delta (|d| - 0.5 delta)``)."""
    if _ac_state.autocast:
        input, target, weight = _autocast.inputs("fp32", (input, target, weight))
    _check_same("huber_loss", input, target)
    if weight is not None:
        if not delta > 0:
            raise RuntimeError("huber_loss does not support non-positive values for delta.")
        z = input - target
        d = ops.abs(z)
        loss = ops.where(d < delta, z * z * 0.5, (d - 0.5 * delta) * delta)
        return _reduce(loss * weight, reduction)
    input, target = _broadcast_pair(input, target, reduction)
    common = _dt.result_type(input, target).np
    _loss._cast_check(common, input._array.dtype)
    _not_implemented_dtype(common, "huber_cpu", "biuc")
    return SmoothL1Loss.apply(input, target, reduction, float(delta), True, common)


def _check_unit_interval(x, t):
    """torch's element-by-element check of BCE's input, then target, in [0, 1] (NaN fails)."""
    bad_x, bad_t = ~((x >= 0) & (x <= 1)), ~((t >= 0) & (t <= 1))
    bad = bad_x | bad_t
    if bool(bad.any()):
        first = int(bad.reshape(-1).argmax())
        raise RuntimeError("all elements of %s should be between 0 and 1"
                           % ("input" if bool(bad_x.reshape(-1)[first]) else "target"))


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """``-(t log x + (1 - t) log(1 - x))`` with each log clamped at -100, as torch."""
    if _ac_state.autocast:
        input, target, weight = _autocast.inputs("fp32", (input, target, weight))
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError("Using a target size (%s) that is different to the input size (%s) is "
                         "deprecated. Please ensure they have the same size."
                         % (target.shape, input.shape))
    x = input._array
    if target._array.dtype != x.dtype:
        raise RuntimeError("Found dtype %s but expected %s"
                           % (_dt.scalar_type_name(target._array.dtype),
                              _dt.scalar_type_name(x.dtype)))
    not_implemented_for(x, "binary_cross_entropy", "biuc")
    _check_unit_interval(x, target._array)
    _check_reduction(reduction)
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        weight = weight.expand(input.shape)
    return BinaryCrossEntropy.apply(input, target, (weight,), reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Sigmoid + binary cross entropy in one stable formula (finite at any logit)."""
    if _ac_state.autocast:
        input, target, weight, pos_weight = _autocast.inputs(
            "fp32", (input, target, weight, pos_weight))
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError("Target size (%s) must be the same as input size (%s)"
                         % (target.shape, input.shape))
    _check_reduction(reduction)
    for name, t in (("weight", weight), ("pos_weight", pos_weight)):
        if t is not None and t.requires_grad and is_grad_enabled():
            raise RuntimeError("The function 'binary_cross_entropy_with_logits' is not "
                               "differentiable with respect to argument '%s'. This input cannot "
                               "have requires_grad True." % name)
    not_implemented_for(input._array, "log_sigmoid_cpu", "biuc")
    t = target._array.dtype
    if t == np.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    # (torch computes (1 - target).mul_(input)...: the loss takes the target's dtype)
    _loss._cast_check(_promote_np(t, input._array.dtype), t)
    if pos_weight is not None:      # (torch: log_sigmoid(input).mul_(pos_weight-based weight))
        lw = _promote_np(pos_weight._array.dtype, t)
        _loss._cast_check(_promote_np(input._array.dtype, lw), input._array.dtype)
    if t.kind == "c" and is_grad_enabled() and any(
            a is not None and a.requires_grad for a in (input, target, weight, pos_weight)):
        raise RuntimeError("binary_cross_entropy_with_logits does not support automatic "
                           "differentiation for outputs with complex dtype.")
    return BinaryCrossEntropyWithLogits.apply(input, target, (weight, pos_weight), reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """``target * (log(target) - input)`` (``input`` holds log-probabilities)."""
    if _ac_state.autocast:
        input, target = _autocast.inputs("fp32", (input, target))
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction == "mean":
        import warnings
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=2)
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError("%s is not a valid value for reduction" % reduction)
    if input._array.dtype.kind == "c" or target._array.dtype.kind == "c":
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if input._array.dtype.kind in "biu" or target._array.dtype.kind in "biu":
        raise RuntimeError("kl_div: Integral inputs not supported.")
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
    common = _dt.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is %s"
                           % _dt.scalar_type_name(common.np))
    # NOTE: as torch, only integer (and bool) inputs are converted; floats promote in the
    # division below.
    if not x1.is_floating_point() and not x1.is_complex():
        x1 = x1.to(common)
    if not x2.is_floating_point() and not x2.is_complex():
        x2 = x2.to(common)
    if tuple(x1.shape) != tuple(x2.shape):
        x1, x2 = ops.broadcast_tensors(x1, x2)
    # NOTE: the norms are clamped in place without grad (torch's graph: Clone <- VectorNorm),
    # so the gradient flows as if unclamped.
    n1 = _norm(x1, 2, dim, True).clone()
    n2 = _norm(x2, 2, dim, True).clone()
    with _no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` over the last dim."""
    return _loss.pairwise_norm(ops.arithmetic.AddScalar.apply(x1 - x2, eps), p, -1, keepdim)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``."""
    # (torch's graph: norm, clamp_min, expand_as, div)
    denom = ops.clamp_min(_norm(input, p, dim, True), eps).expand_as(input)
    return input / denom if out is None else ops.div(input, denom, out=out)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """``1 - cos`` for target 1, ``max(0, cos - margin)`` for target -1."""
    if _ac_state.autocast:
        input1, input2, target = _autocast.inputs("fp32", (input1, input2, target))
    reduction = _legacy_reduction(size_average, reduce, reduction)
    eps = 1e-12
    prod = (input1 * input2).sum(-1)
    m1 = ops.arithmetic.AddScalar.apply((input1 * input1).sum(-1), eps)
    m2 = ops.arithmetic.AddScalar.apply((input2 * input2).sum(-1), eps)
    cos = prod / ops.sqrt(m1 * m2)
    zeros = ops.zeros_like(cos)
    pos = ops.where(target == 1, ops.sub(ops.full_like(cos, 1), cos), zeros)
    neg = ops.where(target == -1,
                    ops.clamp_min(ops.arithmetic.SubScalar.apply(cos, margin), 0), zeros)
    return _reduce(pos + neg, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)``."""
    if _ac_state.autocast:
        input1, input2, target = _autocast.inputs("fp32", (input1, input2, target))
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError("margin_ranking_loss : All input tensors should have same dimension "
                           "but got sizes: input1: %s, input2: %s, target: %s "
                           % (_size_str(input1.shape), _size_str(input2.shape),
                              _size_str(target.shape)))
    return _margin_ranking_loss(input1, input2, target, margin, reduction)


def _margin_ranking_loss(input1, input2, target, margin, reduction):
    """``torch.margin_ranking_loss``: the loss without F's same-dims check."""
    # (torch's margin is a C++ double: an integer input gives a float loss)
    return _reduce(ops.clamp_min(ops.arithmetic.AddScalar.apply(-target * (input1 - input2),
                                                                 float(margin)), 0), reduction)


def _triplet_dims(anchor, positive, negative):
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not a == p == n:
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the "
                           "same number of dimensions, but got: anchor %dD, positive %dD, and "
                           "negative %dD inputs" % (a, p, n))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the pairwise p-norm distance."""
    if _ac_state.autocast:
        anchor, positive, negative = _autocast.inputs("fp32", (anchor, positive, negative))
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _triplet_dims(anchor, positive, negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_swap = pairwise_distance(positive, negative, p, eps)
        d_neg = ops.minimum(d_neg, d_swap)   # NOTE: ties split the gradient, as torch
    return _reduce(ops.clamp_min(ops.arithmetic.AddScalar.apply(d_pos, margin) - d_neg, 0),
                   reduction)


_C_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
                 "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
                 "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
                 "bool": "bool", "complex64": "c10::complex<float>",
                 "complex128": "c10::complex<double>"}


def _c_name(t):
    return _C_TYPE_NAMES.get(str(t.dtype).replace("ember.", "").replace("torch.", ""),
                             str(t.dtype))


def _sdpa_check(query, key, value, attn_mask):
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got "
                           "query.dtype: %s key.dtype: %s and value.dtype: %s instead."
                           % (_c_name(query), _c_name(key), _c_name(value)))
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, "
                           "but got query.dim: %d key.dim: %d and value.dim: %d instead."
                           % (query.dim(), key.dim(), value.dim()))
    if attn_mask is not None and attn_mask.dtype not in (_dt.bool, _dt.float32, query.dtype):
        raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query "
                           "dtype, but got attn_mask.dtype: %s and  query.dtype: %s instead."
                           % (_c_name(attn_mask), _c_name(query)))


def _flash_ok(query, key, value, mask, dropout_p, enable_gqa=False):
    """Whether torch's CPU dispatcher picks its fused (flash) kernel for these inputs (its
    checks in order: a 0-D or 1-D mask fails its shape check with an IndexError)."""
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4 or dropout_p > 0.0:
        return False
    if _dt.kind(query._array.dtype) != "f" or query._array.dtype.itemsize < 2:
        return False
    b, h, lq, e = query.shape
    hk, hv = key.shape[1], value.shape[1]
    heads_ok = (hk == h and hv == h) or (enable_gqa and hk > 0 and hv > 0 and h % hk == 0
                                          and h % hv == 0)
    if key.shape[0] != b or value.shape[0] != b or not heads_ok:
        return False
    if mask is not None:
        if mask.requires_grad:
            return False
        if mask.dim() == 0:
            raise IndexError("Dimension specified as -2 but tensor has no dimensions")
        if mask.dim() == 1:
            raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but "
                             "got -2)")
        if mask.shape[-2] not in (lq, 1) or mask.shape[-1] not in (key.shape[2], 1):
            return False
        if mask.dim() != 2 and not (mask.dim() == 4 and mask.shape[0] in (1, b)
                                    and mask.shape[1] in (1, h)):
            return False
    if not (key.shape[-1] == value.shape[-1] == e) or lq == 0 or key.shape[2] == 0:
        return False
    return all(t.shape[-1] <= 1 or t._array.strides[-1] == t._array.itemsize
               for t in (query, key, value))


def _sdpa_flash_chosen(query, key, value, attn_mask, dropout_p, enable_gqa):
    """torch's CPU kernel choice under the ``sdpa_kernel`` switches: True for the fused (flash)
    kernel, False for the math one."""
    flash_on, math_on = _SDP[SDPBackend.FLASH_ATTENTION], _SDP[SDPBackend.MATH]
    if not flash_on and not math_on:
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This "
                           "is likely due to turning off both the math kernel and the fused "
                           "kernels.")
    if flash_on and _flash_ok(query, key, value, attn_mask, dropout_p, enable_gqa):
        return True
    if math_on:
        return False
    raise RuntimeError("No available kernel.  Aborting execution.")


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """``softmax(q @ k^T * scale + mask) @ v``; a boolean mask keeps the True positions."""
    if type(attn_mask).__name__ == "CausalBias":      # (torch.nn.attention.bias's masks)
        return type(attn_mask)._dispatch(query, key, value, attn_mask, dropout_p, is_causal,
                                         scale, enable_gqa)
    if not _ac_state.autocast:
        return _sdpa(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    # (autocast casts the op's inputs, then its inner ops run uncast, as torch's kernel)
    query, key, value, attn_mask = _autocast.inputs("lower", (query, key, value, attn_mask))
    saved, _ac_state.autocast = _ac_state.autocast, {}
    try:
        return _sdpa(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    finally:
        _ac_state.autocast = saved


def _sdpa(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    _sdpa_check(query, key, value, attn_mask)
    if enable_gqa and min(query.dim(), key.dim(), value.dim()) >= 3 and any(
            t.shape[-3] and query.shape[-3] % t.shape[-3] for t in (key, value)):
        raise RuntimeError("Number of heads in key and value must divide the number of heads "
                           "in ")
    out_shape = tuple(query.shape[:-1]) + (value.shape[-1],)
    if value.numel() == 0 or math.prod(out_shape) == 0:
        # torch's early return for an empty value or result: zeros of the result's shape,
        # tied to the inputs by a zero-weighted sum (so each gets a zero gradient)
        tie = ops.arithmetic.MulScalar.apply(query.sum() + key.sum() + value.sum(), 0)
        return ops.zeros(out_shape, dtype=query.dtype, device=query.device) + tie
    flash = _sdpa_flash_chosen(query, key, value, attn_mask, dropout_p, enable_gqa)
    mask = attn_mask
    if mask is not None and mask.dtype == _dt.bool:
        mask = ops.where(mask.logical_not(), -math.inf, ops.zeros((), dtype=query.dtype,
                                                                  device=query.device))
    e, given_scale = query.shape[-1], scale
    if scale is None:
        scale = 1.0 / math.sqrt(e) if e else math.inf
    if flash:
        # NOTE: torch's CPU flash kernel takes attn_mask and is_causal together (both apply);
        # only the math path refuses the pair
        return _attention.FlashAttentionCpu.apply(
            query, key, value, None if mask is None else mask._array, is_causal, scale,
            given_scale)
    # torch's math fallback, op for op (half and bfloat16 computed in float32)
    origin = query.dtype
    if origin in (_dt.float16, _dt.bfloat16):
        query, key, value = query.float(), key.float(), value.float()
    factor = math.sqrt(abs(scale))
    q = ops.arithmetic.MulScalar.apply(query, -factor if scale < 0 else factor)
    if is_causal:
        if mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        lq, lk = query.shape[-2], key.shape[-2]
        causal = ops.ones((lq, lk), dtype=_dt.bool, device=query.device).tril()
        mask = ops.where(causal.logical_not(), -math.inf,
                         ops.zeros((), dtype=q.dtype, device=q.device))
    if enable_gqa and query.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = key.repeat_interleave(rep, -3)
        value = value.repeat_interleave(rep, -3)
    attn = ops.matmul(q, ops.arithmetic.MulScalar.apply(key.transpose(-2, -1), factor))
    if mask is not None:
        attn = attn.add_(mask) if not mask.requires_grad or not is_grad_enabled() else \
            attn.add(mask)
    attn = _act.safe_softmax(attn, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    if value.dtype != attn.dtype:
        raise RuntimeError("expected m1 and m2 to have the same dtype, but got: %s != %s"
                           % (_c_name(attn), _c_name(value)))
    return ops.matmul(attn, value).to(origin)


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask (True = masked out) as an additive float mask of ``target_type``."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != _dt.bool and not is_float:
        raise AssertionError("only bool and floating types of %s are supported" % mask_name)
    if check_other and other_type is not None and mask.dtype != other_type:
        import warnings
        warnings.warn("Support for mismatched %s and %s is deprecated. Use same type for both "
                      "instead." % (mask_name, other_name), stacklevel=2)
    if not is_float:
        mask = ops.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _none_or_dtype(input):
    return None if input is None else input.dtype


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    d = query.dim()
    if d not in (2, 3):
        raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                             "%d-D query tensor" % d)
    kind = "batched (3-D)" if d == 3 else "unbatched (2-D)"
    if key.dim() != d or value.dim() != d:
        raise AssertionError("For %s `query`, expected `key` and `value` to be %d-D but found "
                             "%d-D and %d-D tensors respectively"
                             % (kind, d, key.dim(), value.dim()))
    if key_padding_mask is not None and key_padding_mask.dim() != d - 1:
        raise AssertionError("For %s `query`, expected `key_padding_mask` to be `None` or %d-D "
                             "but found %d-D tensor instead"
                             % (kind, d - 1, key_padding_mask.dim()))
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError("For %s `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                 "but found %d-D tensor instead" % (kind, attn_mask.dim()))
        if d == 2 and attn_mask.dim() == 3:
            want = (num_heads, query.shape[0], key.shape[0])
            if tuple(attn_mask.shape) != want:
                raise AssertionError("Expected `attn_mask` shape to be %s but got %s"
                                     % (want, attn_mask.shape))
    return d == 3


def _in_projection_packed(q, k, v, w, b=None):
    e = q.shape[-1]
    if k is v:
        if q is k:
            proj = linear(q, w, b)
            proj = proj.unflatten(-1, (3, e)).unsqueeze(0).transpose(0, -2).squeeze(-2)
            proj = proj.contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([e, e * 2])
        b_q, b_kv = (None, None) if b is None else b.split([e, e * 2])
        q_proj = linear(q, w_q, b_q)
        kv = linear(k, w_kv, b_kv)
        kv = kv.unflatten(-1, (2, e)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return q_proj, kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q = b_k = b_v = None
    if b is not None:
        b_q, b_k, b_v = b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    eq, ek, ev = q.shape[-1], k.shape[-1], v.shape[-1]
    for name, w, want in (("query", w_q, (eq, eq)), ("key", w_k, (eq, ek)),
                          ("value", w_v, (eq, ev))):
        if tuple(w.shape) != want:
            raise AssertionError("expecting %s weights shape of %s, but got %s"
                                 % (name, want, w.shape))
    for name, bb in (("query", b_q), ("key", b_k), ("value", b_v)):
        if bb is not None and tuple(bb.shape) != (eq,):
            raise AssertionError("expecting %s bias shape of %s, but got %s"
                                 % (name, (eq,), bb.shape))
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention over ``(L, N, E)`` (or unbatched ``(L, E)``) inputs, op for op as
    torch's (the weights path for ``need_weights``, else scaled_dot_product_attention)."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError("was expecting embedding dimension of %d, but got %d"
                             % (embed_dim_to_check, embed_dim))
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError("embed_dim %d not divisible by num_heads %d"
                             % (embed_dim, num_heads))
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError("key's sequence and batch dims %s do not match value's %s"
                                 % (key.shape[:2], value.shape[:2]))
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            b_q, b_k, b_v = in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight,
                                 v_proj_weight, b_q, b_k, b_v)
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError("key shape %s does not match value shape %s"
                                 % (key.shape, value.shape))
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError("The shape of the 2D attn_mask is %s, but should be %s."
                                   % (attn_mask.shape, (tgt_len, src_len)))
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            want = (bsz * num_heads, tgt_len, src_len)
            if tuple(attn_mask.shape) != want:
                raise RuntimeError("The shape of the 3D attn_mask is %s, but should be %s."
                                   % (attn_mask.shape, want))
        else:
            raise RuntimeError("attn_mask's dimension %d is not supported" % attn_mask.dim())
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = ops.cat([k, bias_k.repeat(1, bsz, 1)])
        v = ops.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_k is None \
        else static_k
    v = v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_v is None \
        else static_v
    if add_zero_attn:
        shape = (bsz * num_heads, 1, head_dim)
        k = ops.cat([k, zeros(shape, dtype=k.dtype, device=k.device)], 1)
        v = ops.cat([v, zeros(shape, dtype=v.dtype, device=v.device)], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError("Expected key_padded_mask.shape[0] to be %d, but got %d"
                                 % (bsz, key_padding_mask.shape[0]))
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError("Expected key_padded_mask.shape[1] to be %d, but got %d"
                                 % (src_len, key_padding_mask.shape[1]))
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(
            -1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights:
        e = q.shape[-1]
        q_scaled = q * math.sqrt(1.0 / float(e))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            weights = ops.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = ops.bmm(q_scaled, k.transpose(-2, -1))
        weights = softmax(weights, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = ops.bmm(weights, v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, out.shape[1])
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.shape[1])
    if not is_batched:
        out = out.squeeze(1)
    return out, None


__all__ += [
    "hardshrink", "softshrink", "tanhshrink", "glu", "pixel_shuffle", "pixel_unshuffle",
    "channel_shuffle", "native_channel_shuffle", "threshold_", "elu_", "celu_", "selu_",
    "leaky_relu_", "hardtanh_", "rrelu", "rrelu_", "dropout1d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "instance_norm", "rms_norm", "local_response_norm",
    "conv3d", "conv_transpose3d", "max_pool3d", "avg_pool3d", "adaptive_avg_pool3d",
    "adaptive_max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices", "lp_pool1d",
    "lp_pool2d", "lp_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d", "unfold", "fold",
    "upsample", "upsample_nearest", "upsample_bilinear", "gaussian_nll_loss", "poisson_nll_loss",
    "hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
    "multilabel_margin_loss", "multi_margin_loss", "triplet_margin_with_distance_loss",
    "gumbel_softmax", "pdist", "embedding_bag", "affine_grid", "grid_sample", "ctc_loss",
    "fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices", "conv_tbc",
]


def hardshrink(input, lambd=0.5):
    """``x`` where ``|x| > lambd``, else 0."""
    return Pointwise.apply(input, "hardshrink", (lambd,))


def softshrink(input, lambd=0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""
    return Pointwise.apply(input, "softshrink", (lambd,))


def tanhshrink(input):
    """``x - tanh(x)``."""
    return input - ops.tanh(input)


def glu(input, dim=-1):
    """``a * sigmoid(b)`` with ``a, b`` the two halves of ``input`` along ``dim``."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, input.dim(), "glu")
    if input.shape[d] % 2:
        raise RuntimeError("Halving dimension must be even, but dimension %d is size %d"
                           % (d, input.shape[d]))
    return Glu.apply(input, d)


def threshold_(input, threshold, value):
    return _act.threshold_(input, threshold, value)


def elu_(input, alpha=1.0):
    return elu(input, alpha, True)


def celu_(input, alpha=1.0):
    return celu(input, alpha, True)


def selu_(input):
    return selu(input, True)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    # (torch's F.hardtanh_ is the ATen op itself: no min_val > max_val check)
    return _inplace(input, _hardtanh_nocheck, min_val, max_val)


def _hardtanh_nocheck(input, min_val, max_val):
    return Hardtanh.apply(input, min_val, max_val)


_hardtanh_nocheck.__name__ = "hardtanh"


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Leaky ReLU with a random slope in ``[lower, upper]`` (training) or their mean."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if inplace:
        return _inplace(input, _rrelu_result, lower, upper, training)
    return _rrelu(input, lower, upper, training, False)


def _rrelu(input, lower, upper, training, is_result):
    x = input._array
    if not training:
        not_implemented_for(x, "leaky_relu_cpu", "biuc")
        return RreluWithNoise.apply(input, None, (lower + upper) / 2, is_result)
    not_implemented_for(x, "rrelu_with_noise_out_cpu", "biuc")
    if x.dtype == np.float16:
        raise NotImplementedError("\"rrelu_with_noise_out_cpu\" not implemented for 'Half'")
    return RreluWithNoise.apply(input, _rrelu_noise(x, lower, upper), None, is_result)


def _rrelu_result(input, lower, upper, training):
    return _rrelu(input, lower, upper, training, True)


_rrelu_result.__name__ = "rrelu"


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, True)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of ``(N, C, L)`` (or ``(C, L)``) with probability ``p``."""
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError("dropout1d: Expected 2D or 3D input, but received a %dD input. Note "
                           "that dropout1d exists to provide channel-wise dropout on inputs with "
                           "1 spatial dimension, a channel dimension, and an optional batch "
                           "dimension (i.e. 2D or 3D inputs)." % input.dim())
    if input.dim() == 3:
        return _feature_dropout_call(input, p, training, inplace)
    if inplace:
        input.unsqueeze_(0)
        return _feature_dropout_call(input, p, training, True).squeeze_(0)
    return _feature_dropout_call(input.unsqueeze(0), p, training, False).squeeze(0)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of ``(N, C, D, H, W)`` (or unbatched) with probability ``p``."""
    _check_p(p)
    nd = input.dim()
    if nd not in (4, 5):
        import warnings
        warnings.warn("dropout3d: Received a %d-D input to dropout3d, which is deprecated and "
                      "will result in an error in a future release. To retain the behavior and "
                      "silence this warning, please use dropout instead. Note that dropout3d "
                      "exists to provide channel-wise dropout on inputs with 3 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      "4D or 5D inputs)." % nd, stacklevel=2)
    if nd == 5:
        return _feature_dropout_call(input, p, training, inplace)
    if inplace:
        input.unsqueeze_(0)
        return _feature_dropout_call(input, p, training, True).squeeze_(0)
    return _feature_dropout_call(input.unsqueeze(0), p, training, False).squeeze(0)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU's self-normalising mean and variance."""
    _check_p(p)
    _check_p_native(p)
    if inplace:
        return _inplace(input, _dropout_impl, p, training, False, True) if training and p and \
            input.numel() else input
    return _dropout_impl(input, p, training, False, True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels."""
    _check_p(p)
    _check_p_native(p)
    if inplace:
        return _inplace(input, _dropout_impl, p, training, True, True) if training and p and \
            input.numel() else input
    return _dropout_impl(input, p, training, True, True)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-05):
    """Normalise each channel of each sample over its spatial dims (batch norm of the input
    seen as ``(1, N * C, ...)``); the running statistics take the batch mean."""
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError("Expected more than 1 spatial element when training, got input size %s"
                         % (input.shape,))
    return instance_norm_cxx(input, weight, bias, running_mean, running_var, use_input_stats,
                             momentum, eps)


def instance_norm_cxx(input, weight, bias, running_mean, running_var, use_input_stats,
                      momentum, eps):
    """``torch.instance_norm`` (C++ argument order, none of F.instance_norm's checks)."""
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    b, c = input.shape[0], input.shape[1]
    shape = (1, b * c) + tuple(input.shape[2:])

    def rep(t):
        return None if t is None else t.repeat(b)

    # NOTE: torch casts running statistics whose dtype is not the weight's (else the input's)
    # to it; they are written back with a cast.
    target = (input if weight is None else weight).dtype
    rm, rv = running_mean, running_var
    if rm is not None and rm.dtype != target:
        rm, rv = rm.to(target), (None if rv is None else rv.to(target))
    rm, rv = rep(rm), rep(rv)
    out = _normalization.batch_norm_cxx(input.contiguous().view(shape), rep(weight), rep(bias),
                                        rm, rv, use_input_stats, momentum, eps)
    if use_input_stats:     # (evaluation leaves the running statistics as they are)
        with _no_grad():
            if running_mean is not None:
                running_mean.copy_(rm.view(b, c).mean(0))
            if running_var is not None:
                running_var.copy_(rv.view(b, c).mean(0))
    return out.view(tuple(input.shape))


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``x / sqrt(mean(x^2) + eps) * weight`` over the last dims (eps: the dtype's eps)."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    k = len(normalized_shape)
    if input.dim() < k or tuple(input.shape[input.dim() - k:]) != tuple(normalized_shape):
        raise RuntimeError("Given normalized_shape=%s, expected input with shape [*, %s], but "
                           "got input of size%s" % (list(normalized_shape),
                                                    ", ".join(map(str, normalized_shape)),
                                                    list(input.shape)))
    not_implemented_for(input._array, "rms_norm", "biu")
    # NOTE: torch's composite: Half/BFloat16 computed in float32 (eps: float32's), the result
    # (times weight, promoted) cast back to input's dtype
    x = input.to(_dt.float32) if input.dtype in (_dt.float16, _dt.bfloat16) else input
    if eps is None:
        eps = float(_dt.finfo(x.dtype.to_real()).eps)
    axes = tuple(range(input.dim() - k, input.dim()))
    rms = ops.pow(x, 2).mean(axes, keepdim=True)
    out = x * ops.rsqrt(ops.arithmetic.AddScalar.apply(rms, eps))
    if weight is not None:
        out = out * weight
    return out if out.dtype == input.dtype else out.to(input.dtype)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Normalise each channel by the summed squares of its ``size`` neighbours."""
    dim = input.dim()
    if dim < 3:
        # (torch's message holds a run of 26 spaces from a line continuation)
        raise ValueError("Expected 3D or higher dimensionality" + " " * 26
                         + "input (got %d dimensions)" % dim)
    if input.numel() == 0:
        return input
    div = input * input
    if dim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = _pooling.avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = tuple(input.shape)
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = _pooling.avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.view(sizes)
    div = (div * alpha + k) ** beta
    return input / div


def _tuple(v, n, name="value"):
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            return tuple(int(x) for x in v) * n
        return tuple(int(x) for x in v)
    return (int(v),) * n


def _windows(x, k, s, d, nd):
    """Sliding windows over the last ``nd`` dims: (..., out..., k...) with dilation ``d``."""
    for i in range(nd):
        ax = 2 + i
        span = d[i] * (k[i] - 1) + 1
        x = x.unfold(ax, span, s[i])
        if d[i] > 1:
            x = x[..., ::d[i]]
    return x


def _lift(input, nd, op):
    if input.dim() == nd + 1:
        return input.unsqueeze(0), True
    if input.dim() != nd + 2:
        raise RuntimeError("%s: Expected %dD (unbatched) or %dD (batched) input, but got input "
                           "of size: %s" % (op, nd + 1, nd + 2, list(input.shape)))
    return input, False


def _same_pads(k, d):
    pads = []
    for ki, di in zip(k, d):
        total = di * (ki - 1)
        pads.append((total // 2, total - total // 2))
    return pads


def _pool_out(n, k, s, p, d, ceil_mode):
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pool_setup(input, kernel_size, stride, padding, dilation, ceil_mode, nd, op):
    x, unbatched = _lift(input, nd, op)
    k = _tuple(kernel_size, nd)
    s = _tuple(stride, nd) if stride is not None and stride != [] and stride != () else k
    p, d = _tuple(padding, nd), _tuple(dilation, nd)
    for i in range(nd):
        if p[i] * 2 > k[i]:
            raise RuntimeError("pad should be at most half of effective kernel size, but got "
                               "pad=%d, kernel_size=%d and dilation=%d" % (p[i], k[i], d[i]))
    insz = tuple(x.shape[2:])
    outs = tuple(_pool_out(insz[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(nd))
    # right padding so that every window (ceil_mode included) fits
    extra = [max((outs[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 - insz[i] - p[i], 0)
             for i in range(nd)]
    return x, unbatched, k, s, p, d, insz, outs, extra


def avg_pool_nd(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override, nd, op="avg_pool3d"):
    """N-d average pooling with torch's divisor rules."""
    x, unbatched, k, s, p, d, insz, outs, extra = _pool_setup(
        input, kernel_size, stride, padding, 1, ceil_mode, nd, op)
    flat = []
    for i in reversed(range(nd)):
        flat += [p[i], extra[i]]
    xp_ = pad(x, flat) if any(flat) else x
    win = _windows(xp_, k, s, d, nd)
    win = win[(slice(None), slice(None)) + tuple(slice(0, o) for o in outs)]
    total = win.reshape(tuple(win.shape[:2 + nd]) + (-1,)).sum(-1)
    if divisor_override:
        out = total / divisor_override
    else:
        xp = xp_of(x)
        div = xp.ones(outs, dtype=x._array.dtype)
        for i in range(nd):
            start = np.arange(outs[i]) * s[i] - p[i]  # host: index arithmetic
            end = np.minimum(start + k[i], insz[i] + p[i])  # host: index arithmetic
            size = end - start
            if not count_include_pad:
                size = np.minimum(end, insz[i]) - np.maximum(start, 0)  # host: index arithmetic
            shape = (1,) * i + (-1,) + (1,) * (nd - 1 - i)
            div = div * xp.asarray(size.astype(x._array.dtype)).reshape(shape)
        out = total / Tensor._wrap(div)
    return out.squeeze(0) if unbatched else out


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _adaptive_bins(n_in, n_out):
    return [((i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)) for i in range(n_out)]


def _adaptive_sizes(output_size, insz):
    nd = len(insz)
    if not isinstance(output_size, (list, tuple)):
        output_size = (output_size,) * nd
    return tuple(insz[i] if o is None else int(o) for i, o in enumerate(output_size))


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool3d(input, output_size, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool2d(input, output_size, True)


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd):
    k = _tuple(kernel_size, nd)
    avg = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}[nd]
    out = avg(input.pow(norm_type), k, stride, 0, ceil_mode)
    return (ops.sign(out) * relu(ops.abs(out))).mul(math.prod(k)).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``(sum over each window of x^p)^(1/p)``. Matches ``torch.nn.functional.lp_pool1d``."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-D power-average pooling. Matches ``torch.nn.functional.lp_pool2d``."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-D power-average pooling. Matches ``torch.nn.functional.lp_pool3d``."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, nd):
    return _pooling.max_unpool(input, indices, kernel_size, stride, padding, output_size, nd)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Place each value at its ``indices`` in a zero ``(N, C, L_out)``."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool2d``."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool3d``."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)


def _warn_upsample(name):
    """torch's deprecation warning of the ``upsample`` functions (on every call)."""
    _warnings.warn("`nn.functional.%s` is deprecated. Use `nn.functional.interpolate` instead."
                   % name, stacklevel=3)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of ``interpolate``."""
    _warn_upsample("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    _warn_upsample("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    _warn_upsample("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


_ANY_BOOL_MSG = (
    "any() received an invalid combination of arguments - got (bool), but expected one of:\n"
    " * (Tensor input, *, Tensor out = None)\n"
    " * (Tensor input, tuple of ints dim = None, bool keepdim = False, *, Tensor out = None)\n"
    " * (Tensor input, int dim, bool keepdim = False, *, Tensor out = None)\n")


def gaussian_nll_loss(input, target, var, full=False, eps=1e-06, reduction="mean"):
    """``0.5 (log(max(var, eps)) + (input - target)^2 / max(var, eps))`` (+ const)."""
    if _ac_state.autocast:
        input, target, var = _autocast.inputs("fp32", (input, target, var))
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ops.ones_like(input)
    elif not isinstance(var, Tensor):
        raise TypeError(_ANY_BOOL_MSG)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with _no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (ops.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-08,
                     reduce=None, reduction="mean"):
    """Negative log likelihood of ``target ~ Poisson(input)``."""
    if _ac_state.autocast:
        input, target = _autocast.inputs("fp32", (input, target))
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = ops.exp(input) - target * input
    else:
        loss = input - target * ops.log(input + eps)
    if full:
        # NOTE: torch's terms on the target as given (before broadcasting): t * log(t) is NaN
        # at t <= 0, masked off in the value but not in the gradient, as torch.
        with errstate(divide="ignore", invalid="ignore"):
            stirling = target * ops.log(target) - target + 0.5 * ops.log(2 * math.pi * target)
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """``x`` for target 1, ``max(0, margin - x)`` for target -1."""
    if _ac_state.autocast:
        input, target = _autocast.inputs("fp32", (input, target))
    reduction = _legacy_reduction(size_average, reduce, reduction)
    zeros_ = ops.zeros_like(input)
    margin_clamp = ops.clamp_min(ops.sub(ops.full_like(input, margin), input), 0)
    out_margin = ops.where(target != 1, margin_clamp, zeros_)
    out_self = ops.where(target != -1, input, zeros_)
    return _reduce(out_margin + out_self, reduction)


def _promote_np(a, b):
    """torch's promotion of two NumPy dtypes (NumPy has none for float16 with bfloat16)."""
    return _dt.promote_types(_dt.from_numpy_dtype(a), _dt.from_numpy_dtype(b)).np


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``log(1 + exp(-target * input))``."""
    if _ac_state.autocast:
        input, target = _autocast.inputs("fp32", (input, target))
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if target.requires_grad and is_grad_enabled():
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect "
                           "to argument 'target'. This input cannot have requires_grad True.")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError("%s is not a valid value for reduction" % reduction)
    x, target_arr = input._array, target._array
    # torch: neg_out(out, input).mul_(target).exp_().log1p_() into an input-shaped output
    if x.dtype == np.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    if target_arr.shape != x.shape:
        full = tuple(_check_shapes_broadcast("soft_margin_loss", x.shape, target_arr.shape))
        if full != x.shape:
            raise RuntimeError("output with shape %s doesn't match the broadcast shape %s"
                               % (list(x.shape), list(full)))
        target_arr = xp_of(target).broadcast_to(target_arr, x.shape)
    _loss._cast_check(_promote_np(x.dtype, target_arr.dtype), x.dtype)
    if x.dtype.kind in "iu":
        _loss._cast_check(_dt.get_default_dtype().np, x.dtype)
    _loss._complex_autograd_check(input, "soft_margin_loss")
    return _SoftMarginLoss.apply(input, target_arr, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Per-class binary logistic loss averaged over classes."""
    if _ac_state.autocast:
        input, target, weight = _autocast.inputs("fp32", (input, target, weight))
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(dim=input.dim() - 1) / input.shape[-1]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


def _margin_frames(input, target, what):
    """torch's shape checks of the margin losses: ``(nframe, dim)``."""
    nd = input.dim()
    if not ((nd == 2 and input.shape[1] != 0) or (nd == 1 and input.shape[0] != 0) or nd == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, "
                           "but got: %s" % list(input.shape))
    nframe, dim = (1, 1 if nd == 0 else input.shape[0]) if nd <= 1 else tuple(input.shape)
    if what == "multilabel":
        ok = target.dim() <= 1 and target.numel() == dim if nd <= 1 else \
            target.dim() == 2 and tuple(target.shape) == (nframe, dim)
        if not ok:
            raise RuntimeError("inconsistent target size: %s for input of size: %s"
                               % (list(target.shape), list(input.shape)))
    elif not (target.dim() <= 1 and target.numel() == nframe):
        raise RuntimeError("inconsistent target size, expected %d but got %s"
                           % (nframe, list(target.shape)))
    return nframe, dim


def _long_target(target, what="Long"):
    if target._array.dtype != np.int64:
        raise RuntimeError("expected scalar type %s but found %s"
                           % (what, _dt.scalar_type_name(target._array.dtype)))


def _empty_margin_loss(input, target, reduction, frames):
    # NOTE: torch returns its uninitialised output for an empty mean/sum; ember gives 0.
    shape = (input.shape[0],) if reduction == "none" and frames else ()
    return zeros(shape, dtype=input.dtype, device=input.device)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``sum_{j in targets, i not} max(0, 1 - (x_j - x_i)) / C`` (targets end at the first -1)."""
    if _ac_state.autocast:
        input, target = _autocast.inputs("fp32", (input, target))
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _, dim = _margin_frames(input, target, "multilabel")
    if input.numel() == 0:
        _loss._complex_autograd_check(input, "multilabel_margin_loss")
        if input._array.dtype.kind != "f":    # (bfloat16 too: torch has no kernel for it)
            return _empty_margin_loss(input, target, reduction, target.dim() > 1)
        return _loss.MultilabelMarginLoss.apply(input, target, reduction)
    t = target._array
    if t.size and (float(t.min()) < -1 or float(t.max()) >= dim):
        raise RuntimeError("argument #2 'target' is out of range")
    not_implemented_for(input._array, "multilabel_margin_loss_forward_out_frame", "biuc")
    _long_target(target)
    return _loss.MultilabelMarginLoss.apply(input, target, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """``sum_{i != y} max(0, margin - x_y + x_i)^p / C`` (times ``weight[y]``)."""
    if _ac_state.autocast:
        input, target, weight = _autocast.inputs("fp32", (input, target, weight))
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _, dim = _margin_frames(input, target, "multi")
    if weight is not None and not (weight.dim() <= 1 and weight.numel() == dim):
        raise RuntimeError("inconsistent weight size, expected %d but got %s"
                           % (dim, list(weight.shape)))
    if input.numel() == 0:
        _loss._complex_autograd_check(input, "multi_margin_loss")
        if input._array.dtype.kind != "f":    # (bfloat16 too: torch has no kernel for it)
            return _empty_margin_loss(input, target, reduction, target.dim() > 0)
        return _loss.MultiMarginLoss.apply(input, target, p, margin, weight, reduction)
    name = _dt.scalar_type_name(input._array.dtype)
    if name not in ("Float", "Double"):     # (no reduced-precision kernel either)
        raise NotImplementedError("\"multi_margin_loss_cpu_kernel\" not implemented for '%s'"
                                  % name)
    _long_target(target)
    if weight is not None and weight._array.dtype != input._array.dtype:
        _long_target(weight, _dt.scalar_type_name(input._array.dtype))
    t = target._array
    if t.size and (int(t.min()) < 0 or int(t.max()) >= dim):
        raise RuntimeError("target out of range")
    return _loss.MultiMarginLoss.apply(input, target, p, margin, weight, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with a custom distance (pairwise by default)."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if margin <= 0:
        raise ValueError("TripletMarginWithDistanceLoss: expected margin to be greater than 0, "
                         "got %s instead" % margin)
    _triplet_dims(anchor, positive, negative)
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = ops.minimum(d_neg, dist(positive, negative))
    loss = ops.clamp_min(margin + d_pos - d_neg, 0)
    return _reduce(loss, reduction)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """Softmax of ``(logits + Gumbel noise) / tau``; ``hard`` gives straight-through one-hots."""
    gumbels = -ops.empty_like(logits).exponential_().log()
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = ops.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def pdist(input, p=2):
    """The ``p``-norm distances of all row pairs ``i < j`` of a 2-D input."""
    if input.dim() != 2:
        raise RuntimeError("pdist only supports 2D tensors, got: %dD" % input.dim())
    if input._array.dtype.kind not in "fV":
        raise RuntimeError("pdist only supports floating-point dtypes")
    if not p >= 0:      # (NaN too)
        raise RuntimeError("pdist only supports non-negative p values")
    return _loss.Pdist.apply(input, float(p))


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sum, mean or max of the embedding rows of each bag."""
    if weight.dtype == _dt.int64 and input.is_floating_point():
        import warnings
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        input, weight = weight, input
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError("embedding_bag: If per_sample_weights (%s) is not None, then it must "
                         "have the same shape as the input (%s)"
                         % (_size_str(per_sample_weights.shape), _size_str(input.shape)))
    if weight.dim() != 2:
        raise ValueError("weight has to be a 2D Tensor, but got Tensor of dimension %d"
                         % weight.dim())
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found "
                             "offsets of type %s" % ("<class 'torch.Tensor'>"
                                                     if isinstance(offsets, Tensor)
                                                     else str(type(offsets))))
        b, length = input.shape
        offs = list(range(0, b * length, length)) if length else [0] * b
        flat = input.reshape(-1)
        psw = per_sample_weights.reshape(-1) if per_sample_weights is not None else None
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        # (torch promotes the indices and offsets to their common dtype before its checks)
        common = _dt.promote_types(input.dtype, offsets.dtype)
        input, offsets = input.to(common), offsets.to(common)
        # (other dtypes: the indices check of _embedding_bag raises)
        offs = [int(v) for v in offsets.tolist()] if offsets._array.dtype in (
            np.int64, np.int32) else []
        flat = input
        psw = per_sample_weights
    else:
        raise ValueError("input has to be 1D or 2D Tensor, but got Tensor of dimension %d"
                         % input.dim())
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")
    n = weight.shape[0]
    if padding_idx is not None:
        if padding_idx >= n or padding_idx < -n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = padding_idx + n if padding_idx < 0 else padding_idx
    if max_norm is not None:
        _no_grad_embedding_renorm_(weight, flat, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                  "per_sample_weights is only supported for mode='sum' (got "
                                  "mode='%s'). Please open a feature request on GitHub."
                                  % mode)
    return _embedding_bag(flat, weight, offs, psw, mode, include_last_offset, padding_idx,
                          offsets.type() if offsets is not None else "torch.LongTensor",
                          bool(scale_grad_by_freq), bool(sparse))


def _size_str(shape):
    return "torch.Size([%s])" % ", ".join(str(int(v)) for v in shape)


def _embedding_bag(flat, weight, offs, psw, mode, include_last_offset, padding_idx,
                   offsets_type="torch.LongTensor", scale=False, sparse=False):
    if flat._array.dtype not in (np.int64, np.int32):
        it = _index_type_name(flat)
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got %s instead (while "
                           "checking arguments for embedding_bag)" % it)
    if _dt.kind(weight._array.dtype) != "f":
        wt = weight.type() if weight._array.dtype.kind != "c" else \
            "CPU%sType" % _dt.scalar_type_name(weight._array.dtype)
        raise RuntimeError("Expected tensor for argument #1 'weight' to have one of the "
                           "following scalar types: Half, BFloat16, Float, Double; but got %s "
                           "instead (while checking arguments for embedding_bag)" % wt)
    if psw is not None and psw.dtype != weight.dtype:
        raise RuntimeError("Expected tensor for argument #1 'weight' to have the same type as "
                           "tensor for argument #1 'per_sample_weights'; but type %s does not "
                           "equal %s (while checking arguments for embedding_bag)"
                           % (weight.type(), psw.type()))
    length = flat.shape[0]
    if offs and offs[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           "has to start from position 0. However, got %d\n[ %s{} ]"
                           % (offs[0], offsets_type))
    if offs and offs[-1] > length:
        raise RuntimeError("offsets[-1] can not be greater than input's length %d but got "
                           "offsets[-1] of %d" % (length, offs[-1]))
    idx = flat._array.astype(np.int64)
    n = weight.shape[0]
    bad = xp_of(weight).flatnonzero((idx < 0) | (idx >= n))
    fbgemm = mode != "max" and padding_idx is None and weight.stride()[-1] == 1 and \
        weight._array.dtype in (np.float32, np.float16, _dt.bfloat16.np)
    if bad.size and fbgemm and (offs or not include_last_offset):
        bounds = offs + ([] if include_last_offset else [length])
        _fbgemm_index_error(idx, bounds, n)
        # (no bag reads them: the positions past offsets[-1], which the kernel drops)
        idx = xp_of(weight).where(xp_of(weight).arange(length) >= bounds[-1], 0, idx)
    elif bad.size:
        raise RuntimeError("embedding_bag: Expected idx >= 0 && idx < num_embeddings but found "
                           "idx to be %d" % int(idx[int(bad[0])]))
    xp = xp_of(weight)
    n_bags = len(offs) - 1 if include_last_offset else len(offs)
    starts = xp.asarray(offs[:n_bags] if n_bags > 0 else [], dtype=np.int64)
    pos = xp.arange(length)
    bags = xp.searchsorted(starts, pos, side="right") - 1
    if include_last_offset and offs and mode != "max" and padding_idx is None \
            and weight._array.dtype in (np.float32, np.float16, _dt.bfloat16.np) \
            and weight.stride()[-1] == 1:
        bags = xp.where(pos >= offs[-1], -2, bags)   # (torch's fast path drops them ...)
    # ... and its other paths let the positions past offsets[-1] join the last bag.
    if padding_idx is not None:
        bags = xp.where(idx == padding_idx, -1, bags)
    return _sparse.EmbeddingBag.apply(weight, psw, idx, bags.astype(np.int64), max(n_bags, 0),
                                      mode, scale, sparse, padding_idx)


def _fbgemm_index_error(idx, offs, n):
    """torch's error for an index outside ``[0, n)`` in its fbgemm sum/mean kernel: the bags
    (``offs``: their starts and the end) go in one chunk per thread, and the failing chunk's
    report reads its indices from the chunk's start but walks the absolute offsets (so the
    position it names, or its ``i < index_size`` check, is the chunk's)."""
    bags = len(offs) - 1
    if bags <= 0:
        return
    threads = max(1, min(_creation.get_num_threads(), bags))
    chunk = -(-bags // threads)
    for start in range(0, bags, chunk):
        end = min(start + chunk, bags)
        base, size = offs[start], offs[end] - offs[start]
        seg = idx[base:base + size]
        if not bool(((seg < 0) | (seg >= n)).any()):
            continue
        for m in range(start, end):
            for i in range(offs[m], offs[m + 1]):
                if not i < size:
                    raise RuntimeError("Expected i < index_size to be true, but got false.  "
                                       "(Could this error message be improved?  If so, please "
                                       "report an enhancement request to PyTorch.)")
                v = int(idx[base + i])
                if not 0 <= v < n:
                    raise RuntimeError("Index %d of input takes value %d which is not in the "
                                       "valid range [0, %d)" % (i, v, n))
        return


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of the affine maps ``theta`` (N, 2, 3) or (N, 3, 4)."""
    if align_corners is None:
        _warnings.warn(_vision.ALIGN_CORNERS_WARNING, stacklevel=2)
        align_corners = False
    align_corners = bool(align_corners)
    if not theta.is_floating_point():
        raise ValueError("Expected theta to have floating point type, but got %s"
                         % theta.dtype)
    nd = len(size) - 2
    if nd not in (2, 3):
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  "affine transforms, respectively. Got size %s." % (size,))
    if theta.dim() != 3 or tuple(theta.shape[1:]) != (nd, nd + 1):
        raise ValueError("Expected a batch of %dD affine matrices of shape Nx%dx%d for size %s. "
                         "Got %s." % (nd, nd, nd + 1, size, theta.shape))
    if align_corners and min(size[2:]) == 1:
        _warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                       "grids when align_corners=True. This is not an intended use case of "
                       "affine_grid. See the documentation of affine_grid for details.",
                       stacklevel=2)
    elif min(size) <= 0:
        raise ValueError("Expected non-zero, positive output size. Got %s" % (size,))
    return _vision.AffineGridGenerator.apply(theta, [int(v) for v in size], align_corners)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)


