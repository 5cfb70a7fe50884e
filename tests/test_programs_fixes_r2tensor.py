"""Regressions found by the round-2 tensor programs (tests/programs/p_r2tensor_*): each checked
against PyTorch."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _both(fn):
    """(ember result, torch result) of ``fn(lib)``."""
    return fn(ember), fn(torch)


def _same(a, b):
    if isinstance(a, (tuple, list)):
        assert type(a).__name__ == type(b).__name__ and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    if hasattr(b, "detach"):
        assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6,
                                   equal_nan=True)
    else:
        assert a == b


def _error(fn):
    """(class name, message) of the error ``fn()`` raises."""
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value).__name__, str(info.value)


def _err_both(fn):
    assert _error(lambda: fn(ember)) == _error(lambda: fn(torch))


@pytest.mark.parametrize("call", [
    lambda lib, t: t.sum(axis=0),
    lambda lib, t: lib.sum(t, axis=(0, 1), keepdims=True),
    lambda lib, t: t.mean(axis=1, keepdims=True),
    lambda lib, t: t.argmax(axis=1),
    lambda lib, t: t.std(axis=0),
    lambda lib, t: lib.cumsum(t, axis=1),
    lambda lib, t: t.max(axis=1, keepdims=True),
    lambda lib, t: lib.cat([t, t], axis=1),
    lambda lib, t: lib.stack([t, t], axis=0),
    lambda lib, t: t.sort(axis=0),
    lambda lib, t: t.squeeze(axis=0),
    lambda lib, t: lib.amax(t, axis=0, keepdims=True),
])
def test_numpy_keyword_names(call):
    """torch takes NumPy's ``axis=``/``keepdims=`` for ``dim=``/``keepdim=``."""
    x = np.arange(12.0).reshape(3, 4)
    _same(*_both(lambda lib: call(lib, lib.tensor(x))))


def test_numpy_keyword_names_both_given():
    _err_both(lambda lib: lib.ones(2, 3).sum(axis=0, dim=1))


def test_scatter_reduce_max_min_aliases():
    """'max'/'min' work forward in torch; their backward refuses them."""
    idx = [0, 0, 2]
    for r in ("max", "min"):
        _same(*_both(lambda lib: lib.zeros(3).scatter_reduce(
            0, lib.tensor(idx), lib.tensor([3.0, -4.0, 5.0]), r)))
        _same(*_both(lambda lib: lib.zeros(3).scatter_reduce(
            0, lib.tensor(idx), lib.tensor([3.0, -4.0, 5.0]), r, include_self=False)))

        def grad(lib):
            x = lib.zeros(3, requires_grad=True)
            y = x.scatter_reduce(0, lib.tensor(idx), lib.tensor([3.0, -4.0, 5.0]), r)
            y.sum().backward()
        _err_both(grad)
    _err_both(lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([0]), lib.ones(1), "foo"))
    _err_both(lambda lib: lib.zeros(3).index_reduce(0, lib.tensor([0]), lib.ones(1), "max"))


_INDEX_CASES = [
    "x[:, [0, 2]]", "x[:, :, [0, 1]]", "x[[0, 1], :, [1, 2]]", "x[:, [[0], [1]], [1, 2]]",
    "x[0, :, [0, 1]]", "x[m2]", "x[:, m1]", "x[[1, 0], m1]", "x.transpose(0, 2)[:, [0, 1]]",
    "x.transpose(0, 2)[[0, 1]]", "x.permute(2, 0, 1)[:, :, [0, 2]]", "x.mT[[1, 0]]",
    "x.mT[:, [1, 0]]", "x.mT[..., [1, 0]]", "x[:, [0, 2]][..., 1:]", "x.expand(2, 2, 3, 4)[:, [0]]",
    "x[:, [1]]", "x.mT[:, [1]]", "x[..., [1, 0], :]", "x[:, ..., [1, 2]]",
    "x[:, :, lib.tensor([[0, 1], [2, 3]]).T]", "x[lib.tensor([1, 0]).expand(3, 2).T]",
    "x[lib.tensor([[0], [1]]), :, lib.tensor([1, 2, 3])]", "x[:1][:, [1, 2]]",
]


@pytest.mark.parametrize("expr", _INDEX_CASES)
def test_advanced_index_result_layout(expr):
    """An advanced index's result has torch's strides (so ``.view`` works where torch's does)."""
    def run(lib):
        x = lib.arange(24.0).reshape(2, 3, 4)
        m1 = lib.tensor([True, False, True])
        m2 = lib.tensor([[True, False, True], [False, True, True]])
        r = eval(expr, {"x": x, "m1": m1, "m2": m2, "lib": lib})
        return tuple(r.shape), r.stride(), r.is_contiguous(), r.sum().item()
    assert run(ember) == run(torch)


def test_advanced_index_then_view():
    for lib in (ember, torch):
        x = lib.arange(24.0).reshape(2, 3, 4)
        assert x[:, [0, 2]].view(-1).shape == (16,)


