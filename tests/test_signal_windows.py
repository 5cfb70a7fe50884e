"""``ember.signal.windows`` against ``torch.signal.windows``."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

NAMES = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "hamming", "hann",
         "kaiser", "nuttall"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("M", [0, 1, 2, 7, 10])
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_window(name, M, sym, dtype):
    want = getattr(torch.signal.windows, name)(M, sym=sym, dtype=getattr(torch, dtype))
    got = getattr(ember.signal.windows, name)(M, sym=sym, dtype=getattr(ember, dtype))
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("kw", [{"a": [0.46, 0.23, 0.31]}, {"a": [0.5, 0.5], "sym": False}])
def test_general_cosine(kw):
    want = torch.signal.windows.general_cosine(10, **kw)
    got = ember.signal.windows.general_cosine(10, **kw)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name,kw", [
    ("hann", {"M": -1}), ("hann", {"M": 3, "dtype": "int64"}),
    ("gaussian", {"M": 3, "std": 0}), ("exponential", {"M": 3, "tau": -1}),
    ("exponential", {"M": 3, "center": 1.0}), ("kaiser", {"M": 3, "beta": -1.0}),
    ("general_cosine", {"M": 3, "a": 2})])
def test_errors(name, kw):
    def call(L):
        k = dict(kw)
        if "dtype" in k:
            k["dtype"] = getattr(L, k["dtype"])
        return getattr(L.signal.windows, name)(k.pop("M"), **k)
    with pytest.raises(Exception) as te:
        call(torch)
    with pytest.raises(type(te.value)) as ee:
        call(ember)
    assert str(ee.value) == str(te.value)


def test_requires_grad_and_exponential_center():
    w = ember.signal.windows.exponential(6, center=2.0, tau=3.0, sym=False, requires_grad=True)
    t = torch.signal.windows.exponential(6, center=2.0, tau=3.0, sym=False, requires_grad=True)
    assert w.requires_grad and t.requires_grad
    np.testing.assert_allclose(w.detach().numpy(), t.detach().numpy(), rtol=2e-6)
