"""The examples of the torch.fx documentation (docs/source/fx.md and the torch.fx module
docstrings), shrunk: the overview's MyModule traced and its graph/code printed; the
"Graph Manipulation" passes (torch.add -> torch.mul, inserting_after + erase_node, a relu
decomposition through GraphAppendingTracer/Proxy, swapping relu for gelu); the Interpreter and
Transformer examples (NegSigmSwapInterpreter / NegSigmSwapXformer); ShapeProp; wrap(); and the
subgraph_rewriter's replace_pattern example."""
import importlib
import operator
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
fx = importlib.import_module(LIB + ".fx")
ShapeProp = importlib.import_module(LIB + ".fx.passes.shape_prop").ShapeProp


def my_len_plus(x, n):
    return x.shape[0] + n


fx.wrap("my_len_plus")


class MyModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.param = nn.Parameter(torch.rand(3, 4))
        self.linear = nn.Linear(4, 5)

    def forward(self, x):
        return self.linear(x + self.param).clamp(min=0.0, max=1.0)


torch.manual_seed(0)
module = MyModule()
symbolic_traced = fx.symbolic_trace(module)
print(symbolic_traced.graph)
print(symbolic_traced.code)
x = torch.rand(3, 4)
print("same:", torch.allclose(symbolic_traced(x), module(x)))


class AddModule(nn.Module):
    def forward(self, x, y):
        return torch.add(x, y) + torch.relu(x) * F.relu(y)


def transform(m, tracer_class=fx.Tracer):
    graph = tracer_class().trace(m)
    for node in graph.nodes:
        if node.op == "call_function" and node.target == torch.add:
            node.target = torch.mul
    graph.lint()
    return fx.GraphModule(m, graph)


a, b = torch.randn(2, 3), torch.randn(2, 3)
gm = transform(AddModule())
print(gm.code)
print("mul:", torch.allclose(gm(a, b), a * b + torch.relu(a) * torch.relu(b)))

traced = fx.symbolic_trace(AddModule())
for node in traced.graph.nodes:
    if node.op == "call_function" and node.target == torch.add:
        with traced.graph.inserting_after(node):
            new_node = traced.graph.call_function(torch.sub, node.args, node.kwargs)
            node.replace_all_uses_with(new_node)
        traced.graph.erase_node(node)
traced.recompile()
print(traced.graph)
print("sub:", torch.allclose(traced(a, b), a - b + torch.relu(a) * torch.relu(b)))

for node in traced.graph.nodes:
    if node.target in (torch.relu, F.relu):
        node.target = F.gelu
        node.kwargs = {}
traced.recompile()
print(traced.code)
print("gelu: %.5f" % traced(a, b).sum().item())


def relu_decomposition(x):
    return (x > 0) * x


decomposition_rules = {F.relu: relu_decomposition, torch.relu: relu_decomposition}


def decompose(model, tracer_class=fx.Tracer):
    graph = tracer_class().trace(model)
    new_graph = fx.Graph()
    env = {}
    tracer = fx.proxy.GraphAppendingTracer(new_graph)
    for node in graph.nodes:
        if node.op == "call_function" and node.target in decomposition_rules:
            proxy_args = [fx.Proxy(env[x.name], tracer) if isinstance(x, fx.Node) else x
                          for x in node.args]
            output_proxy = decomposition_rules[node.target](*proxy_args)
            env[node.name] = output_proxy.node
        else:
            env[node.name] = new_graph.node_copy(node, lambda x: env[x.name])
    return fx.GraphModule(model, new_graph)


dec = decompose(AddModule())
print(dec.graph)
print("decomposed:", torch.allclose(dec(a, b), AddModule()(a, b)))


class NegSigmSwapInterpreter(fx.Interpreter):
    def call_function(self, target, args, kwargs):
        if target == torch.sigmoid:
            return torch.neg(*args, **kwargs)
        return super().call_function(target, args, kwargs)

    def call_method(self, target, args, kwargs):
        if target == "neg":
            call_self, *args_tail = args
            return call_self.sigmoid(*args_tail, **kwargs)
        return super().call_method(target, args, kwargs)


def fn(x):
    return torch.sigmoid(x).neg()


gm = fx.symbolic_trace(fn)
inp = torch.randn(5)
result = NegSigmSwapInterpreter(gm).run(inp)
print("interp:", torch.allclose(result, torch.neg(inp).sigmoid()))


class NegSigmSwapXformer(fx.Transformer):
    def call_function(self, target, args, kwargs):
        if target == torch.sigmoid:
            return torch.neg(*args, **kwargs)
        return super().call_function(target, args, kwargs)

    def call_method(self, target, args, kwargs):
        if target == "neg":
            call_self, *args_tail = args
            return call_self.sigmoid(*args_tail, **kwargs)
        return super().call_method(target, args, kwargs)


transformed = NegSigmSwapXformer(gm).transform()
print(transformed.code)
print("xform:", torch.allclose(transformed(inp), torch.neg(inp).sigmoid()))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(6 * 3 * 3, 4)

    def forward(self, x):
        x = self.pool(F.relu(self.conv(x)))
        x = torch.flatten(x, 1)
        return my_len_plus(x, 1), F.log_softmax(self.fc(x), dim=1)


net = Net()
gm = fx.symbolic_trace(net)
print(gm.code)
sample = torch.randn(2, 3, 8, 8)
ShapeProp(gm).propagate(sample)
for node in gm.graph.nodes:
    meta = node.meta.get("tensor_meta")
    if hasattr(meta, "shape"):
        print(node.name, meta.dtype, tuple(meta.shape), meta.requires_grad, meta.stride)
    else:
        print(node.name, node.meta["type"].__name__)


class M(nn.Module):
    def forward(self, x, w1, w2):
        m1 = torch.cat([w1, w2]).sum()
        m2 = torch.cat([w1, w2]).sum()
        return x + torch.max(m1) + torch.max(m2)


def pattern(w1, w2):
    return torch.cat([w1, w2]).sum()


def replacement(w1, w2):
    return torch.stack([w1, w2])


traced_module = fx.symbolic_trace(M())
matches = fx.replace_pattern(traced_module, pattern, replacement)
print(len(matches), [m.anchor.name for m in matches])
print(traced_module.code)
w = torch.randn(3)
print("rewritten: %.5f" % traced_module(torch.randn(3), w, w).sum().item())
print(operator.add in [n.target for n in traced_module.graph.nodes])
