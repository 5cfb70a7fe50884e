"""torch.fx on ember against torch: printed graphs and code, generated forward, graph edits,
Interpreter/Transformer, ShapeProp, replace_pattern and the errors."""
import numpy as np
import pytest

import ember


def _model(lib):
    nn, F = lib.nn, lib.nn.functional

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.lin = nn.Linear(4, 2)
            self.param = nn.Parameter(lib.ones(4))
            self.register_buffer("buf", lib.ones(2))

        def forward(self, x, y=None):
            x = self.bn(self.conv(x))
            x = F.relu(lib.relu(x) + 1)
            x = x.mean(dim=(2, 3)) * self.param
            z = self.lin(x).clamp(min=0.0) + self.buf
            z = lib.cat([z, -z], dim=1)
            return F.softmax(z, dim=-1), z.shape[0], z[:, 1:], 2 - z @ z.t()
    return M()


def _fn(lib):
    F = lib.nn.functional

    def f(x, w):
        a = F.max_pool2d(x, 2)
        b = F.gelu(F.adaptive_avg_pool2d(a, 1))
        c = lib.flatten(F.sigmoid(b), 1).view(-1, 3)
        d = F.layer_norm(F.dropout(c, 0.1, training=False), (3,))
        return F.pad(F.linear(d, w), (1, 1)), x.size(0), lib.add(d, 2, alpha=3)
    return f


def _same_state(tm, em):
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


def test_trace_prints_like_torch(torch):
    tgm = torch.fx.symbolic_trace(_model(torch))
    egm = ember.fx.symbolic_trace(_model(ember))
    assert str(egm.graph) == str(tgm.graph)
    assert egm.code == tgm.code
    assert str(egm) == str(tgm)
    assert egm.print_readable(False) == tgm.print_readable(False)
    assert [(n.name, n.op, len(n.users)) for n in egm.graph.nodes] == \
        [(n.name, n.op, len(n.users)) for n in tgm.graph.nodes]
    tf, ef = torch.fx.symbolic_trace(_fn(torch)), ember.fx.symbolic_trace(_fn(ember))
    assert str(ef.graph) == str(tf.graph)
    assert ef.code == tf.code


def test_generated_forward_matches(torch):
    tm, em = _model(torch).eval(), _model(ember).eval()
    _same_state(tm, em)
    tgm, egm = torch.fx.symbolic_trace(tm), ember.fx.symbolic_trace(em)
    x = np.random.RandomState(0).randn(2, 3, 5, 5).astype(np.float32)
    tout, eout = tgm(torch.tensor(x)), egm(ember.tensor(x))
    for t, e in zip(tout, eout):
        if hasattr(t, "detach"):
            np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-5,
                                       atol=1e-6)
        else:
            assert e == t
    w = np.random.RandomState(1).randn(2, 3).astype(np.float32)
    tf, ef = torch.fx.symbolic_trace(_fn(torch)), ember.fx.symbolic_trace(_fn(ember))
    np.testing.assert_allclose(ef(ember.tensor(x), ember.tensor(w))[0].numpy(),
                               tf(torch.tensor(x), torch.tensor(w))[0].numpy(), rtol=1e-5,
                               atol=1e-6)


def _edit(lib):
    gm = lib.fx.symbolic_trace(_model(lib))
    g = gm.graph
    for node in g.nodes:
        if node.op == "call_module" and node.target == "bn":
            node.replace_all_uses_with(node.args[0])
            g.erase_node(node)
        elif node.target is lib.relu:
            with g.inserting_after(node):
                new = g.call_function(lib.sigmoid, (node,))
            node.replace_all_uses_with(new, delete_user_cb=lambda u: u is not new)
    g.eliminate_dead_code()
    g.lint()
    gm.recompile()
    return gm


def test_graph_edits_like_torch(torch):
    t, e = _edit(torch), _edit(ember)
    assert str(e.graph) == str(t.graph)
    assert e.code == t.code
    assert [n.name for n in e.graph.nodes if n.op == "call_function"][0] == "relu"
    n = next(iter(e.graph.nodes))
    assert [u.name for u in n.users] == [u.name for u in next(iter(t.graph.nodes)).users]


