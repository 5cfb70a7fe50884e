"""make_dot: the backward graph as Graphviz DOT text (rendering needs the optional graphviz)."""
from ._graph import walk

__all__ = ["make_dot", "Digraph"]

_INSTALL = ("rendering a graph needs the graphviz Python package and the Graphviz 'dot' program: "
            "pip install ember[viz] (or pip install graphviz) and apt-get install graphviz "
            "(brew install graphviz on macOS). The DOT text itself is in .source.")


def _quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class Digraph:
    """DOT text of a graph: ``.source`` (also ``str()``), ``.render()`` and ``.pipe()``.

    A small stand-in for ``graphviz.Digraph`` so that making the text needs no dependency.
    """

    def __init__(self, source, record=None):
        self.source = source
        self.record = record

    def __str__(self):
        return self.source

    def __repr__(self):
        return "<ember.viz.Digraph with %d nodes>" % (len(self.record.nodes) if self.record
                                                      else 0)

    def _graphviz(self):
        try:
            import graphviz
        except ImportError:
            raise RuntimeError(_INSTALL) from None
        return graphviz

    def pipe(self, format="svg"):
        """Rendered bytes (``format`` = 'svg', 'png', 'pdf' ...)."""
        graphviz = self._graphviz()
        try:
            return graphviz.Source(self.source).pipe(format=format)
        except graphviz.ExecutableNotFound:
            raise RuntimeError(_INSTALL) from None

    def render(self, filename="graph", format="svg", cleanup=True, view=False):
        """Write ``filename.<format>`` with Graphviz and return its path."""
        graphviz = self._graphviz()
        try:
            return graphviz.Source(self.source).render(filename, format=format, cleanup=cleanup,
                                                       view=view)
        except graphviz.ExecutableNotFound:
            raise RuntimeError(_INSTALL) from None

    def _repr_svg_(self):
        return self.pipe("svg").decode("utf-8")


def _saved_label(s):
    if s["none"]:
        return "saved[%d]: None" % s["index"]
    text = "saved[%d]%s: %s %s v%d" % (s["index"], " (output)" if s["is_output"] else "",
                                       s["shape"], s["dtype"], s["version"])
    if s["stale"]:
        text += "\nSTALE: now v%d" % s["current"]
    return text


def _fn_label(n, show_attrs):
    lines = [n["name"]]
    if n["needs_input_grad"] is not None and len(n["needs_input_grad"]) > 1:
        lines.append("needs_input_grad=" + "".join("T" if b else "F"
                                                  for b in n["needs_input_grad"]))
    if n["freed"]:
        lines.append("(buffers freed by backward)")
    if n["hooks"]:
        lines.append("hooks: %d" % n["hooks"])
    for t in n["ctx_tensors"]:
        lines.append("ctx.%s: tensor %s %s (not saved_for_backward!)"
                     % (t["name"], t["shape"], t["dtype"]))
    if show_attrs:
        for v in n["ctx_values"]:
            lines.append("ctx.%s = %s" % (v["name"], v["value"]))
    return "\n".join(lines)


def legend_lines(nodes, show_saved=True):
    """What the colours, ``vN`` and the edge numbers mean, for the graph made of ``nodes``."""
    lines = ["green box: the output (shape, dtype)",
             "blue box: a leaf tensor; its gradient is accumulated into .grad (AccumulateGrad)",
             "grey box: a backward node (grad_fn), named as in PyTorch",
             "edge number i: the node's input i (its next_functions[i])",
             "arrows point the way the forward ran; backward walks them in reverse"]
    saved = show_saved and any(n["saved"] for n in nodes)
    if saved:
        lines.append("orange box: a tensor saved for backward; vN = its version counter when "
                     "saved")
    if any(s.get("stale") for n in nodes for s in n["saved"]):
        lines.append("red: modified in place after it was saved (now vM): backward will fail")
    if any(n["freed"] for n in nodes):
        lines.append("dashed box: a node whose saved tensors backward has freed")
    if any(n["ctx_tensors"] for n in nodes):
        lines.append("red border: a Function keeping tensors on ctx (use save_for_backward)")
    if any(n["needs_input_grad"] and len(n["needs_input_grad"]) > 1 for n in nodes):
        lines.append("needs_input_grad=TF: T where that input needs a gradient")
    return lines


