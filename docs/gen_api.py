"""The API reference's tables, listed from the live modules while the site is built.

In a page, a line ``<!-- api: KEY -->`` becomes a table of every public name that KEY stands for,
each with its signature and the first line of its docstring (names without a docstring show
their signature only). KEY is

- a module (``ember.fft``): the names in its ``__all__``, or else its public names that are not
  modules; add `` deep`` (``<!-- api: ember.backends deep -->``) to list its sub-modules too,
  or `` defined`` to list every public function and class the module defines (``__all__`` or
  not);
- or one of the selections in ``SELECTIONS``: ``tensor`` (Tensor's methods and attributes),
  ``ember`` (the top-level functions, grouped by op family), ``nn`` (layers grouped by kind,
  losses, containers and parameters).

Nothing is listed by hand, so a name added to a module appears in the reference at the next
build. This file is a mkdocs hook (see ``mkdocs.yml``); ``python docs/gen_api.py KEY ...`` prints
the tables, and ``tests/test_docs.py`` checks that the pages cover ``ember.nn`` and
``ember.optim``.
"""
import importlib
import inspect
import os
import re
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
API_DIR = os.path.join(ROOT, "docs", "api")

__all__ = ["public_names", "summary", "signature", "table", "render", "expand",
           "api_pages", "SELECTIONS", "on_page_markdown"]

MARKER = re.compile(r"^<!-- api: ([\w.]+)(?: (deep|defined))? -->$", re.M)
_ROLE = re.compile(r":(?:class|func|meth|attr|mod|obj|data|exc|ref):`~?([^`]+)`")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _ember():
    # (the ember of this checkout; mkdocs restores sys.path after import)
    if os.path.join(ROOT, "src") not in sys.path:
        sys.path.insert(0, os.path.join(ROOT, "src"))
    return importlib.import_module("ember")


def _module(name):
    _ember()
    return importlib.import_module(name)


def public_names(module):
    """The module's ``__all__``, or its public names that are not modules, in order."""
    names = getattr(module, "__all__", None)
    if names is not None:
        return list(names)
    names = set(vars(module))
    if type(module) is not types.ModuleType:    # a module object with methods of its own
        names |= set(dir(type(module))) - set(dir(types.ModuleType))
    return sorted(n for n in names if not n.startswith("_")
                  and not isinstance(getattr(module, n), types.ModuleType))


def _own_doc(obj):
    if isinstance(obj, property):
        return obj.__doc__ or (obj.fget.__doc__ if obj.fget else None)
    if inspect.isclass(obj):
        return obj.__dict__.get("__doc__")
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                        types.ModuleType, staticmethod, classmethod)) or callable(obj):
        doc = getattr(obj, "__doc__", None)
        if doc and not inspect.isroutine(obj) and doc == type(obj).__doc__:
            return None   # an instance: its class's docstring says nothing about it
        return doc
    return None


def summary(obj):
    """The first paragraph of the object's own docstring on one line, or ``""``."""
    doc = _own_doc(obj)
    if not doc or not doc.strip():
        return ""
    first = inspect.cleandoc(doc).split("\n\n")[0]
    line = " ".join(part.strip() for part in first.splitlines()).strip()
    line = _ROLE.sub(r"`\1`", line).replace("``", "`")
    if len(line) > 240:   # a long paragraph: its first sentence
        cut = line.find(". ")
        line = line[:cut + 1] if 0 < cut < 240 else line[:237].rstrip() + "..."
    return line.rstrip(":").rstrip()


def signature(obj, drop_first=False):
    """``(a, b=1)`` for a callable, ``""`` for other objects or when Python cannot tell."""
    if not callable(obj) or isinstance(obj, property):
        return ""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return "(...)"
    params = [p.replace(annotation=p.empty) for p in sig.parameters.values()]
    sig = sig.replace(parameters=params, return_annotation=sig.empty)
    if drop_first:
        if params and params[0].kind in (params[0].POSITIONAL_ONLY,
                                         params[0].POSITIONAL_OR_KEYWORD):
            sig = sig.replace(parameters=params[1:])
    return _ADDRESS.sub("", str(sig))


