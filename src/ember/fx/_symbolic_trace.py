"""``torch.fx.symbolic_trace``: run a Module's forward on Proxies and keep what it did."""
import functools
import inspect
import math
import types
import warnings

from .graph import Graph, _wrapped, wrap
from .proxy import Proxy, TracerBase

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH", "PHBase"]
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


class PHBase:
    """A placeholder marker for ``concrete_args``: the argument stays a graph input."""

    def __repr__(self):
        return "PH"


PH = PHBase()


def _assert_is_none(value, msg):
    if value is not None:
        raise AssertionError(msg)


def _without_varargs(fn, nargs):
    """``fn`` with ``*args``/``**kwargs`` (and keyword-only parameters) turned into ``nargs``
    plain positional ones, so each can be passed one Proxy (torch's ``_patch_function``)."""
    co = fn.__code__
    flags = co.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    code = co.replace(co_argcount=nargs, co_posonlyargcount=0, co_kwonlyargcount=0,
                      co_flags=flags)
    return types.FunctionType(code, fn.__globals__, fn.__name__, None, fn.__closure__)


class Tracer(TracerBase):
    """Symbolic tracer: ``trace(root)`` returns the Graph of ``root``'s forward. Override
    ``is_leaf_module`` to choose which submodules stay ``call_module`` Nodes. The functions
    of ``autowrap_modules`` (default: ``math``) and ``autowrap_functions`` called on Proxies
    become ``call_function`` Nodes."""

    proxy_buffer_attributes = False

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(),
                 param_shapes_constant=False):
        self.autowrap_modules = tuple(autowrap_modules)
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
        """Parameters of the root read in forward become ``get_attr`` Nodes (made once); so do
        buffers when ``proxy_buffer_attributes`` is set. Other attributes stay values."""
        import ember
        if isinstance(attr_val, ember.nn.Parameter):
            source = self.root.named_parameters()
        elif self.proxy_buffer_attributes and isinstance(attr_val, ember.Tensor):
            source = self.root.named_buffers()
        else:
            return attr_val
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
        """``(fn, args)``: the function to call and its arguments, placeholder Proxies for
        ``fn``'s parameters (``self`` is the root for a Module); ``*args``/``**kwargs`` become one
        placeholder each. A ``concrete_args`` value is used as it is, behind a guard Node."""
        fn = inspect.unwrap(fn)
        co = fn.__code__
        names = list(co.co_varnames[:co.co_argcount + co.co_kwonlyargcount])
        if is_module:
            if not names:
                raise RuntimeError("``self`` argument cannot be part of *args expansion!")
            names = names[1:]
        sig = inspect.signature(fn)
        if isinstance(concrete_args, tuple):
            if len(names) != len(concrete_args):
                raise RuntimeError("Tracing expected %d arguments but got %d concrete arguments"
                                   % (len(names), len(concrete_args)))
            concrete_args = dict(zip(names, concrete_args))
        concrete_args = concrete_args or {}
        args = [self.root] if is_module else []
        args += [self._proxy_placeholder(n, concrete_args, sig, fn) for n in names]
        i = len(names) + is_module
        if co.co_flags & inspect.CO_VARARGS:
            args.append(self._proxy_placeholder("*" + co.co_varnames[i], {}, sig, fn))
            i += 1
        if co.co_flags & inspect.CO_VARKEYWORDS:
            args.append(self._proxy_placeholder("**" + co.co_varnames[i], {}, sig, fn))
        if co.co_kwonlyargcount or co.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
            fn = _without_varargs(fn, len(args))
        return fn, args

    def _proxy_placeholder(self, name, concrete_args, sig, fn):
        if name in concrete_args:
            x = concrete_args[name]
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
            out = self.create_proxy("placeholder", name + "_1", default, {})
            if isinstance(x, PHBase):
                return out
            msg = "%s has been specialized to have value %s but got another value" % (name, x)
            if type(x) in (bool, int, float, complex, str):
                import ember
                self.create_proxy("call_function", ember._assert, (out == x, msg), {})
            elif x is None:
                self.create_proxy("call_function", _assert_is_none, (out, msg), {})
            else:
                warnings.warn("Was not able to add assertion to guarantee correct input %s to "
                              "specialized function. It is up to the user to make sure that "
                              "your inputs match the inputs you specialized the function with."
                              % name)
            return x
        default = ()
        if name[0] != "*":
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
        return self.create_proxy("placeholder", name, default, {},
                                 type_expr=fn.__annotations__.get(name))

    def trace(self, root, concrete_args=None):
        """Run ``root`` (a Module or function) on Proxies; returns the recorded Graph."""
        import ember
        from ember import _torch_function
        from ember.nn.modules.module import Module
        _torch_function.enable()
        if isinstance(root, Module):
            self.root = root
            fn = type(root).forward
        else:
            self.root = Module()
            fn = root
        self.graph = Graph(tracer_cls=type(self))
        self.tensor_attrs = {}
        for n, t in list(self.root.named_parameters()) + list(self.root.named_buffers()):
            self.tensor_attrs.setdefault(id(t), n)
        for n, t in vars(self.root).items():
            if isinstance(t, ember.Tensor):
                self.tensor_attrs.setdefault(id(t), n)
        self.submodule_paths = None
        fn_globals, ret = fn.__globals__, fn.__annotations__.get("return")
        fn, args = self.create_args_for_root(fn, isinstance(root, Module), concrete_args)
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
        patched += [(fn_globals, f.__name__, f) for f in self.autowrap_functions
                    if fn_globals.get(f.__name__) is f]
        auto = {id(f) for m in self.autowrap_modules for n, f in vars(m).items()
                if callable(f) and not n.startswith("_")}
        for g in [fn_globals] + [vars(m) for m in self.autowrap_modules]:
            patched += [(g, n, f) for n, f in g.items()
                        if id(f) in auto and not n.startswith("_")]
        Module.__getattr__, Module.__call__ = module_getattr, module_call
        for g, n, f in patched:
            g[n] = _make_wrapped(f)
        try:
            out = fn(*args)
            self.create_node("output", "output", (self.create_arg(out),), {},
                             type_expr=_annotation(ret))
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
