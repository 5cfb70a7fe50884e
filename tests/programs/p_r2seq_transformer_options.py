"""nn.Transformer / TransformerEncoder / TransformerDecoder the way the docs and blog posts
configure them: batch_first, norm_first (pre-LN), activation="gelu" or a callable, final norm,
generate_square_subsequent_mask, src_key_padding_mask, is_causal, memory masks; printing
modules, state_dict keys, shapes and outputs; a few training steps."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)
d_model, nhead, dff = 16, 4, 32

# The docs' examples
encoder_layer = nn.TransformerEncoderLayer(d_model=d_model, nhead=nhead, dim_feedforward=dff,
                                           dropout=0.0)
print(encoder_layer)
src = torch.rand(10, 3, d_model)
out = encoder_layer(src)
print(out.shape, out[0, 0])

encoder_layer = nn.TransformerEncoderLayer(d_model=d_model, nhead=nhead, dim_feedforward=dff,
                                           dropout=0.0, batch_first=True, norm_first=True,
                                           activation="gelu")
print(encoder_layer)
print(encoder_layer.norm_first, encoder_layer.activation_relu_or_gelu,
      encoder_layer.self_attn.batch_first)
transformer_encoder = nn.TransformerEncoder(encoder_layer, num_layers=2,
                                            norm=nn.LayerNorm(d_model),
                                            enable_nested_tensor=False)
print(transformer_encoder)
print(list(transformer_encoder.state_dict().keys()))
print(sum(p.numel() for p in transformer_encoder.parameters()))

B, S = 3, 6
src = torch.randn(B, S, d_model)
lengths = torch.tensor([6, 4, 2])
src_key_padding_mask = torch.arange(S)[None, :] >= lengths[:, None]
print(src_key_padding_mask)
causal = nn.Transformer.generate_square_subsequent_mask(S)
print(causal)
print(nn.Transformer.generate_square_subsequent_mask(3, dtype=torch.float64))
out = transformer_encoder(src, src_key_padding_mask=src_key_padding_mask)
print(out.shape, out[1, :4, :3])
out_c = transformer_encoder(src, mask=causal, is_causal=True)
print(out_c[0, :3, :3])
out_b = transformer_encoder(src, mask=(causal == -math.inf))
print(torch.allclose(out_c, out_b, atol=1e-6))
# padding mask as float (additive)
float_pad = torch.zeros(B, S).masked_fill(src_key_padding_mask, float("-inf"))
out_f = transformer_encoder(src, src_key_padding_mask=float_pad)
print(torch.allclose(out, out_f, atol=1e-6))

# callable activation
layer_fn = nn.TransformerEncoderLayer(d_model, nhead, dff, dropout=0.0, activation=F.gelu,
                                      batch_first=True, bias=False)
print(layer_fn.activation is F.gelu, [k for k in layer_fn.state_dict().keys()][:6])
print(layer_fn(src)[2, 0, :4])

# Decoder
decoder_layer = nn.TransformerDecoderLayer(d_model=d_model, nhead=nhead, dim_feedforward=dff,
                                           dropout=0.0, batch_first=True, norm_first=True)
transformer_decoder = nn.TransformerDecoder(decoder_layer, num_layers=2, norm=nn.LayerNorm(d_model))
print(transformer_decoder)
memory = out
T = 5
tgt = torch.randn(B, T, d_model)
tgt_mask = nn.Transformer.generate_square_subsequent_mask(T)
dec = transformer_decoder(tgt, memory, tgt_mask=tgt_mask,
                          memory_key_padding_mask=src_key_padding_mask, tgt_is_causal=True)
print(dec.shape, dec[2, :2, :4])
tgt_pad = torch.tensor([[False] * 5, [False] * 4 + [True], [False] * 5])
dec2 = transformer_decoder(tgt, memory, tgt_mask=tgt_mask, tgt_key_padding_mask=tgt_pad,
                           memory_key_padding_mask=src_key_padding_mask)
print(dec2[1, :4, :3])
mem_mask = torch.zeros(T, S, dtype=torch.bool)
mem_mask[:, -1] = True
print(transformer_decoder(tgt, memory, memory_mask=mem_mask)[0, 0, :4])

# Full nn.Transformer, batch_first, with custom sizes
model = nn.Transformer(d_model=d_model, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                       dim_feedforward=dff, dropout=0.0, batch_first=True, norm_first=False,
                       activation="gelu")
print([k for k in model.state_dict().keys() if "layers.0" not in k])
print(model.encoder.norm, model.decoder.norm, model.d_model, model.nhead, model.batch_first)
y = model(src, tgt, tgt_mask=model.generate_square_subsequent_mask(T),
          src_key_padding_mask=src_key_padding_mask, memory_key_padding_mask=src_key_padding_mask)
print(y.shape, y[0, 0, :5])
try:
    model(src, tgt[:2])
except Exception as e:
    print(type(e).__name__, e)
try:
    model(src[..., :8], tgt[..., :8])
except Exception as e:
    print(type(e).__name__, e)
try:
    nn.TransformerEncoderLayer(10, 3)
except Exception as e:
    print(type(e).__name__, e)
try:
    nn.TransformerEncoderLayer(8, 2, activation="tanh")
except Exception as e:
    print(type(e).__name__, e)


# Inference the way BERT-style encoders run it: eval() + no_grad with a padding mask (torch's
# nested-tensor fast path: padded positions come back as zeros)
post_ln = nn.TransformerEncoder(
    nn.TransformerEncoderLayer(d_model, nhead, dff, dropout=0.1, batch_first=True), num_layers=2)
print(post_ln.use_nested_tensor, post_ln.layers[0].training)
post_ln.eval()
with torch.no_grad():
    enc_out = post_ln(src, src_key_padding_mask=src_key_padding_mask)
    print(enc_out[2, :3, :4], enc_out[1, 3:, 0])
    pooled = enc_out.sum(1) / (~src_key_padding_mask).sum(1, keepdim=True)
    print(pooled[:, :4])
    print(post_ln(src)[0, 0, :4])


# A tiny sequence model trained a few steps: TransformerEncoder LM with a causal mask
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=64):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(1, max_len, d_model)
        pe[0, :, 0::2] = torch.sin(position * div_term)
        pe[0, :, 1::2] = torch.cos(position * div_term)
        self.register_buffer('pe', pe)

    def forward(self, x):
        x = x + self.pe[:, :x.size(1)]
        return self.dropout(x)


class TinyLM(nn.Module):
    def __init__(self, ntoken, d_model, nhead, d_hid, nlayers):
        super().__init__()
        self.embedding = nn.Embedding(ntoken, d_model)
        self.pos_encoder = PositionalEncoding(d_model, dropout=0.0)
        layer = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout=0.0, batch_first=True,
                                           norm_first=True, activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, nlayers, enable_nested_tensor=False)
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, ntoken)
        self.d_model = d_model

    def forward(self, idx):
        T = idx.size(1)
        mask = nn.Transformer.generate_square_subsequent_mask(T, device=idx.device)
        x = self.pos_encoder(self.embedding(idx) * math.sqrt(self.d_model))
        x = self.encoder(x, mask=mask, is_causal=True)
        return self.lm_head(self.ln_f(x))


torch.manual_seed(1)
lm = TinyLM(12, d_model, 2, dff, 2)
opt = torch.optim.AdamW(lm.parameters(), lr=3e-3, weight_decay=0.01)
data = torch.randint(0, 12, (4, 9))
for step in range(6):
    logits = lm(data[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 12), data[:, 1:].reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    gn = torch.nn.utils.clip_grad_norm_(lm.parameters(), 1.0)
    opt.step()
    print(step, f"{loss.item():.4f}", f"{gn.item():.4f}")
lm.eval()
with torch.no_grad():
    print(lm(data[:1, :4]).argmax(-1))
print("RESULT:", f"{loss.item():.4f}")
