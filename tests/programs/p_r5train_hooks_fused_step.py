"""Hooks in training code, shrunk from their sources: the "optimizer step in backward" tutorial
(register_post_accumulate_grad_hook with one optimizer per parameter, grads freed in the hook),
pytorch-grad-cam's ActivationsAndGradients (forward hook saving activations, output.register_hook
saving gradients, handle.remove()), per-parameter gradient clipping with p.register_hook, a
Module full backward pre-hook rescaling grad_output, forward pre-hooks with_kwargs that edit
kwargs, forward hooks with always_call running on an exception, global module hooks, and
Optimizer step pre/post hooks that log and change the lr."""
import importlib
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
module_hooks = importlib.import_module(LIB + ".nn.modules.module")

torch.manual_seed(0)


def fmt(t):
    return [round(v, 5) for v in t.detach().reshape(-1)[:4].tolist()]


def make():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3),
                         nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))


x = torch.randn(2, 1, 6, 6)
y = torch.tensor([0, 2])

# --- fused optimizer step in backward ---
model = make()
optimizer_dict = {p: torch.optim.Adam([p], lr=0.01, foreach=False) for p in model.parameters()}
order = []


def optimizer_hook(parameter) -> None:
    order.append(tuple(parameter.shape))
    optimizer_dict[parameter].step()
    optimizer_dict[parameter].zero_grad()


handles = [p.register_post_accumulate_grad_hook(optimizer_hook) for p in model.parameters()]
for step in range(3):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    print("fused", step, round(loss.item(), 5), all(p.grad is None for p in model.parameters()))
print("hook order", order[:7])
ref = make()
opt = torch.optim.Adam(ref.parameters(), lr=0.01, foreach=False)
for step in range(3):
    opt.zero_grad()
    F.cross_entropy(ref(x), y).backward()
    opt.step()
print("same as step()", all(torch.allclose(a, b, atol=1e-6)
                            for a, b in zip(model.parameters(), ref.parameters())))
for h in handles:
    h.remove()
try:
    model[0].weight.detach().register_post_accumulate_grad_hook(optimizer_hook)
except Exception as e:
    print(type(e).__name__, e)
try:
    (model[0].weight * 2).register_post_accumulate_grad_hook(optimizer_hook)
except Exception as e:
    print(type(e).__name__, e)


# --- Grad-CAM ---
class ActivationsAndGradients:
    def __init__(self, model, target_layers, reshape_transform=None):
        self.model = model
        self.gradients = []
        self.activations = []
        self.reshape_transform = reshape_transform
        self.handles = []
        for target_layer in target_layers:
            self.handles.append(target_layer.register_forward_hook(self.save_activation))
            self.handles.append(target_layer.register_forward_hook(self.save_gradient))

    def save_activation(self, module, input, output):
        activation = output
        if self.reshape_transform is not None:
            activation = self.reshape_transform(activation)
        self.activations.append(activation.cpu().detach())

    def save_gradient(self, module, input, output):
        if not hasattr(output, "requires_grad") or not output.requires_grad:
            return

        def _store_grad(grad):
            if self.reshape_transform is not None:
                grad = self.reshape_transform(grad)
            self.gradients = [grad.cpu().detach()] + self.gradients

        output.register_hook(_store_grad)

    def __call__(self, x):
        self.gradients = []
        self.activations = []
        return self.model(x)

    def release(self):
        for handle in self.handles:
            handle.remove()


model = make()
model.eval()
ag = ActivationsAndGradients(model, [model[1], model[3]])
out = ag(x)
score = out[torch.arange(2), y].sum()
model.zero_grad()
score.backward(retain_graph=True)
acts, grads = ag.activations, ag.gradients
print("cam shapes", [tuple(a.shape) for a in acts], [tuple(g.shape) for g in grads])
weights = grads[-1].mean(dim=(2, 3), keepdim=True)
cam = F.relu((weights * acts[-1]).sum(1))
cam = cam - cam.amin(dim=(1, 2), keepdim=True)
cam = cam / (cam.amax(dim=(1, 2), keepdim=True) + 1e-7)
print("cam", tuple(cam.shape), fmt(cam[0]), fmt(cam[1]))
ag.release()
out = ag(x)
print("released", len(ag.activations), len(model[1]._forward_hooks))

