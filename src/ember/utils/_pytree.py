"""``torch.utils._pytree``: flatten nested containers to a list of leaves and back.

Nodes are lists, tuples, dicts, namedtuples, ``OrderedDict``, ``defaultdict``, ``deque`` and the
types given to ``register_pytree_node``; everything else (``None`` included) is a leaf.

Example:
    >>> leaves, spec = tree_flatten({"a": [1, 2], "b": 3})
    >>> leaves
    [1, 2, 3]
    >>> tree_unflatten([x * 10 for x in leaves], spec)
    {'a': [10, 20], 'b': 30}
"""
from collections import OrderedDict, defaultdict, deque, namedtuple
from typing import Any, Callable, List, NamedTuple, Optional, Tuple

__all__ = ["PyTree", "Context", "TreeSpec", "LeafSpec", "register_pytree_node", "tree_flatten",
           "tree_unflatten", "tree_iter", "tree_leaves", "tree_structure", "tree_map",
           "tree_map_", "tree_map_only", "tree_map_only_", "tree_all", "tree_any",
           "tree_all_only", "tree_any_only", "tree_is_leaf", "treespec_leaf"]

PyTree = Any
Context = Any


class NodeDef(NamedTuple):
    """How one node type flattens (``children, context``) and unflattens."""
    type: Any
    flatten_fn: Callable
    unflatten_fn: Callable


SUPPORTED_NODES: dict = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                         to_dumpable_context=None, from_dumpable_context=None,
                         flatten_with_keys_fn=None) -> None:
    """Make ``cls`` a node: ``flatten_fn(x) -> (children, context)``,
    ``unflatten_fn(children, context) -> x``."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn)


def _dict_unflatten(values, context):
    return dict(zip(context, values))


def _defaultdict_unflatten(values, context):
    return defaultdict(context[0], zip(context[1], values))


for _cls, _flat, _unflat in [
        (tuple, lambda t: (list(t), None), lambda v, c: tuple(v)),
        (list, lambda t: (list(t), None), lambda v, c: list(v)),
        (dict, lambda d: (list(d.values()), list(d.keys())), _dict_unflatten),
        (namedtuple, lambda t: (list(t), type(t)), lambda v, c: c(*v)),
        (OrderedDict, lambda d: (list(d.values()), list(d.keys())),
         lambda v, c: OrderedDict(zip(c, v))),
        (defaultdict, lambda d: (list(d.values()), [d.default_factory, list(d.keys())]),
         _defaultdict_unflatten),
        (deque, lambda d: (list(d), d.maxlen), lambda v, c: deque(v, maxlen=c))]:
    register_pytree_node(_cls, _flat, _unflat)
BUILTIN_TYPES = frozenset(SUPPORTED_NODES)
_DICT_TYPES = (dict, OrderedDict, defaultdict)


def _is_namedtuple_class(cls) -> bool:
    fields = getattr(cls, "_fields", None)
    return (isinstance(cls, type) and issubclass(cls, tuple) and isinstance(fields, tuple)
            and all(type(f) is str for f in fields) and callable(getattr(cls, "_make", None)))


def _get_node_type(tree):
    cls = type(tree)
    if cls not in SUPPORTED_NODES and _is_namedtuple_class(cls):
        return namedtuple
    return cls


def tree_is_leaf(tree: PyTree, is_leaf: Optional[Callable] = None) -> bool:
    """Whether ``tree`` is a leaf (not a registered node, or ``is_leaf(tree)``)."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _get_node_type(tree) not in SUPPORTED_NODES


