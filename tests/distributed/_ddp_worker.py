"""Run under ``mpiexec -n 2``: DDP on the W3 MLP, no_sync, find_unused_parameters.

Writes rank 0's initial and per-step parameters to ``sys.argv[1]`` (npz) for the parent test,
which compares them with one process on the whole batch (ember and torch).
"""
import datetime
import sys

import numpy as np

import ember
import ember.distributed as dist
from ember import nn
from ember.nn.parallel.distributed import DistributedDataParallel as DDP

STEPS, BATCH = 3, 64
dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=30))
rank, world = dist.get_rank(), dist.get_world_size()


def mlp():
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))


def flat_params(model):
    return np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])


def same_on_all_ranks(model):
    mine = ember.tensor(flat_params(model))
    out = [ember.zeros_like(mine) for _ in range(world)]
    dist.all_gather(out, mine)
    return all(np.array_equal(o.numpy(), out[0].numpy()) for o in out)


ember.manual_seed(100 + rank)             # different on each rank: DDP broadcasts rank 0's
model = mlp()
ddp = DDP(model, bucket_cap_mb=1)          # several buckets
assert same_on_all_ranks(model)
rng = np.random.default_rng(0)
x_all = rng.standard_normal((world * BATCH, 784)).astype(np.float32)
y_all = rng.integers(0, 10, world * BATCH)
x = ember.tensor(x_all[rank * BATCH:(rank + 1) * BATCH])
y = ember.tensor(y_all[rank * BATCH:(rank + 1) * BATCH])
saved = {"x": x_all, "y": y_all}
for i, (k, v) in enumerate(model.state_dict().items()):
    saved["init/" + k] = v.numpy().copy()
opt = ember.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
for step in range(STEPS):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(ddp(x), y)
    loss.backward()
    opt.step()
    assert same_on_all_ranks(model), "parameters differ across ranks after step %d" % step
    for k, v in model.state_dict().items():
        saved["step%d/%s" % (step, k)] = v.numpy().copy()
assert ddp.reducer.reductions == STEPS
assert list(ddp.state_dict())[0] == "module.0.weight"

# no_sync: two local micro-batches, then a synced one; equals the average of the local sums
twin = mlp()
twin.load_state_dict(model.state_dict())
chunks = [(x[i::3], y[i::3]) for i in range(3)]
ddp.zero_grad()
with ddp.no_sync():
    for cx, cy in chunks[:2]:
        nn.functional.cross_entropy(ddp(cx), cy).backward()
g_local = model[0].weight.grad.clone()
other = [ember.zeros_like(g_local) for _ in range(world)]
dist.all_gather(other, g_local)
assert not np.array_equal(other[0].numpy(), other[1].numpy())     # not averaged yet
nn.functional.cross_entropy(ddp(chunks[2][0]), chunks[2][1]).backward()
for cx, cy in chunks:
    nn.functional.cross_entropy(twin(cx), cy).backward()
for p, q in zip(model.parameters(), twin.parameters()):
    ref = q.grad.clone()
    dist.all_reduce(ref, op=dist.ReduceOp.AVG)
    assert np.array_equal(p.grad.numpy(), ref.numpy()), "no_sync: grads differ"


# find_unused_parameters: rank 1 never uses branch b
class TwoBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 2)
        self.b = nn.Linear(4, 2)
        self.c = nn.Linear(4, 2)     # unused on every rank: its grad stays None

    def forward(self, x, use_b):
        return self.a(x) + (self.b(x) if use_b else 0)


ember.manual_seed(7)
tb = TwoBranch()
dtb = DDP(tb, find_unused_parameters=True)
xb = ember.ones(3, 4) * (rank + 1)
for _ in range(2):
    tb.zero_grad()
    dtb(xb, use_b=rank == 0).sum().backward()
    assert same_on_all_ranks(tb)
    assert tb.c.weight.grad is None
    gb = tb.b.weight.grad.clone()
    assert np.allclose(gb.numpy(), 0.5 * 3.0)      # rank 0's grad (3 rows of 1) / world
    ga = tb.a.weight.grad
    assert np.allclose(ga.numpy(), 0.5 * (3.0 + 6.0))

# without find_unused_parameters: the next forward says which parameters got no gradient
tb2 = TwoBranch()
d2 = DDP(tb2)
d2(xb, use_b=True).sum().backward()       # c unused: the reduction never finishes
try:
    d2(xb, use_b=True)
except RuntimeError as e:
    assert "Expected to have finished reduction" in str(e), e
    assert "find_unused_parameters=True" in str(e)
else:
    raise AssertionError("expected the unfinished-reduction error")
if rank == 0:
    np.savez(sys.argv[1], **saved)
dist.barrier()
print("rank %d: ddp ok" % rank, flush=True)
