"""Fixes found by the r7train programs (session 14), each checked against torch."""
import numpy as np
import pytest

import ember
from ember.optim import _foreach


def _pair(torch, shapes=((2, 3), (4,)), seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(np.float32) + 2.0 for s in shapes]
    return [torch.tensor(a) for a in arrays], [ember.tensor(a) for a in arrays]


def _close(ours, theirs):
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape) and str(o.dtype)[6:] == str(t.dtype)[6:]
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["sqrt", "exp", "neg", "abs", "sign", "reciprocal", "rsqrt"])
def test_foreach_unary_matches_torch(torch, name):
    t, e = _pair(torch)
    _close(getattr(_foreach, "_foreach_" + name)(e), getattr(torch, "_foreach_" + name)(t))
    ret_t = getattr(torch, "_foreach_" + name + "_")(t)
    ret_e = getattr(_foreach, "_foreach_" + name + "_")(e)
    assert (ret_e is e) == (ret_t is t)
    _close(e, t)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "minimum", "clamp_min",
                                  "clamp_max", "pow"])
@pytest.mark.parametrize("kind", ["scalar", "scalars", "tensors"])
def test_foreach_binary_matches_torch(torch, name, kind):
    t, e = _pair(torch)
    t2, e2 = _pair(torch, seed=1)
    other_t, other_e = {"scalar": (1.5, 1.5), "scalars": ([2.0, 0.5], [2.0, 0.5]),
                        "tensors": (t2, e2)}[kind]
    _close(getattr(_foreach, "_foreach_" + name)(e, other_e),
           getattr(torch, "_foreach_" + name)(t, other_t))
    getattr(torch, "_foreach_" + name + "_")(t, other_t)
    getattr(_foreach, "_foreach_" + name + "_")(e, other_e)
    _close(e, t)


def test_foreach_alpha_lerp_addcmul_norm_match_torch(torch):
    t, e = _pair(torch)
    t2, e2 = _pair(torch, seed=1)
    t3, e3 = _pair(torch, seed=2)
    torch._foreach_add_(t, t2, alpha=-0.3)
    _foreach._foreach_add_(e, e2, alpha=-0.3)
    torch._foreach_sub_(t, t2, alpha=0.7)
    _foreach._foreach_sub_(e, e2, alpha=0.7)
    _close(e, t)
    torch._foreach_lerp_(t, t2, weight=0.25)
    _foreach._foreach_lerp_(e, e2, weight=0.25)
    _close(e, t)
    _close(_foreach._foreach_lerp(e, e2, e3), torch._foreach_lerp(t, t2, t3))
    torch._foreach_addcmul_(t, t2, t3, value=0.1)
    _foreach._foreach_addcmul_(e, e2, e3, value=0.1)
    torch._foreach_addcdiv_(t, t2, t3, [0.5, -2.0])
    _foreach._foreach_addcdiv_(e, e2, e3, [0.5, -2.0])
    _close(e, t)
    _close(_foreach._foreach_addcdiv(e, e2, e3, ember.tensor([1.0, 3.0])),
           torch._foreach_addcdiv(t, t2, t3, torch.tensor([1.0, 3.0])))
    for ord in (2, 1.0, float("inf")):
        _close(_foreach._foreach_norm(e, ord), torch._foreach_norm(t, ord))
    _close(_foreach._foreach_max(e), torch._foreach_max(t))
    _close(_foreach._foreach_pow(2.0, e), torch._foreach_pow(2.0, t))
    _foreach._foreach_copy_(e, e2)
    torch._foreach_copy_(t, t2)
    _close(e, t)
    assert _foreach._foreach_zero_(e) is e
    torch._foreach_zero_(t)
    _close(e, t)


@pytest.mark.parametrize("call", [
    lambda lib, a, b: lib._foreach_add_([a], [a, b]),
    lambda lib, a, b: lib._foreach_mul([], 2.0),
    lambda lib, a, b: lib._foreach_mul_([a], [1.0, 2.0]),
    lambda lib, a, b: lib._foreach_lerp_([a, b], [a], 0.5),
])
def test_foreach_errors_match_torch(torch, call):
    with pytest.raises(RuntimeError) as expected:
        call(torch, torch.ones(2), torch.ones(3))
    a = ember.ones(2)
    with pytest.raises(RuntimeError) as got:
        call(_foreach, a, ember.ones(3))
    assert str(got.value) == str(expected.value)
    assert a.tolist() == [1.0, 1.0]


def test_foreach_leaf_requires_grad_in_place_errors_like_torch(torch):
    with pytest.raises(RuntimeError) as expected:
        torch._foreach_mul_([torch.ones(2, requires_grad=True)], 2.0)
    with pytest.raises(RuntimeError) as got:
        _foreach._foreach_mul_([ember.ones(2, requires_grad=True)], 2.0)
    assert str(got.value) == str(expected.value)


def test_foreach_keyword_operands_match_torch(torch):
    """timm's ModelEmaV3 fallback spells ``_foreach_mul_(values, scalar=decay)``."""
    t, e = _pair(torch)
    t2, e2 = _pair(torch, seed=1)
    torch._foreach_mul_(t, scalar=0.9)
    _foreach._foreach_mul_(e, scalar=0.9)
    torch._foreach_add_(t, other=t2, alpha=0.1)
    _foreach._foreach_add_(e, other=e2, alpha=0.1)
    torch._foreach_div_(t, scalars=[2.0, 4.0])
    _foreach._foreach_div_(e, scalars=[2.0, 4.0])
    _close(e, t)
    _close(_foreach._foreach_pow(e, exponent=3.0), torch._foreach_pow(t, exponent=3.0))