class TreeSpec:
    """The structure of a pytree: node ``type``, its ``context`` and one spec per child."""
    __slots__ = ("type", "_context", "_children", "num_nodes", "num_leaves", "num_children")

    def __init__(self, type: Any, context: Context, children_specs: List["TreeSpec"]) -> None:
        self.type, self._context, self._children = type, context, children_specs
        self.num_children: int = len(children_specs)
        self.num_nodes: int = 1 + sum(c.num_nodes for c in children_specs)
        self.num_leaves: int = sum(c.num_leaves for c in children_specs)

    def __repr__(self, indent: int = 0) -> str:
        inner = ""
        if self.num_children > 0:
            indent += 2
            parts = [c.__repr__(indent) for c in self._children]
            inner = parts[0] + ("," if len(parts) > 1 else "") + ",".join(
                "\n" + " " * indent + p for p in parts[1:])
        return f"TreeSpec({self.type.__name__}, {self._context}, [{inner}])"

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (str(self.type) == str(other.type) and self._context == other._context
                and self._children == other._children)

    def __hash__(self) -> int:
        ctx = self._context
        if self.type is defaultdict:
            ctx = (ctx[0], tuple(ctx[1]))
        elif self.type in (dict, OrderedDict):
            ctx = tuple(ctx)
        elif self.type is not None and self.type not in BUILTIN_TYPES:
            ctx = None      # (user contexts may be unhashable)
        return hash((self.type, ctx, tuple(self._children)))

    @property
    def context(self) -> Context:
        return self._context

    @property
    def children_specs(self) -> List["TreeSpec"]:
        return self._children

    def is_leaf(self) -> bool:
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self) -> List["TreeSpec"]:
        return list(self._children)

    def child(self, index: int) -> "TreeSpec":
        return self._children[index]

    def flatten_up_to(self, tree: PyTree) -> List[PyTree]:
        """The subtrees of ``tree`` at this spec's leaves (``tree`` must have its structure)."""
        out: List[PyTree] = []
        stack = [(self, tree)]
        while stack:
            spec, node = stack.pop()
            if spec.is_leaf():
                out.append(node)
                continue
            stack.extend(reversed(list(zip(spec._children, spec._match(node)))))
        return out

    def _match(self, node) -> list:
        node_type = _get_node_type(node)
        both_dicts = self.type in _DICT_TYPES and node_type in _DICT_TYPES
        if self.type not in BUILTIN_TYPES or not both_dicts:
            if node_type != self.type:
                raise ValueError(f"Node type mismatch; expected {self.type!r}, "
                                 f"but got {node_type!r}.")
            children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
            if len(children) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, "
                                 f"but got {len(children)}.")
            if self.type not in BUILTIN_TYPES and context != self._context:
                raise ValueError(f"Node context mismatch for custom node type {self.type!r}.")
            if self.type in BUILTIN_TYPES and node_type is not deque and context != self._context:
                raise ValueError(f"Node context mismatch for node type {self.type!r}; "
                                 f"expected {self._context!r}, but got {context!r}.")
            return children
        if len(node) != self.num_children:
            raise ValueError(f"Node arity mismatch; expected {self.num_children}, "
                             f"but got {len(node)}.")
        keys = self._context[1] if self.type is defaultdict else self._context
        if set(node) != set(keys):
            missing, extra = set(keys) - set(node), set(node) - set(keys)
            msg = (f"; missing key(s): {missing}" if missing else "") + (
                f"; extra key(s): {extra}" if extra else "")
            raise ValueError(f"Node keys mismatch{msg}.")
        return [node[k] for k in keys]

    def unflatten(self, leaves) -> PyTree:
        """Rebuild the pytree from ``leaves``."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(
                f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec "
                f"refers to a pytree that holds {self.num_leaves} items ({self}).")
        if self.is_leaf():
            return leaves[0]
        start, children = 0, []
        for child in self._children:
            children.append(child.unflatten(leaves[start:start + child.num_leaves]))
            start += child.num_leaves
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self._context)


class LeafSpec(TreeSpec):
    """The spec of a leaf; prints as ``*``."""
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(None, None, [])
        self.num_leaves = 1

    def __repr__(self, indent: int = 0) -> str:
        return "*"


_LEAF_SPEC = LeafSpec()


def treespec_leaf() -> LeafSpec:
    """The spec of a leaf."""
    return _LEAF_SPEC


def tree_flatten(tree: PyTree, is_leaf: Optional[Callable] = None) -> Tuple[list, TreeSpec]:
    """``(leaves, spec)``: the leaves in order and the structure to rebuild ``tree``."""
    leaves: list = []

    def helper(node) -> TreeSpec:
        if tree_is_leaf(node, is_leaf):
            leaves.append(node)
            return _LEAF_SPEC
        node_type = _get_node_type(node)
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        return TreeSpec(node_type, context, [helper(c) for c in children])
    return leaves, helper(tree)


def tree_unflatten(leaves, treespec: TreeSpec) -> PyTree:
    """The pytree of structure ``treespec`` holding ``leaves``."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance "
                        f"of TreeSpec but got item of type {type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_iter(tree: PyTree, is_leaf: Optional[Callable] = None):
    """The leaves of ``tree``, lazily."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if tree_is_leaf(node, is_leaf):
            yield node
        else:
            children, _ = SUPPORTED_NODES[_get_node_type(node)].flatten_fn(node)
            stack.extend(reversed(children))


def tree_leaves(tree: PyTree, is_leaf: Optional[Callable] = None) -> list:
    """The leaves of ``tree`` in flattening order."""
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree: PyTree, is_leaf: Optional[Callable] = None) -> TreeSpec:
    """The ``TreeSpec`` of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func: Callable, tree: PyTree, *rests: PyTree,
             is_leaf: Optional[Callable] = None) -> PyTree:
    """A tree of ``tree``'s structure holding ``func(leaf, *matching leaves of rests)``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, *flat))


def tree_map_(func: Callable, tree: PyTree, *rests: PyTree,
              is_leaf: Optional[Callable] = None) -> PyTree:
    """Call ``func`` on every leaf for its side effects; returns ``tree``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    for args in zip(*flat):
        func(*args)
    return tree


def _only(type_or_types_or_pred, func: Callable) -> Callable:
    if isinstance(type_or_types_or_pred, (type, tuple)):
        types = type_or_types_or_pred

        def pred(x):
            return isinstance(x, types)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")
    return lambda x: func(x) if pred(x) else x


def tree_map_only(type_or_types_or_pred, func: Callable, tree: PyTree,
                  is_leaf: Optional[Callable] = None) -> PyTree:
    """``tree_map`` applying ``func`` only to leaves of the given type(s) (or passing pred)."""
    return tree_map(_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, func: Callable, tree: PyTree,
                   is_leaf: Optional[Callable] = None) -> PyTree:
    """``tree_map_`` on the leaves of the given type(s) only."""
    return tree_map_(_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_all(pred: Callable, tree: PyTree, is_leaf: Optional[Callable] = None) -> bool:
    """Whether ``pred`` holds for every leaf."""
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred: Callable, tree: PyTree, is_leaf: Optional[Callable] = None) -> bool:
    """Whether ``pred`` holds for some leaf."""
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(types, pred: Callable, tree: PyTree,
                  is_leaf: Optional[Callable] = None) -> bool:
    """Whether ``pred`` holds for every leaf that is an instance of ``types``."""
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, types))


def tree_any_only(types, pred: Callable, tree: PyTree,
                  is_leaf: Optional[Callable] = None) -> bool:
    """Whether ``pred`` holds for some leaf that is an instance of ``types``."""
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, types))
