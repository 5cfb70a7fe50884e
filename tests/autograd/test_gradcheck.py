"""gradcheck / gradgradcheck: True on correct gradients; a GradcheckError naming the input,
the element and both values on wrong ones (as torch's)."""
import numpy as np
import pytest

import ember
from ember.autograd import GradcheckError, gradcheck, gradgradcheck

__all__ = []


def x64(*shape, seed=0, requires_grad=True):
    rng = np.random.default_rng(seed)
    return ember.tensor(rng.uniform(0.5, 1.5, shape), requires_grad=requires_grad)


def wrong(factor, lib=ember):
    class Wrong(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * factor
    return Wrong


@pytest.mark.parametrize("fn", [
    lambda x: x * x,
    lambda x: (x * 3 + 1).exp().sum(),
    lambda x: x.mm(x.t()),
    lambda x: (x ** 3).mean(0),
    lambda x: x.sqrt().log(),
    lambda x: x.tanh().sigmoid(),
    lambda x: (x.sum(1, keepdim=True) / x).abs(),
    lambda x: x.clamp(0.7, 1.2),
], ids=["mul", "exp_sum", "mm", "pow_mean", "sqrt_log", "tanh_sigmoid", "div_bcast", "clamp"])
def test_gradcheck_passes_on_builtin_ops(fn):
    assert gradcheck(fn, (x64(2, 3),))


def test_gradcheck_several_inputs_and_outputs():
    a, b = x64(2, 3), x64(3, seed=1)
    assert gradcheck(lambda a, b: (a * b, a - b, (a / b).sum()), (a, b))


def test_gradcheck_with_non_tensor_and_non_requiring_inputs():
    a, b = x64(2, 3), x64(2, 3, seed=1, requires_grad=False)
    assert gradcheck(lambda a, b, s: a * b * s, (a, b, 2.5))


def test_gradcheck_accepts_single_tensor_input():
    assert gradcheck(lambda x: x.exp(), x64(3))


def _torch_twin(torch, *tensors):
    return [torch.tensor(t.detach().numpy(), requires_grad=True) for t in tensors]


def test_gradcheck_wrong_gradient_raises_torchs_message_naming_the_element(torch):
    x = x64(2)
    y = x64(3, seed=1)
    with pytest.raises(GradcheckError) as info:
        gradcheck(lambda y, x: wrong(3).apply(x) + 0 * y.sum(), (y, x))
    err = info.value
    assert isinstance(err, RuntimeError)
    assert (err.input_index, err.input_element) == (1, 0)
    assert (err.numerical, err.analytical) == (pytest.approx(2), pytest.approx(3))
    ty, tx = _torch_twin(torch, y, x)
    with pytest.raises(RuntimeError) as tinfo:
        torch.autograd.gradcheck(lambda y, x: wrong(3, torch).apply(x) + 0 * y.sum(), (ty, tx))
    assert str(err) == str(tinfo.value)


def test_gradcheck_names_the_worst_element(torch):
    def one_wrong(lib):
        class OneWrong(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                out = g * 2
                out[2] = out[2] * 3.5
                return out
        return OneWrong
    x = x64(4)
    with pytest.raises(GradcheckError) as info:
        gradcheck(one_wrong(ember).apply, (x,))
    err = info.value
    assert (err.input_element, err.output_element) == (2, 2)
    assert (err.numerical, err.analytical) == (pytest.approx(2), pytest.approx(7))
    with pytest.raises(RuntimeError) as tinfo:
        torch.autograd.gradcheck(one_wrong(torch).apply, tuple(_torch_twin(torch, x)))
    assert str(err) == str(tinfo.value)


def test_gradcheck_raise_exception_false_returns_false(torch):
    assert gradcheck(wrong(3).apply, (x64(2),), raise_exception=False) is False
    tx = torch.ones(2, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(wrong(3, torch).apply, (tx,), raise_exception=False) is False


def test_gradcheck_tolerance():
    # 1% off: fails with rtol=1e-3 and passes with rtol=0.05
    bad = wrong(2.02)
    assert not gradcheck(bad.apply, (x64(3),), raise_exception=False)
    assert gradcheck(bad.apply, (x64(3),), rtol=0.05)


def test_gradcheck_without_differentiable_input_raises():
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda x: x * 2, (x64(2, requires_grad=False),))


def test_gradcheck_warns_on_float32():
    x = ember.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="not a double precision"):
        gradcheck(lambda t: t * 2, (x,), atol=1e-2, rtol=1e-2, eps=1e-3)


def test_gradcheck_does_not_change_inputs():
    x = x64(2, 3)
    before = x.detach().numpy().copy()
    gradcheck(lambda t: t.exp(), (x,))
    np.testing.assert_array_equal(x.detach().numpy(), before)
    assert x.grad is None


def test_gradgradcheck_passes():
    assert gradgradcheck(lambda x: (x ** 3).sum(), (x64(3),))
    assert gradgradcheck(lambda a, b: a * b.exp(), (x64(2, 3), x64(3, seed=1)))
    assert gradgradcheck(lambda x: x.mm(x.t()), (x64(2, 3),))


def test_gradgradcheck_detects_wrong_second_derivative():
    class Sq(ember.autograd.Function):
        """Right first derivative, wrong second (backward forgets that it depends on x)."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x.detach()
    x = x64(3)
    assert gradcheck(Sq.apply, (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradgradcheck(Sq.apply, (x,))


def test_gradcheck_size_zero_input():
    assert gradcheck(lambda x, y: x.sum() + y.sum(), (x64(0), x64(2)))
