"""``stft``/``istft`` against torch: values, gradients, errors."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

R = np.random.RandomState(0)
X = R.randn(2, 40)
KWS = [dict(n_fft=8), dict(n_fft=8, hop_length=3, win_length=6),
       dict(n_fft=16, normalized=True, center=False), dict(n_fft=8, pad_mode="constant"),
       dict(n_fft=8, pad_mode="replicate"), dict(n_fft=8, pad_mode="circular"),
       dict(n_fft=8, onesided=False)]


@pytest.mark.parametrize("kw", KWS, ids=str)
@pytest.mark.parametrize("windowed", [False, True])
@pytest.mark.parametrize("batched", [False, True])
def test_stft_istft(kw, windowed, batched):
    x = X if batched else X[0]
    w = R.rand(kw.get("win_length", kw["n_fft"])) + 0.5 if windowed else None

    def run(L):
        xt = L.tensor(x, requires_grad=True)
        wt = None if w is None else L.tensor(w)
        s = L.stft(xt, window=wt, return_complex=True, **kw)
        inv = {k: v for k, v in kw.items() if k != "pad_mode"}
        y = L.istft(s, window=wt, length=40, **inv)
        (s.abs() ** 2).sum().backward()
        return s.detach().numpy(), y.detach().numpy(), xt.grad.numpy()
    for a, b in zip(run(ember), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def test_method_and_real_output():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = ember.tensor(X[0]).stft(8, return_complex=False)
        b = torch.tensor(X[0]).stft(8, return_complex=False)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10)


def test_complex_input():
    x = X[0] + 1j * X[1]
    a = ember.stft(ember.tensor(x), 8, return_complex=True)
    b = torch.stft(torch.tensor(x), 8, return_complex=True)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10)


@pytest.mark.parametrize("kw", [dict(n_fft=8), dict(n_fft=0, return_complex=True),
                                dict(n_fft=8, hop_length=0, return_complex=True),
                                dict(n_fft=8, win_length=9, return_complex=True),
                                dict(n_fft=8, window="short", return_complex=True)], ids=str)
def test_errors(kw):
    def call(L):
        k = dict(kw)
        if k.get("window") == "short":
            k["window"] = L.ones(5)
        return L.stft(L.randn(20), **k)
    with pytest.raises(RuntimeError) as te:
        call(torch)
    with pytest.raises(RuntimeError) as ee:
        call(ember)
    assert str(ee.value) == str(te.value)
