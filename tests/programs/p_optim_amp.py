"""torch.amp as the "Automatic Mixed Precision" recipe writes it, on CPU: autocast(bfloat16),
GradScaler (enabled and disabled), unscale_ before clipping, and the scaler's state_dict."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn

torch.manual_seed(0)
device = "cpu"
batch_size, in_size, out_size, num_layers = 16, 12, 12, 3
epochs = 3
data = [torch.randn(batch_size, in_size, device=device) for _ in range(4)]
targets = [torch.randn(batch_size, out_size, device=device) for _ in range(4)]
loss_fn = torch.nn.MSELoss().cuda() if torch.cuda.is_available() else torch.nn.MSELoss()


def make_model(in_size, out_size, num_layers):
    layers = []
    for _ in range(num_layers - 1):
        layers.append(torch.nn.Linear(in_size, in_size))
        layers.append(torch.nn.ReLU())
    layers.append(torch.nn.Linear(in_size, out_size))
    return torch.nn.Sequential(*tuple(layers)).to(device)


# autocast on CPU: matmuls in bfloat16, the loss back in float32
net = make_model(in_size, out_size, num_layers)
with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    output = net(data[0])
    print(output.dtype)
    loss = loss_fn(output.float(), targets[0])
    print(loss.dtype)
    print(torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
    with torch.autocast(device_type="cpu", enabled=False):
        print(net(data[0]).dtype)
print(torch.is_autocast_enabled("cpu"))
print(f"{loss.item():.2f}")

# the default training loop with a (disabled-on-CPU-style) GradScaler
use_amp = False
net = make_model(in_size, out_size, num_layers)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cpu", enabled=use_amp)
print(scaler.is_enabled())
for epoch in range(epochs):
    for input, target in zip(data, targets):
        with torch.autocast(device_type=device, dtype=torch.float16, enabled=use_amp):
            output = net(input)
            loss = loss_fn(output, target)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
    print(epoch, f"{loss.item():.6f}")
print(scaler.state_dict())

# an enabled scaler: scale, unscale_ before clipping, step, update
net = make_model(in_size, out_size, num_layers)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 8, growth_interval=2)
print(scaler.get_scale(), scaler.get_growth_factor(), scaler.get_backoff_factor(),
      scaler.get_growth_interval())
for epoch in range(epochs):
    for input, target in zip(data, targets):
        output = net(input)
        loss = loss_fn(output, target)
        scaled = scaler.scale(loss)
        print(f"{scaled.item():.3f}", scaled.dtype)
        scaled.backward()
        scaler.unscale_(opt)
        n = torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=0.5)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
    print(epoch, f"{loss.item():.6f}", f"{n.item():.5f}", scaler.get_scale())

# an inf gradient: the step is skipped and the scale backs off
w = torch.nn.Parameter(torch.ones(3))
opt = torch.optim.SGD([w], lr=0.1)
scaler = torch.amp.GradScaler("cpu", init_scale=4.0)
loss = (w * torch.tensor([1.0, float("inf"), 2.0])).sum()
scaler.scale(loss).backward()
print(w.grad)
scaler.step(opt)
scaler.update()
print(w, scaler.get_scale())
sd = scaler.state_dict()
print(sd)
scaler2 = torch.amp.GradScaler("cpu")
scaler2.load_state_dict(sd)
print(scaler2.get_scale(), scaler2.state_dict())
print(scaler.scale(torch.tensor(3.0)))
print(scaler.scale([torch.tensor(1.0), torch.tensor(2.0)]))

checkpoint = {"model": net.state_dict(), "optimizer": opt.state_dict(),
              "scaler": scaler.state_dict()}
print(list(checkpoint["scaler"].keys()))
print("RESULT: ok")
