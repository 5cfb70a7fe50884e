"""Pooling layers: MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool1d/2d, AdaptiveMaxPool1d/2d."""
from .. import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d"]


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return ("kernel_size={}, stride={}, padding={}, dilation={}, ceil_mode={}"
                .format(self.kernel_size, self.stride, self.padding, self.dilation,
                        self.ceil_mode))


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling over ``(N, C, L)``."""

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling over ``(N, C, H, W)``; ties go to the first maximum, as torch."""

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool1d(Module):
    """1-D average pooling over ``(N, C, L)``."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = (kernel_size,) if isinstance(kernel_size, int) else tuple(kernel_size)
        stride = kernel_size if stride is None else stride
        self.stride = (stride,) if isinstance(stride, int) else tuple(stride)
        self.padding = (padding,) if isinstance(padding, int) else tuple(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return "kernel_size={}, stride={}, padding={}".format(self.kernel_size, self.stride,
                                                              self.padding)


class AvgPool2d(Module):
    """2-D average pooling over ``(N, C, H, W)``."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return "kernel_size={}, stride={}, padding={}".format(self.kernel_size, self.stride,
                                                              self.padding)


class _AdaptiveNd(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self):
        return "output_size={}".format(self.output_size)


class AdaptiveAvgPool1d(_AdaptiveNd):
    """Average over ``output_size`` near-equal bins of ``(N, C, L)``."""

    def __init__(self, output_size):
        super().__init__(output_size)
        del self.return_indices

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(AdaptiveAvgPool1d):
    """Average over ``output_size`` near-equal bins per spatial dim of ``(N, C, H, W)``."""

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveMaxPool1d(_AdaptiveNd):
    """Maximum over ``output_size`` near-equal bins of ``(N, C, L)``."""

    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveNd):
    """Maximum over ``output_size`` near-equal bins per spatial dim of ``(N, C, H, W)``."""

    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)
