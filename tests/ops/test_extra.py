"""ember/ops/extra.py against torch: values, dtypes, shapes, node names and errors."""
import math

import numpy as np
import pytest

import ember

__all__ = []

R = np.random.default_rng(0)
F = R.standard_normal((3, 4)).astype(np.float32)
D = R.standard_normal((3, 4))
V = R.standard_normal(5)
INT = np.array([[3, 6, 0, 9], [4, -2, 12, 5], [0, 0, 7, 8]], dtype=np.int64)
NAN = np.array([[1.0, np.nan, 3.0, 0.5, 2.0], [2.0, 2.0, 1.0, 1.0, np.nan]])
TIES = np.array([[1.0, 3.0, 3.0, 2.0, 5.0, 5.0], [0.0, -1.0, -1.0, 4.0, 4.0, -2.0]])


def _conv(lib, a):
    if isinstance(a, np.ndarray):
        return lib.tensor(a.copy())
    if isinstance(a, list) and a and isinstance(a[0], np.ndarray):
        return [lib.tensor(x.copy()) for x in a]
    return a


def _flat(out):
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(_flat(o))
        return res
    return [out]


def same(torch, fn, *args, rtol=1e-6, atol=1e-7, names=True):
    """``fn(lib, *args)`` in both libraries: equal values, dtypes, shapes (and node names)."""
    e = _flat(fn(ember, *[_conv(ember, a) for a in args]))
    t = _flat(fn(torch, *[_conv(torch, a) for a in args]))
    assert len(e) == len(t)
    for a, b in zip(e, t):
        if not hasattr(b, "shape"):
            assert a == b
            continue
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).replace("torch.", "") == str(b.dtype).replace("torch.", "")
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol,
                                   equal_nan=True)
        if names and b.grad_fn is not None and a.grad_fn is not None:
            assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__
    return e, t


def raises_same(torch, fn, *args):
    """Both libraries raise the same exception class and message."""
    with pytest.raises(Exception) as te:
        fn(torch, *[_conv(torch, a) for a in args])
    with pytest.raises(Exception) as ee:
        fn(ember, *[_conv(ember, a) for a in args])
    assert type(ee.value) is type(te.value)
    assert str(ee.value) == str(te.value)


