"""to_html: one self-contained HTML page (inline SVG, CSS, JS) showing the backward graph.

The layout is computed here, in Python (layers by longest path, order by barycenter sweeps),
so the page needs no JavaScript library, no server and no network.
"""
import collections
import html as _html
import json

from ._graph import walk
from .dot import _saved_label, legend_lines

__all__ = ["to_html", "layout"]

_CHAR_W = 7.2
_LINE_H = 15
_GAP_X = 28
_GAP_Y = 60
_DUMMY_W = 12
_COLORS = {"output": "#caff70", "leaf": "#add8e6", "fn": "#e4e4e4"}


def _lines(n):
    if n["kind"] == "output":
        return [n["name"], "%s %s" % (n["shape"], n["dtype"])]
    if n["kind"] == "leaf":
        return ([n["param"]] if n["param"] else []) + ["%s %s" % (n["shape"], n["dtype"])]
    lines = [n["name"]]
    if n["saved"]:
        size = sum(s.get("bytes", 0) for s in n["saved"] if not s["none"])
        lines.append("saved: %d (%d B)" % (len(n["saved"]), size))
    if n["freed"]:
        lines.append("freed")
    return lines


def layout(nodes, edges):
    """A layered drawing of the graph, the output at the bottom.

    Ranks are longest paths from the outputs; an edge that spans several ranks gets one
    virtual point per rank crossed (so it is routed around the boxes); each rank is ordered
    by a few barycenter sweeps.

    Returns:
        ``(pos, routes)``: ``pos[id] = (x, y, w, h)`` for every node, and ``routes[k]`` the
        list of ``(x, y_top, y_bottom)`` passages of edge ``k``, from its input's side down.
    """
    ids = [n["id"] for n in nodes]
    children = {i: [] for i in ids}
    parents = {i: [] for i in ids}
    for src, dst, _ in edges:
        children[src].append(dst)
        parents[dst].append(src)
    rank = {i: 0 for i in ids}
    indeg = {i: len(parents[i]) for i in ids}
    ready = collections.deque(i for i in ids if indeg[i] == 0)
    while ready:
        i = ready.popleft()
        for c in children[i]:
            rank[c] = max(rank[c], rank[i] + 1)
            indeg[c] -= 1
            if indeg[c] == 0:
                ready.append(c)
    depth = max(rank.values()) if rank else 0
    layers = [[] for _ in range(depth + 1)]
    for i in ids:
        layers[rank[i]].append(i)
    size = {}
    for n in nodes:
        lines = _lines(n)
        size[n["id"]] = (max(len(s) for s in lines) * _CHAR_W + 16, len(lines) * _LINE_H + 10)
    down = {i: [] for i in ids}     # links of the graph with virtual points, for ordering
    up = {i: [] for i in ids}
    chains = []
    for k, (src, dst, _) in enumerate(edges):
        chain = [src]
        for r in range(rank[src] + 1, rank[dst]):
            d = "~%d_%d" % (k, r)
            layers[r].append(d)
            size[d] = (_DUMMY_W, 0)
            down[d], up[d] = [], []
            chain.append(d)
        chain.append(dst)
        for a, b in zip(chain, chain[1:]):
            down[a].append(b)
            up[b].append(a)
        chains.append(chain[1:-1])
    for _ in range(4):
        for r in range(1, depth + 1):
            _sort_by(layers[r], layers[r - 1], up)
        for r in range(depth - 1, -1, -1):
            _sort_by(layers[r], layers[r + 1], down)
    widths = [sum(size[i][0] for i in layer) + _GAP_X * (len(layer) - 1) for layer in layers]
    full = max(widths) if widths else 0
    pos = {}
    y = 20.0
    for r in range(depth, -1, -1):
        layer = layers[r]
        x = 20 + (full - widths[r]) / 2
        h = max(size[i][1] for i in layer)
        for i in layer:
            w, hh = size[i]
            pos[i] = (x, y + (h - hh) / 2, w, hh) if hh else (x, y, w, h)
            x += w + _GAP_X
        y += h + _GAP_Y
    routes = []
    for chain in chains:
        points = []
        for d in reversed(chain):
            x, y, w, h = pos.pop(d)
            points.append((x + w / 2, y, y + h))
        routes.append(points)
    return pos, routes


def _sort_by(layer, fixed, links):
    where = {i: k for k, i in enumerate(fixed)}
    current = {i: k for k, i in enumerate(layer)}

    def key(i):
        ks = [where[j] for j in links[i] if j in where]
        return (sum(ks) / len(ks)) if ks else current[i]
    layer.sort(key=lambda i: (key(i), current[i]))


