"""Fuzz templates for losses, normalization, dropout, embeddings and RNN cells (the torch.*
C++-signature forms and the nn.functional ones the generic templates cannot reach).

Dropout variants outside ``ops.RANDOM`` (``dropout_``, ``feature_dropout``...) draw only
deterministic arguments (``train=False``, ``p`` 0 or 1, or an invalid ``p``), so that their
values can be compared.
"""
from .ops import RANDOM, Gen  # noqa: F401  (Gen: the drawing helpers these templates use)


def _float_dt(g):
    dt = g.dtype()
    return dt if g.chance(0.15) or dt.startswith("float") else "float64"


def _dropout(name):
    random_ok = name in RANDOM

    def tpl(g):
        shape = (2, 3, 4) if g.probe else g.pick([(2, 3, 4), (2, 3), (3,), (), (0, 2, 2),
                                                  (2, 2, 2, 2)])
        x = g.tensor(shape, grad=False if name.endswith("_") else None)
        if random_ok:
            p = g.pick([0.5, 0.0, 1.0, 0.2, 1.5, -0.1])
            train = bool(g.pick([True, False]))
        else:
            p = g.pick([0.5, 0.0, 1.0, 1.5, -0.1])
            train = bool(g.pick([False, True]))
            if train and 0 < p < 1:
                train = False
        return [x, p, train], {}
    return tpl


def _batch_norm(g, native=False):
    shape = (2, 3, 4) if g.probe else g.pick([(2, 3, 4), (4, 3), (2, 3), (1, 3), (2, 3, 2, 2),
                                              (0, 3)])
    dt = _float_dt(g)
    c = shape[1]
    pdt = dt if not g.chance(0.1) else g.pick(["float32", "float64"])
    w = g.tensor((c,), dtype=pdt) if g.chance(0.7) else None
    b = g.tensor((c,), dtype=pdt) if g.chance(0.7) else None
    training = bool(g.pick([True, False]))
    stats = not training or g.chance(0.6)
    rm = g.tensor((c,), dtype=pdt, grad=False, layout="c") if stats else None
    rv = g.tensor((c,), "pos", dtype=pdt, grad=False, layout="c") if stats else None
    args = [g.tensor(shape, dtype=dt), w, b, rm, rv, training, g.pick([0.1, 0.0, 1.0]),
            g.pick([1e-5, 1e-3, 0.0])]
    return (args if native else args + [False]), {}


def _instance_norm(g):
    shape = (2, 3, 4) if g.probe else g.pick([(2, 3, 4), (1, 2, 3), (2, 3, 2, 2), (2, 3, 1)])
    dt = _float_dt(g)
    c = shape[1]
    w = g.tensor((c,), dtype=dt) if g.chance(0.6) else None
    b = g.tensor((c,), dtype=dt) if g.chance(0.6) else None
    use_stats = bool(g.pick([True, True, False]))
    stats = not use_stats or g.chance(0.4)
    rm = g.tensor((c,), dtype=dt, grad=False, layout="c") if stats else None
    rv = g.tensor((c,), "pos", dtype=dt, grad=False, layout="c") if stats else None
    return [g.tensor(shape, dtype=dt), w, b, rm, rv, use_stats, 0.1, 1e-5, False], {}


def _native_group_norm(g):
    n, c, hw = (2, 4, 3) if g.probe else (g.pick([2, 1, 0]), g.pick([4, 2]), g.pick([3, 1]))
    groups = g.pick([2, 1, 4, 3])
    dt = _float_dt(g)
    w = g.tensor((c,), dtype=dt) if g.chance(0.6) else None
    b = g.tensor((c,), dtype=dt) if g.chance(0.6) else None
    return [g.tensor((n, c, hw), dtype=dt), w, b, n, c, hw, groups, 1e-5], {}


def _native_layer_norm(g):
    shape = (2, 3, 4) if g.probe else g.pick([(2, 3, 4), (3, 4), (4,), (2, 0, 4)])
    k = g.pick([1, 2])
    ns = shape[len(shape) - k:] if k <= len(shape) else shape
    if g.chance(0.08):
        ns = (5,)
    dt = _float_dt(g)
    w = g.tensor(ns, dtype=dt) if g.chance(0.6) else None
    b = g.tensor(ns, dtype=dt) if g.chance(0.6) else None
    return [g.tensor(shape, dtype=dt), list(ns), w, b, g.pick([1e-5, 1e-3])], {}


def _rms_norm(g):
    (x, ns, w, _, eps), _ = _native_layer_norm(g)
    kw = {"eps": eps} if g.chance(0.5) else {}
    return [x, ns] + ([w] if w is not None else []), kw