VALUES = [
    ("arcsinh", lambda L, x: L.arcsinh(x), (F,)),
    ("arccosh", lambda L, x: L.arccosh(x.abs() + 1), (F,)),
    ("arctanh", lambda L, x: x.clamp(-0.9, 0.9).arctanh(), (F,)),
    ("deg2rad", lambda L, x: L.deg2rad(x), (F,)),
    ("deg2rad_int", lambda L, x: L.deg2rad(x), (INT,)),
    ("rad2deg", lambda L, x: x.rad2deg(), (D,)),
    ("trace", lambda L, x: L.trace(x), (F,)),
    ("trace_int", lambda L, x: x.trace(), (INT,)),
    ("dist", lambda L, x, y: L.dist(x, y), (F, F[::-1].copy())),
    ("dist_p1", lambda L, x, y: x.dist(y, 1), (D, D * 2)),
    ("dist_inf", lambda L, x, y: L.dist(x, y, float("inf")), (D, D * 2)),
    ("copysign", lambda L, x, y: L.copysign(x, y), (F, D)),
    ("copysign_scalar", lambda L, x: x.copysign(-1.0), (F,)),
    ("copysign_int", lambda L, x, y: L.copysign(x, y), (INT, INT[::-1].copy())),
    ("ldexp", lambda L, x, e: L.ldexp(x, e), (F, INT)),
    ("ldexp_f64", lambda L, x, e: x.ldexp(e), (D, INT)),
    ("ldexp_int", lambda L, x, e: L.ldexp(x, e), (INT, INT % 5)),
    ("ldexp_float_exp", lambda L, x, e: L.ldexp(x, e), (F, D)),
    ("frexp", lambda L, x: L.frexp(x * 100), (F,)),
    ("frexp_method", lambda L, x: x.frexp(), (D,)),
    ("gcd", lambda L, a, b: L.gcd(a, b), (INT, INT.T.copy().reshape(3, 4))),
    ("lcm", lambda L, a, b: a.lcm(b), (INT, INT[::-1].copy())),
    ("heaviside", lambda L, x, v: L.heaviside(x.round(), v), (F, F[0].copy())),
    ("nextafter", lambda L, x, y: L.nextafter(x, y), (F, F * 2)),
    ("diff", lambda L, x: L.diff(x), (F,)),
    ("diff_n2_dim0", lambda L, x: x.diff(2, 0), (D,)),
    ("diff_prepend", lambda L, x, p: L.diff(x, dim=1, prepend=p, append=p), (F, F[:, :2].copy())),
    ("diff_bool", lambda L, x: L.diff(x > 0), (F,)),
    ("diff_big_n", lambda L, x: L.diff(x, 7), (V,)),
    ("gradient", lambda L, x: L.gradient(x), (D,)),
    ("gradient_spacing", lambda L, x: L.gradient(x, spacing=2.0, dim=1, edge_order=2), (D,)),
    ("gradient_list", lambda L, x: L.gradient(x, spacing=[0.5, 3.0]), (F,)),
    ("gradient_coords", lambda L, x, c: L.gradient(x, spacing=(c,), dim=1),
     (D, np.array([0.0, 0.5, 1.5, 3.5]))),
    ("gradient_coords_e2", lambda L, x, c: L.gradient(x, spacing=(c,), dim=1, edge_order=2),
     (D, np.array([0.0, 0.5, 1.5, 3.5]))),
    ("gradient_int", lambda L, x: L.gradient(x, dim=0), (INT,)),
    ("trapezoid", lambda L, y: L.trapezoid(y), (D,)),
    ("trapezoid_dx", lambda L, y: L.trapezoid(y, dx=0.5, dim=0), (D,)),
    ("trapezoid_x", lambda L, y, x: L.trapezoid(y, x), (D, np.array([0.0, 1.0, 3.0, 3.5]))),
    ("trapz", lambda L, y: L.trapz(y, dx=2.0), (F,)),
    ("trapz_x", lambda L, y, x: L.trapz(y, x), (D, np.array([0.0, 1.0, 3.0, 3.5]))),
    ("cumulative_trapezoid", lambda L, y: L.cumulative_trapezoid(y), (D,)),
    ("cumulative_trapezoid_x", lambda L, y, x: L.cumulative_trapezoid(y, x, dim=1),
     (D, np.array([0.0, 1.0, 3.0, 3.5]))),
    ("diagflat", lambda L, x: L.diagflat(x, 1), (F,)),
    ("diagflat_method", lambda L, x: x.diagflat(-2), (V,)),
    ("renorm", lambda L, x: L.renorm(x, 2, 0, 1.0), (D * 3,)),
    ("renorm_p1", lambda L, x: x.renorm(1, 1, 2.0), (F * 3,)),
    ("isin", lambda L, a, b: L.isin(a, b), (INT, np.array([0, 5, 9]))),
    ("isin_invert", lambda L, a: L.isin(a, 5, invert=True), (INT,)),
    ("quantile", lambda L, x: L.quantile(x, 0.3), (D,)),
    ("quantile_dim", lambda L, x, q: x.quantile(q, dim=1, keepdim=True), (D, np.array([0.1, 0.9]))),
    ("quantile_lower", lambda L, x: L.quantile(x, 0.4, 0, interpolation="lower"), (F,)),
    ("quantile_higher", lambda L, x: L.quantile(x, 0.4, 0, interpolation="higher"), (F,)),
    ("quantile_mid", lambda L, x: L.quantile(x, 0.4, 1, interpolation="midpoint"), (F,)),
    ("quantile_nearest", lambda L, x: L.quantile(x, 0.5, 1, interpolation="nearest"), (D,)),
    ("quantile_nan", lambda L, x: L.quantile(x, 0.5, 1), (NAN,)),
    ("nanquantile", lambda L, x: L.nanquantile(x, 0.3, 1), (NAN,)),
    ("nanquantile_all", lambda L, x: x.nanquantile(0.7, keepdim=True), (NAN,)),
    ("cov", lambda L, x: L.cov(x), (D,)),
    ("cov_method", lambda L, x: x.cov(correction=0), (F,)),
    ("cov_1d", lambda L, x: L.cov(x), (V,)),
    ("cov_weights", lambda L, x, fw, aw: L.cov(x, fweights=fw, aweights=aw),
     (D, np.array([1, 2, 1, 3]), np.array([0.5, 1.0, 2.0, 1.5]))),
    ("corrcoef", lambda L, x: L.corrcoef(x), (D,)),
    ("corrcoef_method", lambda L, x: x.corrcoef(), (F,)),
    ("cummax", lambda L, x: L.cummax(x, 1), (TIES,)),
    ("cummin", lambda L, x: x.cummin(1), (TIES,)),
    ("cummax_nan", lambda L, x: L.cummax(x, -1), (NAN,)),
    ("cummin_nan", lambda L, x: L.cummin(x, 1), (NAN,)),
    ("cummax_int", lambda L, x: L.cummax(x, 0), (INT,)),
    ("cummin_dim0", lambda L, x: L.cummin(x, 0), (F,)),
    ("logcumsumexp", lambda L, x: L.logcumsumexp(x * 50, 1), (D,)),
    ("logcumsumexp_method", lambda L, x: x.logcumsumexp(0), (F,)),
    ("addr", lambda L, m, a, b: L.addr(m, a, b), (F, F[:, 0].copy(), F[0].copy())),
    ("addr_ab", lambda L, m, a, b: m.addr(a, b, beta=0.5, alpha=2), (D, D[:, 0].copy(),
                                                                     D[0].copy())),
    ("cdist", lambda L, a, b: L.cdist(a, b), (D, D[:2] * 2)),
    ("cdist_p1", lambda L, a, b: L.cdist(a, b, p=1), (F, F[::-1].copy())),
    ("cdist_p3", lambda L, a, b: L.cdist(a, b, p=3), (D, D[:1].copy())),
    ("cdist_inf", lambda L, a, b: L.cdist(a, b, p=float("inf")), (D, D * 0.5)),
    ("cdist_p0", lambda L, a, b: L.cdist(a, b, p=0), (D.round(), D.round()[:2].copy())),
    ("cdist_batch", lambda L, a, b: L.cdist(a, b), (D.reshape(1, 3, 4), D.reshape(1, 3, 4))),
    ("bincount", lambda L, x: L.bincount(x), (np.array([0, 1, 1, 4, 2]),)),
    ("bincount_min", lambda L, x: x.bincount(minlength=8), (np.array([0, 1, 1, 4, 2]),)),
    ("bincount_w", lambda L, x, w: L.bincount(x, w), (np.array([0, 1, 1]), F[0, :3].copy())),
    ("bincount_w64", lambda L, x, w: L.bincount(x, w), (np.array([0, 3, 1]), np.array([1, 2, 3]))),
    ("bincount_empty", lambda L, x: L.bincount(x), (np.zeros(0, np.int64),)),
    ("histc", lambda L, x: L.histc(x), (F,)),
    ("histc_range", lambda L, x: x.histc(bins=5, min=-1, max=1), (D,)),
    ("histc_const", lambda L, x: L.histc(x, bins=4), (np.ones(3, np.float32),)),
    ("histogram", lambda L, x: L.histogram(x, 5), (D,)),
    ("histogram_range", lambda L, x, w: L.histogram(x, 4, range=(-1.0, 1.0), weight=w,
                                                    density=True), (F, np.abs(F))),
    ("histogram_edges", lambda L, x, e: x.histogram(e), (D, np.array([-2.0, -0.5, 0.0, 2.0]))),
    ("histogramdd", lambda L, x: L.histogramdd(x, [2, 3]), (D[:, :2].copy(),)),
    ("block_diag", lambda L, a, b, c: L.block_diag(a, b, c), (F, V, np.array(2.0))),
    ("block_diag_int", lambda L, a, b: L.block_diag(a, b), (INT, F)),
    ("cartesian_prod", lambda L, a, b: L.cartesian_prod(a, b), (V[:3].copy(), V)),
    ("cartesian_prod1", lambda L, a: L.cartesian_prod(a), (V,)),
    ("combinations", lambda L, a: L.combinations(a), (V,)),
    ("combinations_r3", lambda L, a: L.combinations(a, 3, with_replacement=True), (V[:3].copy(),)),
    ("combinations_big_r", lambda L, a: L.combinations(a, 7), (V,)),
    ("tril_indices", lambda L: L.tril_indices(3, 4), ()),
    ("tril_indices_off", lambda L: L.tril_indices(4, 3, -1, dtype=L.int32), ()),
    ("triu_indices", lambda L: L.triu_indices(4, 5, 2), ()),
    ("triu_indices_empty", lambda L: L.triu_indices(0, 5), ()),
    ("fill", lambda L, x: L.fill(x, 2.5), (F,)),
    ("fill_int", lambda L, x: L.fill(x, 3), (INT,)),
    ("unravel_index", lambda L, i: L.unravel_index(i, (3, 4)), (np.array([[0, 5], [7, 11]]),)),
    ("unravel_index_int", lambda L: L.unravel_index(L.tensor(7), (2, 2, 2)), ()),
    ("is_same_size", lambda L, a, b: L.is_same_size(a, b), (F, D)),
    ("is_signed", lambda L, a, b: (a.is_signed(), L.is_signed(b)), (F, INT.astype(np.uint8))),
    ("float_power_", lambda L, x: x.float_power_(2), (D,)),
    ("copysign_", lambda L, x, y: x.copysign_(y), (F, F[::-1].copy())),
    ("ldexp_", lambda L, x, e: x.ldexp_(e), (F, INT)),
    ("gcd_", lambda L, a, b: a.gcd_(b), (INT, INT[::-1].copy())),
    ("lcm_", lambda L, a, b: a.lcm_(b), (INT, INT[::-1].copy())),
    ("heaviside_", lambda L, x, v: x.heaviside_(v), (F.round(), F[0].copy())),
    ("nextafter_", lambda L, x, y: x.nextafter_(y), (D, D * 0)),
    ("deg2rad_", lambda L, x: x.deg2rad_(), (F,)),
    ("rad2deg_", lambda L, x: x.rad2deg_(), (D,)),
    ("renorm_", lambda L, x: x.renorm_(2, 0, 1.0), (D * 2,)),
    ("addr_", lambda L, m, a, b: m.addr_(a, b, alpha=3), (F, F[:, 0].copy(), F[0].copy())),
    ("addmm_", lambda L, m, a, b: m.addmm_(a, b, beta=2), (F[:, :3].copy(), F, F.T.copy()[:, :3])),
    ("addmv_", lambda L, m, a, v: m.addmv_(a, v), (F[:, 0].copy(), F, F[0].copy())),
    ("addbmm_", lambda L, m, a, b: m.addbmm_(a, b), (F[:, :3].copy(), F.reshape(1, 3, 4),
                                                     F.T.copy()[:, :3].reshape(1, 4, 3))),
    ("baddbmm_", lambda L, m, a, b: m.baddbmm_(a, b, alpha=0.5),
     (F[:, :3].copy().reshape(1, 3, 3), F.reshape(1, 3, 4), F.T.copy()[:, :3].reshape(1, 4, 3))),
    ("bitwise_not_", lambda L, x: x.bitwise_not_(), (INT,)),
    ("bitwise_shift_", lambda L, x: x.bitwise_left_shift_(2).bitwise_right_shift_(1), (INT,)),
    ("tril_", lambda L, x: x.tril_(1), (F,)),
    ("triu_", lambda L, x: x.triu_(-1), (F,)),
    ("arcsinh_", lambda L, x: x.arcsinh_(), (F,)),
    ("arccosh_", lambda L, x: (x.abs() + 1).arccosh_(), (F,)),
    ("arctanh_", lambda L, x: (x * 0.1).arctanh_(), (F,)),
    ("negative_", lambda L, x: x.negative_(), (F,)),
    ("cmp_", lambda L, x, y: (x.clone().greater_(y), x.clone().greater_equal_(y),
                              x.clone().less_(y), x.clone().less_equal_(y),
                              x.clone().not_equal_(y)), (F, F.round())),
    ("logical_xor_", lambda L, x, y: x.logical_xor_(y), (F.round(), F)),
    ("swapaxes_", lambda L, x: x.swapaxes_(0, 1), (F,)),
    ("swapdims_", lambda L, x: x.swapdims_(1, 0).contiguous(), (F,)),
    ("fill_diagonal_", lambda L, x: x.fill_diagonal_(7.0), (F,)),
    ("fill_diagonal_wrap", lambda L, x: x.fill_diagonal_(1, wrap=True), (np.zeros((7, 2)),)),
    ("fill_diagonal_tall", lambda L, x: x.fill_diagonal_(1), (np.zeros((7, 2)),)),
    ("fill_diagonal_3d", lambda L, x: x.fill_diagonal_(-1), (np.zeros((3, 3, 3)),)),
    ("threshold", lambda L, x: L.threshold(x, 0.1, 20.0), (F,)),
    ("threshold_", lambda L, x: L.threshold_(x, 0.1, 20.0), (D,)),
    ("unsafe_chunk", lambda L, x: x.unsafe_chunk(2, 1), (F,)),
    ("unsafe_split", lambda L, x: L.unsafe_split(x, 3, 1), (F,)),
    ("unsafe_split_with_sizes", lambda L, x: x.unsafe_split_with_sizes([1, 2], 0), (F,)),
    ("dim_order", lambda L, x: (x.dim_order(), x.t().dim_order(), x.is_distributed()), (F,)),
    ("apply_", lambda L, x: x.apply_(lambda v: v * 2 + 1), (F,)),
    ("map_", lambda L, x, y: x.map_(y, lambda a, b: a - b), (F, F[0].copy())),
    ("map2_", lambda L, x, y, z: x.map2_(y, z, lambda a, b, c: a * b + c), (D, D, D[0].copy())),
]


