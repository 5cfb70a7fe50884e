"""Discrete Fourier transforms, as ``torch.fft``: fft, ifft, rfft, irfft, hfft, fftn, ...

Example:
    >>> import ember
    >>> ember.fft.rfft(ember.tensor([1., 2., 3., 4.]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j])
"""
from ..ops.fft import (fft, fft2, fftfreq, fftn, fftshift, hfft, hfft2, hfftn, ifft, ifft2,
                       ifftn, ifftshift, ihfft, ihfft2, ihfftn, irfft, irfft2, irfftn, rfft,
                       rfft2, rfftfreq, rfftn)

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]

from ..ops.linalg import _add_out  # noqa: E402

_add_out(globals(), __all__, "fft_")
