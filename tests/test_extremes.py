"""Numerical extremes: activations, losses and normalisations at +-1e4, +-100, 0, tiny, denormal.

Every op runs in float32 and float64 on arrays filled with one extreme value (both signs) and on
mixed arrays holding several extremes at once; ``oracle.compare`` checks the outputs and the
gradients of a random upstream gradient against PyTorch (same finite values within tolerance,
same inf/nan pattern where torch's result is not finite).
"""
import numpy as np
import pytest

from oracle import compare

RTOL = {np.float32: 1e-4, np.float64: 1e-6}
ATOL = {np.float32: 1e-5, np.float64: 1e-9}
SHAPE = (4, 6)


def _magnitudes(dtype):
    """The extreme magnitudes: huge, large, tiny, smallest normal, denormal."""
    denormal = 1e-42 if dtype == np.float32 else 1e-310
    return {"1e4": 1e4, "100": 100.0, "1e-30": 1e-30, "fmin": float(np.finfo(dtype).tiny),
            "denormal": denormal}


def _inputs(dtype):
    """Named input arrays of ``SHAPE``: constant fills, random-sign fills and mixtures."""
    rng = np.random.default_rng(1)
    n = int(np.prod(SHAPE))
    out = {"0": np.zeros(SHAPE, dtype)}
    mags = _magnitudes(dtype)
    for name, m in mags.items():
        out["+" + name] = np.full(SHAPE, m, dtype)
        out["-" + name] = np.full(SHAPE, -m, dtype)
        out["+-" + name] = (m * rng.choice([-1.0, 1.0], SHAPE)).astype(dtype)
    every = [s * m for m in mags.values() for s in (1.0, -1.0)] + [0.0]
    mixed = np.array(every + list(rng.standard_normal(n - len(every))))
    out["mixed"] = rng.permutation(mixed).reshape(SHAPE).astype(dtype)
    big = [1e4, -1e4, 100.0, -100.0] * (n // 4)
    out["mixed_big"] = rng.permutation(np.array(big)).reshape(SHAPE).astype(dtype)
    small = [0.0, 1e-30, -1e-30, mags["fmin"], -mags["fmin"], mags["denormal"],
             -mags["denormal"], 1.0]
    out["mixed_small"] = rng.permutation(np.array(small * (n // 8))).reshape(SHAPE).astype(dtype)
    out["mixed_rows"] = np.array(
        [[1e4, -1e4, 0.0, 1.0, 100.0, -100.0],
         [1e4, 1e4, 1e4, 1e4, 1e4, -1e4],
         [-1e4, -1e4, -1e4, -1e4, -100.0, -1e4],
         [mags["denormal"], 0.0, -mags["denormal"], mags["fmin"], 1e-30, 100.0]], dtype)
    return out


DTYPES = [np.float32, np.float64]
INPUT_NAMES = list(_inputs(np.float32))


def _flip(x):
    return x[::-1, ::-1].copy()


def _check_all(torch, dtype, make_args, fn, **kw):
    """``compare`` on every extreme input; one failure lists every input set that failed."""
    failures = []
    for key, x in _inputs(dtype).items():
        try:
            compare(torch, fn, *make_args(x), rtol=RTOL[dtype], atol=ATOL[dtype], **kw)
        except AssertionError as e:
            failures.append("%s: %s" % (key, str(e).strip().splitlines()[:8]))
    assert not failures, "\n".join(failures)


ACTIVATIONS = {
    "relu": lambda F, x: F.relu(x),
    "relu6": lambda F, x: F.relu6(x),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.01),
    "leaky_relu_big": lambda F, x: F.leaky_relu(x, 3.0),
    "elu": lambda F, x: F.elu(x),
    "elu_alpha": lambda F, x: F.elu(x, 0.3),
    "selu": lambda F, x: F.selu(x),
    "celu": lambda F, x: F.celu(x),
    "celu_alpha": lambda F, x: F.celu(x, 0.05),
    "gelu": lambda F, x: F.gelu(x),
    "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"),
    "silu": lambda F, x: F.silu(x),
    "mish": lambda F, x: F.mish(x),
    "softplus": lambda F, x: F.softplus(x),
    "softplus_beta2": lambda F, x: F.softplus(x, beta=2.0, threshold=5.0),
    "softplus_beta05": lambda F, x: F.softplus(x, beta=0.5, threshold=50.0),
    "softplus_beta1e3": lambda F, x: F.softplus(x, beta=1e3, threshold=20.0),
    "softsign": lambda F, x: F.softsign(x),
    "sigmoid": lambda F, x: F.sigmoid(x),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "tanh": lambda F, x: F.tanh(x),
    "hardtanh": lambda F, x: F.hardtanh(x),
    "hardtanh_range": lambda F, x: F.hardtanh(x, -50.0, 200.0),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "hardswish": lambda F, x: F.hardswish(x),
    "softmax": lambda F, x: F.softmax(x, dim=1),
    "softmax_dim0": lambda F, x: F.softmax(x, dim=0),
    "log_softmax": lambda F, x: F.log_softmax(x, dim=1),
    "log_softmax_dim0": lambda F, x: F.log_softmax(x, dim=0),
    "softmin": lambda F, x: F.softmin(x, dim=1),
    "threshold": lambda F, x: F.threshold(x, 0.0, -3.0),
    "threshold_big": lambda F, x: F.threshold(x, 100.0, 7.0),
}


@pytest.mark.parametrize("name", list(ACTIVATIONS))
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_activation(torch, name, dtype):
    fn = ACTIVATIONS[name]
    _check_all(torch, dtype, lambda x: (x,), lambda L, t: fn(L.nn.functional, t))
