"""Op-database entries of the reduction family: sum, mean, max, var, norm, cumsum, median, ..."""
import numpy as np

from opdb import OpInfo, make

__all__ = ["OPS"]


def _samples(low=-2.0, high=2.0):
    """A (2, 3, 4) array, a transposed (non-contiguous) (4, 3) one and a 0-d one."""
    def samples(dt):
        return [(make((2, 3, 4), dt, low, high),),
                (make((3, 4), dt, low, high, seed=1).T,),
                (make((), dt, low, high, seed=2),)]
    return samples


def _samples_2d(low=-2.0, high=2.0):
    """Arrays of at least two dims (for dim=1 / dim=(0, -1))."""
    def samples(dt):
        return [(make((2, 3, 4), dt, low, high),), (make((3, 4), dt, low, high, seed=1).T,)]
    return samples


def _empty(dt):
    return [(make((0, 3), dt),)]


def _ties(dt):
    return [(np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], dtype=dt),)]


def _with_zeros(dt):
    a = make((3, 4), dt)
    a[1, 2] = 0
    a[2, 0] = 0
    a[2, 3] = 0
    return [(a,)]


def _op(name, fn, samples=None, **kw):
    return OpInfo(name, fn, samples or _samples(), **kw)


def _int_rows(dt):
    """Integer values in rows of 20 (> 16: torch's CPU kernels break these ties their way)."""
    return [(np.random.default_rng(3).integers(0, 4, (3, 20)).astype(dt),)]


def _ints(dt):
    return [(np.array([[1.0, 2.0, 2.0, 3.0], [0.0, 0.0, 1.0, 1.0], [4.0, 4.0, 4.0, 1.0]],
                      dtype=dt),)]


