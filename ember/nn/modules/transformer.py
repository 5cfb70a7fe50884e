"""Attention layers: MultiheadAttention and TransformerEncoderLayer."""
import math

from ... import ops
from ...ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .dropout import Dropout
from .linear import Linear, NonDynamicallyQuantizableLinear
from .module import Module
from .normalization import LayerNorm

__all__ = ["MultiheadAttention", "TransformerEncoderLayer"]


def _float_mask(mask, like):
    """A boolean mask (True = masked out) as an additive float mask; float masks pass."""
    if mask is None:
        return None
    if mask.dtype == ops.tensor(True).dtype:
        return ops.where(mask, ops.full_like(like, -math.inf), ops.zeros_like(like))
    return mask


class MultiheadAttention(Module):
    """Multi-head attention: ``softmax(q k^T / sqrt(head_dim) + mask) v`` per head.

    Parameters as torch's (``in_proj_weight`` packs q, k, v; ``out_proj``), so state_dicts
    move across. Returns ``(attn_output, attn_weights)``; weights are averaged over heads
    unless ``average_attn_weights=False``, and are None when ``need_weights=False``.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError("embed_dim and num_heads must be greater than 0, got embed_dim=%s "
                             "and num_heads=%s instead" % (embed_dim, num_heads))
        if add_bias_kv or add_zero_attn or (kdim not in (None, embed_dim)) or \
                (vdim not in (None, embed_dim)):
            raise NotImplementedError("add_bias_kv, add_zero_attn, kdim and vdim are not "
                                      "supported")
        self.embed_dim = embed_dim
        self.kdim = self.vdim = embed_dim
        self._qkv_same_embed_dim = True
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        self.in_proj_weight = Parameter(empty((3 * embed_dim, embed_dim), dtype=dtype))
        self.register_parameter("q_proj_weight", None)
        self.register_parameter("k_proj_weight", None)
        self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)
        self.bias_k = self.bias_v = None
        self.add_zero_attn = False
        self._reset_parameters()

    def _reset_parameters(self):
        init.xavier_uniform_(self.in_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        if query.dim() not in (2, 3):
            raise AssertionError("query should be unbatched 2D or batched 3D tensor but "
                                 "received %dD query tensor" % query.dim())
        unbatched = query.dim() == 2
        if unbatched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        tgt, n, e = query.shape
        src = key.shape[0]
        h, hd = self.num_heads, self.head_dim
        if e != self.embed_dim:
            raise AssertionError("was expecting embedding dimension of %d, but got %d"
                                 % (self.embed_dim, e))
        w_q, w_k, w_v = ops.chunk(self.in_proj_weight, 3, 0)
        b_q = b_k = b_v = None
        if self.in_proj_bias is not None:
            b_q, b_k, b_v = ops.chunk(self.in_proj_bias, 3, 0)
        q = F.linear(query, w_q, b_q)
        k = F.linear(key, w_k, b_k)
        v = F.linear(value, w_v, b_v)
        # (L, N, E) -> (N, H, L, hd)
        q = q.reshape(tgt, n, h, hd).permute(1, 2, 0, 3)
        k = k.reshape(src, n, h, hd).permute(1, 2, 0, 3)
        v = v.reshape(src, n, h, hd).permute(1, 2, 0, 3)
        scores = ops.matmul(q * (1.0 / math.sqrt(hd)), k.transpose(-2, -1))
        if attn_mask is None and is_causal:
            attn_mask = ops.tensor([[j > i for j in range(src)] for i in range(tgt)])
        if attn_mask is not None:
            mask = _float_mask(attn_mask, ops.zeros(tuple(attn_mask.shape), dtype=scores.dtype))
            if mask.dim() == 3:
                mask = mask.reshape(n, h, tgt, src)
            scores = scores + mask
        if key_padding_mask is not None:
            kpm = _float_mask(key_padding_mask,
                              ops.zeros(tuple(key_padding_mask.shape), dtype=scores.dtype))
            scores = scores + kpm.reshape(n, 1, 1, src)
        attn = ops.softmax(scores, -1)
        if self.dropout > 0.0 and self.training:
            attn = F.dropout(attn, self.dropout, True)
        out = ops.matmul(attn, v)                              # (N, H, L, hd)
        out = out.permute(2, 0, 1, 3).reshape(tgt * n, e)
        out = self.out_proj(out).reshape(tgt, n, e)
        weights = None
        if need_weights:
            weights = attn.mean(1) if average_attn_weights else attn
        if unbatched:
            out = out.squeeze(1)
            if weights is not None:
                weights = weights.squeeze(0)
        elif self.batch_first:
            out = out.transpose(0, 1)
        return out, weights


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with residual, dropout and LayerNorm.

    ``norm_first=True`` normalises before each block (pre-LN) instead of after.
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-05, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            if activation not in ("relu", "gelu"):
                raise RuntimeError("activation should be relu/gelu, not %s" % activation)
            activation = F.relu if activation == "relu" else F.gelu
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)
