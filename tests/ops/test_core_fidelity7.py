"""Fidelity of the unary, comparison, shape, reduction and matmul families (issue 21): dtypes
torch refuses, error classes and messages, integer results, graph node names and complex
gradients, each compared against torch."""
import numpy as np
import pytest

import ember
from oracle import compare


def _outcome(lib, fn):
    """``fn(lib)`` as comparable data: values/dtype/shape, or the exception's class and text."""
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001  (compared across libraries)
        return ("raise", type(e).__name__, str(e).split("\n")[0])
    outs = out if isinstance(out, (tuple, list)) else (out,)
    res = []
    for o in outs:
        if hasattr(o, "detach"):
            a = o.detach().numpy()
            res.append((str(o.dtype).replace("torch.", ""), a.shape, a.tolist()))
        else:
            res.append(o)
    return ("ok", res)


def _same(torch, fn):
    e, t = _outcome(ember, fn), _outcome(torch, fn)
    if e[0] == t[0] == "ok":
        assert len(e[1]) == len(t[1])
        for a, b in zip(e[1], t[1]):
            if isinstance(a, tuple):
                assert a[:2] == b[:2], (a, b)
                np.testing.assert_allclose(np.array(a[2], dtype=complex),
                                           np.array(b[2], dtype=complex), rtol=1e-5,
                                           equal_nan=True)
            else:
                assert a == b
    else:
        assert e == t


B, I32, F32, F64 = "bool", "int32", "float32", "float64"


def _t(L, shape, dtype, fill=1):
    return L.full(shape, fill, dtype=getattr(L, dtype))


