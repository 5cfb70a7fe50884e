"""ember.viz: DOT text (golden strings), summary table, HTML page (headless Chromium)."""
import builtins
import os
import re
import struct
import subprocess
import zlib

import numpy as np
import pytest

import ember
from ember import viz

CHROMIUM = "/usr/bin/chromium"

HEADER = ('digraph {\n\tgraph [size="12,12"]\n\tnode [align=left fontname=monospace fontsize=10 '
          'height=0.2 ranksep=0.1 shape=box style=filled]\n')


def _mul_graph():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    w = ember.tensor([3.0, 4.0], requires_grad=True)
    return x, w, (x * w).sum()


def test_make_dot_golden_small_graph():
    x, w, y = _mul_graph()
    dot = viz.make_dot(y, params={"x": x, "w": w}, legend=False)
    assert dot.source == HEADER + (
        '\tout0 [label="output\\n() float32" fillcolor=darkolivegreen1]\n'
        '\tn0 [label="SumBackward0" fillcolor=lightgrey]\n'
        '\tn1 [label="MulBackward0\\nneeds_input_grad=TT" fillcolor=lightgrey]\n'
        '\tn2 [label="x\\n(2,) float32" fillcolor=lightblue]\n'
        '\tn3 [label="w\\n(2,) float32" fillcolor=lightblue]\n'
        '\tn0 -> out0\n'
        '\tn1 -> n0\n'
        '\tn2 -> n1 [label=0]\n'
        '\tn3 -> n1 [label=1]\n'
        '}\n')
    assert str(dot) == dot.source
    # a pure function of the graph: same text again, for a rebuilt identical graph too
    assert viz.make_dot(y, params={"x": x, "w": w}, legend=False).source == dot.source
    x2, w2, y2 = _mul_graph()
    assert viz.make_dot(y2, params={"x": x2, "w": w2}, legend=False).source == dot.source


def test_make_dot_saved_tensors_stale_hooks_and_needs_input_grad():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    c = ember.tensor([3.0, 4.0])
    h = x * c
    h.register_hook(lambda g: g)
    y = h.exp().sum()
    with ember.no_grad():
        c.add_(1)           # c was saved by MulBackward0 (torch's order: other first): now stale
    src = viz.make_dot(y, params={"x": x}, show_saved=True, legend=False).source
    assert src == HEADER + (
        '\tout0 [label="output\\n() float32" fillcolor=darkolivegreen1]\n'
        '\tn0 [label="SumBackward0" fillcolor=lightgrey]\n'
        '\tn1 [label="ExpBackward0" fillcolor=lightgrey]\n'
        '\tn1_s0 [label="saved[0] (output): (2,) float32 v0" fillcolor=orange]\n'
        '\tn1_s0 -> n1 [dir=none style=dashed]\n'
        '\tn2 [label="MulBackward0\\nneeds_input_grad=TF\\nhooks: 1" fillcolor=lightgrey]\n'
        '\tn2_s0 [label="saved[0]: (2,) float32 v0\\nSTALE: now v1" fillcolor=red]\n'
        '\tn2_s0 -> n2 [dir=none style=dashed]\n'
        '\tn2_s1 [label="saved[1]: None" fillcolor=orange]\n'
        '\tn2_s1 -> n2 [dir=none style=dashed]\n'
        '\tn3 [label="x\\n(2,) float32" fillcolor=lightblue]\n'
        '\tn0 -> out0\n'
        '\tn1 -> n0\n'
        '\tn2 -> n1\n'
        '\tn3 -> n2\n'
        '}\n')


def test_make_dot_marks_freed_buffers_after_backward():
    x, w, y = _mul_graph()
    y.backward()
    src = viz.make_dot(y).source
    assert ('n1 [label="MulBackward0\\nneeds_input_grad=TT\\n(buffers freed by backward)" '
            'fillcolor=lightgrey style="filled,dashed"]') in src


