"""Minimal pytrees (tuples, lists, dicts, namedtuples) with torch's TreeSpec printing."""

_LEAF = None


class TreeSpec:
    """The structure of a pytree: a container type, its context (keys) and children."""

    __slots__ = ("type", "context", "children")

    def __init__(self, typ, context, children):
        self.type = typ
        self.context = context
        self.children = children

    def num_leaves(self):
        if self.type is _LEAF:
            return 1
        return sum(c.num_leaves() for c in self.children)

    def __eq__(self, other):
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (self.type is other.type and self.context == other.context
                and self.children == other.children)

    def __repr__(self, indent=0):
        if self.type is _LEAF:
            return "*"
        out = "TreeSpec(%s, %s, [" % (self.type.__name__, self.context)
        if self.children:
            indent += 2
            out += self.children[0].__repr__(indent)
            out += "," if len(self.children) > 1 else ""
            out += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self.children[1:])
        return out + "])"


LEAF_SPEC = TreeSpec(_LEAF, None, [])


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def tree_flatten(tree):
    """``(leaves, spec)`` for ``tree``; containers are tuple, list, dict and namedtuple."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves):
    if isinstance(tree, (tuple, list)):
        typ = type(tree) if _is_namedtuple(tree) else (tuple if isinstance(tree, tuple) else list)
        ctx = typ if _is_namedtuple(tree) else None
        return TreeSpec(typ, ctx, [_flatten(c, leaves) for c in tree])
    if isinstance(tree, dict):
        keys = list(tree)
        return TreeSpec(type(tree), keys, [_flatten(tree[k], leaves) for k in keys])
    leaves.append(tree)
    return LEAF_SPEC


def tree_unflatten(leaves, spec):
    """Rebuild the pytree ``spec`` describes from ``leaves`` (in flattening order)."""
    it = iter(leaves)
    return _build(spec, it)


def _build(spec, it):
    if spec.type is _LEAF:
        return next(it)
    children = [_build(c, it) for c in spec.children]
    if spec.type is tuple or spec.type is list:
        return spec.type(children)
    if issubclass(spec.type, tuple):
        return spec.type(*children)
    return spec.type(zip(spec.context, children))


def broadcast_prefix(prefix, tree, is_leaf_prefix):
    """Leaves of ``prefix`` repeated over the matching subtrees of ``tree`` (one per leaf of
    ``tree``); None when ``prefix`` is not a prefix of ``tree``'s structure."""
    out = []
    if _broadcast(prefix, tree, out, is_leaf_prefix):
        return out
    return None


def _broadcast(prefix, tree, out, is_leaf_prefix):
    if is_leaf_prefix(prefix):
        out.extend([prefix] * tree_flatten(tree)[1].num_leaves())
        return True
    pspec_children, tree_children = None, None
    if isinstance(prefix, (tuple, list)) and isinstance(tree, (tuple, list)):
        if (type(prefix) is not type(tree) and not (isinstance(prefix, tuple)
                                                     and isinstance(tree, tuple))):
            return False
        if len(prefix) != len(tree):
            return False
        pspec_children, tree_children = list(prefix), list(tree)
    elif isinstance(prefix, dict) and isinstance(tree, dict):
        if set(prefix) != set(tree):
            return False
        pspec_children = [prefix[k] for k in tree]
        tree_children = [tree[k] for k in tree]
    else:
        return False
    return all(_broadcast(p, t, out, is_leaf_prefix)
               for p, t in zip(pspec_children, tree_children))
