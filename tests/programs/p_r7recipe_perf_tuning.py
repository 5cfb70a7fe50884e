"""The PyTorch "Performance Tuning Guide" recipe (recipes/recipes/tuning_guide.py), shrunk to
the knobs that run on a CPU and whose effect is deterministic: DataLoader workers/pin_memory
options, ``torch.no_grad`` vs ``torch.inference_mode`` (and inference tensors' errors),
``bias=False`` for a conv followed by BatchNorm (the bias is absorbed), ``param.grad = None``
vs ``zero_grad``, a fused GELU with ``torch.compile`` (same numbers), ``channels_last`` through
a conv net, ``checkpoint_sequential`` giving the same gradients, turning debugging APIs off
(anomaly detection, profiler ``enabled=False``, ``emit_nvtx``), thread settings, bfloat16
autocast on the CPU, the cudnn/TF32/matmul-precision flags, and preallocating for the longest
variable-length batch."""
# compare: rtol=1e-4 atol=1e-5
import importlib
import math
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
data = importlib.import_module(LIB + ".utils.data")
ckpt = importlib.import_module(LIB + ".utils.checkpoint")

torch.manual_seed(0)

# Asynchronous data loading: the options, on a tiny dataset (workers kept at 0 here).
ds = data.TensorDataset(torch.arange(10.0).unsqueeze(1), torch.arange(10) % 3)
loader = data.DataLoader(ds, batch_size=4, num_workers=0, pin_memory=False, drop_last=False)
print(loader.num_workers, loader.pin_memory, len(loader), [b[0].shape[0] for b in loader])
try:
    data.DataLoader(ds, num_workers=0, prefetch_factor=2)
except ValueError as e:
    print("ValueError", e)
try:
    data.DataLoader(ds, num_workers=0, persistent_workers=True)
except ValueError as e:
    print("ValueError", e)

# Disable gradient calculation for validation or inference.
model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
x = torch.randn(5, 6)
with torch.no_grad():
    y0 = model(x)
with torch.inference_mode():
    y1 = model(x)
    print(torch.is_inference_mode_enabled(), torch.is_grad_enabled())
print(y0.requires_grad, y0.is_inference(), y1.requires_grad, y1.is_inference(),
      torch.equal(y0, y1), torch.is_inference_mode_enabled())
with torch.inference_mode(mode=False):
    print(torch.is_inference_mode_enabled(), model(x).requires_grad)


@torch.inference_mode()
def predict(inp):
    return model(inp).softmax(1)


print(predict(x).argmax(1).tolist(), predict(x).is_inference())
try:
    (y1 * torch.ones(3, requires_grad=True)).sum().backward()
except RuntimeError as e:
    print("RuntimeError", str(e).splitlines()[0])
try:
    y1.add_(1)
except RuntimeError as e:
    print("RuntimeError", str(e).splitlines()[0])
print(y1.clone().is_inference(), (y1 + 1).requires_grad)

# Disable bias for convolutions directly followed by a batch norm: BN's mean removes it.
conv_b = nn.Conv2d(3, 4, 3, bias=True)
conv_nb = nn.Conv2d(3, 4, 3, bias=False)
conv_nb.weight.data.copy_(conv_b.weight.data)
bn1, bn2 = nn.BatchNorm2d(4), nn.BatchNorm2d(4)
img = torch.randn(4, 3, 8, 8)
print(torch.allclose(bn1(conv_b(img)), bn2(conv_nb(img)), atol=1e-5),
      sum(p.numel() for p in conv_b.parameters()), sum(p.numel() for p in conv_nb.parameters()))

# Use parameter.grad = None instead of model.zero_grad() or optimizer.zero_grad().
model(x).sum().backward()
for param in model.parameters():
    param.grad = None
print([p.grad for p in model.parameters()])
model(x).sum().backward()
model.zero_grad(set_to_none=False)
print([p.grad.abs().sum().item() for p in model.parameters()])


# Fuse operations: the guide's gelu, compiled.
@torch.compile
def gelu(x):
    return x * 0.5 * (1.0 + torch.erf(x / 1.41421))


