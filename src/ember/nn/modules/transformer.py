"""Attention layers: MultiheadAttention and TransformerEncoderLayer."""

import warnings

from ... import ops
from ...backends import mha as _mha
from ...autograd.grad_mode import is_grad_enabled
from ...ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .dropout import Dropout
from .linear import Linear, NonDynamicallyQuantizableLinear
from .module import Module
from .normalization import LayerNorm

__all__ = ["MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder",
           "TransformerDecoderLayer", "TransformerDecoder", "Transformer"]


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

    __constants__ = ["batch_first"]

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
        is_batched = query.dim() == 3
        float_mask = any(m is not None and m.is_floating_point()
                         for m in (attn_mask, key_padding_mask))
        key_padding_mask = F._canonical_mask(key_padding_mask, "key_padding_mask",
                                             F._none_or_dtype(attn_mask), "attn_mask",
                                             query.dtype)
        attn_mask = F._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        fast = not need_weights and not float_mask and self._fast_path(query, key, value)
        if self.batch_first and is_batched:
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and is_batched:
            out = out.transpose(1, 0)
        if fast and (key_padding_mask is not None or attn_mask is not None):
            # NOTE: torch's fused kernel (_native_multi_head_attention) gives NaN rows where
            # every key is masked out; its composite path gives zeros there.
            dead = self._fully_masked(out.shape[0], out.shape[1], attn_mask, key_padding_mask)
            out = out.masked_fill(dead.unsqueeze(-1), float("nan"))
        return out, weights

    def _fast_path(self, query, key, value):
        """Whether torch would run its fused self-attention kernel for these inputs."""
        if not _mha.get_fastpath_enabled():
            return False
        if (query.dim() != 3 or query is not key or key is not value or self.training
                or self.in_proj_weight is None or self.in_proj_bias is None
                or self.num_heads % 2 or not self.batch_first
                or self.bias_k is not None or self.bias_v is not None or self.add_zero_attn
                or not self._qkv_same_embed_dim or query.dtype != self.in_proj_weight.dtype):
            return False
        if self.in_proj_bias is not None and query.dtype != self.in_proj_bias.dtype:
            return False
        args = (query, self.in_proj_weight, self.in_proj_bias, self.out_proj.weight,
                self.out_proj.bias)
        return not (is_grad_enabled() and any(a is not None and a.requires_grad for a in args))

    def _fully_masked(self, batch, length, attn_mask, key_padding_mask):
        """(B, L): the query rows whose every key is masked (-inf) in some head."""
        merged = None
        if attn_mask is not None:
            lead = (batch, -1) if attn_mask.dim() == 3 else (1, 1)
            merged = attn_mask.reshape(lead + (length, attn_mask.shape[-1]))
        if key_padding_mask is not None:
            kpm = key_padding_mask.reshape(batch, 1, 1, -1)
            merged = kpm if merged is None else merged + kpm
        dead = (merged == float("-inf")).all(-1)          # (B or 1, H or 1, L or 1)
        return dead.any(1).expand(batch, length)


# torch defines MultiheadAttention in nn/modules/activation.py (which re-exports it from here)
MultiheadAttention.__module__ = "ember.nn.modules.activation"


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with residual, dropout and LayerNorm.

    ``norm_first=True`` normalises before each block (pre-LN) instead of after.
    """

    __constants__ = ["norm_first"]

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
        self.activation_relu_or_gelu = _relu_or_gelu(activation)
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        src_key_padding_mask = F._canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                                 F._none_or_dtype(src_mask), "src_mask",
                                                 src.dtype)
        src_mask = F._canonical_mask(src_mask, "src_mask", None, "", src.dtype, False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        if (src_mask is not None or src_key_padding_mask is not None) and self._fast_path(src):
            # NOTE: torch's fused layer (_transformer_encoder_layer_fwd) gives NaN rows where
            # every key is masked out
            dead = self.self_attn._fully_masked(src.shape[0], src.shape[1], src_mask,
                                                src_key_padding_mask)
            x = x.masked_fill(dead.unsqueeze(-1), float("nan"))
        return x

    def _fast_path(self, src):
        """Whether torch would run its fused encoder-layer kernel for ``src``."""
        if not _mha.get_fastpath_enabled():
            return False
        attn = self.self_attn
        if (src.dim() != 3 or self.training or not attn.batch_first or attn.in_proj_bias is None
                or not attn._qkv_same_embed_dim or not self.activation_relu_or_gelu
                or self.norm1.eps != self.norm2.eps or attn.num_heads % 2):
            return False
        if any(getattr(m, "_forward_hooks", None) or getattr(m, "_forward_pre_hooks", None)
               for m in self.modules()):
            return False
        args = (src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight,
                attn.out_proj.bias, self.norm1.weight, self.norm1.bias, self.norm2.weight,
                self.norm2.bias, self.linear1.weight, self.linear1.bias, self.linear2.weight,
                self.linear2.bias)
        return not (is_grad_enabled() and any(a is not None and a.requires_grad for a in args))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


def _relu_or_gelu(activation):
    """torch's tag of the activation: 1 for relu, 2 for gelu, 0 for anything else."""
    # (the classes by name: activation.py imports this module)
    names = {c.__name__ for c in type(activation).__mro__ if c.__module__.startswith("ember.")}
    fn = getattr(activation, "__wrapped__", activation)     # (__torch_function__'s dispatcher)
    if fn is getattr(F.relu, "__wrapped__", F.relu) or "ReLU" in names:
        return 1
    if fn is getattr(F.gelu, "__wrapped__", F.gelu) or "GELU" in names:
        return 2
    return 0


