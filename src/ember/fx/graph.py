"""``torch.fx.Graph``: a list of Nodes, its printing and the Python code it stands for."""
import builtins
import contextlib
import copy
import inspect
import keyword
import math
import re
import warnings

from .node import Node, _get_qualified_name, _type_repr, map_arg

__all__ = ["Graph", "PythonCode", "CodeGen"]

_name_regex = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")
_illegal_char_regex = re.compile("[^0-9a-zA-Z_]+")
_snake_case_sub = re.compile(r"(?<=[a-z])([A-Z])")
_illegal_names = {k: object() for k in keyword.kwlist}
_illegal_names.update(builtins.__dict__)

_REFLECTABLE = {"add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}",
                "truediv": "{} / {}", "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}",
                "lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}",
                "or_": "{} | {}", "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}"}
magic_methods = {"eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}",
                 "le": "{} <= {}", "ge": "{} >= {}", "pos": "+{}", "neg": "-{}",
                 "invert": "~{}", **_REFLECTABLE}


class _Namespace:
    """Unique Python names for nodes and globals (``add``, ``add_1``, ...)."""

    def __init__(self):
        self._obj_to_name = {}
        self._used_names = set()
        self._base_count = {}

    def create_name(self, candidate, obj):
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        match = _name_regex.match(candidate)
        if match is None:
            candidate = _illegal_char_regex.sub("_", candidate) or "_unnamed"
            if candidate[0].isdigit():
                candidate = "_" + candidate
            match = _name_regex.match(candidate)
        base, num = match.group(1, 2)
        if num is None or candidate in self._used_names:
            num = self._base_count.get(base, 0)
            if _illegal_names.get(candidate, obj) is not obj:
                num += 1
                candidate = "%s_%d" % (base, num)
        else:
            num = int(num)
        while candidate in self._used_names:
            num += 1
            candidate = "%s_%d" % (base, num)
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name, obj):
        self._obj_to_name[obj] = name

    def _rename_object(self, obj, name):
        self._obj_to_name[obj] = name


class PythonCode:
    """The source of a Graph's ``forward`` and the globals it needs."""

    def __init__(self, src, globals_):
        self.src = src
        self.globals = globals_


class CodeGen:
    """How a Graph becomes Python source: subclass it and ``Graph.set_codegen`` it to change
    the ``def`` line, the ``return`` statement or the globals the code sees."""

    def __init__(self):
        self._body_transformer = None
        self._func_name = "forward"

    def gen_fn_def(self, free_vars, maybe_return_annotation):
        """The ``def`` line, e.g. ``def forward(self, x):``."""
        if not free_vars or free_vars[0] != "self":
            free_vars.insert(0, "self")
        return "def %s(%s)%s:" % (self._func_name, ", ".join(free_vars),
                                  maybe_return_annotation)

    def generate_output(self, output_args):
        """The ``return`` statement (not indented)."""
        return "return %r" % (output_args,)

    def process_inputs(self, *args):
        return args

    def process_outputs(self, outputs):
        return outputs

    def additional_globals(self):
        """``(name, value)`` pairs the generated code needs as globals."""
        return []


def _format_target(base, target):
    r = base
    for e in target.split("."):
        r = 'getattr(%s, "%s")' % (r, e) if not e.isidentifier() else "%s.%s" % (r, e)
    return r


class _InsertPoint:
    def __init__(self, graph, new_insert):
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, new_insert

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.graph._insert = self.orig_insert


class _NodeList:
    def __init__(self, graph, reverse=False):
        self.graph, self.reverse = graph, reverse

    def __len__(self):
        return self.graph._len

    def __iter__(self):
        root = self.graph._root
        cur = root._prev if self.reverse else root._next
        while cur is not root:
            nxt = cur._prev if self.reverse else cur._next
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self):
        return iter(_NodeList(self.graph, not self.reverse))


