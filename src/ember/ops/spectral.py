"""Short-time Fourier transforms: ``stft`` (frames of a signal, windowed, transformed) and
``istft`` (its inverse by windowed overlap-add), composed of differentiable ops as torch's."""
import warnings

from .. import dtypes as _dt
from ..tensor import Tensor
from . import fft as _fft
from .complex import view_as_real
from .creation import arange, ones, zeros
from .padding import pad_nd
from .scatter import index_add, unfold
from .shape import cat

__all__ = ["stft", "istft"]


def _legacy(t):
    return "torch.%s" % t.dtype._legacy


def _padded_window(window, win_length, n_fft, dtype, device):
    if window is None:
        window = ones(win_length, dtype=dtype, device=device)
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        z = zeros(n_fft, dtype=window.dtype, device=device)
        window = cat([z[:left], window, z[left + win_length:]])
    return window


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None, *,
         align_to_window=None):
    """The short-time Fourier transform: ``(..., n_fft // 2 + 1 or n_fft, frames)``, frame
    ``t`` the FFT of ``input[t * hop_length : t * hop_length + n_fft] * window``."""
    if not isinstance(input, Tensor):
        raise TypeError("stft(): argument 'input' (position 1) must be Tensor, not %s"
                        % type(input).__name__)
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:      # (torch pads in Python, as a 3-D batch, before its kernel)
        nd = input.dim()
        p = int(n_fft // 2)
        input = pad_nd(input.view([1] * (3 - nd) + list(input.shape)), [p, p], pad_mode)
        input = input.view(input.shape[-nd:] if nd else input.shape)
    return _stft(input, n_fft, hop_length, win_length, window, normalized, onesided,
                 return_complex, align_to_window)


def _stft(x, n_fft, hop_length, win_length, window, normalized, onesided, return_complex,
          align_to_window):
    """torch's ``_VF.stft`` (no centring)."""
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which is "
                      "known to cause spectral leakage. Other windows such as "
                      "torch.hann_window or torch.hamming_window are recommended to reduce "
                      "spectral leakage.To suppress this warning and use a rectangular window, "
                      "explicitly set `window=torch.ones(n_fft, device=<device>)`.",
                      UserWarning, stacklevel=3)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length

    def fail(what):
        raise RuntimeError(
            "stft(%s[%s], n_fft=%d, hop_length=%d, win_length=%d, window=%s, normalized=%d, "
            "onesided=%s, return_complex=%s, align_to_window=%s) : %s"
            % (_type_str(x), ", ".join(str(d) for d in x.shape), n_fft, hop, win,
               "None" if window is None else "%s{%s}" % (_type_str(window), list(window.shape)),
               normalized, "None" if onesided is None else int(onesided),
               "None" if return_complex is None else int(return_complex),
               "None" if align_to_window is None else int(align_to_window), what))
    complex_out = return_complex if return_complex is not None else (
        x.is_complex() or (window is not None and window.is_complex()))
    if not complex_out:
        if return_complex is None:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in "
                               "a future PyTorch release.")
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch "
                      "release, stft will return complex tensors for all inputs, and "
                      "return_complex=False will raise an error.\nNote: you can still call "
                      "torch.view_as_real on the complex output to recover the old return "
                      "format.", UserWarning, stacklevel=3)
    if x._array.dtype.kind not in "fcV":
        fail("expected a tensor of floating point or complex values")
    if x.dim() not in (1, 2):
        fail("expected a 1D or 2D tensor")
    frames_in = x.unsqueeze(0) if x.dim() == 1 else x
    n = frames_in.shape[1]
    if n_fft <= 0 or n_fft > n:
        fail("expected 0 < n_fft < %d, but got n_fft=%d" % (n, win))    # (sic: torch's)
    if hop <= 0:
        fail("expected hop_length > 0, but got hop_length=%d" % hop)
    if win <= 0 or win > n_fft:
        fail("expected 0 < win_length <= n_fft, but got win_length=%d" % win)
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        fail("expected a 1D window tensor of size equal to win_length=%d, but got window with "
             "size %s" % (win, list(window.shape)))
    if align_to_window:     # (frame t's window starts at t * hop_length)
        left = (n_fft - win) // 2
        frames_in = pad_nd(frames_in, [left, left]) if left else frames_in
        rows, cols = frames_in.shape
        count = 1 + (n - win) // hop
        need = (rows - 1) * cols + (count - 1) * hop + n_fft
        if need > rows * cols:      # (torch's as_strided reads past the padded signal)
            size = frames_in._array.dtype.itemsize
            raise RuntimeError("setStorage: sizes [%d, %d, %d], strides [%d, %d, 1], storage "
                               "offset 0, and itemsize %d requiring a storage size of %d are "
                               "out of bounds for storage of size %d"
                               % (rows, count, n_fft, cols, hop, size, need * size,
                                  rows * cols * size))
    frames = unfold(frames_in, -1, n_fft, hop)                   # (B, frames, n_fft)
    if window is not None or win < n_fft:
        frames = frames * _padded_window(window, win, n_fft, x.dtype, x.device)
    if frames._array.dtype.itemsize == 2 and frames._array.dtype.kind in "fV":
        raise RuntimeError("MKL FFT doesn't support tensors of type: %s"
                           % _dt.scalar_type_name(frames._array.dtype))
    complex_fft = frames.is_complex()
    one = (not complex_fft) if onesided is None else onesided
    if complex_fft and one:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spec = _fft.rfft(frames, dim=-1, norm=norm) if one else _fft.fft(frames, dim=-1, norm=norm)
    spec.transpose_(1, 2)       # (in place, as torch: TransposeBackward1, SqueezeBackward4)
    if x.dim() == 1:
        spec.squeeze_(0)
    return spec if complex_out else view_as_real(spec)


