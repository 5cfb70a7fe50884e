"""nn.Transformer* subclassed the way research repos do it: a TransformerEncoderLayer whose
_sa_block keeps the attention weights (need_weights=True, average_attn_weights=False), a
pre-LN TransformerDecoderLayer subclass with a custom _ff_block, nn.Transformer with a
custom_encoder, TransformerEncoder's enable_nested_tensor warnings, nn.MultiheadAttention with
kdim/vdim (separate q/k/v projection weights), add_bias_kv and add_zero_attn, its state_dict keys,
key_padding_mask as bool and float, and its shape errors."""
import importlib
import os
import warnings

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class AttnKeepingEncoderLayer(nn.TransformerEncoderLayer):
    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x, w = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                              need_weights=True, average_attn_weights=False)
        self.last_attn = w.detach()
        return self.dropout1(x)


class GLUDecoderLayer(nn.TransformerDecoderLayer):
    def __init__(self, d_model, nhead, dim_feedforward, **kw):
        super().__init__(d_model, nhead, dim_feedforward, **kw)
        self.gate = nn.Linear(d_model, dim_feedforward)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(F.silu(self.gate(x)) * self.linear1(x)))
        return self.dropout3(x)


torch.manual_seed(0)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    layer = AttnKeepingEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True, norm_first=True)
    enc = nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm(16),
                                enable_nested_tensor=True)
    enc2 = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 4, 32, batch_first=False),
                                 num_layers=1)
for w in caught:
    print("warning", w.category.__name__, str(w.message))
print("nested", enc.use_nested_tensor, enc2.use_nested_tensor)
print(enc.layers[0])
print("enc keys", [k for k in enc.state_dict() if k.startswith("layers.0")])

dec_layer = GLUDecoderLayer(16, 4, 32, dropout=0.0, batch_first=True, norm_first=True,
                            activation="gelu")
model = nn.Transformer(d_model=16, nhead=4, custom_encoder=enc,
                       custom_decoder=nn.TransformerDecoder(dec_layer, 2, norm=nn.LayerNorm(16)),
                       batch_first=True, dropout=0.0)
print(type(model.encoder).__name__, type(model.decoder.layers[1]).__name__,
      model.decoder.layers[0] is dec_layer, model.d_model, model.nhead, model.batch_first)
print("params", sum(p.numel() for p in model.parameters()))
src = torch.randn(2, 5, 16)
tgt = torch.randn(2, 4, 16)
src_pad = torch.tensor([[False] * 5, [False, False, False, True, True]])
tgt_mask = nn.Transformer.generate_square_subsequent_mask(4)
print("tgt_mask", tgt_mask)
out = model(src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=src_pad,
            memory_key_padding_mask=src_pad, tgt_is_causal=True)
print("out", out.shape, out[1, -1, :4])
att = model.encoder.layers[1].last_attn
print("attn", att.shape, att[1, 0, :, 3:].abs().max().item(), att.sum(-1)[0, :, 0])
out.pow(2).mean().backward()
print("gate grad", model.decoder.layers[0].gate.weight.grad.norm().item(),
      model.encoder.layers[0].self_attn.in_proj_weight.grad.norm().item())

mha = nn.MultiheadAttention(8, 2, kdim=6, vdim=4, add_bias_kv=True, add_zero_attn=True,
                            batch_first=True)
print(mha, mha._qkv_same_embed_dim, mha.in_proj_weight)
print("mha keys", list(mha.state_dict().keys()))
q = torch.randn(2, 3, 8)
k = torch.randn(2, 5, 6)
v = torch.randn(2, 5, 4)
o, w = mha(q, k, v, key_padding_mask=torch.tensor([[0.0, 0, 0, 0, -1e9], [0, 0, 0, 0, 0]]))
print("mha out", o.shape, w.shape, w[0, 0], o[0, 0, :3])
o2, w2 = mha(q, k, v, need_weights=False)
print("no weights", w2, o2.shape)
for args in [(q, k[:, :, :5], v), (q, k, v[:, :4])]:
    try:
        mha(*args)
    except Exception as e:
        print(type(e).__name__, e)
mha2 = nn.MultiheadAttention(8, 2)
try:
    mha2(torch.randn(3, 8), torch.randn(3, 8), torch.randn(3, 8),
         attn_mask=torch.zeros(2, 2))
except Exception as e:
    print(type(e).__name__, e)
o3, w3 = mha2(torch.randn(3, 8), torch.randn(4, 8), torch.randn(4, 8))
print("unbatched", o3.shape, w3.shape)
try:
    nn.MultiheadAttention(10, 3)
except AssertionError as e:
    print(type(e).__name__, e)
try:
    nn.TransformerEncoderLayer(16, 4, activation="swish")
except Exception as e:
    print(type(e).__name__, e)
