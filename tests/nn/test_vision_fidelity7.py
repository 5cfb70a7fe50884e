"""Pooling, convolution and vision ops against torch (issue 21): values, indices, gradients,
double backward, one node with torch's name, and torch's errors for dtypes and bad arguments.

The ops are called from ``ember.ops`` (``conv``, ``pooling``, ``vision``), where they live.
"""
import numpy as np
import pytest

import ember
from ember.ops import conv as C
from ember.ops import pooling as P
from ember.ops import vision as V

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _run(ft, fe, arrays, dtype=np.float64, seed=0, double=True):
    """Forward, a random-upstream backward and a double backward in both; compare all."""
    rng = np.random.default_rng(seed)
    ts = [torch.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    es = [ember.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    yt, ye = ft(*ts), fe(*es)
    if isinstance(yt, tuple):
        np.testing.assert_array_equal(yt[1].numpy(), ye[1].numpy())
        yt, ye = yt[0], ye[0]
    assert tuple(yt.shape) == tuple(ye.shape)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-7, atol=1e-9)
    assert type(ye.grad_fn).__name__ == type(yt.grad_fn).__name__
    g = rng.standard_normal(tuple(yt.shape)).astype(dtype)
    gt = torch.autograd.grad(yt, ts, torch.tensor(g, requires_grad=True), create_graph=True)
    ge = ember.autograd.grad(ye, es, ember.tensor(g, requires_grad=True), create_graph=True)
    for a, b in zip(gt, ge):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-7, atol=1e-9)
    if not double:
        return
    st = sum((x * x.conj()).real.sum() for x in gt if x.requires_grad)
    se = sum((x * x.conj()).real.sum() for x in ge if x.requires_grad)
    if not isinstance(st, int):
        ggt = torch.autograd.grad(st, ts, allow_unused=True, materialize_grads=True)
        gge = ember.autograd.grad(se, es, allow_unused=True, materialize_grads=True)
        for a, b in zip(ggt, gge):
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6, atol=1e-8)


