"""Fuzz templates for the spectral ops the probe cannot reach: ``stft``, ``istft`` (torch and
Tensor) and ``fft.fftfreq``."""
from .ops import Gen  # noqa: F401  (the argument drawer the templates receive)

__all__ = ["TEMPLATES", "HAND"]


def _finite(g, shape, fill, dt, layout):
    """A tensor of finite values: which outputs of an FFT of inf/NaN come out NaN depends on the
    FFT library's internal order of operations (as for the 2-D FFTs in ops.py)."""
    tame, g.tame = g.tame, True
    try:
        return g.tensor(shape, fill, dtype=dt, layout=layout)
    finally:
        g.tame = tame


def _window(g, n, dt):
    """``window=`` for a transform of ``n_fft``-sample frames: none, one of ``n`` or a wrong
    size."""
    kind = g.pick(["none", "ok", "ok", "bad"])
    if kind == "none":
        return {}
    size = n if kind == "ok" else g.pick([n + 1, 1])
    return {"window": _finite(g, (size,), "pos", dt, "c")}


def _red_stft(g):
    n_fft = 4 if g.probe else g.pick([4, 5, 6, 8])
    length = 12 if g.probe else g.pick([12, 9, 16, 3])
    shape = (length,) if g.probe or g.chance(0.6) else (g.pick([1, 2]), length)
    dt = g.pick(["float64", "float32", "complex128", "complex64"]) if not g.chance(0.08) \
        else g.pick(["int64", "float16"])
    kw = {"return_complex": True}
    if g.chance(0.1):
        kw.pop("return_complex")            # required for real inputs
    elif g.chance(0.1):
        kw["return_complex"] = False        # deprecated: real view of the result
    if g.chance(0.5):
        kw["hop_length"] = g.pick([1, 2, 3, n_fft // 4 or 1, 0])
    win_dt = dt if dt.startswith(("float", "complex")) else "float64"
    if g.chance(0.4):
        win = g.pick([n_fft, n_fft - 1, 2, n_fft + 1])
        kw["win_length"] = win
        kw.update(_window(g, win, win_dt.replace("complex128", "float64")
                          .replace("complex64", "float32")))
    else:
        kw.update(_window(g, n_fft, win_dt.replace("complex128", "float64")
                          .replace("complex64", "float32")))
    if g.chance(0.4):
        kw["center"] = bool(g.chance(0.5))
    if g.chance(0.3):
        kw["pad_mode"] = g.pick(["reflect", "constant", "replicate", "circular"])
    if g.chance(0.3):
        kw["normalized"] = True
    if g.chance(0.3):
        kw["onesided"] = bool(g.chance(0.5))
    return [_finite(g, shape, "u", dt, g.pick(["c", "c", "s"])), n_fft], kw


def _red_istft(g):
    n_fft = 4 if g.probe else g.pick([4, 6, 8, 5])
    onesided = True if g.probe else g.chance(0.7)
    freq = n_fft // 2 + 1 if onesided else n_fft
    if g.chance(0.05):
        freq += 1                                   # a wrong frequency count
    frames = 5 if g.probe else g.pick([3, 5, 7])
    shape = (freq, frames) if g.probe or g.chance(0.6) else (g.pick([1, 2]), freq, frames)
    dt = g.pick(["complex128", "complex64"]) if not g.chance(0.08) else g.pick(["float64"])
    real_dt = "float32" if dt == "complex64" else "float64"
    hop = n_fft // 4 or 1 if g.probe else g.pick([1, 2, n_fft // 4 or 1, n_fft // 2])
    kw = {"hop_length": hop}
    # windows never vanish where frames overlap (else torch's overlap-add check raises)
    win = n_fft
    if g.chance(0.2):
        win = kw["win_length"] = g.pick([n_fft - 1, 2, n_fft + 1])
    if g.chance(0.1):
        kw["hop_length"] = g.pick([0, win + 1])
    if not g.chance(0.15):
        size = win if not g.chance(0.05) else win + 1
        kw["window"] = _finite(g, (size,), "pos", real_dt, "c")
    if g.chance(0.3):
        kw["center"] = False
    if g.chance(0.3):
        kw["normalized"] = True
    if g.chance(0.5):
        kw["onesided"] = onesided
    if g.chance(0.3):
        kw["length"] = g.pick([4, 6, 9, 12])
    if not onesided and g.chance(0.5):
        kw["return_complex"] = True
    return [_finite(g, shape, "u", dt, "c"), n_fft], kw


def _red_fftfreq(g):
    n = 5 if g.probe else g.pick([5, 4, 1, 0, 7, -1])
    if g.chance(0.5):
        return [n, g.pick([1.0, 0.5, 2, 0.1, -3.0])], {}
    if g.chance(0.3):
        return [n], {"d": g.pick([0.25, 3])}
    return [n], {}


TEMPLATES = {"red_stft": _red_stft, "red_istft": _red_istft, "red_fftfreq": _red_fftfreq}
HAND = {("torch", "stft"): ["red_stft"], ("Tensor", "stft"): ["red_stft"],
        ("torch", "istft"): ["red_istft"], ("Tensor", "istft"): ["red_istft"],
        ("fft", "fftfreq"): ["red_fftfreq"]}
