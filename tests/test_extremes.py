"""Numerical extremes: activations, losses and normalisations at +-1e4, +-100, 0, tiny, denormal.

Every op runs in float32 and float64 on arrays filled with one extreme value (both signs) and on
mixed arrays holding several extremes at once; ``oracle.compare`` checks the outputs and the
gradients of a random upstream gradient against PyTorch (same finite values within tolerance,
same inf/nan pattern where torch's result is not finite). In-place activations and second-order
gradients (``create_graph=True``) are checked the same way.

Deliberate differences from torch, each checked where it occurs:
- normalisation: ember computes ``x - mean`` first, so where torch's float32 answer is
  cancellation noise ember may match torch's float64 answer instead (``_check_all``);
- eval ``batch_norm`` with a tiny running variance is exact at the running mean
  (``test_batch_norm_eval_tiny_var``);
- ``mish``'s second derivative is finite for large x, where torch's is nan (``test_second_order``).
"""
import numpy as np
import pytest

import ember
from oracle import compare, to_numpy

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


def _flip(x):
    return x[::-1, ::-1].copy()


def _check_all(torch, dtype, make_args, fn, cancels=False, **kw):
    """``compare`` on every extreme input; one failure lists every input set that failed.

    ``cancels`` marks ops whose results are sums of terms that cancel (normalisation: ``x -
    mean``, and a gradient ``g - mean(g) - xhat mean(g xhat)``). There an element near zero holds
    only rounding noise, which differs between two correct implementations, and a float32 torch
    result can be that noise (normalising a constant 1e4 row). Such a case may instead match
    torch within a tolerance scaled to the largest finite magnitude of each result (``NORMWISE``),
    or, in float32, torch run in float64 on the same values. The positions of non-finite values
    must still be torch's, but inf and nan may trade places there: with a zero ``var + eps``
    ember keeps ``(x - mean) * inf`` (+-inf, nan at the mean) where torch folds the mean into a
    bias, ``x * inf - mean * inf`` (nan), and its layer-norm backward gives an odd inf among nans.
    """
    failures = []
    for key, x in _inputs(dtype).items():
        args = make_args(x)
        try:
            compare(torch, fn, *args, rtol=RTOL[dtype], atol=ATOL[dtype], **kw)
        except AssertionError as e:
            if not (cancels and _close_normwise(torch, fn, args, kw.get("requires_grad"))):
                failures.append("%s: %s" % (key, str(e).strip().splitlines()[:8]))
    assert not failures, "\n".join(failures)


NORMWISE = {np.float32: 1e-6, np.float64: 1e-14}


def _close_normwise(torch, fn, args, requires_grad):
    """True when ember matches torch (same dtype or, for float32, float64) normwise."""
    dtype = next(a.dtype.type for a in args if a.dtype.kind == "f")
    mine = _run(ember, fn, args, requires_grad)
    refs = [_run(torch, fn, args, requires_grad)]
    if dtype == np.float32:
        wide = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in args]
        refs.append([None if r is None else r.astype(np.float32)
                     for r in _run(torch, fn, wide, requires_grad)])
    for ref in refs:
        try:
            for a, b in zip(mine, ref):
                if a is None:
                    continue
                fin = np.isfinite(b)
                np.testing.assert_array_equal(np.isfinite(a), fin)
                scale = float(np.abs(b[fin]).max()) if fin.any() else 0.0
                np.testing.assert_allclose(a[fin], b[fin], rtol=RTOL[dtype],
                                           atol=ATOL[dtype] + NORMWISE[dtype] * scale)
        except AssertionError:
            continue
        return True
    return False