def _nan_input(shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    a.flat[7], a.flat[9], a.flat[min(30, a.size - 9)] = np.nan, np.nan, np.inf
    a.reshape(-1)[-8:] = -np.inf
    return a


def _expect_same_error(ft, fe):
    with pytest.raises(Exception) as et:
        ft()
    with pytest.raises(Exception) as ee:
        fe()
    assert type(ee.value) is type(et.value), (ee.value, et.value)
    assert str(ee.value) == str(et.value)


@pytest.mark.parametrize("args", [((2,), {}), ((3, 2, 1), {"ceil_mode": True}),
                                  (((2, 3, 2), (1, 2, 3), (1, 0, 1)), {"dilation": (2, 1, 2)})])
def test_max_pool3d(args):
    pos, kw = args
    a = _nan_input((2, 2, 5, 6, 7))
    _run(lambda x: TF.max_pool3d(x, *pos, return_indices=True, **kw),
         lambda x: P.max_pool3d(x, *pos, return_indices=True, **kw), [a])
    _run(lambda x: TF.max_pool3d(x[0], *pos, **kw), lambda x: P.max_pool3d(x[0], *pos, **kw),
         [a], double=False)


@pytest.mark.parametrize("kw", [{}, {"stride": 2, "padding": 1, "ceil_mode": True},
                                {"stride": 2, "padding": 1, "count_include_pad": False},
                                {"divisor_override": 3}])
def test_avg_pool3d(kw):
    a = np.random.default_rng(1).standard_normal((2, 2, 5, 6, 7))
    _run(lambda x: TF.avg_pool3d(x, 3, **kw), lambda x: P.avg_pool3d(x, 3, **kw), [a])


def test_avg_max_pool3d_integers():
    a = np.arange(2 * 2 * 4 * 4 * 4).reshape(2, 2, 4, 4, 4) * 7 % 23
    for ft, fe in ((TF.avg_pool3d, P.avg_pool3d), (TF.max_pool3d, P.max_pool3d)):
        np.testing.assert_array_equal(fe(ember.tensor(a), 3, 1, 1).numpy(),
                                      ft(torch.tensor(a), 3, 1, 1).numpy())


@pytest.mark.parametrize("fn,shape,out", [
    ("adaptive_avg_pool1d", (2, 3, 7), 3), ("adaptive_avg_pool2d", (2, 3, 5, 7), (2, 3)),
    ("adaptive_avg_pool2d", (3, 5, 7), (4, 9)),
    ("adaptive_avg_pool3d", (1, 2, 4, 5, 6), (2, 3, 7)),
    ("adaptive_max_pool1d", (2, 3, 7), 3), ("adaptive_max_pool2d", (2, 3, 5, 7), (2, 3)),
    ("adaptive_max_pool2d", (3, 5, 7), (9, 4)),
    ("adaptive_max_pool3d", (1, 2, 4, 5, 6), (2, 3, 7))])
def test_adaptive_pools_nonfinite(fn, shape, out):
    a = _nan_input(shape)
    kw = {"return_indices": True} if "max" in fn else {}
    _run(lambda x: getattr(TF, fn)(x, out, **kw), lambda x: getattr(P, fn)(x, out, **kw), [a])


def test_fractional_max_pool():
    rng = np.random.default_rng(2)
    a, u = _nan_input((2, 3, 7, 8)), rng.random((2, 3, 2))
    _run(lambda x: TF.fractional_max_pool2d(x, (2, 3), output_size=(4, 5), return_indices=True,
                                            _random_samples=torch.tensor(u)),
         lambda x: P.fractional_max_pool2d(x, (2, 3), output_size=(4, 5), return_indices=True,
                                           _random_samples=ember.tensor(u)), [a])
    b, u3 = rng.standard_normal((2, 3, 5, 6, 7)), rng.random((2, 3, 3))
    _run(lambda x: TF.fractional_max_pool3d(x, 2, output_ratio=(0.5, 0.6, 0.7),
                                            _random_samples=torch.tensor(u3)),
         lambda x: P.fractional_max_pool3d(x, 2, output_ratio=(0.5, 0.6, 0.7),
                                           _random_samples=ember.tensor(u3)), [b])


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool(nd):
    a = np.random.default_rng(3).standard_normal((2, 3) + (4,) * nd)
    y, i = getattr(TF, "max_pool%dd" % nd)(torch.tensor(a), 2, return_indices=True)
    ie = ember.tensor(i.numpy())
    _run(lambda v: getattr(TF, "max_unpool%dd" % nd)(v, i, 2),
         lambda v: P.max_unpool(v, ie, 2, None, 0, None, nd), [y.numpy()])


@pytest.mark.parametrize("kind", ["conv3d", "conv3d_same", "conv_transpose3d", "conv_tbc"])
def test_conv3d_tbc(kind):
    rng = np.random.default_rng(4)
    if kind == "conv3d":
        arrays = [rng.standard_normal((2, 4, 5, 6, 7)), rng.standard_normal((6, 2, 2, 3, 2)),
                  rng.standard_normal(6)]
        kw = dict(stride=(1, 2, 1), padding=(1, 0, 2), dilation=(2, 1, 1), groups=2)
        _run(lambda x, w, b: TF.conv3d(x, w, b, **kw), lambda x, w, b: C.conv3d(x, w, b, **kw),
             arrays)
    elif kind == "conv3d_same":
        arrays = [rng.standard_normal((4, 5, 6, 7)), rng.standard_normal((6, 4, 2, 3, 2))]
        _run(lambda x, w: TF.conv3d(x, w, padding="same"),
             lambda x, w: C.conv3d(x, w, padding="same"), arrays)
    elif kind == "conv_transpose3d":
        arrays = [rng.standard_normal((2, 6, 3, 4, 3)), rng.standard_normal((6, 2, 2, 3, 2)),
                  rng.standard_normal(4)]
        kw = dict(stride=(2, 1, 3), padding=(1, 0, 1), output_padding=(1, 0, 2), groups=2,
                  dilation=(1, 2, 1))
        _run(lambda x, w, b: TF.conv_transpose3d(x, w, b, **kw),
             lambda x, w, b: C.conv_transpose3d(x, w, b, **kw), arrays)
    else:
        arrays = [rng.standard_normal((5, 2, 3)), rng.standard_normal((3, 3, 4)),
                  rng.standard_normal(4)]
        _run(lambda x, w, b: torch.conv_tbc(x, w, b, 1), lambda x, w, b: C.conv_tbc(x, w, b, 1),
             arrays, double=False)


@pytest.mark.parametrize("fn", ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d",
                                "conv3d"])