@pytest.mark.parametrize("name, fn, args", VALUES, ids=[v[0] for v in VALUES])
def test_values(torch, name, fn, args):
    same(torch, fn, *args, rtol=2e-6 if name != "logcumsumexp" else 1e-6, atol=1e-6)


WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("n", [0, 1, 2, 7, 10])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows(torch, name, n, periodic):
    for dt in (None, "float64"):
        def fn(L, dt=dt):
            kw = {} if dt is None else {"dtype": getattr(L, dt)}
            return getattr(L, name)(n, periodic, **kw)
        same(torch, fn, rtol=1e-5, atol=2e-7)
    same(torch, lambda L: getattr(L, name)(5, requires_grad=True))
    same(torch, lambda L: L.hamming_window(6, False, 0.6, 0.3))
    same(torch, lambda L: L.kaiser_window(6, True, 3.5, dtype=L.float64))


def test_can_cast_and_misc(torch):
    dts = ["bool", "uint8", "int8", "int32", "int64", "float32", "float64", "complex64"]
    for a in dts:
        for b in dts:
            assert ember.can_cast(getattr(ember, a), getattr(ember, b)) == \
                torch.can_cast(getattr(torch, a), getattr(torch, b)), (a, b)
    assert ember.ones(2).is_inference() is False


