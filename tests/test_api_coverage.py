"""Issue 18's count: the share of torch's user-facing names (in the issue's scope, see
tests/api_coverage.py) that ember resolves, per namespace. The names still missing are listed
here; a name that becomes available must be removed from the list (and one that goes missing
fails the test)."""
import pytest

from api_coverage import count

torch = pytest.importorskip("torch")

# In scope and not (yet) in ember, with why.
STILL_MISSING = {
    "torch.*": set(),
    "Tensor methods": set(),
    "torch.linalg": set(),
    "torch.fft": set(),
    "torch.special": set(),
    "torch.nn.functional": set(),
    "torch.nn": set(),
}


@pytest.mark.parametrize("label", sorted(STILL_MISSING))
def test_coverage(label):
    import ember
    have, total, missing = count(torch, ember)[label]
    assert set(missing) == STILL_MISSING[label], (
        "now missing: %s; now present (remove from STILL_MISSING): %s"
        % (sorted(set(missing) - STILL_MISSING[label]),
           sorted(STILL_MISSING[label] - set(missing))))
    assert have == total - len(missing)
