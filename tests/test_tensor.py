"""The Tensor itself against torch: attributes, conversions, constructors, dtypes, repr."""
import pickle
import copy

import numpy as np
import pytest

import ember

__all__ = []


def same(a, t):
    """An ember tensor ``a`` equals the torch tensor ``t``: shape, dtype name and values."""
    assert tuple(a.shape) == tuple(t.shape)
    assert str(a.dtype) == str(t.dtype)
    np.testing.assert_array_equal(a.detach().numpy(), t.detach().numpy())


DATA = [
    3.5,
    7,
    True,
    [1.0, 2.0, 3.0],
    [[1, 2, 3], [4, 5, 6]],
    [[True, False]],
    [[1.5, -2.0], [0.0, 4.25]],
    [],
    [[[1.0]], [[2.0]]],
]


@pytest.mark.parametrize("data", DATA, ids=[str(i) for i in range(len(DATA))])
def test_tensor_constructor_infers_dtype_and_shape(torch, data):
    same(ember.tensor(data), torch.tensor(data))


@pytest.mark.parametrize("dt", ["float16", "float32", "float64", "int32", "int64", "bool"])
def test_tensor_constructor_dtype_argument(torch, dt):
    data = [[0, 1, 2], [3, 0, 5]]
    same(ember.tensor(data, dtype=getattr(ember, dt)), torch.tensor(data, dtype=getattr(torch, dt)))


def test_attributes_match_torch(torch):
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for lib in (ember, torch):
        t = lib.tensor(data)
        got = (tuple(t.shape), tuple(t.size()), t.size(1), t.size(-1), t.dim(), t.ndim,
               t.numel(), str(t.dtype), t.is_floating_point(), t.is_leaf, t.requires_grad,
               t.grad_fn, t.grad)
        if lib is ember:
            e = got
        else:
            assert e == got


def test_size_is_a_tuple_printing_like_torch_size(torch):
    s = ember.zeros(2, 3).size()
    assert s == (2, 3)
    assert isinstance(s, tuple)
    assert repr(s) == repr(torch.zeros(2, 3).size()) == "torch.Size([2, 3])"
    assert s.numel() == 6


def test_size_dim_out_of_range(torch):
    with pytest.raises(IndexError, match="Dimension out of range"):
        ember.zeros(2, 3).size(2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.zeros(2, 3).size(2)


@pytest.mark.parametrize("shape", [(), (1,), (4,), (2, 3)])
def test_T_matches_torch(torch, shape):
    data = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    same(ember.tensor(data).T, torch.tensor(data).T)


def test_T_has_permute_grad_fn(torch):
    e = ember.ones(2, 3, requires_grad=True).T
    t = torch.ones(2, 3, requires_grad=True).T
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__


def test_item(torch):
    for data in (2.5, [7], [[True]], 3):
        e, t = ember.tensor(data).item(), torch.tensor(data).item()
        assert e == t and type(e) is type(t)


def test_item_of_many_elements_raises(torch):
    with pytest.raises(RuntimeError, match="a Tensor with 3 elements cannot be converted to "
                                           "Scalar"):
        ember.tensor([1.0, 2.0, 3.0]).item()
    with pytest.raises(RuntimeError, match="a Tensor with 3 elements cannot be converted to "
                                           "Scalar"):
        torch.tensor([1.0, 2.0, 3.0]).item()


@pytest.mark.parametrize("data", [[[1.5, 2.0], [3.0, 4.0]], [1, 2, 3], 5, [[True, False]], 2.5])
def test_tolist(torch, data):
    e, t = ember.tensor(data).tolist(), torch.tensor(data).tolist()
    assert e == t
    assert type(e) is type(t)
    flat_e = e if not isinstance(e, list) else np.ravel(e).tolist()
    flat_t = t if not isinstance(t, list) else np.ravel(t).tolist()
    assert [type(v) for v in np.atleast_1d(flat_e)] == [type(v) for v in np.atleast_1d(flat_t)]


def test_numpy_shares_memory(torch):
    e = ember.zeros(3)
    arr = e.numpy()
    arr[1] = 5.0
    assert e.tolist() == [0.0, 5.0, 0.0]
    t = torch.zeros(3)
    t.numpy()[1] = 5.0
    assert t.tolist() == e.tolist()


def test_numpy_of_tensor_requiring_grad_raises(torch):
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        ember.ones(2, requires_grad=True).numpy()
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        torch.ones(2, requires_grad=True).numpy()


def test_from_numpy_shares_memory_both_ways(torch):
    for lib in (ember, torch):
        a = np.arange(4, dtype=np.float64)
        t = lib.from_numpy(a)
        assert str(t.dtype).endswith("float64")
        a[0] = 10.0
        assert t[0].item() == 10.0
        t.add_(1)
        assert a.tolist() == [11.0, 2.0, 3.0, 4.0]


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64, np.int64, np.int32, np.bool_,
                                      np.float16])
