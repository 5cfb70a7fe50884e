"""GradScaler's dynamic loss scaling as the AMP examples exercise it (gradient accumulation,
multiple losses/optimizers, closures skipped on inf), shrunk to CPU: torch.amp.GradScaler("cpu")
with small growth_interval, forcing an inf to watch the scale back off, get_scale /
get_growth_factor / is_enabled / state_dict / load_state_dict, scaler.update(new_scale), the
"lr_scheduler.step() before optimizer.step()" warning on a skipped step, and the autocast state
queries (is_autocast_enabled, get_autocast_dtype, autocast as decorator/context)."""
# compare: rtol=2e-3 atol=2e-3
# (bfloat16 matmuls under autocast: the last bit may differ between CPU kernels)
import importlib
import os
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")

torch.manual_seed(0)
model0 = nn.Linear(4, 4)
model1 = nn.Linear(4, 2)
opt0 = torch.optim.SGD(model0.parameters(), lr=0.1)
opt1 = torch.optim.SGD(model1.parameters(), lr=0.1, momentum=0.9)
sched = torch.optim.lr_scheduler.ExponentialLR(opt0, gamma=0.9)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0**8, growth_factor=2.0, backoff_factor=0.25,
                              growth_interval=2)
print(scaler.is_enabled(), scaler.get_scale(), scaler.get_growth_factor(),
      scaler.get_backoff_factor(), scaler.get_growth_interval())
print(scaler.state_dict())

x = torch.randn(8, 4)
y = torch.randn(8, 2)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for step in range(6):
        opt0.zero_grad()
        opt1.zero_grad()
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            h = model0(x)
            out = model1(h)
            loss0 = F.mse_loss(out.float(), y)
            loss1 = h.float().pow(2).mean()
        if step == 3:
            loss0 = loss0 * float("inf")
        scaler.scale(loss0).backward(retain_graph=True)
        scaler.scale(loss1).backward()
        scaler.unscale_(opt0)
        total = nn.utils.clip_grad_norm_(model0.parameters(), max_norm=1.0)
        scaler.step(opt0)
        scaler.step(opt1)
        before = scaler.get_scale()
        scaler.update()
        sched.step()
        print(step, f"{loss1.item():.4f}", before, scaler.get_scale(), f"{float(total):.4f}",
              sched.get_last_lr())
# (NumPy RuntimeWarnings from inf/nan gradients are left out: ember leaks them from its autograd
# core, reported; torch emits none)
print(sorted({str(w.category.__name__) for w in caught} - {"RuntimeWarning"}))
print(any("lr_scheduler.step()" in str(w.message) for w in caught))
print(scaler.state_dict())
scaler.update(new_scale=64.0)
print(scaler.get_scale())
scaler.update(torch.tensor(32.0))
print(scaler.get_scale())
sd = scaler.state_dict()
s2 = torch.amp.GradScaler("cpu")
s2.load_state_dict(sd)
print(s2.get_scale(), s2.get_growth_interval(), s2.state_dict() == sd)
off = torch.amp.GradScaler("cpu", enabled=False)
print(off.is_enabled(), off.get_scale(), off.state_dict())
t = torch.tensor(2.0, requires_grad=True)
print(off.scale(t) is t, scaler.scale(t))
print(scaler.scale([t, t * 2]))
print(scaler.scale((t,)))
try:
    scaler.unscale_(opt0)
    scaler.unscale_(opt0)
except Exception as e:
    print(type(e).__name__, e)
try:
    torch.amp.GradScaler("cpu").step(opt0)
except Exception as e:
    print(type(e).__name__, e)
try:
    torch.amp.GradScaler("cpu").update(new_scale=torch.tensor([1.0, 2.0]))
except Exception as e:
    print(type(e).__name__, e)

print(torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
with torch.autocast("cpu"):
    print(torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
    print(torch.mm(x, x.t()).dtype, (x + 1).dtype, torch.softmax(x, 0).dtype)
    with torch.autocast("cpu", enabled=False):
        print(torch.is_autocast_enabled("cpu"), torch.mm(x, x.t()).dtype)
    with torch.autocast("cpu", dtype=torch.float16):
        print(torch.get_autocast_dtype("cpu"), model0(x).dtype)
print(torch.is_autocast_enabled("cpu"))
ac = torch.autocast("cpu", dtype=torch.bfloat16)
print(ac.device, ac.fast_dtype, ac._enabled)


@torch.autocast(device_type="cpu")
def forward_bf16(m, inp):
    return m(inp)


print(forward_bf16(model1, x).dtype, model1(x).dtype)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with torch.autocast("cpu", dtype=torch.float64):
        pass
print([str(w.message)[:80] for w in caught])
print("RESULT:", scaler.get_scale())
