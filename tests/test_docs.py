"""The API reference (docs/api, expanded by docs/gen_api.py) lists every public name, and every
page it needs is in the site's navigation."""
import importlib
import inspect
import pathlib
import re
import sys
import types

import pytest

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"
sys.path.insert(0, str(DOCS))
gen_api = importlib.import_module("gen_api")
sys.path.remove(str(DOCS))

# The modules a PyTorch user looks things up in: each must have a table somewhere in docs/api.
MODULES = ["ember.nn.functional", "ember.nn.init", "ember.nn.utils", "ember.optim",
           "ember.optim.lr_scheduler", "ember.utils.data", "ember.autograd",
           "ember.autograd.forward_ad", "ember.func", "ember.fft", "ember.special", "ember.linalg",
           "ember.distributions", "ember.distributed", "ember.viz", "ember.cuda",
           "ember.backends", "ember.serialization", "ember.datasets"]


@pytest.fixture(scope="module")
def pages():
    return gen_api.api_pages()


@pytest.fixture(scope="module")
def text(pages):
    return "\n".join(pages.values())


def _listed(text, qualname):
    return re.search(r"`%s[(`]" % re.escape(qualname), text) is not None


def test_every_marker_expands(pages):
    for name, page in pages.items():
        assert "<!-- api:" not in page, name


@pytest.mark.parametrize("module", MODULES)
def test_module_has_a_table(module):
    markers = "".join(p.read_text(encoding="utf-8") for p in (DOCS / "api").glob("*.md"))
    assert re.search(r"<!-- api: %s( \w+)? -->" % re.escape(module), markers), module


def test_nn_and_optim_names_listed(text):
    import ember
    missing = []
    for module in (ember.nn, ember.nn.functional, ember.nn.init, ember.optim,
                   ember.optim.lr_scheduler):
        for name in gen_api.public_names(module):
            if not _listed(text, "%s.%s" % (module.__name__, name)):
                missing.append("%s.%s" % (module.__name__, name))
    assert not missing, missing
    assert len(gen_api.public_names(ember.nn)) > 100    # the layers and losses are all there


def test_tensor_methods_and_top_level_listed(text):
    import ember
    for name in ("backward", "exp", "add_", "view", "requires_grad_", "grad"):
        assert _listed(text, "Tensor." + name), name
    for name in gen_api.public_names(ember):
        obj = getattr(ember, name)
        if not isinstance(obj, types.ModuleType):
            assert _listed(text, "ember." + name), name


def test_summary_is_the_first_docstring_line():
    import ember
    assert gen_api.summary(ember.nn.Module) == "Base class for all neural network modules."
    assert gen_api.summary(ember.float32) == ""             # an instance: not its class's doc
    assert gen_api.signature(ember.nn.Linear).startswith("(in_features, out_features")
    row = gen_api.table([("f", lambda x, y=1: x, False)])
    assert "`f(x, y=1)` | (no docstring)" in row


def test_cells_escape_markdown():
    cell = gen_api._cell("a | b [c] *d* `x | *y*`")
    assert cell == "a \\| b \\[c] \\*d\\* `x | *y*`"


def test_every_api_page_in_nav():
    nav = (DOCS.parent / "mkdocs.yml").read_text(encoding="utf-8")
    for page in (DOCS / "api").glob("*.md"):
        assert "api/%s" % page.name in nav, page.name


def test_doctested_core_docstrings():
    """The core classes carry runnable examples (run by ``pytest --doctest-modules ember``)."""
    import ember
    from ember.utils.data import DataLoader
    for obj in (ember.nn.Module, ember.optim.SGD, ember.optim.Adam, ember.no_grad,
                ember.autograd.Function, ember.save, ember.load, DataLoader):
        assert ">>>" in inspect.getdoc(obj), obj
