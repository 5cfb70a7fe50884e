"""Regressions found by the tests/programs/p_papers_*.py programs, checked against torch."""
import pytest

import ember

torch = pytest.importorskip("torch")


def _both(fn):
    """Run ``fn(lib)`` on torch and ember; return both results or both (class, message)."""
    out = []
    for lib in (torch, ember):
        try:
            out.append(fn(lib))
        except Exception as e:  # noqa: BLE001 - the error itself is compared
            out.append((type(e).__name__, str(e)))
    return out


@pytest.mark.parametrize("output_size", [
    [16, 16], [15, 15], (2, 2, 16, 15), [18, 18], [14, 16], [2, 16, 16], [16]])
def test_conv_transpose2d_output_size_checked(output_size):
    def run(lib):
        lib.manual_seed(0)
        ct = lib.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)
        return tuple(ct(lib.ones(2, 3, 8, 8), output_size=output_size).shape)

    t, e = _both(run)
    assert t == e


@pytest.mark.parametrize("output_size", [[16, 16], [2, 16, 16], [17, 17]])
def test_conv_transpose2d_output_size_unbatched(output_size):
    def run(lib):
        ct = lib.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)
        return tuple(ct(lib.ones(3, 8, 8), output_size=output_size).shape)

    t, e = _both(run)
    assert t == e


def test_conv_transpose1d_output_size_values():
    torch.manual_seed(0)
    ct = torch.nn.ConvTranspose1d(3, 2, 3, stride=3)
    ce = ember.nn.ConvTranspose1d(3, 2, 3, stride=3)
    ce.load_state_dict({k: ember.tensor(v.numpy()) for k, v in ct.state_dict().items()})
    x = torch.randn(1, 3, 4)
    for size in ([12], [13], [14], [1, 2, 13]):
        want = ct(x, output_size=size).detach().numpy()
        got = ce(ember.tensor(x.numpy()), output_size=size).detach().numpy()
        assert want.shape == got.shape
        assert abs(want - got).max() < 1e-5


def test_triplet_margin_with_distance_loss_default_is_pairwise_module():
    t = torch.nn.TripletMarginWithDistanceLoss(margin=0.5)
    e = ember.nn.TripletMarginWithDistanceLoss(margin=0.5)
    assert repr(e) == repr(t)
    assert [n for n, _ in e.named_modules()] == [n for n, _ in t.named_modules()]
    torch.manual_seed(0)
    a, p, n = (torch.randn(4, 3) for _ in range(3))
    want = t(a, p, n).item()
    got = e(*(ember.tensor(x.numpy()) for x in (a, p, n))).item()
    assert abs(want - got) < 1e-6


@pytest.mark.parametrize("causal", [False, True])
def test_flash_attention_cpu_grouped_query_heads(causal):
    from ember.ops.attention import FlashAttentionCpu
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 4, 5, 3), torch.randn(2, 2, 6, 3), torch.randn(2, 2, 6, 3)
    g = torch.randn(2, 4, 5, 3)
    tq, tk, tv = (t.clone().requires_grad_() for t in (q, k, v))
    want = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal,
                                                           scale=0.4, enable_gqa=True)
    want.backward(g)
    eq, ek, ev = (ember.tensor(t.numpy(), requires_grad=True) for t in (q, k, v))
    got = FlashAttentionCpu.apply(eq, ek, ev, None, causal, 0.4)
    assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__
    got.backward(ember.tensor(g.numpy()))
    assert abs(got.detach().numpy() - want.detach().numpy()).max() < 1e-5
    for e, t in ((eq, tq), (ek, tk), (ev, tv)):
        assert e.grad.shape == tuple(t.grad.shape)
        assert abs(e.grad.numpy() - t.grad.numpy()).max() < 1e-5


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 2)),
    lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3)),
    lambda lib: lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(3, 2)),
])
def test_deepcopy_of_parametrized_module(make):
    import copy
    import pickle

    outs = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        m = make(lib)
        c = copy.deepcopy(m)
        assert type(c) is type(m) and c is not m
        assert sorted(c.state_dict()) == sorted(m.state_dict())
        assert all(a is not b for a, b in zip(c.parameters(), m.parameters()))
        with pytest.raises(RuntimeError, match="Serialization of parametrized modules"):
            pickle.dumps(m)
        c.eval()
        outs.append(c(lib.ones(2, 3)).detach().numpy())
    assert abs(outs[0] - outs[1]).max() < 1e-5
