"""torch.fx graph transformations, shrunk from the fx docs (docs/source/fx.md "Writing
Transformations": a Transformer turning torch.add into torch.mul, the relu decomposition
through Proxy/GraphAppendingTracer, replace_pattern from torch/fx/subgraph_rewriter.py's
docstring), torch.fx.experimental.optimization (fuse of conv/bn and linear/bn,
remove_dropout, extract_subgraph), and tracing features user code relies on: math functions
auto-wrapped, *args/**kwargs forwards, concrete_args with its guard nodes, a tensor constant
on the left of an operator, and Graph.on_generate_code / set_codegen."""
import copy
import importlib
import math
import operator
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
fx = importlib.import_module(LIB + ".fx")
opt = importlib.import_module(LIB + ".fx.experimental.optimization")
Proxy, Transformer = fx.Proxy, fx.Transformer
GraphAppendingTracer = importlib.import_module(LIB + ".fx.proxy").GraphAppendingTracer

torch.manual_seed(0)


# "Writing Transformations": replace torch.add with torch.mul (the Transformer way)
class AddToMul(Transformer):
    def call_function(self, target, args, kwargs):
        if target is torch.add:
            target = torch.mul
        return super().call_function(target, args, kwargs)


def add_fn(x, y):
    return torch.add(x, y) + torch.add(x, 1)


gm = AddToMul(fx.symbolic_trace(add_fn)).transform()
print(gm.code)
a, b = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])
print(gm(a, b).tolist())

# "Proxy/Retracing": decompose F.relu into (x > 0) * x
decomposition_rules = {}


def relu_decomposition(x):
    return (x > 0) * x


decomposition_rules[F.relu] = relu_decomposition


def decompose(model, tracer_class=fx.Tracer):
    graph = tracer_class().trace(model)
    new_graph = fx.Graph()
    env = {}
    tracer = GraphAppendingTracer(new_graph)
    for node in graph.nodes:
        if node.op == "call_function" and node.target in decomposition_rules:
            proxy_args = [Proxy(env[x.name], tracer) if isinstance(x, fx.Node) else x
                          for x in node.args]
            output_proxy = decomposition_rules[node.target](*proxy_args)
            new_node = output_proxy.node
            env[node.name] = new_node
        else:
            new_node = new_graph.node_copy(node, lambda x: env[x.name])
            env[node.name] = new_node
    return fx.GraphModule(model, new_graph)


class ReluNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        return F.relu(self.lin(x)) - 0.1


rnet = ReluNet()
dgm = decompose(rnet)
print(dgm.graph)
xin = torch.randn(4, 3)
print("decomposed matches:", torch.allclose(dgm(xin), rnet(xin)))


# subgraph_rewriter docstring example
class M(nn.Module):
    def forward(self, x, w1, w2):
        m1 = torch.cat([w1, w2]).sum()
        m2 = torch.cat([w1, w2]).sum()
        return x + torch.max(m1) + torch.max(m2)


def pattern(w1, w2):
    return torch.cat([w1, w2]).sum()


def replacement(w1, w2):
    return torch.stack([w1, w2])


traced = fx.symbolic_trace(M())
matches = fx.replace_pattern(traced, pattern, replacement)
print("matches:", len(matches))
print(traced.code)


# torch.fx.experimental.optimization
class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.drop = nn.Dropout(0.3)
        self.lin = nn.Linear(4, 3)
        self.bn1 = nn.BatchNorm1d(3)

    def forward(self, x):
        y = self.drop(F.relu(self.bn(self.conv(x))))
        return self.bn1(self.lin(y.mean((2, 3))))


net = ConvNet()
net.train()
for _ in range(3):
    net(torch.randn(5, 3, 7, 7))
net.eval()
fused = opt.fuse(net)
print(fused)
xc = torch.randn(2, 3, 7, 7)
with torch.no_grad():
    print("fused max diff small:", (fused(xc) - net(xc)).abs().max().item() < 1e-5)
print("fused conv bias:", [round(v, 4) for v in fused.conv.bias.tolist()])
print(opt.remove_dropout(net).code)
tgm = fx.symbolic_trace(net)
nodes = list(tgm.graph.nodes)
sub = opt.extract_subgraph(tgm, nodes[2:5], [nodes[1]], [nodes[4]])
print(sub.code)


# math auto-wrapping, *args/**kwargs, concrete_args, tensor constants
def scaled(x):
    return x * math.sqrt(x.size(-1)) + math.pi


sgm = fx.symbolic_trace(scaled)
print(sgm.graph)
print(sgm.code)
print([round(v, 4) for v in sgm(torch.ones(4)).tolist()])


class VarNet(nn.Module):
    def forward(self, x, *args, scale=2.0, **kwargs):
        return x * scale + args[0] - kwargs["bias"]


vgm = fx.symbolic_trace(VarNet())
print(vgm.code)
print(vgm(torch.ones(2), torch.ones(2), 3.0, bias=torch.ones(2)).tolist())


def gated(x, flag, extra=None):
    if flag:
        x = x + 1
    if extra is None:
        return x * 2
    return x + extra


cgm = fx.symbolic_trace(gated, concrete_args={"flag": True, "extra": None})
print(cgm.code)
print(cgm(torch.ones(2), True).tolist())
try:
    cgm(torch.ones(2), False)
except AssertionError as e:
    print("AssertionError:", e)


def with_const(x):
    return torch.tensor([1.0, 2.0]) * x + torch.tensor([0.5, 0.5]) - x


kgm = fx.symbolic_trace(with_const)
print(kgm.code)
print(kgm(torch.tensor([2.0, 3.0])).tolist())


# on_generate_code and a custom CodeGen
def insert_comment(body):
    return ["# generated by fx\n", *body]


with kgm.graph.on_generate_code(lambda _: insert_comment):
    kgm.recompile()
    print(kgm.code)
kgm.recompile()
print(kgm.code)


class TupleInCodeGen(fx.graph.CodeGen):
    def gen_fn_def(self, free_vars, maybe_return_annotation):
        return "def forward(self, inputs):\n    %s, = inputs" % ", ".join(free_vars)

    def generate_output(self, output_args):
        return "return {'out': %r}" % (output_args,)

    def process_inputs(self, *args):
        return (args,)


ggm = copy.deepcopy(fx.symbolic_trace(add_fn))
ggm.graph.set_codegen(TupleInCodeGen())
ggm.recompile()
print(ggm.code)
print({k: v.tolist() for k, v in ggm(ggm.graph.process_inputs(a, b)[0]).items()})
print("operator.add in graph:", any(n.target is operator.add for n in ggm.graph.nodes))