OPS = [
    _op("sum", lambda L, x: L.sum(x)),
    _op("sum_dim", lambda L, x: x.sum(-1), _samples_2d()),
    _op("sum_dims_keepdim", lambda L, x: L.sum(x, (0, -1), keepdim=True), _samples_2d()),
    _op("sum_empty", lambda L, x: (x.sum(), x.sum(0), x.sum(1)), _empty),
    _op("sum_dtype", lambda L, x: x.sum(1, dtype=L.float64), _samples_2d()),
    _op("mean", lambda L, x: x.mean()),
    _op("mean_dim", lambda L, x: L.mean(x, (-2,), keepdim=True), _samples_2d()),
    _op("mean_empty", lambda L, x: (x.mean(), x.mean(0)), _empty, skip_gradcheck=True),
    _op("nansum", lambda L, x: L.nansum(x, 1), _samples_2d()),
    _op("nanmean", lambda L, x: L.nanmean(x, -1), _samples_2d()),
    _op("prod", lambda L, x: x.prod()),
    _op("prod_dim", lambda L, x: L.prod(x, 1, keepdim=True), _samples_2d()),
    _op("prod_zeros", lambda L, x: (x.prod(), x.prod(1), x.prod(0)), _with_zeros,
        double_backward=False),
    _op("max", lambda L, x: x.max()),
    _op("max_dim", lambda L, x: L.max(x, 1), _samples_2d()),
    _op("max_dim_keepdim", lambda L, x: x.max(dim=-1, keepdim=True), _samples_2d()),
    _op("min", lambda L, x: L.min(x)),
    _op("min_dim", lambda L, x: x.min(0), _samples_2d()),
    _op("max_ties", lambda L, x: (x.max(), x.max(1), x.min(), x.min(1)), _ties,
        skip_gradcheck=True),
    _op("amax", lambda L, x: L.amax(x, (0, -1)), _samples_2d()),
    _op("amax_all", lambda L, x: x.amax()),
    _op("amin", lambda L, x: x.amin(1, keepdim=True), _samples_2d()),
    _op("amax_ties", lambda L, x: (L.amax(x, 1), L.amin(x), L.amax(x)), _ties,
        skip_gradcheck=True),
    _op("aminmax", lambda L, x: L.aminmax(x)),
    _op("aminmax_dim", lambda L, x: tuple(L.aminmax(x, dim=1, keepdim=True)), _samples_2d()),
    _op("argmax", lambda L, x: (x.argmax(), L.argmax(x, 1), L.argmin(x, -1, keepdim=True)),
        _samples_2d(), differentiable=False),
    _op("argmax_ties", lambda L, x: (x.argmax(), x.argmax(1), x.argmin(0), x.argmin()), _ties,
        differentiable=False),
    _op("var", lambda L, x: x.var(), _samples_2d()),
    _op("var_dim", lambda L, x: L.var(x, 1), _samples_2d()),
    _op("var_correction", lambda L, x: L.var(x, (0, -1), correction=0, keepdim=True),
        _samples_2d()),
    _op("var_unbiased", lambda L, x: L.var(x, 1, False, True), _samples_2d()),
    _op("var_unbiased_only", lambda L, x: L.var(x, False), _samples_2d()),
    _op("std", lambda L, x: x.std(), _samples_2d()),
    _op("std_dim", lambda L, x: L.std(x, -1, keepdim=True, correction=2), _samples_2d()),
    _op("var_mean", lambda L, x: L.var_mean(x, 1), _samples_2d()),
    _op("std_mean", lambda L, x: L.std_mean(x, (0, 1), keepdim=True), _samples_2d()),
    _op("logsumexp", lambda L, x: L.logsumexp(x, 1), _samples_2d()),
    _op("logsumexp_dims", lambda L, x: x.logsumexp((0, -1), keepdim=True), _samples_2d()),
    _op("logsumexp_large", lambda L, x: L.logsumexp(x, 0),
        lambda dt: [(np.array([1000.0, 999.0, -1000.0], dtype=dt),)]),
    _op("norm", lambda L, x: x.norm()),
    _op("norm_fro_dim", lambda L, x: L.norm(x, "fro", (0, 1)), _samples_2d()),
    _op("norm_p1", lambda L, x: L.norm(x, 1, 1), _samples_2d()),
    _op("norm_p3", lambda L, x: L.norm(x, 3, -1, keepdim=True), _samples_2d()),
    _op("norm_p1_5", lambda L, x: L.norm(x, 1.5), _samples_2d()),
    _op("norm_p0_5", lambda L, x: L.norm(x, 0.5, 0), _samples_2d()),
    _op("norm_inf", lambda L, x: (L.norm(x, float("inf")), L.norm(x, float("-inf"), 1)),
        _samples_2d()),
    _op("norm_empty", lambda L, x: (x.norm(), x.norm(p=1, dim=0)), _empty),
    _op("all_any", lambda L, x: (L.all(x > 0), L.any(x > 0, 1), L.all(x > -1, (0, 1))),
        _samples_2d(), differentiable=False),
    _op("count_nonzero", lambda L, x: (L.count_nonzero(x), L.count_nonzero(x, 1)),
        _with_zeros, differentiable=False),
    _op("cumsum", lambda L, x: L.cumsum(x, 1), _samples_2d()),
    _op("cumsum_neg", lambda L, x: x.cumsum(-1, dtype=L.float64), _samples_2d()),
    _op("cumprod", lambda L, x: L.cumprod(x, 0), _samples_2d(0.5, 1.5)),
    _op("cumprod_neg", lambda L, x: x.cumprod(-1), _samples_2d()),
    _op("cumprod_zeros", lambda L, x: (x.cumprod(1), x.cumprod(0)), _with_zeros,
        double_backward=False),
    _op("cumsum_0d", lambda L, x: (x.cumsum(0), x.cumprod(-1)),
        lambda dt: [(make((), dt),)]),
    _op("median", lambda L, x: x.median()),
    _op("median_dim", lambda L, x: L.median(x, 1), _samples_2d()),
    _op("median_dim_keepdim", lambda L, x: x.median(-1, keepdim=True), _samples_2d()),
    _op("median_ties", lambda L, x: x.median(), _ties, skip_gradcheck=True),
    _op("nanmedian", lambda L, x: (x.nanmedian(), L.nanmedian(x, 0)),
        lambda dt: [(np.array([1.0, np.nan, 2.0, 5.0], dtype=dt),)], skip_gradcheck=True),
    _op("mode", lambda L, x: L.mode(x), _ints, skip_gradcheck=True),
    _op("mode_dim", lambda L, x: x.mode(0, keepdim=True), _ints, skip_gradcheck=True),
    _op("mode_long_ties", lambda L, x: tuple(x.mode(1)), _int_rows, skip_gradcheck=True),
    _op("sort_long_ties", lambda L, x: (*x.sort(1), *x.topk(3, 1), *x.kthvalue(5, 1),
                                        x.argsort(0)), _int_rows, skip_gradcheck=True),
    _op("unique_searches", lambda L, x: (*L.unique(x, return_inverse=True, return_counts=True),
                                         *L.unique_consecutive(x[0], return_counts=True),
                                         L.searchsorted(L.sort(x, -1).values, x, right=True),
                                         L.bucketize(x, L.sort(x[0]).values)),
        _int_rows, differentiable=False),
    _op("sum_to_size", lambda L, x: (x.sum_to_size(1, 4), x.sum_to_size(3, 1),
                                     x.sum_to_size(4)), lambda dt: [(make((3, 4), dt),)]),
    _op("nan_propagates", lambda L, x: (x.max(), x.max(0), x.min(0), x.median(0), x.amax()),
        lambda dt: [(np.array([1.0, np.nan, 2.0], dtype=dt),)], skip_gradcheck=True),
]