def _type_str(t):
    """torch's ``Tensor::toString()``: ``CPUComplexFloatType`` or ``torch.FloatTensor``."""
    if t.is_complex():
        return "CPU%sType" % _dt.scalar_type_name(t._array.dtype)
    return _legacy(t)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """The inverse of ``stft``: the signal whose windowed frames transform to ``input``,
    by overlap-add divided by the summed squared window."""
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied.Please "
                      "provide the same window used by stft to make the inversion lossless.To "
                      "suppress this warning and use a rectangular window, explicitly set "
                      "`window=torch.ones(n_fft, device=<device>)`.", UserWarning, stacklevel=2)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")

    def fail(what):
        raise RuntimeError(
            "istft(%s[%s], n_fft=%d, hop_length=%d, win_length=%d, window=%s, center=%d, "
            "normalized=%d, onesided=%s, length=%s, return_complex=%d) %s"
            % (_type_str(input), ", ".join(str(d) for d in input.shape), n_fft, hop, win,
               "None" if window is None else "%s{%s}" % (_type_str(window), list(window.shape)),
               center, normalized, "None" if onesided is None else int(onesided),
               "None" if length is None else length, return_complex, what))
    nd = input.dim()
    if nd < 2:     # (torch reads the sizes of the real view first)
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but "
                         "got %d)" % (-(nd + 1), nd, -(nd + 2)))
    n_freq, n_frames = input.shape[-2], input.shape[-1]
    if input.numel() == 0:
        fail(": input tensor cannot be empty.")
    if nd not in (2, 3):
        fail(": expected a tensor with 3 or 4 dimensions, but got %d" % (nd + 1))
    one = (n_freq != n_fft) if onesided is None else onesided
    if one and n_freq != n_fft // 2 + 1:
        fail(": expected the frequency dimension (3rd to the last) of the input tensor to match "
             "n_fft / 2 + 1 when onesided=True, but got %d" % n_freq)
    if not one and n_freq != n_fft:
        fail(": expected the frequency dimension (3rd to the last) of the input tensor to match "
             "n_fft when onesided=False, but got %d" % n_freq)
    if not 0 < hop <= win:
        fail(": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        fail(": expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        fail(": Invalid window shape. window has to be 1D and length of `win_length`")
    spec = input if nd == 3 else input.unsqueeze(0)
    w = _padded_window(window, win, n_fft, spec.real.dtype, spec.device)
    norm = "ortho" if normalized else "backward"
    frames = spec.transpose(-1, -2)                              # (B, frames, freq)
    if return_complex:
        if one:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        y = _fft.ifft(frames, n=n_fft, dim=-1, norm=norm)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not one:     # (torch keeps the first half only)
            frames = frames[..., :n_fft // 2 + 1]
        y = _fft.irfft(frames, n=n_fft, dim=-1, norm=norm)
    y = y * w                                                    # (B, frames, n_fft)
    total = n_fft + hop * (n_frames - 1)
    pos = (arange(n_frames, device=spec.device).unsqueeze(1) * hop
           + arange(n_fft, device=spec.device)).reshape(-1)
    out = zeros((y.shape[0], total), dtype=y.dtype, device=y.device)
    out = index_add(out, 1, pos, y.reshape(y.shape[0], -1))
    env = index_add(zeros(total, dtype=w.dtype, device=w.device), 0, pos,
                    (w * w).expand(n_frames, n_fft).reshape(-1))
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (total - n_fft // 2 if center else total)
    out, env = out[:, start:min(end, total)], env[start:min(end, total)]
    if env.numel() == 0:
        raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() == "
                           "0. Specify the reduction dim with the 'dim' argument.")
    if bool((env.abs() < 1e-11).any()):
        fail("window overlap add min: 1\n[ CPUBoolType{} ]")
    out = out / env
    if end > total:
        warnings.warn("The length of signal is shorter than the length parameter. Result is "
                      "being padded with zeros in the tail. Please check your center and "
                      "hop_length settings.", UserWarning, stacklevel=2)
        out = cat([out, zeros((out.shape[0], end - total), dtype=out.dtype,
                              device=out.device)], -1)
    return out if nd == 3 else out.squeeze(0)
