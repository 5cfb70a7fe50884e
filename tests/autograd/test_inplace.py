"""In-place ops against torch: version counters, grad_fn rebasing, the leaf error, views."""
import numpy as np
import pytest

import ember
from oracle import compare

__all__ = []

A = np.array([[0.5, -1.5, 2.0], [-0.25, 1.0, 3.0]], dtype=np.float32)

BUMPS = {
    "add_": lambda L, t: t.add_(1),
    "add_alpha": lambda L, t: t.add_(t.detach(), alpha=2),
    "iadd": lambda L, t: t.__iadd__(1),
    "sub_": lambda L, t: t.sub_(1),
    "isub": lambda L, t: t.__isub__(2.0),
    "mul_": lambda L, t: t.mul_(2),
    "imul": lambda L, t: t.__imul__(2),
    "div_": lambda L, t: t.div_(2),
    "zero_": lambda L, t: t.zero_(),
    "fill_": lambda L, t: t.fill_(3.0),
    "copy_": lambda L, t: t.copy_(L.ones(3)),
    "clamp_": lambda L, t: t.clamp_(-1, 1),
    "clamp_min": lambda L, t: t.clamp_(min=0),
    "uniform_": lambda L, t: t.uniform_(),
    "normal_": lambda L, t: t.normal_(),
    "setitem_mask": lambda L, t: t.__setitem__(t < 0, 0),
    "setitem_slice": lambda L, t: t.__setitem__((slice(None), 0), 5.0),
    "setitem_int": lambda L, t: t.__setitem__(0, 1.0),
}


@pytest.mark.parametrize("op", list(BUMPS.values()), ids=list(BUMPS))
def test_inplace_bumps_version_like_torch(torch, op):
    versions = []
    for lib in (ember, torch):
        t = lib.tensor(A)
        v0 = t._version
        r = op(lib, t)
        if r is not None:
            assert r is t
        versions.append((v0, t._version))
    assert versions[0] == versions[1]
    assert versions[0][1] > versions[0][0]


DETERMINISTIC = {k: v for k, v in BUMPS.items() if k not in ("uniform_", "normal_")}


@pytest.mark.parametrize("op", list(DETERMINISTIC.values()), ids=list(DETERMINISTIC))
def test_inplace_values_like_torch(torch, op):
    res = []
    for lib in (ember, torch):
        t = lib.tensor(A)
        op(lib, t)
        res.append(t.numpy().copy())
    np.testing.assert_allclose(res[0], res[1])


GRAD_OPS = {k: v for k, v in DETERMINISTIC.items()}


@pytest.mark.parametrize("op", list(GRAD_OPS.values()), ids=list(GRAD_OPS))
def test_inplace_on_non_leaf_rebases_grad_fn(torch, op):
    def fn(L, x):
        h = x * 2
        op(L, h)
        return h * x
    compare(torch, fn, A)
    compare(torch, fn, A.astype(np.float64))


@pytest.mark.parametrize("op", list(GRAD_OPS.values()), ids=list(GRAD_OPS))
def test_inplace_grad_fn_name_like_torch(torch, op):
    names = []
    for lib in (ember, torch):
        h = lib.tensor(A, requires_grad=True) * 2
        op(lib, h)
        names.append(type(h.grad_fn).__name__)
        assert not h.is_leaf and h.requires_grad
    assert names[0] == names[1]


def test_relu_inplace_on_non_leaf(torch):
    compare(torch, lambda L, x: (x * 3).relu_() * x, A)


def test_inplace_with_tensor_argument_requiring_grad(torch):
    def fn(L, x, y):
        h = x * 1
        h.mul_(y)
        h.add_(y)
        return h
    compare(torch, fn, A, A[::-1].copy())


def test_inplace_on_non_requiring_tensor_with_grad_argument(torch):
    def fn(L, x):
        buf = L.zeros(2, 3)
        buf.add_(x * 2)
        return buf
    compare(torch, fn, A)
    for lib in (ember, torch):
        buf = lib.zeros(2)
        buf.add_(lib.ones(2, requires_grad=True))
        assert buf.requires_grad and not buf.is_leaf


