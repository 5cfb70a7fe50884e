"""Parameter initialisation, with torch's distributions and ``calculate_gain``.

Random initialisers draw on the host from ember's Generator (one stream of numbers whatever
the device) and write the sample into the tensor's device array; the constant ones build
their values on the tensor's device.
"""
import math

import numpy as np

from ..autograd.grad_mode import no_grad
from ..backend import backend_of, get_array_module
from ..random import _rng

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


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with U(a, b)."""
    return _set(tensor, _rng(generator).uniform(a, b, tensor._array.shape))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with N(mean, std^2)."""
    return _set(tensor, _rng(generator).normal(mean, std, tensor._array.shape))


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with N(mean, std^2) truncated to [a, b] (resampling outside values)."""
    rng = _rng(generator)
    n = tensor._array.size
    out = np.empty(0)    # host: the sample, grown until it has n values in [a, b]
    while out.size < n:
        s = rng.normal(mean, std, max(2 * (n - out.size), 16))
        out = np.concatenate([out, s[(s >= a) & (s <= b)]])    # host: the sample
    return _set(tensor, out[:n].reshape(tensor._array.shape))


def constant_(tensor, val):
    """Fill with ``val``."""
    arr = tensor._array
    return _set(tensor, _xp(tensor).full(arr.shape, val, dtype=arr.dtype))


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
    a = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    if 0 in tensor._array.shape:
        return None
    fan_in, fan_out = _fans(tensor)
    if mode not in ("fan_in", "fan_out"):
        raise ValueError("Mode %s not supported, please use one of fan_in, fan_out" % mode)
    fan = fan_in if mode == "fan_in" else fan_out
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
    """A (semi-)orthogonal matrix from the QR decomposition of a normal sample."""
    if tensor._array.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    rows = tensor._array.shape[0]
    cols = tensor._array.size // rows
    # The decomposition runs on the host sample, before it goes to the device.
    flat = _rng(generator).normal(0, 1, (rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)    # host: the host sample
    q *= np.sign(np.diag(r))    # host: the host sample
    if rows < cols:
        q = q.T
    return _set(tensor, gain * q.reshape(tensor._array.shape))


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """A 2-D tensor with ``sparsity`` of each column zero, the rest N(0, std^2)."""
    if tensor._array.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor._array.shape
    rng = _rng(generator)
    out = rng.normal(0, std, (rows, cols))
    zeros = int(math.ceil(sparsity * rows))
    for c in range(cols):
        out[rng.permutation(rows)[:zeros], c] = 0
    return _set(tensor, out)


uniform, normal, constant = uniform_, normal_, constant_
xavier_uniform, xavier_normal = xavier_uniform_, xavier_normal_
kaiming_uniform, kaiming_normal = kaiming_uniform_, kaiming_normal_
