"""``torch.fx.experimental.optimization``: inference-time passes over a traced Module."""
import copy

import ember.fx as fx
import ember.nn as nn
from ember.nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval

__all__ = ["matches_module_pattern", "replace_node_module", "fuse", "remove_dropout",
           "extract_subgraph"]


def _parent_name(target):
    """``"foo.bar.baz"`` -> ``("foo.bar", "baz")``."""
    *parent, name = target.rsplit(".", 1)
    return parent[0] if parent else "", name


def matches_module_pattern(pattern, node, modules):
    """Whether ``node`` and its first argument are ``call_module`` Nodes of exactly the types
    ``pattern`` (first argument's, node's)."""
    if len(node.args) == 0:
        return False
    for expected_type, current in zip(pattern, (node.args[0], node)):
        if not isinstance(current, fx.Node) or current.op != "call_module":
            return False
        if not isinstance(current.target, str) or current.target not in modules:
            return False
        if type(modules[current.target]) is not expected_type:
            return False
    return True


def replace_node_module(node, modules, new_module):
    """Install ``new_module`` where ``node``'s target module was."""
    if not isinstance(node.target, str):
        raise AssertionError("Expected str target, got %s" % type(node.target))
    parent_name, name = _parent_name(node.target)
    modules[node.target] = new_module
    setattr(modules[parent_name], name, new_module)


def fuse(model, inplace=False, no_trace=False):
    """Fold each BatchNorm that follows a conv (1d/2d/3d) or Linear into it, for inference.
    Works on a deep copy of ``model`` unless ``inplace``."""
    patterns = [(nn.Conv1d, nn.BatchNorm1d), (nn.Conv2d, nn.BatchNorm2d),
                (nn.Conv3d, nn.BatchNorm3d), (nn.Linear, nn.BatchNorm1d)]
    if not inplace:
        model = copy.deepcopy(model)
    if not no_trace or not isinstance(model, fx.GraphModule):
        fx_model = fx.symbolic_trace(model)
    else:
        fx_model = model
    modules = dict(fx_model.named_modules())
    new_graph = copy.deepcopy(fx_model.graph)
    for pattern in patterns:
        for node in new_graph.nodes:
            if not matches_module_pattern(pattern, node, modules):
                continue
            if len(node.args[0].users) > 1:
                continue
            first, bn = modules[node.args[0].target], modules[node.target]
            if not bn.track_running_stats:
                continue
            fused = fuse_linear_bn_eval(first, bn) if pattern[0] is nn.Linear \
                else fuse_conv_bn_eval(first, bn)
            replace_node_module(node.args[0], modules, fused)
            node.replace_all_uses_with(node.args[0])
            new_graph.erase_node(node)
    return fx.GraphModule(fx_model, new_graph)


class _DropoutRemover(fx.Transformer):
    def call_module(self, target, args, kwargs):
        if isinstance(self.submodules[target], nn.Dropout):
            if len(args) != 1:
                raise AssertionError("Expected 1 arg for Dropout, got %d" % len(args))
            return args[0]
        return super().call_module(target, args, kwargs)


def remove_dropout(model):
    """``model`` traced, with every ``nn.Dropout`` call removed."""
    return _DropoutRemover(fx.symbolic_trace(model)).transform()


def extract_subgraph(orig_module, nodes, inputs, outputs):
    """A GraphModule that runs ``nodes`` (from ``orig_module``'s graph) on ``inputs`` and
    returns ``outputs`` (a list)."""
    new_graph = fx.Graph()
    env = {}
    for inp in inputs:
        env[inp] = new_graph.placeholder(inp.name)
    for node in nodes:
        env[node] = new_graph.node_copy(node, lambda x: env[x])
    new_graph.output([env[out] for out in outputs])
    new_graph.lint()
    return fx.GraphModule(orig_module, new_graph)
