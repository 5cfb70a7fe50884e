"""bfloat16 (ml_dtypes' NumPy dtype, whose ``kind`` is "V") counted as a floating dtype where
torch counts it, and bfloat16 values, errors and warnings as torch's."""
import os
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

NAN = float("nan")


def _np(t):
    """Values of a torch or ember tensor as a float64/int64 NumPy array."""
    t = t.detach()
    if t.is_floating_point():
        t = t.double()
    return np.asarray(t.numpy())


def _same(a, b, rtol=0.0, atol=0.0):
    assert str(a.dtype) == str(b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol, equal_nan=True)


def _both(fn):
    return fn(torch), fn(ember)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (compared with torch's)
        return type(e).__name__, str(e)
    return None


VALS = [1.0, NAN, 2.0, 1.0, -3.0, NAN, 2.0, 0.5, 0.25, -0.75, 0.25, 3.0]


def _x(L, shape=(3, 4)):
    return L.tensor(VALS).reshape(shape).to(L.bfloat16)


@pytest.mark.parametrize("name,fn", [
    ("is_signed", lambda L, x: L.tensor(x.is_signed())),
    ("frexp", lambda L, x: L.frexp(x)),
    ("nextafter", lambda L, x: L.nextafter(x, x.flip(1))),
    ("cummax", lambda L, x: L.cummax(x, 1)),
    ("cummin", lambda L, x: L.cummin(x, 1)),
    ("sort", lambda L, x: L.sort(x, 1)),
    ("sort_desc", lambda L, x: L.sort(x, 1, descending=True)),
    ("sort_stable", lambda L, x: L.sort(x, dim=1, stable=True)),
    ("argsort", lambda L, x: L.argsort(x, 1)),
    ("msort", lambda L, x: L.msort(x)),
    ("topk", lambda L, x: L.topk(x, 2, 1)),
    ("topk_small", lambda L, x: L.topk(x, 2, 1, largest=False)),
    ("kthvalue", lambda L, x: L.kthvalue(x, 2, 1)),
    ("unique", lambda L, x: L.unique(x)),
    ("unique_dim", lambda L, x: L.unique(x.nan_to_num(), dim=1, return_inverse=True)),
    ("median", lambda L, x: L.median(x)),
    ("median_dim", lambda L, x: L.median(x, 1)),
    ("nanmedian", lambda L, x: L.nanmedian(x)),
    ("mode", lambda L, x: L.mode(x, 1)),
    ("polygamma", lambda L, x: L.polygamma(2, x.abs() + 0.5)),
    ("igamma", lambda L, x: L.igamma(x.abs() + 0.5, x.abs())),
    ("igammac", lambda L, x: L.igammac(x.abs() + 0.5, x.abs())),
    ("xlog1py", lambda L, x: L.special.xlog1py(x, x.abs())),
    ("nanmean", lambda L, x: L.nanmean(x, 1)),
    ("rms_norm", lambda L, x: L.nn.functional.rms_norm(x.nan_to_num() * 0.05, (4,))),
    ("rms_norm_w32", lambda L, x: L.nn.functional.rms_norm(
        x.nan_to_num(), (4,), L.tensor([0.5, 1.0, 2.0, -1.0]))),
    ("soft_margin_f16", lambda L, x: L.nn.functional.soft_margin_loss(
        x.nan_to_num().half(), x.nan_to_num().sign())),
    ("bce_logits_f16", lambda L, x: L.nn.functional.binary_cross_entropy_with_logits(
        x.nan_to_num().half(), x.nan_to_num().sigmoid())),
])
def test_bfloat16_matches_torch(name, fn):
    """Each op on bfloat16 with NaN gives torch's values (sort order: NaN last), indices and
    dtypes, or its error."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, e = _both(lambda L: _error(lambda: fn(L, _x(L))) or fn(L, _x(L)))
    if isinstance(t, tuple) and isinstance(t[0], str):
        assert e == t
        return
    ts = t if isinstance(t, tuple) else (t,)
    es = e if isinstance(e, tuple) else (e,)
    assert len(ts) == len(es)
    for a, b in zip(es, ts):
        _same(a, b, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("name,fn", [
    ("polar", lambda L: L.polar(L.ones(2, dtype=L.bfloat16), L.ones(2, dtype=L.bfloat16))),
    ("avg_pool3d", lambda L: L.nn.functional.avg_pool3d(L.ones(1, 2, 4, 4, 4).bfloat16(), 2)),
    ("lp_pool3d", lambda L: L.nn.functional.lp_pool3d(L.ones(1, 2, 4, 4, 4).bfloat16(), 1, 2)),
    ("lrn_4d", lambda L: L.nn.functional.local_response_norm(L.ones(2, 3, 4, 4).bfloat16(), 2)),
    ("multi_margin", lambda L: L.nn.functional.multi_margin_loss(
        L.ones(2, 3).bfloat16(), L.tensor([0, 1]))),
])
def test_bfloat16_errors_match_torch(name, fn):
    t, e = _both(lambda L: _error(lambda: fn(L)))
    assert t is not None and e == t


def test_can_cast_bfloat16():
    pairs = [("bfloat16", "float32"), ("bfloat16", "int64"), ("int64", "bfloat16"),
             ("bfloat16", "complex64"), ("complex64", "bfloat16"), ("bool", "bfloat16")]
    for a, b in pairs:
        assert ember.can_cast(getattr(ember, a), getattr(ember, b)) == \
            torch.can_cast(getattr(torch, a), getattr(torch, b))


def test_embedding_bag_bfloat16():
    """A bfloat16 weight is floating (it used to be refused as non-float)."""
    outs = []
    for L in (torch, ember):
        w = L.tensor(np.linspace(-1, 1, 15).reshape(5, 3)).to(L.bfloat16).requires_grad_()
        out = L.nn.functional.embedding_bag(L.tensor([0, 2, 1, 4]), w, L.tensor([0, 2]),
                                            mode="mean")
        out.backward(L.ones_like(out))
        outs.append((out, w.grad))
    _same(outs[1][0], outs[0][0], 1e-2, 1e-2)
    _same(outs[1][1], outs[0][1])


def test_random_bfloat16_stream_and_warnings():
    """random_ on bfloat16 draws torch's numbers ([0, 2**8] by default) and warns as torch
    (c10::BFloat16 holds integers exactly up to 2**8)."""
    res = []
    for L in (torch, ember):
        L.manual_seed(3)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            vals = [L.empty(8, dtype=L.bfloat16).random_(),
                    L.empty(4, dtype=L.bfloat16).random_(-300, 5),
                    L.randint_like(L.zeros(5, dtype=L.bfloat16), 3),
                    L.empty(3, dtype=L.bfloat16).random_(0, 2 ** 33),
                    L.empty(3, dtype=L.float16).random_(0, 2 ** 12 + 3)]
        res.append((vals, sorted(str(m.message).split(" (Triggered")[0] for m in w)))
    for a, b in zip(res[1][0], res[0][0]):
        _same(a, b)
    assert res[1][1] == res[0][1]


def test_sinc_gradient_is_torch_formula():
    """sinc's backward uses torch's formula ((pi x) cos(pi x) - sin(pi x)) / (pi x x)."""
    grads = []
    for L in (torch, ember):
        x = L.tensor([-2.5, -0.3, 0.0, 0.1, 0.7, 1.5, 3.25], dtype=L.float64,
                     requires_grad=True)
        L.sinc(x).backward(L.ones_like(x))
        xb = x.detach().to(L.bfloat16).requires_grad_()
        L.sinc(xb).backward(L.ones_like(xb))
        grads.append((x.grad, xb.grad))
    _same(grads[1][0], grads[0][0], rtol=1e-15, atol=1e-15)
    _same(grads[1][1], grads[0][1], rtol=1e-2, atol=1e-2)


def test_rms_norm_reduced_precision_graph():
    """Half/BFloat16 rms_norm computes in float32 (eps: float32's) and casts back, with
    torch's graph (ToCopyBackward0 at both ends)."""
    def walk(n, depth=0):
        if n is None or depth > 8:
            return []
        return [type(n).__name__] + [x for f, _ in n.next_functions for x in walk(f, depth + 1)]
    for dts in (("bfloat16", None), ("float16", "bfloat16"), ("float32", "float64")):
        res = []
        for L in (torch, ember):
            x = L.tensor([[0.05, 0.06, -0.04, 0.07]]).to(getattr(L, dts[0])).requires_grad_()
            w = None if dts[1] is None else \
                L.tensor([1.0, 2.0, -1.0, 0.5]).to(getattr(L, dts[1])).requires_grad_()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = L.nn.functional.rms_norm(x, (4,), w)
            out.backward(L.ones_like(out))
            res.append((out, x.grad, walk(out.grad_fn)))
        _same(res[1][0], res[0][0])
        _same(res[1][1], res[0][1], rtol=1e-2, atol=1e-3)
        assert res[1][2] == res[0][2]


def test_reductions_with_grad_dtype_bfloat16():
    """An explicit bfloat16 dtype is floating: no "Autograd not support dtype" error."""
    outs = []
    for L in (torch, ember):
        x = L.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        a = L.tensor([1.5], dtype=L.bfloat16, requires_grad=True)
        outs.append((x.sum(1, dtype=L.bfloat16), x.cumsum(1, dtype=L.bfloat16),
                     L.inner(a, a)))
    for e, t in zip(outs[1], outs[0]):
        _same(e, t)


def test_anomaly_checks_nan_only():
    """detect_anomaly raises for a NaN gradient (bfloat16 and complex ones too), not for inf."""
    for dt in ("float32", "bfloat16", "complex64"):
        got = []
        for L in (torch, ember):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with L.autograd.detect_anomaly():
                    a = L.tensor([0.0, 1.0]).to(getattr(L, dt)).requires_grad_()
                    inf_err = _error(lambda: L.sqrt(a).real.sum().backward()
                                     if dt.startswith("complex") else L.sqrt(a).sum().backward())
                    b = L.tensor([1.0, 2.0]).to(getattr(L, dt)).requires_grad_()
                    nan_err = _error(lambda: (b * NAN).abs().sum().backward())
            got.append([err and (err[0], err[1].split("\n")[0]) for err in (inf_err, nan_err)])
        assert got[1] == got[0], dt


def _warned(L, fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn(L)
    return [(os.path.basename(m.filename), str(m.message)) for m in w]


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_implicit_dim_warns(name):
    """dim=None warns as torch, attributed to the caller (torch's _get_softmax_dim)."""
    t, e = _both(lambda L: _warned(L, lambda L: getattr(L.nn.functional, name)(
        L.tensor([[1.0, 2.0], [3.0, 0.5]]))))
    assert t and e == t and t[0][0] == os.path.basename(__file__)
    vals = _both(lambda L: getattr(L.nn.functional, name)(L.tensor([[1.0, 2.0], [3.0, 0.5]]),
                                                           1))
    _same(vals[1], vals[0], rtol=1e-6)


def test_canonical_mask_warning_points_at_its_caller():
    """torch's _canonical_mask warns with stacklevel 2: the line in its caller."""
    res = []
    for L in (torch, ember):
        q = L.ones(1, 3, 4)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            L.nn.functional._canonical_mask(L.tensor([[False, True, False]]), "key_padding_mask",
                                            L.float32, "attn_mask", q.dtype)
        res.append([(os.path.basename(m.filename), str(m.message)) for m in w])
    assert res[1] == res[0] and res[0][0][0] == os.path.basename(__file__)


@pytest.mark.parametrize("op", [("torch", "add"), ("torch", "mul"), ("torch", "exp"),
                                ("torch", "sum"), ("torch", "matmul"), ("torch", "sort"),
                                ("torch", "cumsum"), ("F", "softmax"), ("F", "gelu"),
                                ("F", "layer_norm"), ("torch", "where"), ("torch", "max")],
                         ids=lambda op: "%s:%s" % op)
def test_fuzzer_bfloat16_cases(op, monkeypatch):
    """The op fuzzer draws and compares bfloat16 cases (EMBER_FUZZ_DTYPE fixes the dtype)."""
    from fuzz import ops as opfuzz
    monkeypatch.setenv("EMBER_FUZZ_DTYPE", "bfloat16")
    ran = 0
    for seed in range(3):
        case = opfuzz.gen_case(op, 7000 + seed)
        if case is None:
            continue
        specs = []
        opfuzz._collect_specs((case[2], case[3]), specs)
        ran += any(s[2] == "bfloat16" for s in specs)
        m = opfuzz.check_case(case, torch)
        assert m is None, "%s: %s\n  %r" % (m.kind, m.detail, case)
    assert ran


def test_save_load_bfloat16_requires_grad():
    """A bfloat16 (or complex) tensor that requires grad round-trips through save/load."""
    import io
    res = []
    for L in (torch, ember):
        buf = io.BytesIO()
        L.save({"p": L.nn.Parameter(L.ones(3).bfloat16()),
                "t": L.ones(2).bfloat16().requires_grad_(),
                "c": L.ones(2, dtype=L.complex64).requires_grad_()}, buf)
        buf.seek(0)
        d = L.load(buf)
        res.append([(str(d[k].dtype), d[k].requires_grad, type(d[k]).__name__) for k in "ptc"])
    assert res[1] == res[0]


def test_optimizer_load_casts_bfloat16_state_to_param_dtype():
    res = []
    for L in (torch, ember):
        w = L.nn.Parameter(L.ones(3))
        opt = L.optim.Adam([w])
        w.grad = L.ones(3)
        opt.step()
        sd = opt.state_dict()
        sd["state"][0]["exp_avg"] = sd["state"][0]["exp_avg"].bfloat16()
        opt2 = L.optim.Adam([w])
        opt2.load_state_dict(sd)
        res.append(str(opt2.state[w]["exp_avg"].dtype))
    assert res[1] == res[0] == "torch.float32"
