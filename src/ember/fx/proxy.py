"""``torch.fx.Proxy``: the stand-in value that records what a traced program does with it."""
import dis
import inspect
import operator

from .graph import _REFLECTABLE, magic_methods
from .node import Node, map_aggregate

__all__ = ["Proxy", "Attribute", "TraceError", "TracerBase"]


class TraceError(ValueError):
    pass


class TracerBase:
    """Records calls into ``self.graph`` as Nodes."""

    graph = None
    check_mutable_operations = False
    trace_asserts = False
    record_stack_traces = False

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node):
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        """A Proxy for a new Node ``kind``/``target`` with ``args``/``kwargs`` (whose Proxies
        become Nodes)."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a):
        """``a`` as a Node argument: Proxies become their Nodes, containers are walked."""
        import ember
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, tuple):
            t = tuple(self.create_arg(e) for e in a)
            return type(a)(*t) if hasattr(a, "_fields") else t
        if isinstance(a, list):
            return [self.create_arg(e) for e in a]
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                k = self.create_arg(k)
                if isinstance(k, Node):
                    raise RuntimeError("Keys for dictionaries used as an argument cannot "
                                       "contain a Node. Got key: %s" % k)
                out[k] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if a is None or a is ... or isinstance(a, (str, int, float, bool, complex, Node,
                                                   ember.dtype, ember.device, ember.Tensor)):
            return a
        if getattr(a, "__module__", "").startswith("ember") and hasattr(a, "__reduce__") and \
                not callable(a):
            return a
        raise NotImplementedError("argument of type: %s" % type(a))

    def to_bool(self, obj):
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow")

    def iter(self, obj):
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the "
                         "Proxy is used in a loop or as a *args or **kwargs function argument. "
                         "See the torch.fx docs on pytorch.org for a more detailed explanation "
                         "of what types of control flow can be traced, and check out the Proxy "
                         "docstring for help troubleshooting Proxy iteration errors")

    def keys(self, obj):
        return Attribute(obj, "keys")()


class Proxy:
    """A value in a traced program: every operation on it adds a Node to the tracer's graph
    and returns a new Proxy."""

    def __init__(self, node, tracer=None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self):
        return "Proxy(%s)" % self.node.name

    def __getattr__(self, k):
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __deepcopy__(self, memo):
        raise RuntimeError("deepcopy of a Proxy is not supported")

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        frame = inspect.currentframe().f_back
        for inst in dis.get_instructions(frame.f_code):
            if inst.offset > frame.f_lasti:
                if inst.opname == "UNPACK_SEQUENCE":
                    return (self[i] for i in range(inst.argval))
                break
        return self.tracer.iter(self)

    def __bool__(self):
        return self.tracer.to_bool(self)

    def keys(self):
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want "
                           "this call to be recorded, please call torch.fx.wrap('len') at "
                           "module scope")

    @classmethod
    def __torch_function__(cls, orig_method, types, args=None, kwargs=None):
        args = args if args else ()
        kwargs = kwargs if kwargs else {}
        tracers = {}

        def find_tracer(a):
            if isinstance(a, cls):
                tracers[a.tracer] = None
        map_aggregate((args, kwargs), find_tracer)
        if len(tracers) > 1:
            raise RuntimeError("Found multiple different tracers %s while trying to trace "
                               "operations %s" % (list(tracers), orig_method))
        tracer = next(iter(tracers))
        if _is_tensor_method(orig_method):
            name = orig_method.__name__
            return tracer.create_proxy("call_method", _METHOD_NAMES.get(name, name), args,
                                       kwargs)
        kind, args, kwargs = _functional_call(orig_method, args, kwargs)
        if kind == "call_method":
            return tracer.create_proxy(kind, orig_method.__name__, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs)


_TENSOR_METHODS: dict = {}
_METHOD_NAMES = {"__eq__": "eq"}     # (torch's name for Tensor's operator)


def _is_tensor_method(fn):
    """Whether ``fn`` is one of Tensor's methods or operators (``t + proxy`` dispatches as
    Tensor's ``__add__``, recorded as the method ``add``)."""
    import ember
    attrs = vars(ember.Tensor)
    if _TENSOR_METHODS.get("n") != len(attrs):
        _TENSOR_METHODS.clear()
        _TENSOR_METHODS.update({id(f): True for f in attrs.values()}, n=len(attrs))
    return id(fn) in _TENSOR_METHODS


def _functional_call(fn, args, kwargs):
    """``nn.functional`` calls as torch records them: its Python functions pass fixed
    positional and keyword arguments; ``F.sigmoid``/``F.tanh`` are method calls."""
    import ember.nn.functional as F
    from ._functional_args import SPLIT
    name = getattr(fn, "__name__", "")
    if getattr(F, name, None) is not fn:
        return "call_function", args, kwargs
    if name in ("sigmoid", "tanh"):
        return "call_method", args, kwargs
    split = SPLIT.get(name)
    if split is None:
        return "call_function", args, kwargs
    pos, kws = (s.split() for s in split.split("|"))
    bound = inspect.signature(getattr(fn, "__wrapped__", fn)).bind(*args, **kwargs)
    bound.apply_defaults()
    values = bound.arguments
    return "call_function", tuple(values[p] for p in pos), {k: values[k] for k in kws}


class Attribute(Proxy):
    """``proxy.attr``: a method call when called, else a ``getattr`` Node (made on first
    use)."""

    def __init__(self, root, attr):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


class GraphAppendingTracer(TracerBase):
    def __init__(self, graph):
        self.graph = graph


def _magic(method):
    def impl(*args):
        return args[0].tracer.create_proxy("call_function", getattr(operator, method), args, {})
    impl.__name__ = method
    return impl


def _reflected(method):
    def impl(self, rhs):
        return self.tracer.create_proxy("call_function", getattr(operator, method),
                                        (rhs, self), {})
    impl.__name__ = "__r%s__" % method.strip("_")
    return impl


for _m in magic_methods:
    setattr(Proxy, "__%s__" % _m.strip("_"), _magic(_m))
for _m in _REFLECTABLE:
    setattr(Proxy, "__r%s__" % _m.strip("_"), _reflected(_m))
