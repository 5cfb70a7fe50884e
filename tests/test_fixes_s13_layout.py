"""Memory-layout rules against torch (session 13, H13): ``*_like`` with preserve_format,
``to``/``clone``/``contiguous``/``empty`` with ``memory_format``, and the layout of element-wise
results for mixed-layout operands (torch's TensorIterator)."""
import pytest

import ember


def _inputs(lib):
    """Dense permuted, channels_last, sliced and size-1 layouts."""
    x = lib.arange(1., 25).view(2, 3, 4)
    cl = lib.arange(48.).view(2, 3, 2, 4).contiguous(memory_format=lib.channels_last)
    return [x, x.transpose(0, 1), x.permute(2, 0, 1), x[:, :, ::2], x.transpose(0, 1)[..., 1:],
            cl, cl[..., ::2], lib.arange(8.).view(2, 1, 4).permute(1, 0, 2),
            lib.arange(6.).view(3, 2, 1).permute(2, 0, 1),
            lib.arange(240.).view(2, 3, 4, 5, 2).to(memory_format=lib.channels_last_3d)]


_LIKE = [lambda L, x: L.empty_like(x), lambda L, x: L.zeros_like(x),
         lambda L, x: L.ones_like(x, dtype=L.float64), lambda L, x: L.full_like(x, 7),
         lambda L, x: L.rand_like(x), lambda L, x: L.randn_like(x),
         lambda L, x: L.randint_like(x, 9), lambda L, x: x.clone(),
         lambda L, x: L.empty_like(x, memory_format=L.contiguous_format),
         lambda L, x: x.to(L.float64), lambda L, x: x.double(),
         lambda L, x: x.to(memory_format=L.contiguous_format),
         lambda L, x: x.to(L.float64, memory_format=L.contiguous_format),
         lambda L, x: x.clone(memory_format=L.contiguous_format), lambda L, x: x.contiguous()]


@pytest.mark.parametrize("i", range(10))
@pytest.mark.parametrize("f", range(len(_LIKE)))
def test_like_layout_and_random_order(torch, i, f):
    """Strides and (seeded) values of the ``*_like`` factories and copies as torch's."""
    tx, ex = _inputs(torch)[i], _inputs(ember)[i]
    torch.manual_seed(5)
    ember.manual_seed(5)
    t, e = _LIKE[f](torch, tx), _LIKE[f](ember, ex)
    assert e.stride() == t.stride() and e.dtype.__repr__() == t.dtype.__repr__()
    if f not in (0, 8):     # (empty_like's values are uninitialised)
        assert e.flatten().tolist() == pytest.approx(t.flatten().tolist(), rel=1e-6)


def test_memory_format_arguments(torch):
    """``to``/``contiguous``/``clone``/``empty``/``*_like`` with an explicit memory_format."""
    def run(L):
        out = []
        cl = L.arange(24.).view(2, 3, 2, 2).contiguous(memory_format=L.channels_last)
        xt = L.arange(1., 25).view(2, 3, 4).transpose(0, 1)
        out += [cl.to(memory_format=L.contiguous_format).stride(),
                L.empty(2, 3, 6, 5, memory_format=L.channels_last).stride(),
                L.zeros_like(xt.view(3, 2, 2, 2), memory_format=L.channels_last).stride(),
                cl.to(memory_format=L.channels_last) is cl,
                xt.to(memory_format=L.contiguous_format) is xt,
                L.empty_strided((2, 3, 4), (1, 2, 6)).stride(),
                L.empty_like(L.empty_strided((2, 3, 4), (1, 2, 6))).stride()]
        for f in (lambda: xt.to(memory_format=L.channels_last),
                  lambda: L.empty(2, 3, memory_format=L.preserve_format),
                  lambda: L.empty(2, 3, memory_format=L.channels_last),
                  lambda: xt.contiguous(memory_format=L.preserve_format),
                  lambda: L.rand_like(xt, memory_format=L.channels_last_3d)):
            try:
                out.append(f().stride())
            except Exception as e:
                out.append((type(e).__name__, str(e)))
        return out
    assert run(ember) == run(torch)


def test_elementwise_output_layout(torch):
    """Binary/unary results follow torch's TensorIterator layout for mixed layouts."""
    def run(L):
        xt = L.arange(1., 25).view(2, 3, 4).transpose(0, 1)
        n = L.ones(3, 2, 1)
        cl = L.randn(2, 3, 4, 5).to(memory_format=L.channels_last)
        bias = L.randn(1, 3, 1, 1)
        out = [(xt * n).stride(), (n * xt).stride(), (xt + n.double()).stride(),
               (xt / 2).stride(), (-xt).stride(), (cl + bias).stride(), (bias - cl).stride(),
               (cl * cl.contiguous()).stride(), (cl.contiguous() * cl).stride(),
               L.maximum(xt, n).stride(), (xt[..., ::2] * 3).stride(),
               (xt * xt.contiguous()).stride(), (xt.contiguous() * xt).stride()]
        return out
    assert run(ember) == run(torch)
