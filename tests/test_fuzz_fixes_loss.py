"""Regression tests (against torch) for the loss / normalization / activation fuzz fixes and
for ``linear_cross_entropy`` / ``nn.LinearCrossEntropyLoss``."""
import warnings

import numpy as np
import pytest

import ember
from ember.ops.loss import linear_cross_entropy as e_lce

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _t(L, a, grad=False):
    t = L.tensor(np.array(a))
    return t.requires_grad_() if grad else t


def _outcome(fn, L):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(L)
    except Exception as e:  # noqa: BLE001
        return ("raise", type(e).__name__, str(e))
    return ("ok", r)


def _same(fn, values=True, prefix=None):
    """``fn(lib)`` raises the same (class and message; its first ``prefix`` characters for
    torch's long argument-parser messages) or returns equal tensors."""
    e, t = _outcome(fn, ember), _outcome(fn, torch)
    assert e[0] == t[0], (e, t)
    if e[0] == "raise":
        assert e[1] == t[1] and e[2][:prefix] == t[2][:prefix], (e, t)
        return None
    er, tr = e[1], t[1]
    if isinstance(tr, (tuple, list)):
        for a, b in zip(er, tr):
            _close(a, b, values)
    else:
        _close(er, tr, values)
    return er, tr


def _close(a, b, values=True):
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    if values:
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6,
                                   atol=1e-7, equal_nan=True)


