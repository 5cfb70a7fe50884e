"""nn.Module API as the docs of torch.nn.Module describe it (and as HF's PreTrainedModel and
timm's model helpers use it): to(dtype)/half()/double()/bfloat16()/type() and what they leave
alone (integer buffers), to() argument errors, get_extra_state/set_extra_state, the public
state-dict hooks (register_state_dict_pre_hook, register_state_dict_post_hook,
register_load_state_dict_pre_hook, register_load_state_dict_post_hook), load_state_dict
(assign=True) and its size-mismatch / missing / unexpected errors, set_submodule,
register_module, __setattr__ type errors, requires_grad_, zero_grad and module reprs."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.bn = nn.BatchNorm1d(2)
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))
        self.register_buffer("scale", torch.ones(2), persistent=False)
        self.note = "v1"

    def extra_repr(self):
        return f"note={self.note!r}"

    def get_extra_state(self):
        return {"note": self.note, "steps": int(self.steps)}

    def set_extra_state(self, state):
        print("set_extra_state", state)
        self.note = state["note"]

    def forward(self, x):
        self.steps += 1
        return self.bn(self.fc(x)) * self.scale


def show(tag, m):
    print(tag, [(n, str(t.dtype)) for n, t in list(m.state_dict().items()) if hasattr(t, "dtype")],
          m.scale.dtype)


torch.manual_seed(0)
m = Counter()
print(m)
x = torch.randn(4, 3)
m(x)
sd = m.state_dict()
print(list(sd.keys()), sd["_extra_state"])
show("float", m)
show("double", m.double())
show("half", m.half())
show("bf16", m.bfloat16())
show("to64", m.to(torch.float64))
show("type32", m.type(torch.float32))
show("to_tensor", m.to(torch.zeros(1, dtype=torch.float16)))
m.float()
print("cpu", m.to("cpu", torch.float32).fc.weight.dtype, m.to(device="cpu").fc.bias.device)
for args, kwargs in [((torch.int32,), {}), ((torch.bool,), {}), (("cpu", torch.long), {}),
                     ((), {"dtype": torch.uint8})]:
    try:
        m.to(*args, **kwargs)
    except Exception as e:
        print(type(e).__name__, e)
print("steps dtype", m.steps.dtype, m.steps.item())

calls = []


def pre_hook(module, prefix, keep_vars):
    calls.append(("pre", type(module).__name__, prefix, keep_vars))


def post_hook(module, state_dict, prefix, local_metadata):
    calls.append(("post", type(module).__name__, prefix))
    state_dict[prefix + "hooked"] = torch.tensor(1.0)


h1 = m.register_state_dict_pre_hook(pre_hook)
h2 = m.fc.register_state_dict_post_hook(post_hook)
sd = m.state_dict(prefix="model.")
print(calls, list(sd.keys()))
h1.remove()
h2.remove()
calls.clear()


def load_pre(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
             error_msgs):
    calls.append(("load_pre", prefix, sorted(k for k in state_dict if k.startswith(prefix))[:2]))
    state_dict.pop(prefix + "hooked", None)


def load_post(module, incompatible_keys):
    calls.append(("load_post", type(module).__name__, list(incompatible_keys.missing_keys),
                  list(incompatible_keys.unexpected_keys)))


m2 = Counter()
m2.fc.register_load_state_dict_pre_hook(load_pre)
m2.register_load_state_dict_post_hook(load_post)
sd = {k[len("model."):]: v for k, v in sd.items()}
sd["_extra_state"] = {"note": "v2", "steps": 1}
print(m2.load_state_dict(sd))
print(calls, m2.note, m2)
calls.clear()

bad = dict(sd)
bad["fc.weight"] = torch.zeros(5, 3)
bad["extra.weight"] = torch.zeros(1)
del bad["bn.running_var"]
bad["bn.weight"] = bad["bn.weight"] + 5
try:
    m2.load_state_dict(bad)
except RuntimeError as e:
    print(type(e).__name__, e)
print("partial load", m2.bn.weight, m2.fc.weight.shape)
res = m2.load_state_dict({k: v for k, v in sd.items() if not k.startswith("bn")}, strict=False)
print(res.missing_keys, res.unexpected_keys)
calls.clear()

fresh = {k: (v.clone() + 1 if torch.is_tensor(v) and v.is_floating_point() else v)
         for k, v in sd.items()}
w_before = m2.fc.weight
m2.load_state_dict(fresh, assign=False)
print("copy keeps param", m2.fc.weight is w_before, type(m2.fc.weight).__name__)
m2.load_state_dict(fresh, assign=True)
print("assign", m2.fc.weight is w_before, type(m2.fc.weight).__name__,
      m2.fc.weight.requires_grad, m2.fc.weight is fresh["fc.weight"])

seq = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.ReLU(), nn.Linear(2, 1)))
seq.set_submodule("1.0", nn.GELU(approximate="tanh"))
seq.register_module("head", nn.Identity(3, unused=True))
print(seq)
for target in ("1.5", "1.1.weight", "9"):
    try:
        seq.get_submodule(target)
    except AttributeError as e:
        print(type(e).__name__, e)
try:
    seq.set_submodule("1.5.x", nn.ReLU())
except AttributeError as e:
    print(type(e).__name__, e)
lin = nn.Linear(2, 2)
for name, value in (("weight", torch.zeros(2, 2)), ("bias", 3)):
    try:
        setattr(lin, name, value)
    except TypeError as e:
        print(type(e).__name__, e)
try:
    lin.fc = 5
    lin.add_module("fc", 5)
except TypeError as e:
    print(type(e).__name__, e)
try:
    lin.register_buffer("weight", torch.zeros(1))
except KeyError as e:
    print(type(e).__name__, e)
lin.weight = None
print(lin, [n for n, _ in lin.named_parameters()])
# (calling lin now: torch raises TypeError from F.linear; see requests13.md "[H2] F.linear weight=None")  # noqa: E501

net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))
net[0].requires_grad_(False)
print([(n, p.requires_grad) for n, p in net.named_parameters()])
net(torch.randn(5, 3)).sum().backward()
print([None if p.grad is None else tuple(p.grad.shape) for p in net.parameters()])
net.zero_grad(set_to_none=False)
print([None if p.grad is None else p.grad.abs().sum().item() for p in net.parameters()])
net.zero_grad()
print([p.grad for p in net.parameters()])
net.half()
print(net[1].running_mean.dtype, net[1].num_batches_tracked.dtype, net[1].num_batches_tracked)
try:
    net(torch.randn(5, 3))
except RuntimeError as e:
    print(type(e).__name__, e)
