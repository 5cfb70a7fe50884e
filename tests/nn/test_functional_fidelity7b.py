"""Regression tests (issue 21): nn.functional's composed losses, dropout, attention and the
graphs torch builds for several layers, against torch -- values, gradients, dtypes, node
names and error messages."""
import warnings

import numpy as np
import pytest

import ember
from oracle import compare

torch = pytest.importorskip("torch")


def rand(*shape, seed=0):
    return np.random.default_rng(seed + 17 * len(shape)).standard_normal(shape)


def rand32(*shape, seed=0):
    return rand(*shape, seed=seed).astype(np.float32)


def graph(out):
    """``[(node name, edges)]`` breadth first; an edge is None, "Acc" or a node index."""
    order, sig, i = [out.grad_fn], [], 0
    while i < len(order):
        node, i = order[i], i + 1
        edges = []
        for nxt, _ in node.next_functions:
            if nxt is None:
                edges.append(None)
            elif type(nxt).__name__ == "AccumulateGrad":
                edges.append("Acc")
            else:
                if all(nxt is not n for n in order):
                    order.append(nxt)
                edges.append(next(k for k, n in enumerate(order) if n is nxt))
        sig.append((type(node).__name__, edges))
    return sig


def same_graph(fn, *arrays, grad_mask=None):
    sigs = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        ts = []
        for k, a in enumerate(arrays):
            t = lib.tensor(a.copy())
            if a.dtype.kind == "f" and (grad_mask is None or grad_mask[k]):
                t.requires_grad_(True)
            ts.append(t)
        sigs.append(graph(fn(lib, *ts)))
    assert sigs[0] == sigs[1], "\nember %s\ntorch %s" % tuple(sigs)


def raises_like(fn, *arrays, backward=False):
    """Both libraries raise the same exception class and message (forward or backward)."""
    res = []
    for lib in (ember, torch):
        ts = [lib.tensor(a.copy()) if isinstance(a, np.ndarray) else a for a in arrays]
        if backward and ts[0].is_floating_point():
            ts[0].requires_grad_(True)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = fn(lib, *ts)
                if backward:
                    out.sum().backward()
            res.append(("ok", out.dtype if hasattr(out, "dtype") else None))
        except Exception as e:  # noqa: BLE001 (compared)
            res.append((type(e).__name__, str(e)))
    e, t = res
    if e[0] == "ok":
        assert t[0] == "ok" and str(e[1]).split(".")[-1] == str(t[1]).split(".")[-1], res
    else:
        assert e == t, res


# --- graphs ------------------------------------------------------------------------------

