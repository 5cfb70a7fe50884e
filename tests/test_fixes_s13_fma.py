"""torch's CPU kernels fuse the multiply-add of ``add/sub/rsub(alpha=)``, ``addcmul`` and
``lerp`` (one rounding in float32); ember's results must be torch's bit for bit."""
import warnings

import numpy as np
import pytest

import ember

CASES = {
    "add_alpha": lambda L, a, b, c, w: L.add(a, b, alpha=0.3),
    "sub_alpha": lambda L, a, b, c, w: L.sub(a, b, alpha=0.3),
    "rsub_alpha": lambda L, a, b, c, w: L.rsub(a, b, alpha=0.3),
    "add_scalar_alpha": lambda L, a, b, c, w: L.add(a, 2.5, alpha=0.3),
    "sub_scalar_alpha": lambda L, a, b, c, w: L.sub(a, 1.7, alpha=-0.3),
    "add_broadcast": lambda L, a, b, c, w: L.add(a.view(40, 50), b[:50], alpha=0.7),
    "add_": lambda L, a, b, c, w: a.clone().add_(b, alpha=-0.01),
    "sub_": lambda L, a, b, c, w: a.clone().sub_(b, alpha=2.5),
    "addcmul": lambda L, a, b, c, w: L.addcmul(a, b, c, value=0.3),
    "addcmul_1": lambda L, a, b, c, w: L.addcmul(a, b, c),
    "addcmul_": lambda L, a, b, c, w: a.clone().addcmul_(b, c, value=-0.5),
    "addcdiv": lambda L, a, b, c, w: L.addcdiv(a, b, c, value=0.3),
    "lerp_low": lambda L, a, b, c, w: L.lerp(a, b, 0.3),
    "lerp_high": lambda L, a, b, c, w: L.lerp(a, b, 0.7),
    "lerp_out": lambda L, a, b, c, w: L.lerp(a, b, -1.5),
    "lerp_tensor": lambda L, a, b, c, w: L.lerp(a, b, w),
    "lerp_": lambda L, a, b, c, w: a.clone().lerp_(b, 0.1),
    "int_plus_float": lambda L, a, b, c, w: L.add(L.arange(50), 2.5, alpha=0.3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fused_multiply_add_as_torch(torch, name):
    rng = np.random.RandomState(3)
    arrs = [rng.randn(2000).astype(np.float32) for _ in range(3)]
    arrs[0][:5] = [np.inf, -np.inf, np.nan, 0.0, -0.0]
    w = (1 / (1 + np.exp(-arrs[2]))).astype(np.float32)
    got = []
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = CASES[name](lib, *[lib.tensor(x) for x in arrs], lib.tensor(w))
        got.append((str(out.dtype), out.numpy()))
    assert got[0][0] == got[1][0]
    np.testing.assert_array_equal(got[1][1], got[0][1])


def test_deprecated_value_first_overloads(torch):
    """Pre-1.5 optimizer code: ``addcmul_(value, t1, t2)`` (torch warns and computes)."""
    def run(lib):
        x, a, b = lib.ones(3), lib.full((3,), 2.0), lib.full((3,), 4.0)
        out = []
        for f in (lambda: x.clone().addcmul_(0.5, a, b), lambda: x.clone().addcdiv_(-0.5, a, b),
                  lambda: lib.addcmul(x, 0.5, a, b), lambda: lib.addcdiv(x, 0.5, a, b),
                  lambda: x.addcmul(0.5, a, b), lambda: x.clone().addcmul_(a, b, 0.5)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    out.append(f().tolist())
                except TypeError as e:
                    out.append(str(e))
        return out
    assert run(torch) == run(ember)