def test_complex_conv_gradients(fn):
    rng = np.random.default_rng(5)
    nd = 3 if fn == "conv3d" else int(fn[-2])
    x = rng.standard_normal((2, 2) + (4,) * nd) + 1j * rng.standard_normal((2, 2) + (4,) * nd)
    w = rng.standard_normal((2, 1) + (2,) * nd) - 2j * rng.standard_normal((2, 1) + (2,) * nd)
    ts = [torch.tensor(a, requires_grad=True) for a in (x, w)]
    es = [ember.tensor(a, requires_grad=True) for a in (x, w)]
    yt = getattr(TF, fn)(*ts, stride=2, groups=2)
    ye = getattr(C, fn)(*es, stride=2, groups=2)
    g = rng.standard_normal(tuple(yt.shape)) + 1j * rng.standard_normal(tuple(yt.shape))
    for a, b in zip(torch.autograd.grad(yt, ts, torch.tensor(g)),
                    ember.autograd.grad(ye, es, ember.tensor(g))):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("case", ["ps", "pu", "cs", "unfold", "fold"])
def test_shuffles_fold(case):
    a = np.random.default_rng(6).standard_normal((2, 8, 4, 6))
    if case == "ps":
        _run(lambda x: TF.pixel_shuffle(x, 2), lambda x: V.pixel_shuffle(x, 2), [a])
    elif case == "pu":
        _run(lambda x: TF.pixel_unshuffle(x[0], 2), lambda x: V.pixel_unshuffle(x[0], 2), [a],
             double=False)
    elif case == "cs":
        _run(lambda x: TF.channel_shuffle(x, 4), lambda x: V.channel_shuffle(x, 4), [a])
    elif case == "unfold":
        kw = dict(dilation=(2, 1), padding=1, stride=(1, 2))
        _run(lambda x: TF.unfold(x, (2, 3), **kw), lambda x: V.unfold(x, (2, 3), **kw), [a])
    else:
        b = a.reshape(2, 8, 24)[:, :, :6]
        _run(lambda x: TF.fold(x, (4, 5), (2, 2), padding=(1, 0), stride=2),
             lambda x: V.fold(x, (4, 5), (2, 2), padding=(1, 0), stride=2), [b])


@pytest.mark.parametrize("mode,nd", [("nearest", 1), ("nearest", 2), ("nearest", 3),
                                     ("nearest-exact", 2), ("linear", 1), ("bilinear", 2),
                                     ("bicubic", 2), ("trilinear", 3)])
@pytest.mark.parametrize("align", [False, True])
def test_resample(mode, nd, align):
    if align and mode.startswith("nearest"):
        pytest.skip("align_corners is for the interpolating modes")
    a = _nan_input((2, 3) + (4, 5, 3)[:nd])
    ac = align if not mode.startswith("nearest") else None
    kind = {"bicubic": "cubic", "bilinear": "linear", "trilinear": "linear"}.get(mode, mode)
    sizes = tuple(int(np.floor(n * 2.5)) for n in a.shape[2:])
    _run(lambda x: TF.interpolate(x, scale_factor=2.5, mode=mode, align_corners=ac),
         lambda x: V.resample(x, sizes, [1 / 2.5] * nd, kind, ac), [a])