def _legend_dot(nodes, show_saved):
    text = "".join(line.replace("\\", "\\\\").replace('"', '\\"') + "\\l"
                   for line in ["legend"] + legend_lines(nodes, show_saved))
    return ["\tsubgraph cluster_legend {",
            "\t\tgraph [color=lightgrey style=dashed]",
            '\t\tlegend [label="%s" fillcolor=white shape=note]' % text,
            "\t}"]


def make_dot(var, params=None, show_attrs=False, show_saved=False, max_attr_chars=50,
             legend=True):
    """The backward graph of ``var`` as DOT text, in the style of torchviz.

    One box per ``grad_fn`` (torch's names, e.g. ``MulBackward0``), edges as
    ``next_functions`` (labelled with the input index when a node has several inputs, so
    the two inputs of ``y * y`` are two separate edges), blue
    leaves (``AccumulateGrad``) labelled with their name in ``params`` and shape, the green
    output, and with ``show_saved`` one orange box per saved tensor (shape, dtype, version;
    red when modified in place since it was saved). Nodes whose buffers a backward freed are
    grey and dashed; ``show_attrs`` adds the non-tensor ctx attributes of your own Functions.
    A legend box explains the colours, ``vN`` and the edge numbers. Node ids follow the
    traversal, so the text is the same on every run.

    Args:
        var: an output Tensor, or a tuple of them.
        params: dict of name -> Tensor (e.g. ``dict(model.named_parameters())``).
        show_attrs: list plain ctx attributes of each node.
        show_saved: draw the tensors saved for backward.
        max_attr_chars: kept for torchviz compatibility.
        legend: add a box saying what the colours, versions and edge numbers mean.

    Returns:
        A :class:`Digraph` (``.source`` is the DOT text, ``.render()`` draws it).

    Example:
        >>> import ember
        >>> x = ember.ones(2, requires_grad=True)
        >>> print(make_dot((x * 2).sum(), params={"x": x}).source)  # doctest: +ELLIPSIS
        digraph {
        ...
    """
    rec = walk(var, params)
    lines = ["digraph {",
             '\tgraph [size="12,12"]',
             "\tnode [align=left fontname=monospace fontsize=10 height=0.2 ranksep=0.1 "
             "shape=box style=filled]"]
    multi = {}
    for src, _dst, _lab in rec.edges:
        multi[src] = multi.get(src, 0) + 1
    for n in rec.nodes:
        if n["kind"] == "output":
            label = "%s\n%s %s" % (n["name"], n["shape"], n["dtype"])
            lines.append("\t%s [label=%s fillcolor=darkolivegreen1]" % (n["id"], _quote(label)))
        elif n["kind"] == "leaf":
            label = (n["param"] + "\n" if n["param"] else "") + n["shape"] + " " + n["dtype"]
            if n["hooks"]:
                label += "\nhooks: %d" % n["hooks"]
            lines.append("\t%s [label=%s fillcolor=lightblue]" % (n["id"], _quote(label)))
        else:
            style = ' fillcolor=lightgrey style="filled,dashed"' if n["freed"] else \
                " fillcolor=lightgrey"
            if n["ctx_tensors"]:
                style += " color=red"
            lines.append("\t%s [label=%s%s]" % (n["id"], _quote(_fn_label(n, show_attrs)),
                                                style))
            if show_saved:
                for s in n["saved"]:
                    sid = "%s_s%d" % (n["id"], s["index"])
                    color = "red" if s.get("stale") else "orange"
                    lines.append("\t%s [label=%s fillcolor=%s]" % (sid, _quote(_saved_label(s)),
                                                                   color))
                    lines.append("\t%s -> %s [dir=none style=dashed]" % (sid, n["id"]))
    for src, dst, lab in rec.edges:
        # Drawn like torchviz: from the input's gradient node to its consumer.
        if lab and multi.get(src, 0) > 1:
            lines.append("\t%s -> %s [label=%s]" % (dst, src, lab))
        else:
            lines.append("\t%s -> %s" % (dst, src))
    if legend:
        lines.extend(_legend_dot(rec.nodes, show_saved))
    lines.append("}")
    return Digraph("\n".join(lines) + "\n", rec)
