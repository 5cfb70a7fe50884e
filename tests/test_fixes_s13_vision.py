"""Session 13 (H9): channels_last strides of activations/convolutions and pooling edge cases,
each compared with torch."""
import pytest

import ember


def _both(torch, fn):
    """``fn`` run under torch and ember (the library passed as its argument)."""
    return fn(torch), fn(ember)


def _cl(lib, shape=(2, 3, 4, 5), fmt="channels_last"):
    lib.manual_seed(0)
    return lib.randn(*shape).to(memory_format=getattr(lib, fmt))


@pytest.mark.parametrize("name", ["gelu", "gelu_tanh", "softmax", "log_softmax", "softmin",
                                  "logsigmoid"])
@pytest.mark.parametrize("layout", ["cl", "t"])
def test_activation_output_strides(torch, name, layout):
    def run(lib):
        F = lib.nn.functional
        fns = {"gelu": F.gelu, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
               "softmax": lambda t: F.softmax(t, 1), "log_softmax": lambda t: F.log_softmax(t, 1),
               "softmin": lambda t: F.softmin(t, 1), "logsigmoid": F.logsigmoid}
        x = _cl(lib) if layout == "cl" else lib.arange(12.).reshape(3, 4).t()
        x.requires_grad_()
        y = fns[name](x)
        y.backward(lib.ones_like(y))
        return y.stride(), x.grad.stride(), y.detach().flatten().tolist()
    t, e = _both(torch, run)
    assert t[:2] == e[:2]
    assert e[2] == pytest.approx(t[2], rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("cl_x,cl_w", [(1, 0), (0, 1), (1, 1)])
def test_conv3d_channels_last_3d(torch, transposed, cl_x, cl_w):
    def run(lib):
        F = lib.nn.functional
        lib.manual_seed(0)
        x = lib.randn(2, 3, 4, 5, 6)
        w = lib.randn(3, 4, 3, 1, 2) if transposed else lib.randn(4, 3, 3, 1, 2)
        if cl_x:
            x = x.to(memory_format=lib.channels_last_3d)
        if cl_w:
            w = w.to(memory_format=lib.channels_last_3d)
        y = (F.conv_transpose3d if transposed else F.conv3d)(x, w, stride=(1, 2, 1), padding=1)
        return y.stride(), y.is_contiguous(memory_format=lib.channels_last_3d), y.sum().item()
    t, e = _both(torch, run)
    assert t[:2] == e[:2]
    assert e[2] == pytest.approx(t[2], rel=1e-4)


def test_conv2d_1x1_weight_grad_strides(torch):
    def run(lib):
        x = _cl(lib).requires_grad_()
        w = lib.randn(4, 3, 1, 1).requires_grad_()
        seen = []
        w.register_hook(lambda g: seen.append(g.stride()))
        y = lib.nn.functional.conv2d(x, w)
        y.backward(lib.ones_like(y))
        return y.stride(), x.grad.stride(), seen
    t, e = _both(torch, run)
    assert t == e     # (w.grad itself: the engine's layout rule, logged for the lead)


def test_fractional_max_pool_draws_before_checks(torch):
    def run(lib):
        F = lib.nn.functional
        out = []
        for fn, shape in [(lambda x: F.fractional_max_pool2d(x, 4, output_size=2), (1, 2, 4, 5)),
                          (lambda x: F.fractional_max_pool2d(x, 2, output_size=2), (1, 2, 3, 4, 5)),
                          (lambda x: F.fractional_max_pool2d(x, 2, output_size=2), (4, 5)),
                          (lambda x: F.fractional_max_pool3d(x, 3, output_size=2), (1, 2, 4, 4, 4)),
                          (lambda x: F.fractional_max_pool3d(x, 2, output_size=2),
                           (1, 1, 2, 0, 4, 4, 4))]:
            x = lib.randn(*shape)
            lib.manual_seed(0)
            try:
                fn(x)
            except Exception as exc:
                out.append((type(exc).__name__, str(exc)))
            out.append(round(lib.rand(1).item(), 6))
        return out
    t, e = _both(torch, run)
    assert t == e


@pytest.mark.parametrize("fn,shape", [
    ("adaptive_avg_pool2d", (1, 0, 4, 4)), ("adaptive_avg_pool2d", (0, 4, 4)),
    ("adaptive_avg_pool2d", (1, 0, 0, 4)), ("adaptive_avg_pool2d", (2, 0, 4)),
    ("adaptive_avg_pool1d", (2, 0, 4)), ("adaptive_avg_pool1d", (0, 4)),
    ("adaptive_avg_pool3d", (0, 4, 4, 4)), ("adaptive_avg_pool3d", (1, 0, 4, 4, 4)),
    ("adaptive_max_pool2d", (1, 0, 4, 4))])
def test_adaptive_pool_empty_dims(torch, fn, shape):
    def run(lib):
        x = lib.randn(*shape, requires_grad=True)
        try:
            y = getattr(lib.nn.functional, fn)(x, 2)
            y = y[0] if isinstance(y, tuple) else y
            y.sum().backward()
            return tuple(y.shape), tuple(x.grad.shape)
        except Exception as exc:
            return type(exc).__name__, str(exc)
    t, e = _both(torch, run)
    assert t == e
