"""The foundation's bad inputs (issue 2): each raises a clear error, worded as torch's where
torch has one, and a failed call leaves its inputs, their versions and their .grad unchanged."""
import numpy as np
import pytest

import ember

__all__ = []


def snapshot(*tensors):
    """Values, versions and grads of ``tensors``, to check that a failed call changed nothing."""
    out = []
    for t in tensors:
        g = t._grad
        out.append((t._array.copy(), t._version, None if g is None else g._array.copy(),
                    t.grad_fn, t.requires_grad))
    return out


def assert_unchanged(before, *tensors):
    for (arr, version, grad, fn, rg), t in zip(before, tensors):
        np.testing.assert_array_equal(t._array, arr)
        assert t._version == version
        assert t.grad_fn is fn and t.requires_grad == rg
        if grad is None:
            assert t._grad is None
        else:
            np.testing.assert_array_equal(t._grad._array, grad)


def with_grad(*shape):
    x = ember.ones(*shape, requires_grad=True)
    (x * 2).sum().backward()
    return x


def test_backward_twice(torch):
    x = with_grad(3)
    y = (x * x).sum()
    y.backward()
    before = snapshot(x)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    assert_unchanged(before, x)
    tx = torch.ones(3, requires_grad=True)
    ty = (tx * tx).sum()
    ty.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        ty.backward()


def test_backward_twice_message_says_retain_graph():
    x = with_grad(3)
    y = (x.exp()).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
        y.backward()


def test_non_scalar_backward_without_gradient(torch):
    x = with_grad(2, 3)
    y = x * 2
    before = snapshot(x)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar "
                                           "outputs"):
        y.backward()
    assert_unchanged(before, x)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar "
                                           "outputs"):
        (torch.ones(2, 3, requires_grad=True) * 2).backward()


def test_non_scalar_autograd_grad_without_grad_outputs(torch):
    for lib in (ember, torch):
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar "
                                               "outputs"):
            lib.autograd.grad(x * 2, x)


@pytest.mark.parametrize("make", [
    lambda L: L.tensor([1, 2], requires_grad=True),
    lambda L: L.ones(2, dtype=L.int64, requires_grad=True),
    lambda L: L.zeros(2, dtype=L.int32).requires_grad_(),
    lambda L: L.tensor([True]).requires_grad_(),
    lambda L: L.arange(3, requires_grad=True),
], ids=["tensor", "ones", "requires_grad_", "bool", "arange"])
def test_requires_grad_on_integer_tensor(torch, make):
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="(?i)only Tensors of floating point"):
            make(lib)


def _bad_count(lib):
    class BadCount(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g
    return BadCount


def test_custom_backward_wrong_number_of_gradients(torch):
    a, b = with_grad(3), with_grad(3)
    y = _bad_count(ember).apply(a, b).sum()
    before = snapshot(a, b)
    with pytest.raises(RuntimeError, match="function BadCountBackward returned an incorrect "
                                           "number of gradients \\(expected 2, got 1\\)"):
        y.backward()
    assert_unchanged(before, a, b)
    ta, tb = torch.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="function BadCountBackward returned an incorrect "
                                           "number of gradients \\(expected 2, got 1\\)"):
        _bad_count(torch).apply(ta, tb).sum().backward()


def test_custom_backward_too_many_gradients(torch):
    for lib in (ember, torch):
        class TooMany(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g, g
        with pytest.raises(RuntimeError, match="function TooManyBackward returned an incorrect "
                                               "number of gradients \\(expected 1, got 2\\)"):
            TooMany.apply(lib.ones(2, requires_grad=True)).sum().backward()


def _bad_shape(lib):
    class BadShape(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g, lib.ones(5)
    return BadShape


def test_custom_backward_wrong_shape(torch):
    a, b = with_grad(3), with_grad(3)
    y = _bad_shape(ember).apply(a, b).sum()
    before = snapshot(a, b)
    msg = ("Function BadShapeBackward returned an invalid gradient at index 1 - got \\[5\\] but "
           "expected shape compatible with \\[3\\]")
    with pytest.raises(RuntimeError, match=msg):
        y.backward()
    assert_unchanged(before, a, b)
    ta, tb = torch.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=msg):
        _bad_shape(torch).apply(ta, tb).sum().backward()


def test_custom_backward_returning_non_tensor():
    class NotTensor(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return 3.0
    a = with_grad(2)
    before = snapshot(a)
    with pytest.raises(RuntimeError, match=r"expected Variable or None \(got float\)"):
        NotTensor.apply(a).sum().backward()     # (torch's class and message)
    assert_unchanged(before, a)


def test_forward_returning_non_tensor():
    class Item(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.sum().item()

        @staticmethod
        def backward(ctx, g):
            return g
    a = with_grad(2)
    before = snapshot(a)
    with pytest.raises(TypeError, match="Item.forward must return a Tensor or a tuple of "
                                        "Tensors, but returned float"):
        Item.apply(a)
    assert_unchanged(before, a)


@pytest.mark.parametrize("sa, sb", [((2, 3), (2, 3)), ((2, 3), (4, 2)), ((3,), (3, 2))])
def test_mm_shape_mismatch(torch, sa, sb):
    a, b = with_grad(*sa), with_grad(*sb)
    before = snapshot(a, b)
    with pytest.raises(RuntimeError) as info:
        ember.mm(a, b)
    with pytest.raises(RuntimeError) as tinfo:
        torch.mm(torch.ones(*sa), torch.ones(*sb))
    msg = str(info.value)
    assert str(tinfo.value) in msg
    if len(sa) == 2:
        assert "x".join(map(str, sa)) in msg and "x".join(map(str, sb)) in msg
    assert_unchanged(before, a, b)


def test_matmul_shape_mismatch(torch):
    a, b = with_grad(2, 3), with_grad(4, 5)
    before = snapshot(a, b)
    with pytest.raises(RuntimeError) as info:
        a @ b
    with pytest.raises(RuntimeError) as tinfo:
        torch.ones(2, 3) @ torch.ones(4, 5)
    assert str(tinfo.value) in str(info.value)
    assert_unchanged(before, a, b)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_broadcast_shape_mismatch(torch, op):
    a, b = with_grad(2, 3), with_grad(4)
    before = snapshot(a, b)
    with pytest.raises(RuntimeError) as info:
        getattr(ember, op)(a, b)
    with pytest.raises(RuntimeError) as tinfo:
        getattr(torch, op)(torch.ones(2, 3), torch.ones(4))
    assert str(info.value) == str(tinfo.value)
    assert_unchanged(before, a, b)


def test_failed_backward_leaves_grads_unchanged():
    """The error comes from a node after others already produced gradients."""
    a, b = with_grad(3), with_grad(3)
    y = (a * 2).sum() + _bad_shape(ember).apply(a, b).sum()
    before = snapshot(a, b)
    with pytest.raises(RuntimeError, match="invalid gradient"):
        y.backward()
    assert_unchanged(before, a, b)


def test_backward_of_integer_result():
    with pytest.raises(RuntimeError, match="does not require grad"):
        ember.tensor([1, 2]).sum().backward()
