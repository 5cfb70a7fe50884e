"""LoRA the ways blog posts and microsoft/LoRA's loralib / minLoRA write it, shrunk: a LoRALinear
that subclasses nn.Linear (lora_A kaiming_uniform_(a=sqrt(5)), lora_B zeros, scaling=alpha/r,
lora_dropout, merge on eval / unmerge on train), mark_only_lora_as_trainable, requires_grad_(False)
freezing and trainable-parameter counts, lora_state_dict filtering, a minLoRA-style
parametrization via torch.nn.utils.parametrize (register_parametrization, original weights,
remove_parametrizations with leave_parametrized), a few steps of fine-tuning and a merged-weights
check."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
parametrize = importlib.import_module(os.environ.get("TORCH_LIB", "torch") +
                                      ".nn.utils.parametrize")


class LoRALayer:
    def __init__(self, r, lora_alpha, lora_dropout, merge_weights):
        self.r = r
        self.lora_alpha = lora_alpha
        if lora_dropout > 0.0:
            self.lora_dropout = nn.Dropout(p=lora_dropout)
        else:
            self.lora_dropout = lambda x: x
        self.merged = False
        self.merge_weights = merge_weights


class Linear(nn.Linear, LoRALayer):
    def __init__(self, in_features, out_features, r=0, lora_alpha=1, lora_dropout=0.0,
                 fan_in_fan_out=False, merge_weights=True, **kwargs):
        nn.Linear.__init__(self, in_features, out_features, **kwargs)
        LoRALayer.__init__(self, r=r, lora_alpha=lora_alpha, lora_dropout=lora_dropout,
                           merge_weights=merge_weights)
        self.fan_in_fan_out = fan_in_fan_out
        if r > 0:
            self.lora_A = nn.Parameter(self.weight.new_zeros((r, in_features)))
            self.lora_B = nn.Parameter(self.weight.new_zeros((out_features, r)))
            self.scaling = self.lora_alpha / self.r
            self.weight.requires_grad = False
        self.reset_parameters()
        if fan_in_fan_out:
            self.weight.data = self.weight.data.transpose(0, 1)

    def reset_parameters(self):
        nn.Linear.reset_parameters(self)
        if hasattr(self, "lora_A"):
            nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
            nn.init.zeros_(self.lora_B)

    def train(self, mode=True):
        def T(w):
            return w.transpose(0, 1) if self.fan_in_fan_out else w
        nn.Linear.train(self, mode)
        if mode:
            if self.merge_weights and self.merged:
                if self.r > 0:
                    self.weight.data -= T(self.lora_B @ self.lora_A) * self.scaling
                self.merged = False
        else:
            if self.merge_weights and not self.merged:
                if self.r > 0:
                    self.weight.data += T(self.lora_B @ self.lora_A) * self.scaling
                self.merged = True
        return self

    def forward(self, x):
        def T(w):
            return w.transpose(0, 1) if self.fan_in_fan_out else w
        if self.r > 0 and not self.merged:
            result = F.linear(x, T(self.weight), bias=self.bias)
            result += (self.lora_dropout(x) @ self.lora_A.transpose(0, 1)
                       @ self.lora_B.transpose(0, 1)) * self.scaling
            return result
        return F.linear(x, T(self.weight), bias=self.bias)


def mark_only_lora_as_trainable(model, bias="none"):
    for n, p in model.named_parameters():
        if "lora_" not in n:
            p.requires_grad = False
    if bias == "all":
        for n, p in model.named_parameters():
            if "bias" in n:
                p.requires_grad = True


def lora_state_dict(model):
    my_state_dict = model.state_dict()
    return {k: my_state_dict[k] for k in my_state_dict if "lora_" in k}


class Block(nn.Module):
    def __init__(self, d=16, r=4):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.c_attn = Linear(d, 3 * d, r=r, lora_alpha=8, lora_dropout=0.1)
        self.c_proj = Linear(d, d, r=r, lora_alpha=8, fan_in_fan_out=True)
        self.head = nn.Linear(d, 5)

    def forward(self, x):
        q, k, v = self.c_attn(self.ln(x)).chunk(3, dim=-1)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(q.size(-1))
        y = att.softmax(-1) @ v
        return self.head((x + self.c_proj(y)).mean(1))


def count(model):
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    return f"trainable params: {trainable:,} || all params: {total:,} || " \
           f"trainable%: {100 * trainable / total:.4f}"


torch.manual_seed(0)
model = Block()
print(model)
print(Linear.__mro__[1].__name__, isinstance(model.c_attn, nn.Linear), model.c_attn.scaling)
print([(n, tuple(p.shape), p.requires_grad) for n, p in model.named_parameters()])
mark_only_lora_as_trainable(model, bias="all")
print(count(model))
print(sorted(lora_state_dict(model)))
print(model.c_proj.weight.shape, model.c_attn.lora_B.abs().sum().item())

x = torch.randn(6, 5, 16)
y = torch.randint(0, 5, (6,))
opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
for step in range(8):
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, f"{loss.item():.5f}", model.c_attn.weight.grad is None,
          f"{model.c_attn.lora_B.grad.norm().item():.5f}")

model.eval()
print("merged", model.c_attn.merged, model.c_proj.merged)
with torch.no_grad():
    merged_out = model(x)
model.train()
model.c_attn.lora_dropout.eval()
with torch.no_grad():
    unmerged_out = model(x)
print("merge matches:", torch.allclose(merged_out, unmerged_out, atol=1e-5),
      f"{(merged_out - unmerged_out).abs().max().item() < 1e-5}")
print(merged_out[:2])

# freezing a pretrained backbone with requires_grad_(False) and training a new head
backbone = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16))
backbone.requires_grad_(False)
head = nn.Linear(16, 3)
print([p.requires_grad for p in backbone.parameters()], head.weight.requires_grad)
out = head(backbone(torch.randn(4, 8)))
print(out.grad_fn, out.requires_grad, backbone[0].weight.grad_fn)
out.sum().backward()
print(backbone[0].weight.grad, head.bias.grad)


# minLoRA: LoRA as a parametrization of nn.Linear.weight
class LoRAParametrization(nn.Module):
    def __init__(self, fan_in, fan_out, rank=2, lora_alpha=2):
        super().__init__()
        self.lora_A = nn.Parameter(torch.zeros(rank, fan_in))
        self.lora_B = nn.Parameter(torch.zeros(fan_out, rank))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.scale = lora_alpha / rank

    def forward(self, original_weights):
        return original_weights + torch.matmul(self.lora_B, self.lora_A).view(
            original_weights.shape) * self.scale


net = nn.Sequential(nn.Linear(6, 10), nn.Tanh(), nn.Linear(10, 2))
for layer in net:
    if isinstance(layer, nn.Linear):
        fan_out, fan_in = layer.weight.shape
        parametrize.register_parametrization(layer, "weight",
                                             LoRAParametrization(fan_in, fan_out))
print(net)
print([n for n, _ in net.named_parameters()])
print(parametrize.is_parametrized(net[0]), parametrize.is_parametrized(net[0], "bias"),
      type(net[0]).__name__)
for n, p in net.named_parameters():
    p.requires_grad = "lora_" in n
print(count(net))
inp = torch.randn(5, 6)
before = net(inp).detach()
opt = torch.optim.SGD([p for p in net.parameters() if p.requires_grad], lr=0.5, momentum=0.9)
for step in range(5):
    loss = (net(inp) - 1).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, f"{loss.item():.5f}")
print(net[0].parametrizations.weight.original.requires_grad,
      net[2].parametrizations["weight"][0].lora_B.grad)
after = net(inp)
for layer in net:
    if isinstance(layer, nn.Linear):
        parametrize.remove_parametrizations(layer, "weight", leave_parametrized=True)
print(net, [n for n, _ in net.named_parameters()])
print("merged equal:", torch.allclose(net(inp), after, atol=1e-6),
      "changed:", not torch.allclose(before, after))
print("RESULT:", f"{loss.item():.5f}")