GRADS = [
    ("trace", lambda L, x: L.trace(x), (D,)),
    ("deg2rad", lambda L, x: L.deg2rad(x), (D,)),
    ("rad2deg", lambda L, x: L.rad2deg(x), (D,)),
    ("copysign", lambda L, x, y: L.copysign(x, y), (D, D[::-1].copy())),
    ("cummax", lambda L, x: L.cummax(x, 1).values, (TIES,)),
    ("cummin", lambda L, x: L.cummin(x, 0).values, (D,)),
    ("cdist", lambda L, a, b: L.cdist(a, b), (D, D[:2] * 2)),
    ("cdist_zero", lambda L, a, b: L.cdist(a, b), (D, D)),
    ("cdist_p1", lambda L, a, b: L.cdist(a, b, 1), (D, D[:2] * 2)),
    ("cdist_p3", lambda L, a, b: L.cdist(a, b, 3.0), (D, D[:2] * 2)),
    ("cdist_inf", lambda L, a, b: L.cdist(a, b, float("inf")), (D, D[:2] * 2)),
    ("fill", lambda L, x: L.fill(x, 1.5), (D,)),
    ("ldexp", lambda L, x, e: L.ldexp(x, e), (D, D[::-1].copy())),
    ("diagflat", lambda L, x: L.diagflat(x), (D,)),
    ("threshold", lambda L, x: L.threshold(x, 0.1, 2.0), (D,)),
]