class Graph:
    """The intermediate representation of ``torch.fx``: an ordered list of Nodes.

    Example:
        >>> import ember
        >>> g = ember.fx.Graph()
        >>> x = g.placeholder("x")
        >>> g.output(g.call_function(ember.relu, (x,)))
        output
    """

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._used_names = {}
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._codegen = CodeGen()

    @property
    def owning_module(self):
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod):
        self._owning_module = mod

    @property
    def nodes(self):
        """The Nodes in order (a live view; erasing while iterating is fine)."""
        return _NodeList(self)

    def _order(self, node):
        for i, n in enumerate(self.nodes):
            if n is node:
                return i
        return -1

    def find_nodes(self, *, op, target=None, sort=True):
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    def _target_to_str(self, target):
        if callable(target):
            op = target.__name__
        else:
            op = target
            if op.startswith("__") and op.endswith("__"):
                op = op[2:-2]
        return _snake_case_sub.sub(r"_\1", op).lower()

    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        """Make a Node and insert it at the current insert point."""
        args = tuple(args) if args else ()
        kwargs = dict(kwargs) if kwargs else {}
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    def erase_node(self, to_erase):
        """Remove a Node that has no users."""
        if len(to_erase.users) > 0:
            raise RuntimeError("Tried to erase Node %s but it still had %d users in the graph: "
                               "%s!" % (to_erase, len(to_erase.users), to_erase.users))
        if to_erase.graph is not self:
            raise RuntimeError("Attempting to remove %s from wrong graph!" % to_erase)
        if to_erase._erased:
            warnings.warn("erase_node(%s) on an already erased node" % to_erase)
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs(map_arg(to_erase._args, lambda n: None),
                                     map_arg(to_erase._kwargs, lambda n: None))

    def inserting_before(self, n=None):
        """Context manager: new Nodes go just before ``n`` (default: the start)."""
        if n is None:
            return self.inserting_after(self._root)
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n=None):
        """Context manager: new Nodes go just after ``n`` (default: the end)."""
        if n is None:
            return self.inserting_before(self._root)
        return _InsertPoint(self, n.append)

    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_function", the_function, args, kwargs,
                                type_expr=type_expr)

    def output(self, result, type_expr=None):
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node, arg_transform=lambda x: x):
        """Copy ``node`` (from another graph) here, mapping its argument Nodes with
        ``arg_transform``."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = dict(node.meta)
        return result

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copy every Node of ``g`` but its output into this graph; returns the output's
        value."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return rv if not return_output_node else (rv, node)
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None):
        """A copy of the Nodes (``memo`` maps old Nodes to new), not of the owning module."""
        memo = memo if memo else {}
        g = Graph(tracer_cls=self._tracer_cls)
        out = g.graph_copy(self, val_map=memo, return_output_node=True)
        g._codegen = copy.deepcopy(self._codegen)
        if out is not None:
            value, old = out
            g.output(value, type_expr=getattr(old, "type", None)).meta = copy.copy(old.meta)
        return g

    def eliminate_dead_code(self, is_impure_node=None):
        """Erase the Nodes whose value nothing uses and that have no side effect; returns
        whether any went."""
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node else node.is_impure()
            if not impure and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    def lint(self):
        """Check the graph is well formed: each Node belongs here, and its inputs come
        before it."""
        seen = set()
        names = set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError("Node '%s' does not belong to this Graph!" % node)
            if node.name in names:
                raise RuntimeError("Node redefined name %s!" % node.name)
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError("Argument '%s' of Node '%s' does not belong to this "
                                       "Graph, but was used as an argument! If you are copying "
                                       "nodes from another graph, make sure to use "
                                       "``arg_transform`` on node_copy() to remap values\n%s"
                                       % (arg, node, self))
                if arg not in seen:
                    raise RuntimeError("Argument '%s' of Node '%s' was used before it has been "
                                       "defined! Please check that Nodes in the graph are "
                                       "topologically ordered\n%s" % (arg, node, self))
            seen.add(node)
            names.add(node.name)
        mod = self.owning_module
        if mod is not None:
            for node in self.nodes:
                if node.op in ("get_attr", "call_module"):
                    *path, last = node.target.split(".")
                    m = mod
                    for p in path:
                        m = getattr(m, p, None)
                    if m is None or not hasattr(m, last):
                        raise RuntimeError("Node %s target %s references nonexistent attribute "
                                           "%s of %s" % (node, node.target, last, m))

    def __str__(self):
        lines = [node.format_node() for node in self.nodes]
        return "graph():" + "".join("\n    " + s for s in lines if s)

    def print_tabular(self):
        """Print the Nodes as a table (needs the ``tabulate`` package, as torch's)."""
        try:
            from tabulate import tabulate
        except ImportError:
            print("`print_tabular` relies on the library `tabulate`, which could not be found "
                  "on this machine. Run `pip install tabulate` to install the library.")
            raise
        rows = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(tabulate(rows, headers=["opcode", "name", "target", "args", "kwargs"]))

    def python_code(self, root_module, *, verbose=False, include_stride=False,
                    include_device=False, colored=False):
        """The ``forward`` source for this graph as torch writes it."""
        namespace = _Namespace()
        for node in self.nodes:
            namespace.create_name(node.name, node)
        return _gen_python_code(self._codegen, list(self.nodes), root_module, namespace,
                                verbose)

    def set_codegen(self, codegen):
        self._codegen = codegen

    def process_inputs(self, *args):
        return self._codegen.process_inputs(*args)

    def process_outputs(self, out):
        return self._codegen.process_outputs(out)

    def on_generate_code(self, make_transformer):
        """Install ``make_transformer(current)``, a function over the list of generated
        body lines; the returned context manager puts the previous one back on exit."""
        old = self._codegen._body_transformer
        self._codegen._body_transformer = make_transformer(old)

        @contextlib.contextmanager
        def restore():
            try:
                yield
            finally:
                self._codegen._body_transformer = old
        return restore()


def _gen_python_code(codegen, nodes, root_module, namespace, verbose=False):
    import ember
    free_vars, body = [], []
    globals_ = {"inf": math.inf, "nan": math.nan, "NoneType": type(None), "torch": _TORCH,
                "device": ember.device}
    wrapped = {}
    return_ann = [""]
    for name in globals_:
        namespace.create_name(name, globals_[name])

    def add_global(name_hint, obj):
        if (getattr(obj, "__module__", None) or "").startswith("ember") and callable(obj):
            name_hint = _get_qualified_name(obj)
        if name_hint.startswith("torch.") and _resolve(name_hint) is obj:
            return name_hint
        name = namespace.create_name(name_hint, obj)
        globals_[name] = obj
        return name

    def get_repr(arg):
        if isinstance(arg, Node):
            return repr(arg)
        if isinstance(arg, tuple) and hasattr(arg, "_fields"):
            gname = add_global(_get_qualified_name(type(arg)), type(arg))
            return "%s%r" % (gname, tuple(arg))
        if isinstance(arg, ember.Tensor):
            return "torch.Tensor(size=%s, dtype=%s)" % (list(arg.size()),
                                                        str(arg.dtype).split(".")[-1])
        if isinstance(arg, tuple):
            if len(arg) == 1:
                return "(%s,)" % get_repr(arg[0])
            return "(" + ", ".join(get_repr(a) for a in arg) + ")"
        if isinstance(arg, list):
            return "[" + ", ".join(get_repr(a) for a in arg) + "]"
        if isinstance(arg, slice):
            return "slice(%s, %s, %s)" % (get_repr(arg.start), get_repr(arg.stop),
                                          get_repr(arg.step))
        if isinstance(arg, ember.dtype):
            return "torch." + str(arg).split(".")[-1]
        return repr(arg)

    def format_args(args, kwargs):
        return ", ".join([get_repr(a) for a in args] +
                         ["%s = %s" % (k, get_repr(v)) for k, v in kwargs.items()])

    last_uses = {}
    seen = set()
    for node in reversed(nodes):
        for inp in node._input_nodes:
            if inp not in seen:
                seen.add(inp)
                last_uses.setdefault(node, []).append(inp)

    def delete_unused(user):
        if user.op == "placeholder":
            return
        if user.op == "output":
            body.append("\n")
            return
        dead = list(last_uses.get(user, []))
        if not user.users:
            dead.append(user)
        body.append(";  %s\n" % " = ".join([repr(n) for n in dead] + ["None"]) if dead else "\n")

    def type_repr(t):
        name = _type_repr(t)
        if getattr(builtins, name, None) is t or (name.startswith("torch.") and
                                                   _resolve(name) is t):
            return name
        return add_global(name, t)

    def emit(node):
        ann = "" if node.type is None else " : %s" % type_repr(node.type)
        if node.op == "placeholder":
            default = "" if not node.args else " = %s" % get_repr(node.args[0])
            free_vars.append("%s%s%s" % (node.target, ann, default))
            raw = node.target.replace("*", "")
            if raw != repr(node):
                body.append("%r = %s\n" % (node, raw))
        elif node.op == "call_method":
            body.append("%r%s = %s(%s)" % (node, ann, _format_target(get_repr(node.args[0]),
                                                                     node.target),
                                           format_args(node.args[1:], node.kwargs)))
        elif node.op == "call_function":
            t = node.target
            if getattr(t, "__module__", "") == "_operator" and t.__name__ in magic_methods:
                body.append("%r%s = %s" % (node, ann, magic_methods[t.__name__].format(
                    *(get_repr(a) for a in node.args))))
                return
            gname = add_global(_get_qualified_name(t), t)
            if gname == "getattr" and len(node.args) == 2 and isinstance(node.args[1], str) \
                    and node.args[1].isidentifier():
                body.append("%r%s = %s" % (node, ann, _format_target(get_repr(node.args[0]),
                                                                     node.args[1])))
                return
            body.append("%r%s = %s(%s)" % (node, ann, gname, format_args(node.args,
                                                                          node.kwargs)))
            if node.meta.get("is_wrapped", False):
                wrapped.setdefault(gname)
        elif node.op == "call_module":
            body.append("%r%s = %s(%s)" % (node, ann, _format_target(root_module, node.target),
                                           format_args(node.args, node.kwargs)))
        elif node.op == "get_attr":
            body.append("%r%s = %s" % (node, ann, _format_target(root_module, node.target)))
        elif node.op == "output":
            if node.type is not None:
                return_ann[0] = " -> %s" % type_repr(node.type)
            if type(codegen).generate_output is CodeGen.generate_output:
                body.append("return %s" % get_repr(node.args[0]))
            else:
                body.append(codegen.generate_output(node.args[0]))
        else:
            raise NotImplementedError("node: %s %s" % (node.op, node.target))

    prev_summary = None
    for node in nodes:
        if verbose and node.op not in ("placeholder", "output"):
            summary = "\n# No stacktrace found for following nodes\n"
            if summary != prev_summary:
                prev_summary = summary
                body.append(summary)
        emit(node)
        delete_unused(node)
    if not body:
        body.append("pass\n")
    wrap_stmts = ""
    if wrapped:
        wname = add_global("wrap", wrap)
        wrap_stmts = "\n".join('%s("%s")' % (wname, n) for n in wrapped)
    if codegen._body_transformer:
        body = codegen._body_transformer(body)
    for name, value in codegen.additional_globals():
        add_global(name, value)
    prologue = codegen.gen_fn_def(free_vars, return_ann[0])
    code = "".join(body).lstrip("\n")
    code = "\n".join("    " + line for line in code.split("\n"))
    src = "\n%s\n\n%s\n%s" % (wrap_stmts, prologue, code)
    return PythonCode(src, globals_)


def _resolve(qualified_name):
    """The object ``torch.a.b`` names in generated code (``torch`` is ember there)."""
    obj = _TORCH
    for part in qualified_name.split(".")[1:]:
        obj = getattr(obj, part, None)
    return obj


class _TorchC:
    """``torch._C._nn`` in generated code: ember's ``nn.functional``."""

    @property
    def _nn(self):
        import ember.nn.functional
        return ember.nn.functional


class _Torch:
    """``torch`` in generated code: ember, plus ``torch._C._nn``."""

    def __getattr__(self, name):
        import ember.nn.functional
        from .node import _F_TORCH
        if name in _F_TORCH:
            return getattr(ember.nn.functional, name)
        return _TORCH_C if name == "_C" else getattr(ember, name)


_TORCH_C = _TorchC()
_TORCH = _Torch()


_wrapped: list = []    # (globals dict, name) pairs registered by wrap()


def wrap(fn_or_name):
    """Register a module-level function to be recorded as one ``call_function`` Node instead
    of being traced through. Call it at module scope."""
    if callable(fn_or_name):
        name = fn_or_name.__name__
    elif isinstance(fn_or_name, str):
        name = fn_or_name
    else:
        raise AssertionError("Unsupported type for global function! Must be either a callable "
                             "or string name")
    frame = inspect.currentframe().f_back
    if frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped.append((frame.f_globals, name))
    return fn_or_name
