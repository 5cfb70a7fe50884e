"""Run under ``mpiexec -n 2``: every collective, op and dtype, checked on both ranks."""
import datetime

import numpy as np

import ember
import ember.distributed as dist
from ember.distributed import ReduceOp

dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=20))
rank, n = dist.get_rank(), dist.get_world_size()
assert n == 2 and dist.is_initialized() and dist.get_backend() == "mpi"
assert dist.group.WORLD is not None

DTYPES = [ember.float16, ember.float32, ember.float64, ember.int64, ember.int32, ember.int8,
          ember.uint8, ember.complex64]
vals = [np.array([1, 2, 3, 4, 5, 6], dtype=np.float64).reshape(2, 3),
        np.array([6, 1, 3, 2, 5, 4], dtype=np.float64).reshape(2, 3)]
ref = {"SUM": vals[0] + vals[1], "PRODUCT": vals[0] * vals[1],
       "MIN": np.minimum(*vals), "MAX": np.maximum(*vals), "AVG": (vals[0] + vals[1]) / 2}
checked = 0
for dt in DTYPES:
    for name, want in ref.items():
        kind = np.dtype(ember.empty(0, dtype=dt).numpy().dtype).kind
        if name == "AVG" and kind not in "fc" or name in ("MIN", "MAX") and kind == "c":
            continue
        t = ember.tensor(vals[rank]).to(dt)
        arr = t._array
        dist.all_reduce(t, op=getattr(ReduceOp, name))
        assert t._array is arr          # in place, on the tensor's own array
        assert np.array_equal(t.numpy(), want.astype(t.numpy().dtype)), (dt, name, t)
        checked += 1
for name, fn in (("BAND", np.bitwise_and), ("BOR", np.bitwise_or), ("BXOR", np.bitwise_xor)):
    t = ember.tensor(vals[rank].astype(np.int64))
    dist.all_reduce(t, op=getattr(ReduceOp, name))
    assert np.array_equal(t.numpy(), fn(vals[0].astype(np.int64), vals[1].astype(np.int64)))
# bool: SUM is logical or, PRODUCT logical and (as torch's NCCL)
b = ember.tensor([True, False, False]) if rank == 0 else ember.tensor([False, False, True])
dist.all_reduce(b)
assert b.tolist() == [True, False, True]
# a non-contiguous tensor: through a copy, written back
base = ember.tensor(np.arange(12.0).reshape(3, 4) * (rank + 1))
view = base.t()
dist.all_reduce(view)
assert np.array_equal(base.numpy(), np.arange(12.0).reshape(3, 4) * 3)
# async_op
t = ember.ones(1000) * (rank + 1)
work = dist.all_reduce(t, async_op=True)
work.wait()
assert work.is_completed() and float(t[0]) == 3.0
# reduce
t = ember.tensor([1.0, 2.0]) * (rank + 1)
dist.reduce(t, dst=1)
assert t.tolist() == ([1.0, 2.0] if rank == 0 else [3.0, 6.0])
# broadcast
t = ember.full((2, 2), float(rank))
dist.broadcast(t, src=1)
assert t.tolist() == [[1.0, 1.0], [1.0, 1.0]]
# all_gather, all_gather_into_tensor
out = [ember.zeros(3, dtype=ember.int64) for _ in range(n)]
dist.all_gather(out, ember.arange(3) + 10 * rank)
assert [o.tolist() for o in out] == [[0, 1, 2], [10, 11, 12]]
big = ember.zeros(2, 3)
dist.all_gather_into_tensor(big, ember.full((3,), float(rank)))
assert big.tolist() == [[0.0] * 3, [1.0] * 3]
# reduce_scatter_tensor, reduce_scatter
out = ember.zeros(2)
dist.reduce_scatter_tensor(out, ember.arange(4.0) * (rank + 1))
assert out.tolist() == ([0.0, 3.0] if rank == 0 else [6.0, 9.0])
out = ember.zeros(2)
dist.reduce_scatter(out, [ember.ones(2), ember.full((2,), 2.0)], op=ReduceOp.AVG)
assert out.tolist() == ([1.0, 1.0] if rank == 0 else [2.0, 2.0])
# gather, scatter
gl = [ember.zeros(2) for _ in range(n)] if rank == 0 else None
dist.gather(ember.full((2,), rank + 1.0), gl, dst=0)
if rank == 0:
    assert [g.tolist() for g in gl] == [[1.0, 1.0], [2.0, 2.0]]
t = ember.zeros(2)
dist.scatter(t, [ember.full((2,), 5.0), ember.full((2,), 7.0)] if rank == 0 else None, src=0)
assert t.tolist() == ([5.0, 5.0] if rank == 0 else [7.0, 7.0])
# send / recv, isend / irecv
if rank == 0:
    dist.send(ember.tensor([4.0, 2.0]), dst=1)
    w = dist.irecv(t2 := ember.zeros(3, dtype=ember.int64), src=1)
    w.wait()
    assert t2.tolist() == [7, 8, 9]
else:
    t2 = ember.zeros(2)
    assert dist.recv(t2) == 0 and t2.tolist() == [4.0, 2.0]
    dist.isend(ember.tensor([7, 8, 9]), dst=0).wait()
# objects
objs = [{"a": 1}, "x"] if rank == 0 else [None, None]
dist.broadcast_object_list(objs, src=0)
assert objs == [{"a": 1}, "x"]
got = [None, None]
dist.all_gather_object(got, ("rank", rank))
assert got == [("rank", 0), ("rank", 1)]
gathered = [None, None] if rank == 1 else None
dist.gather_object(rank * 10, gathered, dst=1)
if rank == 1:
    assert gathered == [0, 10]
# new_group with every rank, and a group of one
g = dist.new_group([0, 1])
t = ember.ones(1)
dist.all_reduce(t, group=g)
assert t.item() == 2.0 and dist.get_world_size(g) == 2
solo = dist.new_group([1])
if rank == 1:
    assert dist.get_rank(solo) == 0 and dist.get_world_size(solo) == 1
else:
    assert solo == dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(solo) == -1
dist.barrier()
dist.destroy_process_group()
assert not dist.is_initialized()
print("rank %d: collectives ok (%d op/dtype pairs)" % (rank, checked), flush=True)