def test_erase_node_with_users_errors(torch):
    msgs = []
    for lib in (torch, ember):
        gm = lib.fx.symbolic_trace(_model(lib))
        node = next(n for n in gm.graph.nodes if n.op == "call_module")
        with pytest.raises(RuntimeError) as info:
            gm.graph.erase_node(node)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_control_flow_and_len_errors(torch):
    def f(lib):
        def g(x):
            return x if x.sum() > 0 else -x
        return g

    def h(x):
        return len(x)
    for kind, fn in ((ValueError, f), (RuntimeError, lambda lib: h)):
        errs = []
        for lib in (torch, ember):
            with pytest.raises(kind) as info:
                lib.fx.symbolic_trace(fn(lib))
            errs.append((type(info.value).__name__, str(info.value)))
        assert errs[0] == errs[1]


def _leaf_tracer(lib):
    class T(lib.fx.Tracer):
        def is_leaf_module(self, m, name):
            return False
    return T


def test_custom_tracer_and_interpreter(torch):
    outs = []
    for lib in (torch, ember):
        graph = _leaf_tracer(lib)().trace(lib.nn.Sequential(lib.nn.Linear(3, 2),
                                                             lib.nn.ReLU()))
        outs.append(str(graph))
    assert outs[0] == outs[1]

    def fn_of(lib):
        def fn(x):
            return lib.sigmoid(x).neg()
        return fn
    x = np.random.RandomState(2).randn(5).astype(np.float32)
    res = []
    for lib in (torch, ember):
        class Swap(lib.fx.Interpreter):
            def call_function(self, target, args, kwargs):
                if target == lib.sigmoid:
                    return lib.neg(*args, **kwargs)
                return super().call_function(target, args, kwargs)

        class X(lib.fx.Transformer):
            def call_function(self, target, args, kwargs):
                if target == lib.sigmoid:
                    return lib.tanh(*args, **kwargs)
                return super().call_function(target, args, kwargs)
        gm = lib.fx.symbolic_trace(fn_of(lib))
        xt = lib.tensor(x)
        new = X(gm).transform()
        res.append((Swap(gm).run(xt).numpy(), new(xt).numpy(), new.code))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-6)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-6)
    assert res[1][2] == res[0][2]


def test_shape_prop(torch):
    x = np.random.RandomState(3).randn(2, 3, 5, 5).astype(np.float32)
    metas = []
    for lib in (torch, ember):
        gm = lib.fx.symbolic_trace(_model(lib))
        lib.fx.passes.shape_prop.ShapeProp(gm).propagate(lib.tensor(x))
        metas.append([(n.name, str(n.meta.get("tensor_meta", (None,) * 2)[1]),
                       tuple(getattr(n.meta.get("tensor_meta"), "shape", ())),
                       n.meta["type"].__name__) for n in gm.graph.nodes])
    assert metas[0] == metas[1]


def test_replace_pattern(torch):
    def build(lib):
        class M(lib.nn.Module):
            def forward(self, x, w1, w2):
                return x + lib.max(lib.cat([w1, w2]).sum()) + lib.cat([w1, x]).sum()

        def pattern(a, b):
            return lib.cat([a, b]).sum()

        def replacement(a, b):
            return lib.stack([a, b]).mean()
        gm = lib.fx.symbolic_trace(M())
        matches = lib.fx.replace_pattern(gm, pattern, replacement)
        return gm, len(matches)
    (t, tn), (e, en) = build(torch), build(ember)
    assert en == tn
    assert e.code == t.code
    w = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(e(*[ember.tensor(w)] * 3).numpy(),
                               t(*[torch.tensor(w)] * 3).numpy(), rtol=1e-6)


def test_deepcopy_and_graphmodule_from_dict(torch):
    import copy
    gm = ember.fx.symbolic_trace(_model(ember).eval())
    gm2 = copy.deepcopy(gm)
    assert gm2.code == gm.code and type(gm2).__name__ == "M"
    x = ember.randn(1, 3, 4, 4)
    np.testing.assert_allclose(gm2(x)[0].detach().numpy(), gm(x)[0].detach().numpy())
    codes = []
    for lib in (torch, ember):
        g = lib.fx.Graph()
        a = g.placeholder("a")
        w = g.get_attr("w")
        g.output(g.call_method("relu", (g.call_function(lib.matmul, (a, w)),)))
        m = lib.fx.GraphModule({"w": lib.ones(2, 2)}, g)
        codes.append((m.code, str(g), m(lib.ones(1, 2)).tolist()))
    assert codes[0] == codes[1]


def test_annotations_print_like_torch(torch):
    out = []
    for lib in (torch, ember):
        class M(lib.nn.Module):
            def forward(self, x: lib.Tensor, n: int = 2) -> lib.Tensor:
                return x * n
        gm = lib.fx.symbolic_trace(M())
        out.append((str(gm.graph), gm.code, gm(lib.ones(2)).tolist()))
    assert out[0] == out[1]
