"""``assert_close``: tensors, NumPy arrays, numbers, sequences and mappings compared as torch
does, with torch's default tolerances per dtype and its failure messages."""
import collections.abc
import warnings

import numpy as np

from .. import dtypes as _dt
from ..ops import tensor as _tensor
from ..tensor import Size, Tensor

# (rtol, atol) by dtype, as torch.testing; integer and bool dtypes compare exactly
_TOLERANCES = {
    _dt.float16: (1e-3, 1e-5), _dt.bfloat16: (1.6e-2, 1e-5), _dt.float32: (1.3e-6, 1e-5),
    _dt.float64: (1e-7, 1e-7), _dt.complex32: (1e-3, 1e-5), _dt.complex64: (1.3e-6, 1e-5),
    _dt.complex128: (1e-7, 1e-7),
}


class _Mismatch(Exception):
    def __init__(self, msg, cls=AssertionError):
        super().__init__(msg)
        self.cls = cls


def _tolerances(*dts):
    rtols, atols = zip(*(_TOLERANCES.get(d, (0.0, 0.0)) for d in dts))
    return max(rtols), max(atols)


def _diff_msg(kind, diff, idx):
    msg = ("%s difference: %s" % (kind.title(), diff) if idx is None
           else "Greatest %s difference: %s at index %s" % (kind, diff, idx))
    return msg


