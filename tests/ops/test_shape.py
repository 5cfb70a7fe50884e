"""Shape and movement ops against PyTorch: values, dtypes, gradients, views and errors."""
import numpy as np
import pytest

import ember
from oracle import compare

R = np.random.default_rng(1)


def rn(*shape, dtype=np.float64):
    return R.standard_normal(shape).astype(dtype)


CASES = [
    ("view", lambda L, x: x.view(3, -1), (2, 6)),
    ("view_tuple", lambda L, x: x.view((4, 3)), (2, 6)),
    ("reshape_nc", lambda L, x: x.t().reshape(-1), (2, 6)),
    ("flatten", lambda L, x: x.flatten(1), (2, 3, 4)),
    ("flatten_neg", lambda L, x: L.flatten(x, -2, -1), (2, 3, 4)),
    ("unflatten", lambda L, x: x.unflatten(1, (2, -1)), (2, 6, 1)),
    ("squeeze", lambda L, x: x.squeeze(), (2, 1, 3, 1)),
    ("squeeze_dim", lambda L, x: x.squeeze(-1), (2, 1, 3, 1)),
    ("squeeze_tuple", lambda L, x: x.squeeze((1, 3)), (2, 1, 3, 1)),
    ("unsqueeze", lambda L, x: x.unsqueeze(-1), (2, 3)),
    ("permute", lambda L, x: x.permute(2, 0, 1), (2, 3, 4)),
    ("transpose", lambda L, x: x.transpose(0, -1), (2, 3, 4)),
    ("swapaxes", lambda L, x: L.swapaxes(x, 0, 1), (2, 3, 4)),
    ("t", lambda L, x: x.t(), (2, 3)),
    ("T", lambda L, x: x.T, (2, 3, 4)),
    ("mT", lambda L, x: x.mT, (2, 3, 4)),
    ("expand", lambda L, x: x.expand(4, -1, 3), (2, 1)),
    ("expand_as", lambda L, x: x.expand_as(L.ones(2, 3)), (3,)),
    ("broadcast_to", lambda L, x: L.broadcast_to(x, (2, 2, 3)), (1, 3)),
    ("repeat", lambda L, x: x.repeat(2, 1, 3), (2, 3)),
    ("repeat_interleave", lambda L, x: x.repeat_interleave(2, dim=1), (2, 3)),
    ("repeat_interleave_flat", lambda L, x: L.repeat_interleave(x, 3), (2, 2)),
    ("repeat_interleave_t", lambda L, x: x.repeat_interleave(L.tensor([1, 0, 2]), dim=0),
     (3, 2)),
    ("tile", lambda L, x: x.tile((2,)), (2, 3)),
    ("narrow", lambda L, x: x.narrow(1, 1, 2), (2, 4)),
    ("narrow_neg", lambda L, x: L.narrow(x, -1, -3, 2), (2, 4)),
    ("select", lambda L, x: x.select(1, -1), (2, 4, 3)),
    ("flip", lambda L, x: x.flip(0, 2), (2, 3, 4)),
    ("fliplr", lambda L, x: L.fliplr(x), (2, 3)),
    ("flipud", lambda L, x: L.flipud(x), (2, 3)),
    ("roll", lambda L, x: x.roll(1), (2, 3)),
    ("roll_dims", lambda L, x: x.roll((1, -2), (0, 1)), (2, 3)),
    ("rot90", lambda L, x: x.rot90(), (2, 3)),
    ("rot90_k", lambda L, x: L.rot90(x, 3, (1, 2)), (2, 3, 4)),
    ("rot90_neg", lambda L, x: L.rot90(x, -1, (0, 1)), (2, 3)),
    ("tril", lambda L, x: x.tril(), (3, 4)),
    ("tril_k", lambda L, x: L.tril(x, -1), (2, 3, 4)),
    ("triu", lambda L, x: x.triu(1), (3, 4)),
    ("movedim", lambda L, x: x.movedim(0, -1), (2, 3, 4)),
    ("moveaxis", lambda L, x: L.moveaxis(x, (0, 1), (2, 0)), (2, 3, 4)),
    ("diag_vec", lambda L, x: L.diag(x), (3,)),
    ("diag_vec_k", lambda L, x: L.diag(x, -2), (3,)),
    ("diag_mat", lambda L, x: x.diag(1), (3, 4)),
    ("diagonal", lambda L, x: x.diagonal(), (3, 4)),
    ("diagonal_off", lambda L, x: L.diagonal(x, -1, 2, 0), (3, 2, 4)),
    ("diagonal_far", lambda L, x: L.diagonal(x, 5), (3, 4)),
    ("diag_embed", lambda L, x: L.diag_embed(x), (2, 3)),
    ("diag_embed_off", lambda L, x: L.diag_embed(x, 1, 0, 2), (2, 3)),
    ("contiguous", lambda L, x: x.t().contiguous(), (2, 3)),
    ("ravel", lambda L, x: x.t().ravel(), (2, 3)),
    ("unfold", lambda L, x: x.unfold(1, 2, 1), (2, 5)),
    ("atleast_1d", lambda L, x: L.atleast_1d(x), ()),
    ("atleast_2d", lambda L, x: L.atleast_2d(x), (3,)),
    ("atleast_3d", lambda L, x: L.atleast_3d(x), (3,)),
    ("atleast_3d_2", lambda L, x: L.atleast_3d(x), (2, 3)),
    ("split", lambda L, x: x.split(2, 1), (2, 5)),
    ("split_sizes", lambda L, x: L.split(x, [1, 3, 1], -1), (2, 5)),
    ("chunk", lambda L, x: x.chunk(3), (5, 2)),
    ("chunk_6", lambda L, x: x.chunk(4), (6,)),
    ("tensor_split", lambda L, x: L.tensor_split(x, 3), (7,)),
    ("tensor_split_idx", lambda L, x: L.tensor_split(x, [1, 4], dim=1), (2, 6)),
    ("unbind", lambda L, x: x.unbind(1), (2, 3)),
    ("split_unused", lambda L, x: x.split(2)[1], (5,)),
    ("size0", lambda L, x: L.cat([x, x], 1).flip(0).t(), (0, 3)),
]