def _describe(obj):
    """What to say of an object with no docstring of its own."""
    if inspect.isclass(obj) or inspect.isroutine(obj) or isinstance(obj, property):
        return ""
    if isinstance(obj, types.ModuleType):
        return "module"
    text = repr(obj)
    if len(text) > 60:
        text = type(obj).__name__ + " object"
    return "`%s` (%s)" % (_ADDRESS.sub("", text).replace("`", "'"), type(obj).__name__)


def _inplace(shown):
    head, _, name = shown.rpartition(".")
    if name.endswith("_") and not name.endswith("__") and len(name) > 1:
        return "In-place version of `%s.%s`." % (head, name[:-1])
    return ""


def _escape(text):
    return (text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;")
            .replace("[", "\\[").replace("*", "\\*").replace("_", "\\_"))


def _cell(text):
    """Text for a table cell: Markdown escaped outside the code spans (a pipe inside one is
    fine: the tables extension splits cells outside code only)."""
    parts = text.split("`")
    if len(parts) % 2 == 0:     # an unmatched backtick: no code spans
        return _escape(text.replace("`", "'"))
    return "`".join(part if i % 2 else _escape(part) for i, part in enumerate(parts))


def table(rows):
    """A Markdown table of ``(shown name, object, drop_first)`` rows."""
    if not rows:
        return "(no public names)"
    out = ["| Name | Summary |", "| --- | --- |"]
    for shown, obj, drop_first in rows:
        sig = signature(obj, drop_first)
        kind = "property" if isinstance(obj, property) else ""
        text = summary(obj) or _describe(obj) or _inplace(shown) or "(no docstring)"
        name = "`%s%s`" % (shown, sig.replace("`", "'"))
        out.append("| %s | %s%s |" % (name, "*%s* " % kind if kind else "", _cell(text)))
    return "\n".join(out)


def _defined(module):
    return [n for n, obj in vars(module).items() if not n.startswith("_")
            and (inspect.isclass(obj) or inspect.isroutine(obj))
            and getattr(obj, "__module__", None) == module.__name__]


def _module_rows(module, defined=False):
    rows = []
    names = public_names(module)
    if defined:
        names += [n for n in _defined(module) if n not in names]
    for name in names:
        if not hasattr(module, name):
            raise AttributeError("docs: %s lists %r in __all__ but has no such attribute"
                                 % (module.__name__, name))
        rows.append(("%s.%s" % (module.__name__, name), getattr(module, name), False))
    return rows


def _module_table(module, option=None):
    name = module.__name__
    parts = [table(_module_rows(module, option == "defined"))]
    if option == "deep":
        for sub in public_names(module):
            obj = getattr(module, sub)
            if isinstance(obj, types.ModuleType) and obj.__name__.startswith(name + "."):
                parts.append("### %s\n\n%s" % (obj.__name__, _module_table(obj)))
    return "\n\n".join(parts)


# --- selections -------------------------------------------------------------------------------

_MISSING = object()


def _tensor():
    """Every public attribute of ``Tensor`` and every op callable as ``tensor.NAME(...)``."""
    ember = _ember()
    cls = ember.Tensor
    names = {n for n in dir(cls) if not n.startswith("_")} | set(ember.ops._TENSOR_METHODS)
    rows = []
    for name in sorted(names):
        static = inspect.getattr_static(cls, name, _MISSING)
        if static is _MISSING:      # an op reached through ``Tensor.__getattr__``
            rows.append(("Tensor." + name, getattr(ember.ops, name), True))
        elif isinstance(static, property):
            rows.append(("Tensor." + name, static, False))
        else:
            obj = getattr(cls, name)
            bound = isinstance(static, (staticmethod, classmethod))
            rows.append(("Tensor." + name, obj, not bound and inspect.isroutine(obj)))
    return table(rows)


