"""torch's C++-signature forms of the nn functions at ``torch.*`` (``torch.kl_div(x, y, 1)``,
``torch.dropout(x, p, train)``, ...) and the other ``torch.*`` helpers, against torch."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

R = np.random.RandomState(0)
A = R.randn(2, 3, 4, 4)
B = R.randn(2, 3, 4, 4)
V = R.randn(4, 5)
W = R.randn(4, 5)
T = np.sign(R.randn(4))
P = np.abs(R.randn(4, 5)) + 0.1


def _t(lib, a, grad=False):
    return lib.tensor(a, requires_grad=grad)


CASES = {
    "dropout_eval": lambda L: L.dropout(_t(L, V, True), 0.3, False),
    "alpha_dropout_eval": lambda L: L.alpha_dropout(_t(L, V, True), 0.3, False),
    "feature_dropout_eval": lambda L: L.feature_dropout(_t(L, A, True), 0.3, False),
    "bilinear": lambda L: L.bilinear(_t(L, V, True), _t(L, W, True),
                                     _t(L, R.randn(2, 5, 5), True), None),
    "bce_logits": lambda L: L.binary_cross_entropy_with_logits(_t(L, V, True),
                                                               _t(L, (W > 0) * 1.0), None, None,
                                                               2),
    "channel_shuffle": lambda L: L.channel_shuffle(_t(L, R.randn(1, 4, 2, 2), True), 2),
    "constant_pad_nd": lambda L: L.constant_pad_nd(_t(L, V, True), [1, 2], 3.0),
    "conv3d": lambda L: L.conv3d(_t(L, R.randn(1, 2, 3, 3, 3), True),
                                 _t(L, R.randn(2, 2, 2, 2, 2), True), None, 1, 1),
    "convolution": lambda L: L.convolution(_t(L, A, True), _t(L, R.randn(2, 3, 2, 2), True),
                                           None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1),
    "convolution_t": lambda L: L.convolution(_t(L, A, True), _t(L, R.randn(3, 2, 2, 2), True),
                                             None, [2, 2], [0, 0], [1, 1], True, [1, 1], 1),
    "cosine_embedding_loss": lambda L: L.cosine_embedding_loss(_t(L, V, True), _t(L, W, True),
                                                               _t(L, T), 0.1, 0),
    "cosine_similarity": lambda L: L.cosine_similarity(_t(L, V, True), _t(L, W, True)),
    "embedding": lambda L: L.embedding(_t(L, V, True), L.tensor([[0, 2], [3, 3]])),
    "hinge_embedding_loss": lambda L: L.hinge_embedding_loss(_t(L, V, True),
                                                             _t(L, np.sign(W)), 0.5, 1),
    "instance_norm": lambda L: L.instance_norm(_t(L, A, True), None, None, None, None, True, 0.1,
                                               1e-5, False),
    "kl_div": lambda L: L.kl_div(_t(L, V, True), _t(L, P), 2),
    "kl_div_log_target": lambda L: L.kl_div(_t(L, V, True), _t(L, W), 1, log_target=True),
    "margin_ranking_loss": lambda L: L.margin_ranking_loss(_t(L, V[0], True),
                                                           _t(L, W[0], True),
                                                           _t(L, np.sign(W[1])), 0.2, 1),
    "max_pool1d_with_indices": lambda L: L.max_pool1d_with_indices(_t(L, V[None], True), 2)[0],
    "max_pool3d": lambda L: L.max_pool3d(_t(L, R.randn(1, 1, 4, 4, 4), True), 2),
    "native_layer_norm": lambda L: L.native_layer_norm(_t(L, V, True), [5], None, None,
                                                       1e-5)[0],
    "native_layer_norm_stats": lambda L: L.stack(list(L.native_layer_norm(
        _t(L, V), [5], None, None, 1e-5)[1:])),
    "native_batch_norm": lambda L: L.native_batch_norm(_t(L, A, True), None, None, None, None,
                                                       True, 0.1, 1e-5)[0],
    "native_batch_norm_stats": lambda L: L.stack(list(L.native_batch_norm(
        _t(L, A), None, None, None, None, True, 0.1, 1e-5)[1:])),
    "native_group_norm_stats": lambda L: L.stack(list(L.native_group_norm(
        _t(L, A), None, None, 2, 3, 16, 3, 1e-5)[1:])),
    "norm_except_dim": lambda L: L.norm_except_dim(_t(L, A, True), 2, 1),
    "nuclear_norm": lambda L: L.nuclear_norm(_t(L, V, True)),
    "frobenius_norm": lambda L: L.frobenius_norm(_t(L, A, True), [1, 2]),
    "pairwise_distance": lambda L: L.pairwise_distance(_t(L, V, True), _t(L, W, True)),
    "pdist": lambda L: L.pdist(_t(L, V, True)),
    "pixel_shuffle": lambda L: L.pixel_shuffle(_t(L, R.randn(1, 4, 2, 2), True), 2),
    "pixel_unshuffle": lambda L: L.pixel_unshuffle(_t(L, R.randn(1, 1, 4, 4), True), 2),
    "poisson_nll_loss": lambda L: L.poisson_nll_loss(_t(L, V, True), _t(L, P), True, False,
                                                     1e-8, 1),
    "prelu": lambda L: L.prelu(_t(L, A, True), _t(L, np.array([0.1, 0.2, 0.3]), True)),
    "rms_norm": lambda L: L.rms_norm(_t(L, V, True), [5]),
    "rrelu_eval": lambda L: L.rrelu(_t(L, V, True)),
    "triplet_margin_loss": lambda L: L.triplet_margin_loss(_t(L, V, True), _t(L, W, True),
                                                           _t(L, P, True)),
    "triplet_margin_loss_mean": lambda L: L.triplet_margin_loss(
        _t(L, V, True), _t(L, W, True), _t(L, P, True), 1.0, 2.0, 1e-6, False, 1),
    "kl_div_default": lambda L: L.kl_div(_t(L, V, True), _t(L, P)),
    "grid_sampler": lambda L: L.grid_sampler(_t(L, A, True),
                                             _t(L, np.tanh(R.randn(2, 3, 3, 2))), 0, 0, False),
    "rnn_tanh_cell": lambda L: L.rnn_tanh_cell(_t(L, V, True), _t(L, R.randn(4, 3), True),
                                               _t(L, R.randn(3, 5), True),
                                               _t(L, R.randn(3, 3), True)),
    "gru_cell": lambda L: L.gru_cell(_t(L, V, True), _t(L, R.randn(4, 3), True),
                                     _t(L, R.randn(9, 5), True), _t(L, R.randn(9, 3), True),
                                     _t(L, R.randn(9), True), _t(L, R.randn(9), True)),
    "lstm_cell": lambda L: L.lstm_cell(_t(L, V, True), [_t(L, R.randn(4, 3), True),
                                                         _t(L, R.randn(4, 3), True)],
                                       _t(L, R.randn(12, 5), True),
                                       _t(L, R.randn(12, 3), True))[1],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    state = R.get_state()
    e = CASES[name](ember)
    R.set_state(state)
    t = CASES[name](torch)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert e.requires_grad == t.requires_grad
    if t.grad_fn is not None:
        g = R.randn(*t.shape)
        leaves_e = _leaves(e.grad_fn)
        leaves_t = _leaves(t.grad_fn)
        ge = ember.autograd.grad(e, leaves_e, ember.tensor(g), allow_unused=True)
        gt = torch.autograd.grad(t, leaves_t, torch.tensor(g), allow_unused=True)
        for a, b in zip(ge, gt):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-11)


def _leaves(fn, seen=None):
    """The leaf tensors under ``fn``, in first-visit order."""
    out, seen, stack, kept = [], set(), [fn], []
    while stack:
        node = stack.pop(0)
        if node is None or id(node) in seen:
            continue
        kept.append(node)       # (alive, so that no other node reuses its id)
        seen.add(id(node))
        if hasattr(node, "variable"):
            out.append(node.variable)
        stack.extend(n for n, _ in node.next_functions)
    return sorted(out, key=lambda v: (v.numel(), float(v.detach().abs().sum())))


def test_removed_functions_raise_as_torch():
    for name in ("lstsq", "eig", "symeig", "solve", "matrix_rank"):
        if not hasattr(torch, name):
            continue
        with pytest.raises(RuntimeError) as te:
            getattr(torch, name)(torch.eye(2), torch.eye(2))
        with pytest.raises(RuntimeError) as ee:
            getattr(ember, name)(ember.eye(2), ember.eye(2))
        assert str(ee.value).split(".")[0] == str(te.value).split(".")[0]


def test_helpers():
    assert ember.sym_int(3.7) == torch.sym_int(3.7)
    assert ember.sym_max(2, 5) == torch.sym_max(2, 5)
    assert ember.is_anomaly_enabled() is torch.is_anomaly_enabled() is False
    ember.set_anomaly_enabled(True)
    try:
        assert ember.is_anomaly_enabled()
    finally:
        ember.set_anomaly_enabled(False)
    assert not ember.is_warn_always_enabled()
    assert ember.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()
    assert issubclass(ember.OutOfMemoryError, RuntimeError)
    v = ember.vmap(lambda x: x * 2)(ember.ones(3, 2))
    np.testing.assert_array_equal(v.numpy(), np.full((3, 2), 2.0))


def test_data_parallel_cpu():
    for L in (ember, torch):
        L.manual_seed(0)
        inner = L.nn.Linear(3, 2)
        dp = L.nn.DataParallel(inner)
        x = L.ones(4, 3)
        np.testing.assert_array_equal(dp(x).detach().numpy(), inner(x).detach().numpy())
        assert sorted(dp.state_dict()) == ["module.bias", "module.weight"]
        assert dp.module is inner


@pytest.mark.parametrize("fn,kw", [("svd_lowrank", {"q": 4}), ("svd_lowrank", {"q": 3}),
                                   ("pca_lowrank", {"q": 3}),
                                   ("pca_lowrank", {"q": 2, "center": False})])
def test_lowrank(fn, kw):
    # same Gaussian draws as torch; singular vectors agree up to sign (LAPACK's choice)
    a = np.random.RandomState(0).randn(8, 5) @ np.random.RandomState(1).randn(5, 6)
    outs = []
    for L in (ember, torch):
        L.manual_seed(0)
        outs.append([o.numpy() for o in getattr(L, fn)(L.tensor(a), **kw)])
    (ue, se, ve), (ut, st, vt) = outs
    np.testing.assert_allclose(se, st, rtol=1e-10)
    np.testing.assert_allclose(np.abs(ue), np.abs(ut), atol=1e-10)
    np.testing.assert_allclose(np.abs(ve), np.abs(vt), atol=1e-10)
    np.testing.assert_allclose(ue * se @ ve.T, ut * st @ vt.T, atol=1e-10)


def test_lowrank_gradient():
    a = np.random.RandomState(0).randn(6, 8)
    grads = []
    for L in (ember, torch):
        L.manual_seed(0)
        t = L.tensor(a, requires_grad=True)
        L.svd_lowrank(t, q=4)[1].sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-10)


def test_device_helpers(tmp_path):
    path = tmp_path / "x.bin"
    np.arange(5, dtype=np.float32).tofile(path)
    for shared in (False, True):
        e = ember.from_file(str(path), shared=shared, size=5, dtype=ember.float32)
        t = torch.from_file(str(path), shared=shared, size=5, dtype=torch.float32)
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    assert ember.get_device_module("cpu") is ember.cpu
    assert repr(ember.Stream()) == repr(torch.Stream())