GRAPHS = {
    "rms_norm": (lambda L, x, w: L.nn.functional.rms_norm(x, [3, 4], w),
                 [rand(2, 3, 4), rand(3, 4)]),
    "local_response_norm_3d": (lambda L, x: L.nn.functional.local_response_norm(x, 3),
                               [rand(2, 5, 4)]),
    "local_response_norm_4d": (lambda L, x: L.nn.functional.local_response_norm(x, 2),
                               [rand(2, 5, 4, 3)]),
    "cosine_similarity": (lambda L, a, b: L.nn.functional.cosine_similarity(a, b),
                          [rand(3, 4), rand(3, 4, seed=1)]),
    "gaussian_nll_full": (lambda L, x, t, v: L.nn.functional.gaussian_nll_loss(x, t, v,
                                                                                 full=True),
                          [rand(3, 4), rand(3, 4, seed=1), np.abs(rand(3, 4, seed=2))]),
    "cross_entropy_probs": (lambda L, x, t: L.nn.functional.cross_entropy(x, t),
                            [rand(3, 4), np.abs(rand(3, 4, seed=1))]),
    "cross_entropy_probs_smooth_w": (
        lambda L, x, t, w: L.nn.functional.cross_entropy(x, t, w, label_smoothing=0.2),
        [rand(3, 4), np.abs(rand(3, 4, seed=1)), np.abs(rand(4))], (True, False, False)),
    "cross_entropy_smoothing": (
        lambda L, x, t: L.nn.functional.cross_entropy(x, t, label_smoothing=0.1),
        [rand(3, 4), np.array([1, 0, 3])]),
    "cross_entropy_smoothing_w": (
        lambda L, x, t, w: L.nn.functional.cross_entropy(x, t, w, label_smoothing=0.1),
        [rand(3, 4), np.array([1, 0, 3]), np.abs(rand(4))], (True, False, False)),
    "multi_margin": (lambda L, x, t: L.nn.functional.multi_margin_loss(x, t),
                     [rand(3, 4), np.array([0, 3, 2])]),
    "multilabel_margin": (lambda L, x, t: L.nn.functional.multilabel_margin_loss(x, t),
                          [rand(2, 4), np.array([[3, 0, -1, 1], [1, 2, -1, 0]])]),
    "embedding_bag": (lambda L, i, o: L.nn.EmbeddingBag(5, 3)(i, o),
                      [np.array([1, 0, 4, 2]), np.array([0, 2])]),
    "embedding_bag_psw": (
        lambda L, w, i, o, p: L.nn.functional.embedding_bag(i, w, o, mode="sum",
                                                             per_sample_weights=p),
        [rand(5, 3), np.array([1, 0, 4, 2]), np.array([0, 2]), rand(4)]),
    "bilinear": (lambda L, a, b: L.nn.Bilinear(2, 3, 4)(a, b), [rand32(5, 2), rand32(5, 3)]),
    "bilinear_1d": (lambda L, a, b: L.nn.Bilinear(2, 3, 4)(a, b), [rand32(2), rand32(3)]),
    "sdpa_flash": (lambda L, q, k, v: L.nn.functional.scaled_dot_product_attention(q, k, v),
                   [rand(1, 2, 3, 4), rand(1, 2, 5, 4, seed=1), rand(1, 2, 5, 4, seed=2)]),
    "sdpa_math": (lambda L, q, k, v: L.nn.functional.scaled_dot_product_attention(q, k, v),
                  [rand(2, 3, 4), rand(2, 5, 4, seed=1), rand(2, 5, 4, seed=2)]),
    "sdpa_math_mask_grad": (
        lambda L, q, k, v, m: L.nn.functional.scaled_dot_product_attention(q, k, v, m),
        [rand(1, 2, 3, 4), rand(1, 2, 5, 4, seed=1), rand(1, 2, 5, 4, seed=2), rand(3, 5)]),
    "mha": (lambda L, q, k, v: L.nn.MultiheadAttention(4, 2)(q, k, v)[0],
            [rand32(2, 1, 4), rand32(2, 1, 4, seed=1), rand32(2, 1, 4, seed=2)]),
    "mha_weights": (lambda L, q, k, v: L.nn.MultiheadAttention(4, 2)(q, k, v)[1],
                    [rand32(2, 1, 4), rand32(2, 1, 4, seed=1), rand32(2, 1, 4, seed=2)]),
    "transformer_encoder_layer": (
        lambda L, x: L.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0)(x), [rand32(2, 1, 4)]),
}


@pytest.mark.parametrize("name", list(GRAPHS))
def test_graph_matches_torch(name):
    fn, arrays, *mask = GRAPHS[name]
    same_graph(fn, *arrays, grad_mask=mask[0] if mask else None)


# --- values and gradients ------------------------------------------------------------------

@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("kw", [{}, {"label_smoothing": 0.2}, {"weight": True},
                                {"weight": True, "label_smoothing": 0.3}])
def test_cross_entropy_probs_and_smoothing(reduction, kw):
    w = np.abs(rand(5, seed=4)) if kw.get("weight") else None
    ls = kw.get("label_smoothing", 0.0)

    def fn(L, x, t):
        wt = None if w is None else L.tensor(w)
        return L.nn.functional.cross_entropy(x, t, wt, reduction=reduction, label_smoothing=ls)

    compare(torch, fn, rand(4, 5), np.abs(rand(4, 5, seed=1)), requires_grad=[True, False])
    compare(torch, fn, rand(4, 5), np.array([1, 0, 4, -100]))
    compare(torch, fn, rand(2, 5, 3), np.array([[1, 0, 4], [2, 2, -100]]))
    if ls:
        compare(torch, fn, rand(5), np.array(3))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_margin_losses(reduction):
    x = rand(4, 5) * 0.5
    t = np.array([1, 0, 4, 4])
    w = np.abs(rand(5, seed=3))

    def mm(p, margin, weight):
        def fn(L, x, t):
            wt = None if weight is None else L.tensor(weight)
            return L.nn.functional.multi_margin_loss(x, t, p=p, margin=margin, weight=wt,
                                                     reduction=reduction)
        return fn

    compare(torch, mm(1, 1.0, None), x, t)
    compare(torch, mm(2, 0.7, w), x, t)
    compare(torch, mm(1, 1.0, None), x[0], np.array(3))
    compare(torch, mm(1, 1.0, None), x[0], np.array([3]))
    labels = np.array([[1, 0, -1, 4, 2], [4, 4, -1, 0, 0], [0, 1, 2, 3, 4], [-1, 2, 3, 1, 1]])

    def ml(L, x, t):
        return L.nn.functional.multilabel_margin_loss(x, t, reduction=reduction)

    compare(torch, ml, x, labels)
    compare(torch, ml, x[0], np.array([3, 1, -1, 0, 0]))