@pytest.mark.parametrize("dt", ["bool", "int32", "int64", "uint8", "complex64"])
def test_dtype_errors(dt):
    tdt = getattr(torch, dt)
    calls = [
        (lambda L: L.nn.functional.max_pool1d, P.max_pool1d, (2, 2, 4), (2,)),
        (lambda L: L.nn.functional.max_pool2d, P.max_pool2d, (2, 2, 4, 4), (2,)),
        (lambda L: L.nn.functional.avg_pool1d, P.avg_pool1d, (2, 2, 4), (2,)),
        (lambda L: L.nn.functional.avg_pool2d, P.avg_pool2d, (2, 2, 4, 4), (2,)),
        (lambda L: L.nn.functional.avg_pool3d, P.avg_pool3d, (1, 2, 4, 4, 4), (2,)),
        (lambda L: L.nn.functional.max_pool3d, P.max_pool3d, (1, 2, 4, 4, 4), (2,)),
        (lambda L: L.nn.functional.adaptive_avg_pool2d, P.adaptive_avg_pool2d, (2, 2, 4, 4),
         (2,)),
        (lambda L: L.nn.functional.adaptive_avg_pool1d, P.adaptive_avg_pool1d, (2, 2, 4), (1,)),
        (lambda L: L.nn.functional.adaptive_max_pool2d, P.adaptive_max_pool2d, (2, 2, 4, 4),
         (2,)),
        (lambda L: L.nn.functional.adaptive_max_pool3d, P.adaptive_max_pool3d, (1, 2, 4, 4, 4),
         (2,)),
        (lambda L: L.nn.functional.unfold, V.unfold, (1, 2, 4, 4), (2,)),
        (lambda L: L.nn.functional.pixel_shuffle, V.pixel_shuffle, (1, 4, 2, 2), (2,)),
    ]
    for tfn, efn, shape, args in calls:
        xt = torch.ones(shape, dtype=tdt)
        xe = ember.ones(shape, dtype=getattr(ember, dt))
        try:
            want = tfn(torch)(xt, *args)
        except Exception as e:     # torch refuses: ember raises the same
            with pytest.raises(type(e)) as got:
                efn(xe, *args)
            assert str(got.value) == str(e)
            continue
        got = efn(xe, *args)
        assert str(got.dtype) == str(want.dtype)
        np.testing.assert_allclose(got.numpy(), want.numpy())


@pytest.mark.parametrize("xd,wd,bd,n", [("float32", "float64", None, 1),
                                        ("float32", "float64", None, 0),
                                        ("uint8", "float32", None, 1),
                                        ("float32", "float32", "float64", 1),
                                        ("complex64", "complex128", None, 1),
                                        ("complex64", "float32", None, 1),
                                        ("bool", "bool", None, 1), ("int32", "int64", None, 1),
                                        ("int64", "int64", None, 1)])
@pytest.mark.parametrize("fn", ["conv1d", "conv2d", "conv3d", "conv_transpose2d",
                                "conv_transpose3d"])
def test_conv_dtypes(fn, xd, wd, bd, n):
    nd = 3 if fn.endswith("3d") else int(fn[-2])
    shapes = ((n, 2) + (3,) * nd, (2, 2) + (1,) * nd)
    out = []
    for lib, f in ((torch, getattr(TF, fn)), (ember, getattr(C, fn))):
        args = [lib.ones(s, dtype=getattr(lib, d)) for s, d in zip(shapes, (xd, wd))]
        args.append(None if bd is None else lib.ones(2, dtype=getattr(lib, bd)))
        try:
            y = f(*args)
            out.append((str(y.dtype).split(".")[-1], tuple(y.shape), y.numpy()))
        except Exception as e:
            out.append((type(e), str(e)))
    assert out[0][:2] == out[1][:2]
    if len(out[0]) == 3:
        np.testing.assert_allclose(out[1][2], out[0][2])