t = torch.linspace(-3, 3, 7)
print([round(v, 5) for v in gelu(t).tolist()],
      torch.allclose(gelu(t), F.gelu(t), atol=1e-4), round(1.41421 - math.sqrt(2), 6))

# Enable channels_last memory format (a conv net on CPU).
net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
                    nn.MaxPool2d(2), nn.Conv2d(8, 4, 1))
ref = net(img)
net_cl = net.to(memory_format=torch.channels_last)
img_cl = img.to(memory_format=torch.channels_last)
out_cl = net_cl(img_cl)
print(net_cl[0].weight.is_contiguous(memory_format=torch.channels_last),
      img_cl.stride(), out_cl.is_contiguous(memory_format=torch.channels_last),
      torch.allclose(out_cl, ref, atol=1e-5))

# Checkpoint intermediate buffers.
torch.manual_seed(1)
seq = nn.Sequential(*[nn.Sequential(nn.Linear(8, 8), nn.Tanh()) for _ in range(4)])
inp = torch.randn(3, 8, requires_grad=True)
seq(inp).pow(2).sum().backward()
g_plain = [p.grad.clone() for p in seq.parameters()] + [inp.grad.clone()]
seq.zero_grad()
inp.grad = None
out = ckpt.checkpoint_sequential(seq, 2, inp, use_reentrant=False)
out.pow(2).sum().backward()
g_ck = [p.grad for p in seq.parameters()] + [inp.grad]
print(out.grad_fn is not None, all(torch.allclose(a, b, atol=1e-6) for a, b in zip(g_plain, g_ck)),
      round(out.sum().item(), 5))

# Disable debugging APIs.
torch.autograd.set_detect_anomaly(False)
print(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
with torch.autograd.profiler.profile(enabled=False):
    print(round(model(x).sum().item(), 5))
with torch.autograd.profiler.emit_nvtx(enabled=False):
    print(round(model(x).sum().item(), 5))
with torch.autograd.detect_anomaly(check_nan=False):
    print(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
print(torch.is_anomaly_enabled())

# CPU threads.
n = torch.get_num_threads()
torch.set_num_threads(1)
print(torch.get_num_threads())
torch.set_num_threads(n)
print(torch.get_num_threads() == n, isinstance(torch.get_num_interop_threads(), int))

# Train a model on CPU with bfloat16.
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    opt.zero_grad(set_to_none=True)
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        out = model(x)
        loss = F.cross_entropy(out.float(), torch.tensor([0, 1, 2, 0, 1]))
    print(out.dtype, loss.dtype, round(loss.item(), 2))
    loss.backward()
    opt.step()
print(model[0].weight.dtype, model[0].weight.grad.dtype)

# cuDNN / TF32 / matmul precision flags (settable on any build).
print(torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic,
      torch.backends.cuda.matmul.allow_tf32, torch.get_float32_matmul_precision())
torch.backends.cudnn.benchmark = True
torch.set_float32_matmul_precision("high")
print(torch.backends.cudnn.benchmark, torch.get_float32_matmul_precision())
torch.backends.cudnn.benchmark = False
torch.set_float32_matmul_precision("highest")
try:
    torch.set_float32_matmul_precision("fastest")
except RuntimeError as e:
    print("RuntimeError", str(e).splitlines()[0][:80])
print(torch.backends.mkldnn.is_available() in (True, False),
      torch.backends.cpu.get_cpu_capability() != "")
torch.use_deterministic_algorithms(True)
print(torch.are_deterministic_algorithms_enabled(),
      torch.is_deterministic_algorithms_warn_only_enabled())
torch.use_deterministic_algorithms(False)

# Preallocate memory for the longest variable-length input, then run shorter ones.
lstm = nn.LSTM(4, 5, batch_first=True)
max_len = 9
warm = torch.zeros(2, max_len, 4)
with torch.no_grad():
    lstm(warm)
    lens = []
    for length in (3, 9, 6):
        seq_in = torch.randn(2, length, 4)
        o, (h, c) = lstm(seq_in)
        lens.append((tuple(o.shape), round(h.sum().item(), 4)))
print(lens)