def _why_not_sparsity_fast_path(layer):
    enc = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return "%s was not TransformerEncoderLayer" % enc
    if layer.norm_first:
        return "%s.norm_first was True" % enc
    if not layer.self_attn.batch_first:
        return ("%s.self_attn.batch_first was not True(use batch_first for better inference "
                "performance)" % enc)
    if not layer.self_attn._qkv_same_embed_dim:
        return "%s.self_attn._qkv_same_embed_dim was not True" % enc
    if layer.self_attn.in_proj_bias is None:
        return "%s.self_attn was passed bias=False" % enc
    if not layer.activation_relu_or_gelu:
        return "%s.activation_relu_or_gelu was not True" % enc
    if layer.norm1.eps != layer.norm2.eps:
        return "%s.norm1.eps was not equal to %s.norm2.eps" % (enc, enc)
    if layer.self_attn.num_heads % 2 == 1:
        return "%s.self_attn.num_heads is odd" % enc
    return ""


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

    __constants__ = ["norm"]

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why = _why_not_sparsity_fast_path(encoder_layer)
        if enable_nested_tensor and why:
            warnings.warn("enable_nested_tensor is True, but self.use_nested_tensor is False "
                          "because %s" % why, stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        src_key_padding_mask = F._canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                                 F._none_or_dtype(mask), "mask", src.dtype)
        mask = F._canonical_mask(mask, "mask", None, "", src.dtype, False)
        output = src
        seq_len = src.shape[1 if getattr(self.layers[0].self_attn, "batch_first", False)
                            and src.dim() == 3 else 0]
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        padded = self._nested_padding(src, mask, src_key_padding_mask)
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal,
                         src_key_padding_mask=src_key_padding_mask if padded is None else padded)
            if padded is not None:
                output = output.masked_fill(padded.unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _nested_padding(self, src, mask, src_key_padding_mask):
        """The padded positions (B, S) where torch's nested-tensor fast path would run, else
        None. That path keeps the first ``n`` tokens of each sequence (``n``: its unmasked count)
        and pads its result back with zeros, so padded positions come out as 0."""
        layer = self.layers[0]
        if (not getattr(self, "use_nested_tensor", False) or layer.training or src.dim() != 3
                or src_key_padding_mask is None or not _mha.get_fastpath_enabled()):
            return None
        keep = src_key_padding_mask == 0
        steps = ops.arange(keep.shape[1], device=src.device).unsqueeze(0)
        prefix = steps < keep.sum(1, keepdim=True)
        if getattr(self, "mask_check", True) and not bool((prefix == keep).all()):
            return None
        if mask is not None:
            return None
        attn = layer.self_attn
        args = (src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight,
                attn.out_proj.bias, layer.norm1.weight, layer.norm1.bias, layer.norm2.weight,
                layer.norm2.bias, layer.linear1.weight, layer.linear1.bias, layer.linear2.weight,
                layer.linear2.bias)
        if is_grad_enabled() and any(a is not None and a.requires_grad for a in args):
            return None
        return prefix.logical_not()


class TransformerDecoderLayer(Module):
    """Self-attention, cross-attention over ``memory``, then a feed-forward block; each with
    residual, dropout and LayerNorm (``norm_first``: pre-LN)."""

    __constants__ = ["norm_first"]

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

    __constants__ = ["norm"]

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