@pytest.mark.parametrize("name,fn,shape", CASES, ids=[c[0] for c in CASES])
def test_shape_op(torch, name, fn, shape):
    compare(torch, fn, rn(*shape))


def test_float32_and_noncontiguous(torch):
    x = rn(4, 3, dtype=np.float32)
    compare(torch, lambda L, a: a.t().flip(0).roll(1, 1).tril(), x)
    compare(torch, lambda L, a: a[::2].repeat(2, 2).diagonal(), x)


def test_join(torch):
    a, b, c = rn(2, 3), rn(2, 1), rn(2, 3)
    compare(torch, lambda L, x, y: L.cat([x, y], 1), a, b)
    compare(torch, lambda L, x, y: L.cat((x, y), dim=-1), a, b)
    compare(torch, lambda L, x, y: L.concat([x, y], 1), a, b)
    compare(torch, lambda L, x, y: L.concatenate([x, y], 1), a, b)
    compare(torch, lambda L, x, y: L.stack([x, y]), a, c)
    compare(torch, lambda L, x, y: L.stack([x, y], -1), a, c)
    compare(torch, lambda L, x, y: L.hstack([x, y]), a, b)
    compare(torch, lambda L, x, y: L.vstack([x, y]), a, c)
    compare(torch, lambda L, x, y: L.dstack([x, y]), a, c)
    compare(torch, lambda L, x, y: L.hstack([x, y]), rn(3), rn(2))
    compare(torch, lambda L, x, y: L.vstack([x, y]), rn(3), rn(3))
    compare(torch, lambda L, x, y: L.column_stack([x, y]), rn(3), rn(3, 2))
    compare(torch, lambda L, x, y: L.cat([x, y]), rn(0), rn(2, 3))


def test_cat_promotes_and_mixed_grad(torch):
    compare(torch, lambda L, x: L.cat([x, L.ones(2, 1, dtype=L.float64)], 1), rn(2, 3,
                                                                               dtype=np.float32))
    compare(torch, lambda L, x: L.stack([x, L.arange(3)]), rn(3))
    compare(torch, lambda L, x, y: L.cat([x, y.detach()]), rn(2), rn(3))


