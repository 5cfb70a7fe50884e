"""Attention layers: MultiheadAttention and TransformerEncoderLayer."""
import math
import warnings

from ... import ops
from ...ops.creation import empty
from ...tensor import Size
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .dropout import Dropout
from .linear import Linear, NonDynamicallyQuantizableLinear
from .module import Module
from .normalization import LayerNorm

__all__ = ["MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder",
           "TransformerDecoderLayer", "TransformerDecoder", "Transformer"]


_CAUSAL_HINT = ("Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                "module method `generate_square_subsequent_mask` to create this mask.")


def _float_mask(mask, name, dtype):
    """A boolean mask (True = masked out) as an additive float mask; float masks pass."""
    if mask is None:
        return None
    if mask.dtype == ops.tensor(True).dtype:
        return ops.zeros(tuple(mask.shape), dtype=dtype, device=mask.device).masked_fill(
            mask, -math.inf)
    if not mask.is_floating_point():
        raise AssertionError("only bool and floating types of %s are supported" % name)
    return mask


def _softmax_zeroing_masked_rows(scores):
    """Softmax over the last dim, but a row that is -inf throughout gets zeros, not NaN.

    This is torch's SDPA path (``need_weights=False``); the zero rows get a zero gradient.
    """
    dead = (scores == -math.inf).all(-1, keepdim=True)
    if not dead.any():
        return ops.softmax(scores, -1)
    return ops.where(dead, 0.0, ops.softmax(ops.where(dead, 0.0, scores), -1))


def _merge_masks(attn_mask, kpm, n, src, extra):
    """Add the (N, S) key padding mask to the 4-D attn_mask; pad both for ``extra`` keys."""
    if kpm is not None:
        if tuple(kpm.shape) != (n, src):
            i = 0 if kpm.shape[0] != n else 1
            raise AssertionError("Expected key_padded_mask.shape[%d] to be %d, but got %d"
                                 % (i, (n, src + extra)[i], kpm.shape[i] + extra * i))
        kpm = kpm.reshape(n, 1, 1, src)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if attn_mask is not None and extra:
        attn_mask = F.pad(attn_mask, (0, extra))      # the bias_k and zero keys are kept
    return attn_mask


class MultiheadAttention(Module):
    """Multi-head attention: ``softmax(q k^T / sqrt(head_dim) + mask) v`` per head.

    Parameters as torch's (``in_proj_weight`` packs q, k, v, or ``q_proj_weight``,
    ``k_proj_weight`` and ``v_proj_weight`` when ``kdim``/``vdim`` differ from ``embed_dim``;
    ``bias_k``/``bias_v`` with ``add_bias_kv``; ``out_proj``), so state_dicts move across.
    ``add_bias_kv`` appends one learned key/value position and ``add_zero_attn`` one zero
    position after it; masks get a zero (keep) column for each. Returns
    ``(attn_output, attn_weights)``; weights are averaged over heads unless
    ``average_attn_weights=False``, and are None when ``need_weights=False``.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError("embed_dim and num_heads must be greater than 0, got embed_dim=%s "
                             "and num_heads=%s instead" % (embed_dim, num_heads))
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty((3 * embed_dim, embed_dim), dtype=dtype))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(empty((embed_dim, embed_dim), dtype=dtype))
            self.k_proj_weight = Parameter(empty((embed_dim, self.kdim), dtype=dtype))
            self.v_proj_weight = Parameter(empty((embed_dim, self.vdim), dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(empty((1, 1, embed_dim), dtype=dtype))
            self.bias_v = Parameter(empty((1, 1, embed_dim), dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        unbatched = self._check_dims(query, key, value, key_padding_mask, attn_mask)
        if unbatched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        kpm = _float_mask(key_padding_mask, "key_padding_mask", query.dtype)
        mask = _float_mask(attn_mask, "attn_mask", query.dtype)
        if kpm is not None and mask is not None and key_padding_mask.dtype != attn_mask.dtype:
            warnings.warn("Support for mismatched key_padding_mask and attn_mask is deprecated. "
                          "Use same type for both instead.")
        if is_causal and mask is None:
            raise RuntimeError(_CAUSAL_HINT)
        # NOTE: as torch, the is_causal hint replaces attn_mask when nothing else needs it; the
        # causal mask then also covers the bias_k and zero-attention positions.
        causal = is_causal and kpm is None and not need_weights
        if causal:
            mask = None
        tgt, n, e = query.shape
        src = key.shape[0]
        h, hd = self.num_heads, self.head_dim
        if e != self.embed_dim:
            raise AssertionError("was expecting embedding dimension of %d, but got %d"
                                 % (self.embed_dim, e))
        if self._qkv_same_embed_dim and key.shape != value.shape:
            raise AssertionError("key shape %s does not match value shape %s"
                                 % (key.shape, value.shape))
        if not self._qkv_same_embed_dim and key.shape[:2] != value.shape[:2]:
            raise AssertionError("key's sequence and batch dims %s do not match value's %s"
                                 % (Size(key.shape[:2]), Size(value.shape[:2])))
        q, k, v = self._in_projection(query, key, value)
        if mask is not None:
            mask = self._attn_mask_4d(mask, n, tgt, src)
        if self.bias_k is not None:
            k = ops.cat([k, self.bias_k.expand(1, n, e)])
            v = ops.cat([v, self.bias_v.expand(1, n, e)])
        # (L, N, E) -> (N, H, L, hd)
        q = q.reshape(tgt, n, h, hd).permute(1, 2, 0, 3)
        k = k.reshape(-1, n, h, hd).permute(1, 2, 0, 3)
        v = v.reshape(-1, n, h, hd).permute(1, 2, 0, 3)
        if self.add_zero_attn:
            zeros = ops.zeros((n, h, 1, hd), dtype=k.dtype, device=k.device)
            k = ops.cat([k, zeros], 2)
            v = ops.cat([v, zeros], 2)
        mask = _merge_masks(mask, kpm, n, src, k.shape[2] - src)
        if causal:
            causal_mask = ops.triu(ops.ones((tgt, k.shape[2]), dtype=ops.tensor(True).dtype,
                                            device=k.device), 1)
            mask = _float_mask(causal_mask, "attn_mask", query.dtype)
        scores = ops.matmul(q * (1.0 / math.sqrt(hd)), k.transpose(-2, -1))
        if mask is None:
            attn = ops.softmax(scores, -1)
        elif need_weights:
            attn = ops.softmax(scores + mask, -1)
        else:
            attn = _softmax_zeroing_masked_rows(scores + mask)
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

    def _check_dims(self, query, key, value, key_padding_mask, attn_mask):
        """Torch's checks of the input ranks; True when the input is unbatched (2-D)."""
        if query.dim() not in (2, 3):
            raise AssertionError("query should be unbatched 2D or batched 3D tensor but "
                                 "received %d-D query tensor" % query.dim())
        d = query.dim()
        kind = "batched (3-D)" if d == 3 else "unbatched (2-D)"
        if key.dim() != d or value.dim() != d:
            raise AssertionError("For %s `query`, expected `key` and `value` to be %d-D but "
                                 "found %d-D and %d-D tensors respectively"
                                 % (kind, d, key.dim(), value.dim()))
        if key_padding_mask is not None and key_padding_mask.dim() != d - 1:
            raise AssertionError("For %s `query`, expected `key_padding_mask` to be `None` or "
                                 "%d-D but found %d-D tensor instead"
                                 % (kind, d - 1, key_padding_mask.dim()))
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For %s `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                 "but found %d-D tensor instead" % (kind, attn_mask.dim()))
        if d == 2 and attn_mask is not None and attn_mask.dim() == 3:
            want = (self.num_heads, query.shape[0], key.shape[0])
            if tuple(attn_mask.shape) != want:
                raise AssertionError("Expected `attn_mask` shape to be %s but got %s"
                                     % (want, attn_mask.shape))
        return d == 2

    def _in_projection(self, query, key, value):
        """Project (L, N, *) query, key and value to (L, N, embed_dim) each."""
        e = self.embed_dim
        if self._qkv_same_embed_dim:
            w_q, w_k, w_v = ops.chunk(self.in_proj_weight, 3, 0)
        else:
            w_q, w_k, w_v = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
            for name, w, x in (("key", w_k, key), ("value", w_v, value)):
                if tuple(w.shape) != (e, x.shape[-1]):
                    raise AssertionError("expecting %s weights shape of %s, but got %s"
                                         % (name, (e, x.shape[-1]), w.shape))
        b_q = b_k = b_v = None
        if self.in_proj_bias is not None:
            b_q, b_k, b_v = ops.chunk(self.in_proj_bias, 3, 0)
        return F.linear(query, w_q, b_q), F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)

    def _attn_mask_4d(self, mask, n, tgt, src):
        """Check a 2-D (L, S) or 3-D (N * H, L, S) mask and view it as (N or 1, H or 1, L, S)."""
        want = (tgt, src) if mask.dim() == 2 else (n * self.num_heads, tgt, src)
        if tuple(mask.shape) != want:
            raise RuntimeError("The shape of the %dD attn_mask is %s, but should be %s."
                               % (mask.dim(), mask.shape, want))
        if mask.dim() == 2:
            return mask.reshape(1, 1, tgt, src)
        return mask.reshape(n, self.num_heads, tgt, src)


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


def _get_clones(module, n):
    import copy
    from .container import ModuleList
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _activation(activation):
    if isinstance(activation, str):
        if activation not in ("relu", "gelu"):
            raise RuntimeError("activation should be relu/gelu, not %s" % activation)
        return F.relu if activation == "relu" else F.gelu
    return activation


def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    """A float (sz, sz) mask: 0 on and below the diagonal, -inf above."""
    mask = ops.full((sz, sz), float("-inf"), dtype=dtype, device=device)
    return ops.triu(mask, diagonal=1)


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.size(-2)
        causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
        if tuple(mask.size()) == tuple(causal.size()):
            make_causal = bool((mask == causal).all())
        else:
            make_causal = False
    return make_causal


class TransformerEncoder(Module):
    """A stack of ``num_layers`` copies of ``encoder_layer`` (then ``norm``, if given)."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        output = src
        seq_len = src.shape[1 if getattr(self.layers[0].self_attn, "batch_first", False)
                            and src.dim() == 3 else 0]
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal,
                         src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoderLayer(Module):
    """Self-attention, cross-attention over ``memory``, then a feed-forward block; each with
    residual, dropout and LayerNorm (``norm_first``: pre-LN)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-05, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                               memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


class TransformerDecoder(Module):
    """A stack of ``num_layers`` copies of ``decoder_layer`` (then ``norm``, if given)."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        batch_first = getattr(self.layers[0].self_attn, "batch_first", False)
        seq_len = tgt.shape[1 if batch_first and tgt.dim() == 3 else 0]
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """The encoder-decoder Transformer of "Attention Is All You Need" (torch's layout)."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-05, batch_first=False,
                 norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, bias,
                                            dtype=dtype)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, bias,
                                            dtype=dtype)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        is_batched = src.dim() == 3
        if not self.batch_first and src.size(1) != tgt.size(1) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if self.batch_first and src.size(0) != tgt.size(0) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """A float (sz, sz) causal mask: 0 on and below the diagonal, -inf above."""
        return _generate_square_subsequent_mask(sz, device, dtype)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