@pytest.mark.parametrize("op", list(BUMPS.values()), ids=list(BUMPS))
def test_inplace_on_leaf_requiring_grad_raises(torch, op):
    for lib in (ember, torch):
        x = lib.tensor(A, requires_grad=True)
        v = x._version
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                               "in an in-place operation."):
            op(lib, x)
        assert x._version == v
        np.testing.assert_array_equal(x.detach().numpy(), A)
        assert x.grad is None


def test_inplace_on_leaf_under_no_grad_is_allowed(torch):
    res = []
    for lib in (ember, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        (w * w).sum().backward()
        with lib.no_grad():
            w -= 0.5 * w.grad
        assert w.is_leaf and w.requires_grad
        res.append((w.tolist(), w._version))
    assert res[0] == res[1]


def test_view_of_leaf_inplace_raises(torch):
    for lib in (ember, torch):
        x = lib.tensor(A, requires_grad=True)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is "
                                               "being used in an in-place operation."):
            x[0].mul_(2)


def test_inplace_on_view_of_non_leaf(torch):
    def fn(L, x):
        h = x * 2
        v = h[0]
        v.mul_(3)
        return h * 1
    compare(torch, fn, A)


def test_inplace_on_view_bumps_base_version(torch):
    res = []
    for lib in (ember, torch):
        h = lib.tensor(A) * 1
        v = h[:, 1]
        v.add_(1)
        res.append((h._version, v._version, h.tolist()))
    assert res[0] == res[1]


def test_setitem_with_mask_in_custom_backward_pattern(torch):
    def fn(L, x):
        g = (x * 1).clone()
        g[x < 0] = 0
        return g
    compare(torch, fn, A)


def test_setitem_tensor_value_gets_gradient(torch):
    def fn(L, x, y):
        h = x * 1
        h[0] = y[1]
        return h
    compare(torch, fn, A, A[::-1].copy())


def test_saved_tensor_then_inplace_error_text(torch):
    msgs = []
    for lib in (ember, torch):
        x = lib.tensor(A, requires_grad=True)
        h = x.exp()          # saves its output
        h.add_(1)
        with pytest.raises(RuntimeError) as info:
            h.sum().backward()
        msgs.append(str(info.value))
        assert x.grad is None
    for m in msgs:
        assert "one of the variables needed for gradient computation has been modified by an " \
               "inplace operation" in m
        assert "is at version 1; expected version 0 instead" in m


def test_inplace_after_use_that_saved_nothing_is_fine(torch):
    def fn(L, x):
        h = x * 2
        y = h + 1             # AddBackward0 saves nothing
        h.mul_(3)
        return y + h
    compare(torch, fn, A)


def test_detach_then_inplace_shares_version(torch):
    for lib in (ember, torch):
        x = lib.tensor(A, requires_grad=True)
        h = x.exp()
        h.detach().zero_()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            h.sum().backward()


def test_fill_with_tensor_value(torch):
    compare(torch, lambda L, x, v: (x * 2).fill_(v[0, 0]) * x, A, A.copy())
    names = []
    for lib in (ember, torch):
        h = lib.tensor(A, requires_grad=True) * 2
        h.fill_(lib.tensor(3.0, requires_grad=True))
        names.append(walk_names(h.grad_fn))
    assert names[0] == names[1]


def walk_names(fn):
    return [type(fn).__name__] + [type(f).__name__ for f, _ in fn.next_functions]


def test_inplace_dtype_error(torch):
    for lib in (ember, torch):
        t = lib.tensor([1, 2])
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                               "output type Long"):
            t.add_(1.5)
        assert t.tolist() == [1, 2] and t._version == 0


def test_inplace_broadcast_shape_error(torch):
    for lib in (ember, torch):
        t = lib.zeros(3)
        with pytest.raises(RuntimeError, match="output with shape \\[3\\] doesn't match the "
                                               "broadcast shape \\[2, 3\\]"):
            t.add_(lib.ones(2, 3))
        assert t.tolist() == [0.0, 0.0, 0.0] and t._version == 0
