"""``torch.library``: user-defined operators, reachable as ``ember.ops.<ns>.<name>``.

``custom_op`` turns a typed Python function into an operator (schema inferred from its
annotations); ``register_autograd`` gives it a backward, ``register_fake`` a shape function
(checked by ``opcheck``), ``register_kernel`` a per-device implementation. ``Library`` is the
lower-level ``define``/``impl`` interface. There is one dispatch level: the kernel runs on
ember Tensors, inside an autograd ``Function`` when a backward is registered.

Example:
    >>> import ember
    >>> @custom_op("doc::scale", mutates_args=())
    ... def scale(x: ember.Tensor, k: float) -> ember.Tensor:
    ...     return x * k
    >>> def setup(ctx, inputs, output):
    ...     ctx.k = inputs[1]
    >>> scale.register_autograd(lambda ctx, g: (g * ctx.k, None), setup_context=setup)
    >>> x = ember.ones(2, requires_grad=True)
    >>> ember.ops.doc.scale(x, 3.0).sum().backward()
    >>> x.grad
    tensor([3., 3.])
"""
import collections.abc
import inspect
import re
import types
import typing
from typing import Any, Callable, Dict, List, Optional


from . import ops as _ops_package
from .autograd.function import Function
from .autograd.grad_mode import is_grad_enabled, no_grad
from .dtypes import dtype as _dtype
from .backend._device import device as _device
from .tensor import Tensor
from .utils import _pytree

__all__ = ["Library", "custom_op", "CustomOpDef", "define", "impl", "register_kernel",
           "register_fake", "register_autograd", "register_torch_dispatch", "infer_schema",
           "opcheck", "get_ctx"]

_OPS: Dict[str, "_OpEntry"] = {}     # "ns::name" -> its schema and registrations
_NAMESPACES: Dict[str, "_OpNamespace"] = {}
_DEFINED_NS = {"aten", "prim", "prims", "quantized", "_quantized", "torchvision"}


def _param_types() -> dict:
    base = [(Tensor, "Tensor", True, True, False), (int, "SymInt", True, False, True),
            (float, "float", True, False, True), (bool, "bool", True, False, True),
            (str, "str", False, False, False), (typing.Union[int, float, bool], "Scalar",
                                                 True, False, False),
            (_dtype, "ScalarType", False, False, False), (_device, "Device", False, False, False)]
    out: dict = {}
    for ty, name, seq, opt_seq, seq_opt in base:
        out[ty], out[typing.Optional[ty]] = name, name + "?"

        def seqs(t):
            return (typing.Sequence[t], typing.List[t], collections.abc.Sequence[t], list[t])
        for s in seqs(ty) if seq else ():
            out[s] = name + "[]"
        for s in seqs(typing.Optional[ty]) if opt_seq else ():
            out[s] = name + "?[]"
        for s in seqs(ty) if seq_opt else ():
            out[typing.Optional[s]] = name + "[]?"
    return out


SUPPORTED_PARAM_TYPES = _param_types()
SUPPORTED_RETURN_TYPES = {Tensor: "Tensor", typing.List[Tensor]: "Tensor[]",
                          list[Tensor]: "Tensor[]", int: "SymInt", float: "float", bool: "bool",
                          typing.Union[int, float, bool]: "Scalar"}


