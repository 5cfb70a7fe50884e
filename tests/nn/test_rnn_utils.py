"""nn.utils.rnn against torch: pad/pack/unpack helpers and packed input to RNN/LSTM/GRU."""
import numpy as np
import pytest

import ember
from ember.nn.utils import rnn as er

torch = pytest.importorskip("torch")
tr = torch.nn.utils.rnn


def _np(t):
    return np.asarray(t.detach().cpu().numpy())


def _pair(arr, grad=True):
    return torch.tensor(arr, requires_grad=grad), ember.tensor(arr, requires_grad=grad)


def _raises_same(tf, ef):
    with pytest.raises(Exception) as te:
        tf()
    with pytest.raises(type(te.value)) as ee:
        ef()
    assert str(ee.value) == str(te.value)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence(batch_first, side):
    rng = np.random.default_rng(0)
    arrs = [rng.standard_normal((n, 3)) for n in (2, 4, 1)]
    ts, es = zip(*[_pair(a) for a in arrs])
    t = tr.pad_sequence(ts, batch_first=batch_first, padding_value=-1.5, padding_side=side)
    e = er.pad_sequence(es, batch_first=batch_first, padding_value=-1.5, padding_side=side)
    np.testing.assert_allclose(_np(e), _np(t))
    g = rng.standard_normal(t.shape)
    (t * torch.tensor(g)).sum().backward()
    (e * ember.tensor(g)).sum().backward()
    for a, b in zip(ts, es):
        np.testing.assert_allclose(_np(b.grad), _np(a.grad))


def test_pad_sequence_errors():
    _raises_same(lambda: tr.pad_sequence([]), lambda: er.pad_sequence([]))
    _raises_same(lambda: tr.pad_sequence([torch.ones(2)], padding_side="mid"),
                 lambda: er.pad_sequence([ember.ones(2)], padding_side="mid"))
    _raises_same(lambda: tr.pad_sequence([torch.ones(2, 3), torch.ones(3, 2)]),
                 lambda: er.pad_sequence([ember.ones(2, 3), ember.ones(3, 2)]))


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lens,sort", [([5, 3, 3, 1], True), ([2, 5, 1, 3], False)])
def test_pack_pad_round_trip(batch_first, lens, sort):
    rng = np.random.default_rng(1)
    shape = (4, 5, 2) if batch_first else (5, 4, 2)
    x = rng.standard_normal(shape)
    tx, ex = _pair(x)
    tp = tr.pack_padded_sequence(tx, lens, batch_first=batch_first, enforce_sorted=sort)
    ep = er.pack_padded_sequence(ex, ember.tensor(lens), batch_first=batch_first,
                                 enforce_sorted=sort)
    assert isinstance(ep, tuple) and ep._fields == tp._fields
    np.testing.assert_allclose(_np(ep.data), _np(tp.data))
    assert ep.batch_sizes.tolist() == tp.batch_sizes.tolist()
    assert ep.batch_sizes.dtype == ember.int64
    for a, b in ((tp.sorted_indices, ep.sorted_indices),
                 (tp.unsorted_indices, ep.unsorted_indices)):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.tolist() == b.tolist()
    assert type(ep.data.grad_fn).__name__ == type(tp.data.grad_fn).__name__
    tpad, tl = tr.pad_packed_sequence(tp, batch_first=batch_first, padding_value=7.0,
                                      total_length=6)
    epad, el = er.pad_packed_sequence(ep, batch_first=batch_first, padding_value=7.0,
                                      total_length=6)
    np.testing.assert_allclose(_np(epad), _np(tpad))
    assert el.tolist() == tl.tolist() and el.dtype == ember.int64
    g = rng.standard_normal(tpad.shape)
    (tpad * torch.tensor(g)).sum().backward()
    (epad * ember.tensor(g)).sum().backward()
    np.testing.assert_allclose(_np(ex.grad), _np(tx.grad))


def test_pack_errors():
    x = np.zeros((5, 3, 2))
    _raises_same(lambda: tr.pack_padded_sequence(torch.tensor(x), [2, 3, 1]),
                 lambda: er.pack_padded_sequence(ember.tensor(x), [2, 3, 1]))
    _raises_same(lambda: tr.pack_padded_sequence(torch.tensor(x), [3, 0, 1],
                                                 enforce_sorted=False),
                 lambda: er.pack_padded_sequence(ember.tensor(x), [3, 0, 1],
                                                 enforce_sorted=False))
    _raises_same(lambda: tr.pack_padded_sequence(torch.tensor(x), [5, 3]),
                 lambda: er.pack_padded_sequence(ember.tensor(x), [5, 3]))
    tp = tr.pack_padded_sequence(torch.tensor(x), [5, 3, 1])
    ep = er.pack_padded_sequence(ember.tensor(x), [5, 3, 1])
    _raises_same(lambda: tr.pad_packed_sequence(tp, total_length=3),
                 lambda: er.pad_packed_sequence(ep, total_length=3))


