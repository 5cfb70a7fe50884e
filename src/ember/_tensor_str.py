"""Printing tensors the way torch does (precision, scientific mode, summarisation)."""
import math

import numpy as np

__all__ = ["set_printoptions", "get_printoptions"]


class _Opts:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _Opts()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set how tensors print; arguments as ``torch.set_printoptions``."""
    if profile == "default":
        PRINT_OPTS.precision, PRINT_OPTS.threshold = 4, 1000
        PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 3, 80
    elif profile == "short":
        PRINT_OPTS.precision, PRINT_OPTS.threshold = 2, 1000
        PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 2, 80
    elif profile == "full":
        PRINT_OPTS.precision, PRINT_OPTS.threshold = 4, math.inf
        PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 3, 80
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current print options as a dict."""
    return {k: getattr(PRINT_OPTS, k) for k in
            ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")}


class _Formatter:
    def __init__(self, arr):
        self.floating = arr.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if arr.size == 0:
            return
        if not self.floating:
            strs = [str(v) for v in arr.ravel().tolist()]
            self.max_width = max(len(s) for s in strs)
            return
        vals = arr.astype(np.float64).ravel()
        finite = vals[np.isfinite(vals) & (vals != 0)]
        # NOTE: as torch, nan/inf do not widen the columns (only nonzero finite values do).
        if finite.size == 0:
            return
        absv = np.abs(finite)
        lo, hi = absv.min(), absv.max()
        p = PRINT_OPTS.precision
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if self.int_mode:
            if hi / lo > 1000.0 or hi > 1.0e8:
                self.sci_mode = True
                strs = [("{:.%de}" % p).format(v) for v in finite]
            else:
                strs = ["{:.0f}.".format(v) for v in finite]
        else:
            if hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4:
                self.sci_mode = True
                strs = [("{:.%de}" % p).format(v) for v in finite]
            else:
                strs = [("{:.%df}" % p).format(v) for v in finite]
        if PRINT_OPTS.sci_mode is not None:
            self.sci_mode = PRINT_OPTS.sci_mode
            strs = [self.format(v) for v in finite]
        self.max_width = max(self.max_width, max(len(s) for s in strs))

    @staticmethod
    def _special(v):
        return "nan" if v != v else ("inf" if v > 0 else "-inf")

    def width(self):
        return self.max_width

    def format(self, value):
        p = PRINT_OPTS.precision
        if not self.floating:
            s = str(value)
        elif not math.isfinite(value):
            s = self._special(value)
        elif self.sci_mode:
            s = ("{:.%de}" % p).format(value)
        elif self.int_mode:
            s = "{:.0f}".format(value) + "."
        else:
            s = ("{:.%df}" % p).format(value)
        return " " * (self.max_width - len(s)) + s


class _ComplexFormatter:
    """Formats complex values as torch: the real and imaginary parts in their own columns."""

    def __init__(self, arr):
        self.real = _Formatter(arr.real)
        self.imag = _Formatter(arr.imag)

    def width(self):
        return self.real.width() + self.imag.width() + 1    # (+ the "j")

    def format(self, value):
        real_str = self.real.format(value.real)
        imag_str = (self.imag.format(value.imag) + "j").lstrip()
        if imag_str[0] == "+" or imag_str[0] == "-":    # (a sign of its own, also -0.)
            return real_str + imag_str
        return real_str + "+" + imag_str


def _summarize(arr):
    e = PRINT_OPTS.edgeitems
    if arr.ndim == 0:
        return arr
    if arr.shape[0] > 2 * e:
        arr = np.concatenate([arr[:e], arr[-e:]])
    return np.stack([_summarize(a) for a in arr]) if arr.ndim > 1 else arr


def _vector_str(arr, indent, fmt, summarize):
    elem_len = fmt.width() + 2
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / elem_len)))
    e = PRINT_OPTS.edgeitems
    vals = arr.tolist()
    if summarize and len(vals) > 2 * e:
        items = [fmt.format(v) for v in vals[:e]] + [" ..."] + [fmt.format(v) for v in vals[-e:]]
    else:
        items = [fmt.format(v) for v in vals]
    lines = [items[i:i + per_line] for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(", ".join(line) for line in lines) + "]"


def _tensor_str(arr, indent, fmt, summarize):
    if arr.ndim == 0:
        return fmt.format(arr.item())
    if arr.ndim == 1:
        return _vector_str(arr, indent, fmt, summarize)
    e = PRINT_OPTS.edgeitems
    if summarize and arr.shape[0] > 2 * e:
        parts = ([_tensor_str(arr[i], indent + 1, fmt, summarize) for i in range(e)] + ["..."]
                 + [_tensor_str(arr[i], indent + 1, fmt, summarize)
                    for i in range(len(arr) - e, len(arr))])
    else:
        parts = [_tensor_str(arr[i], indent + 1, fmt, summarize) for i in range(arr.shape[0])]
    sep = "," + "\n" * (arr.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(parts) + "]"


def tensor_repr(t, prefix="tensor("):
    """The text of ``repr(t)``."""
    from .dtypes import get_default_dtype, default_complex_dtype, int64, bool as bool_
    from .backend import to_host
    meta = t.is_meta
    arr = t._array.view(np.ndarray) if meta else to_host(t._array)    # (meta: no values)
    if meta:
        suffixes = ["device='meta'", "size=" + str(tuple(arr.shape))]
        if t.dtype is not get_default_dtype():
            suffixes.append("dtype=" + repr(t.dtype))
        return _add_suffixes(prefix + "...", suffixes + _grad_suffix(t), len(prefix))
    if arr.dtype.kind == "V":     # bfloat16: its values are exact in float32
        arr = arr.astype(np.float32)
    indent = len(prefix)
    suffixes = []
    if type(t._array) is not type(arr):
        suffixes.append("device='%s'" % t.device)
    if arr.size == 0 and arr.shape != (0,):
        body = "[]"
        suffixes.append("size=" + str(tuple(arr.shape)))
    elif arr.size == 0:
        body = "[]"
    else:
        summarize = arr.size > PRINT_OPTS.threshold
        shown = _summarize(arr) if summarize else arr
        fmt = _ComplexFormatter(shown) if arr.dtype.kind == "c" else _Formatter(shown)
        body = _tensor_str(arr, indent, fmt, summarize)
    d = t.dtype
    default = get_default_dtype()
    if d is not default and d is not int64 and d is not bool_ and \
            d is not default_complex_dtype():
        suffixes.append("dtype=" + repr(d))
    elif arr.size == 0 and d is not default:
        suffixes.append("dtype=" + repr(d))
    return _add_suffixes(prefix + body, suffixes + _grad_suffix(t), indent)


def _grad_suffix(t):
    if t.grad_fn is not None:
        return ["grad_fn=<%s>" % type(t.grad_fn).__name__]
    return ["requires_grad=True"] if t._requires_grad else []


def _add_suffixes(text, suffixes, indent):
    """Append ``, dtype=...`` etc., wrapping onto a new line past the line width as torch does."""
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)
