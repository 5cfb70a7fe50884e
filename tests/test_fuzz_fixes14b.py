"""Regression tests (against torch) for fuzzer mismatch classes of seeds 34-37 (session 14)."""
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import ember
from ember.ops import normalization

sys.path.insert(0, str(Path(__file__).parent))
from fuzz.ops import case_from_json, check_case  # noqa: E402

# (a bfloat16 batch whose variance cancels: torch's kernel takes it about the rounded mean)
BN_CASE = ('["torch", "native_batch_norm", [["T", [2, 3], "bfloat16", "u", "s", false], '
           '["T", [3], "bfloat16", "u", "c", true], ["T", [3], "bfloat16", "x", "c", false], '
           '["T", [3], "bfloat16", "u", "c", false], ["T", [3], "bfloat16", "pos", "c", false], '
           'true, 1.0, 0.0], {}, 3500106]')


def test_fuzzer_case_native_batch_norm(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check_case(case_from_json(json.loads(BN_CASE)), torch, timeout=60) is None


def _batches(seed, count):
    """Small batches in every layout torch's CPU kernels tell apart (contiguous with and
    without spatial dims, channels-last, strided), each channel offset so that its
    variance cancels."""
    rng = np.random.default_rng(seed)
    for k in range(count):
        nd = 2 + k % 4
        shape = [2 + k % 3] + [1 + (k * 7 + i) % 4 for i in range(nd - 1)]
        a = rng.uniform(-2, 2, size=shape) * 10.0 ** rng.integers(-3, 1) \
            + rng.uniform(-3, 3, size=(1, shape[1]) + (1,) * (nd - 2))
        yield a, k % 3


def _layout(L, x, lay):
    if lay == 1:
        return x.transpose(0, -1).contiguous().transpose(0, -1)
    if lay == 2 and x.dim() in (4, 5):
        return x.contiguous(memory_format=L.channels_last if x.dim() == 4
                            else L.channels_last_3d)
    return x


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("mixed", [False, True])
def test_batch_norm_16bit_statistics(dtype, mixed, torch):
    """Training batch norm of a 16-bit input: the output and running variance as torch's CPU
    kernels give them (bfloat16 rounds the sum of squares, float16 keeps float statistics)."""
    for a, lay in _batches(3 + mixed, 60):
        res = []
        for L in (torch, ember):
            x = _layout(L, L.tensor(a, dtype=L.float32).to(getattr(L, dtype)), lay)
            pdt = L.float32 if mixed else getattr(L, dtype)
            c = a.shape[1]
            w, rm, rv = L.ones(c, dtype=pdt), L.zeros(c, dtype=pdt), L.ones(c, dtype=pdt)
            out = L.nn.functional.batch_norm(x, rm, rv, w, None, True, 0.5, 1e-5)
            res.append([out.float().numpy(), rv.float().numpy()])
        for e, t in zip(res[1], res[0]):
            np.testing.assert_allclose(e, t, rtol=1e-2, atol=1e-2, err_msg=str((a, lay)))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_batch_stats_match_native_batch_norm(dtype, torch):
    """``batch_stats`` gives torch's ``native_batch_norm`` saved mean and inverse std (exactly
    in the 16-bit dtype; float32 with float32 parameters)."""
    for a, lay in _batches(5, 60):
        mixed = lay == 0
        x = _layout(torch, torch.tensor(a, dtype=torch.float32).to(getattr(torch, dtype)), lay)
        w = torch.ones(a.shape[1]) if mixed else None
        _, mean, invstd = torch.native_batch_norm(x, w, None, None, None, True, 0.5, 1e-5)
        y = _layout(ember, ember.tensor(a, dtype=ember.float32).to(getattr(ember, dtype)), lay)
        axes = (0,) + tuple(range(2, a.ndim))
        got = normalization.batch_stats(y._array, ember.ones(a.shape[1]) if mixed else None,
                                        None, axes, 1e-5)
        for g, t in zip(got, (mean, invstd)):
            assert str(g.dtype) == str(t.dtype).split(".")[1]
            np.testing.assert_allclose(g.astype(np.float32).reshape(-1), t.float().numpy(),
                                       rtol=1e-6 if mixed else 0, err_msg=str((a, lay)))
