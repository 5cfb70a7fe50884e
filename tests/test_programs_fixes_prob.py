"""Regressions found by the prob-area programs (tests/programs/p_prob_*.py), against torch."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _same(e, t, exact=True, rtol=1e-6, atol=0.0):
    e_np, t_np = e.detach().numpy(), t.detach().numpy()
    assert e_np.dtype == t_np.dtype and e_np.shape == t_np.shape
    if exact:
        np.testing.assert_array_equal(e_np, t_np)
    else:
        np.testing.assert_allclose(e_np, t_np, rtol=rtol, atol=atol)


@pytest.mark.parametrize("draws_before", [0, 2, 7])
def test_binomial_distribution_sample_uses_torch_stream(draws_before):
    # Binomial(10, probs).sample() drew from NumPy's binomial, not torch's algorithm
    out = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        lib.rand(draws_before)
        d = lib.distributions.Binomial(10, lib.tensor([0.2, 0.7]))
        out.append(d.sample((3,)))
    _same(*out)


def _draw(lib, name, dtype):
    D = lib.distributions

    def t(v):
        return lib.tensor(v, dtype=getattr(lib, dtype))
    if name == "Gamma":
        d = D.Gamma(t([0.3, 1.0, 2.5, 12.0]), t([1.0, 2.0, 0.5, 3.0]))
    elif name == "Beta":
        d = D.Beta(t([0.5, 2.0, 9.0]), t([0.4, 3.0, 8.0]))
    elif name == "Dirichlet":
        d = D.Dirichlet(t([[0.2, 1.0, 3.0], [5.0, 0.7, 1.5]]))
    elif name == "Chi2":
        d = D.Chi2(t([1.0, 3.0]))
    elif name == "StudentT":
        d = D.StudentT(t([2.0, 9.0]))
    elif name == "FisherSnedecor":
        d = D.FisherSnedecor(t([3.0, 5.0]), t([7.0, 2.0]))
    elif name == "InverseGamma":
        d = D.InverseGamma(t([2.0, 0.6]), t([1.0, 2.0]))
    else:
        d = D.NegativeBinomial(t([3.0, 5.0]), t([0.3, 0.6]))
    return d.sample((4,))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["Gamma", "Beta", "Dirichlet", "Chi2", "StudentT",
                                  "FisherSnedecor", "InverseGamma", "NegativeBinomial"])
def test_gamma_family_samples_follow_torch_stream(name, dtype):
    # _standard_gamma / _sample_dirichlet drew from NumPy's generator
    out = []
    for lib in (ember, torch):
        lib.manual_seed(3)
        lib.randn(3)            # leaves a cached Box-Muller value: the gamma sampler uses it
        out.append(_draw(lib, name, dtype))
        out.append(lib.rand(2))  # the same number of draws consumed
    _same(out[0], out[2], exact=False, rtol=1e-6 if dtype == "float32" else 1e-12)
    _same(out[1], out[3])


def test_standard_gamma_small_alpha_and_tiny():
    out = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        out.append(lib.distributions.Gamma(lib.tensor([0.01, 0.05, 0.5, 1e-3] * 3), 1.0).sample())
    _same(*out)
    assert float(out[0].min()) > 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_standard_gamma_grad_matches_torch_approximation(dtype):
    from ember.distributions._fallback import _standard_gamma_grad
    rs = np.random.RandomState(0)
    a = np.exp(rs.uniform(-3, 4, 400))
    x = np.maximum(rs.gamma(a), 1e-30)
    t = torch._standard_gamma_grad(*(torch.tensor(v.astype(dtype)) for v in (a, x)))
    e = _standard_gamma_grad(*(ember.tensor(v.astype(dtype)) for v in (a, x)))
    _same(e, t, exact=False, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dirichlet_grad_matches_torch_approximation(dtype):
    from ember.distributions._fallback import _dirichlet_grad
    rs = np.random.RandomState(1)
    a, b = np.exp(rs.uniform(-3, 4, 600)), np.exp(rs.uniform(-3, 4, 600))
    x = np.clip(rs.beta(a, b), 1e-6, 1 - 1e-6)
    args = (x, a, a + b)
    t = torch._dirichlet_grad(*(torch.tensor(v.astype(dtype)) for v in args))
    e = _dirichlet_grad(*(ember.tensor(v.astype(dtype)) for v in args))
    _same(e, t, exact=False, rtol=1e-12)


def test_beta_rsample_gradients_match_torch():
    grads = []
    for lib in (ember, torch):
        lib.manual_seed(101)
        a = lib.tensor([15.0, 0.5, 2.0], requires_grad=True)
        b = lib.tensor([15.0, 3.0, 0.3], requires_grad=True)
        s = lib.distributions.Beta(a, b).rsample((4,))
        (s * lib.arange(1.0, 4.0)).sum().backward()
        grads.append((s, a.grad, b.grad))
    for e, t in zip(*grads):
        _same(e, t, exact=False, rtol=1e-5, atol=1e-7)


def test_gamma_rsample_gradients_match_torch():
    grads = []
    for lib in (ember, torch):
        lib.manual_seed(7)
        c = lib.tensor([0.5, 2.0, 7.0, 30.0], dtype=lib.float64, requires_grad=True)
        r = lib.tensor([1.0, 0.5, 3.0, 2.0], dtype=lib.float64, requires_grad=True)
        g = lib.distributions.Gamma(c, r).rsample((3,))
        g.sum().backward()
        grads.append((g, c.grad, r.grad))
    for e, t in zip(*grads):
        _same(e, t, exact=False, rtol=1e-12)


def test_dirichlet_sample_clamped_below_one():
    for lib in (ember, torch):
        lib.manual_seed(0)
        s = lib.distributions.Dirichlet(lib.tensor([1e-3, 1e-3])).sample((50,))
        assert float(s.max()) == float(np.nextafter(np.float32(1), np.float32(0)))


def _exp_adder(x, y):
    return 2 * x.exp() + 3 * y, (x * y).sum()


@pytest.mark.parametrize("inputs_tuple", [True, False])
def test_jacobian_forward_mode(inputs_tuple):
    res = []
    for lib in (ember, torch):
        AF = lib.autograd.functional
        x = lib.tensor([0.5, 1.0, 2.0])
        y = lib.tensor([1.0, -1.0, 3.0])
        if inputs_tuple:
            r = AF.jacobian(_exp_adder, (x, y), vectorize=True, strategy="forward-mode")
            assert isinstance(r, list) and isinstance(r[0], list)      # torch returns lists
            res.append([t for row in r for t in row])
        else:
            res.append([AF.jacobian(lambda v: v.sin().reshape(3, 1) * v, x, vectorize=True,
                                    strategy="forward-mode")])
    for e, t in zip(*res):
        _same(e, t, exact=False, rtol=1e-6)


def test_hessian_forward_over_reverse():
    res = []
    for lib in (ember, torch):
        x = lib.tensor([0.5, 1.0, 2.0])
        res.append(lib.autograd.functional.hessian(lambda v: (v ** 3).sum() * v[0], x,
                                                   vectorize=True,
                                                   outer_jacobian_strategy="forward-mode"))
    _same(res[0], res[1].detach(), exact=False, rtol=1e-6)


@pytest.mark.parametrize("kw", [dict(strategy="x"), dict(strategy="forward-mode"),
                                dict(strategy="forward-mode", vectorize=True, create_graph=True),
                                dict(strategy="forward-mode", vectorize=True, strict=True)])
def test_jacobian_strategy_errors(kw):
    errs = []
    for lib in (ember, torch):
        with pytest.raises(Exception) as info:
            lib.autograd.functional.jacobian(lambda x: x.sin(), lib.tensor([1.0]), **kw)
        errs.append((type(info.value), str(info.value)))
    assert errs[0] == errs[1]


def test_hessian_strategy_error():
    errs = []
    for lib in (ember, torch):
        with pytest.raises(AssertionError) as info:
            lib.autograd.functional.hessian(lambda x: x.sum(), lib.tensor([1.0]),
                                            outer_jacobian_strategy="bad")
        errs.append(str(info.value))
    assert errs[0] == errs[1]


@pytest.mark.parametrize("make", [
    lambda lib: lib.rand(40, dtype=lib.float16),
    lambda lib: lib.rand_like(lib.zeros(3, 4, dtype=lib.float16)),
    lambda lib: lib.empty(20, dtype=lib.float16).uniform_(-0.3, 0.7),
    lambda lib: lib.empty(20, dtype=lib.float16).uniform_(1.1, 5.3),
    lambda lib: lib.empty(20, dtype=lib.bfloat16).uniform_(-0.3, 0.7),
])
def test_half_uniform_is_float_uniform_rounded(make):
    # torch draws half uniforms as float32 ones (24 bits, float bounds) and rounds
    out = []
    for lib in (ember, torch):
        lib.manual_seed(5)
        out.append(make(lib).float())
    _same(*out)