def _run(lib, fn, arrays, requires_grad):
    """Outputs, then input gradients under ``compare``'s upstream gradient (seed 0)."""
    inputs = []
    for i, a in enumerate(arrays):
        t = lib.tensor(a.copy())
        if a.dtype.kind == "f" and (requires_grad is None or requires_grad[i]):
            t.requires_grad_(True)
        inputs.append(t)
    out = fn(lib, *inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    rng = np.random.default_rng(0)
    ups = [lib.tensor(rng.standard_normal(tuple(o.shape)).astype(np.float32).astype(
        to_numpy(o).dtype)) for o in outs]
    pairs = [(o, u) for o, u in zip(outs, ups) if o.requires_grad]
    lib.autograd.backward([o for o, _ in pairs], [u for _, u in pairs])
    return [to_numpy(o) for o in outs] + [to_numpy(t.grad) if t.requires_grad else None
                                          for t in inputs]


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


INPLACE = {
    "relu": lambda F, x: F.relu(x, inplace=True),
    "relu6": lambda F, x: F.relu6(x, inplace=True),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2, inplace=True),
    "elu": lambda F, x: F.elu(x, 0.5, inplace=True),
    "selu": lambda F, x: F.selu(x, inplace=True),
    "celu": lambda F, x: F.celu(x, 2.0, inplace=True),
    "silu": lambda F, x: F.silu(x, inplace=True),
    "mish": lambda F, x: F.mish(x, inplace=True),
    "hardtanh": lambda F, x: F.hardtanh(x, -2.0, 2.0, inplace=True),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x, inplace=True),
    "hardswish": lambda F, x: F.hardswish(x, inplace=True),
    "threshold": lambda F, x: F.threshold(x, 1e-30, 5.0, inplace=True),
}


@pytest.mark.parametrize("name", list(INPLACE))
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_activation_inplace(torch, name, dtype):
    fn = INPLACE[name]
    _check_all(torch, dtype, lambda x: (x,), lambda L, t: fn(L.nn.functional, t * 1))