F32 = "float32"
ERRORS = {
    # cross_entropy / nll_loss: torch's order of checks (log_softmax first, then nll_loss_nd)
    "ce_empty_int": lambda L: L.nn.functional.cross_entropy(
        L.zeros(0, 1, dtype=L.int64), L.zeros(0, dtype=L.int64)),
    "ce_empty_bool_3d": lambda L: L.nn.functional.cross_entropy(
        L.zeros(0, 1, 2, dtype=L.bool), L.zeros(0, 2, dtype=L.int64)),
    "ce_complex_batch": lambda L: L.nn.functional.cross_entropy(
        L.zeros(2, 3, dtype=L.complex64), L.zeros(1, dtype=L.int32)),
    "ce_complex_grad": lambda L: L.nn.functional.cross_entropy(
        L.zeros(0, dtype=L.complex128).requires_grad_(), L.zeros((), dtype=L.complex128)),
    "ce_complex_grad_full": lambda L: L.nn.functional.cross_entropy(
        L.zeros(2, 3, dtype=L.complex64).requires_grad_(), L.zeros(2, dtype=L.int64)),
    "ce_0d": lambda L: L.nn.functional.cross_entropy(L.zeros(()), L.zeros((), dtype=L.int64)),
    "ce_0d_prob": lambda L: L.nn.functional.cross_entropy(L.zeros(()), L.zeros(())),
    "ce_int32_target": lambda L: L.nn.functional.cross_entropy(
        L.ones(2, 3), L.zeros(2, dtype=L.int32)),
    "ce_float_target": lambda L: L.nn.functional.cross_entropy(L.ones(2, 3), L.zeros(2)),
    "ce_2d_target": lambda L: L.nn.functional.cross_entropy(
        L.ones(2, 3), L.zeros(2, 2, dtype=L.int64)),
    "ce_weight_prob": lambda L: L.nn.functional.cross_entropy(
        L.ones(2, 3), L.zeros(2, 3), weight=L.ones(2)),
    "ce_weight_dtype": lambda L: L.nn.functional.cross_entropy(
        L.ones(2, 3), L.zeros(2, dtype=L.int64), weight=L.ones(3, dtype=L.float64)),
    "ce_smoothing_2": lambda L: L.nn.functional.cross_entropy(
        L.ones(2, 3), L.zeros(2, 3), label_smoothing=2.0),
    "ce_3d_target": lambda L: L.nn.functional.cross_entropy(
        L.ones(2, 3, 4), L.zeros(2, 3, dtype=L.int64)),
    "nll_1d_target2": lambda L: L.nn.functional.nll_loss(
        L.zeros(3), L.zeros(2, dtype=L.int64)),
    "nll_4d_target2d": lambda L: L.nn.functional.nll_loss(
        L.zeros(2, 3, 2, 2), L.zeros(2, 2, dtype=L.int64)),
    "nll_4d_mismatch": lambda L: L.nn.functional.nll_loss(
        L.zeros(2, 3, 2, 2), L.zeros(2, 2, 3, dtype=L.int64)),
    # activations
    "celu_alpha0": lambda L: L.celu(L.zeros(3), 0),
    "celu__alpha0": lambda L: L.celu_(L.zeros(3), 0),
    "celu_F_alpha0": lambda L: L.nn.functional.celu(L.zeros(0, dtype=L.bool), 0),
    # torch.* C++ forms
    "bcel_bcast_out": lambda L: L.binary_cross_entropy_with_logits(L.zeros(0), L.zeros(())),
    "bcel_int": lambda L: L.binary_cross_entropy_with_logits(
        L.zeros(3, 0, dtype=L.int64), L.zeros((), dtype=L.int64)),
    "bcel_reduction_str": lambda L: L.binary_cross_entropy_with_logits(
        L.zeros(2), L.zeros(2), None, None, "mean"),
    "pad_odd": lambda L: L.constant_pad_nd(L.zeros(2), (1,)),
    "pad_long": lambda L: L.constant_pad_nd(L.zeros(2), (1, 1, 1, 1)),
    "pad_narrow": lambda L: L.constant_pad_nd(L.zeros(2), (-3, 1)),
    "pad_negative_size": lambda L: L.constant_pad_nd(L.zeros(2, 2), (-3, 2)),
    "detach_view": lambda L: L.detach_(L.zeros(4)[::2]),
    "frobenius_3dims": lambda L: L.frobenius_norm(L.zeros(2, 2), (0, 1, 0)),
    "group_norm_float": lambda L: L.group_norm(L.zeros(2, 2), 1.0),
    "group_norm_bool": lambda L: L.group_norm(L.zeros(2, 2), True),
    "kl_div_int": lambda L: L.kl_div(L.zeros(3, dtype=L.int32), L.zeros(()), -1),
    "kl_div_bool_reduction": lambda L: L.kl_div(L.zeros(3), L.zeros(3), True),
    "nuclear_3dims": lambda L: L.nuclear_norm(L.zeros(2, 2, 2), (-2, 2, 0)),
    "nuclear_1dim": lambda L: L.nuclear_norm(L.zeros(2, 2, 2), (1,)),
    "norm_except_dim_0d": lambda L: L.norm_except_dim(L.zeros(()), 2),
    "norm_except_dim_empty": lambda L: L.norm_except_dim(L.zeros(0)),
    "ctc_half": lambda L: L.nn.functional.ctc_loss(
        L.zeros(3, 2, 4, dtype=L.float16), L.ones(2, 2, dtype=L.int64), [3, 3], [2, 2]),
    "ctc_int": lambda L: L.nn.functional.ctc_loss(
        L.zeros(3, 2, 4, dtype=L.int64), L.ones(2, 2, dtype=L.int64), [3, 3], [2, 2]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_and_results_match_torch(name):
    _same(ERRORS[name])


VALUES = {
    "ce_smoothing_negative": lambda L: L.nn.functional.cross_entropy(
        _t(L, [[1.0, 2.0, 0.5], [0.1, 0.2, 0.3]]), L.tensor([0, 2]), label_smoothing=-0.5),
    "ce_prob_smoothing_negative": lambda L: L.nn.functional.cross_entropy(
        _t(L, [[1.0, 2.0, 0.5]]), _t(L, [[0.2, 0.3, 0.5]]), label_smoothing=-0.5),
    "nll_1d_target1": lambda L: L.nn.functional.nll_loss(_t(L, [0.1, -0.5, 0.3]),
                                                          L.tensor([1]), reduction="none"),
    "kl_div_reduction_other_int": lambda L: L.kl_div(_t(L, [0.1, 0.5]), _t(L, [0.3, 0.2]), 5),
    "kl_div_reduction_neg": lambda L: L.kl_div(_t(L, [0.1, 0.5]), _t(L, [0.3, 0.2]), -1),
    "pad_empty": lambda L: L.constant_pad_nd(_t(L, 1.5), ()),
    "pad_trim": lambda L: L.constant_pad_nd(_t(L, [1.0, 2.0, 3.0]), (-1, 0)),
    "frobenius": lambda L: L.frobenius_norm(_t(L, [[1.0, 2.0], [3.0, 4.0]]), (0,)),
    "norm_except_dim_pow": lambda L: L.norm_except_dim(_t(L, [1.0, -2.0, 3.0]), -1),
    "norm_except_dim_last": lambda L: L.norm_except_dim(_t(L, [[1.0, -2.0], [3.0, 0.5]]), 3, 1),
    "norm_except_dim_mid": lambda L: L.norm_except_dim(_t(L, np.arange(1.0, 9).reshape(2, 2, 2)),
                                                        2, 1),
    "bcel_bcast_target": lambda L: L.binary_cross_entropy_with_logits(
        _t(L, [[0.5, -1.0], [2.0, 0.1]]), _t(L, [0.3, 0.9]), None, None, 1),
    "softmax_0d_nan": lambda L: L.softmax(_t(L, np.nan), 0),
    "softmax_0d_inf": lambda L: L.softmax(_t(L, np.inf), 0),
    "log_softmax_0d_inf": lambda L: L.log_softmax(_t(L, -np.inf), 0),
    "softmax_0d": lambda L: L.softmax(_t(L, 2.0), 0),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_match_torch(name):
    _same(VALUES[name])


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("v", [1.5, np.nan])
def test_softmax_0d_gradient(fn, v):
    grads = []
    for L in (ember, torch):
        x = L.tensor(v, dtype=L.float64, requires_grad=True)
        getattr(L, fn)(x, 0).backward(L.tensor(0.7, dtype=L.float64))
        grads.append(x.grad.item())
    np.testing.assert_allclose(grads[0], grads[1], equal_nan=True)


def test_bcel_broadcast_backward_raises_as_torch():
    for L in (ember, torch):
        x = L.zeros(1, 3, requires_grad=True)
        loss = L.binary_cross_entropy_with_logits(x, L.zeros(2, 1, 3), None, None, 1)
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            loss.backward()


def test_pairwise_norm_node():
    from ember.ops.loss import pairwise_norm
    x = ember.tensor([[1.0, -2.0], [0.0, 0.0]], requires_grad=True)
    y = pairwise_norm(x, 2.0, -1)
    assert type(y.grad_fn).__name__ == "NormBackward1"
    tx = torch.tensor([[1.0, -2.0], [0.0, 0.0]], requires_grad=True)
    ty = torch.norm(tx, 2.0, -1)
    y.backward(ember.ones(2))
    ty.backward(torch.ones(2))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


# linear_cross_entropy (issue 18)

def _lce_case(L, seed, n=4, c=5, k=3, out=(), bias=False, probs=False, dt="float64"):
    rng = np.random.default_rng(seed)
    x = L.tensor(rng.standard_normal((n, k)).astype(dt), requires_grad=True)
    w = L.tensor(rng.standard_normal((c,) + out + (k,)).astype(dt), requires_grad=True)
    b = L.tensor(rng.standard_normal((c,) + out).astype(dt), requires_grad=True) if bias \
        else None
    if probs:
        p = rng.random((n, c) + out)
        t = L.tensor((p / p.sum(1, keepdims=True)).astype(dt))
    else:
        t = L.tensor(rng.integers(0, c, (n,) + out))
    return x, w, b, t


LCE = [
    dict(), dict(bias=True), dict(reduction="sum"), dict(reduction="none"),
    dict(out=(2,), bias=True), dict(out=(2, 3)), dict(probs=True), dict(probs=True, out=(2,)),
    dict(label_smoothing=0.2), dict(ignore_index=1), dict(weight=True),
    dict(weight=True, reduction="none", bias=True), dict(options=True),
    dict(options=True, bias=True, reduction="sum"), dict(options=True, reduction="none"),
    dict(options=True, ignore_index=2, weight=True), dict(options=True, label_smoothing=0.1),
    dict(unbatched=True), dict(unbatched=True, options=True, bias=True),
]


def _run_lce(L, fn, kw, seed=0):
    kw = dict(kw)
    shape = {k: kw.pop(k) for k in ("out", "bias", "probs") if k in kw}
    x, w, b, t = _lce_case(L, seed, **shape)
    if kw.pop("unbatched", False):
        x, t = x[0].detach().requires_grad_(), t[0]
    if kw.pop("weight", False):
        kw["weight"] = L.tensor(np.linspace(0.5, 2.0, w.shape[0]))
    if kw.pop("options", False):
        kw["options"] = L.nn.LinearCrossEntropyOptions(allow_retain_graph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loss = fn(x, w, t, linear_bias=b, **kw)
    g = np.linspace(0.3, 1.7, loss.numel()).reshape(tuple(loss.shape))
    loss.backward(L.tensor(g))
    leaves = [x, w] + ([b] if b is not None else [])
    return loss, [v.grad for v in leaves]


@pytest.mark.parametrize("kw", LCE, ids=[str(sorted(k.items())) for k in LCE])
def test_linear_cross_entropy_matches_torch(kw):
    el, eg = _run_lce(ember, e_lce, kw)
    tl, tg = _run_lce(torch, TF.linear_cross_entropy, kw)
    _close(el, tl)
    for a, b in zip(eg, tg):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-9)
    assert type(el.grad_fn).__name__ == type(tl.grad_fn).__name__


def _graph(t):
    """``[(node name, edges)]`` in BFS order (an edge: None, "Acc" or a node index); the
    nodes are kept alive while walking (torch's Python wrappers are made on access)."""
    order, seen, sig = [t.grad_fn], {id(t.grad_fn): 0}, []
    for node in order:
        edges = []
        for nxt, _ in node.next_functions:
            if nxt is None or type(nxt).__name__ == "AccumulateGrad":
                edges.append(None if nxt is None else "Acc")
                continue
            if id(nxt) not in seen:
                seen[id(nxt)] = len(order)
                order.append(nxt)
            edges.append(seen[id(nxt)])
        sig.append((type(node).__name__, edges))
    return sig


@pytest.mark.parametrize("kw", [dict(), dict(bias=True), dict(out=(2,), bias=True),
                                dict(label_smoothing=0.1), dict(probs=True)])
def test_linear_cross_entropy_graph(kw):
    graphs = []
    for L, fn in ((ember, e_lce), (torch, TF.linear_cross_entropy)):
        kw2 = dict(kw)
        shape = {k: kw2.pop(k) for k in ("out", "bias", "probs") if k in kw2}
        x, w, b, t = _lce_case(L, 1, **shape)
        graphs.append(_graph(fn(x, w, t, linear_bias=b, **kw2)))
    assert graphs[0] == graphs[1]


LCE_ERRORS = {
    "input_3d": lambda L, f: f(L.zeros(2, 2, 3), L.zeros(4, 3), L.zeros(2, dtype=L.int64)),
    "weight_1d": lambda L, f: f(L.zeros(2, 3), L.zeros(3), L.zeros(2, dtype=L.int64)),
    "in_features": lambda L, f: f(L.zeros(2, 3), L.zeros(4, 2), L.zeros(2, dtype=L.int64)),
    "bias_shape": lambda L, f: f(L.zeros(2, 3), L.zeros(4, 3), L.zeros(2, dtype=L.int64),
                                 linear_bias=L.zeros(3)),
    "kdim_unbatched": lambda L, f: f(L.zeros(3), L.zeros(4, 2, 3), L.zeros(2, dtype=L.int64)),
    "ignore_probs": lambda L, f: f(L.zeros(2, 3), L.zeros(4, 3), L.zeros(2, 4), ignore_index=1),
    "target_oob": lambda L, f: f(L.zeros(2, 3), L.zeros(4, 3), L.tensor([0, 7])),
    "target_oob_chunked": lambda L, f: f(L.zeros(2, 3), L.zeros(4, 3), L.tensor([0, 7]),
                                         options=L.nn.LinearCrossEntropyOptions()),
}


@pytest.mark.parametrize("name", sorted(LCE_ERRORS))
def test_linear_cross_entropy_errors(name):
    _same(lambda L: LCE_ERRORS[name](L, e_lce if L is ember else TF.linear_cross_entropy))


def test_linear_cross_entropy_chunked_second_backward_raises():
    for L, fn in ((ember, e_lce), (torch, TF.linear_cross_entropy)):
        x, w, b, t = _lce_case(L, 2)
        loss = fn(x, w, t, options=L.nn.LinearCrossEntropyOptions())
        loss.backward(retain_graph=True)
        with pytest.raises(RuntimeError, match="chunked backward called twice"):
            loss.backward()


def test_linear_cross_entropy_all_ignored_is_nan():
    for kw in (dict(), dict(options=ember.nn.LinearCrossEntropyOptions())):
        x, w, _, _ = _lce_case(ember, 3)
        assert np.isnan(e_lce(x, w, ember.full((4,), -100), **kw).item())


@pytest.mark.parametrize("kw", [dict(acc_policy="x"), dict(chunking_method="ratio"),
                                dict(chunking_method="aspect_ratio:0"),
                                dict(batch_chunk_size=0), dict(acc_dtype="int64")])
def test_linear_cross_entropy_options_validation(kw):
    tkw = dict(kw)
    if kw.get("acc_dtype") == "int64":
        kw, tkw = dict(acc_dtype=ember.int64), dict(acc_dtype=torch.int64)
    with pytest.raises(ValueError) as e1:
        ember.nn.LinearCrossEntropyOptions(**kw)
    with pytest.raises(ValueError) as e2:
        torch.nn.LinearCrossEntropyOptions(**tkw)
    assert str(e1.value) == str(e2.value)


@pytest.mark.parametrize("bias,out,weight", [(False, (), False), (True, (2,), True)])
def test_linear_cross_entropy_loss_module(bias, out, weight):
    w = [0.5, 1.0, 1.5, 2.0] if weight else None
    mods = []
    for L in (ember, torch):
        m = L.nn.LinearCrossEntropyLoss(3, 4, out_features=out, bias=bias,
                                        weight=None if w is None else L.tensor(w),
                                        label_smoothing=0.1)
        mods.append(m)
    em, tm = mods
    assert list(em.state_dict().keys()) == list(tm.state_dict().keys())
    assert repr(em) == repr(tm)
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    t = rng.integers(0, 4, (2,) + out)
    el = em(ember.tensor(x), ember.tensor(t))
    tl = tm(torch.tensor(x), torch.tensor(t))
    el.backward()
    tl.backward()
    np.testing.assert_allclose(el.item(), tl.item(), rtol=1e-5)
    np.testing.assert_allclose(em.linear.weight.grad.numpy(), tm.linear.weight.grad.numpy(),
                               rtol=1e-5, atol=1e-6)


def test_linear_cross_entropy_loss_module_checks():
    for L in (ember, torch):
        with pytest.raises(RuntimeError, match="expected weight shape"):
            L.nn.LinearCrossEntropyLoss(3, 4, weight=L.ones(3))
        with pytest.raises(RuntimeError, match="expected label_smoothing"):
            L.nn.LinearCrossEntropyLoss(3, 4, label_smoothing=1.5)


# Found by the templates of tests/fuzz/tpl_loss.py

def _arr(shape, seed, lo=-2.0, hi=2.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


TPL_ERRORS = {
    "dropout_p": lambda L: L.dropout(L.ones(3), 1.5, False),
    "dropout__p": lambda L: L.dropout_(L.ones(3), -0.1, True),
    "feature_dropout_p": lambda L: L.feature_dropout(L.ones(2, 3), 2, False),
    "alpha_dropout_p": lambda L: L.alpha_dropout(L.ones(3), -1, False),
    "native_dropout_int": lambda L: L.native_dropout(L.ones(3, dtype=L.int64), 0.5, True),
    "native_dropout_p": lambda L: L.native_dropout(L.ones(3), 1.5, True),
    "native_dropout_complex_grad": lambda L: L.native_dropout(
        L.ones(3, dtype=L.complex128).requires_grad_(), 1.5, False),
    "batch_norm_stats_size": lambda L: L.batch_norm(L.ones(4, 3), None, None, L.zeros(2), None,
                                                    True, 0.1, 1e-5, False),
    "batch_norm_eval_no_stats": lambda L: L.batch_norm(L.ones(4, 3), None, None, None, None,
                                                       False, 0.1, 1e-5, False),
    "native_batch_norm_empty": lambda L: L.native_batch_norm(L.ones(0, 3), None, None, None,
                                                             None, True, 0.1, 1e-5),
    "native_group_norm_numel": lambda L: L.native_group_norm(L.ones(2, 4, 3), None, None, 2, 4,
                                                             2, 2, 1e-5),
    "native_group_norm_groups": lambda L: L.native_group_norm(L.ones(2, 4, 3), None, None, 2, 4,
                                                              3, 3, 1e-5),
    "native_norm_dense": lambda L: L.native_norm(L.ones(3), 2),
    "ctc_mixed_lengths": lambda L: L.nn.functional.ctc_loss(
        L.zeros(4, 1, 4), L.ones(1, 1, dtype=L.int64), L.tensor([4]), [1]),
    "ctc_reduction_str": lambda L: L.ctc_loss(
        L.zeros(4, 1, 4), L.ones(1, 1, dtype=L.int64), [4], [1], 0, "mean"),
    "multilabel_margin_half": lambda L: L.nn.functional.multilabel_margin_loss(
        L.zeros(3, 2, dtype=L.float16), L.zeros(3, 2, dtype=L.int64)),
    "gru_cell_int": lambda L: L.gru_cell(L.ones(3, 1, dtype=L.int64), L.ones(3, 2, dtype=L.int64),
                                         L.ones(6, 1, dtype=L.int64), L.ones(6, 2, dtype=L.int64)),
    "rnn_cell_1d": lambda L: L.rnn_tanh_cell(L.ones(1), L.ones(4), L.ones(4, 1), L.ones(4, 4)),
    "rnn_cell_batch": lambda L: L.rnn_relu_cell(L.ones(2, 1), L.ones(3, 4), L.ones(4, 1),
                                                L.ones(4, 4)),
    "lstm_cell_hidden": lambda L: L.lstm_cell(L.ones(2, 1), (L.ones(2, 4), L.ones(2, 3)),
                                              L.ones(16, 1), L.ones(16, 4)),
    "bilinear_complex_grad": lambda L: L.bilinear(
        L.ones(1, 1, dtype=L.complex128).requires_grad_(), L.ones(1, 4, dtype=L.complex128),
        L.ones(2, 1, 4, dtype=L.complex128)),
}


_PREFIX = {"ctc_mixed_lengths": 110, "ctc_reduction_str": 0, "native_norm_dense": 200}


@pytest.mark.parametrize("name", sorted(TPL_ERRORS))
def test_template_errors_match_torch(name):
    _same(TPL_ERRORS[name], prefix=_PREFIX.get(name))


def _grad_case(fn, arrays, seed=0):
    """``fn(L, *leaves)`` in both libraries: outputs and every leaf's gradient compared."""
    res = []
    for L in (ember, torch):
        leaves = [L.tensor(a).requires_grad_() for a in arrays]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(L, *leaves)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        rng = np.random.default_rng(seed)
        diff = [o for o in outs if o.requires_grad]
        L.autograd.backward(diff, [L.tensor(rng.standard_normal(tuple(o.shape))) for o in diff])
        res.append(([o.detach().numpy() for o in outs],
                    [None if v.grad is None else v.grad.numpy() for v in leaves]))
    for a, b in zip(res[0][0] + res[0][1], res[1][0] + res[1][1]):
        if a is None or b is None:
            assert a is None and b is None
            continue
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9, equal_nan=True)


GRADS = {
    # a target label equal to the blank: torch's skip rule and its last-frame gradient
    "ctc_blank_in_target": (lambda L, lp: L.nn.functional.ctc_loss(
        lp, L.tensor([[1, 1, 0], [0, 1, 0]]), [4, 4], [3, 3], reduction="sum"),
        [_arr((4, 2, 3), 1)]),
    "ctc_blank_in_target_lengths": (lambda L, lp: L.ctc_loss(
        lp, L.tensor([[1, 0], [0, 1]]), [5, 4], [1, 2], 0, 2, True), [_arr((5, 2, 3), 2)]),
    "torch_batch_norm_one_per_channel": (lambda L, x, w: L.batch_norm(
        x, w, None, None, None, True, 0.1, 1e-5, False), [_arr((1, 3), 3), _arr((3,), 4)]),
    "torch_batch_norm_eps0": (lambda L, x: L.batch_norm(
        x, None, None, None, None, True, 0.1, 0.0, False), [_arr((4, 3), 5)]),
    "native_batch_norm_train": (lambda L, x, w: L.native_batch_norm(
        x, w, None, None, None, True, 0.1, 1e-5), [_arr((4, 3), 6), _arr((3,), 7)]),
    "native_layer_norm_stats_grad": (lambda L, x, w: L.native_layer_norm(x, [4], w, None, 1e-5),
                                     [_arr((3, 4), 8), _arr((4,), 9)]),
    "native_group_norm_stats_grad": (lambda L, x: L.native_group_norm(
        x, None, None, 2, 4, 1, 4, 1e-5), [_arr((2, 4, 1), 10)]),
    "instance_norm_one_element": (lambda L, x, b: L.instance_norm(
        x, None, b, None, None, True, 0.1, 1e-5, False), [_arr((2, 3, 1), 11), _arr((3,), 12)]),
    "instance_norm_running": (lambda L, x: L.instance_norm(
        x, None, None, L.zeros(3, dtype=L.float64), L.ones(3, dtype=L.float64), True, 0.1, 1e-5,
        False), [_arr((2, 3, 4), 13)]),
    "bilinear_inf": (lambda L, a, b, w: L.nn.functional.bilinear(a, b, w),
                     [_arr((3, 2), 14), np.where(np.arange(12).reshape(3, 4) == 4, -np.inf,
                                                 _arr((3, 4), 15)), _arr((2, 2, 4), 16)]),
    "native_dropout_eval": (lambda L, x: L.native_dropout(x, 0.3, False), [_arr((2, 3), 17)]),
    "native_dropout_p0": (lambda L, x: L.native_dropout(x, 0.0, True)[0], [_arr((2, 3), 18)]),
    "cross_entropy_3d": (lambda L, x: L.nn.functional.cross_entropy(
        x, L.tensor([[0, 2], [1, 1]]), reduction="none"), [_arr((2, 3, 2), 19)]),
    "cross_entropy_5d": (lambda L, x: L.nn.functional.cross_entropy(
        x, L.zeros(2, 2, 1, 2, dtype=L.int64)), [_arr((2, 3, 2, 1, 2), 20)]),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_template_values_and_gradients_match_torch(name):
    fn, arrays = GRADS[name]
    _grad_case(fn, arrays)


def test_batch_norm_running_var_one_value_is_nan():
    for L in (ember, torch):
        rv = L.ones(3, dtype=L.float64)
        L.batch_norm(L.ones(1, 3, dtype=L.float64), None, None, L.zeros(3, dtype=L.float64), rv,
                     True, 0.1, 1e-5, False)
        assert np.isnan(rv.numpy()).all()


def test_batch_norm_strided_eval_inf_stats():
    x = _arr((3, 4), 21).T          # a transposed (non-contiguous) input
    outs = []
    for L in (ember, torch):
        def v(*a):
            return L.tensor(np.array(a))
        outs.append(L.batch_norm(L.tensor(np.ascontiguousarray(x.T)).T, v(-0.5, 1.0, 2.0),
                                 v(0.3, 0.1, -1.0), v(1.8, 0.0, 0.5), v(0.0, 1.0, np.inf), False,
                                 0.1, 0.0, False).numpy())
    np.testing.assert_allclose(outs[0], outs[1], equal_nan=True)


@pytest.mark.parametrize("name", ["ce_nd_graph", "nll_3d_graph"])
def test_nll2d_graph(name):
    graphs = []
    for L in (ember, torch):
        x = L.tensor(_arr((2, 3, 2), 22), requires_grad=True)
        t = L.tensor([[0, 2], [1, 1]])
        f = L.nn.functional.cross_entropy if name == "ce_nd_graph" else L.nn.functional.nll_loss
        graphs.append(_graph(f(x, t, reduction="none")))
    assert graphs[0] == graphs[1]
