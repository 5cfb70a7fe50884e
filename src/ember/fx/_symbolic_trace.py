"""``torch.fx.symbolic_trace``: run a Module's forward on Proxies and keep what it did."""
import functools
import inspect

from .graph import Graph, _wrapped, wrap
from .proxy import Proxy, TracerBase

__all__ = ["Tracer", "symbolic_trace", "wrap"]
wrap.__module__ = __name__      # (torch's home of it, as generated code names it)

def _find_proxy(args, kwargs):
    found = []

    def look(a):
        if isinstance(a, Proxy):
            found.append(a)
        elif isinstance(a, (tuple, list)):
            for e in a:
                look(e)
        elif isinstance(a, dict):
            for e in a.values():
                look(e)
    look(args)
    look(kwargs)
    return found[0] if found else None


def _make_wrapped(orig):
    @functools.wraps(orig)
    def wrapped(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is None:
            return orig(*args, **kwargs)
        out = proxy.tracer.create_proxy("call_function", orig, args, kwargs)
        out.node.meta["is_wrapped"] = True
        return out
    return wrapped


class Tracer(TracerBase):
    """Symbolic tracer: ``trace(root)`` returns the Graph of ``root``'s forward. Override
    ``is_leaf_module`` to choose which submodules stay ``call_module`` Nodes."""

    def __init__(self, autowrap_modules=(), autowrap_functions=(),
                 param_shapes_constant=False):
        self.autowrap_functions = tuple(autowrap_functions)
        self.param_shapes_constant = param_shapes_constant
        self.root = None
        self.graph = None
        self.tensor_attrs = {}
        self.submodule_paths = None

    def is_leaf_module(self, m, module_qualified_name):
        """torch's own layers (``torch.nn``'s modules but Sequential) are leaves."""
        import ember.nn as nn
        return (m.__module__.startswith("ember.nn") or m.__module__.startswith("torch.nn")) \
            and not isinstance(m, nn.Sequential)

    def path_of_module(self, mod):
        """``mod``'s qualified name in the root module."""
        if self.submodule_paths is None:
            self.submodule_paths = {id(m): n for n, m in self.root.named_modules()}
        path = self.submodule_paths.get(id(mod))
        if path is None:
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m, forward, args, kwargs):
        """A leaf becomes one ``call_module`` Node; others are traced through."""
        path = self.path_of_module(m)
        if not self.is_leaf_module(m, path):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", path, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """Parameters and buffers of the root read in forward become ``get_attr`` Nodes."""
        import ember
        if not isinstance(attr_val, ember.Tensor):
            return attr_val
        sources = (self.root.named_parameters(),
                   self.root.named_buffers()) if isinstance(attr_val, ember.nn.Parameter) \
            else (self.root.named_buffers(),)
        for source in sources:
            for n, p in source:
                if attr_val is p:
                    if n not in parameter_proxy_cache:
                        parameter_proxy_cache[n] = self.create_proxy("get_attr", n, (), {})
                    return parameter_proxy_cache[n]
        return attr_val

    def create_arg(self, a):
        import ember
        if isinstance(a, ember.nn.Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, ember.nn.Module):
            for n, p in self.root.named_modules():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("module is not installed as a submodule")
        if isinstance(a, ember.Tensor):
            name = self.tensor_attrs.get(id(a))
            if name is None:
                i = 0
                while hasattr(self.root, "_tensor_constant%d" % i):
                    i += 1
                name = "_tensor_constant%d" % i
                setattr(self.root, name, a)
                self.tensor_attrs[id(a)] = name
            return self.create_node("get_attr", name, (), {})
        return super().create_arg(a)

    def create_args_for_root(self, fn, is_module, concrete_args=None):
        """Placeholder Proxies for ``fn``'s parameters (``self`` skipped for a Module)."""
        params = list(inspect.signature(fn).parameters.values())
        if is_module:
            params = params[1:]
        concrete_args = concrete_args or {}
        args = []
        for p in params:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise RuntimeError("symbolic_trace: *args and **kwargs are not supported")
            if p.name in concrete_args:
                args.append(concrete_args[p.name])
                continue
            default = () if p.default is inspect.Parameter.empty else (p.default,)
            args.append(self.create_proxy("placeholder", p.name, default, {},
                                          type_expr=_annotation(p.annotation)))
        return args

    def trace(self, root, concrete_args=None):
        """Run ``root`` (a Module or function) on Proxies; returns the recorded Graph."""
        import ember
        from ember import _torch_function
        from ember.nn.modules.module import Module
        _torch_function.enable()
        if isinstance(root, Module):
            self.root = root
            fn = type(root).forward
            args = [root]
        else:
            self.root = Module()
            fn = root
            args = []
        self.graph = Graph(tracer_cls=type(self))
        self.tensor_attrs = {}
        for n, t in list(self.root.named_parameters()) + list(self.root.named_buffers()):
            self.tensor_attrs.setdefault(id(t), n)
        for n, t in vars(self.root).items():
            if isinstance(t, ember.Tensor):
                self.tensor_attrs.setdefault(id(t), n)
        self.submodule_paths = None
        args += self.create_args_for_root(fn, isinstance(root, Module), concrete_args)
        cache = {}
        tracer = self
        orig_getattr, orig_call = Module.__getattr__, Module.__call__

        def module_getattr(mod, attr):
            return tracer.getattr(attr, orig_getattr(mod, attr), cache)

        def module_call(mod, *a, **k):
            def forward(*a, **k):
                return orig_call(mod, *a, **k)
            return tracer.call_module(mod, forward, a, k)

        patched = [(g, n, g[n]) for g, n in _wrapped if n in g]
        patched += [(fn.__globals__, f.__name__, f) for f in self.autowrap_functions
                    if fn.__globals__.get(f.__name__) is f]
        Module.__getattr__, Module.__call__ = module_getattr, module_call
        for g, n, f in patched:
            g[n] = _make_wrapped(f)
        try:
            out = fn(*args)
            self.create_node("output", "output", (self.create_arg(out),), {},
                             type_expr=_annotation(fn.__annotations__.get("return")))
        finally:
            Module.__getattr__, Module.__call__ = orig_getattr, orig_call
            for g, n, f in patched:
                g[n] = f
        self.submodule_paths = None
        return self.graph


def _annotation(a):
    return None if a is inspect.Parameter.empty else a


def symbolic_trace(root, concrete_args=None):
    """Trace ``root`` (a Module or function) into a GraphModule.

    Example:
        >>> import ember
        >>> gm = ember.fx.symbolic_trace(ember.nn.ReLU())
        >>> print(gm.graph)
        graph():
            %input_1 : [num_users=1] = placeholder[target=input]
            %relu : [num_users=1] = call_function[target=torch.nn.functional.relu](args = (%input_1,), kwargs = {inplace: False})
            return relu
    """  # noqa: E501
    from ember.nn.modules.module import Module
    from .graph_module import GraphModule
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
