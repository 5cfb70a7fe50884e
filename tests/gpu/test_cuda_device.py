"""``device='cuda'`` through ember's real code paths, on a fake GPU (``fake_cupy``: the strict
test device dressed as CuPy), and the errors without CuPy. Torch (CPU) is the oracle for
values, node names and messages; its CUDA messages are quoted from its source."""
import io
import sys
import types
import warnings

import numpy as np
import pytest

import ember
from ember.backend import _cupy

MIX = ("Expected all tensors to be on the same device, but found at least two devices, "
       "cuda:0 and cpu!")


def test_creation_device_and_repr(cuda, torch):
    x = ember.ones(2, 3, device="cuda")
    assert x.device == ember.device("cuda", 0) and str(x.device) == "cuda:0"
    assert repr(x.device) == repr(torch.device("cuda", 0))
    assert x.is_cuda and x.get_device() == 0 and x.device.type == "cuda"
    assert repr(x) == repr(torch.ones(2, 3))[:-1] + ", device='cuda:0')"
    assert repr(ember.tensor(1.5, device="cuda:0")) == "tensor(1.5000, device='cuda:0')"
    assert ember.zeros(2, device=ember.device("cuda")).device == ember.device("cuda:0")
    assert ember.randn(3, device="cuda").device.type == "cuda"
    assert ember.arange(4, device="cuda").cpu().tolist() == [0, 1, 2, 3]
    with ember.device("cuda"):
        assert ember.empty(1).is_cuda
    ember.set_default_device("cuda")
    try:
        assert ember.ones(1).is_cuda and ember.get_default_device().type == "cuda"
    finally:
        ember.set_default_device(None)
    assert not ember.ones(1).is_cuda


def test_moves_and_gradient_back(cuda, torch):
    x = ember.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x.cuda()
    assert y.is_cuda and y.cuda() is y and y.to("cuda") is y and y.to("cuda:0") is y
    assert x.cpu() is x and x.to("cuda", non_blocking=True).is_cuda
    assert type(y.grad_fn).__name__ == "ToCopyBackward0"
    z = (y * y).sum()
    assert z.is_cuda and z.item() == 14.0
    z.backward()
    assert x.grad.device.type == "cpu" and x.grad.tolist() == [2.0, -4.0, 6.0]
    w = y.to("cpu", ember.float64)
    assert w.device.type == "cpu" and w.dtype is ember.float64
    assert y.to(ember.zeros(1)).device.type == "cpu"
    assert ember.zeros(1).to(y).is_cuda


def test_mixed_devices_raise_torchs_message_and_change_nothing(cuda):
    a = ember.ones(3, device="cuda")
    b = ember.ones(3)
    for f in (lambda: a + b, lambda: b * a, lambda: ember.cat([a, b]),
              lambda: ember.where(a > 0, a, b), lambda: ember.nn.functional.mse_loss(a, b)):
        with pytest.raises(RuntimeError) as e:
            f()
        assert str(e.value) == MIX
    assert a.cpu().tolist() == [1.0, 1.0, 1.0] and a._version == 0


def test_zero_dim_cpu_tensor_mixes_as_a_scalar(cuda, torch):
    a = ember.ones(3, device="cuda")
    out = a * ember.tensor(2.0) + ember.tensor(1, dtype=ember.int64)
    assert out.is_cuda and out.cpu().tolist() == [3.0, 3.0, 3.0]
    assert out.dtype is ember.float32


def test_numpy_item_and_printing_from_the_device(cuda, torch):
    t = ember.tensor([[1.5, 2.0]], device="cuda")
    with pytest.raises(TypeError, match=r"can't convert cuda:0 device type tensor to numpy\. "
                                        r"Use Tensor.cpu\(\) to copy the tensor to host memory "
                                        r"first\."):
        t.numpy()
    with pytest.raises(TypeError, match="cuda:0"):
        np.asarray(t)
    assert t.cpu().numpy().tolist() == [[1.5, 2.0]]
    assert t[0, 0].item() == 1.5 and float(t.sum()) == 3.5 and t.tolist() == [[1.5, 2.0]]
    assert str(t.sum()) == "tensor(3.5000, device='cuda:0')"
    g = ember.ones(2, device="cuda", requires_grad=True) * 2
    assert repr(g) == "tensor([2., 2.], device='cuda:0', grad_fn=<MulBackward0>)"