def _mismatch_msg(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0

    def _diff(kind, diff, idx, tol):
        out = _diff_msg(kind, diff, idx)
        return out + ("" if equality else " (up to %s allowed)" % tol) + "\n"
    msg = "%s are not %s!\n\n" % (identifier, "equal" if equality else "close")
    if extra:
        msg += extra.strip() + "\n"
    msg += _diff("absolute", abs_diff, abs_idx, atol)
    msg += _diff("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _is_number(x):
    return isinstance(x, (bool, int, float, complex, np.number, np.bool_))


def _type_repr(x):
    """``type(x)`` as torch's message prints it (ember's Tensor is ``torch.Tensor`` there)."""
    return "<class 'torch.Tensor'>" if type(x) is Tensor else str(type(x))


def _as_tensor(x):
    return x if isinstance(x, Tensor) else _tensor(x)


def _check_attrs(a, e, check_device, check_dtype, check_layout, check_stride):
    def fail(attr, x, y):
        raise _Mismatch("The values for attribute '%s' do not match: %s != %s." % (attr, x, y))
    if a.shape != e.shape:
        fail("shape", Size(a.shape), Size(e.shape))
    if check_device and a.device != e.device:
        fail("device", a.device, e.device)
    if check_dtype and a.dtype != e.dtype:
        fail("dtype", a.dtype, e.dtype)
    if check_layout and a.layout != e.layout:
        fail("layout", a.layout, e.layout)
    if check_stride and a.stride() != e.stride():
        fail("stride()", a.stride(), e.stride())


def _compare_tensors(a, e, rtol, atol, equal_nan, flags):
    _check_attrs(a, e, *flags)
    a_arr, e_arr = a.detach().cpu()._array, e.detach().cpu()._array    # host: comparison
    if a.dtype != e.dtype:
        common = _dt.promote_types(a.dtype, e.dtype).np
        a_arr, e_arr = a_arr.astype(common), e_arr.astype(common)
    if rtol is None:
        rtol, atol = _tolerances(a.dtype, e.dtype)
    if a_arr.dtype.kind == "V":             # (bfloat16: compared in float32)
        fa, fe = a_arr.astype(np.float32), e_arr.astype(np.float32)
    elif a_arr.dtype.kind in "fc":
        fa, fe = a_arr, e_arr
    else:
        fa, fe = a_arr.astype(np.int64), e_arr.astype(np.int64)
    with np.errstate(all="ignore"):
        if fa.dtype.kind in "fc":
            matches = np.isclose(fa, fe, rtol=rtol, atol=atol, equal_nan=equal_nan)
            # (torch: an inf matches only the same inf, whatever the tolerance)
            both_inf = np.isinf(fa) & np.isinf(fe)
            matches = np.where(both_inf, fa == fe, matches)
        else:
            matches = np.abs(fa - fe) <= atol + rtol * np.abs(fe)
        if matches.all():
            return
        if not matches.shape:        # (0-d: torch words it as two scalars)
            x, y = fa.item(), fe.item()
            rel = float("inf") if y == 0 else abs(x - y) / abs(y)
            raise _Mismatch(_mismatch_msg("Scalars", "Expected %s but got %s." % (y, x),
                                          abs(x - y), None, atol, rel, None, rtol))
        total = matches.size
        bad = total - int(matches.sum())
        extra = "Mismatched elements: %d / %d (%.1f%%)" % (bad, total, 100.0 * bad / total)
        abs_diff = np.abs(fa - fe).reshape(-1)
        abs_diff[matches.reshape(-1)] = 0
        rel_diff = abs_diff / np.abs(fe).reshape(-1)
        rel_diff[matches.reshape(-1)] = 0
    ai, ri = _argmax(abs_diff), _argmax(rel_diff)
    raise _Mismatch(_mismatch_msg(
        "Tensor-likes", extra, abs_diff[ai].item(), _unravel(ai, matches.shape), atol,
        rel_diff[ri].item(), _unravel(ri, matches.shape), rtol))


def _argmax(v):
    nans = np.isnan(v)
    return int(np.argmax(nans)) if nans.any() else int(np.argmax(v))


def _unravel(i, shape):
    return tuple(int(k) for k in np.unravel_index(i, shape)) if shape else ()


def _compare_numbers(a, e, rtol, atol, equal_nan):
    if rtol is None:
        kinds = {type(a), type(e)}
        if complex in kinds or any(isinstance(x, np.complexfloating) for x in (a, e)):
            rtol, atol = _TOLERANCES[_dt.complex128]
        elif float in kinds or any(isinstance(x, np.floating) for x in (a, e)):
            rtol, atol = _TOLERANCES[_dt.float64]
        else:
            rtol, atol = 0.0, 0.0
    if a == e or (equal_nan and a != a and e != e):
        return
    abs_diff = abs(a - e)
    if abs_diff <= atol + rtol * abs(e) and abs_diff == abs_diff:
        return
    rel_diff = float("inf") if e == 0 else abs_diff / abs(e)
    raise _Mismatch(_mismatch_msg("Scalars", "Expected %s but got %s." % (e, a), abs_diff, None,
                                  atol, rel_diff, None, rtol))


def _compare(a, e, path, rtol, atol, equal_nan, flags):
    try:
        if a is None and e is None:
            return
        tensor_like = (Tensor, np.ndarray)
        if isinstance(a, tensor_like) and isinstance(e, tensor_like):
            return _compare_tensors(_as_tensor(a), _as_tensor(e), rtol, atol, equal_nan, flags)
        if _is_number(a) and _is_number(e):
            if flags[1] and type(a) is not type(e) and {type(a), type(e)} <= {int, float, complex}:
                raise _Mismatch("The (d)types do not match: %s != %s." % (type(a), type(e)))
            return _compare_numbers(a, e, rtol, atol, equal_nan)
        strings = isinstance(a, str) or isinstance(e, str)
        if not strings and (isinstance(a, collections.abc.Sequence)
              and isinstance(e, collections.abc.Sequence)):
            if len(a) != len(e):
                raise _Mismatch("The length of the sequences mismatch: %d != %d"
                                % (len(a), len(e)))
            for i, (x, y) in enumerate(zip(a, e)):
                _compare(x, y, path + [i], rtol, atol, equal_nan, flags)
            return
        if (isinstance(a, collections.abc.Mapping)
              and isinstance(e, collections.abc.Mapping)):
            ka, ke = set(a.keys()), set(e.keys())
            if ka != ke:
                msg = "The keys of the mappings do not match:\n"
                if ke - ka:
                    msg += "Missing keys in the actual mapping: %s\n" % sorted(ke - ka, key=repr)
                if ka - ke:
                    msg += ("Additional keys in the actual mapping: %s\n"
                            % sorted(ka - ke, key=repr))
                raise _Mismatch(msg.strip())
            for k in sorted(ke, key=repr) if _sortable(ke) else list(e.keys()):
                _compare(a[k], e[k], path + [k], rtol, atol, equal_nan, flags)
            return
        raise _Mismatch("No comparison pair was able to handle inputs of type %s and %s."
                        % (_type_repr(a), _type_repr(e)), TypeError)
    except _Mismatch as m:
        if path and m.cls is AssertionError and not getattr(m, "located", False):
            msg = "%s\n\nThe failure occurred for item %s" % (
                m.args[0], "".join("[%r]" % p for p in path))
            m2 = _Mismatch(msg)
            m2.located = True
            raise m2 from None
        raise


def _sortable(keys):
    try:
        sorted(keys)
        return True
    except TypeError:
        return False


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Raise ``AssertionError`` unless ``actual`` and ``expected`` are close:
    ``|actual - expected| <= atol + rtol * |expected|`` elementwise, with torch's default
    ``rtol``/``atol`` for the dtypes when both are omitted, and equal shapes, devices, dtypes."""
    __tracebackhide__ = True
    if (rtol is None) ^ (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         "no %s." % ("atol" if atol is None else "rtol"))
    try:
        _compare(actual, expected, [], rtol, atol, equal_nan,
                 (check_device, check_dtype, check_layout, check_stride))
    except _Mismatch as m:
        text = m.args[0]
        if m.cls is AssertionError and msg is not None:
            text = msg(text) if callable(msg) else msg
        raise m.cls(text) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated form of ``assert_close`` (NaNs equal, dtypes may differ)."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
                  "removed in a future release. Please use `torch.testing.assert_close()` "
                  "instead.", FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = _tensor(actual)
    if not isinstance(expected, Tensor):
        expected = _tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _tolerances(actual.dtype, expected.dtype)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)
