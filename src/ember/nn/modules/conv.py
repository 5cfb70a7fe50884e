"""Convolution layers: Conv1d/2d/3d, ConvTranspose1d/2d/3d and their Lazy variants."""
import math

from ...ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "Conv3d", "ConvTranspose3d",
           "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
           "LazyConvTranspose3d"]


def _ntuple(v, n):
    if isinstance(v, (list, tuple)):
        return tuple(v)
    return (v,) * n


class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding",
                     "in_channels", "out_channels", "kernel_size"]
    _nd = 2
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", output_padding=0, device=None,
                 dtype=None):
        super().__init__()
        nd = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        # (sets, as torch's: the messages print them in the interpreter's hash order)
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError("Invalid padding string %r, should be one of %s"
                                 % (padding, valid_padding_strings))
            if padding == "same" and any(s != 1 for s in _ntuple(stride, nd)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError("padding_mode must be one of %s, but got padding_mode='%s'"
                             % (valid_padding_modes, padding_mode))
        if padding_mode != "zeros" and self._transposed:
            raise ValueError('Only "zeros" padding mode is supported for %s'
                             % type(self).__name__)
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(kernel_size, nd)
        self.stride = _ntuple(stride, nd)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, nd)
        self.dilation = _ntuple(dilation, nd)
        self.transposed = self._transposed
        self.output_padding = _ntuple(output_padding, nd)
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's argument for the non-zeros modes: (left, right) per dim, last dim first
        pairs = []
        for d, k, p in zip(self.dilation, self.kernel_size,
                           (0,) * nd if padding == "valid" else _ntuple(padding, nd)):
            total = d * (k - 1) if padding == "same" else 2 * p
            pairs.append((total // 2, total - total // 2))
        flat = [v for pair in reversed(pairs) for v in pair]    # (a list for 'same'/'valid')
        self._reversed_padding_repeated_twice = flat if isinstance(padding, str) else tuple(flat)
        if self._transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(empty(shape, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _conv_forward(self, input, weight, bias):
        """The convolution of ``input`` with ``weight``/``bias`` under this layer's geometry
        (subclasses pass a transformed weight, e.g. weight standardization)."""
        conv = (F.conv1d, F.conv2d, F.conv3d)[self._nd - 1]
        if self.padding_mode != "zeros":
            return conv(F.pad(input, self._reversed_padding_repeated_twice,
                              mode=self.padding_mode),
                        weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self):
        nd = self._nd
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * nd:
            s += ", padding={padding}"
        if self.dilation != (1,) * nd:
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * nd:
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**{k: getattr(self, k) for k in (
            "in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation",
            "output_padding", "groups", "padding_mode")})


class Conv1d(_ConvNd):
    """1-D convolution over ``(N, C_in, L)``.

    Shape:
        Input ``(N, C_in, L)`` or ``(C_in, L)``; output ``(N, C_out, L_out)``.
    """

    _nd = 1

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, dtype=dtype)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv2d(_ConvNd):
    """2-D convolution over ``(N, C_in, H, W)`` (one GEMM over an im2col view).

    Weights and bias start from torch's default: kaiming-uniform with ``a=sqrt(5)``, i.e.
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)).

    Shape:
        Input ``(N, C_in, H, W)`` or ``(C_in, H, W)``; output ``(N, C_out, H_out, W_out)``.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, dtype=dtype)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if isinstance(padding, str):
            raise ValueError("padding=%r is not supported by %s" % (padding, type(self).__name__))
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, output_padding, dtype=dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size,
                        num_spatial_dims, dilation=None):
        if output_size is None:
            return tuple(self.output_padding)
        nd = num_spatial_dims
        n_lead = 2 if input.dim() == nd + 2 else 1
        if len(output_size) == n_lead + nd:
            output_size = output_size[n_lead:]
        if len(output_size) != nd:
            raise ValueError(
                f"ConvTranspose{nd}D: for {input.dim()}D input, output_size must have {nd} "
                f"or {n_lead + nd} elements (got {len(output_size)})")
        min_sizes, max_sizes = [], []
        for a in range(nd):
            n = input.size(a + n_lead)
            d = dilation[a] if dilation is not None else 1
            min_sizes.append((n - 1) * stride[a] - 2 * padding[a] + d * (kernel_size[a] - 1) + 1)
            max_sizes.append(min_sizes[a] + stride[a] - 1)
        for a in range(len(output_size)):
            if output_size[a] < min_sizes[a] or output_size[a] > max_sizes[a]:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range "
                    f"from {min_sizes} to {max_sizes} (for an input of {input.size()[2:]})")
        return [output_size[a] - min_sizes[a] for a in range(nd)]


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution (the gradient of Conv1d w.r.t. its input)."""

    _nd = 1

    def forward(self, input, output_size=None):
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(
                                      input, output_size, self.stride, self.padding,
                                      self.kernel_size, self._nd, self.dilation),
                                  self.groups, self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution (the gradient of Conv2d w.r.t. its input)."""

    def forward(self, input, output_size=None):
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(
                                      input, output_size, self.stride, self.padding,
                                      self.kernel_size, self._nd, self.dilation),
                                  self.groups, self.dilation)


class Conv3d(_ConvNd):
    """3-D convolution over ``(N, C_in, D, H, W)``.

    Shape:
        Input ``(N, C_in, D, H, W)`` or unbatched; output ``(N, C_out, D_out, H_out, W_out)``.
    """

    _nd = 3

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, dtype=dtype)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution (the gradient of Conv3d w.r.t. its input)."""

    _nd = 3

    def forward(self, input, output_size=None):
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(
                                      input, output_size, self.stride, self.padding,
                                      self.kernel_size, self._nd, self.dilation),
                                  self.groups, self.dilation)


class _LazyConvXdMixin(LazyModuleMixin):
    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _lazy_init(self, dtype, device=None):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if self.bias is not None:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def initialize_parameters(self, input, *args, **kwargs):
        if not self.has_uninitialized_params():
            return
        nd = self._nd
        self.in_channels = input.shape[0] if input.dim() == nd + 1 else input.shape[1]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self._transposed:
            shape = (self.in_channels, self.out_channels // self.groups) + self.kernel_size
        else:
            shape = (self.out_channels, self.in_channels // self.groups) + self.kernel_size
        self.weight.materialize(shape)     # (the same Parameter objects: an optimizer made
        if self.bias is not None:          # before the first call holds them, as in torch)
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()


def _lazy_conv(base, nd_name):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        base.__init__(self, 0, out_channels, kernel_size, stride, padding, dilation, groups,
                      bias, padding_mode, dtype=dtype)
        self._lazy_init(dtype, device)

    def __init_t__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                   groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                   dtype=None):
        base.__init__(self, 0, out_channels, kernel_size, stride, padding, output_padding,
                      groups, bias, dilation, padding_mode, dtype=dtype)
        self._lazy_init(dtype, device)

    init = __init_t__ if base._transposed else __init__
    doc = "%s whose ``in_channels`` comes from the first input." % base.__name__
    return type(nd_name, (_LazyConvXdMixin, base),
                {"__init__": init, "cls_to_become": base, "__doc__": doc,
                 "__module__": __name__})


LazyConv1d = _lazy_conv(Conv1d, "LazyConv1d")
LazyConv2d = _lazy_conv(Conv2d, "LazyConv2d")
LazyConv3d = _lazy_conv(Conv3d, "LazyConv3d")
LazyConvTranspose1d = _lazy_conv(ConvTranspose1d, "LazyConvTranspose1d")
LazyConvTranspose2d = _lazy_conv(ConvTranspose2d, "LazyConvTranspose2d")
LazyConvTranspose3d = _lazy_conv(ConvTranspose3d, "LazyConvTranspose3d")