def test_legacy_types_move_as_torch(cuda):
    x = ember.randn(4, 3)
    for spec in (ember.cuda.FloatTensor, "torch.cuda.FloatTensor"):
        y = x.type(spec)
        assert y.is_cuda and y.dtype is ember.float32 and y.type() == "torch.cuda.FloatTensor"
        assert isinstance(y, ember.cuda.FloatTensor) and not isinstance(x, ember.cuda.FloatTensor)
        assert y.type(spec) is y
    d = x.type(ember.cuda.DoubleTensor)
    assert d.is_cuda and d.type() == "torch.cuda.DoubleTensor"
    assert d.type(ember.FloatTensor).device.type == "cpu"
    assert d.type("torch.LongTensor").type() == "torch.LongTensor"
    assert d.type(ember.float32).is_cuda      # a dtype keeps the device
    t = ember.cuda.FloatTensor(2, 3)
    assert t.is_cuda and tuple(t.shape) == (2, 3) and t.dtype is ember.float32
    assert ember.cuda.LongTensor([1, 2]).type() == "torch.cuda.LongTensor"
    assert repr(ember.cuda.FloatTensor) == "<class 'torch.cuda.FloatTensor'>"


def _net():
    ember.manual_seed(0)
    return ember.nn.Sequential(ember.nn.Linear(5, 8), ember.nn.ReLU(), ember.nn.Linear(8, 2))


@pytest.mark.parametrize("opt", ["SGD", "Adam"])
def test_module_and_optimizer_stay_on_the_device(cuda, opt):
    cpu_net, gpu_net = _net(), _net()
    params = list(gpu_net.parameters())
    assert gpu_net.cuda() is gpu_net and list(gpu_net.parameters()) == params
    assert all(p.is_cuda for p in gpu_net.parameters())
    kw = {"lr": 0.1, "momentum": 0.9} if opt == "SGD" else {"lr": 0.01}
    o_cpu = getattr(ember.optim, opt)(cpu_net.parameters(), **kw)
    o_gpu = getattr(ember.optim, opt)(gpu_net.parameters(), **kw)
    ember.manual_seed(1)
    x, y = ember.randn(16, 5), ember.randn(16, 2)
    xc, yc = x.cuda(), y.to("cuda", non_blocking=True)
    for _ in range(3):
        for net, o, a, b in ((cpu_net, o_cpu, x, y), (gpu_net, o_gpu, xc, yc)):
            o.zero_grad()
            ember.nn.functional.mse_loss(net(a), b).backward()
            o.step()
    for pc, pg in zip(cpu_net.parameters(), gpu_net.parameters()):
        assert pg.is_cuda and pg.grad.is_cuda
        np.testing.assert_allclose(pg.detach().cpu().numpy(), pc.detach().numpy(), rtol=1e-6)
    for st in o_gpu.state.values():
        for k, v in st.items():
            if isinstance(v, ember.Tensor) and k != "step":
                assert v.is_cuda, k
    assert gpu_net.cpu() is gpu_net and not params[0].is_cuda


def test_conv_and_double_backward_on_the_device(cuda, torch):
    ember.manual_seed(0)
    conv = ember.nn.Conv2d(2, 3, 3, padding=1)
    x = ember.randn(2, 2, 5, 5)
    ref = conv(x)
    conv.cuda()
    out = conv(x.cuda())
    assert out.is_cuda
    np.testing.assert_allclose(out.detach().cpu().numpy(), ref.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    pooled = ember.nn.functional.max_pool2d(out, 2)
    pooled.sum().backward()
    assert conv.weight.grad.is_cuda
    a = ember.tensor([0.5, 1.5], device="cuda", requires_grad=True)
    (g,) = ember.autograd.grad((a ** 3).sum(), a, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), a)
    assert g.is_cuda and gg.is_cuda and gg.cpu().tolist() == [3.0, 9.0]


def test_save_load_and_state_dict_from_the_device(cuda, tmp_path):
    net = _net().cuda()
    sd = net.state_dict()
    assert all(v.is_cuda for v in sd.values())
    path = tmp_path / "m.pt"
    ember.save(sd, str(path))
    back = ember.load(str(path))
    assert all(v.is_cuda for v in back.values())
    host = ember.load(str(path), map_location="cpu")
    assert all(v.device.type == "cpu" for v in host.values())
    fresh = _net()
    fresh.load_state_dict(back)      # device tensors copied into CPU parameters, as torch
    for k, v in fresh.state_dict().items():
        assert v.device.type == "cpu" and v.tolist() == sd[k].cpu().tolist()
    buf = io.BytesIO()
    ember.save(ember.ones(2, device="cuda"), buf)
    buf.seek(0)
    assert ember.load(buf).is_cuda


