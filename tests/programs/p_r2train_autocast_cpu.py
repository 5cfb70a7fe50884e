"""CPU autocast as the "Automatic Mixed Precision" docs' op reference describes it: which ops
run in bfloat16 (the lower-precision list), which are forced to float32 (the fp32 list), which
just promote; nesting with enabled=False, autocast as a decorator on forward, custom_fwd with
cast_inputs on a custom Function, gradients staying float32, and a gradient-accumulation loop
with clip_grad_norm_ in bfloat16 autocast (the "AMP on CPU" recipe)."""
# compare: rtol=2e-3 atol=2e-3
# (bfloat16 matmuls: the last bit of a bfloat16 product may differ between CPU kernels)
import importlib
import os
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
amp = importlib.import_module(LIB + ".amp")

torch.manual_seed(0)
a = torch.randn(4, 4)
b = torch.randn(4, 4)
v = torch.randn(4)
x3 = torch.randn(2, 4, 4)
img = torch.randn(1, 2, 5, 5)
w_conv = torch.randn(3, 2, 3, 3)
lin = nn.Linear(4, 3)
vol = torch.randn(1, 1, 4, 4, 4)
seq = torch.randn(1, 2, 6)
target = torch.randint(0, 4, (4,))

with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    lower = {
        "mm": torch.mm(a, b), "matmul": a @ b, "bmm": torch.bmm(x3, x3),
        "baddbmm": torch.baddbmm(x3, x3, x3), "addmm": torch.addmm(a, a, b),
        "linear": lin(a), "F.linear": F.linear(a, lin.weight),
        "conv2d": F.conv2d(img, w_conv), "conv1d": F.conv1d(seq, torch.randn(3, 2, 2)),
        "conv_transpose2d": F.conv_transpose2d(img, torch.randn(2, 3, 2, 2)),
        "prelu": F.prelu(a, torch.tensor([0.25])),
    }
    fp32 = {
        "mse_loss": F.mse_loss(a.bfloat16(), b.bfloat16()),
        "cross_entropy": F.cross_entropy(a.bfloat16(), target),
        "nll_loss": F.nll_loss(a.bfloat16(), target),
        "bce_with_logits": F.binary_cross_entropy_with_logits(a.bfloat16(), b.sigmoid()),
        "smooth_l1": F.smooth_l1_loss(a.bfloat16(), b),
        "prod": torch.prod(a.bfloat16()),
        "trace": torch.trace(a.bfloat16()),
        "max_pool3d": F.max_pool3d(vol.bfloat16(), 2),
        "adaptive_avg_pool3d": F.adaptive_avg_pool3d(vol.bfloat16(), 2),
        "inverse": torch.linalg.inv(a.bfloat16()),
        "reflection_pad": F.pad(img.bfloat16(), (1, 1, 1, 1), mode="reflect"),
        "replicate_pad": F.pad(img.bfloat16(), (1, 1, 1, 1), mode="replicate"),
    }
    other = {
        "relu(bf16)": torch.relu(lower["mm"]),
        "softmax(bf16)": torch.softmax(lower["mm"], dim=-1),
        "add(bf16,f32)": lower["mm"] + a,
        "sum(bf16)": lower["mm"].sum(),
        "layer_norm(bf16)": F.layer_norm(lower["mm"], (4,)),
        "cat": torch.cat([lower["mm"], a]),
        "stack": torch.stack([lower["mm"], a]),
        "mm(float64)": torch.mm(a.double(), b.double()),
        "exp(f32)": torch.exp(a),
        "mv": torch.mv(a, v),
        "dot": torch.dot(v, v),
        "lstm": nn.LSTM(4, 3)(a[None])[0],
        "rnn": nn.RNN(4, 3)(a[None])[1],
        "gru": nn.GRU(4, 3)(a[None])[0],
        "max_pool2d(bf16)": F.max_pool2d(lower["conv2d"], 2),
        "adaptive_avg_pool2d": F.adaptive_avg_pool2d(lower["conv2d"], 1),
        "circular_pad": F.pad(lower["conv2d"], (1, 1, 1, 1), mode="circular"),
    }
    print(torch.is_autocast_enabled(), torch.is_autocast_enabled("cpu"),
          torch.get_autocast_dtype("cpu"))
    with torch.autocast(device_type="cpu", enabled=False):
        inner = torch.mm(lower["mm"].float(), b)
        print("disabled:", inner.dtype, torch.is_autocast_enabled("cpu"))
    with torch.autocast(device_type="cpu", dtype=torch.float16):
        print("float16 nested:", torch.mm(a, b).dtype, torch.get_autocast_dtype("cpu"))
    print(torch.get_autocast_dtype("cpu"))

for table in (lower, fp32, other):
    for name, t in table.items():
        print(f"{name:18s} {t.dtype} {tuple(t.shape)}")
print(lower["mm"])
print(fp32["mse_loss"], fp32["cross_entropy"])
print(torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with torch.autocast(device_type="cpu", dtype=torch.float32):
        print("fp32 request:", torch.mm(a, b).dtype)
print([str(c.message) for c in caught])
for bad in ("tpu_x", 3):
    try:
        torch.autocast(device_type=bad)
    except (RuntimeError, ValueError) as e:
        print(type(e).__name__, e)


class MyMM(torch.autograd.Function):
    @staticmethod
    @amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        print("  forward sees", a.dtype, b.dtype, torch.is_autocast_enabled("cpu"))
        return a.mm(b)

    @staticmethod
    @amp.custom_bwd(device_type="cpu")
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        print("  backward sees", grad.dtype, torch.is_autocast_enabled("cpu"))
        return grad.mm(b.t()), a.t().mm(grad)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc1 = nn.Linear(4 * 4 * 4, 16)
        self.ln = nn.LayerNorm(16)
        self.fc2 = nn.Linear(16, 3)

    @torch.autocast(device_type="cpu", dtype=torch.bfloat16)
    def forward(self, x):
        h = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        print("  conv", h.dtype, "flat", h.flatten(1).dtype)
        h = self.ln(F.gelu(self.fc1(h.flatten(1))))
        print("  ln", h.dtype)
        return self.fc2(h)


pa = torch.randn(3, 4, requires_grad=True)
pb = torch.randn(4, 2, requires_grad=True)
with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    out = MyMM.apply(pa.bfloat16(), pb)
    print(out.dtype, out.grad_fn is not None)
    out.sum().backward()
print(pa.grad.dtype, pb.grad.dtype, pb.grad.sum().item())

torch.manual_seed(1)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
X = torch.randn(16, 1, 8, 8)
Y = torch.randint(0, 3, (16,))
accum = 2
for step in range(3):
    optimizer.zero_grad(set_to_none=True)
    total = 0.0
    for micro in range(accum):
        xb, yb = X[micro * 8:(micro + 1) * 8], Y[micro * 8:(micro + 1) * 8]
        logits = model(xb)
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            loss = F.cross_entropy(logits, yb) / accum
        print(" ", logits.dtype, loss.dtype, type(loss.grad_fn).__name__)
        loss.backward()
        total += loss.item()
    grads = {n: p.grad.dtype for n, p in model.named_parameters()}
    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    optimizer.step()
    print(step, f"{total:.3f}", f"{norm.item():.3f}", norm.dtype, set(grads.values()))
print(model.fc2.weight.dtype, model.bn.running_mean.dtype, model.bn.num_batches_tracked)
with torch.no_grad():
    final = F.cross_entropy(model(X), Y)
print("RESULT:", f"{final.item():.3f}", final.dtype)
