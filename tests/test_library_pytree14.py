"""torch.library, torch.utils._pytree, swap_tensors/__future__ and torch.utils.benchmark,
each compared with torch."""
import re
import typing
from collections import OrderedDict, defaultdict, deque, namedtuple

import numpy as np
import pytest

import ember
import ember.utils._pytree as ept
from ember.utils import benchmark as ebench

P = namedtuple("P", "x y")


def _trees():
    return [1, None, [], (), {}, [1, (2, 3)], {"b": 1, "a": [2, None]}, P(1, (2,)),
            OrderedDict(z=1, y=2), defaultdict(list, {"k": 7}), deque([8, 9], maxlen=3),
            {"a": [1, (2, 3)], "b": None, "c": P(4, 5), "d": OrderedDict(z=6)}]


@pytest.mark.parametrize("i", range(12))
def test_flatten_repr_unflatten(torch, i):
    import torch.utils._pytree as tpt
    tree = _trees()[i]
    tl, ts = tpt.tree_flatten(tree)
    el, es = ept.tree_flatten(tree)
    assert el == tl and repr(es) == repr(ts) and str(es) == str(ts)
    assert (es.num_leaves, es.num_nodes, es.num_children) == (
        ts.num_leaves, ts.num_nodes, ts.num_children)
    new = list(range(len(el)))
    assert repr(ept.tree_unflatten(new, es)) == repr(tpt.tree_unflatten(new, ts))
    assert ept.tree_leaves(tree) == tpt.tree_leaves(tree)
    assert es == ept.tree_structure(tree) and hash(es) == hash(ept.tree_structure(tree))
    assert ept.tree_map(lambda v: (v, 0), tree) == tpt.tree_map(lambda v: (v, 0), tree)


def test_map_only_all_any_and_errors(torch):
    import torch.utils._pytree as tpt
    tree = [1, 2.0, "s", {"a": -3}]
    for fn in ("tree_map_only",):
        assert getattr(ept, fn)(int, lambda v: -v, tree) == getattr(tpt, fn)(int, lambda v: -v,
                                                                             tree)
        assert getattr(ept, fn)((int, float), lambda v: -v, tree) == getattr(tpt, fn)(
            (int, float), lambda v: -v, tree)
    pred = lambda v: isinstance(v, int)  # noqa: E731
    for name in ("tree_all", "tree_any"):
        assert getattr(ept, name)(pred, tree) == getattr(tpt, name)(pred, tree)
    assert ept.tree_all_only(int, lambda v: v > 0, tree) == tpt.tree_all_only(
        int, lambda v: v > 0, tree)
    assert ept.tree_any_only(int, lambda v: v < 0, tree) == tpt.tree_any_only(
        int, lambda v: v < 0, tree)
    assert repr(ept.LeafSpec()) == repr(tpt.LeafSpec()) == "*"
    for a, b in (([1, 2], [1, 2, 3]), ([1, 2], (1, 2)), ({"a": 1}, {"b": 1})):
        with pytest.raises(ValueError) as te:
            tpt.tree_map(lambda u, v: u, a, b)
        with pytest.raises(ValueError) as ee:
            ept.tree_map(lambda u, v: u, a, b)
        assert str(ee.value) == str(te.value)
    spec_t, spec_e = tpt.tree_structure([1, 2]), ept.tree_structure([1, 2])
    with pytest.raises(ValueError) as te:
        tpt.tree_unflatten([1], spec_t)
    with pytest.raises(ValueError) as ee:
        ept.tree_unflatten([1], spec_e)
    assert str(ee.value) == str(te.value)


def test_register_pytree_node(torch):
    import torch.utils._pytree as tpt

    class Box:
        def __init__(self, a, b):
            self.a, self.b = a, b
    for mod in (tpt, ept):
        mod.register_pytree_node(Box, lambda x: ([x.a, x.b], "box"), lambda v, c: Box(*v))
    tree = {"k": Box(1, [2, 3])}
    assert repr(ept.tree_structure(tree)).replace("ember", "torch") == repr(
        tpt.tree_structure(tree))
    out = ept.tree_map(lambda v: v * 10, tree)["k"]
    assert (out.a, out.b) == (10, [20, 30])
    with pytest.raises(ValueError, match="already registered"):
        ept.register_pytree_node(Box, lambda x: ([], None), lambda v, c: Box(0, 0))


