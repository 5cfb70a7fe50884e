"""``torch.nn.attention.bias``: causal attention biases for ``scaled_dot_product_attention``.

A ``CausalBias`` passed as ``attn_mask`` stands for a triangular boolean mask without holding
it: ``scaled_dot_product_attention`` sees it through ``__torch_function__`` and either runs with
``is_causal=True`` (upper-left alignment, or equal lengths) or with the materialised mask.
"""
from enum import IntEnum, auto
from warnings import warn

from ... import ops
from ...dtypes import bool as _bool
from ...tensor import Tensor
from .. import functional as F

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


# NOTE: ``__torch_function__`` dispatch is dormant until a user defines a Tensor subclass;
# without it ``F.scaled_dot_product_attention`` calls ``CausalBias._dispatch`` itself.


class CausalVariant(IntEnum):
    """Alignment of a causal bias: ``UPPER_LEFT`` is ``tril(ones(L, S))``; ``LOWER_RIGHT`` is
    ``tril(ones(L, S), diagonal=S - L)`` (the same when ``L == S``)."""

    UPPER_LEFT = auto()
    LOWER_RIGHT = auto()


class CausalBias(Tensor):
    """A causal (triangular) attention bias; build one with ``causal_upper_left`` or
    ``causal_lower_right``.

    Example:
        >>> import ember
        >>> from ember.nn.attention.bias import causal_lower_right
        >>> causal_lower_right(2, 3)
        tensor([[ True,  True, False],
                [ True,  True,  True]])
    """

    def __init__(self, variant, seq_len_q, seq_len_kv):
        if not isinstance(variant, CausalVariant):
            raise AssertionError(
                f"variant must be a CausalVariant, got {type(variant).__name__}")
        # NOTE: torch's ``Tensor.__new__`` reads the three arguments as a size, so the bias
        # is also an (unused) float tensor of shape (variant, seq_len_q, seq_len_kv)
        super().__init__(int(variant), seq_len_q, seq_len_kv)
        self.variant = variant
        self.seq_len_q = seq_len_q
        self.seq_len_kv = seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            warn("Lower right causal bias will produce NaNs in the output when "
                 "seq_len_q > seq_len_kv!", stacklevel=2)

    def _upper_left(self, device):
        return ops.ones(self.seq_len_q, self.seq_len_kv, device=device, dtype=_bool).tril()

    def _lower_right(self, device):
        diagonal_offset = self.seq_len_kv - self.seq_len_q
        return ops.ones(self.seq_len_q, self.seq_len_kv, device=device,
                        dtype=_bool).tril(diagonal=diagonal_offset)

    def _materialize(self, device=None):
        """The bias as a boolean ``(seq_len_q, seq_len_kv)`` tensor (True = attend)."""
        if device is None:
            device = "cpu"
        if self.variant == CausalVariant.UPPER_LEFT:
            return self._upper_left(device)
        if self.variant == CausalVariant.LOWER_RIGHT:
            return self._lower_right(device)
        return None

    @staticmethod
    def _dispatch(query, key, value, attn_mask, dropout_p=0.0, is_causal=False, scale=None,
                  enable_gqa=False):
        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if attn_mask.seq_len_q == attn_mask.seq_len_kv or \
                attn_mask.variant == CausalVariant.UPPER_LEFT:
            return F.scaled_dot_product_attention(
                query, key, value, attn_mask=None, dropout_p=dropout_p, is_causal=True,
                scale=scale, enable_gqa=enable_gqa)
        if attn_mask.variant == CausalVariant.LOWER_RIGHT:
            return F.scaled_dot_product_attention(
                query, key, value, attn_mask=attn_mask._materialize(query.device),
                dropout_p=dropout_p, is_causal=False, scale=scale, enable_gqa=enable_gqa)
        raise ValueError("CausalBias.variant must be a CausalVariant type, but found: "
                         f"{attn_mask.variant}")

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """``scaled_dot_product_attention`` with this bias runs as ``_dispatch``; anything else
        as on a Tensor."""
        if kwargs is None:
            kwargs = {}
        if getattr(func, "__name__", None) == "scaled_dot_product_attention" and \
                getattr(func, "__wrapped__", func) is getattr(
                    F.scaled_dot_product_attention, "__wrapped__", F.scaled_dot_product_attention):
            return cls._dispatch(*args, **kwargs)
        return super().__torch_function__(func, types, args, kwargs)

    def __repr__(self):
        return self._materialize().__repr__()

    __str__ = __repr__


def causal_upper_left(*size):
    """The upper-left causal bias of ``size = (seq_len_q, seq_len_kv)``: the same as
    ``is_causal=True``."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.UPPER_LEFT, seq_len_q, seq_len_kv)


def causal_lower_right(*size):
    """The lower-right causal bias of ``size = (seq_len_q, seq_len_kv)``: query ``i`` attends to
    keys ``0 .. i + seq_len_kv - seq_len_q``."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.LOWER_RIGHT, seq_len_q, seq_len_kv)
