"""Tensor methods and properties torch has for dense tensors (legacy ``new``, ``resize_``,
``set_``, storages, device flags, removed functions), against torch."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _both(fn):
    return fn(ember), fn(torch)


def _eq(a, b):
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype) == str(b.dtype)


@pytest.mark.parametrize("args", [(), (2, 3), ([1, 2],), ((2,),), "size"])
def test_new(args):
    def make(L):
        x = L.tensor([1.5, 2.0, -3.0])
        a = (L.Size([2, 2]),) if args == "size" else args
        return x.new(*a)
    e, t = _both(make)
    _eq(e, t)
    if args == ([1, 2],):
        np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_flags_and_output_nr():
    for L in (ember, torch):
        x = L.ones(2, requires_grad=True)
        a, b = (x * 1).unbind(0)
        assert (x.output_nr, a.output_nr, b.output_nr) == (0, 0, 1)
        assert x.is_cpu and not x.is_nested and not x.is_mps and not x.is_xpu
        assert x.to_dense() is x
        assert x.const_data_ptr() == x.data_ptr()
        assert x.grad_dtype == x.dtype
    with pytest.warns(UserWarning, match="volatile was removed"):
        assert ember.ones(1).volatile is False


@pytest.mark.parametrize("start,new", [((2, 3), (4, 2)), ((6,), (2, 2)), ((4,), (3, 3)),
                                       ((2, 2), (2, 2))])
def test_resize_(start, new):
    def make(L):
        x = L.arange(float(np.prod(start))).reshape(start).contiguous()
        return x.resize_(*new)
    e, t = _both(make)
    _eq(e, t)
    k = min(int(np.prod(start)), int(np.prod(new)))
    np.testing.assert_array_equal(e.flatten()[:k].numpy(), t.flatten()[:k].numpy())


def test_resize_refused_with_grad():
    with pytest.raises(RuntimeError) as te:
        torch.zeros(2, requires_grad=True).resize_(3)
    with pytest.raises(RuntimeError) as ee:
        ember.zeros(2, requires_grad=True).resize_(3)
    assert str(ee.value) == str(te.value)


def test_resize_as_and_set_():
    for L in (ember, torch):
        a = L.zeros(3)
        a.resize_as_(L.ones(2, 2))
        assert tuple(a.shape) == (2, 2)
        b = L.arange(5.0)
        a.set_(b)
        assert a.data_ptr() == b.data_ptr() and a.tolist() == b.tolist()
        b[0] = 7.0
        assert a[0].item() == 7.0
        a.set_()
        assert tuple(a.shape) == (0,)


def test_storage():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e, t = _both(lambda L: L.arange(4.0).storage())
    assert (e.size(), len(e), e.nbytes(), e.tolist(), str(e.dtype)) == \
        (t.size(), len(t), t.nbytes(), t.tolist(), str(t.dtype))
    e, t = _both(lambda L: L.arange(4.0).untyped_storage())
    assert (e.nbytes(), len(e)) == (t.nbytes(), len(t))


@pytest.mark.parametrize("name", ["eig", "lstsq", "solve", "symeig"])
def test_removed_methods(name):
    with pytest.raises(RuntimeError) as te:
        getattr(torch.eye(2), name)(torch.eye(2))
    with pytest.raises(RuntimeError) as ee:
        getattr(ember.eye(2), name)(ember.eye(2))
    assert str(ee.value) == str(te.value)


def test_as_subclass_and_module_load():
    class Sub(ember.Tensor):
        pass
    x = ember.ones(2, requires_grad=True)
    s = x.as_subclass(Sub)
    assert type(s) is Sub and s.requires_grad
    s.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])
    o = ember.zeros(2)
    r = ember.ones(2).module_load(o, assign=True)      # (torch: o.detach(), a new object)
    assert r is not o and r.tolist() == [0.0, 0.0]