def test_make_dot_ctx_attributes_flagged():
    class Keep(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.x = x
            ctx.scale = 2.5
            return x * 2.5

        @staticmethod
        def backward(ctx, g):
            return g * ctx.scale

    x = ember.ones(3, requires_grad=True)
    src = viz.make_dot(Keep.apply(x), show_attrs=True).source
    assert "ctx.x: tensor (3,) float32 (not saved_for_backward!)" in src
    assert "ctx.scale = 2.5" in src and "color=red" in src


def test_make_dot_matches_torch_node_names(torch):
    names = []
    for lib in (ember, torch):
        x = lib.tensor(np.ones((2, 3)), requires_grad=True)
        w = lib.tensor(np.ones((3, 4)), requires_grad=True)
        y = (x @ w).relu().mean()
        seen, stack = [], [y.grad_fn]
        while stack:
            fn = stack.pop(0)
            seen.append(type(fn).__name__)
            stack += [f for f, _ in fn.next_functions if f is not None]
        names.append(seen)
    dot = viz.make_dot(_dot_target()).source
    assert names[0] == names[1]
    for n in names[0]:
        if n != "AccumulateGrad":
            assert n in dot


def _dot_target():
    x = ember.tensor(np.ones((2, 3)), requires_grad=True)
    w = ember.tensor(np.ones((3, 4)), requires_grad=True)
    return (x @ w).relu().mean()


def test_render_without_graphviz_says_how_to_install(monkeypatch):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "graphviz":
            raise ImportError("No module named 'graphviz'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    _, _, y = _mul_graph()
    with pytest.raises(RuntimeError, match=r"pip install ember\[viz\].*apt-get install graphviz"):
        viz.make_dot(y).render("graph", format="svg")


def test_summary_table():
    x, w, y = _mul_graph()
    assert viz.summary(y, params={"x": x, "w": w}) == (
        "id  node            saved                            bytes\n"
        "n0  SumBackward0    -                                0\n"
        "n1  MulBackward0    (2,) float32 v0, (2,) float32 v0 16\n"
        "n2  AccumulateGrad  x (2,) float32                   0\n"
        "n3  AccumulateGrad  w (2,) float32                   0\n"
        "total saved: 16 B in 2 array(s) (16 B counted per node)")


def test_layout_is_layered_and_untangled():
    from ember.viz._graph import walk
    from ember.viz.html import layout
    a = ember.ones(2, requires_grad=True)
    b = ember.ones(2, requires_grad=True)
    y = ((a * 2).exp() + (b * 3).sin()).sum()
    rec = walk(y, {"a": a, "b": b})
    pos, routes = layout(rec.nodes, rec.edges)
    assert len(routes) == len(rec.edges)
    for src, dst, _ in rec.edges:       # every input sits above its consumer
        assert pos[dst][1] < pos[src][1]
    by_name = {n.get("param") or n["id"]: pos[n["id"]] for n in rec.nodes}
    assert by_name["a"][0] < by_name["b"][0]   # the two branches do not cross


def _png_pixels(path):
    """Decode an 8-bit RGB/RGBA PNG with zlib only; return an (h, w, channels) array."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and ctype in (2, 6)
            ch = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, 1 + width * ch)
    out = np.zeros((height, width * ch), dtype=np.int32)
    prev = np.zeros(width * ch, dtype=np.int32)
    for r in range(height):
        f, line = raw[r, 0], raw[r, 1:].astype(np.int32)
        cur = np.zeros_like(line)
        if f in (0, 2):
            cur = (line + (prev if f == 2 else 0)) & 255
            out[r] = cur
            prev = cur
            continue
        if f == 1:
            cur = np.cumsum(line.reshape(-1, ch), axis=0).reshape(-1) & 255
            out[r] = cur
            prev = cur
            continue
        for i in range(len(line)):
            left = cur[i - ch] if i >= ch else 0
            up = prev[i]
            ul = prev[i - ch] if i >= ch else 0
            if f == 0:
                pred = 0
            elif f == 1:
                pred = left
            elif f == 2:
                pred = up
            elif f == 3:
                pred = (left + up) // 2
            else:
                p = left + up - ul
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
                pred = left if pa <= pb and pa <= pc else (up if pb <= pc else ul)
            cur[i] = (line[i] + pred) & 255
        out[r] = cur
        prev = cur
    return out.reshape(height, width, ch)


def _chromium(args, tmp_path):
    if not os.path.exists(CHROMIUM):
        pytest.skip("headless Chromium not installed (apt-get install -y chromium "
                    "chromium-driver); the HTML page is not checked in a browser")
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--user-data-dir=%s" % (tmp_path / "profile")] + args
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def _page(tmp_path):
    ember.manual_seed(0)
    w1 = ember.randn(4, 3, requires_grad=True)
    w2 = ember.randn(2, 4, requires_grad=True)
    x = ember.randn(5, 3)
    y = ((x @ w1.t()).tanh() @ w2.t()).pow(2).mean()
    path = str(tmp_path / "graph.html")
    assert viz.to_html(y, path, params={"w1": w1, "w2": w2}) == path
    return path, len(viz._graph.walk(y).nodes)


def test_html_is_self_contained(tmp_path):
    path, n = _page(tmp_path)
    text = open(path, encoding="utf-8").read()
    assert len(re.findall(r"<g data-node=", text)) == n
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in text and "<script src" not in text and "<link" not in text
    assert "MmBackward0" in text and "w1" in text


def test_html_in_headless_chromium(tmp_path):
    path, n = _page(tmp_path)
    shot = tmp_path / "out.png"
    r = _chromium(["--screenshot=%s" % shot, "--window-size=1200,800", "file://" + path],
                  tmp_path)
    assert shot.exists(), r.stderr[-2000:]
    pixels = _png_pixels(str(shot))[::4, ::4, :3]
    assert pixels.std() > 10, "the screenshot is blank"
    # the node boxes' fill colours are on the page: light blue leaves, green output
    flat = pixels.reshape(-1, 3)
    assert ((flat == [173, 216, 230]).all(axis=1)).any()
    dom = _chromium(["--dump-dom", "file://" + path], tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert len(re.findall(r"<g data-node=", dom.stdout)) == n


def test_html_click_shows_node_details(tmp_path):
    path, _ = _page(tmp_path)
    dom = _chromium(["--dump-dom", "file://" + path + "#select=n3"], tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    info = re.search(r'<pre id="info">(.*?)</pre>', dom.stdout, re.S).group(1)
    # n3 is the TanhBackward0 (mean <- pow <- mm <- tanh): it saved its output
    assert "id: n3" in info and "name: TanhBackward0" in info, info
    assert "needs_input_grad: (True,)" in info, info
    assert "saved[0] (output): (5, 4) float32 v0 80 B" in info, info
    assert re.search(r'<g data-node="n3" class="[^"]*sel', dom.stdout)


class _FakeGraphviz:
    """Stands in for the graphviz package: records what make_dot's Digraph asks it to do."""

    class ExecutableNotFound(RuntimeError):
        pass

    def __init__(self, missing_dot=False):
        self.calls = []
        self.missing_dot = missing_dot
        fake = self

        class Source:
            def __init__(self, source):
                self.source = source

            def render(self, filename, format="pdf", cleanup=False, view=False):
                if fake.missing_dot:
                    raise fake.ExecutableNotFound("failed to execute PosixPath('dot')")
                fake.calls.append((self.source, filename, format, cleanup))
                return filename + "." + format

        self.Source = Source


def test_render_uses_graphviz_when_installed(monkeypatch):
    import sys
    fake = _FakeGraphviz()
    monkeypatch.setitem(sys.modules, "graphviz", fake)
    _, _, y = _mul_graph()
    dot = viz.make_dot(y)
    assert dot.render("graph", format="png") == "graph.png"
    assert fake.calls == [(dot.source, "graph", "png", True)]
    monkeypatch.setitem(sys.modules, "graphviz", _FakeGraphviz(missing_dot=True))
    with pytest.raises(RuntimeError, match="apt-get install graphviz"):
        dot.render("graph", format="svg")


def test_dot_legend_and_parallel_edges():
    y = ember.ones(2, requires_grad=True)
    c = ember.ones(2)
    z = (y * y * c).sum()
    with ember.no_grad():
        c.add_(1)
    src = viz.make_dot(z, params={"y": y}, show_saved=True).source
    # the two inputs of y * y are two labelled edges, which Graphviz draws apart
    mul = re.search(r'(n\d+) \[label="MulBackward0\\nneeds_input_grad=TT"', src).group(1)
    assert re.findall(r"n\d+ -> %s \[label=(\d)\]" % mul, src) == ["0", "1"]
    legend = src[src.index("subgraph cluster_legend"):]
    for words in ("green box: the output", "blue box: a leaf tensor", "edge number i",
                  "vN = its version counter", "red: modified in place"):
        assert words in legend, legend
    assert "\\l" in legend and src.endswith("\t}\n}\n")
    plain = viz.make_dot(z).source
    assert "version counter" not in plain     # no saved tensors drawn: no line about them


def test_html_panel_shows_user_facts_not_internals(tmp_path):
    import json
    y = ember.ones(2, 3, requires_grad=True)
    w = ember.ones(3, 2, requires_grad=True)
    z = ember.nn.functional.cross_entropy(y @ w, ember.tensor([0, 1]))
    p = viz.to_html((z * z), str(tmp_path / "g.html"), params={"y": y, "w": w})
    text = open(p, encoding="utf-8").read()
    data = json.loads(re.search(r'id="graph-data">(.*?)</script>', text, re.S).group(1)
                      .replace("<\\/", "</"))
    dumped = json.dumps(data)
    assert "array(" not in dumped and "ctx attributes" not in dumped and "conf" not in dumped
    mul = next(d for d in data.values() if d["name"] == "MulBackward0")
    assert mul["output shapes"] == ["() float32"]
    assert [e.split(" (")[0] for e in mul["inputs (next_functions)"]] == [
        "0: NllLossBackward0", "1: NllLossBackward0"]
    mm = next(d for d in data.values() if d["name"] == "MmBackward0")
    assert any(s.startswith("saved[0]") and "float32 v0" in s
               for s in mm["saved tensors (vN: version when saved)"])
    # y * y: two edges, spread apart, each numbered with its input index
    paths = re.findall(r'<path class="edge" marker-end="url\(#arrow\)" d="([^"]+)"/>', text)
    assert len(set(paths)) == len(paths)
    assert len(re.findall(r'<text class="port"', text)) >= 2
    assert '<div id="legend">' in text and "edge number i" in text