def test_broadcast_meshgrid(torch):
    compare(torch, lambda L, x, y: L.broadcast_tensors(x, y), rn(2, 1), rn(3))
    compare(torch, lambda L, x, y: L.meshgrid(x, y, indexing="ij"), rn(2), rn(3))
    compare(torch, lambda L, x, y: L.meshgrid([x, y], indexing="xy"), rn(2), rn(3))
    compare(torch, lambda L, x, y, z: L.meshgrid(x, y, z, indexing="xy"), rn(2), rn(3), rn(4))
    assert ember.broadcast_shapes((2, 1), (3,)) == (2, 3)


def test_grad_fn_names(torch):
    for fn in [lambda L, x: L.cat([x, x]), lambda L, x: L.stack([x, x]),
               lambda L, x: x.split(1)[0], lambda L, x: x.narrow(0, 1, 1),
               lambda L, x: x.select(0, 1), lambda L, x: x.flip(0), lambda L, x: x.roll(1, 0),
               lambda L, x: x.rot90(), lambda L, x: x.tril(), lambda L, x: x.triu(),
               lambda L, x: x.diagonal(), lambda L, x: L.diag_embed(x),
               lambda L, x: x.repeat(2, 1), lambda L, x: x.unbind()[0],
               lambda L, x: x.permute(1, 0), lambda L, x: x.expand(2, 2, 3),
               lambda L, x: x.transpose(0, 1), lambda L, x: x.unsqueeze(0),
               lambda L, x: x.view(-1), lambda L, x: x.t(), lambda L, x: x.t().reshape(-1),
               lambda L, x: x.reshape(3, 2), lambda L, x: x[None].squeeze(),
               lambda L, x: x[None].squeeze(0), lambda L, x: x[None].squeeze((0,)),
               lambda L, x: x.unflatten(1, (3, 1)), lambda L, x: x.movedim(0, 1),
               lambda L, x: x.mT, lambda L, x: x.swapaxes(0, 1), lambda L, x: x.flatten()]:
        te = fn(torch, torch.ones(2, 3, requires_grad=True))
        ee = fn(ember, ember.ones(2, 3, requires_grad=True))
        assert ee.grad_fn.name() == te.grad_fn.name()


def test_views_share_storage_and_version():
    x = ember.zeros(3, 4)
    for v in [x.view(12), x[1], x.t(), x.narrow(1, 1, 2), x.select(0, 2), x.diagonal(),
              x.unsqueeze(0), x.permute(1, 0), x.split(2, 1)[1], x.unbind(0)[2],
              x.chunk(2, 0)[0], x.movedim(0, 1), x.expand(2, 3, 4), x.unflatten(1, (2, 2))]:
        before = x._version
        assert v._version == before
        if v.is_contiguous() or True:
            v.add_(1) if v._array.flags.writeable else None
        assert x._version == v._version
    d = ember.zeros(3, 3)
    d.diagonal().fill_(2.0)
    assert d.tolist() == [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]]
    y = ember.arange(6.0)
    y.view(2, 3)[1, 2] = 10.0
    assert y[5].item() == 10.0 and y._version == 1


def test_shape_gradcheck_and_gradgrad():
    x = ember.tensor(rn(3, 4), requires_grad=True)
    g = ember.autograd
    fns = [lambda t: ember.cat([t, t * 2], 1), lambda t: ember.stack([t, t]).flip(0),
           lambda t: t.roll(2).rot90().tril(1), lambda t: t.diagonal(1).repeat(2),
           lambda t: ember.diag_embed(t, -1).narrow(1, 1, 2), lambda t: t.split(3, 1)[1] * 1,
           lambda t: t.unbind(1)[2].repeat_interleave(2), lambda t: t.select(0, 1)]
    for fn in fns:
        assert g.gradcheck(fn, (x,))
        assert g.gradgradcheck(fn, (x,))