@pytest.mark.parametrize("name, fn, args", GRADS, ids=[g[0] for g in GRADS])
def test_grads_and_node_names(torch, name, fn, args):
    rng = np.random.default_rng(1)
    res = {}
    for lib in (ember, torch):
        ins = [lib.tensor(a.copy(), requires_grad=True) for a in args]
        out = fn(lib, *ins)
        up = rng.standard_normal(tuple(out.shape)) if lib is ember else res["up"]
        res["up"] = up
        out.backward(lib.tensor(up))
        res[lib.__name__] = (type(out.grad_fn).__name__, [t.grad.numpy() for t in ins])
    assert res["ember"][0] == res["torch"][0]
    for a, b in zip(res["ember"][1], res["torch"][1]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)


def test_inplace_autograd(torch):
    """In-place variants on a non-leaf: torch's values, gradient, versions and node names."""
    res = {}
    for lib in (ember, torch):
        x = lib.tensor(D.copy(), requires_grad=True)
        y = x * 2
        v0 = y._version
        y.deg2rad_()
        y.tril_()
        y.copysign_(lib.tensor(-D))
        res[lib.__name__] = (y._version - v0, type(y.grad_fn).__name__, y.detach().numpy())
        y.backward(lib.tensor(D[::-1].copy()))
        res[lib.__name__ + "g"] = x.grad.numpy()
    assert res["ember"][:2] == res["torch"][:2]
    np.testing.assert_allclose(res["ember"][2], res["torch"][2])
    np.testing.assert_allclose(res["emberg"], res["torchg"])
    with pytest.raises(RuntimeError, match="leaf Variable"):
        ember.ones(2, 2, requires_grad=True).tril_()