def _bilinear(g):
    n, i1, i2, o = (3, 2, 4, 2) if g.probe else (g.pick([3, 1, 0]), g.pick([2, 1]),
                                                 g.pick([4, 2]), g.pick([2, 1]))
    dt = _float_dt(g)
    args = [g.tensor((n, i1), dtype=dt), g.tensor((n, i2), dtype=dt),
            g.tensor((o, i1, i2), dtype=dt)]
    if g.chance(0.5):
        args.append(g.tensor((o,), dtype=dt))
    return args, {}


def _cosine_embedding(cxx):
    def tpl(g):
        shape = (3, 4) if g.probe else g.pick([(3, 4), (4,), (2, 3), (0, 2)])
        dt = _float_dt(g)
        tshape = shape[:1] if len(shape) == 2 else ()
        t = g.tensor(tshape, "pos", dtype=g.pick(["int64", "float64", "float32"]), grad=False)
        margin = g.pick([0.0, 0.5, -0.2])
        if cxx:
            return [g.tensor(shape, dtype=dt), g.tensor(shape, dtype=dt), t, margin,
                    g.pick([1, 0, 2])], {}
        return [g.tensor(shape, dtype=dt), g.tensor(shape, dtype=dt), t], \
            {"margin": margin, "reduction": g.pick(["mean", "none", "sum"])}
    return tpl


def _ctc(cxx):
    def tpl(g):
        t_len, n, c, s = (5, 2, 4, 2) if g.probe else (g.pick([5, 4, 3]), g.pick([2, 1]),
                                                       g.pick([4, 3]), g.pick([2, 1, 3]))
        dt = "float64" if g.probe else g.pick(["float64", "float32", "float32", "float16",
                                               "int64"])
        lp = g.tensor((t_len, n, c), dtype=dt)
        tg = g.idx((n, s), c - 1)
        tg = ("T", tg[1], g.pick(["int64", "int64", "int32"]), ("idx", c - 1), "c", False)
        in_lens = [int(g.pick([t_len, t_len - 1])) for _ in range(n)]
        tgt_lens = [int(g.pick([s, max(s - 1, 0)])) for _ in range(n)]
        if g.chance(0.3):
            in_lens = ("T", (n,), "int64", ("idx", 1), "c", False)
        blank = 0 if not g.chance(0.1) else c
        if cxx:
            return [lp, tg, in_lens, tgt_lens, blank, g.pick([1, 0, 2]),
                    bool(g.chance(0.3))], {}
        return [lp, tg, in_lens, tgt_lens], {"blank": blank,
                                             "reduction": g.pick(["mean", "sum", "none"]),
                                             "zero_infinity": bool(g.chance(0.3))}
    return tpl


def _embedding(g):
    n = 5
    dt = g.pick(["float64", "float32"]) if not g.chance(0.1) else g.dtype()
    idx = g.idx((3,) if g.probe else g.pick([(3,), (2, 2), (0,), ()]), n,
                dtype="int64" if not g.chance(0.1) else "int32")
    args = [g.tensor((n, 3), dtype=dt), idx]
    if g.chance(0.5):
        args += [g.pick([-1, 0, 2, 4]), bool(g.chance(0.3))]
    return args, {}


def _embedding_renorm(g):
    n = 5
    w = g.tensor((n, 3), dtype=g.pick(["float64", "float32"]), grad=False)
    idx = g.idx((3,) if g.probe else g.pick([(3,), (2, 2), (0,)]), n)
    return [w, idx, g.pick([1.0, 0.5, 2.0]), g.pick([2.0, 1.0, 3.0])], {}


def _embedding_bag(g):
    n = 5
    w = g.tensor((n, 3), dtype=g.pick(["float64", "float32"]))
    mode = g.pick(["mean", "sum", "max"])
    if g.chance(0.5):
        idx = g.idx((2, 3) if g.probe else g.pick([(2, 3), (1, 2), (3, 1)]), n)
        kw = {"mode": mode}
        if mode == "sum" and g.chance(0.4):
            kw["per_sample_weights"] = g.tensor(idx[1], dtype=w[2])
        return [idx, w], kw
    idx = g.idx((6,), n)
    # (offsets drawn as zeros: every bag but the last empty, a valid edge case)
    offsets = ("T", (3,), "int64", ("idx", 1), "c", False)
    return [idx, w, offsets], {"mode": mode, "include_last_offset": bool(g.chance(0.3))}


def _multilabel_margin(g):
    shape = (2, 4) if g.probe else g.pick([(2, 4), (4,), (3, 2), (0, 3)])
    c = shape[-1]
    t = ("T", shape, "int64", ("idx", c), "c", False)
    if g.chance(0.2):
        t = ("T", shape, "int64", "u", "c", False)      # values -3..3: -1 ends a frame
    return [g.tensor(shape, dtype=_float_dt(g)), t], \
        ({"reduction": g.pick(["mean", "none", "sum"])} if g.chance(0.5) else {})


