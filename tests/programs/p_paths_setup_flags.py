"""The setup lines at the top of training scripts and notebooks: threads, default dtype,
print options, device selection, CUDA/MPS queries, seeding helpers (torch.random), the older
torch.cuda.amp/torch.cpu.amp spellings, serialization helpers and torch.hub's cache dir."""
import importlib
import io
import os
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = importlib.import_module(LIB + ".nn")
trandom = importlib.import_module(LIB + ".random")
serialization = importlib.import_module(LIB + ".serialization")
cuda_amp = importlib.import_module(LIB + ".cuda.amp")
cpu_amp = importlib.import_module(LIB + ".cpu.amp")
hub = importlib.import_module(LIB + ".hub")
mps_backend = importlib.import_module(LIB + ".backends.mps")
cudnn = importlib.import_module(LIB + ".backends.cudnn")
importlib.import_module(LIB + ".backends.opt_einsum")
importlib.import_module(LIB + ".backends.mkldnn")
importlib.import_module(LIB + ".backends.cpu")
warnings.simplefilter("ignore")

torch.set_num_threads(1)
print("threads", torch.get_num_threads())
print("default dtype", torch.get_default_dtype())
torch.set_default_dtype(torch.float64)
print("now", torch.get_default_dtype(), torch.tensor([1.5]).dtype, torch.zeros(2).dtype,
      nn.Linear(2, 2).weight.dtype)
torch.set_default_dtype(torch.float32)
print("back", torch.tensor([1.5]).dtype)

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
device2 = (torch.device("mps") if torch.backends.mps.is_available()
           else torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu"))
print(device, device2, device.type, repr(device))
print("cuda", torch.cuda.is_available(), torch.cuda.device_count(), torch.version.cuda)
print("mps", torch.backends.mps.is_available(), mps_backend.is_built(),
      torch.mps.is_available() if hasattr(torch, "mps") else None)
print("cudnn", cudnn.is_available(), cudnn.enabled, torch.backends.cudnn.version())
print("opt_einsum", torch.backends.opt_einsum.is_available(),
      torch.backends.opt_einsum.enabled, torch.backends.opt_einsum.strategy)
print("mkldnn", torch.backends.mkldnn.enabled)
torch.cuda.manual_seed_all(0)
torch.cuda.manual_seed(0)
torch.cuda.empty_cache()
print("accelerator", torch.accelerator.is_available(),
      torch.accelerator.current_accelerator(), torch.accelerator.device_count())
print("xpu", torch.xpu.is_available())

torch.set_printoptions(precision=2, sci_mode=False, linewidth=60)
torch.manual_seed(0)
x = torch.randn(3, 4) * 1000
print(x)
torch.set_printoptions(profile="default")
print(x)
torch.set_printoptions(threshold=5, edgeitems=1)
print(torch.arange(10.0))
torch.set_printoptions(profile="default")

trandom.manual_seed(3)
a = torch.rand(2)
state = trandom.get_rng_state()
b = torch.rand(2)
trandom.set_rng_state(state)
print("rng", a, torch.equal(b, torch.rand(2)), trandom.initial_seed())
with trandom.fork_rng():
    torch.rand(5)
print("after fork", torch.rand(1))
g = torch.Generator().manual_seed(7)
print("gen", torch.randn(2, generator=g))

with cuda_amp.autocast(enabled=False):
    print("cuda autocast off", (torch.ones(2, 2) @ torch.ones(2, 2)).dtype)
with cpu_amp.autocast():
    y = nn.Linear(4, 2)(torch.ones(3, 4))
print("cpu autocast", y.dtype)
with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    z = torch.mm(torch.ones(2, 3), torch.ones(3, 2))
print("torch.autocast", z.dtype, torch.is_autocast_enabled())
scaler = torch.amp.GradScaler("cpu", enabled=False)
print("scaler", scaler.is_enabled(), scaler.get_scale())
scaler2 = cuda_amp.GradScaler(enabled=False)
print("cuda scaler", scaler2.is_enabled())

buf = io.BytesIO()
torch.save({"w": torch.arange(3)}, buf)
buf.seek(0)
print("load", torch.load(buf, weights_only=True))
serialization.add_safe_globals([])
print("safe globals", isinstance(serialization.get_safe_globals(), list))
print("hub dir", os.path.basename(hub.get_dir()))
print("flags", torch.are_deterministic_algorithms_enabled(), torch.is_grad_enabled(),
      torch.is_inference_mode_enabled(), torch.is_anomaly_enabled())
torch.autograd.set_detect_anomaly(False)
print("RESULT:", torch.get_default_dtype(), torch.get_num_threads())