def test_pack_unpack_sequence_and_unpad():
    rng = np.random.default_rng(2)
    arrs = [rng.standard_normal((n, 2)) for n in (2, 4, 3)]
    for sort in (False,):
        tp = tr.pack_sequence([torch.tensor(a) for a in arrs], enforce_sorted=sort)
        ep = er.pack_sequence([ember.tensor(a) for a in arrs], enforce_sorted=sort)
        np.testing.assert_allclose(_np(ep.data), _np(tp.data))
        for a, b in zip(tr.unpack_sequence(tp), er.unpack_sequence(ep)):
            np.testing.assert_allclose(_np(b), _np(a))
    _raises_same(lambda: tr.pack_sequence([torch.tensor(a) for a in arrs]),
                 lambda: er.pack_sequence([ember.tensor(a) for a in arrs]))
    tpad = tr.pad_sequence([torch.tensor(a) for a in arrs])
    epad = er.pad_sequence([ember.tensor(a) for a in arrs])
    lens = [2, 4, 3]
    tu = tr.unpad_sequence(tpad, torch.tensor(lens))
    eu = er.unpad_sequence(epad, ember.tensor(lens))
    assert tuple(epad.shape) == tuple(tpad.shape)     # transposed in place, as torch
    for a, b in zip(tu, eu):
        np.testing.assert_allclose(_np(b), _np(a))


def test_packed_sequence_methods():
    ep = er.pack_sequence([ember.ones(3, 2), ember.ones(1, 2)])
    assert ep.double().data.dtype == ember.float64
    assert ep.to(ember.float64).batch_sizes is ep.batch_sizes
    assert ep.to(ember.float32) is ep
    assert not ep.is_cuda
    p2 = er.PackedSequence(ep.data, ep.batch_sizes, ember.tensor([1, 0]))
    assert p2.unsorted_indices.tolist() == [1, 0]
    p3 = er.PackedSequence((ep.data, ep.batch_sizes))
    assert p3.batch_sizes is ep.batch_sizes
    assert ember.nn.utils.rnn.PackedSequence is er.PackedSequence


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("bi", [False, True])
@pytest.mark.parametrize("sort", [True, False])
def test_rnn_packed(mode, bi, sort):
    torch.manual_seed(0)
    kw = {"proj_size": 2} if (mode == "LSTM" and bi and not sort) else {}
    tm = getattr(torch.nn, mode)(3, 4, num_layers=2, bidirectional=bi, **kw).double()
    em = getattr(ember.nn, mode)(3, 4, num_layers=2, bidirectional=bi, **kw).double()
    em.load_state_dict({k: ember.tensor(_np(v)) for k, v in tm.state_dict().items()})
    em.flatten_parameters()
    lens = [5, 3, 2, 1] if sort else [2, 5, 1, 3]
    rng = np.random.default_rng(3)
    tx, ex = _pair(rng.standard_normal((5, 4, 3)))
    tp = tr.pack_padded_sequence(tx, lens, enforce_sorted=sort)
    ep = er.pack_padded_sequence(ex, lens, enforce_sorted=sort)
    hsz = kw.get("proj_size", 4)
    th, eh = _pair(rng.standard_normal((4 if bi else 2, 4, hsz)))
    if mode == "LSTM":
        tc, ec = _pair(rng.standard_normal((4 if bi else 2, 4, 4)))
        to, (thn, tcn) = tm(tp, (th, tc))
        eo, (ehn, ecn) = em(ep, (eh, ec))
        np.testing.assert_allclose(_np(ecn), _np(tcn), atol=1e-10)
    else:
        to, thn = tm(tp, th)
        eo, ehn = em(ep, eh)
    assert isinstance(eo, er.PackedSequence)
    np.testing.assert_allclose(_np(eo.data), _np(to.data), atol=1e-10)
    np.testing.assert_allclose(_np(ehn), _np(thn), atol=1e-10)
    assert eo.batch_sizes.tolist() == to.batch_sizes.tolist()
    tpad, _ = tr.pad_packed_sequence(to, batch_first=True)
    epad, _ = er.pad_packed_sequence(eo, batch_first=True)
    g, gh = rng.standard_normal(tpad.shape), rng.standard_normal(thn.shape)
    tloss = (tpad * torch.tensor(g)).sum() + (thn * torch.tensor(gh)).sum()
    eloss = (epad * ember.tensor(g)).sum() + (ehn * ember.tensor(gh)).sum()
    if mode == "LSTM":
        gc = rng.standard_normal(tcn.shape)
        tloss = tloss + (tcn * torch.tensor(gc)).sum()
        eloss = eloss + (ecn * ember.tensor(gc)).sum()
        tloss.backward()
        eloss.backward()
        np.testing.assert_allclose(_np(ec.grad), _np(tc.grad), atol=1e-10)
    else:
        tloss.backward()
        eloss.backward()
    np.testing.assert_allclose(_np(ex.grad), _np(tx.grad), atol=1e-10)
    np.testing.assert_allclose(_np(eh.grad), _np(th.grad), atol=1e-10)
    for (n, a), (_, b) in zip(tm.named_parameters(), em.named_parameters()):
        np.testing.assert_allclose(_np(b.grad), _np(a.grad), atol=1e-10, err_msg=n)


def test_rnn_packed_no_hx_float32():
    torch.manual_seed(1)
    tm = torch.nn.LSTM(2, 3)
    em = ember.nn.LSTM(2, 3)
    em.load_state_dict({k: ember.tensor(_np(v)) for k, v in tm.state_dict().items()})
    x = np.random.default_rng(4).standard_normal((4, 3, 2)).astype(np.float32)
    to, (th, _) = tm(tr.pack_padded_sequence(torch.tensor(x), [4, 2, 3], enforce_sorted=False))
    eo, (eh, _) = em(er.pack_padded_sequence(ember.tensor(x), [4, 2, 3], enforce_sorted=False))
    np.testing.assert_allclose(_np(eo.data), _np(to.data), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(eh), _np(th), rtol=1e-5, atol=1e-6)
