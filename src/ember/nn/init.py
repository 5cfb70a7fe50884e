"""Parameter initialisation, with torch's distributions and ``calculate_gain``.

Random initialisers draw on the host from ember's Generator (torch's CPU stream, so
``manual_seed(s)`` gives torch's initial weights, whatever the device) and write the sample into
the tensor's device array; the constant ones build their values on the tensor's device.
"""
import math
import warnings

import numpy as np

from ..autograd.grad_mode import no_grad
from ..backend import backend_of, get_array_module, to_host
from ..ops._util import not_implemented_for
from ..random import _gen

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "zeros_", "ones_", "eye_",
           "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
           "trunc_normal_", "orthogonal_", "sparse_", "uniform", "normal", "constant",
           "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal"]


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for ``nonlinearity`` (torch's table)."""
    linear = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d"]
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError("negative_slope %s not a valid number" % param)
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError("Unsupported nonlinearity %s" % nonlinearity)


def _set(tensor, arr):
    """Write ``arr`` (a host sample or an array on ``tensor``'s device) into ``tensor``."""
    dst = tensor._array
    src = arr.astype(dst.dtype, copy=False)
    if type(src) is not type(dst):
        src = backend_of(dst).asarray(src)
    with no_grad():
        dst[...] = src
        tensor._version_ref[0] += 1
    return tensor


def _xp(tensor):
    return get_array_module(tensor._array)


def _fans(tensor):
    shape = tensor._array.shape
    if len(shape) < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = math.prod(shape[2:]) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


_calculate_fan_in_and_fan_out = _fans


def _calculate_correct_fan(tensor, mode):
    """fan_in or fan_out of ``tensor``, as ``mode`` (case-insensitive) names."""
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _fans(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with U(a, b): torch's ``tensor.uniform_(a, b)`` (complex: both parts)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with N(mean, std^2): torch's ``tensor.normal_(mean, std)`` (complex: each part
    with std / sqrt(2))."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _norm_cdf(x):
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with N(mean, std^2) truncated to [a, b] (torch's rejection sampler: whole-tensor
    redraws of the rejected values, from the normal itself when [a, b] holds more than 30% of
    the mass, else uniform proposals on [a, b])."""
    if tensor.is_meta:      # (no storage: nothing to sample)
        return tensor
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    gen, d = _gen(generator), tensor._array.dtype
    shape, n = tensor._array.shape, tensor._array.size
    # The first draw is the tensor's own (torch's dtype errors); the rejection sampling runs on
    # the host, where the generator is.
    if _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std) > 0.3:
        with no_grad():
            tensor.normal_(mean, std, generator=generator)
        not_implemented_for(tensor._array, "lt_cpu", "c")
        lo, hi = d.type(a), d.type(b)
        result = to_host(tensor._array)
        while True:
            mask = (result < lo) | (result > hi)
            if not mask.any():
                break
            fresh = gen._normal(n, d, mean, std).reshape(shape)
            result = np.where(mask, fresh, result)    # host: the host sample
        return _set(tensor, result)
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2

    def log_pdf(x):
        return ((x - d.type(mean)) / d.type(std)) ** 2 * d.type(-0.5) - d.type(log_peak)

    def accept_log_u():
        u = gen._uniform(n, d).reshape(shape)
        return np.log(u.astype(np.float64)).astype(d)    # host: the host sample

    with no_grad():
        tensor.uniform_(a, b, generator=generator)
    if d.kind == "c":       # (torch fails comparing its complex acceptance draws)
        tensor.new_empty(shape).uniform_(generator=generator)
        not_implemented_for(tensor._array, "gt_cpu", "c")
    result = to_host(tensor._array)
    pending = accept_log_u() > log_pdf(result)
    while pending.any():
        cand = gen._uniform(n, d, a, b).reshape(shape)
        result = np.where(pending, cand, result)    # host: the host sample
        pending = np.where(pending, accept_log_u() > log_pdf(cand), pending)    # host: sample
    return _set(tensor, result)


def constant_(tensor, val):
    """Fill with ``val`` (``fill_`` without grad, as torch, with its checks)."""
    with no_grad():
        return tensor.fill_(val)


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)


def eye_(tensor):
    """The identity matrix (2-D tensors)."""
    if tensor._array.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _set(tensor, _xp(tensor).eye(*tensor._array.shape, dtype=tensor._array.dtype))


def dirac_(tensor, groups=1):
    """The Dirac delta (3-5-D conv weights): identity convolution."""
    shape = tensor._array.shape
    if len(shape) not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    if shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    xp = _xp(tensor)
    out = xp.zeros(shape, dtype=tensor._array.dtype)
    per = shape[0] // groups
    m = min(per, shape[1])
    rows = [g * per + d for g in range(groups) for d in range(m)]
    cols = [d for _ in range(groups) for d in range(m)]
    if rows:
        out[(xp.asarray(rows), xp.asarray(cols)) + tuple(s // 2 for s in shape[2:])] = 1
    return _set(tensor, out)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    if 0 in tensor._array.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-b, b) with b = gain * sqrt(3 / fan) (He et al.)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std^2) with std = gain / sqrt(fan) (He et al.)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix from the QR decomposition of a normal sample (torch's)."""
    if tensor._array.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor._array.size == 0 or tensor.is_meta:
        return tensor
    rows = tensor._array.shape[0]
    cols = tensor._array.size // rows
    d = tensor._array.dtype
    # The decomposition runs on the host sample, before it goes to the device.
    with no_grad():
        flat = to_host(tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)._array)
    if d.kind == "c":
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex "
                                  "numbers. Please use torch.sgn instead.")
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)    # host: the host sample
    q = q * np.sign(np.diag(r))    # host: the host sample
    if rows < cols:
        q = q.T
    return _set(tensor, (q * d.type(gain)).reshape(tensor._array.shape))


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """A 2-D tensor with ``sparsity`` of each column zero, the rest N(0, std^2)."""
    if tensor._array.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor._array.shape
    zeros = int(math.ceil(sparsity * rows))
    normal_(tensor, 0, std, generator)
    out = tensor._array.copy()
    for c in range(cols):
        # torch draws each column's permutation from the global generator
        idx = _gen(None)._randperm(rows)[:zeros]
        out[idx.tolist(), c] = 0
    return _set(tensor, out)


def _make_deprecate(meth):
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(
            f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
            FutureWarning,
            stacklevel=2,
        )
        return meth(*args, **kwargs)

    deprecated_init.__doc__ = f"""{old_name}(...): deprecated alias of ``nn.init.{new_name}``."""
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)