def test_from_numpy_keeps_dtype(torch, np_dtype):
    a = np.ones((2, 2), dtype=np_dtype)
    same(ember.from_numpy(a), torch.from_numpy(a))


CONVERSIONS = ["float", "double", "long", "int", "bool", "half"]


@pytest.mark.parametrize("method", CONVERSIONS)
@pytest.mark.parametrize("data", [[1.7, -2.2, 0.0], [3, 0, -1], [True, False, True]])
def test_conversion_methods(torch, method, data):
    same(getattr(ember.tensor(data), method)(), getattr(torch.tensor(data), method)())


@pytest.mark.parametrize("dt", ["float16", "float32", "float64", "int32", "int64", "bool"])
def test_to_dtype(torch, dt):
    data = [1.7, -2.2, 0.0, 3.0]
    same(ember.tensor(data).to(getattr(ember, dt)), torch.tensor(data).to(getattr(torch, dt)))


def test_to_same_dtype_returns_self(torch):
    e = ember.ones(2)
    t = torch.ones(2)
    assert (e.to(ember.float32) is e) == (t.to(torch.float32) is t)


def test_conversion_keeps_graph(torch):
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.double()
        (y * y).sum().backward()
        assert y.requires_grad and not y.is_leaf
        assert str(x.grad.dtype).endswith("float32")
        assert x.grad.tolist() == [2.0, 4.0]
        assert type(y.grad_fn).__name__ == "ToCopyBackward0"


def test_clone_copies_and_keeps_graph(torch):
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        c = x.clone()
        assert type(c.grad_fn).__name__ == "CloneBackward0"
        with lib.no_grad():
            c.add_(1)
        assert x.tolist() == [1.0, 2.0]
        (c * 3).sum().backward()
        assert x.grad.tolist() == [3.0, 3.0]


def test_detach_shares_memory_and_version(torch):
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        d = y.detach()
        assert not d.requires_grad and d.is_leaf and d.grad_fn is None
        v = y._version
        d.zero_()
        assert y.tolist() == [0.0, 0.0]
        assert y._version == v + 1 == d._version


def test_data_is_detached_and_shares_memory(torch):
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        d = x.data
        assert not d.requires_grad and d.is_leaf
        d.mul_(2)
        assert x.tolist() == [2.0, 4.0]
        assert x._version == 0


def test_data_assignment(torch):
    for lib in (ember, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        w.data = lib.tensor([5.0, 6.0])
        assert w.requires_grad and w.tolist() == [5.0, 6.0]
        (w * w).sum().backward()
        assert w.grad.tolist() == [10.0, 12.0]


def test_requires_grad_(torch):
    for lib in (ember, torch):
        x = lib.zeros(2)
        assert x.requires_grad_() is x
        assert x.requires_grad
        x.requires_grad_(False)
        assert not x.requires_grad


def test_requires_grad_on_integer_tensor_raises(torch):
    msg = "(?i)only Tensors of floating point"
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match=msg):
            lib.tensor([1, 2]).requires_grad_()
        with pytest.raises(RuntimeError, match=msg):
            lib.tensor([1, 2], requires_grad=True)
        with pytest.raises(RuntimeError, match=msg):
            lib.tensor([True]).requires_grad = True