def test_inplace_after_saved_output(torch):
    """Modifying copysign_'s saved result in place makes backward fail in both libraries."""
    for lib in (ember, torch):
        x = lib.tensor(D.copy(), requires_grad=True)
        y = (x * 2).copysign_(lib.tensor(-D))
        y.tril_()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


ERRORS = [
    ("trace_1d", lambda L, x: L.trace(x), (V,)),
    ("bincount_neg", lambda L, x: L.bincount(x), (np.array([1, -1]),)),
    ("bincount_2d", lambda L, x: L.bincount(x), (np.array([[1]]),)),
    ("bincount_float", lambda L, x: L.bincount(x), (V,)),
    ("histc_int", lambda L, x: L.histc(x), (INT,)),
    ("histc_minmax", lambda L, x: L.histc(x, min=2, max=1), (F,)),
    ("histc_bins", lambda L, x: L.histc(x, bins=-1), (F,)),
    ("gcd_float", lambda L, x: L.gcd(x, x), (F,)),
    ("heaviside_dtypes", lambda L, x, y: L.heaviside(x, y), (F, D)),
    ("frexp_int", lambda L, x: L.frexp(x), (INT,)),
    ("quantile_q", lambda L, x: L.quantile(x, 2.0), (D,)),
    ("quantile_int", lambda L, x: L.quantile(x, 0.2), (INT,)),
    ("quantile_qdtype", lambda L, x, q: L.quantile(x, q), (D, np.array([0.5], np.float32))),
    ("window_dtype", lambda L: L.hann_window(3, dtype=L.int64), ()),
    ("unravel_float", lambda L, x: L.unravel_index(x, (2,)), (V,)),
    ("nextafter_int", lambda L, x: L.nextafter(x, x), (INT,)),
    ("cov_3d", lambda L, x: L.cov(x), (np.ones((2, 2, 2)),)),
    ("combinations_2d", lambda L, x: L.combinations(x), (D,)),
    ("cartesian_2d", lambda L, x: L.cartesian_prod(x), (D,)),
    ("block_diag_3d", lambda L, x: L.block_diag(x), (np.ones((2, 2, 2)),)),
    ("diff_0d", lambda L, x: L.diff(x), (np.array(1.0),)),
    ("renorm_1d", lambda L, x: L.renorm(x, 2, 0, 1.0), (V,)),
    ("float_power_f32", lambda L, x: x.float_power_(2), (F,)),
    ("cummax_dim", lambda L, x: L.cummax(x, 2), (V,)),
    ("cdist_cols", lambda L, a, b: L.cdist(a, b), (D, D[:, :2].copy())),
    ("cdist_1d", lambda L, a, b: L.cdist(a, b), (V, V)),
    ("ldexp_scalar", lambda L, x: L.ldexp(x, 2), (F,)),
    ("fill_diagonal_1d", lambda L, x: x.fill_diagonal_(1), (V,)),
    ("fill_diagonal_3d", lambda L, x: x.fill_diagonal_(1), (np.ones((2, 3, 2)),)),
    ("addr_2d", lambda L, m, a: L.addr(m, a, a), (D, D)),
]


@pytest.mark.parametrize("name, fn, args", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(torch, name, fn, args):
    raises_same(torch, fn, *args)


def test_every_name_exists(torch):
    """Every name here is torch's, and a Tensor method exactly where torch has one."""
    import ember.ops.extra as extra
    t = ember.zeros(1)
    for n in extra.__all__:
        assert hasattr(torch, n) or hasattr(torch.Tensor, n), n
        if hasattr(torch.Tensor, n):
            assert callable(getattr(t, n)), n
    d = float(ember.dist(ember.zeros(2), ember.ones(2)))
    assert math.isclose(d, math.sqrt(2), rel_tol=1e-6)
