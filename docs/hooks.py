"""mkdocs hooks: draw real ember graphs and quote ember's own source at build time.

- ``graphs/NAME.svg``, ``graphs/NAME.dot`` and ``graphs/NAME.html`` are generated from the
  examples in ``GRAPHS`` (ember's ``viz.make_dot`` / ``viz.to_html``; the SVG comes from
  Graphviz when the ``dot`` program is installed, otherwise from ember's own layout).
- In a page, ``<!-- source: ember/autograd/function.py::_apply -->`` becomes the current source
  of that function or class, and ``<!-- dot: NAME -->`` the DOT text of a generated graph.

Run ``python docs/hooks.py OUT_DIR`` to write the graph files without building the site.
"""
import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

__all__ = ["build_graphs", "on_config", "on_files", "on_page_markdown", "on_post_build",
           "DoctestExtension"]

_SOURCE = re.compile(r"<!-- source: (\S+?)::(\S+?) -->")
_DOT = re.compile(r"<!-- dot: (\w+) -->")
_cache = {}


def _seeds(torch):
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 4
    return z.mean(), {"x": x}


def _mlp(torch):
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    x = torch.randn(5, 4)
    loss = torch.nn.functional.cross_entropy(model(x), torch.tensor([0, 1, 0, 1, 1]))
    return loss, dict(model.named_parameters())


def _custom(torch):
    from ember._demo import LinearFunction, MyReLU
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(2, 4, requires_grad=True)
    b = torch.zeros(2, requires_grad=True)
    return MyReLU.apply(LinearFunction.apply(x, w, b)).sum(), {"x": x, "w": w, "b": b}


def _dynamic(torch):
    x = torch.tensor([0.5, -0.2], requires_grad=True)
    y = x
    while y.norm() < 4:  # how many MulBackward0 nodes: decided by the data, at run time
        y = y * 2
    return y.sum(), {"x": x}


GRAPHS = {"seeds": _seeds, "mlp": _mlp, "custom": _custom, "dynamic": _dynamic}


def build_graphs(out_dir):
    """Write ``NAME.dot``, ``NAME.svg`` and ``NAME.html`` for every graph; return DOT texts."""
    # (the ember of this checkout; mkdocs restores sys.path after import)
    if os.path.join(ROOT, "src") not in sys.path:
        sys.path.insert(0, os.path.join(ROOT, "src"))
    import ember
    from ember._demo import svg_of_html
    os.makedirs(out_dir, exist_ok=True)
    dots = {}
    for name, make in GRAPHS.items():
        ember.manual_seed(0)
        output, params = make(ember)
        dot_path = os.path.join(out_dir, name + ".dot")
        dots[name] = str(ember.viz.make_dot(output, params=params, show_saved=True))
        with open(dot_path, "w", encoding="utf-8") as f:
            f.write(dots[name])
        html_path = os.path.join(out_dir, name + ".html")
        ember.viz.to_html(output, html_path, params=params, title="ember graph: " + name)
        svg_path = os.path.join(out_dir, name + ".svg")
        if shutil.which("dot"):
            subprocess.run(["dot", "-Tsvg", dot_path, "-o", svg_path], check=True, timeout=60)
        else:
            with open(html_path, encoding="utf-8") as f:
                svg = svg_of_html(f.read())
            with open(svg_path, "w", encoding="utf-8") as f:
                f.write(svg)
    return dots


def _quote_source(path, qualname):
    key = (path, qualname)
    if key not in _cache:
        text = open(os.path.join(ROOT, path), encoding="utf-8").read()
        nodes = ast.parse(text).body
        node = None
        for part in qualname.split("."):
            node = next((n for n in nodes if getattr(n, "name", None) == part), None)
            if node is None:
                raise KeyError("docs: %s has no %s" % (path, qualname))
            nodes = getattr(node, "body", [])
        start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        lines = text.splitlines()[start - 1:node.end_lineno]
        _cache[key] = "```python\n# %s\n%s\n```" % (path, "\n".join(lines))
    return _cache[key]


class DoctestExtension:
    """Python-Markdown extension: ``>>>`` blocks (docstring examples) become fenced code."""

    def __new__(cls):
        from markdown.extensions import Extension
        from markdown.preprocessors import Preprocessor

        class _Doctest(Preprocessor):
            def run(self, lines):
                out, fenced, i = [], False, 0
                while i < len(lines):
                    line = lines[i]
                    if line.lstrip().startswith("```"):
                        fenced = not fenced
                    if fenced or not line.lstrip().startswith(">>>"):
                        out.append(line)
                        i += 1
                        continue
                    indent = line[:len(line) - len(line.lstrip())]
                    out.append(indent + "```pycon")
                    while i < len(lines) and lines[i].strip():
                        out.append(lines[i])
                        i += 1
                    out.append(indent + "```")
                return out

        class _Extension(Extension):
            def extendMarkdown(self, md):
                md.preprocessors.register(_Doctest(md), "ember_doctest", 40)

        return _Extension()


def on_config(config):
    """Render docstring examples (``>>>`` lines) as code, in pages and in the API reference."""
    config.markdown_extensions.append(DoctestExtension())
    return config


def on_files(files, config):
    """Add the generated graph files to the site."""
    from mkdocs.structure.files import File
    tmp = _cache["tmp"] = tempfile.mkdtemp(prefix="ember-docs-")  # graphs/, copied at build
    _cache["dots"] = build_graphs(os.path.join(tmp, "graphs"))
    for name in sorted(os.listdir(os.path.join(tmp, "graphs"))):
        files.append(File("graphs/" + name, tmp, config["site_dir"],
                          config["use_directory_urls"]))
    return files


def on_post_build(config):
    """Remove the temporary folder of generated graphs."""
    if "tmp" in _cache:
        shutil.rmtree(_cache.pop("tmp"), ignore_errors=True)


def on_page_markdown(markdown, page, config, files):
    """Replace the ``source:`` and ``dot:`` markers."""
    markdown = _SOURCE.sub(lambda m: _quote_source(m.group(1), m.group(2)), markdown)
    dots = _cache.get("dots", {})
    return _DOT.sub(lambda m: "```dot\n%s\n```" % dots[m.group(1)].strip(), markdown)


if __name__ == "__main__":
    build_graphs(sys.argv[1] if len(sys.argv) > 1 else "graphs")