# --- per-parameter clipping with tensor hooks ---
model = make()
clip = 0.01
hs = [p.register_hook(lambda grad: torch.clamp(grad, -clip, clip)) for p in model.parameters()]
F.cross_entropy(model(x), y).backward()
print("clipped", max(p.grad.abs().max().item() for p in model.parameters()) <= clip,
      fmt(model[6].weight.grad))
for h in hs:
    h.remove()

# --- full backward pre-hook and hooks with kwargs ---
lin = nn.Linear(3, 2)
seen = []


def bw_pre(module, grad_output):
    seen.append(("pre", [tuple(g.shape) for g in grad_output]))
    return (grad_output[0] * 10,)


def bw(module, grad_input, grad_output):
    seen.append(("full", [None if g is None else fmt(g) for g in grad_input]))


h1 = lin.register_full_backward_pre_hook(bw_pre)
h2 = lin.register_full_backward_hook(bw)
inp = torch.randn(4, 3, requires_grad=True)
lin(inp).sum().backward()
print("bw hooks", seen, fmt(inp.grad), fmt(lin.weight.grad))
h1.remove()
h2.remove()


class Scaled(nn.Module):
    def forward(self, x, scale=1.0, shift=None):
        out = x * scale
        if shift is not None:
            out = out + shift
        return out


def pre_kw(module, args, kwargs):
    kwargs = dict(kwargs)
    kwargs["scale"] = kwargs.get("scale", 1.0) * 2
    return args, kwargs


def post_kw(module, args, kwargs, output):
    return output + kwargs.get("shift", 0)


sm = Scaled()
sm.register_forward_pre_hook(pre_kw, with_kwargs=True)
sm.register_forward_hook(post_kw, with_kwargs=True)
print("with_kwargs", sm(torch.ones(2), scale=3.0, shift=1.0).tolist(), sm(torch.ones(2)).tolist())


class Boom(nn.Module):
    def forward(self, x):
        raise ValueError("boom in forward")


calls = []
bm = Boom()
bm.register_forward_hook(lambda m, a, o: calls.append("always"), always_call=True)
bm.register_forward_hook(lambda m, a, o: calls.append("normal"))
try:
    bm(torch.ones(1))
except ValueError as e:
    print("raised", e, calls)

log = []
g1 = module_hooks.register_module_forward_pre_hook(lambda m, a: log.append(type(m).__name__))
g2 = module_hooks.register_module_forward_hook(lambda m, a, o: log.append(tuple(o.shape)))
make()(x)
g1.remove()
g2.remove()
make()(x)
print("global", log)

# --- optimizer step hooks ---
model = make()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
events = []


def pre(optimizer, args, kwargs):
    events.append(("pre", optimizer.param_groups[0]["lr"], len(optimizer.state)))
    for group in optimizer.param_groups:
        group["lr"] *= 0.5


def post(optimizer, args, kwargs):
    events.append(("post", len(optimizer.state)))


hp = opt.register_step_pre_hook(pre)
hq = opt.register_step_post_hook(post)
for _ in range(2):
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
hp.remove()
opt.step()
print("opt hooks", events, opt.param_groups[0]["lr"], fmt(model[6].bias))
optim_mod = importlib.import_module(LIB + ".optim.optimizer")
glog = []
gh1 = optim_mod.register_optimizer_step_pre_hook(
    lambda o, a, k: glog.append(("gpre", type(o).__name__)))
gh2 = optim_mod.register_optimizer_step_post_hook(lambda o, a, k: glog.append("gpost"))
opt.register_step_post_hook(lambda o, a, k: glog.append("own post"))
opt.register_step_pre_hook(lambda o, a, k: glog.append("own pre"))
opt.step()
torch.optim.Adam(model.parameters()).step()
gh1.remove()
gh2.remove()
opt.step()
print("global opt hooks", glog)
