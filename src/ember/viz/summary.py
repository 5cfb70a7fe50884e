"""summary: a text table of a graph's nodes and the bytes their saved tensors hold."""
from ._graph import walk

__all__ = ["summary", "saved_bytes"]


def _fmt_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return ("%d %s" % (n, unit)) if unit == "B" else ("%.1f %s" % (n, unit))
        n /= 1024.0
    return str(n)


def saved_bytes(output):
    """Bytes held by the tensors saved for backward in ``output``'s graph (each array once)."""
    seen = {}
    for n in walk(output).nodes:
        for s in n["saved"]:
            if not s["none"] and s["array_id"] is not None:
                seen[s["array_id"]] = s["bytes"]
    return sum(seen.values())


def summary(output, params=None):
    """A text table: one row per node (traversal order) with its saved tensors and their bytes.

    The total counts each saved array once, even when several nodes saved it.

    Example:
        >>> import ember
        >>> x = ember.ones(4, requires_grad=True)
        >>> print(summary((x * x).sum(), params={"x": x}))  # doctest: +NORMALIZE_WHITESPACE
        id   node            saved                           bytes
        n0   SumBackward0    -                               0
        n1   MulBackward0    (4,) float32 v0, (4,) float32 v0 32
        n2   AccumulateGrad  x (4,) float32                  0
        total saved: 16 B in 1 array(s) (32 B counted per node)
    """
    rec = walk(output, params)
    rows = []
    unique = {}
    per_node_total = 0
    for n in rec.nodes:
        if n["kind"] == "output":
            continue
        if n["kind"] == "leaf":
            what = ((n["param"] + " ") if n["param"] else "") + n["shape"] + " " + n["dtype"]
            rows.append((n["id"], n["name"], what, 0))
            continue
        parts = []
        total = 0
        for s in n["saved"]:
            if s["none"]:
                parts.append("None")
                continue
            text = "%s %s v%d" % (s["shape"], s["dtype"], s["version"])
            if s["stale"]:
                text += " STALE(v%d)" % s["current"]
            parts.append(text)
            total += s["bytes"]
            if s["array_id"] is not None:
                unique[s["array_id"]] = s["bytes"]
        what = ", ".join(parts) if parts else ("freed" if n["freed"] else "-")
        rows.append((n["id"], n["name"], what, total))
        per_node_total += total
    w_id = max([2] + [len(r[0]) for r in rows])
    w_name = max([4] + [len(r[1]) for r in rows])
    w_what = max([5] + [len(r[2]) for r in rows])
    fmt = "%%-%ds  %%-%ds  %%-%ds %%s" % (w_id, w_name, w_what)
    lines = [fmt % ("id", "node", "saved", "bytes")]
    for r in rows:
        lines.append(fmt % (r[0], r[1], r[2], r[3]))
    lines.append("total saved: %s in %d array(s) (%s counted per node)"
                 % (_fmt_bytes(sum(unique.values())), len(unique), _fmt_bytes(per_node_total)))
    return "\n".join(line.rstrip() for line in lines)