def _cell(kind):
    gates = {"lstm": 4, "gru": 3}.get(kind, 1)

    def tpl(g):
        n, i, h = (3, 2, 4) if g.probe else (g.pick([3, 1, 0]), g.pick([2, 1]), g.pick([4, 2]))
        dt = _float_dt(g)
        x = g.tensor((n, i) if not g.chance(0.1) else (i,), dtype=dt)
        hx = g.tensor((n, h) if len(x[1]) == 2 else (h,), dtype=dt)
        if kind == "lstm":
            hx = ("L", [hx, g.tensor(hx[1], dtype=dt)])
        args = [x, hx, g.tensor((gates * h, i), dtype=dt), g.tensor((gates * h, h), dtype=dt)]
        if g.chance(0.6):
            args += [g.tensor((gates * h,), dtype=dt), g.tensor((gates * h,), dtype=dt)]
        return args, {}
    return tpl


def _native_norm(g):
    x = g.tensor((2, 3) if g.probe else g.pick([(2, 3), (3,), (), (0, 2)]))
    if g.chance(0.5):
        return [x, g.pick([2, 1, 3, 0])], {}
    nd = len(x[1])
    return [x, g.pick([2, 1, 3]), [g.dim(nd)] if nd else [], bool(g.chance(0.5)), None], {}


def _poisson_nll(g):
    shape = g.shape() if not g.probe else (3, 4)
    log_input = bool(g.pick([True, False]))
    x = g.tensor(shape, "u" if log_input else "pos")
    t = g.tensor(g.broadcast_like(shape), "pos", dtype=x[2] if not g.chance(0.1) else None)
    return [x, t, log_input, bool(g.chance(0.4)), g.pick([1e-8, 0.5]), g.pick([1, 0, 2])], {}


TEMPLATES = {
    "loss_batch_norm": _batch_norm,
    "loss_native_batch_norm": lambda g: _batch_norm(g, True),
    "loss_instance_norm": _instance_norm,
    "loss_native_group_norm": _native_group_norm,
    "loss_native_layer_norm": _native_layer_norm,
    "loss_rms_norm": _rms_norm,
    "loss_bilinear": _bilinear,
    "loss_cosine_embedding_cxx": _cosine_embedding(True),
    "loss_cosine_embedding": _cosine_embedding(False),
    "loss_ctc_cxx": _ctc(True),
    "loss_ctc": _ctc(False),
    "loss_embedding": _embedding,
    "loss_embedding_renorm": _embedding_renorm,
    "loss_embedding_bag": _embedding_bag,
    "loss_multilabel_margin": _multilabel_margin,
    "loss_native_norm": _native_norm,
    "loss_poisson_nll": _poisson_nll,
}
_DROPOUTS = ["dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_dropout",
             "feature_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_",
             "native_dropout"]
for _n in _DROPOUTS:
    TEMPLATES["loss_drop_" + _n] = _dropout(_n)
for _k in ("lstm", "gru", "rnn_relu", "rnn_tanh"):
    TEMPLATES["loss_cell_" + _k] = _cell(_k.split("_")[-1] if _k.startswith("rnn") else _k)

HAND = {("torch", n): ["loss_drop_" + n] for n in _DROPOUTS}
HAND.update({
    ("torch", "batch_norm"): ["loss_batch_norm"],
    ("torch", "native_batch_norm"): ["loss_native_batch_norm"],
    ("torch", "instance_norm"): ["loss_instance_norm"],
    ("torch", "native_group_norm"): ["loss_native_group_norm"],
    ("torch", "native_layer_norm"): ["loss_native_layer_norm"],
    ("torch", "rms_norm"): ["loss_rms_norm"],
    ("torch", "bilinear"): ["loss_bilinear"], ("F", "bilinear"): ["loss_bilinear"],
    ("torch", "cosine_embedding_loss"): ["loss_cosine_embedding_cxx"],
    ("F", "cosine_embedding_loss"): ["loss_cosine_embedding"],
    ("torch", "ctc_loss"): ["loss_ctc_cxx"], ("F", "ctc_loss"): ["loss_ctc"],
    ("torch", "embedding"): ["loss_embedding"],
    ("torch", "embedding_renorm_"): ["loss_embedding_renorm"],
    ("F", "embedding_bag"): ["loss_embedding_bag"],
    ("F", "multilabel_margin_loss"): ["loss_multilabel_margin"],
    ("torch", "native_norm"): ["loss_native_norm"],
    ("torch", "poisson_nll_loss"): ["loss_poisson_nll"],
    ("torch", "lstm_cell"): ["loss_cell_lstm"], ("torch", "gru_cell"): ["loss_cell_gru"],
    ("torch", "rnn_relu_cell"): ["loss_cell_rnn_relu"],
    ("torch", "rnn_tanh_cell"): ["loss_cell_rnn_tanh"],
})