def test_margin_loss_double_backward_raises_as_torch():
    for name, t in (("multi_margin_loss", [0, 1]), ("multilabel_margin_loss", [[0, 1, -1]] * 2)):
        msgs = []
        for lib in (ember, torch):
            x = lib.tensor(rand(2, 3), requires_grad=True)
            loss = getattr(lib.nn.functional, name)(x, lib.tensor(t))
            g, = lib.autograd.grad(loss, x, create_graph=True)
            assert type(g.grad_fn).__name__ == "NotImplemented"
            with pytest.raises(RuntimeError) as err:
                g.sum().backward()
            msgs.append(str(err.value))
        assert msgs[0] == msgs[1]


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("kw", [{}, {"include_last_offset": True}, {"padding_idx": 2},
                                {"padding_idx": -1, "include_last_offset": True}])
def test_embedding_bag(mode, kw):
    idx = np.array([1, 0, 4, 2, 2, 5, 1])
    offs = np.array([0, 2, 2, 5])

    def fn(L, w, i, o):
        return L.nn.functional.embedding_bag(i, w, o, mode=mode, **kw)

    compare(torch, fn, rand(6, 3), idx, offs)
    compare(torch, lambda L, w, i: L.nn.functional.embedding_bag(i, w, mode=mode),
            rand(6, 3), idx[:6].reshape(2, 3))
    if mode == "sum":
        compare(torch, lambda L, w, i, o, p: L.nn.functional.embedding_bag(
            i, w, o, mode="sum", per_sample_weights=p, **kw), rand(6, 3), idx, offs, rand(7))


@pytest.mark.parametrize("shapes", [((5, 2), (5, 3)), ((2,), (3,)), ((2, 4, 2), (2, 4, 3)),
                                    ((0, 2), (0, 3))])
def test_bilinear(shapes):
    compare(torch, lambda L, a, b, w, c: L.nn.functional.bilinear(a, b, w, c),
            rand(*shapes[0]), rand(*shapes[1], seed=1), rand(4, 2, 3), rand(4))


SDPA = [
    ([(1, 2, 3, 4)] * 3, None, {}),
    ([(1, 2, 3, 4)] * 3, None, {"is_causal": True}),
    ([(1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4)], "float", {}),
    ([(1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4)], "bool", {}),
    ([(2, 3, 4)] * 3, None, {}),
    ([(2, 3, 4)] * 3, "bool", {"scale": 0.3}),
    ([(1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 2)], None, {}),
    ([(3, 4), (5, 4), (5, 4)], None, {"is_causal": True}),
]


@pytest.mark.parametrize("case", range(len(SDPA)))
def test_scaled_dot_product_attention(case):
    shapes, mask, kw = SDPA[case]
    arrays = [rand(*s, seed=k) for k, s in enumerate(shapes)]
    lq, lk = shapes[0][-2], shapes[1][-2]
    if mask == "float":
        arrays.append(rand(lq, lk, seed=9))
    elif mask == "bool":
        m = rand(lq, lk, seed=9) > 0
        m[1] = False        # a row masked throughout gives zeros, with zero gradient
        arrays.append(m)

    def fn(L, q, k, v, *m):
        return L.nn.functional.scaled_dot_product_attention(q, k, v, *m, **kw)

    compare(torch, fn, *arrays, requires_grad=[True, True, True, False])


@pytest.mark.parametrize("opts", [{}, {"batch_first": True}, {"add_bias_kv": True},
                                  {"add_zero_attn": True}, {"kdim": 3, "vdim": 5}])
@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_matches_torch(opts, need_weights):
    kdim, vdim = opts.get("kdim", 4), opts.get("vdim", 4)
    bf = opts.get("batch_first", False)
    q, k, v = rand32(3, 2, 4), rand32(5, 2, kdim, seed=1), rand32(5, 2, vdim, seed=2)
    if bf:
        q, k, v = (a.transpose(1, 0, 2).copy() for a in (q, k, v))
    kpm = np.zeros((2, 5), dtype=bool)
    kpm[1, 3:] = True
    ref = torch.nn.MultiheadAttention(4, 2, **opts)
    state = {name: p.detach().numpy().copy() for name, p in ref.state_dict().items()}

    def fn(L, q, k, v, kpm):
        m = L.nn.MultiheadAttention(4, 2, **opts)
        m.load_state_dict({n: L.tensor(a) for n, a in state.items()})
        out, w = m(q, k, v, key_padding_mask=kpm, need_weights=need_weights)
        return (out, w) if w is not None else out

    compare(torch, fn, q, k, v, kpm)