def _details(n):
    """What the side panel shows for a node: only things a PyTorch user can read."""
    d = {"id": n["id"], "name": n["name"]}
    if n["kind"] == "leaf":
        d["name"] = "AccumulateGrad (a leaf tensor: its gradient goes into .grad)"
    for k in ("param", "shape", "dtype"):
        if n.get(k):
            d["tensor name" if k == "param" else k] = n[k]
    if n.get("outputs"):
        d["output shapes"] = n["outputs"]
    if n.get("inputs"):
        d["inputs (next_functions)"] = n["inputs"]
    if n["needs_input_grad"] is not None:
        d["needs_input_grad"] = str(tuple(n["needs_input_grad"]))
    if n["saved"]:
        d["saved tensors (vN: version when saved)"] = [
            _saved_label(s).replace("\n", " ") + (" %d B" % s["bytes"] if not s["none"] else "")
            for s in n["saved"]]
    if n["freed"]:
        d["freed"] = "backward has run and freed the saved tensors"
    if n["hooks"]:
        d["hooks"] = n["hooks"]
    if n["ctx_tensors"]:
        d["tensors kept on ctx (use ctx.save_for_backward)"] = [
            "ctx.%s %s %s" % (t["name"], t["shape"], t["dtype"]) for t in n["ctx_tensors"]]
    if n.get("trace"):
        d["forward stack (anomaly mode)"] = n["trace"]
    return d


def _legend_html(nodes):
    swatch = {"green": _COLORS["output"], "blue": _COLORS["leaf"], "grey": _COLORS["fn"],
              "orange": "#ffa500", "red": "#ff0000"}
    items = []
    for line in legend_lines(nodes, show_saved=True):
        word = line.split(" ", 1)[0]
        mark = ('<span class="sw" style="background:%s"></span>' % swatch[word]
                if word in swatch else '<span class="sw"></span>')
        items.append("<li>%s%s</li>" % (mark, _html.escape(line)))
    return '<div id="legend"><b>legend</b><ul>%s</ul></div>' % "".join(items)