_CLONE_CASES = [
    "x.mT.clone()", "x.permute(0, 2, 3, 1).clone()", "x[:, :, ::2].clone()",
    "x.transpose(0, 1)[:, :, ::2].clone()", "x.clone(memory_format=lib.channels_last)",
    "x.contiguous(memory_format=lib.channels_last)", "x.to(memory_format=lib.channels_last)",
    "x.mT.to(lib.float32, copy=True)", "x.mT.clone(memory_format=lib.contiguous_format)",
    "x.permute(0, 2, 3, 1).contiguous(memory_format=lib.channels_last)", "x[:, :1].mT.clone()",
    "x.permute(3, 1, 2, 0).clone().permute(3, 1, 2, 0).clone()",
    "x.contiguous(memory_format=lib.channels_last).clone()",
    "lib.ones(2, 3, 4, 5, 6).clone(memory_format=lib.channels_last_3d)",
]


@pytest.mark.parametrize("expr", _CLONE_CASES)
def test_clone_keeps_layout(expr):
    """``clone`` keeps the input's layout (preserve_format); memory formats are honoured."""
    def run(lib):
        x = lib.arange(120.0).reshape(2, 3, 4, 5)
        r = eval(expr, {"x": x, "lib": lib})
        return r.stride(), r.is_contiguous(), r.sum().item()
    assert run(ember) == run(torch)


def test_memory_format_rank_errors():
    _err_both(lambda lib: lib.ones(2, 3).clone(memory_format=lib.channels_last))
    _err_both(lambda lib: lib.ones(2, 3).contiguous(memory_format=lib.channels_last))
    _err_both(lambda lib: lib.ones(2, 3).to(memory_format=lib.channels_last))


def test_clone_in_order_grad():
    def run(lib):
        a = lib.tensor(np.arange(24.0).reshape(2, 3, 4), requires_grad=True)
        b = a.mT.clone()
        (b * lib.arange(24.0).view(2, 4, 3)).sum().backward()
        return type(b.grad_fn).__name__, a.grad
    (ne, ge), (nt, gt) = run(ember), run(torch)
    assert ne == nt
    _same(ge, gt)


@pytest.mark.parametrize("expr", [
    "lib.zeros(2, 3).view(lib.int64)", "lib.zeros(()).view(lib.int64)",
    "lib.zeros(4, 4).t().view(lib.int64)", "lib.zeros(5)[1:].view(lib.int64)",
    "lib.zeros(3, 5)[:, :2].view(lib.int64)", "lib.zeros(()).view(lib.int16)",
    "lib.zeros(2, 3).t().view(lib.int16)",
])
def test_view_dtype_errors(expr):
    _err_both(lambda lib: eval(expr, {"lib": lib}))


@pytest.mark.parametrize("expr", [
    "lib.zeros(3, 4)[:, :2].view(lib.int64)", "lib.zeros(3, 4)[:, 1:3].view(lib.int16)",
    "lib.zeros(2, 3).t().view(lib.int32)", "lib.zeros(2, 3).view(lib.float16)",
])
def test_view_dtype_layouts(expr):
    def run(lib):
        r = eval(expr, {"lib": lib})
        return tuple(r.shape), r.stride(), str(r.dtype).split(".")[-1]
    assert run(ember) == run(torch)


@pytest.mark.parametrize("shapes", [
    ((5, 2, 4, 1), (3, 1, 1)), ((2, 3), (3, 2)), ((0,), (2,)), ((2,), (3,), (4,)),
    ((1, 2), [3, 2], (4,)), (3, (2,)), ((2, -1), (2,)),
])
def test_broadcast_shapes_errors(shapes):
    _err_both(lambda lib: lib.broadcast_shapes(*shapes))


@pytest.mark.parametrize("shapes", [
    (), (None, (2, 1), (3,)), ((1,), (3, 1, 7)), (3, (1, 1)), ([2, 1], (0,)),
])
def test_broadcast_shapes(shapes):
    e, t = _both(lambda lib: lib.broadcast_shapes(*shapes))
    assert tuple(e) == tuple(t) and type(e).__name__ == "Size"


def test_method_varargs_helpers():
    """``t.squeeze(0, 1)`` and ``t.broadcast_to(2, 3)`` take separate ints in torch (the
    method helpers for ember/ops/__init__.py's _PLAIN)."""
    from ember.ops import shape as sh
    x = ember.zeros(1, 1, 3, requires_grad=True)
    tx = torch.zeros(1, 1, 3, requires_grad=True)
    for args in [(0, 1), (), (0,), ((0, 1),)]:
        e, t = sh._squeeze_method(x, *args), tx.squeeze(*args)
        assert tuple(e.shape) == tuple(t.shape)
        assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__
    assert tuple(sh._squeeze__method(ember.zeros(1, 1, 3), 0, 1).shape) == (3,)
    for args in [(2, 1, 1, 3), ((2, 1, 1, 3),)]:
        assert tuple(sh._broadcast_to_method(x, *args).shape) == tuple(tx.broadcast_to(*args).shape)
    assert tuple(sh._broadcast_to_method(x, size=(2, 1, 1, 3)).shape) == (2, 1, 1, 3)
