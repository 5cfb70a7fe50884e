"""Regressions found while running the r3gen programs (generative / image models): memory
formats (channels-last) carried through convolution gradients, interpolate, pixel/channel
shuffle and batch/group norm backward as torch does; parameter gradients contiguous."""
import pytest

import ember

torch = pytest.importorskip("torch")


def _both(fn):
    """``fn(lib)`` under ember and under torch."""
    return fn(ember), fn(torch)


def _strides(ts):
    return [None if t is None else tuple(t.stride()) for t in ts]


def _inputs(lib, shape, fmt, seed=0):
    gen = torch.Generator().manual_seed(seed)
    arr = torch.randn(shape, generator=gen, dtype=torch.float64).numpy()
    t = lib.tensor(arr)
    if fmt is not None:
        t = t.contiguous(memory_format=getattr(lib, fmt))
    return t.requires_grad_()


def _grad_out(lib, out, fmt, seed=1):
    g = _inputs(lib, tuple(out.shape), fmt, seed).detach()
    return g


@pytest.mark.parametrize("xfmt,wfmt,gfmt", [("channels_last", None, None),
                                            (None, "channels_last", None),
                                            ("channels_last", "channels_last", "channels_last"),
                                            (None, None, "channels_last"), (None, None, None)])
@pytest.mark.parametrize("groups", [1, 2])
def test_conv2d_grads_take_the_forward_memory_format(xfmt, wfmt, gfmt, groups):
    def run(lib):
        F = lib.nn.functional
        x = _inputs(lib, (2, 4, 5, 6), xfmt)
        w = _inputs(lib, (6, 4 // groups, 3, 3), wfmt, 2)
        wt = _inputs(lib, (4, 6 // groups, 3, 3), wfmt, 3)
        o = F.conv2d(x, w, padding=1, groups=groups, stride=(1, 2))
        gx, gw = lib.autograd.grad(o, (x, w), _grad_out(lib, o, gfmt))
        o2 = F.conv_transpose2d(x, wt, padding=1, groups=groups, stride=2)
        gx2, gw2 = lib.autograd.grad(o2, (x, wt), _grad_out(lib, o2, gfmt))
        return _strides([o, gx, gw, o2, gx2, gw2]), [gx.sum().item(), gw2.sum().item()]
    (se, ve), (st, vt) = _both(run)
    assert se == st
    assert ve == pytest.approx(vt, rel=1e-9)


def test_conv_transpose2d_weight_grad_is_contiguous():
    def run(lib):
        x = _inputs(lib, (2, 3, 4, 4), None)
        w = _inputs(lib, (3, 2, 3, 3), None)
        o = lib.nn.functional.conv_transpose2d(x, w, stride=2)
        o.sum().backward()
        return tuple(w.grad.stride()), w.grad.is_contiguous()
    e, t = _both(run)
    assert e == t == ((18, 9, 3, 1), True)


_MODES = [("nearest", False, 4), ("nearest-exact", False, 4), ("bilinear", False, 4),
          ("bilinear", True, 4), ("bicubic", False, 4), ("bicubic", True, 4),
          ("nearest", False, 5), ("nearest-exact", False, 5), ("trilinear", False, 5)]


@pytest.mark.parametrize("mode,aa,nd", _MODES)
@pytest.mark.parametrize("size", [False, True])
def test_interpolate_memory_format_forward_and_backward(mode, aa, nd, size):
    fmt = "channels_last" if nd == 4 else "channels_last_3d"
    shape = (2, 3, 4, 5) if nd == 4 else (1, 2, 3, 4, 5)

    def run(lib):
        F = lib.nn.functional
        out = []
        for xf in (None, fmt):
            x = _inputs(lib, shape, xf)
            kw = dict(size=tuple(s - 1 for s in shape[2:])) if size else dict(scale_factor=2)
            o = F.interpolate(x, mode=mode, antialias=aa, **kw)
            out.append(tuple(o.stride()))
            for gf in (None, fmt):
                g, = lib.autograd.grad(o, x, _grad_out(lib, o, gf), retain_graph=True)
                out.append(tuple(g.stride()))
        return out
    e, t = _both(run)
    assert e == t


@pytest.mark.parametrize("op", ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
                                "native_channel_shuffle"])
def test_shuffles_keep_channels_last(op):
    def run(lib):
        F = lib.nn.functional
        fn = {"pixel_shuffle": lambda t: F.pixel_shuffle(t, 2),
              "pixel_unshuffle": lambda t: F.pixel_unshuffle(t, 1),
              "channel_shuffle": lambda t: F.channel_shuffle(t, 2),
              "native_channel_shuffle": lambda t: lib.native_channel_shuffle(t, 4)}[op]
        out = []
        for xf in (None, "channels_last"):
            x = _inputs(lib, (2, 8, 3, 4), xf)
            o = fn(x)
            out.append((tuple(o.stride()), round(o.sum().item(), 8)))
            if op != "native_channel_shuffle":
                for gf in (None, "channels_last"):
                    g, = lib.autograd.grad(o, x, _grad_out(lib, o, gf), retain_graph=True)
                    out.append(tuple(g.stride()))
        return out
    e, t = _both(run)
    assert e == t


@pytest.mark.parametrize("kind", ["bn_train", "bn_eval", "bn_noaffine", "gn", "in", "ln"])
@pytest.mark.parametrize("gfmt", [None, "channels_last"])
def test_norm_backward_memory_format(kind, gfmt):
    def run(lib):
        nn = lib.nn
        lib.manual_seed(0)
        m = {"bn_train": lambda: nn.BatchNorm2d(4), "bn_eval": lambda: nn.BatchNorm2d(4).eval(),
             "bn_noaffine": lambda: nn.BatchNorm2d(4, affine=False),
             "gn": lambda: nn.GroupNorm(2, 4), "in": lambda: nn.InstanceNorm2d(4, affine=True),
             "ln": lambda: nn.LayerNorm([4, 3, 5])}[kind]().double()
        x = _inputs(lib, (2, 4, 3, 5), "channels_last")
        y = m(x)
        grads = lib.autograd.grad(y, [x] + list(m.parameters()), _grad_out(lib, y, gfmt))
        return tuple(y.stride()), _strides(grads), [g.sum().item() for g in grads]
    (ye, se, ve), (yt, st, vt) = _both(run)
    assert (ye, se) == (yt, st)
    assert ve == pytest.approx(vt, rel=1e-7, abs=1e-9)


def test_channels_last_through_a_generator_block():
    """conv -> batch norm -> ReLU -> upsample -> conv, all channels-last, with .grad layouts."""
    def run(lib):
        nn = lib.nn
        lib.manual_seed(0)
        net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                            nn.Upsample(scale_factor=2, mode="bilinear"),
                            nn.Conv2d(4, 2, 3, padding=1), nn.GroupNorm(1, 2), nn.SiLU())
        net = net.to(memory_format=lib.channels_last)
        x = lib.randn(2, 3, 4, 4).to(memory_format=lib.channels_last)
        y = net(x)
        grads = lib.autograd.grad(y.pow(2).sum(), list(net.parameters()))
        return (tuple(y.stride()), y.is_contiguous(memory_format=lib.channels_last),
                _strides(grads), grads[0].sum().item())
    e, t = _both(run)
    assert e[:3] == t[:3]
    assert abs(e[3] - t[3]) <= 1e-4 * abs(t[3])     # (float32 sums: the last bits may differ)


def test_leaf_grad_takes_the_parameter_layout():
    def run(lib):
        conv = lib.nn.Conv2d(3, 4, 3, padding=1).to(memory_format=lib.channels_last)
        x = lib.ones(2, 3, 4, 4).requires_grad_()
        conv(x.contiguous(memory_format=lib.channels_last)).sum().backward()
        return tuple(conv.weight.grad.stride()), tuple(x.grad.stride())
    e, t = _both(run)
    assert e == t
