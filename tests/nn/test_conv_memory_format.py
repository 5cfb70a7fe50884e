"""nn.utils.convert_conv2d_weight_memory_format / convert_conv3d_weight_memory_format against
torch: the module returned, which weights get new data, values kept, errors."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Conv2d(2, 3, 3), lib.nn.Sequential(
        lib.nn.ConvTranspose2d(3, 2, 2)), lib.nn.Conv3d(1, 1, 1), lib.nn.ConvTranspose3d(1, 1, 1),
        lib.nn.Linear(2, 2))


def _run(lib, fn_name, fmt_name):
    m = _model(lib)
    before = {n: (p, p.data_ptr(), p.detach().numpy().copy()) for n, p in m.named_parameters()}
    try:
        r = getattr(lib.nn.utils, fn_name)(m, getattr(lib, fmt_name))
    except Exception as e:     # noqa: BLE001
        return type(e).__name__, str(e)
    assert r is m
    out = []
    for n, p in m.named_parameters():
        old, ptr, val = before[n]
        np.testing.assert_array_equal(p.detach().numpy(), val)
        out.append((n, p is old, p.data_ptr() == ptr, p.requires_grad))
    return out


@pytest.mark.parametrize("fn_name", ["convert_conv2d_weight_memory_format",
                                     "convert_conv3d_weight_memory_format"])
@pytest.mark.parametrize("fmt_name", ["channels_last", "channels_last_3d", "contiguous_format",
                                      "preserve_format"])
def test_convert_conv_weight_memory_format(fn_name, fmt_name):
    assert _run(ember, fn_name, fmt_name) == _run(torch, fn_name, fmt_name)


def test_forward_unchanged():
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 5)).astype(np.float32)
    outs = []
    for lib in (torch, ember):
        m = lib.nn.utils.convert_conv2d_weight_memory_format(_model(lib)[0], lib.channels_last)
        outs.append(m(lib.tensor(x)).detach().numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-5)
