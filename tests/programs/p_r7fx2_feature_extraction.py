"""torchvision's feature extraction with torch.fx, shrunk from torchvision/models/
feature_extraction.py (LeafModuleAwareTracer, NodePathTracer with its node qualified names and
per-parent ``_{index}`` postfixes, get_graph_node_names in train and eval mode,
create_feature_extractor cutting the graph at the requested nodes and returning an
OrderedDict of intermediate outputs) applied to a small torchvision-style ResNet (BasicBlock,
``out += identity``, a ``torch.flatten`` head); the features are checked against forward hooks."""
import importlib
import os
import re
from collections import OrderedDict

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
fx = importlib.import_module(LIB + ".fx")


class LeafModuleAwareTracer(fx.Tracer):
    def __init__(self, *args, **kwargs):
        self.leaf_modules = {}
        if "leaf_modules" in kwargs:
            leaf_modules = kwargs.pop("leaf_modules")
            self.leaf_modules = leaf_modules
        super().__init__(*args, **kwargs)

    def is_leaf_module(self, m, module_qualname):
        if isinstance(m, tuple(self.leaf_modules)):
            return True
        return super().is_leaf_module(m, module_qualname)


class NodePathTracer(LeafModuleAwareTracer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.current_module_qualname = ""
        self.node_to_qualname = OrderedDict()

    def call_module(self, m, forward, args, kwargs):
        old_qualname = self.current_module_qualname
        try:
            module_qualname = self.path_of_module(m)
            self.current_module_qualname = module_qualname
            if not self.is_leaf_module(m, module_qualname):
                out = forward(*args, **kwargs)
                return out
            return self.create_proxy("call_module", module_qualname, args, kwargs)
        finally:
            self.current_module_qualname = old_qualname

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, *_):
        proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr)
        self.node_to_qualname[proxy.node] = self._get_node_qualname(
            self.current_module_qualname, proxy.node)
        return proxy

    def _get_node_qualname(self, module_qualname, node):
        node_qualname = module_qualname
        if node.op != "call_module":
            if len(node_qualname) > 0:
                node_qualname += "."
            node_qualname += str(node)
        if re.match(r".+_[0-9]+$", node_qualname) is not None:
            node_qualname = node_qualname.rsplit("_", 1)[0]
        for existing_qualname in reversed(self.node_to_qualname.values()):
            if re.match(rf"{node_qualname}(_[0-9]+)?$", existing_qualname) is not None:
                postfix = existing_qualname.replace(node_qualname, "")
                if len(postfix):
                    next_index = int(postfix[1:]) + 1
                else:
                    next_index = 1
                node_qualname += f"_{next_index}"
                break
        return node_qualname


def get_graph_node_names(model, tracer_kwargs=None):
    tracer_kwargs = tracer_kwargs or {}
    is_training = model.training
    train_tracer = NodePathTracer(**tracer_kwargs)
    train_tracer.trace(model.train())
    eval_tracer = NodePathTracer(**tracer_kwargs)
    eval_tracer.trace(model.eval())
    train_nodes = list(train_tracer.node_to_qualname.values())
    eval_nodes = list(eval_tracer.node_to_qualname.values())
    model.train(is_training)
    return train_nodes, eval_nodes


def create_feature_extractor(model, return_nodes, tracer_kwargs=None):
    tracer_kwargs = tracer_kwargs or {}
    is_training = model.training
    if isinstance(return_nodes, list):
        return_nodes = {n: n for n in return_nodes}
    graphs = {}
    for mode in ["train", "eval"]:
        model.train(mode == "train")
        mode_return_nodes = dict(return_nodes)
        tracer = NodePathTracer(**tracer_kwargs)
        graph = tracer.trace(model)
        name = model.__class__.__name__
        graph_module = fx.GraphModule(tracer.root, graph, name)
        available_nodes = list(tracer.node_to_qualname.values())
        for query in mode_return_nodes:
            if query not in available_nodes and not any(
                    n.startswith(query + ".") for n in available_nodes):
                raise ValueError(f"node: '{query}' is not present in model")
        orig_output_nodes = [n for n in reversed(graph_module.graph.nodes) if n.op == "output"]
        for n in orig_output_nodes:
            graph_module.graph.erase_node(n)
        nodes = [n for n in graph_module.graph.nodes]
        output_nodes = OrderedDict()
        for n in reversed(nodes):
            module_qualname = tracer.node_to_qualname.get(n)
            if module_qualname is None:
                continue
            for query in mode_return_nodes:
                depth = query.count(".")
                if ".".join(module_qualname.split(".")[:depth + 1]) == query:
                    output_nodes[mode_return_nodes[query]] = n
                    mode_return_nodes.pop(query)
                    break
        output_nodes = OrderedDict(reversed(list(output_nodes.items())))
        with graph_module.graph.inserting_after(nodes[-1]):
            graph_module.graph.output(output_nodes)
        graph_module.graph.eliminate_dead_code()
        graph_module.recompile()
        graphs[mode] = graph_module
    model.train(is_training)
    out = graphs["train" if is_training else "eval"]
    out.train(is_training)
    return out, graphs


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        out = self.relu(out)
        return out


class ResNet(nn.Module):
    def __init__(self, layers=(1, 1), num_classes=5):
        super().__init__()
        self.inplanes = 4
        self.conv1 = nn.Conv2d(3, 4, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(4, layers[0])
        self.layer2 = self._make_layer(8, layers[1], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8, num_classes)

    def _make_layer(self, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes:
            downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes, 1, stride, bias=False),
                                       nn.BatchNorm2d(planes))
        layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes
        for _ in range(1, blocks):
            layers.append(BasicBlock(self.inplanes, planes))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.fc(x)


torch.manual_seed(0)
model = ResNet(layers=(2, 1))
x = torch.randn(2, 3, 12, 12)
model.train()
model(x)
model.eval()

train_nodes, eval_nodes = get_graph_node_names(model)
print("train nodes:", len(train_nodes), "same in eval:", train_nodes == eval_nodes)
for n in train_nodes:
    print(" ", n)

extractor, graphs = create_feature_extractor(
    model, return_nodes={"layer1.0.relu_1": "block0", "layer1": "feat1",
                         "layer2.0.add": "res2", "flatten": "flat", "fc": "logits"})
print(extractor.code)
print(graphs["train"].graph)
with torch.no_grad():
    feats = extractor(x)
    ref = model(x)
print(type(feats).__name__, list(feats.keys()))
for k, v in feats.items():
    print(k, tuple(v.shape), "%.5f" % v.sum().item())
print("logits match:", torch.allclose(feats["logits"], ref, atol=1e-6))

captured = {}
hooks = [model.layer1.register_forward_hook(lambda m, i, o: captured.update(feat1=o)),
         model.avgpool.register_forward_hook(lambda m, i, o: captured.update(pool=o))]
with torch.no_grad():
    model(x)
for h in hooks:
    h.remove()
print("layer1 matches hook:", torch.allclose(captured["feat1"], feats["feat1"]))
print("flat matches pool:", torch.allclose(captured["pool"].flatten(1), feats["flat"]))

leaf = get_graph_node_names(model, tracer_kwargs={"leaf_modules": [BasicBlock]})[1]
print("with BasicBlock leaves:", leaf)
try:
    create_feature_extractor(model, return_nodes=["layer3"])
except ValueError as e:
    print("ValueError:", e)
