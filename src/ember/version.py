"""``torch.version``: the PyTorch API level ember follows, and what ember is built with (no CUDA
or ROCm build; CuPy supplies the GPU).

``__version__`` is torch's version string with ember's own as the local label, so code that
checks ``torch.__version__`` (``version.parse(torch.__version__) >= version.parse("2.0")``,
``torch.__version__ >= (2, 1)``, ``torch.__version__.split("+")[0]``) takes its modern branch.
``ember`` is ember's own release.
"""
import re

ember = "0.1.0"
torch_api = "2.13.0"


class TorchVersion(str):
    """A version string that compares with version strings and tuples, as torch's does."""

    @staticmethod
    def _key(v, n):
        """(release padded to ``n`` numbers, local label) of a version string or tuple."""
        if isinstance(v, (tuple, list)):
            rel, local = tuple(int(x) for x in v), ""
        else:
            m = re.match(r"\s*v?(\d+(?:\.\d+)*)[^+]*(?:\+(.*))?$", str(v))
            if m is None:
                raise ValueError("Invalid version: %r" % (v,))
            rel, local = tuple(int(x) for x in m.group(1).split(".")), m.group(2) or ""
        return rel + (0,) * (n - len(rel)), local

    def _cmp(self, other):
        if not isinstance(other, (str, tuple, list)):
            return NotImplemented
        n = 8
        a, b = self._key(self, n), self._key(other, n)
        return (a > b) - (a < b)     # (a local label sorts after the plain release, PEP 440)

    def __lt__(self, other):
        return self._cmp(other) < 0

    def __le__(self, other):
        return self._cmp(other) <= 0

    def __gt__(self, other):
        return self._cmp(other) > 0

    def __ge__(self, other):
        return self._cmp(other) >= 0

    def __eq__(self, other):
        try:
            c = self._cmp(other)
        except ValueError:
            return False
        return c if c is NotImplemented else c == 0

    __hash__ = str.__hash__


__version__ = TorchVersion("%s+ember.%s" % (torch_api, ember))
cuda = None
hip = None
rocm = None
xpu = None
debug = False
git_version = "unknown"
