"""Regression tests for differences the r7legacy programs (2017-era PyTorch code) found."""
import warnings

import ember
from ember import _tensor_compat


def _storage_warnings(lib, reset, calls):
    """The TypedStorage warnings ``calls`` raise after ``reset`` (messages, in order)."""
    reset()
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        for call in calls:
            call(lib)
    return [str(w.message) for w in ws if "TypedStorage" in str(w.message)]


def test_typed_storage_warning_once_per_process(torch):
    """torch warns about TypedStorage once (``has_warned``), not at every ``storage()``."""
    calls = [lambda lib: lib.arange(4.).storage().tolist(),
             lambda lib: lib.ones(2).storage().size(),
             lambda lib: lib.FloatStorage(3)]
    got_t = _storage_warnings(torch, torch.storage._reset_warn_typed_storage_removal, calls)
    got_e = _storage_warnings(ember, _tensor_compat._reset_warn_typed_storage_removal, calls)
    assert len(got_t) == 1 and got_e == got_t


def test_legacy_storage_constructor_warns_first(torch):
    """``torch.FloatStorage(3)`` as the first storage use warns, pointing at the caller."""
    calls = [lambda lib: lib.LongStorage([1, 2]), lambda lib: lib.zeros(2).storage()]
    got_t = _storage_warnings(torch, torch.storage._reset_warn_typed_storage_removal, calls)
    got_e = _storage_warnings(ember, _tensor_compat._reset_warn_typed_storage_removal, calls)
    assert len(got_t) == 1 and got_e == got_t
    _tensor_compat._reset_warn_typed_storage_removal()
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        ember.DoubleStorage(2)
    assert ws and ws[0].filename == __file__
