"""Channels-last (and channels-last-3d) layouts carried through the rest of a CNN as torch does:
pooling, padding, area interpolation, dropout, the first ``.grad`` of a channels-last leaf
(torch's AccumulateGrad takes the parameter's strides), and a small ResNet block trained one
step in channels-last. Each case compares strides, ``is_contiguous(memory_format=...)``, values
and gradients with torch."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

_FMT = {4: "channels_last", 5: "channels_last_3d"}


def _input(lib, shape, fmt="cl", seed=0):
    arr = np.random.RandomState(seed).randn(*shape)
    t = lib.tensor(arr)
    if fmt == "cl":
        t = t.contiguous(memory_format=getattr(lib, _FMT[len(shape)]))
    return t.requires_grad_()


def _layout(lib, t):
    fmt = _FMT.get(t.dim())
    return (tuple(t.stride()), t.is_contiguous(),
            None if fmt is None else t.is_contiguous(memory_format=getattr(lib, fmt)))


def _run(lib, f, shape, fmt="cl", gfmt="same"):
    """``f``'s output and input gradient (layouts and values); the incoming gradient laid out as
    the output (``same``) or C-contiguous (``c``)."""
    x = _input(lib, shape, fmt)
    y = f(lib, lib.nn.functional, x)
    go = y.detach() * 0 + 1 if gfmt == "same" else lib.ones(tuple(y.shape), dtype=y.dtype)
    g, = lib.autograd.grad(y, x, go)
    return _layout(lib, y), _layout(lib, g), y.detach().numpy(), g.numpy()


def _check(f, shape, fmt="cl", gfmt="same"):
    e = _run(ember, f, shape, fmt, gfmt)
    t = _run(torch, f, shape, fmt, gfmt)
    assert e[0] == t[0], "output layout"
    assert e[1] == t[1], "gradient layout"
    np.testing.assert_allclose(e[2], t[2], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(e[3], t[3], rtol=1e-10, atol=1e-12)


S4, S5 = (2, 4, 6, 6), (2, 4, 4, 6, 6)

_LAYERS = {
    "max_pool2d": (lambda L, F, x: F.max_pool2d(x, 2), S4),
    "max_pool2d_overlap_pad": (lambda L, F, x: F.max_pool2d(x, 3, 1, 1), S4),
    "max_pool2d_indices": (lambda L, F, x: F.max_pool2d(x, 2, return_indices=True)[0], S4),
    "max_pool3d": (lambda L, F, x: F.max_pool3d(x, 2), S5),
    "avg_pool2d": (lambda L, F, x: F.avg_pool2d(x, 2), S4),
    "avg_pool2d_pad": (lambda L, F, x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), S4),
    "avg_pool3d": (lambda L, F, x: F.avg_pool3d(x, 2), S5),
    "lp_pool2d": (lambda L, F, x: F.lp_pool2d(x, 2, 2), S4),
    "adaptive_avg_pool2d": (lambda L, F, x: F.adaptive_avg_pool2d(x, 3), S4),
    "adaptive_avg_pool2d_up": (lambda L, F, x: F.adaptive_avg_pool2d(x, 4), S4),
    "adaptive_avg_pool3d": (lambda L, F, x: F.adaptive_avg_pool3d(x, 3), S5),
    "adaptive_max_pool2d": (lambda L, F, x: F.adaptive_max_pool2d(x, 4), S4),
    "adaptive_max_pool2d_1x1": (lambda L, F, x: F.adaptive_max_pool2d(x, 1), S4),
    "adaptive_max_pool3d": (lambda L, F, x: F.adaptive_max_pool3d(x, 3), S5),
    "pad_constant": (lambda L, F, x: F.pad(x, (1, 1, 2, 2)), S4),
    "pad_constant_crop": (lambda L, F, x: F.pad(x, (-1, 1, 2, -2)), S4),
    "pad_constant_zero": (lambda L, F, x: F.pad(x, (0, 0, 0, 0)), S4),
    "pad_constant_channels": (lambda L, F, x: F.pad(x, (0, 0, 0, 0, 1, 1)), S4),
    "pad_reflect": (lambda L, F, x: F.pad(x, (1, 1, 2, 2), mode="reflect"), S4),
    "pad_replicate": (lambda L, F, x: F.pad(x, (1, 1, 2, 2), mode="replicate"), S4),
    "pad_circular": (lambda L, F, x: F.pad(x, (1, 1, 2, 2), mode="circular"), S4),
    "pad_constant_3d": (lambda L, F, x: F.pad(x, (1, 1, 2, 2, 1, 0)), S5),
    "pad_reflect_3d": (lambda L, F, x: F.pad(x, (1, 1, 2, 2, 1, 1), mode="reflect"), S5),
    "pad_replicate_3d": (lambda L, F, x: F.pad(x, (1, 1, 2, 2, 1, 1), mode="replicate"), S5),
    "pad_circular_3d": (lambda L, F, x: F.pad(x, (1, 1, 2, 2, 1, 1), mode="circular"), S5),
    "module_zero_pad": (lambda L, F, x: L.nn.ZeroPad2d(1)(x), S4),
    "module_reflection_pad": (lambda L, F, x: L.nn.ReflectionPad2d(1)(x), S4),
    "module_max_pool": (lambda L, F, x: L.nn.MaxPool2d(3, 2, 1)(x), S4),
    "module_adaptive_avg_pool": (lambda L, F, x: L.nn.AdaptiveAvgPool2d((2, 3))(x), S4),
    "interpolate_area": (lambda L, F, x: F.interpolate(x, size=(3, 3), mode="area"), S4),
    "interpolate_area_3d": (lambda L, F, x: F.interpolate(x, size=(2, 3, 3), mode="area"), S5),
    "dropout_eval": (lambda L, F, x: F.dropout(x, 0.5, training=False), S4),
    "dropout2d_eval": (lambda L, F, x: F.dropout2d(x, 0.5, training=False), S4),
    "add_two_channels_last": (lambda L, F, x: x + x * 2, S4),
    "pixel_unshuffle": (lambda L, F, x: F.pixel_unshuffle(x, 2), S4),
}


@pytest.mark.parametrize("name", sorted(_LAYERS))
def test_layer_keeps_torchs_layout(name):
    f, shape = _LAYERS[name]
    _check(f, shape)


@pytest.mark.parametrize("name", ["max_pool2d", "avg_pool2d", "adaptive_avg_pool2d",
                                  "adaptive_max_pool2d", "max_pool3d", "pad_constant",
                                  "pad_reflect", "pad_replicate", "interpolate_area"])
def test_gradient_layout_with_a_contiguous_incoming_gradient(name):
    # pooling and reflect/replicate take the input's layout; a constant pad the gradient's
    f, shape = _LAYERS[name]
    _check(f, shape, gfmt="c")


@pytest.mark.parametrize("name", ["max_pool2d", "avg_pool2d", "adaptive_max_pool2d",
                                  "pad_constant", "pad_reflect"])
def test_contiguous_input_with_a_channels_last_gradient(name):
    f, shape = _LAYERS[name]

    def run(lib):
        x = _input(lib, shape, fmt="c")
        y = f(lib, lib.nn.functional, x)
        go = lib.ones(tuple(y.shape), dtype=y.dtype).contiguous(
            memory_format=lib.channels_last)
        g, = lib.autograd.grad(y, x, go)
        return _layout(lib, y), _layout(lib, g)
    assert run(ember) == run(torch)


@pytest.mark.parametrize("shape", [(2, 4, 6, 6), (1, 4, 5, 5), (2, 4, 4, 6, 6)])
def test_global_average_pool_output_strides(shape):
    # torch restrides the 1x1 mean to (C, 1, C, C): channels-last for a channels-last input
    def run(lib):
        x = _input(lib, shape)
        f = lib.nn.functional.adaptive_avg_pool2d if len(shape) == 4 else \
            lib.nn.functional.adaptive_avg_pool3d
        y = f(x, 1)
        return _layout(lib, y), y.detach().numpy()
    (le, ve), (lt, vt) = run(ember), run(torch)
    assert le == lt
    np.testing.assert_allclose(ve, vt, rtol=1e-12)


def test_max_pool_indices_layout():
    def run(lib):
        F = lib.nn.functional
        x = _input(lib, S4)
        i2 = F.max_pool2d(x, 2, return_indices=True)[1]
        i3 = F.max_pool3d(_input(lib, S5), 2, return_indices=True)[1]
        ia = F.adaptive_max_pool2d(x, 3, return_indices=True)[1]
        return [(_layout(lib, i), i.numpy().tolist()) for i in (i2, i3, ia)]
    assert run(ember) == run(torch)


def test_unbatched_input_stays_contiguous():
    def run(lib):
        x = _input(lib, (4, 6, 6), fmt="c").detach().permute(1, 2, 0).contiguous() \
            .permute(2, 0, 1).requires_grad_()
        F = lib.nn.functional
        ys = [F.max_pool2d(x, 2), F.avg_pool2d(x, 2), F.pad(x, (1, 1))]
        return [tuple(y.stride()) for y in ys]
    assert run(ember) == run(torch)


def test_leaf_grad_takes_a_dense_leafs_strides():
    def run(lib):
        out = []
        w = lib.tensor(np.arange(12.0).reshape(3, 4)).t().detach().requires_grad_()
        (w * 2).sum().backward()
        out.append(tuple(w.grad.stride()))
        v = lib.tensor(np.arange(32.0).reshape(4, 8))[:, ::2].t().detach().requires_grad_()
        (v * 2).sum().backward()          # not dense: C order
        out.append(tuple(v.grad.stride()))
        x = _input(lib, S4)
        lib.nn.functional.max_pool2d(x, 2).sum().backward()
        out.append(tuple(x.grad.stride()))
        c = _input(lib, S4, fmt="c")
        (c.contiguous(memory_format=lib.channels_last) * 3).sum().backward()
        out.append(tuple(c.grad.stride()))
        return out, w.grad.numpy().tolist()
    assert run(ember) == run(torch)


def test_leaf_grad_accumulates_into_its_layout():
    def run(lib):
        conv = lib.nn.Conv2d(3, 4, 3, padding=1).double().to(memory_format=lib.channels_last)
        x = _input(lib, (2, 3, 5, 5), fmt="c")
        for _ in range(2):
            conv(x).sum().backward()
        return tuple(conv.weight.grad.stride()), conv.weight.grad.numpy()
    (se, ve), (st, vt) = run(ember), run(torch)
    assert se == st
    np.testing.assert_allclose(ve, vt, rtol=1e-10)


def _block(lib):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 8, 3, padding=1, bias=False)
            self.bn0 = nn.BatchNorm2d(8)
            self.pool = nn.MaxPool2d(3, 2, 1)
            self.conv1 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(8)
            self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(8)
            self.down = nn.Conv2d(8, 16, 3, stride=2, bias=False)
            self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=2)
            self.gap = nn.AdaptiveAvgPool2d(1)
            self.drop = nn.Dropout(0.0)
            self.fc = nn.Linear(16, 5)

        def forward(self, x):
            x = self.pool(self.bn0(self.stem(x)).clamp(min=0))
            r = self.bn2(self.conv2(self.bn1(self.conv1(x)).clamp(min=0)))
            x = (x + r).clamp(min=0)
            x = self.dw(nn.functional.pad(self.down(x), (1, 1, 1, 1)))
            x = nn.functional.avg_pool2d(x, 2)
            return self.fc(self.drop(self.gap(x).flatten(1)))
    return Block()


def test_resnet_block_channels_last_step():
    tmodel = _block(torch).double()
    emodel = _block(ember).double()
    emodel.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tmodel.state_dict().items()})

    def run(lib, model):
        model = model.to(memory_format=lib.channels_last)
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x = _input(lib, (2, 3, 12, 12))
        loss = model(x).square().mean()
        loss.backward()
        grads = {n: (tuple(p.grad.stride()), p.grad.numpy().copy())
                 for n, p in model.named_parameters()}
        opt.step()
        params = {n: (tuple(p.stride()), p.detach().numpy().copy())
                  for n, p in model.named_parameters()}
        return loss.item(), tuple(x.grad.stride()), x.grad.numpy(), grads, params
    e, t = run(ember, emodel), run(torch, tmodel)
    np.testing.assert_allclose(e[0], t[0], rtol=1e-10)
    assert e[1] == t[1]
    np.testing.assert_allclose(e[2], t[2], rtol=1e-8, atol=1e-12)
    assert e[3].keys() == t[3].keys()
    for n in t[3]:
        assert e[3][n][0] == t[3][n][0], n
        np.testing.assert_allclose(e[3][n][1], t[3][n][1], rtol=1e-8, atol=1e-12, err_msg=n)
        assert e[4][n][0] == t[4][n][0], n
        np.testing.assert_allclose(e[4][n][1], t[4][n][1], rtol=1e-8, atol=1e-12, err_msg=n)


@pytest.mark.xfail(strict=True, reason="ops/conversion.py Tensor.to/contiguous(memory_format="
                   "channels_last) keep the C strides of a weight with size-1 dims (1x1: "
                   "(8, 1, 1, 1), depthwise: (9, 9, 3, 1)); torch's suggest_memory_format calls "
                   "them contiguous and copies them to (8, 1, 8, 8) / (9, 1, 3, 1), and "
                   "AccumulateGrad then gives their .grad those strides")
@pytest.mark.parametrize("cin,groups,k", [(8, 1, 1), (16, 16, 3)])
def test_size_one_dim_weight_to_channels_last(cin, groups, k):
    def run(lib):
        conv = lib.nn.Conv2d(cin, 16, k, groups=groups).to(memory_format=lib.channels_last)
        x = lib.ones(1, cin, 3, 3).contiguous(memory_format=lib.channels_last)
        conv(x).sum().backward()
        return tuple(conv.weight.stride()), tuple(conv.weight.grad.stride())
    assert run(ember) == run(torch)
