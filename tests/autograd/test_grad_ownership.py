"""Gradient ownership: a large gradient the engine owns may become ``.grad`` without a copy, but
no ``.grad`` may ever share memory with another tensor the program can reach (another leaf's
``.grad``, an input, a saved tensor, a hooked gradient). Checked on tensors above the size at
which ownership is tracked, against torch's values."""
import numpy as np
import pytest

import ember

N = 80     # 80 x 80 = 6,400 elements: above the engine's ownership threshold


def _leaves(lib, n, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((N, N)) for _ in range(n)]
    return arrays, [lib.tensor(a.copy(), requires_grad=True) for a in arrays]


CASES = {
    "linear_weight_t": lambda L, a, b: (a @ b.t()).sum(),
    "two_views_of_one_leaf": lambda L, a, b: (a.t() * 2 + a.reshape(N * N).view(N, N)).sum()
    + (b * 1).sum(),
    "shared_product": lambda L, a, b: (a @ b).sum() + (b.t() @ a.t()).pow(2).sum(),
    "expand_and_permute": lambda L, a, b: (a.permute(1, 0) + b[:1].expand(N, N)).exp().sum(),
    "add_twice": lambda L, a, b: (a + b).t().sum() + (a + b).sum(),
    "addmm": lambda L, a, b: L.addmm(b, a, b.t()).tanh().sum(),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_grads_match_torch_and_alias_nothing(torch, name):
    fn = CASES[name]
    arrays, (a, b) = _leaves(ember, 2)
    _, (ta, tb) = _leaves(torch, 2)
    fn(ember, a, b).backward()
    fn(torch, ta, tb).backward()
    for e, t in ((a, ta), (b, tb)):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-10)
        assert e.grad.numpy().flags.c_contiguous
    ga, gb = a.grad.numpy(), b.grad.numpy()
    assert not np.shares_memory(ga, gb)
    for arr in arrays + [a.numpy(force=True), b.numpy(force=True)]:
        assert not np.shares_memory(ga, arr) and not np.shares_memory(gb, arr)
    before = gb.copy()
    a.grad.zero_()      # writing one .grad changes no other
    np.testing.assert_array_equal(b.grad.numpy(), before)


def test_a_hooked_gradient_is_not_adopted(torch):
    """A hook that keeps the gradient it saw must not find it changed by a later backward."""
    _, (a, b) = _leaves(ember, 2)
    seen = []
    y = b.t()
    y.register_hook(lambda g: seen.append(g))
    (a @ y).sum().backward(retain_graph=True)
    kept = seen[0].numpy().copy()
    (a @ y).sum().backward()
    np.testing.assert_array_equal(seen[0].numpy(), kept)
    np.testing.assert_allclose(b.grad.numpy(), 2 * kept.T)


def test_accumulating_into_an_adopted_grad_touches_nothing_else(torch):
    _, (a, b) = _leaves(ember, 2)
    out = (a @ b.t()).sum()
    out.backward(retain_graph=True)
    first_a, first_b = a.grad.numpy().copy(), b.grad.numpy().copy()
    out.backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * first_a)
    np.testing.assert_allclose(b.grad.numpy(), 2 * first_b)