_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>%(title)s</title>
<style>
body{margin:0;font:13px monospace;display:flex;height:100vh;overflow:hidden}
#view{flex:1;background:#fff;cursor:grab}
#side{width:340px;border-left:1px solid #ccc;padding:8px;overflow:auto;background:#fafafa}
g[data-node] rect{stroke:#444;stroke-width:1}
g[data-node].sel rect{stroke:#d00;stroke-width:3}
g[data-node].stale rect{stroke:#d00}
g[data-node].freed rect{stroke-dasharray:4 3}
g[data-node]{cursor:pointer}
path.edge{fill:none;stroke:#555;stroke-width:1.2}
pre{white-space:pre-wrap}
text.port{font-size:10px;fill:#333}
#legend ul{list-style:none;padding:0;margin:4px 0}
#legend li{margin:2px 0}
.sw{display:inline-block;width:10px;height:10px;border:1px solid #888;margin-right:4px}
</style></head><body>
<svg id="view" xmlns="http://www.w3.org/2000/svg" viewBox="%(vb)s">
<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7"
markerHeight="7" orient="auto"><path d="M0,0L10,5L0,10z" fill="#555"/></marker></defs>
<g id="scene">
%(edges)s
%(nodes)s
</g></svg>
<div id="side"><b>%(title)s</b><p>%(count)d nodes. Drag to pan, wheel to zoom, click a node
for its details.</p><pre id="info"></pre>%(legend)s</div>
<script type="application/json" id="graph-data">%(data)s</script>
<script>
(function(){
var data=JSON.parse(document.getElementById('graph-data').textContent);
var svg=document.getElementById('view'),info=document.getElementById('info');
var vb=svg.getAttribute('viewBox').split(' ').map(Number),drag=null,moved=false;
function setvb(){svg.setAttribute('viewBox',vb.join(' '));}
svg.addEventListener('wheel',function(e){e.preventDefault();
 var r=svg.getBoundingClientRect(),f=e.deltaY>0?1.15:1/1.15;
 var px=vb[0]+(e.clientX-r.left)/r.width*vb[2],py=vb[1]+(e.clientY-r.top)/r.height*vb[3];
 vb[0]=px-(px-vb[0])*f;vb[1]=py-(py-vb[1])*f;vb[2]*=f;vb[3]*=f;setvb();},{passive:false});
svg.addEventListener('mousedown',function(e){drag=[e.clientX,e.clientY];moved=false;});
window.addEventListener('mouseup',function(){drag=null;});
window.addEventListener('mousemove',function(e){if(!drag)return;
 var r=svg.getBoundingClientRect(),dx=e.clientX-drag[0],dy=e.clientY-drag[1];
 if(Math.abs(dx)+Math.abs(dy)>2)moved=true;
 vb[0]-=dx*vb[2]/r.width;vb[1]-=dy*vb[3]/r.height;drag=[e.clientX,e.clientY];setvb();});
Array.prototype.forEach.call(document.querySelectorAll('g[data-node]'),function(g){
 g.addEventListener('click',function(){if(moved)return;
  Array.prototype.forEach.call(document.querySelectorAll('g.sel'),function(s){
   s.classList.remove('sel');});
  g.classList.add('sel');var d=data[g.getAttribute('data-node')],out=[];
  for(var k in d){var v=d[k];out.push(k+': '+(Array.isArray(v)?'\\n  '+v.join('\\n  '):v));}
  info.textContent=out.join('\\n');});});
var m=location.hash.match(/select=(\\w+)/);
if(m){var g=document.querySelector('g[data-node="'+m[1]+'"]');
 if(g)g.dispatchEvent(new MouseEvent('click'));}
})();
</script></body></html>
"""


def to_html(output, path, params=None, title="ember backward graph"):
    """Write one self-contained HTML page showing ``output``'s backward graph; return ``path``.

    The page holds the drawing as inline SVG (laid out here), with pan (drag), zoom (wheel)
    and a details panel (click a node: its inputs (``next_functions``), output shapes, saved
    tensors with shape, dtype and version, hooks, ``needs_input_grad``, the forward stack under
    anomaly mode), and a legend. Edges are numbered by input index. It loads nothing from the
    network. Each node is an SVG group with a ``data-node`` attribute; opening the page as
    ``graph.html#select=n3`` shows node ``n3``'s details at once.

    Args:
        output: a Tensor (or a tuple of them) whose graph to draw.
        path: file to write.
        params: dict of name -> Tensor to label the leaves.
        title: page title.
    """
    rec = walk(output, params)
    pos, routes = layout(rec.nodes, rec.edges)
    svg_nodes, svg_edges = [], []
    for n in rec.nodes:
        x, y, w, h = pos[n["id"]]
        cls = []
        if any(s.get("stale") for s in n["saved"]):
            cls.append("stale")
        if n["freed"]:
            cls.append("freed")
        text = "".join('<text x="%.1f" y="%.1f" font-size="12" font-family="monospace">%s</text>'
                       % (x + 8, y + 17 + k * _LINE_H, _html.escape(s))
                       for k, s in enumerate(_lines(n)))
        svg_nodes.append('<g data-node="%s" class="%s"><title>%s</title><rect x="%.1f" '
                         'y="%.1f" width="%.1f" height="%.1f" rx="4" fill="%s"/>%s</g>'
                         % (n["id"], " ".join(cls), _html.escape(n["name"]), x, y, w, h,
                            _COLORS[n["kind"]], text))
    ins = collections.defaultdict(list)     # consumer -> its edges, in input order
    outs = collections.defaultdict(list)    # producer -> its edges
    for k, (src, dst, _lab) in enumerate(rec.edges):
        ins[src].append(k)
        outs[dst].append(k)
    for k, ((src, dst, lab), route) in enumerate(zip(rec.edges, routes)):
        # From the input's node (above) down to its consumer, as in the DOT drawing. Edges
        # meeting a box are spread along its side, so parallel edges (y * y) stay apart.
        x0, y0, w0, h0 = pos[dst]
        x1, y1, w1, _h1 = pos[src]
        cx = x0 + w0 * (outs[dst].index(k) + 1) / (len(outs[dst]) + 1)
        cy = y0 + h0
        ex = x1 + w1 * (ins[src].index(k) + 1) / (len(ins[src]) + 1)
        d = "M%.1f,%.1f" % (cx, cy)
        for px, top, bottom in route + [(ex, y1, None)]:
            my = (cy + top) / 2
            d += " C%.1f,%.1f %.1f,%.1f %.1f,%.1f" % (cx, my, px, my, px, top)
            cx, cy = px, top
            if bottom is not None:
                d += " L%.1f,%.1f" % (px, bottom)
                cy = bottom
        svg_edges.append('<path class="edge" marker-end="url(#arrow)" d="%s"/>' % d)
        if lab and len(ins[src]) > 1:
            svg_edges.append('<text class="port" x="%.1f" y="%.1f">%s</text>'
                             % (ex + 3, y1 - 6, _html.escape(lab)))
    right = max((x + w for x, y, w, h in pos.values()), default=100) + 20
    bottom = max((y + h for x, y, w, h in pos.values()), default=100) + 20
    data = json.dumps({n["id"]: _details(n) for n in rec.nodes}).replace("</", "<\\/")
    page = _PAGE % {"title": _html.escape(title), "vb": "0 0 %.0f %.0f" % (right, bottom),
                    "edges": "\n".join(svg_edges), "nodes": "\n".join(svg_nodes),
                    "count": len(rec.nodes), "data": data,
                    "legend": _legend_html(rec.nodes)}
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
    return path
