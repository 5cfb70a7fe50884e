"""Convert the weights of convolution modules to a memory format (torch.nn.utils.memory_format).

ember keeps every tensor in C order, so the weights keep their values and layout; what matches
torch is the return value, the fresh weight data and the errors for an unusable format.
"""
from ...dtypes import channels_last, channels_last_3d, preserve_format
from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _converted(weight, memory_format):
    """``weight``'s values as new data, after torch's checks of ``memory_format``."""
    if memory_format is channels_last and weight.ndim != 4:
        raise RuntimeError("required rank 4 tensor to use channels_last format")
    if memory_format is channels_last_3d and weight.ndim != 5:
        raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
    if memory_format is preserve_format:
        raise RuntimeError("Unsupported memory formatPreserve")
    return weight.detach().clone()


def convert_conv2d_weight_memory_format(module, memory_format):
    """Convert the weight of every ``Conv2d``/``ConvTranspose2d`` in ``module`` (itself included)
    to ``memory_format``.

    Args:
        module: a convolution module or a container of them.
        memory_format: e.g. ``torch.channels_last`` or ``torch.contiguous_format``.

    Returns:
        ``module``. Matches ``torch.nn.utils.convert_conv2d_weight_memory_format``.
    """
    if isinstance(module, (Conv2d, ConvTranspose2d)):
        module.weight.data = _converted(module.weight, memory_format)
    for child in module.children():
        convert_conv2d_weight_memory_format(child, memory_format)
    return module


def convert_conv3d_weight_memory_format(module, memory_format):
    """Convert the weight of every ``Conv3d``/``ConvTranspose3d`` in ``module`` (itself included)
    to ``memory_format``.

    Args:
        module: a convolution module or a container of them.
        memory_format: e.g. ``torch.channels_last_3d`` or ``torch.contiguous_format``.

    Returns:
        ``module``. Matches ``torch.nn.utils.convert_conv3d_weight_memory_format``.
    """
    if isinstance(module, (Conv3d, ConvTranspose3d)):
        module.weight.data = _converted(module.weight, memory_format)
    for child in module.children():
        convert_conv3d_weight_memory_format(child, memory_format)
    return module