# --- dtypes and errors ---------------------------------------------------------------------

I32, I64 = np.ones(3, np.int32), np.ones(3, np.int64)
B = np.ones(3, bool)
F32 = np.full(3, 0.5, np.float32)
F16 = np.full(3, 0.5, np.float16)
F64 = np.full(3, 0.5)
C128 = np.ones(3, np.complex128)
PAIRS = [(F16, F32), (I32, I32), (B, B), (C128, C128), (I64, np.ones((5, 3), np.float32)),
         (F32, B), (F64, F32), (F32, F64)]
LOSSES = ["mse_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss", "kl_div",
          "binary_cross_entropy", "binary_cross_entropy_with_logits"]


@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("pair", range(len(PAIRS)))
@pytest.mark.parametrize("backward", [False, True])
def test_elementwise_loss_dtypes(name, pair, backward):
    a, b = PAIRS[pair]
    if backward and a.dtype.kind == "c":
        pytest.skip("complex outputs: the engine's own order of checks")
    raises_like(lambda L, x, t: getattr(L.nn.functional, name)(x, t), a, b, backward=backward)


@pytest.mark.parametrize("fn", [
    lambda L, a, b, t: L.nn.functional.margin_ranking_loss(a, b, t),
    lambda L, a, b, t: L.nn.functional.triplet_margin_loss(a, b, t),
    lambda L, a, b, t: L.nn.functional.triplet_margin_with_distance_loss(a, b, t),
])
def test_same_dims_checks(fn):
    raises_like(fn, rand(1, 3), rand(1, 3), np.array(1.0))
    raises_like(fn, np.ones((2, 3), np.int32), np.ones((2, 3), np.int32),
                np.ones((2, 3), np.int32))


def test_gaussian_nll_loss_var_forms():
    raises_like(lambda L, x: L.nn.functional.gaussian_nll_loss(x, 0, 2), rand(3))
    compare(torch, lambda L, x: L.nn.functional.gaussian_nll_loss(x, -0.5, 0.5),
            np.arange(3, dtype=np.int64))
    compare(torch, lambda L, x, t, v: L.nn.functional.gaussian_nll_loss(x, t, v, full=True),
            rand(3, 4), rand(3, 4, seed=1), np.abs(rand(3, seed=2)) * 1e-7)


DROPOUTS = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
            "feature_alpha_dropout"]
SHAPES = [(3, 0), (0,), (2, 3), (2, 2, 2), (2, 2, 2, 2), (1, 2, 2, 2, 2), ()]


@pytest.mark.parametrize("name", DROPOUTS)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex128"])
@pytest.mark.parametrize("shape", SHAPES)
def test_dropout_dtypes_and_shapes(name, dtype, shape):
    x = np.ones(shape, dtype)
    raises_like(lambda L, t: getattr(L.nn.functional, name)(t, 0.5, True), x)
    raises_like(lambda L, t: getattr(L.nn.functional, name)(t, 1.0, True), x)


def test_dropout2d_reads_3d_input_as_batched():
    x = ember.ones(4, 6, 50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = ember.nn.functional.dropout2d(x, 0.5).numpy()
    # one mask value per (sample, channel): each row of L values is all 0 or all 2
    assert np.all((out == out[:, :, :1]))


@pytest.mark.parametrize("fn", [
    lambda L, t: L.nn.functional.one_hot(t),
    lambda L, t: L.nn.functional.one_hot(t.int(), 3),
    lambda L, t: L.nn.functional.pdist(t.to(L.complex64).reshape(-1, 1)),
    lambda L, t: L.nn.functional.pdist(t.reshape(-1, 1)),
    lambda L, t: L.nn.functional.pdist(t.double().reshape(-1, 1), -1),
])
def test_index_and_distance_errors(fn):
    raises_like(fn, np.zeros(0, np.int64))
    raises_like(fn, np.array([1, 2, 0]))


@pytest.mark.parametrize("dts", [("float32", "int64", "int64"), ("float32", "bool", "bool"),
                                 ("float32", "float32", "float32"), ("int64", "int64", "int64"),
                                 ("float32", "float32", "int64")])
def test_sdpa_dtype_errors(dts):
    arrays = [np.ones((2, 2), d) for d in dts]
    raises_like(lambda L, q, k, v: L.nn.functional.scaled_dot_product_attention(q, k, v),
                *arrays)
    raises_like(lambda L, q, k, v: L.nn.functional.scaled_dot_product_attention(
        q[0], k[0], v), *arrays)
    raises_like(lambda L, q, k, v: L.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=L.ones(2, 2, dtype=L.float16)), *arrays)