def _family(obj):
    module = getattr(obj, "__module__", None) or ""
    if module.startswith("ember.ops."):
        return module.rsplit(".", 1)[1]
    if module in ("ember.dtypes", "ember.random", "ember._tensor_str", "ember.tensor",
                  "ember.serialization", "ember.backend", "ember.autograd.grad_mode"):
        return {"ember._tensor_str": "printing", "ember.tensor": "tensor",
                "ember.backend": "devices", "ember.autograd.grad_mode": "gradient modes"}.get(
                    module, module.rsplit(".", 1)[1])
    return "general"


def _top_level():
    """``ember.*``: types, dtypes and functions (grouped by the op family defining them)."""
    ember = _ember()
    types_, dtypes_, others, groups = [], [], [], {}
    for name in public_names(ember):
        obj = getattr(ember, name)
        row = ("ember." + name, obj, False)
        if isinstance(obj, ember.dtype):
            dtypes_.append(row)
        elif inspect.isclass(obj):
            types_.append(row)
        elif callable(obj):
            groups.setdefault(_family(obj), []).append(row)
        else:
            others.append(row)
    parts = ["### Types\n\n" + table(types_), "### dtypes\n\n" + table(dtypes_)]
    if others:
        parts.append("### Other attributes\n\n" + table(others))
    for group in sorted(groups):
        parts.append("### Functions: %s\n\n%s" % (group, table(groups[group])))
    return "\n\n".join(parts)


def _nn_kind(module_name):
    return module_name.rsplit(".", 1)[1]


def _nn():
    """``ember.nn``: containers, layers grouped by their source file, losses, parameters."""
    nn = _module("ember.nn")
    Module = nn.Module
    containers, losses, others, layers = [], [], [], {}
    for name in public_names(nn):
        obj = getattr(nn, name)
        row = ("ember.nn." + name, obj, False)
        if not (inspect.isclass(obj) and issubclass(obj, Module)):
            others.append(row)
        elif obj.__module__.endswith((".loss", ".adaptive")) and "Loss" in name:
            losses.append(row)
        elif obj is Module or obj.__module__.endswith(".container"):
            containers.append(row)
        else:
            layers.setdefault(_nn_kind(obj.__module__), []).append(row)
    parts = ["### Module and containers\n\n" + table(containers),
             "### Parameters and other classes\n\n" + table(others),
             "### Losses\n\n" + table(losses)]
    for kind in sorted(layers):
        parts.append("### Layers: %s\n\n%s" % (kind, table(layers[kind])))
    return "\n\n".join(parts)


SELECTIONS = {"tensor": _tensor, "ember": _top_level, "nn": _nn}


def render(key, option=None):
    """The Markdown for ``<!-- api: KEY [deep|defined] -->``."""
    if key in SELECTIONS:
        return SELECTIONS[key]()
    return _module_table(_module(key), option)


def expand(markdown):
    """Replace every ``<!-- api: KEY -->`` line of a page by its table."""
    return MARKER.sub(lambda m: render(m.group(1), m.group(2)), markdown)


def api_pages():
    """``{file name: expanded Markdown}`` for every page in ``docs/api``."""
    pages = {}
    for name in sorted(os.listdir(API_DIR)):
        if name.endswith(".md"):
            with open(os.path.join(API_DIR, name), encoding="utf-8") as f:
                pages[name] = expand(f.read())
    return pages


def on_page_markdown(markdown, page, config, files):
    """mkdocs hook: expand the ``api:`` markers of a page."""
    return expand(markdown) if "<!-- api: " in markdown else markdown


if __name__ == "__main__":
    for arg in sys.argv[1:] or ["nn"]:   # KEY or KEY:deep / KEY:defined
        key, _, option = arg.partition(":")
        print(render(key, option or None))