def infer_schema(prototype_function: Callable, /, *, mutates_args, op_name: Optional[str] = None,
                 tags=()) -> str:
    """The operator schema (``"(Tensor x, float y) -> Tensor"``) read from the annotations of
    ``prototype_function``; ``mutates_args`` names the Tensor arguments it writes to."""
    sig = inspect.signature(prototype_function)
    hints = typing.get_type_hints(prototype_function)

    def error_fn(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")
    if type(mutates_args) is not str:
        mutates_args = tuple(mutates_args)
    elif mutates_args != "unknown":
        raise ValueError("mutates_args must either be a sequence of the names of the arguments "
                         "that are mutated or the string 'unknown'. ")
    params, seen, kw_only = [], set(), False
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            error_fn("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind == param.KEYWORD_ONLY and not kw_only:
            params.append("*")
            kw_only = True
        if param.annotation is param.empty:
            error_fn(f"Parameter {name} must have a type annotation.")
        ann = hints.get(name, param.annotation)
        if ann not in SUPPORTED_PARAM_TYPES:
            error_fn(f"Parameter {name} has unsupported type {param.annotation}. "
                     f"The valid types are: {SUPPORTED_PARAM_TYPES.keys()}.")
        ty = SUPPORTED_PARAM_TYPES[ann]
        if mutates_args == "unknown" or name in mutates_args:
            if not ty.startswith("Tensor"):
                if mutates_args != "unknown":
                    error_fn(f"Parameter {name} is in mutable_args but only Tensors or "
                             "collections of Tensors can be mutated")
            else:
                ty = f"Tensor(a{idx}!){ty[len('Tensor'):]}"
        seen.add(name)
        if param.default is param.empty:
            params.append(f"{ty} {name}")
            continue
        d = param.default
        if d is None or isinstance(d, (int, float, bool)):
            default = str(d)
        elif isinstance(d, (str, _device)):
            default = f'"{d}"'
        elif isinstance(d, _dtype):
            default = str(d)[len("torch."):]
        else:
            error_fn(f"Parameter {name} has an unsupported default value type {type(d)}. "
                     "Please file an issue on GitHub so we can prioritize this.")
        params.append(f"{ty} {name}={default}")
    if mutates_args != "unknown" and set(mutates_args) - seen:
        error_fn(f"{set(mutates_args) - seen} in mutates_args were not found in the custom op's "
                 "signature. mutates_args should contain the names of all args that the custom "
                 "op mutates, or just the string 'unknown' if you don't know.")
    ret = _parse_return(hints.get("return", sig.return_annotation), error_fn)
    return f"{op_name or ''}({', '.join(params)}) -> {ret}"


def _parse_return(ann, error_fn) -> str:
    if ann is None or ann is type(None):
        return "()"
    if ann is inspect.Parameter.empty:
        error_fn("No return type annotation was provided. Please add one.")
    args = typing.get_args(ann) if typing.get_origin(ann) is tuple else None
    for a in args if args is not None else (ann,):
        if a not in SUPPORTED_RETURN_TYPES:
            error_fn(f"Return has unsupported type {ann}. "
                     f"The valid types are: {SUPPORTED_RETURN_TYPES}.")
    if args is None:
        return SUPPORTED_RETURN_TYPES[ann]
    out = ", ".join(SUPPORTED_RETURN_TYPES[a] for a in args)
    return "((" + out + "))" if len(args) == 1 else "(" + out + ")"


class _Arg:
    __slots__ = ("type", "name", "default", "kwarg_only", "mutable")

    def __init__(self, type, name, default, kwarg_only):
        self.type, self.name, self.default, self.kwarg_only = type, name, default, kwarg_only
        self.mutable = "!" in type


class FunctionSchema:
    """A parsed schema ``ns::name.overload(args) -> returns``; prints as torch's."""

    def __init__(self, text: str) -> None:
        self.text = text
        head, arrow, self.returns = text.partition(") -> ")
        name, paren, args = head.partition("(")
        if not arrow or not paren or not name.replace("::", "").replace(".", "").replace(
                "_", "a").isalnum():
            raise RuntimeError(f"expected a valid schema but got {text!r}")
        self.name, _, self.overload_name = name.partition(".")
        self.arguments: List[_Arg] = []
        kw_only = False
        for part in [p.strip() for p in args.split(",") if p.strip()]:
            if part == "*":
                kw_only = True
                continue
            decl, eq, default = part.partition("=")
            ty, _, arg_name = decl.strip().rpartition(" ")
            value = eval(default, {"True": True, "False": False, "None": None}) if eq else _NO
            self.arguments.append(_Arg(ty, arg_name, value, kw_only))

    def __str__(self) -> str:
        # (torch's C++ printer writes integral float defaults as ``2.``)
        return re.sub(r"(=-?\d+)\.0\b", r"\1.", self.text)

    __repr__ = __str__

    def is_mutable(self) -> bool:
        return any(a.mutable for a in self.arguments)


_NO = object()      # (an argument without a default)


class _OpEntry:
    """One operator's registrations."""

    def __init__(self, qualname: str, schema: FunctionSchema) -> None:
        self.qualname, self.schema = qualname, schema
        self.kernels: Dict[Optional[str], Callable] = {}   # device type (None: any) -> kernel
        self.fake: Optional[Callable] = None
        self.autograd: Optional[Callable] = None   # (a Library "Autograd" impl: replaces all)
        self.backward: Optional[Callable] = None
        self.setup_context: Optional[Callable] = None
        self.custom: Optional["CustomOpDef"] = None
        self.composite = False      # (kernel from CompositeImplicitAutograd: ops record grads)
        self.function: Optional[type] = None


class OpOverload:
    """``ember.ops.ns.name.default``: callable operator overload."""

    def __init__(self, entry: _OpEntry) -> None:
        self._entry = entry
        self._namespace, _, self._opname = entry.qualname.partition("::")
        self._overloadname = "default"
        self._schema = entry.schema

    def name(self) -> str:
        return self._entry.qualname

    def __repr__(self) -> str:
        return f"{self._namespace}.{self._opname}.{self._overloadname}"

    def __call__(self, *args, **kwargs):
        return _dispatch(self._entry, self, args, kwargs)


class OpOverloadPacket:
    """``ember.ops.ns.name``: the operator, its overloads as attributes."""

    def __init__(self, entry: _OpEntry) -> None:
        self._qualified_op_name = entry.qualname
        self.default = OpOverload(entry)

    def __repr__(self) -> str:
        return self._qualified_op_name.replace("::", ".")

    def overloads(self) -> List[str]:
        return ["default"]

    def __call__(self, *args, **kwargs):
        return self.default(*args, **kwargs)


class _OpNamespace(types.ModuleType):
    """``ember.ops.<ns>``: the operators defined in namespace ``ns``."""

    def __init__(self, ns: str) -> None:
        super().__init__("torch.ops." + ns)
        self.name = ns
        self.__file__ = "torch.ops"

    def __getattr__(self, op_name: str):
        entry = _OPS.get(self.name + "::" + op_name)
        if entry is None or op_name.startswith("__"):
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute "
                                 f"'{op_name}'")
        packet = OpOverloadPacket(entry)
        setattr(self, op_name, packet)
        return packet


def namespace(ns: str) -> _OpNamespace:
    """The ``ember.ops.<ns>`` object (``ember.ops`` forwards unknown names here)."""
    if ns not in _NAMESPACES:
        _NAMESPACES[ns] = _OpNamespace(ns)
    return _NAMESPACES[ns]


def _defined_namespace(ns: str):
    """``namespace(ns)`` once an operator of ``ns`` is defined, else None (``ember.ops`` then
    has no such attribute: tools probing module attributes, such as doctest, see none)."""
    prefix = ns + "::"
    return namespace(ns) if ns in _NAMESPACES or any(q.startswith(prefix) for q in _OPS) \
        else None


setattr(_ops_package, "_custom_namespace", _defined_namespace)


def _op_packet(qualname: str) -> OpOverloadPacket:
    ns, _, name = qualname.partition("::")
    return getattr(namespace(ns), name)


def _bind(entry: _OpEntry, args, kwargs):
    """(positional args with defaults filled, keyword-only args) per the schema."""
    pos, kw, args = [], {}, list(args)
    for a in entry.schema.arguments:
        if not a.kwarg_only and args:
            pos.append(args.pop(0))
            continue
        if a.name in kwargs:
            value = kwargs.pop(a.name)
        elif a.default is not _NO:
            value = a.default
        else:
            raise TypeError(f"{entry.qualname}() is missing value for argument '{a.name}'. "
                            f"Declaration: {entry.schema}")
        if a.kwarg_only:
            kw[a.name] = value
        else:
            pos.append(value)
    if args or kwargs:
        raise TypeError(f"{entry.qualname}() expected at most "
                        f"{len(entry.schema.arguments)} argument(s) but received "
                        f"{len(pos) + len(args) + len(kw) + len(kwargs)} argument(s). "
                        f"Declaration: {entry.schema}")
    return pos, kw


def _kernel(entry: _OpEntry, args) -> Callable:
    tensors = [t for t in _pytree.tree_leaves(args) if isinstance(t, Tensor)]
    dev = tensors[0].device.type if tensors else "cpu"
    kernel = entry.kernels.get(dev, entry.kernels.get(None))
    if kernel is None:
        raise NotImplementedError(
            f"Could not run '{entry.qualname}' with arguments from the '{dev.upper()}' backend. "
            "This could be because the operator doesn't exist for this backend.")
    return kernel


def _dispatch(entry: _OpEntry, op: OpOverload, args, kwargs):
    if entry.autograd is not None:
        return entry.autograd(*args, **kwargs)
    pos, kw = _bind(entry, args, kwargs)
    kernel = _kernel(entry, pos)
    if entry.custom is None and entry.backward is None:
        return kernel(*pos, **kw)
    leaves = _pytree.tree_leaves(pos)
    if is_grad_enabled() and any(isinstance(t, Tensor) and t.requires_grad for t in leaves):
        if entry.schema.is_mutable():
            return _check_outputs(entry, pos, _run_no_grad(entry, kernel, pos, kw))
        return _check_outputs(entry, pos, _function_for(entry, op).apply(pos, kw, kernel))
    return _check_outputs(entry, pos, _run_no_grad(entry, kernel, pos, kw))


def _run_no_grad(entry, kernel, pos, kw):
    with no_grad():
        out = kernel(*pos, **kw)
    for a, value in zip(entry.schema.arguments, pos + list(kw.values())):
        if a.mutable:
            for t in _pytree.tree_leaves(value):
                if isinstance(t, Tensor):
                    t._bump()
    return out


def _check_outputs(entry, pos, out):
    if entry.custom is not None:
        ins = {id(t) for t in _pytree.tree_leaves(pos) if isinstance(t, Tensor)}
        outs = [t for t in _pytree.tree_leaves(out) if isinstance(t, Tensor)]
        if any(id(t) in ins for t in outs) or len({id(t) for t in outs}) < len(outs):
            fn = entry.custom._init_fn
            raise RuntimeError(
                f"{entry.qualname.partition('::')[2]} (with implementation in "
                f"{inspect.getmodule(fn)}): The output of this custom operator (1) must not "
                "also be an input to this custom operator and (2) may not alias any inputs to "
                "this custom operator or other returns. The most common way to trigger this "
                "error is if we have y = custom_op(x) and y and x are the same Tensor. Please "
                "instead return a clone of the offending output tensor(s) (e.g. return "
                "x.clone()) or refactor the custom operator to not return y.")
    return out


def _not_list_of_tensor(tree) -> bool:
    if isinstance(tree, tuple):
        return False
    if isinstance(tree, list):
        return any(not isinstance(x, Tensor) for x in tree)
    return True


def _function_for(entry: _OpEntry, op: OpOverload):
    """The autograd Function (``GeneratedBackwardFor_<ns>_<name>_default``) of an operator;
    lists of Tensors are flattened in and out."""
    if entry.function is not None:
        return entry.function
    has_kw = any(a.kwarg_only for a in entry.schema.arguments)

    def forward(ctx, *flat):
        meta = flat[-1]
        args = _pytree.tree_unflatten(list(flat[:-1]), meta["in_spec"])
        result = meta["kernel"](*args, **meta["kw"])
        if entry.setup_context is not None:
            if has_kw:
                entry.setup_context(ctx=ctx, inputs=tuple(args), keyword_only_inputs=meta["kw"],
                                    output=result)
            else:
                entry.setup_context(ctx=ctx, inputs=tuple(args), output=result)
        meta["is_tuple"] = isinstance(result, tuple)
        flat_out, meta["out_spec"] = _pytree.tree_flatten(
            result if meta["is_tuple"] else (result,), _not_list_of_tensor)
        ctx._pt_metadata = meta
        return tuple(flat_out) if len(flat_out) != 1 else flat_out[0]

    def backward(ctx, *grads):
        if entry.backward is None:
            raise RuntimeError(f"Trying to backward through {op} but no autograd formula was "
                               "registered. Please use register_autograd to add one.")
        meta = ctx._pt_metadata
        grads = _pytree.tree_unflatten(list(grads), meta["out_spec"])
        needs = ctx.needs_input_grad
        try:
            ctx.needs_input_grad = _pytree.tree_unflatten(list(needs[:-1]), meta["in_spec"])
            result = entry.backward(ctx, *grads)
        finally:
            ctx.needs_input_grad = needs
        if not isinstance(result, tuple):
            result = (result,)
        flat, spec = _pytree.tree_flatten(result, lambda t: not isinstance(t, (tuple, list))
                                          or isinstance(t, list) and any(
                                              x is not None and not isinstance(x, Tensor)
                                              for x in t))
        if spec != meta["in_spec"]:
            raise RuntimeError("Expected the return from backward to be of the same structure "
                               f"as the inputs. Got: {spec} (return from backward), "
                               f"{meta['in_spec']} (inputs)")
        return tuple(flat) + (None,)

    _, _, name = entry.qualname.partition("::")
    ns = entry.qualname.partition("::")[0]
    generated = type(f"GeneratedBackwardFor_{ns}_{name}_default", (Function,),
                     {"forward": staticmethod(forward), "backward": staticmethod(backward)})

    class _Apply:
        @staticmethod
        def apply(pos, kw, kernel):
            flat, in_spec = _pytree.tree_flatten(tuple(pos), _not_list_of_tensor)
            meta = {"in_spec": in_spec, "kw": kw, "kernel": kernel}
            out = generated.apply(*flat, meta)
            out = list(out) if isinstance(out, tuple) else [out]
            result = _pytree.tree_unflatten(out, meta["out_spec"])
            return result if meta["is_tuple"] else result[0]
    entry.function = _Apply
    return _Apply


def _define(qualname: str, schema_text: str) -> _OpEntry:
    if qualname in _OPS:
        raise RuntimeError(
            f"Tried to register an operator ({qualname}{schema_text}) with the same name and "
            "overload name multiple times. Each overload's schema should only be registered "
            "with a single call to def(). Duplicate registration: registered at /dev/null:0. "
            "Original registration: registered at /dev/null:0")
    entry = _OpEntry(qualname, FunctionSchema(qualname + schema_text))
    _OPS[qualname] = entry
    return entry


def _entry_of(op) -> _OpEntry:
    if isinstance(op, CustomOpDef):
        return op._entry
    if isinstance(op, (OpOverload, OpOverloadPacket)):
        op = op._entry.qualname if isinstance(op, OpOverload) else op._qualified_op_name
    if not isinstance(op, str):
        raise ValueError(f"register(op): got unexpected type for op: {type(op)}")
    ns, _, name = op.partition("::")
    if op not in _OPS:
        raise AttributeError(f"'_OpNamespace' '{ns}' object has no attribute '{name}'")
    return _OPS[op]


class CustomOpDef:
    """What ``custom_op`` returns: call it to run the operator."""

    def __init__(self, namespace: str, name: str, schema: str, fn: Callable) -> None:
        self._namespace, self._name, self._init_fn = namespace, name, fn
        self._qualname = f"{namespace}::{name}"
        previous = _OPS.get(self._qualname)
        if previous is not None and previous.custom is not None:   # (torch overwrites it)
            del _OPS[self._qualname]
            _NAMESPACES.get(namespace, self).__dict__.pop(name, None)
        self._entry = _define(self._qualname, schema)
        self._entry.custom = self
        self._entry.kernels[None] = fn
        self._opoverload = _op_packet(self._qualname).default
        self.__doc__, self.__name__ = fn.__doc__, fn.__name__

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def register_kernel(self, device_types, fn: Optional[Callable] = None, /):
        """Use ``fn`` on the given device type(s) (``"cpu"``, ``"cuda"``)."""
        def inner(fn):
            for d in [device_types] if isinstance(device_types, str) or device_types is None \
                    else device_types:
                self._entry.kernels[d] = fn
            return fn
        return inner if fn is None else inner(fn)

    def register_fake(self, fn: Callable, /) -> Callable:
        """The shape/dtype function of the operator (``opcheck`` compares it with the op)."""
        self._entry.fake = fn
        return fn

    def register_autograd(self, backward: Callable, /, *,
                          setup_context: Optional[Callable] = None) -> None:
        """Make the operator differentiable: ``setup_context(ctx, inputs, output)`` saves what
        ``backward(ctx, *grads)`` needs; backward returns one gradient (or None) per input."""
        if self._entry.schema.is_mutable():
            raise RuntimeError(
                f"Cannot register autograd formula for non-functional operator {self} with "
                f"schema {self._entry.schema}. Please create a functional operator and register "
                "an autograd formula for that.")
        self._entry.backward, self._entry.setup_context = backward, setup_context

    def register_torch_dispatch(self, torch_dispatch_class, fn=None, /):
        raise NotImplementedError("ember has no __torch_dispatch__ modes; "
                                  "register_torch_dispatch is not supported")

    def register_vmap(self, func=None, /):
        raise NotImplementedError("ember's custom ops do not support register_vmap")


def custom_op(name: str, fn: Optional[Callable] = None, /, *, mutates_args, device_types=None,
              schema: Optional[str] = None):
    """Wrap ``fn`` (typed with Tensor/int/float/bool/... annotations) as operator
    ``"ns::name"``; usable as a decorator. ``mutates_args`` names the Tensor arguments ``fn``
    writes to (``()`` if none, ``"unknown"`` for all)."""
    def inner(fn):
        text = schema if schema is not None else infer_schema(fn, mutates_args=mutates_args)
        ns, opname = name.split("::")
        op = CustomOpDef(ns, opname, text, fn)
        if device_types is not None:
            del op._entry.kernels[None]
            op.register_kernel(device_types, fn)
        return op
    return inner if fn is None else inner(fn)


class Library:
    """A namespace to ``define`` operators in (``kind="DEF"``) or ``impl`` them
    (``"IMPL"``, ``"FRAGMENT"``)."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = "") -> None:
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if ns in _DEFINED_NS and kind == "DEF":
            raise RuntimeError(
                f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; "
                "please put all of your definitions in a single TORCH_LIBRARY block.  If you "
                "were trying to specify implementations, consider using TORCH_LIBRARY_IMPL "
                "(which can be duplicated).")
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._op_defs: set = set()

    def __repr__(self) -> str:
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema: str, alias_analysis: str = "", *, tags=()) -> str:
        """Declare an operator from its schema (``"name(Tensor x) -> Tensor"``); returns its
        name."""
        name, paren, rest = schema.partition("(")
        if not paren:
            raise RuntimeError(f"expected '(' in schema but found none:\n{schema}")
        qualname = name if "::" in name else f"{self.ns}::{name}"
        _define(qualname, "(" + rest)
        self._op_defs.add(qualname)
        return qualname.partition("::")[2]

    def impl(self, op_name, fn: Callable, dispatch_key: str = "", *, with_keyset: bool = False,
             allow_override: bool = False) -> None:
        """Register ``fn`` as the kernel of ``op_name`` for ``dispatch_key`` (``"CPU"``,
        ``"CUDA"``, ``"CompositeImplicitAutograd"``, ``"Autograd"``, ``"Meta"`` ...)."""
        if isinstance(op_name, OpOverload):
            op_name = op_name._entry.qualname
        qualname = op_name if "::" in op_name else f"{self.ns}::{op_name}"
        entry = _entry_of(qualname)
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        if key == "Meta":
            entry.fake = fn
        elif key.startswith("Autograd"):
            entry.autograd = fn
        else:
            device = {"CPU": "cpu", "CUDA": "cuda"}.get(key)
            entry.kernels[device] = fn
            entry.composite = device is None

    def _destroy(self) -> None:
        for q in self._op_defs:
            _OPS.pop(q, None)
        self._op_defs.clear()


def define(qualname: str, schema: str, *, lib: Optional[Library] = None, tags=()) -> None:
    """Declare operator ``"ns::name"`` with ``schema`` (``"(Tensor x) -> Tensor"``)."""
    ns, _, name = qualname.partition("::")
    (lib or Library(ns, "FRAGMENT")).define(name + schema, tags=tags)


def impl(qualname, types, func: Optional[Callable] = None, *, lib: Optional[Library] = None):
    """Register a kernel: ``impl("ns::name", "cpu")(fn)``, or ``impl(lib, "name", key)(fn)``."""
    if isinstance(qualname, Library):
        library, name, key = qualname, types, func or ""

        def legacy(fn):
            library.impl(name, fn, key)
            return fn
        return legacy
    keys = [types] if isinstance(types, str) else list(types)

    def inner(fn):
        library = lib or Library(qualname.partition("::")[0], "FRAGMENT")
        for k in keys:
            library.impl(qualname, fn, {"cpu": "CPU", "cuda": "CUDA", "default":
                                        "CompositeExplicitAutograd"}.get(k, k))
        return fn
    return inner if func is None else inner(func)


def register_kernel(op, device_types, func: Optional[Callable] = None, /, *, lib=None):
    """``op``'s implementation on ``device_types``."""
    entry = _entry_of(op)
    if entry.custom is not None:
        return entry.custom.register_kernel(device_types, func)

    def inner(fn):
        for d in [device_types] if isinstance(device_types, str) else device_types:
            entry.kernels[d] = fn
        return fn
    return inner if func is None else inner(func)


def register_fake(op, func: Optional[Callable] = None, /, *, lib=None, _stacklevel: int = 1,
                  allow_override: bool = False):
    """``op``'s fake (shape and dtype) implementation; usable as a decorator."""
    entry = _entry_of(op)

    def inner(fn):
        entry.fake = fn
        return fn
    return inner if func is None else inner(func)


def register_autograd(op, backward: Callable, /, *, setup_context: Optional[Callable] = None,
                      lib=None) -> None:
    """``op``'s backward (see ``CustomOpDef.register_autograd``)."""
    entry = _entry_of(op)
    if entry.custom is not None:
        return entry.custom.register_autograd(backward, setup_context=setup_context)
    if entry.schema.is_mutable():
        raise RuntimeError(
            f"Cannot register autograd formula for non-functional operator {op} with schema "
            f"{entry.schema}. Please create a functional operator and register an autograd "
            "formula for that.")
    entry.backward, entry.setup_context = backward, setup_context
    return None


def register_torch_dispatch(op, torch_dispatch_class, func=None, /, *, lib=None):
    raise NotImplementedError("ember has no __torch_dispatch__ modes; "
                              "register_torch_dispatch is not supported")


def get_ctx():
    raise NotImplementedError("ember's fake implementations run without a FakeTensor context")


class OpCheckError(Exception):
    """An ``opcheck`` test failed."""


def _clone(tree):
    return _pytree.tree_map_only(Tensor, lambda t: t.detach().clone().requires_grad_(
        t.requires_grad), tree)


def opcheck(op, args, kwargs=None, *, test_utils=("test_schema", "test_autograd_registration",
                                                  "test_faketensor", "test_aot_dispatch_dynamic"),
            raise_exception: bool = True, atol=None, rtol=None) -> Dict[str, Any]:
    """Check an operator on sample inputs (a subset of torch's checks): ``test_schema``
    (only declared arguments change), ``test_autograd_registration``, ``test_faketensor`` (the
    fake impl gives the op's shapes and dtypes) and ``test_aot_dispatch_dynamic`` (backward
    runs). Returns ``{test: "SUCCESS" or the exception}``."""
    entry = _entry_of(op)
    kwargs = kwargs or {}
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    name = entry.custom.__name__ if entry.custom is not None else entry.qualname

    def no_fake():
        if entry.fake is None:
            raise RuntimeError(
                f"There was no fake impl registered for {entry.custom or op}. This is necessary "
                "for torch.compile/export/fx tracing to work. Please use "
                f"`{name}.register_fake` to add an fake impl.")

    def test_schema():
        a = _clone(args)
        before = _clone(a)
        _dispatch(entry, OpOverload(entry), a, dict(kwargs))
        pos, _ = _bind(entry, a, dict(kwargs))
        old, _ = _bind(entry, before, dict(kwargs))
        for arg, new_v, old_v in zip(entry.schema.arguments, pos, old):
            for t_new, t_old in zip(_pytree.tree_leaves(new_v), _pytree.tree_leaves(old_v)):
                if isinstance(t_new, Tensor) and not arg.mutable and not bool(
                        (t_new.detach() == t_old.detach()).all() | t_new.isnan().all()):
                    raise OpCheckError(f"{entry.qualname}: argument {arg.name} is not defined "
                                       "as mutable but was mutated")

    def test_autograd_registration():
        if entry.custom is None and entry.backward is None and not entry.composite \
                and entry.autograd is None and any(
                    isinstance(t, Tensor) and t.requires_grad
                    for t in _pytree.tree_leaves(args)):
            raise AssertionError(
                f"{entry.qualname}: at least one input tensor requires grad but the operator "
                "has a kernel registered to a backend dispatch key and no autograd kernel.")

    def test_faketensor():
        no_fake()
        with no_grad():
            real = _dispatch(entry, OpOverload(entry), _clone(args), dict(kwargs))
            fake = entry.fake(*_clone(args), **kwargs)
        for r, f in zip(_pytree.tree_leaves(real), _pytree.tree_leaves(fake)):
            if isinstance(r, Tensor) and (r.shape != f.shape or r.dtype != f.dtype):
                raise OpCheckError(f"{entry.qualname}: fake impl gave {f.shape} {f.dtype}, "
                                   f"the op {r.shape} {r.dtype}")

    def test_aot_dispatch_dynamic():
        no_fake()
        a = _clone(args)
        out = _dispatch(entry, OpOverload(entry), a, dict(kwargs))
        outs = [t for t in _pytree.tree_leaves(out) if isinstance(t, Tensor) and t.requires_grad]
        if outs:
            from .autograd import backward
            backward(outs, [t.detach() * 0 + 1 for t in outs])

    tests = {"test_schema": test_schema, "test_autograd_registration":
             test_autograd_registration, "test_faketensor": test_faketensor,
             "test_aot_dispatch_dynamic": test_aot_dispatch_dynamic}
    results: Dict[str, Any] = {}
    for t in test_utils:
        try:
            tests[t]()
            results[t] = "SUCCESS"
        except Exception as e:
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {t} failed with {e} (scroll up for stack "
                                   "trace)") from e
            results[t] = e
    return results



