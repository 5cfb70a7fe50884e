"""Parity of the convolution and max-pool speed paths: the batch run in chunks, the columns
rebuilt in backward instead of kept, empty batches, non-finite inputs, ties after a ReLU, and
the memory a step keeps. Every value is compared against PyTorch."""
import tracemalloc

import numpy as np
import pytest

import ember
from ember.ops import conv as conv_ops
from oracle import compare


def r(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def F(lib):
    return lib.nn.functional


@pytest.mark.parametrize("chunk_bytes", [1, 3000])
@pytest.mark.parametrize("stride, padding, dilation, groups", [
    (1, 1, 1, 1), (1, (2, 0), 2, 2), (2, 1, 1, 1), ((1, 2), "valid", 1, 3),
])
def test_conv2d_in_batch_chunks(torch, monkeypatch, chunk_bytes, stride, padding, dilation,
                                groups):
    """One sample per chunk, and chunks of a few samples with a short last one."""
    monkeypatch.setattr(conv_ops, "_CHUNK_BYTES", chunk_bytes)
    compare(torch, lambda L, x, w, b: F(L).conv2d(x, w, b, stride=stride, padding=padding,
                                                  dilation=dilation, groups=groups),
            r(7, 6, 9, 8), r(6, 6 // groups, 3, 2, seed=1), r(6, seed=2))


def test_conv_in_batch_chunks_one_grad_and_1d(torch, monkeypatch):
    monkeypatch.setattr(conv_ops, "_CHUNK_BYTES", 2000)
    for need in ([True, False], [False, True]):
        compare(torch, lambda L, x, w: F(L).conv2d(x, w, padding=1), r(5, 3, 6, 6),
                r(4, 3, 3, 3, seed=1), requires_grad=need)
    compare(torch, lambda L, x, w, b: F(L).conv1d(x, w, b, padding=2, dilation=2),
            r(5, 4, 11), r(6, 4, 3, seed=1), r(6, seed=2))
    compare(torch, lambda L, x, w: F(L).conv2d(x, w, padding=1),
            r(6, 3, 10, 10, dtype=np.float32), r(8, 3, 3, 3, dtype=np.float32, seed=1),
            rtol=1e-4, atol=1e-4)


def test_conv_non_contiguous_input(torch):
    compare(torch, lambda L, x, w: F(L).conv2d(x.transpose(2, 3), w, padding=1),
            r(3, 4, 6, 7), r(5, 4, 3, 3, seed=1))
    compare(torch, lambda L, x, w: F(L).conv2d(x[:, ::2], w), r(3, 8, 6, 7),
            r(5, 4, 2, 2, seed=1))


@pytest.mark.parametrize("fn, x_shape, w_shape", [
    ("conv2d", (0, 3, 5, 5), (4, 3, 3, 3)), ("conv1d", (0, 3, 5), (4, 3, 3)),
    ("conv_transpose2d", (0, 3, 5, 5), (3, 4, 3, 3)),
])
def test_conv_empty_batch(torch, fn, x_shape, w_shape):
    out_channels = w_shape[1] if fn == "conv_transpose2d" else w_shape[0]
    compare(torch, lambda L, x, w, b: getattr(F(L), fn)(x, w, b, padding=1),
            np.zeros(x_shape), r(*w_shape), r(out_channels))


def test_conv_non_finite_input(torch):
    x = r(2, 3, 6, 6)
    x[0, 0, 2, 3] = np.inf
    x[1, 2, 0, 0] = -np.inf
    x[1, 1, 5, 5] = np.nan
    compare(torch, lambda L, x, w, b: F(L).conv2d(x, w, b, padding=1), x,
            r(4, 3, 3, 3, seed=1), r(4, seed=2))


@pytest.mark.parametrize("kernel", [2, 3, (2, 3), (1, 2), (3, 1)])
def test_max_pool_blocks_ties_after_relu(torch, kernel):
    """Non-overlapping windows full of zeros: the first maximum in row-major order wins."""
    x = np.maximum(r(2, 3, 6, 12, dtype=np.float32), 0)
    x[0, 0, :3, :3] = 0.0
    x[1, 2, :, 6:] = 1.5
    compare(torch, lambda L, x: F(L).max_pool2d(x, kernel, return_indices=True), x)
    compare(torch, lambda L, x: F(L).max_pool2d(F(L).relu(x), kernel), r(2, 3, 6, 12))


def test_max_pool_indices_freed_after_backward(torch):
    """The window positions are saved like torch's indices: a second backward needs
    ``retain_graph``, and with it the gradients add up."""
    for lib in (ember, torch):
        x = lib.tensor(r(2, 3, 4, 4), requires_grad=True)
        y = F(lib).max_pool2d(x, 2).sum()
        y.backward(retain_graph=True)
        y.backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.backward()
        assert float(x.grad.sum()) == 2 * 2 * 3 * 2 * 2


def test_conv_keeps_no_columns():
    """Between forward and backward a conv holds its output, not the kh * kw times larger
    columns of its input."""
    x = ember.tensor(r(8, 16, 32, 32, dtype=np.float32))
    conv = ember.nn.Conv2d(16, 16, 3, padding=1)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        y = conv(x)
        kept = tracemalloc.get_traced_memory()[0] - base
        y.sum().backward()
    finally:
        tracemalloc.stop()
    assert kept < 1.5 * y.detach().numpy().nbytes, kept
