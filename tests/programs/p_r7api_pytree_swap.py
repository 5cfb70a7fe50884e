"""Pytrees, swap_tensors and the ``torch.__future__`` conversion switches, shrunk from the
PyTorch tutorial "Extension points in nn.Module for load_state_dict and tensor subclasses"
(module ``.to()``/``.double()`` under ``set_swap_module_params_on_conversion``, optimizer
references surviving the swap, ``load_state_dict`` swapping via ``module_load``, ``assign=True``)
and from the way library code uses ``torch.utils._pytree`` (optimizer-state ``tree_map_only``
casts as in torch.distributed.checkpoint, batch moving/flattening as in accelerate's
``send_to_device`` and functorch's ``tree_flatten``/``tree_unflatten`` round trips,
``register_pytree_node`` for a custom container, namedtuple and ``defaultdict`` nodes)."""
import importlib
import os
from collections import OrderedDict, defaultdict, deque, namedtuple

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
pytree = importlib.import_module(LIB + ".utils._pytree")
future = importlib.import_module(LIB + ".__future__")

Batch = namedtuple("Batch", ["inputs", "targets"])


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b


pytree.register_pytree_node(Pair, lambda p: ([p.a, p.b], "pair"), lambda xs, ctx: Pair(*xs))


def send_to_device(tree, dtype):
    return pytree.tree_map_only(torch.Tensor, lambda t: t.to(dtype), tree)


def pytree_demo():
    torch.manual_seed(0)
    batch = {"x": Batch(torch.randn(2, 3), torch.tensor([0, 1])), "meta": [1, "a", None],
             "od": OrderedDict(w=torch.ones(2)), "dd": defaultdict(list, k=torch.zeros(1)),
             "dq": deque([torch.arange(3)], maxlen=4), "p": Pair(torch.ones(1), 2.5)}
    leaves, spec = pytree.tree_flatten(batch)
    print(len(leaves), spec.num_leaves, spec.num_nodes)
    print(pytree.tree_structure({"a": [1, (2, 3)], "b": None, "c": Batch(1, 2)}))
    print([type(v).__name__ for v in leaves])
    moved = send_to_device(batch, torch.float64)
    print(moved["x"].inputs.dtype, moved["x"].targets.dtype, moved["od"]["w"].dtype,
          type(moved["dd"]).__name__, moved["dq"].maxlen, moved["meta"], moved["p"].b)
    back = pytree.tree_unflatten([v * 2 if isinstance(v, torch.Tensor) else v for v in leaves],
                                 spec)
    print(back["x"].inputs.sum().item(), back["od"]["w"], back["p"].a)
    total = sum(t.sum().item() for t in pytree.tree_leaves(batch) if isinstance(t, torch.Tensor))
    print("total %.5f" % total)
    print(pytree.tree_all(lambda v: v is not None, batch),
          pytree.tree_any(lambda v: v is None, batch),
          pytree.tree_all_only(torch.Tensor, lambda t: t.dim() <= 2, batch))
    summed = pytree.tree_map(lambda a, b: a + b, {"u": [1, 2], "v": 3}, {"u": [10, 20], "v": 30})
    print(summed)
    try:
        pytree.tree_map(lambda a, b: a + b, [1, 2], [1, 2, 3])
    except ValueError as e:
        print("ValueError", e)
    try:
        pytree.tree_unflatten([1, 2], spec)
    except ValueError as e:
        print("ValueError", str(e)[:70])
    print(pytree.tree_flatten(None), pytree.tree_flatten((1, [])))


def make_model():
    torch.manual_seed(1)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))


def swap_demo():
    a, b = torch.ones(2), torch.zeros(3, dtype=torch.float64)
    torch.utils.swap_tensors(a, b)
    print(a, b)
    for mode in ("default", "overwrite", "swap"):
        future.set_overwrite_module_params_on_conversion(mode == "overwrite")
        future.set_swap_module_params_on_conversion(mode == "swap")
        print(mode, future.get_overwrite_module_params_on_conversion(),
              future.get_swap_module_params_on_conversion())
        m = make_model()
        opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        weight = m[0].weight
        m(torch.randn(5, 3)).sum().backward()
        m.double()
        print(weight is m[0].weight, weight.dtype, m[0].weight.dtype,
              m[0].weight.grad.dtype, m[1].running_mean.dtype)
        if mode != "overwrite":     # (overwritten parameters leave the optimizer behind)
            m(torch.randn(5, 3, dtype=torch.float64)).pow(2).mean().backward()
            opt.step()
            print("after step %.6f" % m[0].weight.sum().item())
        sd = {k: (v * 0 + 0.5).float() for k, v in m.state_dict().items()}
        m.load_state_dict(sd)
        print(weight is m[0].weight, m[0].weight.dtype, m[0].weight.sum().item(),
              type(m[0].weight).__name__, m[0].weight.requires_grad)
        m.load_state_dict({k: v.double() * 2 for k, v in sd.items()}, assign=True)
        print(m[0].weight.dtype, m[0].weight.sum().item(), m[0].weight.requires_grad)
    future.set_overwrite_module_params_on_conversion(False)
    future.set_swap_module_params_on_conversion(False)


if __name__ == "__main__":
    pytree_demo()
    swap_demo()