def _mul_op(lib, ns):
    Tensor = lib.Tensor

    @lib.library.custom_op(ns + "::npmul", mutates_args=())
    def npmul(x: Tensor, y: Tensor, k: float = 2.0) -> Tensor:
        return lib.from_numpy(x.numpy(force=True) * y.numpy(force=True) * k)

    @npmul.register_fake
    def _(x, y, k=2.0):
        return lib.empty_like(x)

    def setup(ctx, inputs, output):
        x, y, k = inputs
        ctx.save_for_backward(x, y)
        ctx.k = k

    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return (g * y * ctx.k if ctx.needs_input_grad[0] else None,
                g * x * ctx.k if ctx.needs_input_grad[1] else None, None)
    npmul.register_autograd(backward, setup_context=setup)
    return npmul


def test_custom_op_gradients_match_torch(torch):
    top, eop = _mul_op(torch, "t14"), _mul_op(ember, "t14")
    rng = np.random.default_rng(0)
    xs, ys, gs = (rng.standard_normal((3, 4)) for _ in range(3))
    outs = []
    for lib, op in ((torch, top), (ember, eop)):
        x = lib.tensor(xs, requires_grad=True)
        y = lib.tensor(ys, requires_grad=True)
        z = getattr(lib.ops.t14, "npmul")(x, y, k=3.0)
        z.backward(lib.tensor(gs))
        outs.append((z.detach().numpy(), x.grad.numpy(), y.grad.numpy(), z.grad_fn.name(),
                     str(op._opoverload._schema), repr(op)))
    for a, b in zip(*outs):
        if isinstance(a, str):
            assert a == b
        else:
            np.testing.assert_allclose(a, b, rtol=1e-12)
    assert ember.library.opcheck(eop, (ember.randn(3), ember.randn(3))) == \
        torch.library.opcheck(top, (torch.randn(3), torch.randn(3)))


def test_custom_op_errors_match_torch(torch):
    def attempts(lib):
        T = lib.Tensor
        out = []

        def run(f):
            try:
                f()
                out.append(None)
            except Exception as e:
                out.append((type(e).__name__, re.sub(r"torch|ember\.tensor", "X", str(e))))

        def no_annotation():
            @lib.library.custom_op("t14e::a", mutates_args=())
            def a(x, y: float) -> T:
                return x

        def bad_mutates():
            @lib.library.custom_op("t14e::b", mutates_args=("z",))
            def b(x: T) -> T:
                return x

        def no_grad_formula():
            @lib.library.custom_op("t14e::c", mutates_args=())
            def c(x: T) -> T:
                return x * 2
            c(lib.ones(1, requires_grad=True)).sum().backward()

        def mutable_autograd():
            @lib.library.custom_op("t14e::d", mutates_args=["y"])
            def d(x: T, y: T) -> None:
                y.add_(x)
            d.register_autograd(lambda ctx, g: g)
        run(no_annotation)
        run(bad_mutates)
        run(no_grad_formula)
        run(mutable_autograd)
        run(lambda: lib.library.custom_op("nonamespace", mutates_args=())(lambda x: x))
        run(lambda: lib.ops.t14e.missing)
        return out
    assert attempts(ember) == attempts(torch)


def test_schema_inference_and_library(torch):
    def f(x: typing.Any, n: int, ys: typing.List[typing.Any], z: typing.Optional[typing.Any] = None,
          *, s: float = 1.0) -> typing.Tuple[typing.Any, typing.Any]:
        pass
    for lib in (torch, ember):
        f.__annotations__ = {"x": lib.Tensor, "n": int, "ys": typing.List[lib.Tensor],
                             "z": typing.Optional[lib.Tensor], "s": float,
                             "return": typing.Tuple[lib.Tensor, lib.Tensor]}
        text = lib.library.infer_schema(f, mutates_args={"ys"})
        if lib is torch:
            expected = text
    assert text == expected
    results = []
    for lib in (torch, ember):
        L = lib.library.Library("t14lib", "DEF")
        name = L.define("cube(Tensor x) -> Tensor")
        L.impl("cube", lambda t: t * t * t, "CompositeImplicitAutograd")
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        lib.ops.t14lib.cube(x).sum().backward()
        with pytest.raises(RuntimeError) as e:
            L.define("cube(Tensor x) -> Tensor")
        results.append((name, x.grad.tolist(), str(e.value)[:80],
                        str(lib.ops.t14lib.cube.default._schema)))
        L._destroy()
    assert results[0] == results[1]


