"""torch 2's Function style (forward without ctx plus setup_context), a backward that returns a
non-tensor, and the repr of a custom Function's node, against torch."""
import re

import numpy as np
import pytest

import ember


def _scale(lib):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(x, k):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, k = inputs
            ctx.k = k
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * ctx.k + x * 0, None
    return Scale


def test_setup_context_style_matches_torch():
    torch = pytest.importorskip("torch")
    out = []
    for lib in (ember, torch):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = _scale(lib).apply(x, 3.0)
        (y * y).sum().backward()
        out.append((y.detach().numpy(), x.grad.numpy(), type(y.grad_fn).__name__))
    np.testing.assert_allclose(out[0][0], out[1][0])
    np.testing.assert_allclose(out[0][1], out[1][1])
    assert out[0][2] == out[1][2] == "ScaleBackward"


def test_setup_context_with_a_ctx_forward_fails_as_torch():
    torch = pytest.importorskip("torch")
    for lib in (ember, torch):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g):
                return g
        with pytest.raises(TypeError, match="missing"):
            Bad.apply(lib.ones(2, requires_grad=True))


def test_backward_returning_a_number_is_torchs_runtime_error():
    torch = pytest.importorskip("torch")
    msgs = []
    for lib in (ember, torch):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return 3
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            F.apply(x).sum().backward()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_node_reprs_as_torch():
    torch = pytest.importorskip("torch")
    reprs = []
    for lib in (ember, torch):
        x = lib.ones(2, requires_grad=True)
        reprs.append((repr(_scale(lib).apply(x, 2.0).grad_fn), repr((x * 2).grad_fn)))
    strip = lambda r: re.sub(r"0x[0-9a-f]+", "ADDR", r)  # noqa: E731
    assert [strip(r) for r in reprs[0]] == [strip(r) for r in reprs[1]]


def test_tensor_where_method_as_torch():
    torch = pytest.importorskip("torch")
    out = []
    for lib in (ember, torch):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = x.where(x > 0, 5.0)
        y.sum().backward()
        out.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(out[0][0], out[1][0])
    np.testing.assert_allclose(out[0][1], out[1][1])
