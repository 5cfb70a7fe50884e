"""``ember.testing`` against ``torch.testing``: which inputs pass, the exception class and the
exact failure message; ``make_tensor``'s values from the same seed."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _cases(L):
    nan = float("nan")
    return [
        (L.tensor([1., 2., 3.]), L.tensor([1., 2.5, 3.]), {}),
        (L.tensor([1, 2, 3]), L.tensor([1, 2, 4]), {}),
        (L.tensor([1., 2.]), L.tensor([1., 2.], dtype=L.float64), {}),
        (L.tensor([1., 2.]), L.tensor([1., 2.], dtype=L.float64), {"check_dtype": False}),
        (L.tensor([1., 2.]), L.tensor([1., 2., 3.]), {}),
        (1.0, 1.5, {}),
        (1, 2, {}),
        (1.0, 1.0 + 1e-9, {}),
        ([1., 2.], [1., 2.5], {}),
        ({"a": L.ones(2)}, {"a": L.zeros(2)}, {}),
        ({"a": L.ones(2)}, {"b": L.ones(2)}, {}),
        ([L.ones(1), [L.ones(2)]], [L.ones(1), [L.ones(2) * 2]], {}),
        (L.tensor([nan]), L.tensor([nan]), {}),
        (L.tensor([nan]), L.tensor([nan]), {"equal_nan": True}),
        (L.tensor([float("inf")]), L.tensor([float("inf")]), {}),
        (L.tensor(1.), 1.0, {}),
        (L.tensor([[1., 2.], [3., 4.]]), L.tensor([[1., 2.], [3., 5.]]), {}),
        (L.tensor([True]), L.tensor([False]), {}),
        (L.tensor([1 + 1j]), L.tensor([1 + 2j]), {}),
        (L.tensor(2.0), L.tensor(2.5), {}),
        (L.ones(1), L.ones(1) * 1.1, {"atol": 0.2, "rtol": 0}),
        (L.ones(1), L.ones(1) * 1.1, {"atol": 0.01, "rtol": 0}),
        (L.ones(1), L.ones(1) * 1.1, {"msg": "custom"}),
        (L.ones(1), L.ones(1), {"rtol": 1e-3}),
        (np.ones(2), np.ones(2), {}),
        (np.ones(2), np.zeros(2), {}),
        (L.tensor([0.5], dtype=L.float16), L.tensor([0.5004], dtype=L.float16), {}),
        (L.ones(2, 3), L.ones(2, 3).t().contiguous().t(), {"check_stride": True}),
    ]


@pytest.mark.parametrize("i", range(len(_cases(torch))))
def test_assert_close_matches_torch(i):
    a, e, kw = _cases(torch)[i]
    try:
        torch.testing.assert_close(a, e, **kw)
        want = None
    except Exception as ex:   # noqa: BLE001 (the class is compared below)
        want = ex
    a, e, kw = _cases(ember)[i]
    if want is None:
        ember.testing.assert_close(a, e, **kw)
        return
    with pytest.raises(type(want)) as got:
        ember.testing.assert_close(a, e, **kw)
    if not isinstance(want, TypeError):      # (the type names differ: ember.Tensor)
        assert str(got.value) == str(want)


@pytest.mark.parametrize("dtype,kw", [("float32", {}), ("float64", {"low": -1, "high": 2}),
                                      ("int64", {}), ("uint8", {}), ("bool", {}),
                                      ("complex64", {}), ("float32", {"noncontiguous": True}),
                                      ("int32", {"exclude_zero": True, "low": 0, "high": 2})])
def test_make_tensor_same_values(dtype, kw):
    torch.manual_seed(3)
    want = torch.testing.make_tensor((3, 4), dtype=getattr(torch, dtype), device="cpu", **kw)
    ember.manual_seed(3)
    got = ember.testing.make_tensor((3, 4), dtype=getattr(ember, dtype), device="cpu", **kw)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert str(got.dtype) == str(want.dtype) and tuple(got.shape) == tuple(want.shape)


def test_make_tensor_errors():
    for kw in ({"low": 2, "high": 1}, {"low": float("nan")}):
        with pytest.raises(ValueError) as te:
            torch.testing.make_tensor(2, dtype=torch.float32, device="cpu", **kw)
        with pytest.raises(ValueError) as ee:
            ember.testing.make_tensor(2, dtype=ember.float32, device="cpu", **kw)
        assert str(ee.value) == str(te.value)