@pytest.mark.parametrize("fn", [
    lambda L: L.cat([L.ones(2, 2), L.ones(3, 3)], 1),
    lambda L: L.cat([]),
    lambda L: L.cat([L.ones(2, 3), L.ones(2)]),
    lambda L: L.cat([L.ones(2), L.tensor(1.0)]),
    lambda L: L.stack([L.ones(2, 3), L.ones(2, 4)]),
    lambda L: L.ones(2, 3).view(4),
    lambda L: L.ones(2, 3).t().view(-1),
    lambda L: L.ones(2, 3).permute(0, 0),
    lambda L: L.ones(2, 3).permute(0),
    lambda L: L.ones(2, 3).transpose(0, 2),
    lambda L: L.ones(2, 3).expand(3, 3),
    lambda L: L.ones(2, 3, 4).t(),
    lambda L: L.ones(2, 3).narrow(1, 2, 2),
    lambda L: L.ones(2, 3).split([1, 3], 0),
    lambda L: L.ones(2, 3).chunk(0),
    lambda L: L.ones(2, 3).repeat(2),
    lambda L: L.ones(3).tril(),
    lambda L: L.ones(2, 3).flip(0, 0),
    lambda L: L.ones(2, 3).roll((1, 2), 0),
    lambda L: L.ones(2, 3).diagonal(0, 1, 1),
    lambda L: L.ones(2, 3).unsqueeze(3),
    lambda L: L.ones(2, 3).squeeze(2),
    lambda L: L.ones(2, 3).flatten(1, 0),
    lambda L: L.ones(2, 3).movedim((0, 0), (0, 1)),
    lambda L: L.ones(2, 3).rot90(1, (0, 0)),
])
def test_errors_match_torch(torch, fn):
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(type(te.value)) as ee:
        fn(ember)
    assert str(ee.value) == str(te.value)


def _perm_cases():
    from hypothesis import strategies as st
    return st.lists(st.integers(1, 3), min_size=1, max_size=4).flatmap(
        lambda shape: st.tuples(st.just(tuple(shape)), st.permutations(range(len(shape)))))


try:
    from hypothesis import given, settings
    HAVE_HYPOTHESIS = True
except ImportError:  # pragma: no cover
    HAVE_HYPOTHESIS = False


@pytest.mark.skipif(not HAVE_HYPOTHESIS, reason="hypothesis not installed")
def test_permute_reshape_roundtrip_property(torch):
    @settings(max_examples=30, deadline=None)
    @given(_perm_cases())
    def check(case):
        shape, perm = case
        x = rn(*shape)
        compare(torch, lambda L, a: a.permute(*perm).reshape(-1).flip(0), x)
        e = ember.tensor(x).permute(*perm)
        back = e.permute(*np.argsort(perm).tolist())
        assert np.array_equal(back.numpy(), x)
        assert np.array_equal(e.reshape(-1).view(e.shape).numpy(), e.numpy())
    check()


EDGE = [
    (lambda L, x: x.flatten(), ()), (lambda L, x: x.unsqueeze(0), ()),
    (lambda L, x: x.squeeze(), ()), (lambda L, x: x.squeeze(0), ()),
    (lambda L, x: x.reshape(1, 1), ()), (lambda L, x: x.expand(3), ()),
    (lambda L, x: x.repeat(2, 2), ()), (lambda L, x: x.flip(0), (0,)),
    (lambda L, x: x.flip(()), ()), (lambda L, x: x.roll(1), (0,)),
    (lambda L, x: L.atleast_2d(x), ()), (lambda L, x: L.stack([x, x]), ()),
    (lambda L, x: x.t(), ()), (lambda L, x: x.t(), (3,)), (lambda L, x: x.movedim(0, 0), ()),
    (lambda L, x: x.tril(), (0, 3)), (lambda L, x: x.diagonal(), (0, 3)),
    (lambda L, x: x.split(1), (0,)), (lambda L, x: x.chunk(2), (0, 2)),
    (lambda L, x: x.unbind(), (0, 2)), (lambda L, x: x.repeat_interleave(2), ()),
    (lambda L, x: x[None, ..., None], ()), (lambda L, x: x[...], ()),
    (lambda L, x: x[x > 0], ()), (lambda L, x: x[True], (2,)),
    (lambda L, x: L.cat([x, x], 0), (0, 3)), (lambda L, x: L.diag(x), (0,)),
    (lambda L, x: x.unfold(0, 2, 1), (4,)), (lambda L, x: x.narrow(0, 0, 0), (3,)),
    (lambda L, x: L.broadcast_to(x, (2, 3)), ()), (lambda L, x: x.rot90(2), (2, 3)),
    (lambda L, x: x.rot90(-3, (1, 0)), (2, 3)), (lambda L, x: L.matmul(x, x.mT), (2, 0, 3)),
]


@pytest.mark.parametrize("fn,shape", EDGE)
def test_zero_dim_and_empty(torch, fn, shape):
    compare(torch, fn, rn(*shape))
