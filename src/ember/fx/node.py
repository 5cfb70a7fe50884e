"""``torch.fx.Node``: one operation of a Graph, with its arguments and users."""
import builtins
import operator

__all__ = ["Node", "map_arg", "map_aggregate"]

_OPS = ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output", "root")


def map_aggregate(a, fn):
    """Apply ``fn`` to every leaf of ``a`` (tuples, lists, dicts and slices are walked)."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(e, fn) for e in a)
        return t if not hasattr(a, "_fields") else type(a)(*t)
    if isinstance(a, list):
        return [map_aggregate(e, fn) for e in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """Apply ``fn`` to every Node in ``a``."""
    if not callable(fn):
        raise AssertionError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _format_arg(arg):
    if isinstance(arg, list):
        return "[%s]" % ", ".join(_format_arg(a) for a in arg)
    if isinstance(arg, tuple):
        return "(%s%s)" % (", ".join(_format_arg(a) for a in arg), "," if len(arg) == 1 else "")
    if isinstance(arg, dict):
        return "{%s}" % ", ".join("%s: %s" % (k, _format_arg(v)) for k, v in arg.items())
    if isinstance(arg, Node):
        return "%" + str(arg)
    return str(arg)


_QUALIFIED: dict = {}


def _qualified_names():
    """``{id(function): torch name}`` over ember's public namespaces (torch's spelling)."""
    if not _QUALIFIED:
        import importlib
        from ember import _torch_function
        _torch_function.enable()
        spaces = [("torch._C._nn", "nn.functional", _C_NN), ("torch", "nn.functional", _F_TORCH)]
        spaces += [("torch" + s, "ember" + s, None) for s in
                   ("", ".nn.functional", ".linalg", ".fft", ".special", ".nn.init")]
        for prefix, mod, names in reversed(spaces):
            mod = importlib.import_module(mod if mod.startswith("ember") else "ember." + mod)
            for name in names or [n for n in vars(mod) if not n.startswith("_")]:
                fn = getattr(mod, name, None)
                if callable(fn) and not isinstance(fn, type):
                    _QUALIFIED[id(fn)] = prefix + "." + name
    return _QUALIFIED


def _get_qualified_name(func):
    """The dotted name generated code uses for ``func`` (``torch.relu``, ``operator.add``)."""
    name = func.__name__
    if getattr(builtins, name, None) is func:
        return name
    torch_name = _qualified_names().get(id(func))
    if torch_name is not None:
        return torch_name
    module = func.__module__ or ""
    return "%s.%s" % (module.replace("ember", "torch", 1) if module.startswith("ember")
                      else module, name)


def _pretty_print_target(target):
    if isinstance(target, str):
        return target
    mod = getattr(target, "__module__", None)
    if mod == "builtins":
        return "builtins." + target.__name__
    if mod == "_operator":
        return "operator." + target.__name__
    return _get_qualified_name(target)


class Node:
    """One operation in a Graph: ``op`` (placeholder, get_attr, call_function, call_module,
    call_method, output), ``target``, ``args``/``kwargs`` (which may hold other Nodes), a
    unique ``name``, the ``users`` that take it as input and a free-form ``meta`` dict."""

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in _OPS:
            raise AssertionError("Unknown op: %s" % op)
        if op == "call_function" and not callable(target):
            raise ValueError("Node [graph = %s, name = '%s'] target %s has type %s but a "
                             "Callable is expected" % (id(graph), name, target,
                                                       type(target)))
        if op in ("call_method", "call_module", "get_attr", "placeholder") and \
                not isinstance(target, str):
            raise ValueError("Node [graph = %s, name = '%s'] target %s has type %s but a "
                             "str is expected" % (id(graph), name, target, type(target)))
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes = {}
        self.users = {}
        self.type = return_type
        self._prev = self._next = self
        self._erased = False
        self.meta = {}
        self._args, self._kwargs = (), {}
        self._update_args_kwargs(args, kwargs)

    def __repr__(self):
        return self.name

    @property
    def next(self):
        return self._next

    @property
    def prev(self):
        return self._prev

    @property
    def args(self):
        return self._args

    @args.setter
    def args(self, a):
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self):
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self):
        """The Nodes this one reads, in order of first appearance."""
        return list(self._input_nodes)

    @property
    def stack_trace(self):
        return self.meta.get("stack_trace")

    def _update_args_kwargs(self, new_args, new_kwargs):
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}
        self._args = map_aggregate(new_args, self._use)
        self._kwargs = map_aggregate(new_kwargs, self._use)

    def _use(self, x):
        if isinstance(x, Node):
            self._input_nodes.setdefault(x)
            x.users.setdefault(self)
        return x

    def update_arg(self, idx, arg):
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        self.kwargs = {**self.kwargs, key: arg}

    def insert_arg(self, idx, arg):
        args = list(self.args)
        args.insert(idx, arg)
        self.args = tuple(args)

    def _remove_from_list(self):
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    def prepend(self, x):
        """Put Node ``x`` just before this one in the graph."""
        if x is self:
            raise AssertionError("Cannot prepend self")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x):
        """Put Node ``x`` just after this one in the graph."""
        self._next.prepend(x)

    def __lt__(self, other):
        return self.graph._order(self) < self.graph._order(other)

    def replace_all_uses_with(self, replace_with, delete_user_cb=lambda user: True, *,
                              propagate_meta=False):
        """Point every user of this Node at ``replace_with`` instead; returns those users."""
        if propagate_meta:
            for k, v in self.meta.items():
                replace_with.meta.setdefault(k, v)
        to_process = [u for u in self.users if delete_user_cb(u)]
        for user in to_process:
            user.replace_input_with(self, replace_with)
        return to_process

    def replace_input_with(self, old_input, new_input):
        """Replace every use of ``old_input`` in this Node's arguments by ``new_input``."""
        def swap(n):
            return new_input if n is old_input else n
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def is_impure(self, impure_random=True):
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return getattr(self.target, "_nondeterministic_seeded", False) or \
                self.target in _SIDE_EFFECTFUL
        if self.op == "call_module":
            root = self.graph.owning_module
            mod = root.get_submodule(self.target) if root is not None else None
            return bool(getattr(mod, "_is_impure", False))
        if self.op == "call_method":
            return self.target.endswith("_") and not self.target.endswith("__")
        return False

    def format_node(self, placeholder_names=None, maybe_return_typename=None):
        """The node as ``print(graph)`` shows it."""
        users = "[num_users=%d]" % len(self.users)
        typ = "%s " % _type_repr(self.type) if self.type is not None else ""
        if self.op == "placeholder":
            if placeholder_names:
                placeholder_names.append(self.target)
                return None
            default = "(default=%s)" % (self.args[0],) if self.args else ""
            return "%%%s : %s%s = placeholder[target=%s]%s" % (self.name, typ, users,
                                                                self.target, default)
        if self.op == "get_attr":
            return "%%%s : %s%s = get_attr[target=%s]" % (
                self.name, typ, users, _pretty_print_target(self.target))
        if self.op == "output":
            return "return %s" % (self.args[0],)
        return "%%%s : %s%s = %s[target=%s](args = %s, kwargs = %s)" % (
            self.name, typ, users, self.op, _pretty_print_target(self.target),
            _format_arg(self.args), _format_arg(self.kwargs))


def _type_repr(t):
    if isinstance(t, type):
        if t.__module__ == "builtins":
            return t.__name__
        if t.__module__.startswith("ember"):
            import ember
            if getattr(ember, t.__name__, None) is t:
                return "torch." + t.__name__
        return "%s.%s" % (t.__module__, t.__qualname__)
    return repr(t)


# nn.functional's members that torch defines in C: in ``torch._C._nn`` or ``torch`` itself
_C_NN = ("avg_pool2d", "avg_pool3d", "gelu", "linear", "logsigmoid", "one_hot",
         "scaled_dot_product_attention", "softplus", "softshrink")
_F_TORCH = ("adaptive_avg_pool1d", "avg_pool1d", "bilinear", "channel_shuffle", "conv1d",
            "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d",
            "conv_transpose3d", "cosine_similarity", "hardshrink", "pairwise_distance", "pdist",
            "pixel_shuffle", "pixel_unshuffle", "prelu", "relu_", "rrelu_", "selu_", "celu_",
            "threshold_")
_SIDE_EFFECTFUL = {operator.setitem, print}