def test_requires_grad_false_on_non_leaf_raises(torch):
    for lib in (ember, torch):
        y = lib.ones(2, requires_grad=True) * 2
        with pytest.raises(RuntimeError, match="you can only change requires_grad flags of "
                                               "leaf variables"):
            y.requires_grad_(False)


def test_legacy_constructors(torch):
    for args in [(2, 3), (0,), (4,)]:
        e, t = ember.Tensor(*args), torch.Tensor(*args)
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)
    same(ember.Tensor([1, 2, 3]), torch.Tensor([1, 2, 3]))
    same(ember.Tensor([[1.5, 2]]), torch.Tensor([[1.5, 2]]))
    same(ember.FloatTensor([1, 2]), torch.FloatTensor([1, 2]))
    same(ember.DoubleTensor([1, 2]), torch.DoubleTensor([1, 2]))
    same(ember.LongTensor([1, 2]), torch.LongTensor([1, 2]))
    same(ember.LongTensor([1.7, -2.2]), torch.LongTensor([1.7, -2.2]))
    assert tuple(ember.FloatTensor(2, 3).shape) == (2, 3)
    assert tuple(ember.Tensor().shape) == tuple(torch.Tensor().shape) == (0,)


def test_legacy_types_isinstance(torch):
    assert isinstance(ember.zeros(2), ember.FloatTensor)
    assert not isinstance(ember.zeros(2), ember.LongTensor)
    assert isinstance(ember.zeros(2, dtype=ember.int64), ember.LongTensor)
    assert isinstance(ember.zeros(2), ember.Tensor)
    assert isinstance(torch.zeros(2), torch.FloatTensor)
    assert not isinstance(torch.zeros(2), torch.LongTensor)


def test_type_string(torch):
    for data in ([1.0], [1], [True]):
        assert ember.tensor(data).type() == torch.tensor(data).type()
    same(ember.tensor([1.5]).type(ember.int64), torch.tensor([1.5]).type(torch.int64))


def test_default_dtype(torch):
    assert ember.get_default_dtype() is ember.float32
    assert str(ember.get_default_dtype()) == str(torch.get_default_dtype())
    try:
        ember.set_default_dtype(ember.float64)
        assert ember.tensor([1.0]).dtype is ember.float64
        assert ember.zeros(2).dtype is ember.float64
        assert ember.tensor([1]).dtype is ember.int64
    finally:
        ember.set_default_dtype(ember.float32)
    assert ember.tensor([1.0]).dtype is ember.float32


def test_dtype_objects(torch):
    for name in ["float16", "float32", "float64", "int32", "int64", "bool", "double", "long",
                 "half", "int", "float"]:
        e, t = getattr(ember, name), getattr(torch, name)
        assert repr(e) == repr(t)
        assert e.is_floating_point == t.is_floating_point
        assert e.itemsize == t.itemsize
    assert ember.float is ember.float32 and ember.double is ember.float64


PROMO = ["float16", "float32", "float64", "int32", "int64", "bool"]


@pytest.mark.parametrize("a", PROMO)
@pytest.mark.parametrize("b", PROMO)
def test_promotion_tensor_tensor(torch, a, b):
    assert str(ember.promote_types(getattr(ember, a), getattr(ember, b))) == \
        str(torch.promote_types(getattr(torch, a), getattr(torch, b)))
    xa = [1, 0, 1]
    for op in ("__add__", "__mul__", "__truediv__"):
        ea = ember.tensor(xa, dtype=getattr(ember, a))
        eb = ember.tensor(xa, dtype=getattr(ember, b))
        ta = torch.tensor(xa, dtype=getattr(torch, a))
        tb = torch.tensor(xa, dtype=getattr(torch, b))
        if a == b == "bool" and op != "__truediv__":
            continue
        e, t = getattr(ea, op)(eb), getattr(ta, op)(tb)
        assert str(e.dtype) == str(t.dtype), op


