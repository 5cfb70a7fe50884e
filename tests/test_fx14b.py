"""torch.fx on ember against torch, second round: *args/**kwargs forwards, concrete_args guard
nodes, math auto-wrapping, tensor constants and buffers on the left of operators,
print_tabular without tabulate, on_generate_code/set_codegen, Graph deepcopy and
fx.experimental.optimization."""
import copy
import importlib.util
import math

import numpy as np
import pytest

import ember


def _both(torch, make):
    """``make(lib)`` traced under each library: (torch GraphModule, ember GraphModule)."""
    return torch.fx.symbolic_trace(make(torch)), ember.fx.symbolic_trace(make(ember))


def _same_code(tgm, egm):
    assert str(egm.graph) == str(tgm.graph)
    assert egm.code == tgm.code


def test_varargs_forward(torch):
    def make(lib):
        class M(lib.nn.Module):
            def forward(self, x, *args, scale=2.0, **kwargs):
                return x * scale + args[0] - kwargs["k"]
        return M()
    tgm, egm = _both(torch, make)
    _same_code(tgm, egm)
    out = egm(ember.ones(2), ember.ones(2), 3.0, k=ember.ones(2))
    ref = tgm(torch.ones(2), torch.ones(2), 3.0, k=torch.ones(2))
    np.testing.assert_allclose(out.numpy(), ref.numpy())

    def f(*args):
        return args[0] + 1
    _same_code(torch.fx.symbolic_trace(f), ember.fx.symbolic_trace(f))


def test_concrete_args_guards(torch):
    def f(x, flag, y=None):
        if flag:
            x = x + 1
        return x * 2 if y is None else x + y
    concrete = {"flag": True, "y": None}
    tgm = torch.fx.symbolic_trace(f, concrete_args=concrete)
    egm = ember.fx.symbolic_trace(f, concrete_args=concrete)
    _same_code(tgm, egm)
    np.testing.assert_allclose(egm(ember.ones(2), True).numpy(),
                               tgm(torch.ones(2), True).numpy())
    with pytest.raises(AssertionError) as te:
        tgm(torch.ones(2), False)
    with pytest.raises(AssertionError) as ee:
        egm(ember.ones(2), False)
    assert str(ee.value) == str(te.value)
    with pytest.raises(AssertionError) as te:
        tgm(torch.ones(2), True, torch.ones(2))
    with pytest.raises(AssertionError) as ee:
        egm(ember.ones(2), True, ember.ones(2))
    assert str(ee.value) == str(te.value)
    tph = torch.fx.symbolic_trace(f, concrete_args={"flag": True, "y": torch.fx.PH})
    eph = ember.fx.symbolic_trace(f, concrete_args={"flag": True, "y": ember.fx.PH})
    _same_code(tph, eph)
    with pytest.raises(RuntimeError, match="Tracing expected 3 arguments but got 1"):
        ember.fx.symbolic_trace(f, concrete_args=(True,))


def test_math_autowrap(torch):
    def f(x):
        return math.sqrt(x.size(0)) * x + math.floor(x.size(1) / 2) + math.pi
    tgm, egm = _both(torch, lambda lib: f)
    _same_code(tgm, egm)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(egm(ember.tensor(x)).numpy(), tgm(torch.tensor(x)).numpy())
    assert math.sqrt is math.__dict__["sqrt"] and math.sqrt(4) == 2.0     # (restored)
    egm = ember.fx.Tracer(autowrap_modules=()).trace(lambda x: x * math.sqrt(4))
    assert all(n.target is not math.sqrt for n in egm.nodes)


def test_tensor_constant_and_buffer_on_left(torch):
    def make(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("b", lib.ones(2))
                self.w = lib.nn.Parameter(lib.ones(2))

            def forward(self, x):
                t = lib.tensor([1.0, 2.0])
                return (t + x, t * x, t - x, t @ x, t / x, t == x, t > x, self.b + x,
                        self.w * x, x + self.b)
        return M()
    tgm, egm = _both(torch, make)
    _same_code(tgm, egm)
    x = np.array([1.0, 3.0], np.float32)
    for e, t in zip(egm(ember.tensor(x)), tgm(torch.tensor(x))):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy())


def test_print_tabular_needs_tabulate(torch, capsys):
    if importlib.util.find_spec("tabulate") is not None:
        pytest.skip("tabulate is installed")
    g = torch.fx.symbolic_trace(lambda x: x + 1).graph
    with pytest.raises(ModuleNotFoundError):
        g.print_tabular()
    expected = capsys.readouterr().out
    with pytest.raises(ModuleNotFoundError):
        ember.fx.symbolic_trace(lambda x: x + 1).graph.print_tabular()
    assert capsys.readouterr().out == expected


def test_on_generate_code_and_codegen(torch):
    codes = []
    for lib in (torch, ember):
        gm = lib.fx.symbolic_trace(lambda x, y: lib.relu(x) + y)
        with gm.graph.on_generate_code(lambda _: (lambda body: ["print('hi')\n", *body])):
            gm.recompile()
            inside = gm.code
        gm.recompile()

        class CG(lib.fx.graph.CodeGen):
            def gen_fn_def(self, free_vars, maybe_return_annotation):
                return "def forward(self, inputs):\n    %s, = inputs" % ", ".join(free_vars)

            def generate_output(self, output_args):
                return "return {'out': %r}" % (output_args,)

            def process_inputs(self, *args):
                return (args,)
        gm2 = copy.deepcopy(gm)
        gm2.graph.set_codegen(CG())
        gm2.recompile()
        out = gm2(*gm2.graph.process_inputs(lib.ones(2), lib.ones(2)))
        codes.append((inside, gm.code, gm2.code, out["out"].tolist()))
    assert codes[0] == codes[1]


def test_graph_deepcopy_keeps_nodes(torch):
    for lib in (torch, ember):
        gm = lib.fx.symbolic_trace(lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU()))
        g = copy.deepcopy(gm.graph)
        assert g.owning_module is None
        assert [n.name for n in g.nodes] == [n.name for n in gm.graph.nodes]
    assert str(copy.deepcopy(gm.graph)) == str(gm.graph)


def test_experimental_fuse_and_remove_dropout(torch):
    import torch.fx.experimental.optimization as topt
    import ember.fx.experimental.optimization as eopt

    def make(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.c = lib.nn.Conv2d(3, 4, 3)
                self.bn = lib.nn.BatchNorm2d(4)
                self.d = lib.nn.Dropout(0.5)
                self.lin = lib.nn.Linear(4, 3)
                self.bn1 = lib.nn.BatchNorm1d(3)

            def forward(self, x):
                return self.bn1(self.lin(self.d(self.bn(self.c(x))).mean((2, 3))))
        return M()
    tm, em = make(torch), make(ember)
    tm.train()
    tm(torch.randn(4, 3, 6, 6))
    tm.eval()
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    em.eval()
    tf, ef = topt.fuse(tm), eopt.fuse(em)
    assert ef.code == tf.code and str(ef) == str(tf)
    assert "bn" in dict(em.named_children())        # (not in place)
    x = np.random.RandomState(0).randn(2, 3, 6, 6).astype(np.float32)
    with torch.no_grad():
        ref = tf(torch.tensor(x)).numpy()
    np.testing.assert_allclose(ef(ember.tensor(x)).detach().numpy(), ref, rtol=1e-5,
                               atol=1e-6)
    assert eopt.remove_dropout(em).code == topt.remove_dropout(tm).code
