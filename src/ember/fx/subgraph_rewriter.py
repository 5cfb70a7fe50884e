"""``torch.fx.replace_pattern``: swap every match of a pattern function's graph for a
replacement function's graph."""
from typing import Any, NamedTuple

from .node import Node

__all__ = ["Match", "replace_pattern"]


class Match(NamedTuple):
    anchor: Any      # the pattern's output Node
    nodes_map: dict  # pattern Node -> graph Node


def _graph_of(fn):
    from ._symbolic_trace import symbolic_trace
    return fn if hasattr(fn, "graph") and not callable(getattr(fn, "graph")) and \
        not isinstance(fn, type) and hasattr(fn.graph, "nodes") else symbolic_trace(fn)


def _match(pn, gn, nodes_map):
    if pn in nodes_map:
        return nodes_map[pn] is gn
    if pn.op == "placeholder":
        nodes_map[pn] = gn
        return True
    if not isinstance(gn, Node) or pn.op != gn.op or pn.target != gn.target or \
            len(pn.args) != len(gn.args) or pn.kwargs.keys() != gn.kwargs.keys():
        return False
    nodes_map[pn] = gn
    pairs = list(zip(pn.args, gn.args)) + [(pn.kwargs[k], gn.kwargs[k]) for k in pn.kwargs]
    return all(_match_arg(a, b, nodes_map) for a, b in pairs)


def _match_arg(a, b, nodes_map):
    if isinstance(a, Node):
        return _match(a, b, nodes_map)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and \
            all(_match_arg(x, y, nodes_map) for x, y in zip(a, b))
    return not isinstance(b, Node) and a == b


def replace_pattern(gm, pattern, replacement):
    """Replace each non-overlapping match of ``pattern`` in ``gm``'s graph by
    ``replacement`` (functions or GraphModules of the same inputs); recompiles ``gm`` and
    returns the matches."""
    pattern_graph = _graph_of(pattern).graph
    replacement_graph = _graph_of(replacement).graph
    p_out = next(n for n in pattern_graph.nodes if n.op == "output")
    p_anchor = p_out.args[0]
    p_inputs = [n for n in pattern_graph.nodes if n.op == "placeholder"]
    graph = gm.graph
    matches, taken = [], set()
    for gn in list(graph.nodes):
        nodes_map = {}
        if gn.op in ("placeholder", "output") or not _match(p_anchor, gn, nodes_map):
            continue
        inner = [g for p, g in nodes_map.items() if p.op != "placeholder"]
        if any(g in taken for g in inner):
            continue
        if any(u not in inner for g in inner if g is not gn for u in g.users):
            continue
        taken.update(inner)
        matches.append(Match(p_anchor, nodes_map))
    for m in matches:
        val_map = {}
        r_inputs = [n for n in replacement_graph.nodes if n.op == "placeholder"]
        for rp, pp in zip(r_inputs, p_inputs):
            val_map[rp] = m.nodes_map[pp]
        anchor = m.nodes_map[p_anchor]
        first_user = next((n for n in graph.nodes if n in anchor.users), None)
        with graph.inserting_before(first_user or anchor):
            out = graph.graph_copy(replacement_graph, val_map)
        anchor.replace_all_uses_with(out)
        for pn in reversed(list(pattern_graph.nodes)):
            if pn.op not in ("placeholder", "output") and pn in m.nodes_map:
                graph.erase_node(m.nodes_map[pn])
    gm.recompile()
    return matches

