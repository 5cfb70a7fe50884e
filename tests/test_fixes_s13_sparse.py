"""Session 13 (H2): sparse embedding gradients, their optimizers, and embedding_bag's
``scale_grad_by_freq``, each compared with torch."""
import warnings

import numpy as np
import pytest

import ember


def _both(torch, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(torch), fn(ember)


def _close(a, b):
    """Equal structure and integers; floats within a few ulp (torch's BLAS fuses some
    multiply-adds that ember rounds twice)."""
    if isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _close(a[k], b[k])
    elif isinstance(a, float):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    else:
        assert a == b


def _sparse_state(g):
    return (g.is_sparse, g.is_coalesced(), g._indices().tolist(), g._values().tolist(),
            tuple(g.shape))


def test_embedding_sparse_grad_accumulates(torch):
    def run(lib):
        lib.manual_seed(0)
        e = lib.nn.Embedding(5, 3, sparse=True)
        e(lib.tensor([[1, 2, 1], [4, 2, 0]])).pow(2).sum().backward()
        first = _sparse_state(e.weight.grad)
        g = e.weight.grad
        (e(lib.tensor([3, 1])) * 3).sum().backward()
        return first, _sparse_state(e.weight.grad), g is e.weight.grad, \
            _sparse_state(e.weight.grad.coalesce())
    t, m = _both(torch, run)
    assert t == m


def test_embedding_sparse_padding_int32_and_errors(torch):
    def run(lib):
        out = []
        for idx, pad in (([1, 1], 1), ([[1, 3], [0, 1]], 1), ([2], None)):
            e = lib.nn.Embedding(4, 2, sparse=True, padding_idx=pad)
            e(lib.tensor(idx, dtype=lib.int32)).sum().backward()
            out.append(_sparse_state(e.weight.grad))
        e = lib.nn.Embedding(4, 2, sparse=True, scale_grad_by_freq=True)
        try:
            e(lib.tensor([1, 1])).sum().backward()
        except RuntimeError as ex:
            out.append(str(ex))
        return out
    t, m = _both(torch, run)
    assert t == m


def test_sparse_plus_sparse_noncontiguous_concatenates(torch):
    def run(lib):
        a = lib.sparse_coo_tensor(lib.tensor([[0, 2, 1]]), lib.tensor([[1., 2], [3, 4], [5, 6]]),
                                  (3, 2)).coalesce()
        b = lib.sparse_coo_tensor(lib.tensor([[1]]), lib.ones(1, 1).expand(1, 2), (3, 2))
        big = lib.sparse_coo_tensor(lib.tensor([[0, 0, 0, 1, 1, 1, 2]]),
                                    lib.ones(7, 1).expand(7, 2), (3, 2))
        return [_sparse_state(x) for x in (a + b, b + a, a + big)]
    t, m = _both(torch, run)
    assert t == m


def _train(lib, make, steps=3, bag=False, **kw):
    lib.manual_seed(0)
    e = lib.nn.EmbeddingBag(7, 3, mode="sum", sparse=True, **kw) if bag else \
        lib.nn.Embedding(7, 3, sparse=True, **kw)
    opt = make(lib.optim, e.parameters())
    for _ in range(steps):
        opt.zero_grad()
        idx = lib.randint(0, 7, (2, 4))
        loss = (e(idx) ** 2).sum() * 0.3 + e(idx[:, :2]).pow(3).sum()
        loss.backward()
        try:
            opt.step()
        except RuntimeError as ex:
            return str(ex)
    state = {k: (_sparse_state(v) if getattr(v, "is_sparse", False) else
                 v.tolist() if hasattr(v, "tolist") else v)
             for k, v in opt.state[e.weight].items()}
    return e.weight.tolist(), _sparse_state(e.weight.grad), state


@pytest.mark.parametrize("make", [
    lambda optim, p: optim.SGD(p, lr=0.1),
    lambda optim, p: optim.SGD(p, lr=0.1, momentum=0.9),
    lambda optim, p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, maximize=True),
    lambda optim, p: optim.SGD(p, lr=0.1, momentum=0.8, dampening=0.2),
    lambda optim, p: optim.SGD(p, lr=0.1, weight_decay=0.1),
    lambda optim, p: optim.Adagrad(p, lr=0.1),
    lambda optim, p: optim.Adagrad(p, lr=0.1, lr_decay=0.1, maximize=True),
    lambda optim, p: optim.Adagrad(p, weight_decay=0.1),
    lambda optim, p: optim.SparseAdam(p, lr=0.1),
    lambda optim, p: optim.SparseAdam(p, lr=0.1, maximize=True, betas=(0.5, 0.6)),
])
def test_sparse_optimizers_match_torch(torch, make):
    _close(*_both(torch, lambda lib: _train(lib, make)))
    _close(*_both(torch, lambda lib: _train(lib, make, bag=True, padding_idx=2)))


def test_sparse_optimizer_padding_and_max_norm(torch):
    for kw in (dict(padding_idx=2), dict(max_norm=1.0)):
        _close(*_both(torch, lambda lib: _train(
            lib, lambda optim, p: optim.SGD(p, lr=0.1, momentum=0.9), **kw)))


def test_sparse_adam_refuses_dense(torch):
    def run(lib):
        w = lib.nn.Parameter(lib.ones(2))
        w.sum().backward()
        try:
            lib.optim.SparseAdam([w]).step()
        except RuntimeError as ex:
            return str(ex)
    t, m = _both(torch, run)
    assert t == m


@pytest.mark.parametrize("case", range(3))
@pytest.mark.parametrize("mode,psw", [("sum", False), ("mean", False), ("sum", True)])
@pytest.mark.parametrize("pad", [None, 3])
@pytest.mark.parametrize("sparse", [False, True])
def test_embedding_bag_scale_grad_by_freq_and_sparse(torch, case, mode, psw, pad, sparse):
    cases = [([1, 2, 1, 4, 4, 4, 0, 8], [0, 3, 5]), ([7, 7, 3, 2, 2, 2, 2, 5, 1, 7], [0, 2, 2, 6]),
             ([[3, 3, 1], [0, 3, 6]], None)]
    inp, off = cases[case]

    def run(lib):
        lib.manual_seed(0)
        w = lib.randn(9, 5).requires_grad_()
        x = lib.tensor(inp)
        pw = lib.rand(x.shape) if psw else None
        out = [None, None]
        for sg in (False, True):
            w.grad = None
            try:
                y = lib.nn.functional.embedding_bag(
                    x, w, None if off is None else lib.tensor(off), mode=mode,
                    per_sample_weights=pw, scale_grad_by_freq=sg, padding_idx=pad, sparse=sparse)
                (y * lib.randn(y.shape)).sum().backward()
                g = w.grad
                out[sg] = _sparse_state(g) if g.is_sparse else g.tolist()
            except RuntimeError as ex:
                out[sg] = str(ex)
        return out
    t, m = _both(torch, run)
    assert t == m


@pytest.mark.parametrize("args", [(1, None), (None, 2), (1, 2, 3), (1, 2, "b")])
def test_linear_rejects_non_tensors(torch, args):
    def run(lib):
        vals = {1: lib.ones(1, 2), 2: lib.ones(2, 2)}
        try:
            lib.nn.functional.linear(*[vals.get(a, a) if not isinstance(a, str) else a
                                       for a in args])
        except TypeError as ex:
            return str(ex)
    t, m = _both(torch, run)
    assert t == m
