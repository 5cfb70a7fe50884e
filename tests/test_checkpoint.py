"""Activation checkpointing: same gradients as without it, far fewer saved bytes."""
import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.utils import checkpoint as _ckpt
from ember.utils.checkpoint import checkpoint, checkpoint_sequential
from ember.viz._graph import walk

DEPTH, WIDTH, BATCH = 20, 128, 64


class _ReLU(nn.Module):
    def forward(self, x):
        return x.relu()


def _mlp():
    """Linear, ReLU, Linear, ReLU ... (a plain list: only Linear and Module are needed)."""
    ember.manual_seed(0)
    layers = []
    for _ in range(DEPTH):
        layers += [nn.Linear(WIDTH, WIDTH), _ReLU()]
    return layers


def _params(model):
    return [p for m in model for p in m.parameters()]


def _forward(model, x):
    for m in model:
        x = m(x)
    return x


def _saved_activation_bytes(out, model):
    """Bytes of the arrays the graph saves for backward, parameters (and views of them, such as
    the ``weight.t()`` that addmm saves) excluded, each array counted once."""
    params = {p.data_ptr() for p in _params(model)}
    seen = {}
    for n in walk(out).nodes:
        for s in n["saved"]:
            if not s["none"] and s["array_id"] is not None and s["data_ptr"] not in params:
                seen[s["array_id"]] = s["bytes"]
    return sum(seen.values())


def _run(model, x, mode):
    if mode == "plain":
        return _forward(model, x).sum()
    if mode == "per_layer":
        h = x
        for k in range(0, 2 * DEPTH, 2):
            h = checkpoint(lambda t, k=k: model[k + 1](model[k](t)), h, use_reentrant=False)
        return h.sum()
    return checkpoint_sequential(model, 5, x, use_reentrant=False).sum()


def _measure(mode, monkeypatch):
    """(saved activation bytes after forward, peak during backward, gradients)."""
    model = _mlp()
    params = {p.data_ptr() for p in _params(model)}   # (views of them, weight.t(), too)
    x = ember.randn(BATCH, WIDTH, requires_grad=True)
    segments = []
    original = _ckpt._Frame.recompute

    def recompute(frame):
        original(frame)
        arrays = {t.data_ptr(): t._array.nbytes for t in frame.recomputed.values()}
        segments.append(sum(b for k, b in arrays.items() if k not in params))

    monkeypatch.setattr(_ckpt._Frame, "recompute", recompute)
    out = _run(model, x, mode)
    saved = _saved_activation_bytes(out, model)
    out.backward()
    # backward frees as it goes; checkpointing adds one recomputed segment at a time
    peak = saved + max(segments, default=0)
    grads = [p.grad.numpy().copy() for p in _params(model)] + [x.grad.numpy().copy()]
    return saved, peak, grads


def test_checkpointed_mlp_saves_memory_with_identical_gradients(capsys, monkeypatch):
    plain_saved, plain_peak, plain_grads = _measure("plain", monkeypatch)
    results = {}
    for mode in ("per_layer", "sequential"):
        saved, peak, grads = _measure(mode, monkeypatch)
        for a, b in zip(grads, plain_grads):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
        results[mode] = (saved, peak)
    # plain: each Linear saves its input, each ReLU its output, and ReLU k's output is
    # Linear k+1's input: x and the 20 ReLU outputs
    act = BATCH * WIDTH * 4
    assert plain_saved == (DEPTH + 1) * act
    assert results["per_layer"][0] == DEPTH * act   # only each segment's input is kept
    # 5 segments of 4 layers: 4 checkpointed segment inputs, the last segment runs plainly (5)
    assert results["sequential"][0] == 9 * act
    assert results["sequential"][1] < 0.7 * plain_peak
    with capsys.disabled():
        print("\n20-layer MLP (%dx%d, batch %d), saved activation bytes after forward: "
              "plain %d, checkpoint per layer %d, checkpoint_sequential(5) %d; peak during "
              "backward "
              "(held + one recomputed segment): plain %d, per layer %d, sequential %d"
              % (WIDTH, WIDTH, BATCH, plain_saved, results["per_layer"][0],
                 results["sequential"][0], plain_peak, results["per_layer"][1],
                 results["sequential"][1]))


def test_checkpoint_matches_torch(torch):
    rng = np.random.default_rng(0)
    xs, ws = rng.standard_normal((4, 5)), rng.standard_normal((5, 5))
    grads = []
    for lib in (ember, torch):
        from importlib import import_module
        ck = import_module(lib.__name__ + ".utils.checkpoint").checkpoint
        x = lib.tensor(xs, requires_grad=True)
        w = lib.tensor(ws, requires_grad=True)
        y = ck(lambda a: (a @ w).tanh() * a.exp(), x, use_reentrant=False)
        (y * y).sum().backward()
        grads.append((x.grad.numpy(), w.grad.numpy()))
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-10)


def test_checkpoint_replays_dropout_mask():
    x = ember.randn(50, 40, requires_grad=True)
    ember.manual_seed(3)
    y = checkpoint(lambda t: t * 2 * (ember.rand_like(t) > 0.5), x, use_reentrant=False)
    y.backward(ember.ones_like(y))
    kept = (y.detach().numpy() != 0)
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, 2.0, 0.0))


def test_checkpoint_warns_without_use_reentrant():
    x = ember.randn(3, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant"):
        checkpoint(lambda t: t.sin(), x)
