"""Edge cases against torch: non-finite gradients, refused inputs, crashes turned into torch's
results or errors, module state (issue 21). Each case runs the same lambda in both libraries."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

INF, NAN = float("inf"), float("nan")


def _np(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t)


def _same(a, b):
    """Equal values (nan where nan, signed zeros alike) and dtype names."""
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    if getattr(b, "_is_zerotensor", lambda: False)():
        b = torch.zeros(b.shape, dtype=b.dtype)
    assert str(a.dtype) == str(b.dtype)
    x, y = _np(a), _np(b)
    assert x.shape == y.shape
    np.testing.assert_allclose(x, y, rtol=1e-6, atol=0, equal_nan=True)
    ok = ~np.isnan(y)
    assert (np.signbit(x[ok]) == np.signbit(y[ok])).all()


def _grad(lib, fn, x, g):
    t = lib.tensor(x, requires_grad=True)
    y = fn(lib, t)
    y.backward(lib.tensor(g, dtype=y.dtype))
    return t.grad


def _raises(fn, *inputs):
    """Run ``fn(lib, *inputs)`` in both libraries: same exception class and message, inputs
    unchanged."""
    caught = []
    for lib in (ember, torch):
        args = [lib.tensor(a) if isinstance(a, np.ndarray) else a for a in inputs]
        before = [a.clone() for a in args if isinstance(a, lib.Tensor)]
        with pytest.raises(Exception) as info:
            fn(lib, *args)
        after = [a for a in args if isinstance(a, lib.Tensor)]
        for b, a in zip(before, after):
            assert b.shape == a.shape and bool((b == a).all())
        caught.append(info.value)
    e, t = caught
    assert type(e).__name__ == type(t).__name__, (e, t)
    assert str(e) == str(t)


ZERO_GRAD_OPS = {
    "round": lambda L, t: L.round(t), "round_dec": lambda L, t: L.round(t, decimals=1),
    "floor": lambda L, t: L.floor(t), "ceil": lambda L, t: L.ceil(t),
    "trunc": lambda L, t: L.trunc(t), "sign": lambda L, t: L.sign(t),
    "sgn": lambda L, t: L.sgn(t), "fix": lambda L, t: L.fix(t),
}


@pytest.mark.parametrize("name", sorted(ZERO_GRAD_OPS))
def test_zero_gradient_ops_ignore_nonfinite_upstream(name):
    fn = ZERO_GRAD_OPS[name]
    x, g = [1.5, -2.3, 0.0], [INF, NAN, -INF]
    _same(_grad(ember, fn, x, g), _grad(torch, fn, x, g))


def test_copysign_other_gradient_is_zero_for_nonfinite_upstream():
    def f(lib):
        a = lib.tensor([1., 2.], requires_grad=True)
        b = lib.tensor([1., -1.], requires_grad=True)
        lib.copysign(a, b).backward(lib.tensor([INF, NAN]))
        return b.grad
    _same(f(ember), f(torch))


@pytest.mark.parametrize("eps", [None, 0.1, 0.0, -0.5])
def test_logit_gradient_outside_the_domain(eps):
    x, g = [-0.5, 1.5, 0.0, 1.0, 0.05, 0.5], [1.0] * 6
    def fn(L, t):
        return L.logit(t, eps=eps)
    _same(_grad(ember, fn, x, g), _grad(torch, fn, x, g))
    _same(ember.logit(ember.tensor(x), eps=eps), torch.logit(torch.tensor(x), eps=eps))


def test_inverse_with_nan_is_nan_per_matrix():
    a = np.array([[[NAN, 1.], [2., 3.]], [[1., 0.], [0., 2.]], [[NAN, 0.], [0., 1.]]],
                 dtype=np.float32)
    _same(ember.inverse(ember.tensor(a)), torch.inverse(torch.tensor(a)))


@pytest.mark.parametrize("dim", [[], ()])
@pytest.mark.parametrize("keepdim", [False, True])
def test_vector_norm_empty_dim_list_reduces_everything(dim, keepdim):
    x = [[3., 4.], [1., -1.]]
    vals = [lib.linalg.vector_norm(lib.tensor(x), dim=dim, keepdim=keepdim)
            for lib in (ember, torch)]
    _same(*vals)
    def fn(L, t):
        return L.linalg.vector_norm(t, dim=dim, keepdim=keepdim)
    _same(_grad(ember, fn, x, np.ones(vals[1].shape).tolist()),
          _grad(torch, fn, x, np.ones(vals[1].shape).tolist()))


@pytest.mark.parametrize("dim", [0, -1, [0], None])
@pytest.mark.parametrize("ord", [2, 1, INF, 3])
def test_vector_norm_of_0d(dim, ord):
    def fn(L, t):
        return L.linalg.vector_norm(t, ord=ord, dim=dim)
    _same(fn(ember, ember.tensor(-3.)), fn(torch, torch.tensor(-3.)))
    _same(_grad(ember, fn, -3.0, 2.0), _grad(torch, fn, -3.0, 2.0))


@pytest.mark.parametrize("p", [2, 1, 3, INF])
def test_norm_of_complex_is_real(p):
    z = np.array([[1 + 1j, 2, -1j]], dtype=np.complex64)
    ys = []
    for lib in (ember, torch):
        t = lib.tensor(z, requires_grad=True)
        y = t.norm(p=p)
        g, = lib.autograd.grad(y, t)
        ys.append((y, g))
    _same(ys[0][0], ys[1][0])
    np.testing.assert_allclose(_np(ys[0][1]), _np(ys[1][1]), rtol=1e-5)


@pytest.mark.parametrize("op", ["var", "std"])
def test_var_std_of_complex_are_real(op):
    z = np.array([[1 + 1j, 2, -1j]], dtype=np.complex64)
    ys = []
    for lib in (ember, torch):
        t = lib.tensor(z, requires_grad=True)
        y = getattr(t, op)()
        g, = lib.autograd.grad(y, t)
        ys.append((y, g))
    _same(ys[0][0], ys[1][0])
    np.testing.assert_allclose(_np(ys[0][1]), _np(ys[1][1]), rtol=1e-5)


F = np.array([1., 2., 3.], dtype=np.float32)
I64 = np.array([1, 2, 3])
BOOL = np.array([True, False])
C = np.array([1 + 1j, 2], dtype=np.complex64)

REFUSED = {
    # Python scalars where torch wants tensors
    "logical_or_int": (lambda L, t: L.logical_or(t, 2), F),
    "logical_and_float_first": (lambda L, t: L.logical_and(2., t), F),
    "logical_xor_int": (lambda L, t: L.logical_xor(t, 1), F),
    "isclose_int": (lambda L, t: L.isclose(t, 2), F),
    # where's condition
    "where_long_cond": (lambda L, t: L.where(L.tensor([1, 0, 1]), t, t), F),
    "where_float_cond": (lambda L, t: L.where(t, t, t), F),
    "where_method_long_cond": (lambda L, t: t.where(L.tensor([1, 0, 1]), 0.), F),
    # signatures and dims
    "logsumexp_dim_none": (lambda L, t: L.logsumexp(t, dim=None), F),
    "permute_no_dims": (lambda L, t: t.permute(), F),
    "permute_fn_no_dims": (lambda L, t: L.permute(t), F),
    "squeeze_repeated": (lambda L, t: t.reshape(1, 3, 1).squeeze((0, 0)), F),
    "squeeze_repeated_neg": (lambda L, t: t.reshape(1, 3, 1).squeeze((2, -1)), F),
    # dtypes
    "nanmean_long": (lambda L, t: L.nanmean(t), I64),
    "nanmean_bool": (lambda L, t: L.nanmean(t), BOOL),
    "nanmean_int_dtype": (lambda L, t: L.nanmean(t, dtype=L.int64), F),
    "nansum_complex": (lambda L, t: L.nansum(t), C),
    "nanmean_complex": (lambda L, t: L.nanmean(t), C),
    "sum_long_requires_grad": (lambda L, t: t.requires_grad_().sum(dtype=L.int64), F),
    "sum_dim_int_requires_grad": (lambda L, t: t.requires_grad_().sum(0, dtype=L.int32), F),
    "prod_long_requires_grad": (lambda L, t: t.requires_grad_().prod(dtype=L.int64), F),
    "cumsum_long_requires_grad": (lambda L, t: t.requires_grad_().cumsum(0, dtype=L.int64), F),
    "cumprod_long_requires_grad": (lambda L, t: t.requires_grad_().cumprod(0, dtype=L.int64), F),
    "mean_long_dtype": (lambda L, t: t.mean(dtype=L.int64), F),
    "std_mean_long": (lambda L, t: L.std_mean(t), I64),
    "var_mean_long": (lambda L, t: L.var_mean(t), I64),
    "positive_bool": (lambda L, t: L.positive(t), BOOL),
    "nanmedian_bool": (lambda L, t: L.nanmedian(t), BOOL),
    "nanmedian_bool_dim": (lambda L, t: L.nanmedian(t, 0), BOOL),
    "kthvalue_bool": (lambda L, t: L.kthvalue(t, 1), BOOL),
    "searchsorted_bool": (lambda L, t: L.searchsorted(t, t), BOOL),
}
for _op in ("lt", "le", "gt", "ge"):
    REFUSED[_op + "_complex"] = (lambda L, t, op=_op: getattr(L, op)(t, t), C)
    REFUSED[_op + "_complex_scalar"] = (lambda L, t, op=_op: getattr(L, op)(t, 1), C)
REFUSED.update({
    "lt_operator_complex": (lambda L, t: t < t, C),
    "max_complex": (lambda L, t: t.max(), C), "min_complex": (lambda L, t: t.min(), C),
    "max_dim_complex": (lambda L, t: t.max(0), C), "min_dim_complex": (lambda L, t: t.min(0), C),
    "amax_complex": (lambda L, t: t.amax(), C), "amin_complex": (lambda L, t: t.amin(0), C),
    "aminmax_complex": (lambda L, t: L.aminmax(t), C),
    "argmax_complex": (lambda L, t: t.argmax(), C), "argmin_complex": (lambda L, t: t.argmin(0), C),
    "median_complex": (lambda L, t: t.median(), C),
    "median_dim_complex": (lambda L, t: t.median(0), C),
    "nanmedian_complex": (lambda L, t: t.nanmedian(), C),
    "mode_complex": (lambda L, t: t.mode(), C),
    "sort_complex": (lambda L, t: t.sort(), C), "argsort_complex": (lambda L, t: t.argsort(), C),
    "msort_complex": (lambda L, t: L.msort(t), C), "topk_complex": (lambda L, t: t.topk(1), C),
    "kthvalue_complex": (lambda L, t: t.kthvalue(1), C),
    "unique_complex": (lambda L, t: L.unique(t), C),
    "unique_consecutive_complex": (lambda L, t: L.unique_consecutive(t), C),
    "searchsorted_complex": (lambda L, t: L.searchsorted(t, t), C),
    # in-place shape changes of a leaf that requires grad
    "squeeze_leaf": (lambda L, t: t.reshape(1, 3).detach().requires_grad_().squeeze_(), F),
    "unsqueeze_leaf": (lambda L, t: t.requires_grad_().unsqueeze_(0), F),
    "transpose_leaf": (lambda L, t: t.reshape(1, 3).detach().requires_grad_().transpose_(0, 1),
                       F),
    "t_leaf": (lambda L, t: t.reshape(1, 3).detach().requires_grad_().t_(), F),
})


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_like_torch(name):
    fn, x = REFUSED[name]
    _raises(fn, x)


def test_leaf_shape_unchanged_after_refused_inplace():
    for lib in (ember, torch):
        t = lib.zeros(1, 2, requires_grad=True)
        with pytest.raises(RuntimeError):
            t.squeeze_()
        assert tuple(t.shape) == (1, 2)
        with lib.no_grad():
            t.squeeze_()        # allowed without grad mode
        assert tuple(t.shape) == (2,)


ACCEPTED = {
    "where_uint8_cond": lambda L: L.where(L.tensor([1, 0], dtype=L.uint8), L.tensor([1., 2.]),
                                          L.tensor([3., 4.])),
    "transpose__0d": lambda L: L.tensor(2.).transpose_(0, -1),
    "transpose__same_dim": lambda L: L.arange(6.).reshape(2, 3).transpose_(1, 1),
    "squeeze_0d_tuple": lambda L: L.tensor(2.).squeeze((0,)),
    "permute_0d_empty": lambda L: L.tensor(2.).permute([]),
    "sum_long_no_grad_mode": lambda L: L.tensor([1.5, 2.]).sum(dtype=L.int64),
    "prod_0d_backward": lambda L: _grad(L, lambda L2, t: t.prod(), 3.0, 1.0),
    "nonzero_0d": lambda L: L.nonzero(L.tensor(3.)),
    "nonzero_0d_false": lambda L: L.nonzero(L.tensor(0.)),
    "argwhere_0d": lambda L: L.argwhere(L.tensor(3.)),
    "where_one_arg_0d": lambda L: L.where(L.tensor(True)),
    "max_signed_zero_tie": lambda L: L.tensor([-0.0, 0.0]).max(),
    "maximum_tie_grad": lambda L: _pair_grads(L, "maximum"),
    "minimum_tie_grad": lambda L: _pair_grads(L, "minimum"),
}


def _pair_grads(lib, op):
    a = lib.tensor([1., 2., 3.], requires_grad=True)
    b = lib.tensor([1., 1., 3.], requires_grad=True)
    getattr(lib, op)(a, b).sum().backward()
    return a.grad, b.grad


@pytest.mark.filterwarnings("ignore:where received a uint8")
@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_like_torch(name):
    _same(ACCEPTED[name](ember), ACCEPTED[name](torch))


def test_where_uint8_condition_warns():
    with pytest.warns(UserWarning, match="where received a uint8 condition tensor"):
        ember.where(ember.tensor([1, 0], dtype=ember.uint8), ember.ones(2), ember.zeros(2))


def test_sum_long_under_no_grad():
    for lib in (ember, torch):
        with lib.no_grad():
            assert lib.tensor([1.], requires_grad=True).sum(dtype=lib.int64).item() == 1


@pytest.mark.parametrize("args", [("int64",), ("tensor",), ("bool_kw",)])
def test_module_to_integral_dtype_refused(args):
    caught = []
    for lib in (ember, torch):
        m = lib.nn.Linear(2, 2)
        before = m.weight.detach().clone()
        with pytest.raises(TypeError) as info:
            if args[0] == "int64":
                m.to(lib.int64)
            elif args[0] == "tensor":
                m.to(lib.tensor([1]))
            else:
                m.to(dtype=lib.bool)
        assert m.weight.dtype == lib.float32 and bool((m.weight == before).all())
        caught.append(str(info.value))
    assert caught[0] == caught[1]


def test_batchnorm_old_checkpoint_without_num_batches_tracked():
    got = []
    for lib in (ember, torch):
        src = lib.nn.BatchNorm1d(3)
        old = {k: v for k, v in src.state_dict().items() if k != "num_batches_tracked"}
        dst = lib.nn.Sequential(lib.nn.BatchNorm1d(3))
        dst[0].num_batches_tracked.fill_(7)
        res = dst.load_state_dict({"0." + k: v for k, v in old.items()})    # no metadata: old
        got.append((list(res.missing_keys), list(res.unexpected_keys),
                    int(dst[0].num_batches_tracked)))
        assert "num_batches_tracked" not in old            # the caller's dict is not changed
        # a current checkpoint (version 2 in its metadata) missing the key is refused
        sd = src.state_dict()
        del sd["num_batches_tracked"]
        with pytest.raises(RuntimeError) as info:
            src.load_state_dict(sd)
        got.append(str(info.value))
    assert got[0] == got[2] and got[1] == got[3]


def test_state_dict_metadata_versions():
    for lib in (ember, torch):
        sd = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2)).state_dict()
        assert dict(sd._metadata) == {"": {"version": 1}, "0": {"version": 1},
                                      "1": {"version": 2}}


_SAMPLER_SCRIPT = textwrap.dedent("""
    import sys
    lib = __import__(sys.argv[1])

    class BadSampler:
        def __iter__(self):
            yield 0
            raise ValueError("sampler boom")

        def __len__(self):
            return 10

    if __name__ == "__main__":
        loader = lib.utils.data.DataLoader(lib.arange(10.), batch_size=None,
                                           sampler=BadSampler(), num_workers=2)
        it = iter(loader)
""")


def test_dataloader_sampler_error_at_iter_exits(tmp_path):
    script = tmp_path / "bad_sampler.py"
    script.write_text(_SAMPLER_SCRIPT)
    root = os.path.dirname(os.path.dirname(os.path.abspath(ember.__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, str(script), "ember"], capture_output=True,
                          text=True, timeout=60, env=env)
    assert proc.returncode == 1
    assert "ValueError: sampler boom" in proc.stderr