def test_pool_argument_errors():
    x3, x4, x5 = np.ones((2, 2, 5)), np.ones((2, 2, 5, 5)), np.ones((1, 2, 4, 4, 4))
    cases = [("max_pool1d", x3, (0,)), ("max_pool1d", x3, (2, -2)), ("max_pool1d", x3, (2, 1, -1)),
             ("max_pool1d", x3, (7,)), ("max_pool1d", x3, (2, 1, 2)),
             ("max_pool2d", x4, (0,)), ("max_pool2d", x4, (0, 1)), ("max_pool2d", x4, (2, -2)),
             ("max_pool2d", x4, (7,)), ("max_pool2d", x4, (2, 1, -1)),
             ("avg_pool1d", x3, (2, -2)), ("avg_pool1d", x3, (7,)), ("avg_pool2d", x4, (0, 1)),
             ("max_pool3d", x5, (2, -2)), ("max_pool3d", x5, (7,)), ("avg_pool3d", x5, (7,)),
             ("max_pool3d", x5, (2, 1, 2)), ("adaptive_avg_pool1d", x3, (-2,)),
             ("adaptive_avg_pool2d", x4, (-2,)), ("adaptive_avg_pool3d", x5, (-2,)),
             ("adaptive_max_pool1d", x3, (-2,)), ("adaptive_max_pool2d", x4, (-2,)),
             ("adaptive_max_pool3d", x5, (-2,)), ("adaptive_avg_pool1d", np.ones((3, 0)), (2,)),
             ("adaptive_avg_pool2d", np.ones((1, 5)), (2,)), ("avg_pool2d", np.ones((1, 5)), (3,))]
    for name, a, args in cases:
        _expect_same_error(lambda: getattr(TF, name)(torch.tensor(a), *args),
                           lambda: getattr(P, name)(ember.tensor(a), *args))
    for name, a, args in [("unfold", x4, (7,)), ("unfold", x4, (0,)), ("unfold", x3[0], (2,)),
                          ("pixel_shuffle", x4, (0,)), ("channel_shuffle", x4[0, 0], (2,)),
                          ("fold", np.ones((1, 8, 5)), ((3, 3), 2))]:
        _expect_same_error(lambda: getattr(TF, name)(torch.tensor(a), *args),
                           lambda: getattr(V, name)(ember.tensor(a), *args))


def test_adaptive_empty_output_backward():
    for tfn, efn in ((TF.adaptive_avg_pool1d, P.adaptive_avg_pool1d),
                     (TF.adaptive_max_pool1d, P.adaptive_max_pool1d)):
        xt = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
        xe = ember.ones(2, 3, dtype=ember.float64, requires_grad=True)
        _expect_same_error(lambda: tfn(xt, 0).sum().backward(),
                           lambda: efn(xe, 0).sum().backward())


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample(mode, padding_mode, align):
    rng = np.random.default_rng(7)
    a, g = rng.standard_normal((2, 3, 4, 5)), rng.uniform(-1.4, 1.4, (2, 3, 4, 2))
    g[0, 0, 0, 0], g[0, 0, 1, 1] = 0.0, -1.0
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align)
    _run(lambda x, t: TF.grid_sample(x, t, **kw), lambda x, t: V.grid_sample(x, t, **kw),
         [a, g], double=mode == "bilinear")


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("k", [1, 2])
def test_pad_bool(mode, k):
    shape, pads = (1, 2) + (3,) * k, (1, 1) * k
    try:
        want = TF.pad(torch.ones(shape, dtype=torch.bool), pads, mode=mode)
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError, match=str(e)):
            ember.nn.functional.pad(ember.ones(shape, dtype=ember.bool), pads, mode=mode)
        return
    got = ember.nn.functional.pad(ember.ones(shape, dtype=ember.bool), pads, mode=mode)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
