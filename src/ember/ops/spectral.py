"""Short-time Fourier transforms: ``stft`` (frames of a signal, windowed, transformed) and
``istft`` (its inverse by windowed overlap-add), composed of differentiable ops as torch's."""
import warnings

from ..tensor import Tensor
from . import fft as _fft
from .complex import view_as_complex, view_as_real
from .creation import arange, ones, zeros
from .padding import Pad
from .scatter import index_add, unfold
from .shape import cat

__all__ = ["stft", "istft"]


def _legacy(t):
    return "torch.%s" % t.dtype._legacy


def _pad(x, pad, mode):
    """``x`` padded by ``pad`` samples either side of its last dim (``F.pad``'s modes)."""
    n = x.shape[-1]
    if mode == "reflect" and pad >= n:
        raise RuntimeError("Argument #4: Padding size should be less than the corresponding "
                           "input dimension, but got: padding (%d, %d) at dimension %d of "
                           "input %s" % (pad, pad, x.dim() - 1, list(x.shape)))
    return Pad.apply(x, [(0, 0)] * (x.dim() - 1) + [(pad, pad)], mode, 0, 1)


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
    complex_in = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None:
        if not complex_in:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in "
                               "a future PyTorch release.")
        return_complex = True
    if not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch "
                      "release, stft will return complex tensors for all inputs, and "
                      "return_complex=False will raise an error.\nNote: you can still call "
                      "torch.view_as_real on the complex output to recover the old return "
                      "format.", UserWarning, stacklevel=2)
    if input.dim() not in (1, 2):
        raise RuntimeError("stft: expected a 1D or 2D tensor, but got %dD tensor"
                           % input.dim())
    x = input
    if center:
        if x.dim() == 1:
            x = _pad(x.unsqueeze(0), n_fft // 2, pad_mode).squeeze(0)
        else:
            x = _pad(x, n_fft // 2, pad_mode)
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    n = x.shape[-1]

    def fail(what):
        raise RuntimeError(
            "stft(%s[%s], n_fft=%d, hop_length=%d, win_length=%d, window=%s, normalized=%d, "
            "onesided=%s, return_complex=%d, align_to_window=%s) : %s"
            % (_legacy(x), ", ".join(str(d) for d in x.shape), n_fft, hop, win,
               "None" if window is None else "%s{%s}" % (_legacy(window), list(window.shape)),
               normalized, "None" if onesided is None else int(onesided), return_complex,
               align_to_window, what))
    if n_fft <= 0 or n_fft > n:
        fail("expected 0 < n_fft < %d, but got n_fft=%d" % (n, n_fft))
    if hop <= 0:
        fail("expected hop_length > 0, but got hop_length=%d" % hop)
    if win <= 0 or win > n_fft:
        fail("expected 0 < win_length <= n_fft, but got win_length=%d" % win)
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        fail("expected a 1D window tensor of size equal to win_length=%d, but got window with "
             "size %s" % (win, list(window.shape)))
    w = _padded_window(window, win, n_fft, x.dtype if not x.is_complex() else
                       x.real.dtype, x.device)
    frames = unfold(x, -1, n_fft, hop) * w                       # (..., frames, n_fft)
    one = (not complex_in) if onesided is None else onesided
    if one and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spec = _fft.rfft(frames, dim=-1, norm=norm) if one else _fft.fft(frames, dim=-1, norm=norm)
    spec = spec.transpose(-1, -2)
    return spec if return_complex else view_as_real(spec)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """The inverse of ``stft``: the signal whose windowed frames transform to ``input``,
    by overlap-add divided by the summed squared window."""
    if not input.is_complex():
        if input.dim() >= 1 and input.shape[-1] == 2:
            input = view_as_complex(input)
        else:
            raise RuntimeError("istft requires a complex-valued input tensor.")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    batched = input.dim() == 3
    spec = input if batched else input.unsqueeze(0)
    n_freq, n_frames = spec.shape[-2], spec.shape[-1]
    one = (n_freq != n_fft) if onesided is None else onesided
    if one and n_freq != n_fft // 2 + 1:
        raise RuntimeError("istft: expected the frequency dimension (3rd to the last) of the "
                           "input tensor to match n_fft / 2 + 1 when onesided=True, but got %d"
                           % n_freq)
    real_dtype = spec.real.dtype
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied.Please "
                      "provide the same window used by stft to make the inversion lossless.To "
                      "suppress this warning and use a rectangular window, explicitly set "
                      "`window=torch.ones(n_fft, device=<device>)`.", UserWarning, stacklevel=2)
    w = _padded_window(window, win, n_fft, real_dtype, spec.device)
    norm = "ortho" if normalized else "backward"
    frames = spec.transpose(-1, -2)
    if one:
        y = _fft.irfft(frames, n=n_fft, dim=-1, norm=norm)
    else:
        y = _fft.ifft(frames, n=n_fft, dim=-1, norm=norm)
        if not return_complex:
            y = y.real
    y = y * w                                                    # (B, frames, n_fft)
    total = n_fft + hop * (n_frames - 1)
    pos = (arange(n_frames, device=spec.device).unsqueeze(1) * hop
           + arange(n_fft, device=spec.device)).reshape(-1)
    out = zeros((y.shape[0], total), dtype=y.dtype, device=y.device)
    out = index_add(out, 1, pos, y.reshape(y.shape[0], -1))
    env = index_add(zeros(total, dtype=w.dtype, device=w.device), 0, pos,
                    (w * w).expand(n_frames, n_fft).reshape(-1))
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0) if length is None else start + length
    end = min(end, total)
    out, env = out[:, start:end], env[start:end]
    if bool((env.abs() < 1e-11).any()):
        raise RuntimeError("istft(...) window overlap add min: %g" % env.abs().min().item())
    out = out / env
    if length is not None and out.shape[-1] < length:
        out = cat([out, zeros((out.shape[0], length - out.shape[-1]), dtype=out.dtype,
                              device=out.device)], -1)
    return out if batched else out.squeeze(0)