@pytest.mark.parametrize("mode", ["default", "overwrite", "swap"])
def test_module_conversion_modes(torch, mode):
    rows = []
    for lib in (torch, ember):
        lib.__future__.set_overwrite_module_params_on_conversion(mode == "overwrite")
        lib.__future__.set_swap_module_params_on_conversion(mode == "swap")
        try:
            m = lib.nn.Linear(2, 3)
            m.load_state_dict({"weight": lib.ones(3, 2), "bias": lib.zeros(3)})
            w = m.weight
            m(lib.ones(1, 2)).sum().backward()
            g = w.grad
            m.double()
            row = [w is m.weight, str(w.dtype), str(m.weight.dtype), g is m.weight.grad,
                   str(m.weight.grad.dtype), type(m.weight).__name__]
            m.load_state_dict({"weight": lib.full((3, 2), 2.0), "bias": lib.ones(3)})
            row += [w is m.weight, str(m.weight.dtype), m.weight.sum().item()]
            m.load_state_dict({"weight": lib.full((3, 2), 3.0).half(), "bias": lib.ones(3)},
                              assign=True)
            row += [w is m.weight, str(m.weight.dtype), m.weight.requires_grad]
            rows.append(row)
        finally:
            lib.__future__.set_overwrite_module_params_on_conversion(False)
            lib.__future__.set_swap_module_params_on_conversion(False)
    assert rows[0] == rows[1]


def test_swap_tensors(torch):
    res = []
    for lib in (torch, ember):
        a = lib.nn.Parameter(lib.ones(2))
        b = lib.zeros(3, dtype=lib.float64)
        b.tag = "b"
        lib.utils.swap_tensors(a, b)
        res.append((type(a).__name__, a.tolist(), str(a.dtype), type(b).__name__, b.tolist(),
                    b.requires_grad, a.tag))
    assert res[0] == res[1]


def test_benchmark_structure(torch):
    from torch.utils import benchmark as tbench
    shapes = []
    for bench, lib in ((tbench, torch), (ebench, ember)):
        x = lib.ones(8)
        t = bench.Timer("x * 2", globals={"x": x}, label="mul", sub_label="n=8",
                        description="f32")
        m = t.timeit(50)
        m2 = bench.Timer("y = x + 1", setup="x = torch.ones(4)").blocked_autorange(
            min_run_time=0.01)
        m3 = bench.Timer("x.sum()", globals={"x": x}).adaptive_autorange(max_run_time=0.05)
        for meas in (m, m2, m3):
            assert meas.mean > 0 and meas.median > 0 and meas.iqr >= 0
            assert len(meas.times) == len(meas.raw_times)
        results = [bench.Timer("x*2", globals={"x": lib.ones(n)}, label="Mul",
                               sub_label=f"n={n}", description=d).timeit(20)
                   for n in (1, 10) for d in ("a", "b")]
        table = str(bench.Compare(results))
        lines = repr(m).splitlines()
        shapes.append((lines[0].split(" object")[0], lines[1:3], re.sub(r"[\d.]+", "N", lines[-1]),
                       m.number_per_run, m.title, m.description, m.num_threads,
                       [re.sub(r"\d+\.\d+", "N", ln) for ln in table.splitlines()
                        if "|" not in ln or "n=" not in ln],
                       [ln.split("|")[0] for ln in table.splitlines()]))
        with pytest.raises(ValueError, match="only a `str` stmt"):
            bench.Timer(stmt=1)
    assert shapes[0][:7] == shapes[1][:7]
    assert shapes[0][8] == shapes[1][8]
