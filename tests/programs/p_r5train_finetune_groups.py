"""Fine-tuning optimizer setups, shrunk from their sources: HF Trainer.create_optimizer
(get_parameter_names skipping LayerNorm, no-decay names, AdamW groups), ULMFiT/fastai
discriminative learning rates with gradual unfreezing through add_param_group, optimizers
built from named_parameters() (param_names in param_groups and state_dict), loading a
state_dict saved with a different parameter order via a load_state_dict pre-hook, a Tensor lr,
zero_grad(set_to_none=False), the optimizer repr, torch.save/torch.load of the optimizer state
through BytesIO, and the errors of the usual mistakes (a parameter in two groups, a non-leaf,
a generator reused, a missing lr)."""
import importlib
import io
import os
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")

ALL_LAYERNORM_LAYERS = [nn.LayerNorm]


def get_parameter_names(model, forbidden_layer_types):
    result = []
    for name, child in model.named_children():
        result += [f"{name}.{n}" for n in get_parameter_names(child, forbidden_layer_types)
                   if not isinstance(child, tuple(forbidden_layer_types))]
    result += list(model._parameters.keys())
    return result


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 8)
        self.block1 = nn.Sequential(nn.Linear(8, 8), nn.LayerNorm(8), nn.GELU())
        self.block2 = nn.Sequential(nn.Linear(8, 8), nn.LayerNorm(8), nn.GELU())
        self.head = nn.Linear(8, 3)

    def forward(self, idx):
        h = self.embed(idx).mean(1)
        return self.head(self.block2(self.block1(h)))


def fmt(t):
    return [round(v, 5) for v in t.detach().reshape(-1)[:3].tolist()]


torch.manual_seed(0)
idx = torch.randint(0, 10, (6, 4))
y = torch.randint(0, 3, (6,))

# HF Trainer.create_optimizer
model = Encoder()
decay_parameters = get_parameter_names(model, ALL_LAYERNORM_LAYERS)
decay_parameters = [name for name in decay_parameters if "bias" not in name]
print("decay names", decay_parameters)
optimizer_grouped_parameters = [
    {"params": [p for n, p in model.named_parameters()
                if (n in decay_parameters and p.requires_grad)], "weight_decay": 0.01},
    {"params": [p for n, p in model.named_parameters()
                if (n not in decay_parameters and p.requires_grad)], "weight_decay": 0.0},
]
opt = torch.optim.AdamW(optimizer_grouped_parameters, lr=5e-3, betas=(0.9, 0.98), eps=1e-6)
print("group sizes", [len(g["params"]) for g in opt.param_groups],
      [g["weight_decay"] for g in opt.param_groups])
for _ in range(3):
    opt.zero_grad()
    F.cross_entropy(model(idx), y).backward()
    opt.step()
print("hf loss", round(F.cross_entropy(model(idx), y).item(), 6))
print(opt)

# named parameters: param_names travel with the groups and the state_dict
model = Encoder()
opt = torch.optim.SGD(model.named_parameters(), lr=0.1, momentum=0.9)
print("param_names", opt.param_groups[0]["param_names"][:3], sorted(opt.param_groups[0])[:4])
F.cross_entropy(model(idx), y).backward()
opt.step()
sd = opt.state_dict()
print("named sd", sd["param_groups"][0]["param_names"][-2:], sorted(sd["state"])[:3])
try:
    torch.optim.SGD([("a", nn.Parameter(torch.ones(1))), nn.Parameter(torch.ones(1))], lr=0.1)
except Exception as e:
    print(type(e).__name__, e)
try:
    opt.add_param_group({"params": [nn.Parameter(torch.ones(2))]})
except Exception as e:
    print(type(e).__name__, e)

# ULMFiT: discriminative lrs, gradual unfreezing
model = Encoder()
for p in model.parameters():
    p.requires_grad_(False)
for p in model.head.parameters():
    p.requires_grad_(True)