@pytest.mark.parametrize("a", PROMO)
@pytest.mark.parametrize("scalar", [2, 2.5, True])
def test_promotion_tensor_python_scalar(torch, a, scalar):
    for op in ("__add__", "__radd__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
               "__sub__", "__rsub__"):
        if a == "bool" and op in ("__sub__", "__rsub__"):
            continue
        if isinstance(scalar, bool) and op in ("__sub__", "__rsub__"):
            continue
        e = getattr(ember.tensor([1, 1], dtype=getattr(ember, a)), op)(scalar)
        t = getattr(torch.tensor([1, 1], dtype=getattr(torch, a)), op)(scalar)
        same(e, t)


def test_zero_dim_tensor_promotes_only_across_categories(torch):
    for lib in (ember, torch):
        r = lib.ones(2, dtype=lib.float32) + lib.tensor(1.0, dtype=lib.float64)
        assert str(r.dtype).endswith("float32")
        r = lib.ones(2, dtype=lib.int32) + lib.tensor(1, dtype=lib.int64)
        assert str(r.dtype).endswith("int32")
        r = lib.ones(2, dtype=lib.int32) + lib.tensor(1.5, dtype=lib.float64)
        assert str(r.dtype).endswith("float64")     # a higher category: the 0-d's dtype
        r = lib.ones(2, dtype=lib.float16) + lib.tensor(1.5, dtype=lib.float64)
        assert str(r.dtype).endswith("float16")


REPRS = [
    lambda L: L.tensor([0.0, 1.0, 1.0], requires_grad=True),
    lambda L: L.tensor([1.0, 2.0], requires_grad=True) * 2,
    lambda L: L.tensor([1.0, 2.0], requires_grad=True) + 2,
    lambda L: L.tensor([1.0, 2.0], requires_grad=True).sum(),
    lambda L: L.tensor([1.0, 2.0], requires_grad=True).mean(),
    lambda L: L.tensor(3.5),
    lambda L: L.tensor([[1.5, -2.0], [0.0, 4.25]]),
    lambda L: L.tensor([1, 2, 3]),
    lambda L: L.tensor([True, False]),
    lambda L: L.tensor([1.0, 2.0], dtype=L.float64),
    lambda L: L.tensor([1, 2], dtype=L.int32),
    lambda L: L.zeros(0),
    lambda L: L.zeros(2, 0),
    lambda L: L.tensor([1e-8, 1.0]),
    lambda L: L.tensor([123456.0, 1.0]),
    lambda L: L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True) ** 2,
    lambda L: L.tensor([[1.0, 2.0]], requires_grad=True).mm(L.ones(2, 1)),
    lambda L: L.arange(6).reshape(2, 3),
    lambda L: L.tensor([float("nan"), float("inf"), -float("inf"), 1.0]),
]


@pytest.mark.parametrize("k", range(len(REPRS)))
def test_repr_matches_torch(torch, k):
    assert repr(REPRS[k](ember)) == repr(REPRS[k](torch))


def test_grad_fn_repr(torch):
    e = ember.tensor([1.0], requires_grad=True) * 2
    t = torch.tensor([1.0], requires_grad=True) * 2
    assert repr(e.grad_fn).startswith("<MulBackward0 object at ")
    assert repr(t.grad_fn).startswith("<MulBackward0 object at ")
    assert e.grad_fn.name() == t.grad_fn.name() == "MulBackward0"


def test_len_iter_bool_float_int(torch):
    for lib in (ember, torch):
        t = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
        assert len(t) == 2
        assert [r.tolist() for r in t] == [[1.0, 2.0], [3.0, 4.0]]
        assert float(lib.tensor(2.5)) == 2.5 and int(lib.tensor(3.7)) == 3
        assert bool(lib.tensor([1.0])) and not bool(lib.tensor(0.0))
        with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one "
                                               "value is ambiguous"):
            bool(t)
        with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
            len(lib.tensor(1.0))


def test_format_of_zero_dim(torch):
    assert "{:.2f}".format(ember.tensor(3.14159)) == "{:.2f}".format(torch.tensor(3.14159))


def test_deepcopy_and_pickle_of_leaf():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    c = copy.deepcopy(x)
    assert c is not x and c.requires_grad and c.tolist() == x.tolist()
    c.data.add_(1)
    assert x.tolist() == [1.0, 2.0]
    p = pickle.loads(pickle.dumps(x))
    assert p.requires_grad and p.tolist() == [1.0, 2.0]


