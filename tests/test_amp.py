"""``ember.amp`` against ``torch.amp``: GradScaler's loss scaling, skipped steps and scale
updates on the CPU, and autocast's state."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _train(L, grads_inf_at=(), steps=6, growth_interval=3):
    L.manual_seed(0)
    model = L.nn.Linear(3, 2)
    opt = L.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = L.amp.GradScaler("cpu", init_scale=8.0, growth_interval=growth_interval)
    x = L.arange(12.0).reshape(4, 3) / 10
    scales = []
    for step in range(steps):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        scaler.scale(loss).backward()
        if step in grads_inf_at:
            model.weight.grad[0, 0] = float("inf")
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    return [p.detach().numpy().copy() for p in model.parameters()], scales, scaler.state_dict()


@pytest.mark.parametrize("inf_at", [(), (1,), (0, 4)])
def test_grad_scaler_training(inf_at):
    pe, se, de = _train(ember, inf_at)
    pt, st, dt = _train(torch, inf_at)
    for a, b in zip(pe, pt):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert se == st
    assert de == dt


def test_grad_scaler_errors_and_disabled():
    for L in (ember, torch):
        p = L.nn.Parameter(L.ones(3))
        opt = L.optim.SGD([p], lr=0.1)
        s = L.amp.GradScaler("cpu")
        s.scale((p * 2).sum()).backward()
        s.unscale_(opt)
        np.testing.assert_array_equal(p.grad.numpy(), [2.0, 2.0, 2.0])
        with pytest.raises(RuntimeError, match="already been called"):
            s.unscale_(opt)
        with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
            s.step(opt, closure=lambda: 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            off = L.amp.GradScaler()           # (CUDA: not available here, so disabled)
        assert not off.is_enabled() and off.get_scale() == 1.0
        out = s.scale([L.ones(1), (L.ones(2),)])
        assert isinstance(out, list) and isinstance(out[1], tuple)


def test_autocast_state():
    for L in (ember, torch):
        assert not L.is_autocast_enabled("cpu")
        with L.autocast("cpu"):
            assert L.is_autocast_enabled("cpu") and not L.is_autocast_enabled()
            assert L.get_autocast_dtype("cpu") == L.bfloat16
            with L.autocast("cpu", enabled=False):
                assert not L.is_autocast_enabled("cpu")
        assert not L.is_autocast_enabled("cpu")
        with pytest.warns(UserWarning, match="target dtype is not supported"):
            ac = L.autocast("cpu", dtype=L.float64)
        with ac:
            assert not L.is_autocast_enabled("cpu")


def _ops_under_autocast(L):
    L.manual_seed(0)
    a, b = L.randn(2, 3), L.randn(3, 4)
    img, k = L.randn(1, 2, 5, 5), L.randn(3, 2, 3, 3)
    with L.autocast("cpu"):
        return [a @ b, L.mm(a, b), a + b[:, :3].T[:2], L.nn.functional.linear(a, b.T),
                L.exp(a), L.nn.functional.mse_loss(a.bfloat16(), a.bfloat16()),
                L.softmax(a.bfloat16(), 0), L.cat([a, a.bfloat16()]),
                L.addmm(a[:, :1].double().expand(2, 4).contiguous(), a.double(), b.double()),
                L.nn.functional.conv2d(img, k), L.bmm(a[None], b[None])]


def test_autocast_ops_match_torch():
    for e, t in zip(_ops_under_autocast(ember), _ops_under_autocast(torch)):
        assert str(e.dtype) == str(t.dtype)
        np.testing.assert_allclose(e.float().numpy(), t.float().numpy(), rtol=1e-2, atol=1e-2)


def _autocast_step(L):
    L.manual_seed(0)
    model = L.nn.Sequential(L.nn.Linear(5, 8), L.nn.ReLU(), L.nn.Linear(8, 3))
    x = L.randn(4, 5)
    with L.autocast("cpu", dtype=L.bfloat16):
        out = model(x)
        loss = L.nn.functional.mse_loss(out, L.zeros(4, 3))
    loss.backward()
    return out, loss, [p.grad for p in model.parameters()]


def test_autocast_training_step():
    oe, le, ge = _autocast_step(ember)
    ot, lt, gt = _autocast_step(torch)
    assert str(oe.dtype) == str(ot.dtype) == "torch.bfloat16"
    assert str(le.dtype) == str(lt.dtype) == "torch.float32"
    np.testing.assert_allclose(oe.float().detach().numpy(), ot.float().detach().numpy(),
                               rtol=1e-2, atol=1e-2)
    for a, b in zip(ge, gt):
        assert str(a.dtype) == str(b.dtype) == "torch.float32"
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=3e-2, atol=3e-2)
    assert type(oe.grad_fn).__name__ == type(ot.grad_fn).__name__
