"""Masked tensors and masked reductions, as ``torch.masked``.

``masked_tensor(data, mask)`` keeps the elements where ``mask`` is True; ops on it work on
those elements only (reductions skip the rest, results carry the mask), and gradients come
back as masked tensors, so "no gradient" (masked out) differs from a zero one. The functional
reductions (``sum``, ``mean``, ``amax``, ``softmax``, ...) take a plain tensor and a ``mask``.

Example:
    >>> import warnings, ember
    >>> warnings.simplefilter("ignore")
    >>> x = ember.tensor([[1., 2.], [3., 4.]])
    >>> ember.masked.sum(x, 1, mask=ember.tensor([[True, False], [True, True]]))
    tensor([1., 7.])
"""
from ._ops import (amax, amin, argmax, argmin, log_softmax, mean, norm, normalize, prod, softmax,
                   softmin, std, sum, var)
from .maskedtensor import MaskedTensor, as_masked_tensor, is_masked_tensor, masked_tensor

__all__ = ["amax", "amin", "argmax", "argmin", "as_masked_tensor", "is_masked_tensor",
           "log_softmax", "masked_tensor", "MaskedTensor", "mean", "norm", "normalize", "prod",
           "softmax", "softmin", "std", "sum", "var"]