def test_deepcopy_of_non_leaf_raises(torch):
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user"):
            copy.deepcopy(lib.ones(2, requires_grad=True) * 2)


def test_element_size_and_stride(torch):
    data = np.zeros((2, 3, 4), dtype=np.float64)
    e, t = ember.tensor(data), torch.tensor(data)
    assert e.element_size() == t.element_size()
    assert e.stride() == t.stride()
    assert e.is_contiguous() and t.is_contiguous()
    assert ember.tensor(data).transpose(0, 2).stride() == \
        torch.tensor(data).transpose(0, 2).stride()


def test_unknown_attribute_raises_attribute_error():
    with pytest.raises(AttributeError, match="no_such_method"):
        ember.ones(1).no_such_method


# -- moving between devices (the strict test device stands in for a GPU) ---------------------

def test_to_strict_and_back_keeps_values_and_gradients_flow(torch):
    data = [[1.5, -2.0], [0.25, 4.0]]
    x = ember.tensor(data, requires_grad=True)
    y = x.to("strict")
    assert y.device == ember.device("strict") and y.dtype is ember.float32
    tx = torch.tensor(data, requires_grad=True)
    ty = tx.to(torch.float64)       # torch without a GPU: a dtype move has the same node
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__ == "ToCopyBackward0"
    z = (y * y).cpu()
    assert z.device.type == "cpu" and type(z.grad_fn).__name__ == "ToCopyBackward0"
    assert y.cpu().tolist() == data and y.to("cpu").tolist() == data
    (z * 3).sum().backward()
    (ty * ty * 3).sum().backward()
    assert x.grad.device.type == "cpu"
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


def test_leaf_on_strict_gets_gradient_from_cpu_computation(torch):
    w = ember.tensor([1.0, -3.0, 2.0], device="strict", requires_grad=True)
    loss = (w.cpu() * ember.tensor([2.0, 1.0, 0.5])).sum()
    loss.backward()
    assert w.grad.device.type == "strict"
    tw = torch.tensor([1.0, -3.0, 2.0], requires_grad=True)
    (tw * torch.tensor([2.0, 1.0, 0.5])).sum().backward()
    np.testing.assert_allclose(w.grad.cpu().numpy(), tw.grad.numpy())


def test_to_strict_with_dtype_and_copy(torch):
    x = ember.tensor([1.7, -2.2])
    y = x.to("strict", ember.float64)
    assert y.device.type == "strict" and y.dtype is ember.float64
    assert y.to("strict") is y and y.to(device="strict", copy=True) is not y
    assert x.to(y).device.type == "strict" and x.to(y).dtype is ember.float64
    assert y.cpu().tolist() == torch.tensor([1.7, -2.2]).to(torch.float64).tolist()
    h = ember.zeros(2)
    h.copy_(ember.tensor([3.0, 4.0], device="strict"))       # copy_ crosses devices, as torch
    assert h.device.type == "cpu" and h.tolist() == [3.0, 4.0]


def test_mixing_cpu_and_strict_raises_torchs_message(torch):
    a, s = ember.ones(2), ember.ones(2, device="strict")
    # torch's TensorIterator names the first non-CPU device first, whatever the order.
    message = ("Expected all tensors to be on the same device, but found at least two devices, "
               "strict and cpu!")
    for x, y in ((s, a), (a, s)):
        with pytest.raises(RuntimeError) as e:
            x + y
        assert str(e.value) == message


def test_numpy_of_strict_tensor_raises_torchs_message(torch):
    s = ember.ones(2, device="strict")
    with pytest.raises(TypeError) as te:
        torch.ones(2, device="meta").numpy()
    with pytest.raises(TypeError) as ee:
        s.numpy()
    assert str(ee.value) == str(te.value).replace("meta", "strict")
    assert s.cpu().numpy().tolist() == [1.0, 1.0]
    assert s.numpy(force=True).tolist() == [1.0, 1.0]