def test_embedding_errors():
    raises_like(lambda L, w: L.nn.functional.embedding(L.tensor([1.0]), w), rand(3, 2))
    w = np.ones((3, 2), np.complex64)
    raises_like(lambda L, w: L.nn.functional.embedding(L.tensor([1]), w.requires_grad_()), w)
    for bad in (lambda L, w: L.nn.functional.embedding_bag(L.tensor([1, 7]), w, L.tensor([0])),
                lambda L, w: L.nn.functional.embedding_bag(L.tensor([1, 2]), w, L.tensor([1])),
                lambda L, w: L.nn.functional.embedding_bag(L.tensor([1, 2]), w,
                                                           L.tensor([0, 5])),
                lambda L, w: L.nn.functional.embedding_bag(L.tensor([1, 2]), w.int(),
                                                           L.tensor([0]))):
        raises_like(bad, rand(5, 3))


@pytest.mark.parametrize("stats", [("int64", "int64"), ("float32", "bool"),
                                   ("float32", "float32"), ("float64", "uint8")])
def test_instance_norm_running_stats_of_any_dtype(stats):
    rm, rv = np.array([1, 3, -3]).astype(stats[0]), np.array([3, 3, 3]).astype(stats[1])
    for use in (True, False):
        res = []
        for lib in (ember, torch):
            m, v = lib.tensor(rm), lib.tensor(rv)
            try:
                out = lib.nn.functional.instance_norm(lib.tensor(rand(2, 3, 4)), m, v,
                                                      use_input_stats=use)
                res.append((out.detach().numpy(), m.numpy(), v.numpy()))
            except RuntimeError as e:
                res.append(str(e))
        if isinstance(res[0], str) or isinstance(res[1], str):
            assert res[0] == res[1]
            continue
        for a, b in zip(*res):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_batch_norm_nan_and_inf_parameters_propagate_as_torch():
    x = rand(2, 3, 5).astype(np.float32)
    x[0, 0, 0], x[1, 2, 4] = np.nan, np.inf
    w = np.array([np.nan, -1.1, np.inf], np.float32)
    b = np.array([np.nan, -0.6, np.inf], np.float32)
    with np.errstate(all="ignore"):
        compare(torch, lambda L, x, w, b: L.nn.functional.instance_norm(x, weight=w, bias=b),
                x, w, b)
        compare(torch, lambda L, x, w, b: L.nn.functional.batch_norm(
            x, None, None, w, b, training=True), x, w, b)


def test_batch_norm_strided_eval_defers_the_dtype_error_to_backward():
    def fn(L, x, m, v):
        return L.nn.functional.batch_norm(x.t(), m, v)

    raises_like(fn, rand(3, 2).astype(np.float32), np.zeros(3, np.float32), np.ones(3, bool),
                backward=True)


STRICT = [
    (lambda L, w, i, o: L.nn.functional.embedding_bag(i, w, o, mode="max"),
     [rand(6, 3), np.array([1, 0, 4, 2, 2]), np.array([0, 2, 2])]),
    (lambda L, w, i, o, p: L.nn.functional.embedding_bag(i, w, o, mode="sum",
                                                         per_sample_weights=p, padding_idx=2),
     [rand(6, 3), np.array([1, 0, 4, 2, 2]), np.array([0, 2, 2]), rand(5)]),
    (lambda L, x, t: L.nn.functional.multi_margin_loss(x, t, p=2),
     [rand(3, 4), np.array([0, 3, 1])]),
    (lambda L, x, t: L.nn.functional.multilabel_margin_loss(x, t),
     [rand(2, 4), np.array([[3, 0, -1, 1], [1, 2, -1, 0]])]),
    (lambda L, a, b, w: L.nn.functional.bilinear(a, b, w), [rand(5, 2), rand(5, 3), rand(4, 2, 3)]),
    (lambda L, q, k, v: L.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True),
     [rand(1, 2, 3, 4), rand(1, 2, 3, 4, seed=1), rand(1, 2, 3, 4, seed=2)]),
    (lambda L, x, t: L.nn.functional.cross_entropy(x, t, label_smoothing=0.1),
     [rand(3, 4), np.array([0, 3, 1])]),
    (lambda L, x: L.nn.functional.local_response_norm(x, 3), [rand(2, 5, 4)]),
]


@pytest.mark.parametrize("case", range(len(STRICT)))
def test_strict_device(case):
    fn, arrays = STRICT[case]
    compare(torch, fn, *arrays, device="strict")