@pytest.mark.parametrize("weight", ["scalar", "channels", "extreme_channels"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_prelu(torch, weight, dtype):
    w = {"scalar": np.array([0.25]), "channels": np.linspace(-2.0, 2.0, 6),
         "extreme_channels": np.array([1e4, -1e4, 100.0, 0.0, 1e-30, -1e-30])}[weight]
    _check_all(torch, dtype, lambda x: (x, w.astype(dtype)),
               lambda L, t, a: L.nn.functional.prelu(t, a))


def _probs(dtype):
    """A (4, 6) probability table with exact zeros and ones, rows summing to 1."""
    return np.array([[0.0, 1.0, 0.0, 0.0, 0.0, 0.0],
                     [0.5, 0.25, 0.125, 0.125, 0.0, 0.0],
                     [1 / 6] * 6,
                     [1e-30, 0.0, 0.7, 0.3 - 1e-30, 0.0, 0.0]], dtype)


TARGET = np.array([0, 5, 2, 3])
SIGNS = np.array([1, -1, 1, -1])


def _w(dtype, n=6):
    return np.linspace(0.5, 2.0, n).astype(dtype)


LOSSES = {
    "mse_loss": (lambda x: (x, _flip(x)), lambda F, a, b: F.mse_loss(a, b)),
    "mse_loss_none": (lambda x: (x, _flip(x)), lambda F, a, b: F.mse_loss(a, b, reduction="none")),
    "l1_loss": (lambda x: (x, _flip(x)), lambda F, a, b: F.l1_loss(a, b, reduction="sum")),
    "smooth_l1_loss": (lambda x: (x, _flip(x)), lambda F, a, b: F.smooth_l1_loss(a, b)),
    "smooth_l1_loss_beta": (lambda x: (x, _flip(x)),
                            lambda F, a, b: F.smooth_l1_loss(a, b, reduction="none", beta=150.0)),
    "smooth_l1_loss_beta0": (lambda x: (x, _flip(x)),
                             lambda F, a, b: F.smooth_l1_loss(a, b, beta=0.0)),
    "huber_loss": (lambda x: (x, _flip(x)), lambda F, a, b: F.huber_loss(a, b)),
    "huber_loss_delta": (lambda x: (x, _flip(x)),
                         lambda F, a, b: F.huber_loss(a, b, reduction="none", delta=150.0)),
    "cross_entropy": (lambda x: (x, TARGET), lambda F, a, t: F.cross_entropy(a, t)),
    "cross_entropy_none": (lambda x: (x, TARGET),
                           lambda F, a, t: F.cross_entropy(a, t, reduction="none")),
    "cross_entropy_weight": (lambda x: (x, TARGET, _w(x.dtype)),
                             lambda F, a, t, w: F.cross_entropy(a, t, w, ignore_index=2),
                             [True, False, False]),
    "cross_entropy_ignore": (lambda x: (x, TARGET),
                             lambda F, a, t: F.cross_entropy(a, t, ignore_index=5)),
    "cross_entropy_smooth": (lambda x: (x, TARGET),
                             lambda F, a, t: F.cross_entropy(a, t, label_smoothing=0.1)),
    "cross_entropy_probs": (lambda x: (x, _probs(x.dtype)),
                            lambda F, a, t: F.cross_entropy(a, t)),
    "cross_entropy_probs_smooth": (lambda x: (x, _probs(x.dtype)),
                                   lambda F, a, t: F.cross_entropy(a, t, reduction="sum",
                                                                   label_smoothing=0.2)),
    "nll_loss": (lambda x: (x, TARGET), lambda F, a, t: F.nll_loss(a, t)),
    "nll_loss_ignore": (lambda x: (x, TARGET),
                        lambda F, a, t: F.nll_loss(a, t, ignore_index=0, reduction="sum")),
    "nll_loss_weight": (lambda x: (x, TARGET, _w(x.dtype)),
                        lambda F, a, t, w: F.nll_loss(a, t, w, reduction="none"),
                        [True, False, False]),
    "bce_with_logits": (lambda x: (x, _probs(x.dtype)),
                        lambda F, a, t: F.binary_cross_entropy_with_logits(a, t)),
    "bce_with_logits_pos_weight": (
        lambda x: (x, _probs(x.dtype), _w(x.dtype), np.array([0.5, 1, 2, 3, 10, 100], x.dtype)),
        lambda F, a, t, w, pw: F.binary_cross_entropy_with_logits(a, t, w, reduction="none",
                                                                  pos_weight=pw),
        [True, True, False, False]),
    "kl_div": (lambda x: (x, _probs(x.dtype)),
               lambda F, a, t: F.kl_div(a, t, reduction="batchmean")),
    "kl_div_log_target": (lambda x: (x, _flip(x)),
                          lambda F, a, t: F.kl_div(a, t, reduction="none", log_target=True)),
    "cosine_embedding_loss": (lambda x: (x, _flip(x), SIGNS),
                              lambda F, a, b, y: F.cosine_embedding_loss(a, b, y, margin=0.5)),
    "margin_ranking_loss": (lambda x: (x, _flip(x), np.resize(SIGNS, x.shape).astype(x.dtype)),
                            lambda F, a, b, y: F.margin_ranking_loss(a, b, y, margin=0.1)),
    "cosine_similarity": (lambda x: (x, _flip(x)), lambda F, a, b: F.cosine_similarity(a, b)),
    "pairwise_distance": (lambda x: (x, _flip(x)), lambda F, a, b: F.pairwise_distance(a, b)),
    "pairwise_distance_p1": (lambda x: (x, np.roll(x, 1)),
                             lambda F, a, b: F.pairwise_distance(a, b, p=1.0, keepdim=True)),
    "pairwise_distance_p3": (lambda x: (x, _flip(x)),
                             lambda F, a, b: F.pairwise_distance(a, b, p=3.0, eps=0.0)),
    "triplet_margin_loss": (lambda x: (x, _flip(x), np.roll(x, 1)),
                            lambda F, a, p, n: F.triplet_margin_loss(a, p, n)),
    "triplet_margin_loss_swap": (lambda x: (x, _flip(x), np.roll(x, 1)),
                                 lambda F, a, p, n: F.triplet_margin_loss(a, p, n, p=1, swap=True,
                                                                          reduction="none")),
}


@pytest.mark.parametrize("name", list(LOSSES))
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_loss(torch, name, dtype):
    make_args, fn, *rg = LOSSES[name]
    _check_all(torch, dtype, make_args, lambda L, *t: fn(L.nn.functional, *t),
               requires_grad=rg[0] if rg else None)


def _prob_inputs(dtype):
    """Probabilities at the ends of [0, 1]: exact 0 and 1, tiny, denormal, 1 - eps."""
    mags = _magnitudes(dtype)
    eps = float(np.finfo(dtype).eps)
    vals = [0.0, 1.0, 1e-30, mags["fmin"], mags["denormal"], 1 - eps / 2, 1 - eps, 0.5]
    out = {k: np.full(SHAPE, v, dtype) for k, v in zip(
        ["0", "1", "1e-30", "fmin", "denormal", "1-eps/2", "1-eps", "0.5"], vals)}
    rng = np.random.default_rng(2)
    out["mixed"] = rng.permutation(np.array(vals * 3)).reshape(SHAPE).astype(dtype)
    return out


BCE = {
    "bce": lambda F, x, t, w: F.binary_cross_entropy(x, t),
    "bce_none": lambda F, x, t, w: F.binary_cross_entropy(x, t, reduction="none"),
    "bce_weight": lambda F, x, t, w: F.binary_cross_entropy(x, t, weight=w, reduction="sum"),
}


@pytest.mark.parametrize("name", list(BCE))
@pytest.mark.parametrize("target", ["zeros", "ones", "mixed"])
@pytest.mark.parametrize("target_grad", [False, True], ids=["", "target_grad"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_binary_cross_entropy(torch, name, target, target_grad, dtype):
    fn = BCE[name]
    t = {"zeros": np.zeros(SHAPE), "ones": np.ones(SHAPE),
         "mixed": np.resize([0.0, 1.0, 0.25, 1e-30], SHAPE)}[target].astype(dtype)
    failures = []
    for key, x in _prob_inputs(dtype).items():
        try:
            compare(torch, lambda L, *a: fn(L.nn.functional, *a), x, t, _w(dtype),
                    rtol=RTOL[dtype], atol=ATOL[dtype],
                    requires_grad=[True, target_grad, False])
        except AssertionError as e:
            failures.append("%s: %s" % (key, str(e).strip().splitlines()[:8]))
    assert not failures, "\n".join(failures)


def _with_running_stats(F, x):
    """Training batch_norm that also returns the updated running statistics."""
    lib = F.__name__.split(".")[0]
    lib = ember if lib == "ember" else __import__(lib)
    mean = lib.full((3,), 5.0, dtype=x.dtype)
    var = lib.full((3,), 2.0, dtype=x.dtype)
    out = F.batch_norm(x, mean, var, training=True, momentum=0.3)
    return out, mean.clone(), var.clone()


NORMS = {
    "batch_norm": (lambda x: (x, _w(x.dtype, 3), _w(x.dtype, 3)[::-1].copy()),
                   lambda F, x, w, b: F.batch_norm(x.reshape(2, 3, 4), None, None, w, b,
                                                   training=True)),
    "batch_norm_2d": (lambda x: (x,),
                      lambda F, x: F.batch_norm(x.reshape(2, 3, 2, 2), None, None,
                                                training=True, eps=1e-3)),
    "batch_norm_running": (
        lambda x: (x,),
        lambda F, x: _with_running_stats(F, x.reshape(2, 3, 4))),
    "batch_norm_eval": (lambda x: (x, np.array([1e4, -100.0, 0.0], x.dtype),
                                   np.array([1e8, 1.0, 1e-30], x.dtype)),
                        lambda F, x, m, v: F.batch_norm(x.reshape(8, 3), m, v),
                        [True, False, False]),
    "layer_norm": (lambda x: (x, _w(x.dtype), _w(x.dtype)[::-1].copy()),
                   lambda F, x, w, b: F.layer_norm(x, (6,), w, b)),
    "layer_norm_2d": (lambda x: (x,), lambda F, x: F.layer_norm(x.reshape(2, 2, 6), (2, 6))),
    "group_norm": (lambda x: (x, _w(x.dtype), _w(x.dtype)[::-1].copy()),
                   lambda F, x, w, b: F.group_norm(x.reshape(2, 6, 2), 3, w, b)),
    "group_norm_1": (lambda x: (x,), lambda F, x: F.group_norm(x.reshape(4, 3, 2), 1)),
    "layer_norm_eps0": (lambda x: (x,), lambda F, x: F.layer_norm(x, (6,), eps=0.0)),
    "group_norm_eps0": (lambda x: (x,), lambda F, x: F.group_norm(x.reshape(2, 6, 2), 2, eps=0.0)),
    "batch_norm_eval_eps0": (lambda x: (x, np.array([1e4, -100.0, 0.0], x.dtype),
                                        np.array([1e8, 1.0, 0.0], x.dtype)),
                             lambda F, x, m, v: F.batch_norm(x.reshape(8, 3), m, v, eps=0.0),
                             [True, False, False]),
    "normalize": (lambda x: (x,), lambda F, x: F.normalize(x)),
    "normalize_p3_eps0": (lambda x: (x,), lambda F, x: F.normalize(x, p=3.0, dim=-1, eps=0.0)),
    "normalize_p1_dim0": (lambda x: (x,), lambda F, x: F.normalize(x, p=1.0, dim=0)),
}


@pytest.mark.parametrize("name", list(NORMS))
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_normalization(torch, name, dtype):
    make_args, fn, *rg = NORMS[name]
    _check_all(torch, dtype, make_args, lambda L, *t: fn(L.nn.functional, *t),
               requires_grad=rg[0] if rg else None, cancels=True)


@pytest.mark.parametrize("training,eps", [(True, 0.0), (True, -1.0), (False, -1e-5)])
def test_batch_norm_bad_eps(torch, training, eps):
    msgs = []
    for lib in (ember, torch):
        x = lib.ones(4, 3)
        with pytest.raises(ValueError) as info:
            lib.nn.functional.batch_norm(x, lib.zeros(3), lib.ones(3), training=training, eps=eps)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_batch_norm_eval_tiny_var(torch, dtype):
    """Eval batch_norm with a tiny running variance, against an extended-precision reference.

    Deliberate difference: ember computes ``(x - running_mean) * invstd``, exact (0) at the mean;
    torch folds the mean into a bias, ``x * invstd - running_mean * invstd``, which there leaves
    cancellation noise of size ``|running_mean| * invstd * eps`` (-2.7e8 in float32 for mean -100,
    var 1e-30). Away from the mean both agree.
    """
    x = np.array([[-100.0, 5.0], [-100.0 + 1e-3, 5.0 + 1e-3], [-101.0, -1e4]], dtype)
    mean, var = np.array([-100.0, 5.0], dtype), np.array([1e-30, 1e-30], dtype)
    out = ember.nn.functional.batch_norm(ember.tensor(x), ember.tensor(mean), ember.tensor(var),
                                         eps=0.0).numpy()
    wide = np.longdouble
    ref = (x.astype(wide) - mean.astype(wide)) / np.sqrt(var.astype(wide))
    np.testing.assert_allclose(out, ref.astype(dtype), rtol=RTOL[dtype], atol=0)
    assert (out[0] == 0).all()
    t_out = torch.nn.functional.batch_norm(torch.tensor(x), torch.tensor(mean), torch.tensor(var),
                                           eps=0.0).numpy()
    far = np.abs(ref) > 1e20
    np.testing.assert_allclose(out[far], t_out[far], rtol=RTOL[dtype])


def _second_order(lib, fn, args):
    """``d/dx <v, d/dx <u, fn(x, ...)>>`` for the first argument (None when it is constant)."""
    inputs = [lib.tensor(a.copy()) for a in args]
    x = inputs[0].requires_grad_(True)
    out = fn(lib.nn.functional, *inputs)
    rng = np.random.default_rng(0)
    u = lib.tensor(rng.standard_normal(tuple(out.shape)).astype(args[0].dtype))
    g, = lib.autograd.grad(out, x, u, create_graph=True)
    if not g.requires_grad:
        return None
    v = lib.tensor(rng.standard_normal(tuple(g.shape)).astype(args[0].dtype))
    gg, = lib.autograd.grad(g, x, v, allow_unused=True)
    return None if gg is None else to_numpy(gg)


# NOTE: torch has no double backward for hardsigmoid.
SECOND_ORDER = dict(
    {k: ((lambda x: (x,)), (lambda fn: lambda F, x: fn(F, x))(f))
     for k, f in ACTIVATIONS.items() if k != "hardsigmoid"},
    **{k: LOSSES[k][:2] for k in [
        "mse_loss", "smooth_l1_loss", "smooth_l1_loss_beta", "huber_loss", "huber_loss_delta",
        "bce_with_logits", "kl_div", "kl_div_log_target", "margin_ranking_loss",
        "triplet_margin_loss", "pairwise_distance", "cross_entropy", "cross_entropy_none",
        "cross_entropy_weight", "cross_entropy_ignore", "cross_entropy_smooth",
        "cross_entropy_probs", "cross_entropy_probs_smooth", "nll_loss", "nll_loss_ignore",
        "nll_loss_weight"]})


@pytest.mark.parametrize("name", list(SECOND_ORDER))
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_second_order(torch, name, dtype):
    make_args, fn = SECOND_ORDER[name]
    failures = []
    for key, x in _inputs(dtype).items():
        if key.startswith("+-"):
            continue   # the mixed arrays already hold both signs; keeps the file fast
        args = make_args(x)
        mine, ref = _second_order(ember, fn, args), _second_order(torch, fn, args)
        if ref is None or mine is None:
            # One side found no dependence on x: the other's must then be all zero.
            other = mine if ref is None else ref
            if other is not None and np.any(other != 0):
                failures.append("%s: ember %s, torch %s" % (key, mine, ref))
            continue
        if name == "mish":
            # NOTE: deliberate difference: torch's mish double backward is nan for large x
            # (inf * 0 inside); ember's is the true value there, 0 to working precision.
            ref = np.where(np.isnan(ref) & (x > 20), 0, ref)
        try:
            np.testing.assert_allclose(mine, ref, rtol=RTOL[dtype], atol=ATOL[dtype],
                                       equal_nan=True)
        except AssertionError as e:
            failures.append("%s: %s" % (key, str(e).strip().splitlines()[:8]))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("fn", [
    lambda L, x: L.log_softmax(x, 1),
    lambda L, x: L.softmax(x, 1),
    lambda L, x: L.nn.functional.cross_entropy(x, L.tensor([2, 0, 1, 2, 0, 1]),
                                               reduction="none"),
], ids=["log_softmax", "softmax", "cross_entropy"])
def test_rows_holding_inf_or_nan_are_nan_as_torch(torch, fn):
    inf, nan = np.inf, np.nan
    x = np.array([[inf, inf, 1.0], [inf, 1.0, 2.0], [-inf, -inf, -inf], [-inf, 1.0, 2.0],
                  [nan, 1.0, 2.0], [1.0, 2.0, 3.0]])
    compare(torch, fn, x)
    compare(torch, fn, x.astype(np.float32))


@pytest.mark.parametrize("kw", [dict(weight=True), dict(label_smoothing=0.1), dict()])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_with_every_target_ignored_as_torch(torch, kw, reduction):
    """A batch of padding only: torch's mean loss is 0/0 = nan but its gradients are zero
    (ember's weighted and smoothed path gave nan gradients)."""
    def fn(L, x):
        opts = dict(kw)
        if opts.pop("weight", False):
            opts["weight"] = L.tensor(np.array([1.0, 2.0, 3.0, 4.0]))
        return L.nn.functional.cross_entropy(x, L.tensor([-100, -100, -100]),
                                             reduction=reduction, **opts)
    compare(torch, fn, np.random.default_rng(0).standard_normal((3, 4)))
