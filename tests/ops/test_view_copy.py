"""torch's functional view forms (``*_copy``, ``*_scatter``, ``narrow_copy``, ``nonzero_static``)
against torch: values, gradients and node names."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

torch = pytest.importorskip("torch")

CASES = [
    ("select_scatter", lambda s: (s, 0, 1)),
    ("slice_scatter", lambda s: (s[:2].reshape(1, 2).expand(3, 2) * 1, 1, 0, 4, 2)),
    ("diagonal_scatter", lambda s: (s[:3],)),
    ("select_copy", lambda s: (1, 2)),
    ("diagonal_copy", lambda s: ()),
    ("t_copy", lambda s: ()),
    ("transpose_copy", lambda s: (0, 1)),
    ("unbind_copy", lambda s: (1,)),
    ("split_copy", lambda s: (2, 1)),
    ("split_with_sizes_copy", lambda s: ([1, 3], 1)),
    ("permute_copy", lambda s: ((1, 0),)),
    ("expand_copy", lambda s: ((2, 3, 4),)),
    ("unsqueeze_copy", lambda s: (1,)),
    ("squeeze_copy", lambda s: ()),
    ("slice_copy", lambda s: (1, 1, 3)),
    ("view_copy", lambda s: ((4, 3),)),
    ("narrow_copy", lambda s: (1, 1, 2)),
    ("alias_copy", lambda s: ()),
    ("unfold_copy", lambda s: (1, 2, 1)),
    ("as_strided_copy", lambda s: ((2, 2), (1, 2))),
]


def _run(lib, name, make_args):
    x = lib.tensor(np.arange(12.).reshape(3, 4), requires_grad=True)
    s = lib.tensor(np.arange(4.) + 10, requires_grad=True)
    out = getattr(lib, name)(x, *make_args(s))
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    sum((o * o).sum() for o in outs).backward()
    return ([o.detach().numpy() for o in outs], x.grad.numpy(),
            None if s.grad is None else s.grad.numpy(), [type(o.grad_fn).__name__ for o in outs])


@pytest.mark.parametrize("name,make_args", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(name, make_args):
    e, t = _run(ember, name, make_args), _run(torch, name, make_args)
    assert len(e[0]) == len(t[0])
    for a, b in zip(e[0], t[0]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(e[1], t[1])
    assert (e[2] is None) == (t[2] is None)
    if e[2] is not None:
        np.testing.assert_array_equal(e[2], t[2])
    assert e[3] == t[3]


def test_as_strided_scatter():
    # values against torch; the input's gradient against numerical gradients (torch 2.13's
    # as_strided_scatter backward returns the gradient of the *src* positions for the input,
    # which is not the derivative, so torch's is not the oracle there)
    x = np.arange(12.).reshape(3, 4)
    s = np.array([10., 11.])
    got = ember.as_strided_scatter(ember.tensor(x), ember.tensor(s), (2,), (3,), 1)
    want = torch.as_strided_scatter(torch.tensor(x), torch.tensor(s), (2,), (3,), 1)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    a = ember.tensor(x, requires_grad=True)
    b = ember.tensor(s, requires_grad=True)
    assert gradcheck(lambda a, b: ember.as_strided_scatter(a, b, (2,), (3,), 1), (a, b))


@pytest.mark.parametrize("name,args", [
    ("select_scatter", lambda L: (L.zeros(3, 4), L.ones(3), 0, 1)),
    ("slice_scatter", lambda L: (L.zeros(3, 4), L.ones(3, 2), 1, 0, 3)),
    ("diagonal_scatter", lambda L: (L.zeros(3, 4), L.ones(4))),
    ("select_scatter", lambda L: (L.zeros(3, 4), L.ones(4), 0, 5)),
])
def test_errors_match_torch(name, args):
    with pytest.raises(Exception) as te:
        getattr(torch, name)(*args(torch))
    with pytest.raises(type(te.value)) as ee:
        getattr(ember, name)(*args(ember))
    assert str(ee.value) == str(te.value)


def test_scatter_gradgrad():
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    s = ember.randn(4, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda x, s: ember.select_scatter(x, s, 0, 1) ** 2,
                                        (x, s))


@pytest.mark.parametrize("data,size", [([0, 1, 0, 2], 3), ([[0, 1], [1, 1]], 1), ([0, 0], 2)])
def test_nonzero_static(data, size):
    got = ember.nonzero_static(ember.tensor(data), size=size, fill_value=-7)
    want = torch.nonzero_static(torch.tensor(data), size=size, fill_value=-7)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert str(got.dtype) == str(want.dtype)


def test_methods():
    x = ember.zeros(3, 4)
    assert x.select_scatter(ember.ones(4), 0, 1).sum().item() == 4
    assert x.narrow_copy(1, 0, 2).shape == (3, 2)