def test_bad_device_index_moves_nothing(cuda):
    x = ember.ones(2)
    net = _net()
    w = net[0].weight
    for f in (lambda: ember.zeros(1, device="cuda:7"), lambda: x.to("cuda:7"),
              lambda: x.cuda(7), lambda: net.to("cuda:7"), lambda: net.cuda(7),
              lambda: ember.cuda.set_device(7)):
        with pytest.raises(RuntimeError, match="^CUDA error: invalid device ordinal\n"):
            f()
    assert not x.is_cuda and not w.is_cuda and net[0].weight is w
    with pytest.raises(AssertionError, match="^Invalid device id$"):
        ember.cuda.get_device_properties(7)
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        ember.cuda.get_device_name("cpu")


def test_cuda_api(cuda):
    c = ember.cuda
    assert c.is_available() and c.device_count() == 1 and c.current_device() == 0
    c.init()
    assert c.is_initialized()
    c.set_device(0)
    c.set_device("cuda:0")
    c.set_device(-1)
    with c.device(0) as d:
        assert d.idx == 0 and c.current_device() == 0
    with c.device(None), c.device_of(ember.ones(1)):
        pass
    assert c.get_device_name() == c.get_device_name(0) == "Fake GPU (strict device)"
    assert c.get_device_capability() == (9, 0)
    p = c.get_device_properties("cuda:0")
    assert p.total_memory == 16 << 30 and p.multi_processor_count == 4
    assert repr(p).startswith("_CudaDeviceProperties(name='Fake GPU (strict device)', major=9")
    cuda.POOL.used, cuda.POOL.total = 1000, 5000
    assert c.memory_allocated() == 1000 and c.memory_reserved() == 5000
    assert c.max_memory_allocated() == 5000
    c.reset_peak_memory_stats()
    assert c.max_memory_allocated() == 1000
    freed = cuda.POOL.freed
    assert c.empty_cache() is None and cuda.POOL.freed == freed + 1
    syncs = cuda.fake_cuda.runtime.syncs
    assert c.synchronize() is None and cuda.fake_cuda.runtime.syncs == syncs + 1
    assert c.manual_seed(0) is None and c.manual_seed_all(0) is None
    s = c.Stream()
    with c.stream(s):
        ember.ones(1, device="cuda")
    s.synchronize()
    assert s.query() and s != c.default_stream() and c.current_stream() == c.default_stream()
    start, end = c.Event(enable_timing=True), c.Event(enable_timing=True)
    start.record()
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 0.0 and end.query()


