"""``ember.__version__`` says the torch API level it follows and compares as torch's does."""
import operator

import pytest

import ember

OTHERS = ["2.0", "2.13", "2.13.0", "2.13.1", "2.14", "1.13.1", "3", (2, 0), (2, 13), (2, 13, 0),
          (2, 14), [1, 9]]


def test_version_follows_torch_api():
    assert ember.__version__.split("+")[0] == "2.13.0"
    assert ember.version.ember in ember.__version__
    assert isinstance(ember.__version__, str)


@pytest.mark.parametrize("other", OTHERS, ids=str)
def test_version_compares_as_torch(torch, other):
    e, t = ember.__version__, torch.__version__
    assert t.split("+")[0] == e.split("+")[0]
    assert "+" in t
    for op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne):
        assert op(e, other) == op(t, other), (op, other)


def test_version_parses_with_packaging():
    version = pytest.importorskip("packaging.version")
    assert version.parse(ember.__version__) >= version.parse("2.0")
    assert version.parse(ember.__version__).release == (2, 13, 0)
