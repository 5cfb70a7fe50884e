"""Ops torch documents as returning views return views in ember too: a write through the view
reaches the base, ``_base`` and the version counter are torch's, and autograd through the view
and an in-place write gives torch's gradients and node names."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def base(L, shape=(3, 4)):
    return L.arange(float(np.prod(shape))).reshape(shape).clone()


# name -> the view of a (3, 4) base ``x`` (torch and ember alike)
VIEWS = {
    "getitem_int": lambda L, x: x[1],
    "getitem_slice": lambda L, x: x[:, 1:3],
    "getitem_step": lambda L, x: x[::2, 1::2],
    "getitem_none": lambda L, x: x[None, 1, ...],
    "getitem_ints": lambda L, x: x[1, 2],
    "adjoint": lambda L, x: x.adjoint(),
    "as_strided": lambda L, x: x.as_strided((2, 2), (1, 2)),
    "as_strided_offset": lambda L, x: L.as_strided(x, (2, 2), (1, 4), 1),
    "as_strided_of_view": lambda L, x: x[1].as_strided((2,), (2,)),
    "diagonal": lambda L, x: x.diagonal(),
    "diagonal_offset": lambda L, x: L.diagonal(x, 1),
    "movedim": lambda L, x: x.movedim(0, 1),
    "moveaxis": lambda L, x: L.moveaxis(x, 0, 1),
    "narrow": lambda L, x: x.narrow(1, 1, 2),
    "permute": lambda L, x: x.permute(1, 0),
    "select": lambda L, x: x.select(0, 1),
    "select_1d": lambda L, x: x.reshape(-1).select(0, 1),
    "squeeze": lambda L, x: x[None].squeeze(),
    "squeeze_dim": lambda L, x: x[None].squeeze(0),
    "squeeze_dims": lambda L, x: x[None, :, None].squeeze((0, 2)),
    "transpose": lambda L, x: x.transpose(0, 1),
    "t": lambda L, x: x.t(),
    "T": lambda L, x: x.T,
    "H": lambda L, x: x.H,
    "mT": lambda L, x: x.mT,
    "mH": lambda L, x: x.mH,
    "unflatten": lambda L, x: x.unflatten(1, (2, 2)),
    "unfold": lambda L, x: x.unfold(1, 2, 2),
    "unfold_transposed": lambda L, x: x.t().unfold(0, 2, 2),
    "unsqueeze": lambda L, x: x.unsqueeze(1),
    "view": lambda L, x: x.view(2, 6),
    "view_as": lambda L, x: x.view_as(L.zeros(12)),
    "unbind": lambda L, x: x.unbind(1)[1],
    "unbind_1d": lambda L, x: x.reshape(-1).unbind(0)[1],
    "split": lambda L, x: x.split(2, 1)[1],
    "split_sizes": lambda L, x: x.split([1, 3], 1)[1],
    "split_with_sizes": lambda L, x: x.split_with_sizes([1, 3], 1)[1],
    "chunk": lambda L, x: x.chunk(2, 1)[1],
    "hsplit": lambda L, x: x.hsplit(2)[1],
    "vsplit": lambda L, x: L.vsplit(x[:2], 2)[1],
    "dsplit": lambda L, x: L.dsplit(x.reshape(1, 3, 4), 2)[1],
    "tensor_split": lambda L, x: x.tensor_split(2, 1)[1],
    "tensor_split_indices": lambda L, x: x.tensor_split([1, 3], 1)[1],
    "swapaxes": lambda L, x: x.swapaxes(0, 1),
    "swapdims": lambda L, x: x.swapdims(0, 1),
    "reshape": lambda L, x: x.reshape(6, 2),
    "flatten": lambda L, x: x.flatten(),
    "ravel": lambda L, x: x.ravel(),
    "atleast_3d": lambda L, x: L.atleast_3d(x),
    "expand": lambda L, x: x[:1].expand(1, 4),
    "expand_as": lambda L, x: x[:1].expand_as(x[:1]),
    "broadcast_to": lambda L, x: L.broadcast_to(x[:1], (1, 4)),
}
# views of multi-view ops: torch forbids an in-place write on them under autograd
MULTI = {"unbind": "Unbind", "unbind_1d": "Unbind", "split": "Split",
         "split_sizes": "SplitWithSizes", "split_with_sizes": "SplitWithSizes", "chunk": "Split"}


def _np(t):
    return np.asarray(t.detach().tolist())


def _state(L, x, v):
    strides = tuple(s if n != 1 else None for n, s in zip(v.shape, v.stride()))
    return (_np(x).tolist(), x._version, v._version, v._base is x,
            type(v.grad_fn).__name__, tuple(v.shape), strides)


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_write_through_view_reaches_base(name):
    f = VIEWS[name]
    for write in ("fill_", "add_", "copy_", "setitem"):
        got = []
        for L in (torch, ember):
            x = base(L)
            v = f(L, x)
            before = _state(L, x, v)
            if write == "fill_":
                v.fill_(-5.0)
            elif write == "add_":
                v.add_(100.0)
            elif write == "copy_":
                v.copy_(L.ones(v.shape) * 7)
            else:
                v[...] = -3.0
            got.append((before, _state(L, x, v)))
        assert got[0] == got[1], (name, write, got)


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_grad_through_view_and_inplace(name):
    f = VIEWS[name]
    got = []
    for L in (torch, ember):
        x = base(L).requires_grad_()
        y = x * 1
        v = f(L, y)
        view_name = type(v.grad_fn).__name__
        try:
            v.mul_(2)
        except RuntimeError as e:
            got.append(("RuntimeError", str(e)))
            continue
        names = (view_name, type(y.grad_fn).__name__, type(v.grad_fn).__name__, v._base is y,
                 [type(n).__name__ for n, _ in v.grad_fn.next_functions if n is not None])
        w = base(L) + 1
        (y * w).sum().backward(retain_graph=True)
        g1 = _np(x.grad).tolist()
        x.grad = None
        (v * 3).sum().backward()
        got.append((names, g1, _np(x.grad).tolist()))
    if name in MULTI:
        assert got[0][0] == "RuntimeError"
    assert got[0] == got[1], (name, got)


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_made_before_inplace_on_base(name):
    """A view taken before its base is modified in place is regenerated (torch's
    AsStridedBackward0 on the base's CopySlices/new node)."""
    f = VIEWS[name]
    got = []
    for L in (torch, ember):
        x = base(L).requires_grad_()
        y = x * 1
        v = f(L, y)
        y.mul_(3)
        try:
            sq = v * v      # (ember regenerates the view's node when it is used)
        except RuntimeError as e:
            got += [("RuntimeError", str(e)), None]
            continue
        fn = sq.grad_fn.next_functions[0][0]
        got.append((type(fn).__name__, _np(v).tolist()))
        sq.sum().backward()
        got.append(_np(x.grad).tolist())
    assert got[:2] == got[2:], (name, got)


@pytest.mark.parametrize("name", sorted(MULTI))
def test_multi_view_inplace_message(name):
    x = ember.arange(12.0).reshape(3, 4).requires_grad_()
    v = VIEWS[name](ember, x * 1)
    with pytest.raises(RuntimeError, match="Output 1 of %s is a view and is being modified "
                       "inplace. This view is the output of a function that returns multiple "
                       "views." % MULTI[name]):
        v.mul_(2)
    v = VIEWS[name](ember, x.detach())
    v.mul_(2)        # without autograd: allowed, as in torch


def test_view_dtype_shares_version_without_base():
    for L in (torch, ember):
        z = L.arange(4.0)
        v = z.view(L.int32)
        assert v._base is None
        v.add_(1)
        assert z._version == v._version == 1


def test_flatten_and_broadcast_identity():
    for L in (torch, ember):
        z = L.arange(4.0)
        x = L.zeros(2, 3)
        assert L.flatten(z) is z and z.flatten() is z and x.flatten(1) is x
        assert z.ravel() is not z and z.ravel()._base is z
        y = (x + 0).requires_grad_()
        a, b = L.broadcast_tensors(y, L.zeros(1, 3))
        assert a is y and b._base is not None


def test_negative_slice_step():
    for L in (torch, ember):
        with pytest.raises(ValueError, match="step must be greater than zero"):
            L.arange(5.0)[::-1]


def test_as_strided_errors_and_offset():
    got = []
    for L in (torch, ember):
        a = L.zeros(3, 4)
        v = a.as_strided((2, 2), (1, 2), 1)
        out = [v._base is a, v.storage_offset(), a[1].as_strided((2,), (1,)).storage_offset()]
        for args in [((10, 10), (1, 2)), ((2,), (-1,)), ((2, 2), (1,))]:
            try:
                a.as_strided(*args)
                out.append("ok")
            except RuntimeError as e:
                out.append(str(e))
        got.append(out)
    assert got[0] == got[1], got


def test_as_strided_gradient_overlapping():
    got = []
    for L in (torch, ember):
        x = L.arange(6.0).requires_grad_()
        y = L.as_strided(x * 1, (3, 2), (1, 1))     # overlapping windows
        (y * L.arange(6.0).reshape(3, 2)).sum().backward()
        got.append((type(y.grad_fn).__name__, _np(x.grad).tolist()))
    assert got[0] == got[1], got


def test_unfold_gradient_overlapping():
    got = []
    for L in (torch, ember):
        x = L.arange(12.0).reshape(3, 4).requires_grad_()
        y = x.unfold(1, 3, 1)
        (y * L.arange(18.0).reshape(3, 2, 3)).sum().backward()
        got.append((type(y.grad_fn).__name__, y._base is x, _np(x.grad).tolist()))
    assert got[0] == got[1], got


@pytest.mark.parametrize("op", ["fill_", "zero_", "mul_", "copy_"])
def test_write_into_expanded_view(op):
    """torch fills an expanded view (its elements share memory) but refuses other writes."""
    got = []
    for L in (torch, ember):
        b = L.arange(6.0).reshape(2, 3).t()
        v = b[:, :1].expand(3, 4)
        try:
            if op == "copy_":
                v.copy_(L.ones(3, 4))
            else:
                getattr(v, op)(*([] if op == "zero_" else [7.0]))
            got.append((_np(b).tolist(), b._version))
        except RuntimeError as e:
            got.append(str(e))
    assert got[0] == got[1], got
