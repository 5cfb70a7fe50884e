"""Regressions found by the recommender / tabular / time-series programs
(tests/programs/p_r4rec_*.py), checked against torch."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("kwargs", [
    dict(mode="sum"),
    dict(mode="max", padding_idx=np.int64(2), max_norm=np.float32(1.5), norm_type=3),
    dict(mode="mean", scale_grad_by_freq=True, padding_idx=-1),
])
def test_embedding_bag_repr_uses_repr_of_fields(kwargs):
    # DLRM builds EmbeddingBag(n, m) from a NumPy array of sizes: torch prints np.int64(10)
    for n, m in ((np.int64(10), 4), (10, np.int64(4))):
        ours = ember.nn.EmbeddingBag(n, m, **kwargs)
        theirs = torch.nn.EmbeddingBag(n, m, **kwargs)
        assert repr(ours) == repr(theirs)
        assert repr(ember.nn.Sequential(ours)) == repr(torch.nn.Sequential(theirs))


def test_embedding_repr_uses_str_of_fields():
    kw = dict(padding_idx=np.int64(2), max_norm=np.float32(1.5), norm_type=3)
    assert repr(ember.nn.Embedding(np.int64(10), 4, **kw)) == \
        repr(torch.nn.Embedding(np.int64(10), 4, **kw))


@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("layers,bidir", [(1, False), (2, True)])
def test_rnn_output_node_and_grads(name, batch_first, layers, bidir):
    torch.manual_seed(0)
    ref = getattr(torch.nn, name)(3, 4, layers, batch_first=batch_first, bidirectional=bidir)
    ours = getattr(ember.nn, name)(3, 4, layers, batch_first=batch_first, bidirectional=bidir)
    ours.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in
                          ref.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 5, 3)).astype(np.float32)
    xt = torch.tensor(x, requires_grad=True)
    xe = ember.tensor(x, requires_grad=True)
    ot, oe = ref(xt)[0], ours(xe)[0]
    assert type(oe.grad_fn).__name__ == type(ot.grad_fn).__name__
    assert oe.shape == ot.shape and oe.stride() == ot.stride()
    np.testing.assert_allclose(oe.detach().numpy(), ot.detach().numpy(), rtol=1e-4, atol=1e-5)
    g = np.random.default_rng(1).standard_normal(tuple(ot.shape)).astype(np.float32)
    ot.backward(torch.tensor(g))
    oe.backward(ember.tensor(g))
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)
    for (n, pe), (_, pt) in zip(ours.named_parameters(), ref.named_parameters()):
        np.testing.assert_allclose(pe.grad.numpy(), pt.grad.numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=n)
