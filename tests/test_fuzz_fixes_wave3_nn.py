"""Regression tests (against torch) for fuzzer classes fixed in wave 3 (nn ops)."""
import math

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

NAN = float("nan")


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:   # noqa: BLE001 - the class and message are compared
        return ("raise", type(e).__name__, str(e))
    return ("ok", str(r.dtype).replace("ember.", "torch."), np.asarray(r.detach().tolist()))


def _same(a, b):
    assert a[:2] == b[:2], (a, b)
    if a[0] == "raise":
        assert a[2] == b[2]
    else:
        np.testing.assert_allclose(a[2], b[2], rtol=1e-6, equal_nan=True)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", ["dropout", "alpha_dropout", "feature_alpha_dropout",
                                  "dropout1d", "dropout2d", "dropout3d"])
@pytest.mark.parametrize("training", [False, True])
def test_dropout_nan_p(name, training):
    shape = (2, 3, 4)
    for L in (ember, torch):
        x = L.ones(shape)
        with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1, "
                                               "but got nan"):
            getattr(L.nn.functional, name)(x, NAN, training)


@pytest.mark.parametrize("dt", ["float64", "float32", "float16", "bfloat16", "complex64"])
@pytest.mark.parametrize("a,b", [(NAN, 1.0), (0.0, NAN), (-1e300, 1.0), (0.0, 1e300),
                                 (-1e308, 1e308), (-3e38, 3e38), (-6e4, 6e4), (1.0, 0.0)])
def test_uniform_bounds(dt, a, b):
    def run(L):
        def f():
            return L.empty(3, dtype=getattr(L, dt)).uniform_(a, b)
        r = _outcome(f)
        return r[:2] + (r[2] if r[0] == "raise" else None,)
    assert run(ember) == run(torch)


def test_normal_nan_std():
    for L in (ember, torch):
        with pytest.raises(RuntimeError, match="but found std nan"):
            L.normal(L.zeros(4, dtype=L.float64), NAN)
        with pytest.raises(RuntimeError, match="but found std nan"):
            L.normal(L.zeros(2, 1, 3, dtype=L.bool), NAN)
        with pytest.raises(RuntimeError, match="but found std nan"):
            L.zeros(3).normal_(0.0, NAN)
        with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
            L.normal(L.zeros(2), L.tensor([1.0, NAN]))


@pytest.mark.parametrize("xs", [(3, 4), (4,), (2, 3, 4), (2, 2, 3, 4)])
@pytest.mark.parametrize("bs", [(), (1,), (2,), (3, 2), (1, 1)])
@pytest.mark.parametrize("bdt", ["float64", "float32", "bool"])
def test_linear_bias_dtype_and_paths(xs, bs, bdt):
    rng = np.random.default_rng(0)
    xa, wa = rng.standard_normal(xs), rng.standard_normal((2, 4))
    ba = np.ones(bs)

    def run(L):
        return _outcome(lambda: L.nn.functional.linear(
            L.tensor(xa), L.tensor(wa), L.tensor(ba).to(getattr(L, bdt))))
    _same(run(ember), run(torch))


def test_soft_margin_loss_grad_overflow():
    xa = np.array([-0.5, -0.9, 0.7], dtype=np.float32)
    grads = []
    for L in (ember, torch):
        x = L.tensor(xa, requires_grad=True)
        L.nn.functional.soft_margin_loss(x, L.tensor(200, dtype=L.uint8)).backward()
        grads.append(np.asarray(x.grad.tolist()))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, equal_nan=True)


def test_bce_with_logits_half_input():
    rng = np.random.default_rng(1)
    xa, ta = rng.random((4, 5)).astype(np.float16), rng.random((4, 5)).astype(np.float32)
    outs = []
    for L in (ember, torch):
        for red in ("none", "mean"):
            outs.append(np.asarray(L.nn.functional.binary_cross_entropy_with_logits(
                L.tensor(xa), L.tensor(ta), reduction=red).tolist()))
    np.testing.assert_array_equal(outs[0], outs[2])
    np.testing.assert_allclose(outs[1], outs[3], rtol=1e-6)


def test_embedding_bag_max_nan_rows():
    w = np.array([[0.0, 0.62, 1.4], [0.48, NAN, 0.33], [-0.8, NAN, 0.0],
                  [-0.0, -0.08, math.inf], [0.36, NAN, -1.5]], dtype=np.float32)
    idx = np.array([3, 2, 0, 4, 4, 0])
    res = []
    for L in (ember, torch):
        for offs in ([0, 0, 0], [0, 1, 3], [0, 2, 5]):
            out = L.nn.functional.embedding_bag(L.tensor(idx), L.tensor(w), L.tensor(offs),
                                                mode="max")
            res.append(np.asarray(out.tolist()))
    for a, b in zip(res[:3], res[3:]):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("nd", [2, 3])
def test_avg_pool_int64_wraps_and_truncates(nd):
    m = np.iinfo(np.int64).min
    base = np.array([[m, -2, 5], [3, -7, 1], [0, -1, 2]], dtype=np.int64)
    xa = base[None, None] if nd == 2 else np.stack([base, base[::-1]])[None, None]
    outs = []
    for L in (ember, torch):
        f = getattr(L.nn.functional, "avg_pool%dd" % nd)
        for kw in ({"count_include_pad": False}, {}, {"divisor_override": 3}):
            outs.append(np.asarray(f(L.tensor(xa), 2, 1, 1, **kw).tolist()))
    for a, b in zip(outs[:3], outs[3:]):
        np.testing.assert_array_equal(a, b)


def test_avg_pool3d_unpadded_size_check():
    for L in (ember, torch):
        x = L.zeros(1, 1, 1, 3, 3)
        with pytest.raises(RuntimeError, match=r"input image \(T: 1 H: 3 W: 3\) smaller than "
                                               r"kernel size \(kT: 2 kH: 1 kW: 1\)"):
            L.nn.functional.avg_pool3d(x, (2, 1, 1), 1, (1, 0, 0))


@pytest.mark.parametrize("shape", [(4, 3), (3, 0), (1, 3), (5, 2)])
@pytest.mark.parametrize("p", [0, 0.5, 1, 2, 3, float("inf")])
def test_pdist_is_torchs_node_values_and_gradient(shape, p):
    # (torch's pdist of zero rows with a backward segfaults: not compared)
    import numpy as np
    arr = np.random.default_rng(0).standard_normal(shape)
    x, y = ember.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)
    a, b = ember.pdist(x, p), torch.pdist(y, p)
    assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__ == "PdistBackward0"
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)
    a.sum().backward()
    b.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-12, atol=1e-14)
