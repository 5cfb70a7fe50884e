"""Seeding and hook-handle bookkeeping from training frameworks (fairseq/Lightning-style
utilities): torch.manual_seed's return value, torch.seed/initial_seed, default_generator,
Generator objects (seed, initial_seed, get_state/set_state, clone_state idiom, device),
torch.random.fork_rng (enabled flag, nested), a set_torch_seed context manager, and
torch.utils.hooks.RemovableHandle over an OrderedDict (ids, remove() twice, `with handle:`),
and module/tensor hooks registered with prepend/with_kwargs and removed through their handles."""
import collections
import contextlib
import importlib
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
hooks = importlib.import_module(LIB + ".utils.hooks")

g = torch.manual_seed(1234)
print(type(g).__name__, g is torch.default_generator, g.initial_seed(), torch.initial_seed())
print(torch.random.initial_seed(), torch.default_generator.device)
a = torch.rand(3)
state = torch.get_rng_state()
print(state.dtype, state.shape, state[:8])
b = torch.rand(3)
torch.set_rng_state(state)
print(torch.equal(b, torch.rand(3)))
s = torch.seed()
print(isinstance(s, int), torch.initial_seed() == s)
torch.manual_seed(7)
print(torch.randn(2))

gen = torch.Generator()
print(gen.device, gen.initial_seed())
gen.manual_seed(2**40 + 5)
print(gen.initial_seed(), torch.randint(0, 100, (5,), generator=gen))
st = gen.get_state()
x1 = torch.randn(3, generator=gen)
gen.set_state(st)
x2 = torch.randn(3, generator=gen)
print(torch.equal(x1, x2), st.shape)
gen2 = torch.Generator().set_state(st)
print(type(gen2).__name__, torch.equal(torch.randn(3, generator=gen2), x1))
gs = gen.seed()
print(isinstance(gs, int), gen.initial_seed() == gs)
try:
    gen.manual_seed(-1)
    print("negative ok", gen.initial_seed())
except Exception as e:
    print(type(e).__name__, e)
try:
    torch.Generator().set_state(torch.zeros(3))
except Exception as e:
    print(type(e).__name__, e)

torch.manual_seed(0)
before = torch.rand(1)
torch.manual_seed(0)
with torch.random.fork_rng():
    torch.manual_seed(99)
    inside = torch.rand(1)
    with torch.random.fork_rng(devices=[]):
        torch.rand(100)
    print(inside, torch.rand(1))
print(torch.equal(torch.rand(1), before))
torch.manual_seed(0)
with torch.random.fork_rng(enabled=False):
    torch.rand(1)
print(torch.equal(torch.rand(1), before))


@contextlib.contextmanager
def set_torch_seed(seed):
    rng = torch.get_rng_state()
    torch.manual_seed(seed)
    try:
        yield
    finally:
        torch.set_rng_state(rng)


torch.manual_seed(5)
with set_torch_seed(42):
    print(torch.randint(0, 10, (4,)))
print(torch.randint(0, 10, (4,)))

store = collections.OrderedDict()
h1 = hooks.RemovableHandle(store)
h2 = hooks.RemovableHandle(store)
store[h1.id] = "first"
store[h2.id] = "second"
print(h2.id - h1.id, sorted(store.values()))
h1.remove()
h1.remove()
print(list(store.values()))
with h2:
    print(len(store))
print(store)
h3 = hooks.RemovableHandle(store)
store[h3.id] = 1
h3.remove()
print(store, h3.id > h2.id)

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
log = []
hp = net[0].register_forward_pre_hook(lambda m, inp: log.append("pre") or (inp[0] * 2,))
hp2 = net[0].register_forward_pre_hook(lambda m, inp: log.append("pre-first"), prepend=True)
hf = net[0].register_forward_hook(lambda m, inp, out: log.append(("fwd", tuple(out.shape))))
hk = net.register_forward_hook(lambda m, args, kwargs, out: log.append(("kw", sorted(kwargs))),
                               with_kwargs=True)
hb = net[2].register_full_backward_hook(
    lambda m, gi, go: log.append(("bwd", [None if g is None else tuple(g.shape) for g in gi])))
print(type(hp).__name__, isinstance(hp, hooks.RemovableHandle))
xin = torch.randn(2, 3)
out = net(xin)
out.sum().backward()
print(log)
print(len(net[0]._forward_pre_hooks), len(net[0]._forward_hooks))
for h in (hp, hp2, hf, hk, hb):
    h.remove()
print(len(net[0]._forward_pre_hooks), len(net[0]._forward_hooks), len(net[2]._backward_hooks))
print(torch.equal(net(xin), net[2](net[1](net[0](xin)))))

calls = []
t = torch.ones(3, requires_grad=True)
th = t.register_hook(lambda g: calls.append(g.sum().item()) or g * 10)
(t * 2).sum().backward()
print(t.grad, calls)
th.remove()
t.grad = None
(t * 2).sum().backward()
print(t.grad, calls)
p = nn.Parameter(torch.zeros(2))
ph = p.register_post_accumulate_grad_hook(lambda param: calls.append(("acc", param.grad.tolist())))
(p * 3).sum().backward()
ph.remove()
(p * 3).sum().backward()
print(calls, p.grad)
sh = net.register_state_dict_pre_hook(lambda m, prefix, keep_vars: calls.append("sd"))
net.state_dict()
sh.remove()
net.state_dict()
print(calls[-1], calls.count("sd"))
print("RESULT:", len(calls))
