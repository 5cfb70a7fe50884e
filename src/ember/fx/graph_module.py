"""``torch.fx.GraphModule``: a Module whose forward is the code generated from a Graph."""
import copy
import linecache

from ember.nn.modules.module import Module

from .graph import Graph

__all__ = ["GraphModule"]

_counter = [0]


def _exec_with_source(src, globals_):
    key = "<eval_with_key>.%d" % _counter[0]
    _counter[0] += 1
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    exec(compile(src, key, "exec"), globals_)


def _copy_attr(from_module, to_module, target):
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    import ember
    orig = getattr(from_module, field)
    if isinstance(orig, ember.Tensor) and not isinstance(orig, ember.nn.Parameter):
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj, to_module, target):
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    setattr(to_module, field, from_obj)


def _addindent(s_, num_spaces):
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    return first + "\n" + "\n".join(num_spaces * " " + line if line.strip() else ""
                                      for line in s)


class GraphModule(Module):
    """A Module built from ``root`` (a Module or a dict of attributes) and ``graph``: it copies
    the submodules and attributes the graph uses, and its ``forward`` runs ``graph.code``.
    Each instance has its own class, so ``recompile()`` changes only this one."""

    def __new__(cls, *args, **kwargs):
        for t in cls.__mro__:
            if t.__name__ == "GraphModuleImpl":
                cls = t.__mro__[1] if t is cls else cls
                break

        class GraphModuleImpl(cls):
            pass
        return super().__new__(GraphModuleImpl)

    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError("Node " + str(node) + " referenced target " +
                                           node.target + " but that target was not provided "
                                           "in ``root``!")
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.meta = {}
        self.graph = graph

    @property
    def graph(self):
        """The Graph this module runs; setting it recompiles."""
        return self.__dict__["_graph"]

    @graph.setter
    def graph(self, g):
        if not isinstance(g, Graph):
            raise AssertionError("Expected a Graph instance, but got %s" % type(g))
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self):
        """The generated ``forward`` source."""
        if "_code" not in self.__dict__:
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self.__dict__["_code"]

    def recompile(self):
        """Regenerate ``forward`` from ``self.graph`` (after editing the graph)."""
        python_code = self.graph.python_code(root_module="self")
        self.__dict__["_code"] = python_code.src
        globals_ = dict(python_code.globals)
        _exec_with_source(python_code.src, globals_)
        type(self).forward = globals_["forward"]
        return python_code

    def print_readable(self, print_output=True, include_stride=False, include_device=False,
                       colored=False):
        """The generated code as a class, with a comment per stretch of Nodes."""
        src = self.graph.python_code(root_module="self", verbose=True).src.lstrip("\n")
        code = _addindent("class %s(torch.nn.Module):\n" % type(self).__name__ + src, 4)
        subs = [""]
        for _, sub in self.named_children():
            if isinstance(sub, GraphModule):
                subs.append(sub.print_readable(print_output=False))
        out = code + _addindent("\n".join(subs), 4)
        if print_output:
            print(out)
        return out

    def __str__(self):
        return "\n".join([super().__str__(), self.code,
                          "# To see more debug info, please use "
                          "`graph_module.print_readable()`"])

    def __deepcopy__(self, memo):
        res = Module.__new__(Module)
        memo[id(self)] = res
        state = {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")}
        res.__dict__ = copy.deepcopy(state, memo)
        out = GraphModule(res, copy.deepcopy(self.graph, memo), type(self).__name__)
        out.__dict__.update({k: v for k, v in res.__dict__.items()
                             if k not in out.__dict__})
        return out

    def __copy__(self):
        out = GraphModule(self, self.graph, type(self).__name__)
        out.meta = dict(getattr(self, "meta", {}))
        return out

    def add_submodule(self, target, m):
        """Install ``m`` at dotted path ``target`` (making empty parents); True on success."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            sub = getattr(mod, item, None)
            if sub is None:
                sub = Module()
                setattr(mod, item, sub)
            if not isinstance(sub, Module):
                return False
            mod = sub
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target):
        *path, last = target.split(".")
        mod = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
        if not hasattr(mod, last):
            return False
        delattr(mod, last)
        return True

    def delete_all_unused_submodules(self):
        used = set()
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                parts = node.target.split(".")
                used.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        for name, _ in list(self.named_modules()):
            if name and name not in used:
                self.delete_submodule(name)
