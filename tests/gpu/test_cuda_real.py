"""On real CUDA (CuPy and a GPU): the op database, layer parity and the seed programs.

Skipped, with the reason (CuPy missing, or no GPU/driver), everywhere else; ``pytest -rs``
prints it. ``benchmarks/gpu_check.sh`` runs this file on a GPU machine.
"""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import ember
from ember.backend import cuda_status

OK, WHY = cuda_status()
pytestmark = pytest.mark.skipif(not OK, reason="no real CUDA here: %s" % WHY)

ROOT = pathlib.Path(__file__).resolve().parents[2]
SEEDS = ROOT / ".." / "shared" / "seed_programs"
PROGRAMS = sorted(SEEDS.glob("s0*.py")) if SEEDS.is_dir() else []


def _opdb_cases():
    if not OK:
        return []
    from opdb.test_opdb import _cases
    return _cases("strict")


def test_cuda_is_real():
    b = ember.backend.backend_for("cuda")
    assert type(b).__name__ == "CupyBackend" and b.xp.__name__ == "cupy"
    x = ember.ones(2, device="cuda")
    assert x.device == ember.device("cuda", ember.cuda.current_device())
    assert type(x._array).__module__.startswith("cupy")


@pytest.mark.parametrize("op, dtype, sample", _opdb_cases())
def test_opdb_on_cuda(torch, op, dtype, sample):
    """Every op-database entry on the GPU against torch (CPU, on host copies), float64 and the
    entry's last dtype as on the strict device, with the CPU tolerances."""
    from oracle import compare, tol
    from opdb import grad_mask
    if isinstance(sample, Exception):
        raise sample
    rtol = atol = None
    if op.rtol is not None or op.atol is not None:
        default_rtol, default_atol = tol(dtype)
        rtol = default_rtol if op.rtol is None else op.rtol
        atol = default_atol if op.atol is None else op.atol
    compare(torch, op.fn, *sample, grad=op.differentiable, rtol=rtol, atol=atol,
            check_dtype=op.check_dtype, requires_grad=grad_mask(op, sample),
            device=str(ember.device("cuda", ember.cuda.current_device())))


def _layers():
    nn = ember.nn
    return {
        "linear": (lambda: nn.Linear(16, 8), (4, 16)),
        "conv2d": (lambda: nn.Conv2d(3, 4, 3, padding=1, stride=2), (2, 3, 9, 9)),
        "conv1d": (lambda: nn.Conv1d(3, 4, 5, dilation=2), (2, 3, 20)),
        "maxpool": (lambda: nn.Sequential(nn.Conv2d(2, 2, 1), nn.MaxPool2d(2)), (2, 2, 6, 6)),
        "batchnorm": (lambda: nn.BatchNorm1d(8), (6, 8)),
        "layernorm": (lambda: nn.LayerNorm(8), (3, 5, 8)),
        "embedding_bag": (lambda: nn.Sequential(nn.Linear(4, 4), nn.GELU()), (3, 4)),
        "lstm": (lambda: nn.LSTM(5, 7, batch_first=True), (2, 4, 5)),
        "mha": (lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
                (2, 5, 8)),
    }


@pytest.mark.parametrize("name", sorted(_layers()))
def test_layer_parity_gpu_vs_cpu(name):
    """Forward and parameter gradients on the GPU equal the CPU run (itself checked against
    torch by the nn tests), float32 tolerances."""
    make, shape = _layers()[name]
    ember.manual_seed(0)
    cpu = make()
    ember.manual_seed(0)
    gpu = make().cuda()
    x = ember.randn(*shape)
    outs = []
    for m, a in ((cpu, x), (gpu, x.cuda())):
        out = m(a)
        out = out[0] if isinstance(out, tuple) else out
        (out * ember.linspace(-1, 1, out.numel(), device=out.device).reshape(out.shape)) \
            .sum().backward()
        outs.append(out)
    assert outs[1].is_cuda
    np.testing.assert_allclose(outs[1].detach().cpu().numpy(), outs[0].detach().numpy(),
                               rtol=1e-4, atol=1e-5)
    for (n, pc), pg in zip(cpu.named_parameters(), gpu.parameters()):
        assert pg.grad.is_cuda, n
        np.testing.assert_allclose(pg.grad.cpu().numpy(), pc.grad.numpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=n)


@pytest.mark.skipif(not PROGRAMS, reason="no seed programs at %s" % SEEDS)
@pytest.mark.parametrize("program", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_seed_program_on_cuda(program):
    """Each seed program with CUDA as the default device (``.numpy()`` of a device tensor
    raises there, as torch's, for the one program that calls it on a device tensor)."""
    env = dict(os.environ, TORCH_LIB="ember_on_cuda")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests" / "gpu")])
    r = subprocess.run([sys.executable, str(program)], cwd=str(ROOT), env=env,
                       capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    if program.name == "s002_softplus_stable.py":
        assert r.returncode != 0 and "can't convert cuda:0 device type tensor to numpy" in out
    else:
        assert r.returncode == 0, "\n".join(out.strip().splitlines()[-15:])


def test_notes_two_layer_net_with_cuda_float_tensor(tmp_path):
    seed = SEEDS / "s002_mlp_diabetes.py"
    if not seed.is_file():
        pytest.skip("no seed program at %s" % seed)
    gpu = tmp_path / "mlp_cuda.py"
    gpu.write_text(seed.read_text().replace("dtype = torch.FloatTensor\n",
                                            "dtype = torch.cuda.FloatTensor\n"))
    env = dict(os.environ, TORCH_LIB="ember",
               PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests" / "gpu")]))
    r = subprocess.run([sys.executable, str(gpu)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "RESULT: ok" in r.stdout, r.stdout[-2000:] + r.stderr[-2000:]