ERROR_CASES = {
    # comparison family
    "bitwise_and_float": lambda L: L.bitwise_and(_t(L, (2,), "int64"), _t(L, (2,), F64)),
    "bitwise_and_int_float_scalar": lambda L: L.tensor([1, 2]).bitwise_and(1.5),
    "bitwise_not_complex": lambda L: L.tensor([1j]).bitwise_not(),
    "lshift_half": lambda L: _t(L, (2,), "float16").bitwise_left_shift(1),
    "lshift_bool": lambda L: L.tensor([True]).bitwise_left_shift(L.tensor([True])),
    "lshift_bool_int": lambda L: L.tensor([True, False]).bitwise_left_shift(1),
    "rshift_float": lambda L: _t(L, (2,), F32).bitwise_right_shift(1),
    "signbit_complex": lambda L: L.signbit(L.tensor([1j])),
    "signbit_bfloat16": lambda L: L.signbit(L.tensor([-0.0, 1.0], dtype=L.bfloat16)),
    "isposinf_complex": lambda L: L.isposinf(L.tensor([1j])),
    "isneginf_complex": lambda L: L.isneginf(L.tensor([1j])),
    "isreal_complex": lambda L: L.isreal(L.tensor([1j, 1 + 0j])),
    "isclose_dtypes": lambda L: L.isclose(L.tensor([1]), L.tensor([1.0])),
    "allclose_dtypes": lambda L: L.allclose(_t(L, (2,), F32), _t(L, (2,), F64)),
    "isclose_rtol": lambda L: L.isclose(L.tensor([1.0]), L.tensor([1.0]), rtol=-1),
    "isclose_atol_nan": lambda L: L.isclose(L.tensor([1.0]), L.tensor([1.0]),
                                            atol=float("nan")),
    "bitwise_and__float_other": lambda L: L.tensor([1, 2]).bitwise_and_(L.tensor([1.0, 2])),
    "bitwise_or__float_number": lambda L: L.tensor([1, 2]).bitwise_or_(1.5),
    # unary family
    "nan_to_num__complex": lambda L: L.tensor([complex("nan"), 1j]).nan_to_num_(),
    "abs_complex_inplace": lambda L: L.tensor([1j]).abs_(),
    "logit_eps_one": lambda L: L.logit(L.tensor([0.1, 0.5, 0.9, 1.5, -0.2]), 1),
    "logit_eps_above_half": lambda L: L.logit(L.tensor([0.1, 0.5, 0.9, 1.5]), 0.6),
    "logit_eps_nan": lambda L: L.logit(L.tensor([0.1, 0.5, 1.5], dtype=L.float64),
                                       float("nan")),
    "round_decimals": lambda L: L.round(L.tensor([1.25, 2.5, -3.75, 1234.5678]), decimals=1),
    "round_neg_decimals": lambda L: L.round(L.tensor([1.25, -3.75, 1234.5678]), decimals=-2),
    "round_decimals_half": lambda L: L.round(L.tensor([1.25, 1234.5678], dtype=L.float16),
                                             decimals=2),
    "round_decimals_int": lambda L: L.round(L.tensor([1, 2]), decimals=1),
    "nan_to_num_complex": lambda L: L.nan_to_num(
        L.tensor([complex("nan"), complex(float("-inf"), float("inf")), 1 + 2j]), 1.0, 2.0,
        3.0),
    "nan_to_num_complex_grad": lambda L: L.nan_to_num(
        L.tensor([1j], requires_grad=True)),
    # reduction family
    "aminmax_empty_dim": lambda L: L.aminmax(L.zeros(3, 0), dim=1),
    "aminmax_complex_dim": lambda L: L.aminmax(L.zeros(3, dtype=L.complex64), dim=0),
    "amax_dim_before_complex": lambda L: L.amax(L.tensor(2 + 1j), 2),
    "median_dim_before_complex": lambda L: L.median(L.tensor(2 + 1j), 2),
    "nansum_dim_before_complex": lambda L: L.nansum(L.tensor(2 + 1j), 2),
    "mean_int_before_dim": lambda L: L.mean(L.tensor([1, 2]), 3),
    "var_int_before_dim": lambda L: L.var(L.tensor([1, 2]), 3),
    "nansum_dim_keepdim": lambda L: L.nansum(L.tensor([[1.0, float("nan")], [2, 3]]), 1,
                                             keepdim=True),
    "sum_int32_dtype": lambda L: L.sum(_t(L, (2, 2), I32), 0, dtype=L.int32),
    "sum_to_size_bad": lambda L: _t(L, (2, 3), F32).sum_to_size(3),
    "sum_to_size_negative": lambda L: _t(L, (2, 2, 2), F32).sum_to_size(2, -2),
    "median_empty": lambda L: L.median(L.zeros(3, 0)),
    "norm_negative_empty": lambda L: L.norm(L.zeros(0), -1),
    "norm_negative_empty_dim": lambda L: L.norm(L.zeros(2, 0), -1, dim=1),
    "norm_neg_inf_empty_output": lambda L: L.norm(L.zeros(2, 0), float("-inf"), dim=0),
    # matmul family
    "mm_bool": lambda L: L.mm(_t(L, (2, 2), B), _t(L, (2, 2), B)),
    "mm_dtypes": lambda L: L.mm(_t(L, (2, 2), "int64"), _t(L, (2, 2), F64)),
    "bmm_bool": lambda L: L.bmm(_t(L, (1, 2, 2), B), _t(L, (1, 2, 2), B)),
    "dot_bool": lambda L: L.dot(_t(L, (2,), B), _t(L, (2,), B)),
    "vdot_complex": lambda L: L.vdot(L.tensor([1 + 2j, 3 - 1j]), L.tensor([2 - 1j, 1 + 1j])),
    "mv_dtypes": lambda L: L.mv(_t(L, (2, 2), F32), _t(L, (2,), F64)),
    "matmul_bool_vec": lambda L: L.matmul(_t(L, (2, 2), B), _t(L, (2,), B)),
    "matmul_mixed": lambda L: L.matmul(_t(L, (2, 2), F32), _t(L, (2, 2), "complex128")),
    "matmul_mixed_batched": lambda L: L.matmul(_t(L, (2, 2, 2), F32),
                                               _t(L, (2, 2, 2), "complex128")),
    "addmm_self_dtype": lambda L: L.addmm(_t(L, (2, 2), F32), _t(L, (2, 2), F64),
                                          _t(L, (2, 2), F64)),
    "addmm_int_scalars": lambda L: L.addmm(_t(L, (2, 2), I32), _t(L, (2, 2), I32),
                                           _t(L, (2, 2), I32), beta=-0.5, alpha=2.7),
    "addmv_dtypes": lambda L: L.addmv(_t(L, (2,), F32), _t(L, (2, 2), F64), _t(L, (2,), F64)),
    "baddbmm_dtypes": lambda L: L.baddbmm(_t(L, (1, 2, 2), F32), _t(L, (1, 2, 2), F64),
                                          _t(L, (1, 2, 2), F64)),
    "baddbmm_bool": lambda L: L.baddbmm(_t(L, (1, 2, 2), B), _t(L, (1, 2, 2), B),
                                        _t(L, (1, 2, 2), B)),
    "addbmm_int32": lambda L: L.addbmm(_t(L, (2, 2), I32), _t(L, (1, 2, 2), I32),
                                       _t(L, (1, 2, 2), I32), beta=1.5, alpha=2.7),
    "addbmm_dtypes": lambda L: L.addbmm(_t(L, (2, 2), F32), _t(L, (1, 2, 2), F64),
                                        _t(L, (1, 2, 2), F64)),
    "inner_empty": lambda L: L.inner(L.ones(3, 0), L.ones(3, 0)),
    "inner_bool": lambda L: L.inner(_t(L, (2,), B), _t(L, (2,), B)),
    "inner_last_dim": lambda L: L.inner(L.ones(2, 3), L.ones(2, 2)),
    "tensordot_dims_too_many": lambda L: L.tensordot(L.ones(2, 3), L.ones(3), 2),
    "tensordot_broadcast_dim": lambda L: L.tensordot(L.arange(6.0).reshape(2, 3),
                                                     L.arange(2.0).reshape(1, 2), ([1], [0])),
    "chain_matmul_1d": lambda L: L.chain_matmul(L.ones(3, 3), L.ones(3)),
    "einsum_sublist_range": lambda L: L.einsum(L.ones(2, 3), [-1, 0]),
    "einsum_sublist_high": lambda L: L.einsum(L.ones(2, 3), [30, 0]),
    # shape family
    "meshgrid_dtypes": lambda L: L.meshgrid(L.zeros(2), L.zeros(3, dtype=L.int64),
                                            indexing="ij"),
    "meshgrid_0d": lambda L: L.meshgrid(L.tensor(2.0), L.zeros(3), indexing="xy"),
    "diag_matrix": lambda L: L.diag(L.arange(9.0).reshape(3, 3).t(), 1),
    "roll_0d": lambda L: L.roll(L.tensor(2.0), 2, -1),
    "repeat_no_sizes": lambda L: L.tensor(2.0).repeat(),
    "tensor_split_0d": lambda L: L.tensor_split(L.tensor(2.0), 2),
    "tensor_split_unordered": lambda L: L.tensor_split(L.arange(5), (-1, 7, 2, 2)),
    "hsplit_indivisible": lambda L: L.hsplit(L.ones(2, 3), 2),
    "vsplit_1d": lambda L: L.vsplit(L.ones(3), 2),
    "vsplit_indices": lambda L: L.vsplit(L.ones(2, 1, 3), (-2, 2, 0)),
    "dsplit_2d": lambda L: L.dsplit(L.ones(3, 3), 2),
    "t__3d": lambda L: L.ones(2, 3, 4).t_(),
    "flip_repeated_dim": lambda L: L.flip(L.ones(2, 3, 4), (1, 2, 1, 3)),
    "flatten_0d_dim": lambda L: L.flatten(L.tensor(2.0), 2),
    "squeeze_0d_dim": lambda L: L.squeeze(L.tensor(2.0), 2),
    "split_negative_first": lambda L: L.split(L.ones(2, 1, 3), -2, 4),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_outcome_matches_torch(torch, name):
    _same(torch, ERROR_CASES[name])


GRAPHS = {
    "aminmax": lambda L, x: L.aminmax(x),
    "aminmax_dim": lambda L, x: L.aminmax(x, dim=1, keepdim=True),
    "var_mean": lambda L, x: L.var_mean(x, 1),
    "std_mean": lambda L, x: L.std_mean(x, correction=0),
    "nansum": lambda L, x: L.nansum(x, 0),
    "nanmean": lambda L, x: L.nanmean(x),
    "sum_to_size": lambda L, x: x.sum_to_size(4),
    "round_decimals": lambda L, x: L.round(x, decimals=2),
    "clamp_tensor_min": lambda L, x: x.clamp(min=x[0].detach()),
    "clamp_tensor_max": lambda L, x: x.clamp(max=x[0].detach() * 0 + 0.5),
    "to_copy": lambda L, x: x.to(L.float64, copy=True),
    "to_same_copy": lambda L, x: x.to(x.device, copy=True),
    "diag": lambda L, x: L.diag(x, 1),
    "vstack": lambda L, x: L.vstack([x[0], x]),
    "meshgrid": lambda L, x: L.meshgrid(x[0], x[1], indexing="xy"),
    "eq_": lambda L, x: (x * 1).eq_(0.5),
    "lt_": lambda L, x: (x * 1).lt_(x.detach()),
    "acosh_": lambda L, x: (x * 1 + 2).acosh_(),
}


def _graph(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    sig = []
    for o in outs:
        fn = o.grad_fn
        sig.append((type(fn).__name__,
                    [None if n is None else type(n).__name__ for n, _ in fn.next_functions]))
    return sig


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_node_names_match_torch(torch, name):
    x = np.random.default_rng(0).uniform(0.1, 0.9, (3, 4))
    sigs = [_graph(GRAPHS[name](L, L.tensor(x.copy(), requires_grad=True)))
            for L in (ember, torch)]
    assert sigs[0] == sigs[1]


@pytest.mark.parametrize("fn", [
    lambda L, x: L.aminmax(x, dim=0),
    lambda L, x: L.var_mean(x, 1),
    lambda L, x: L.std_mean(x, 0, correction=0),
    lambda L, x: L.nansum(x, 1, keepdim=True),
    lambda L, x: L.round(x, decimals=1) + x,
    lambda L, x: L.diag(x, -1),
    lambda L, x: L.tensordot(x, x[:1], ([0], [0])),
])
def test_gradients_match_torch(torch, fn):
    compare(torch, fn, np.random.default_rng(1).standard_normal((3, 3)))


@pytest.mark.parametrize("fn", [
    lambda L, x: L.prod(x, 0),
    lambda L, x: L.cumprod(x, 0),
    lambda L, x: L.logsumexp(x, 0),
    lambda L, x: L.mv(x.reshape(3, 1), x[:1]),
    lambda L, x: L.vdot(x, x.conj() * 2),
    lambda L, x: L.acosh(x),
])
def test_complex_gradients_match_torch(torch, fn):
    rng = np.random.default_rng(2)
    compare(torch, fn, rng.standard_normal(3) + 1j * rng.standard_normal(3))


def test_nansum_gradient_skips_nan(torch):
    x = np.array([[1.0, np.nan], [2.0, 3.0]])
    compare(torch, lambda L, t: L.nansum(t, 0), x)


def test_inplace_comparison_gradient_is_zero(torch):
    compare(torch, lambda L, x, y: (x * 1).ge_(y), np.array([0.5, 1.5, 2.0]),
            np.array([1.0, 1.0, 2.0]))


def test_inplace_acosh_backward_raises(torch):
    for L in (ember, torch):
        x = (L.tensor([2.0, 3.0], requires_grad=True) * 1).acosh_()
        with pytest.raises(NotImplementedError, match="inplace version of acosh"):
            x.sum().backward()