base_lr, factor = 0.02, 2.6
opt = torch.optim.Adam([{"params": model.head.parameters(), "lr": base_lr}], lr=base_lr)
layers = [model.block2, model.block1, model.embed]
for stage in range(4):
    for _ in range(2):
        opt.zero_grad(set_to_none=False)
        F.cross_entropy(model(idx), y).backward()
        opt.step()
    print("stage", stage, [round(g["lr"], 6) for g in opt.param_groups],
          round(F.cross_entropy(model(idx), y).item(), 6),
          model.embed.weight.grad is None, len(opt.state))
    if stage < 3:
        layer = layers[stage]
        for p in layer.parameters():
            p.requires_grad_(True)
        opt.add_param_group({"params": layer.parameters(), "lr": base_lr / factor ** (stage + 1)})
print("frozen grad kept", model.head.weight.grad is not None,
      float(model.head.weight.grad.abs().sum()) > 0)

# a state_dict saved with groups in another order, fixed up by a load_state_dict pre-hook
model = Encoder()
opt_a = torch.optim.Adam([{"params": model.head.parameters()},
                          {"params": model.block1.parameters(), "lr": 1e-4}], lr=1e-3)
F.cross_entropy(model(idx), y).backward()
opt_a.step()
buf = io.BytesIO()
torch.save(opt_a.state_dict(), buf)
buf.seek(0)
saved = torch.load(buf)
opt_b = torch.optim.Adam([{"params": model.block1.parameters(), "lr": 1e-4},
                          {"params": model.head.parameters()}], lr=1e-3)
try:
    opt_b.load_state_dict(saved)
except Exception as e:
    print(type(e).__name__, e)


def reorder(optimizer, state_dict):
    groups = state_dict["param_groups"][::-1]
    order = [i for g in groups for i in g["params"]]
    remap = {old: new for new, old in enumerate(order)}
    state = {remap[k]: v for k, v in state_dict["state"].items()}
    new_groups = []
    for g in groups:
        g = dict(g)
        g["params"] = [remap[i] for i in g["params"]]
        new_groups.append(g)
    return {"state": state, "param_groups": new_groups}


h = opt_b.register_load_state_dict_pre_hook(reorder)
opt_b.load_state_dict(saved)
h.remove()
wb = model.block1[0].weight
print("reordered", [g["lr"] for g in opt_b.param_groups], fmt(opt_b.state[wb]["exp_avg"]),
      torch.equal(opt_b.state[wb]["exp_avg_sq"], opt_a.state[wb]["exp_avg_sq"]),
      opt_b.state[wb]["step"].item())

# Tensor lr, zero_grad(set_to_none=False), errors
model = Encoder()
opt = torch.optim.Adam(model.parameters(), lr=torch.tensor(0.01))
F.cross_entropy(model(idx), y).backward()
opt.step()
print("tensor lr", type(opt.param_groups[0]["lr"]).__name__, fmt(model.head.weight))
opt.zero_grad(set_to_none=False)
print("zeroed", model.head.weight.grad.abs().sum().item(), model.embed.weight.grad.shape)
p = nn.Parameter(torch.ones(2))
for bad in [lambda: torch.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1),
            lambda: torch.optim.SGD([p * 2], lr=0.1),
            lambda: torch.optim.SGD(p, lr=0.1),
            lambda: torch.optim.SGD([{"params": [p], "lr": 0.1}, {"params": []}]),
            lambda: torch.optim.Adam([p], lr=-1.0),
            lambda: torch.optim.Adam([p], betas=(0.9, 1.0)),
            lambda: torch.optim.SGD([p], lr=0.1, nesterov=True),
            lambda: torch.optim.Adam([p], lr=torch.tensor([0.1, 0.2]))]:
    try:
        bad()
        print("no error")
    except Exception as e:
        print(type(e).__name__, e)
gen = (q for q in Encoder().parameters())
opt = torch.optim.SGD(gen, lr=0.1)
try:
    torch.optim.SGD(gen, lr=0.1)
except Exception as e:
    print(type(e).__name__, e)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    torch.optim.SGD([p, p], lr=0.1)
    print("dup warnings", [str(x.message)[:50] for x in w])
print("default lr", torch.optim.SGD([p]).defaults["lr"], torch.optim.Adam([p]).defaults["lr"])