def test_backend_pieces(cuda):
    b = ember.backend.backend_for("cuda")
    assert isinstance(b, _cupy.CupyBackend) and b.device == ember.device("cuda", 0)
    arr = b.asarray([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    assert type(arr) is cuda.fake_cupy.ndarray and b.to_host(arr).tolist() == [[1, 2], [3, 4]]
    assert b.asarray(arr) is arr and b.asarray(arr, np.float64).dtype == np.float64
    out = b.asarray(np.zeros(3))
    b.scatter_add(out, b.asarray(np.array([0, 0, 2])), b.asarray(np.ones(3)))
    assert b.to_host(out).tolist() == [2.0, 0.0, 1.0]
    assert b.to_host(b.sliding_window_view(b.asarray(np.arange(4.0)), 2)).shape == (3, 2)
    assert b.to_host(b.as_strided(arr, (2,), (8,))).tolist() == [1.0, 3.0]
    assert isinstance(b.data_ptr(arr), int)
    assert float(b.scipy("special").erf(b.asarray(np.array(0.0)))) == 0.0
    x, s = ember.backend.align_devices(arr, np.asarray(2.0, dtype=np.float32))
    assert x is arr and type(s) is cuda.fake_cupy.ndarray and float(s) == 2.0
    s, x = ember.backend.align_devices(np.asarray(2.0), arr)
    assert x is arr and type(s) is cuda.fake_cupy.ndarray
    with pytest.raises(RuntimeError, match="^" + MIX):
        ember.backend.align_devices(arr, np.ones(2))


def test_missing_scipy_functions_run_on_host_copies(cuda):
    b = ember.backend.backend_for("cuda")
    fb = _cupy._WithHostFallback(b, types.SimpleNamespace(), __import__("scipy.special").special)
    r = fb.gammaln(b.asarray(np.array([1.0, 3.0])))
    assert type(r) is cuda.fake_cupy.ndarray
    np.testing.assert_allclose(b.to_host(r), [0.0, np.log(2.0)], atol=1e-12)


def test_pin_memory_with_a_device(cuda):
    t = ember.ones(3)
    p = t.pin_memory()
    assert p.is_pinned() and not t.is_pinned() and p is not t and p.pin_memory() is p
    assert p.tolist() == t.tolist()
    with pytest.raises(RuntimeError, match="cannot pin 'torch.cuda.FloatTensor' only dense CPU "
                                           "tensors can be pinned"):
        t.cuda().pin_memory()
    from ember.utils.data import DataLoader, TensorDataset
    loader = DataLoader(TensorDataset(ember.arange(4.0), ember.arange(4)), batch_size=2,
                        pin_memory=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        batches = list(loader)
    assert all(b.is_pinned() for batch in batches for b in batch)
    assert batches[1][0].to("cuda", non_blocking=True).cpu().tolist() == [2.0, 3.0]


def test_pin_memory_without_a_device(torch):
    if ember.cuda.is_available():
        pytest.skip("CUDA is available here")
    with pytest.raises(RuntimeError) as te:
        torch.ones(2).pin_memory()
    with pytest.raises(RuntimeError) as ee:
        ember.ones(2).pin_memory()
    assert str(ee.value) == str(te.value) and not ember.ones(2).is_pinned()
    from ember.utils.data import DataLoader, TensorDataset
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no "
                                         "accelerator is found"):
        out = list(DataLoader(TensorDataset(ember.arange(4)), batch_size=2, pin_memory=True))
    assert [b[0].tolist() for b in out] == [[0, 1], [2, 3]]
    assert ember.ones(2).to("cpu", non_blocking=True).tolist() == [1.0, 1.0]


def _probe_with(monkeypatch, module):
    monkeypatch.setattr(_cupy, "_found", {})
    monkeypatch.setitem(sys.modules, "cupy", module)
    return _cupy.probe()


def test_errors_say_what_is_missing(monkeypatch):
    if ember.cuda.is_available():
        pytest.skip("CUDA is available here")
    with pytest.raises(ember.cuda.CudaUnavailableError,
                       match=r"CuPy is not installed .*pip install \"ember\[gpu\]\""):
        ember.ones(2).cuda()
    assert not ember.cuda.is_available() and ember.cuda.device_count() == 0

    def no_driver():
        raise RuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient")
    fake = types.SimpleNamespace(__version__="13.6.0", cuda=types.SimpleNamespace(
        runtime=types.SimpleNamespace(getDeviceCount=no_driver)))
    found, why = _probe_with(monkeypatch, fake)
    assert found is None and why.startswith("CuPy 13.6.0 is installed but cannot reach a GPU: "
                                            "cudaErrorInsufficientDriver")
    assert "nvidia-smi" in why and 'pip install "ember[gpu]"' in why
    with pytest.raises(AssertionError, match="installed but cannot reach a GPU"):
        ember.zeros(1, device="cuda")
    with pytest.raises(RuntimeError, match="installed but cannot reach a GPU"):
        ember.ones(1).to("cuda")
    fake.cuda.runtime.getDeviceCount = lambda: 0
    found, why = _probe_with(monkeypatch, fake)
    assert found is None and "installed but sees no GPU" in why
    assert not ember.cuda.is_available()
    with pytest.raises(TypeError, match="type torch.cuda.FloatTensor not available. .*sees no "
                                        "GPU"):
        ember.cuda.FloatTensor(2)


def test_notes_two_layer_net_with_cuda_float_tensor_matches_cpu(tmp_path):
    """The notes' program with ``dtype = torch.cuda.FloatTensor`` runs unchanged on the fake GPU
    and prints what its CPU run prints."""
    import os
    import pathlib
    import subprocess
    root = pathlib.Path(__file__).resolve().parents[2]
    seed = root / ".." / "shared" / "seed_programs" / "s002_mlp_diabetes.py"
    if not seed.is_file():
        pytest.skip("no seed program at %s" % seed)
    src = seed.read_text()
    assert "dtype = torch.FloatTensor\n" in src
    gpu = tmp_path / "mlp_cuda.py"
    gpu.write_text(src.replace("dtype = torch.FloatTensor\n", "dtype = torch.cuda.FloatTensor\n"))
    outs = []
    for program, lib in ((seed, "ember"), (gpu, "ember_on_fake_cuda")):
        env = dict(os.environ, TORCH_LIB=lib, EMBER_FAKE_CUDA_DEFAULT="0",
                   PYTHONPATH=os.pathsep.join([str(root), str(root / "tests" / "gpu")]))
        r = subprocess.run([sys.executable, str(program)], env=env, capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        outs.append(r.stdout)
    assert outs[0] == outs[1] and "RESULT: ok" in outs[1]
