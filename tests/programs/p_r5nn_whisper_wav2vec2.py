"""openai/whisper's model.py (LayerNorm/Linear/Conv1d subclasses that cast to the input dtype
and override _conv_forward, sinusoids, MultiHeadAttention with qkv_attention, ResidualAttentionBlock
with cross-attention, AudioEncoder/TextDecoder with a causal "mask" buffer persistent=False,
install_kv_cache_hooks via forward hooks on the key/value Linears) and HF's modeling_wav2vec2.py
feature encoder (GroupNorm first conv layer, Wav2Vec2FeatureProjection, positional conv
embedding with weight_norm(name="weight", dim=2) and SamePadLayer), shrunk."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
Tensor = torch.Tensor


class LayerNorm(nn.LayerNorm):
    def forward(self, x):
        return super().forward(x.float()).type(x.dtype)


class Linear(nn.Linear):
    def forward(self, x):
        return F.linear(x, self.weight.to(x.dtype),
                        None if self.bias is None else self.bias.to(x.dtype))


class Conv1d(nn.Conv1d):
    def _conv_forward(self, x, weight, bias):
        return super()._conv_forward(x, weight.to(x.dtype),
                                     None if bias is None else bias.to(x.dtype))


def sinusoids(length, channels, max_timescale=10000):
    assert channels % 2 == 0
    log_timescale_increment = math.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = torch.exp(-log_timescale_increment * torch.arange(channels // 2))
    scaled_time = torch.arange(length)[:, None] * inv_timescales[None, :]
    return torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], dim=1)


class MultiHeadAttention(nn.Module):
    def __init__(self, n_state, n_head):
        super().__init__()
        self.n_head = n_head
        self.query = Linear(n_state, n_state)
        self.key = Linear(n_state, n_state, bias=False)
        self.value = Linear(n_state, n_state)
        self.out = Linear(n_state, n_state)

    def forward(self, x, xa=None, mask=None, kv_cache=None):
        q = self.query(x)
        if kv_cache is None or xa is None or self.key not in kv_cache:
            k = self.key(x if xa is None else xa)
            v = self.value(x if xa is None else xa)
        else:
            k = kv_cache[self.key]
            v = kv_cache[self.value]
        wv, qk = self.qkv_attention(q, k, v, mask)
        return self.out(wv), qk

    def qkv_attention(self, q, k, v, mask=None):
        n_batch, n_ctx, n_state = q.shape
        scale = (n_state // self.n_head) ** -0.25
        q = q.view(*q.shape[:2], self.n_head, -1).permute(0, 2, 1, 3) * scale
        k = k.view(*k.shape[:2], self.n_head, -1).permute(0, 2, 3, 1) * scale
        v = v.view(*v.shape[:2], self.n_head, -1).permute(0, 2, 1, 3)
        qk = q @ k
        if mask is not None:
            qk = qk + mask[:n_ctx, :n_ctx]
        qk = qk.float()
        w = F.softmax(qk, dim=-1).to(q.dtype)
        return (w @ v).permute(0, 2, 1, 3).flatten(start_dim=2), qk.detach()


class ResidualAttentionBlock(nn.Module):
    def __init__(self, n_state, n_head, cross_attention=False):
        super().__init__()
        self.attn = MultiHeadAttention(n_state, n_head)
        self.attn_ln = LayerNorm(n_state)
        self.cross_attn = MultiHeadAttention(n_state, n_head) if cross_attention else None
        self.cross_attn_ln = LayerNorm(n_state) if cross_attention else None
        n_mlp = n_state * 4
        self.mlp = nn.Sequential(Linear(n_state, n_mlp), nn.GELU(), Linear(n_mlp, n_state))
        self.mlp_ln = LayerNorm(n_state)

    def forward(self, x, xa=None, mask=None, kv_cache=None):
        x = x + self.attn(self.attn_ln(x), mask=mask, kv_cache=kv_cache)[0]
        if self.cross_attn:
            x = x + self.cross_attn(self.cross_attn_ln(x), xa, kv_cache=kv_cache)[0]
        x = x + self.mlp(self.mlp_ln(x))
        return x


class AudioEncoder(nn.Module):
    def __init__(self, n_mels, n_ctx, n_state, n_head, n_layer):
        super().__init__()
        self.conv1 = Conv1d(n_mels, n_state, kernel_size=3, padding=1)
        self.conv2 = Conv1d(n_state, n_state, kernel_size=3, stride=2, padding=1)
        self.register_buffer("positional_embedding", sinusoids(n_ctx, n_state))
        self.blocks = nn.ModuleList([ResidualAttentionBlock(n_state, n_head)
                                     for _ in range(n_layer)])
        self.ln_post = LayerNorm(n_state)

    def forward(self, x):
        x = F.gelu(self.conv1(x))
        x = F.gelu(self.conv2(x))
        x = x.permute(0, 2, 1)
        assert x.shape[1:] == self.positional_embedding.shape, "incorrect audio shape"
        x = (x + self.positional_embedding).to(x.dtype)
        for block in self.blocks:
            x = block(x)
        return self.ln_post(x)


class TextDecoder(nn.Module):
    def __init__(self, n_vocab, n_ctx, n_state, n_head, n_layer):
        super().__init__()
        self.token_embedding = nn.Embedding(n_vocab, n_state)
        self.positional_embedding = nn.Parameter(torch.empty(n_ctx, n_state))
        self.blocks = nn.ModuleList([ResidualAttentionBlock(n_state, n_head, cross_attention=True)
                                     for _ in range(n_layer)])
        self.ln = LayerNorm(n_state)
        mask = torch.empty(n_ctx, n_ctx).fill_(-float("inf")).triu_(1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x, xa, kv_cache=None):
        offset = next(iter(kv_cache.values())).shape[1] if kv_cache else 0
        x = self.token_embedding(x) + self.positional_embedding[offset: offset + x.shape[-1]]
        x = x.to(xa.dtype)
        for block in self.blocks:
            x = block(x, xa, mask=self.mask, kv_cache=kv_cache)
        x = self.ln(x)
        logits = (x @ torch.transpose(self.token_embedding.weight.to(x.dtype), 0, 1)).float()
        return logits


class Whisper(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = AudioEncoder(8, 6, 16, 2, 2)
        self.decoder = TextDecoder(20, 8, 16, 2, 2)

    def install_kv_cache_hooks(self, cache=None):
        cache = {**cache} if cache is not None else {}
        hooks = []

        def save_to_cache(module, _, output):
            if module not in cache or output.shape[1] > self.decoder.positional_embedding.shape[0]:
                cache[module] = output
            else:
                cache[module] = torch.cat([cache[module], output], dim=1).detach()
            return cache[module]

        def install_hooks(layer):
            if isinstance(layer, MultiHeadAttention):
                hooks.append(layer.key.register_forward_hook(save_to_cache))
                hooks.append(layer.value.register_forward_hook(save_to_cache))

        self.decoder.apply(install_hooks)
        return cache, hooks


torch.manual_seed(0)
model = Whisper()
nn.init.normal_(model.decoder.positional_embedding, std=0.02)
print(model.decoder.blocks[0])
print("sinusoids", sinusoids(4, 6))
print("sd keys", len(model.state_dict()), "mask" in model.state_dict(),
      "encoder.positional_embedding" in model.state_dict())
mel = torch.randn(2, 8, 12)
audio = model.encoder(mel)
print("audio", audio.shape, audio[0, 0, :4])
tokens = torch.tensor([[1, 5, 7], [2, 2, 9]])
logits = model.decoder(tokens, audio)
loss = F.cross_entropy(logits[:, :-1].reshape(-1, 20), tokens[:, 1:].reshape(-1))
loss.backward()
print("loss", loss.item(), model.encoder.conv1.weight.grad.norm().item(),
      model.decoder.blocks[1].cross_attn.key.weight.grad.abs().sum().item())
try:
    model.encoder(torch.randn(1, 8, 10))
except AssertionError as e:
    print(type(e).__name__, e)

with torch.no_grad():
    cache, hooks = model.install_kv_cache_hooks()
    print("hooks", len(hooks), len(cache))
    seq = tokens[:1, :1]
    out = model.decoder(seq, audio[:1], kv_cache=cache)
    print("cache sizes", sorted(tuple(v.shape) for v in cache.values())[:3], len(cache))
    for _ in range(3):
        nxt = out[:, -1].argmax(-1, keepdim=True)
        seq = torch.cat([seq, nxt], dim=1)
        out = model.decoder(nxt, audio[:1], kv_cache=cache)
    for h in hooks:
        h.remove()
    full = model.decoder(seq, audio[:1])
    print("seq", seq.tolist(), torch.allclose(out[:, -1], full[:, -1], atol=1e-5))
    model.half()
    print("half dtypes", model.encoder.conv1.weight.dtype, model.encoder.positional_embedding.dtype,
          model.decoder.mask.dtype)
    try:
        model.encoder(mel.half())
    except RuntimeError as e:
        print(type(e).__name__, e)
    model.float()


class Wav2Vec2GroupNormConvLayer(nn.Module):
    def __init__(self, in_dim, out_dim, kernel, stride):
        super().__init__()
        self.conv = nn.Conv1d(in_dim, out_dim, kernel_size=kernel, stride=stride, bias=False)
        self.activation = nn.GELU()
        self.layer_norm = nn.GroupNorm(num_groups=out_dim, num_channels=out_dim, affine=True)

    def forward(self, hidden_states):
        hidden_states = self.conv(hidden_states)
        hidden_states = self.layer_norm(hidden_states)
        return self.activation(hidden_states)


class Wav2Vec2NoLayerNormConvLayer(nn.Module):
    def __init__(self, in_dim, out_dim, kernel, stride):
        super().__init__()
        self.conv = nn.Conv1d(in_dim, out_dim, kernel_size=kernel, stride=stride, bias=False)
        self.activation = nn.GELU()

    def forward(self, hidden_states):
        return self.activation(self.conv(hidden_states))


class Wav2Vec2FeatureEncoder(nn.Module):
    def __init__(self, conv_dim=(8, 8, 8), conv_kernel=(10, 3, 2), conv_stride=(5, 2, 2)):
        super().__init__()
        layers = [Wav2Vec2GroupNormConvLayer(1, conv_dim[0], conv_kernel[0], conv_stride[0])]
        for i in range(1, len(conv_dim)):
            layers.append(Wav2Vec2NoLayerNormConvLayer(conv_dim[i - 1], conv_dim[i],
                                                       conv_kernel[i], conv_stride[i]))
        self.conv_layers = nn.ModuleList(layers)
        self._requires_grad = True

    def _freeze_parameters(self):
        for param in self.parameters():
            param.requires_grad = False
        self._requires_grad = False

    def forward(self, input_values):
        hidden_states = input_values[:, None]
        if self._requires_grad and self.training:
            hidden_states.requires_grad = True
        for conv_layer in self.conv_layers:
            hidden_states = conv_layer(hidden_states)
        return hidden_states


class Wav2Vec2FeatureProjection(nn.Module):
    def __init__(self, conv_dim=8, hidden_size=12):
        super().__init__()
        self.layer_norm = nn.LayerNorm(conv_dim, eps=1e-5)
        self.projection = nn.Linear(conv_dim, hidden_size)
        self.dropout = nn.Dropout(0.0)

    def forward(self, hidden_states):
        norm_hidden_states = self.layer_norm(hidden_states)
        hidden_states = self.projection(norm_hidden_states)
        hidden_states = self.dropout(hidden_states)
        return hidden_states, norm_hidden_states


class Wav2Vec2SamePadLayer(nn.Module):
    def __init__(self, num_conv_pos_embeddings):
        super().__init__()
        self.num_pad_remove = 1 if num_conv_pos_embeddings % 2 == 0 else 0

    def forward(self, hidden_states):
        if self.num_pad_remove > 0:
            hidden_states = hidden_states[:, :, : -self.num_pad_remove]
        return hidden_states


class Wav2Vec2PositionalConvEmbedding(nn.Module):
    def __init__(self, hidden_size=12, num_conv_pos_embeddings=4, groups=3):
        super().__init__()
        self.conv = nn.Conv1d(hidden_size, hidden_size, kernel_size=num_conv_pos_embeddings,
                              padding=num_conv_pos_embeddings // 2, groups=groups)
        weight_norm = nn.utils.weight_norm
        if hasattr(nn.utils.parametrizations, "weight_norm"):
            weight_norm = nn.utils.parametrizations.weight_norm
        self.conv = weight_norm(self.conv, name="weight", dim=2)
        self.padding = Wav2Vec2SamePadLayer(num_conv_pos_embeddings)
        self.activation = nn.GELU()

    def forward(self, hidden_states):
        hidden_states = hidden_states.transpose(1, 2)
        hidden_states = self.conv(hidden_states)
        hidden_states = self.padding(hidden_states)
        hidden_states = self.activation(hidden_states)
        return hidden_states.transpose(1, 2)


def _conv_out_length(input_length, kernel_size, stride):
    return torch.div(input_length - kernel_size, stride, rounding_mode="floor") + 1


torch.manual_seed(3)
fe = Wav2Vec2FeatureEncoder()
proj = Wav2Vec2FeatureProjection()
pos = Wav2Vec2PositionalConvEmbedding()
print(pos)
print("pos sd", sorted(pos.state_dict().keys()))
g = pos.conv.parametrizations.weight.original0
print("g shape", tuple(g.shape), tuple(pos.conv.parametrizations.weight.original1.shape))
wave = torch.randn(2, 120)
lengths = torch.tensor([120, 90])
for k, s in zip((10, 3, 2), (5, 2, 2)):
    lengths = _conv_out_length(lengths, k, s)
print("feat lengths", lengths.tolist())
feats = fe(wave)
print("feats", feats.shape, feats[0, :2, :4])
hidden, normed = proj(feats.transpose(1, 2))
hidden = hidden + pos(hidden)
print("hidden", hidden.shape, hidden[1, -1, :4])
loss = hidden.pow(2).mean()
loss.backward()
print("grads", g.grad.flatten()[:4], fe.conv_layers[0].layer_norm.weight.grad[:3],
      fe.conv_layers[2].conv.weight.grad.norm().item())
fe._freeze_parameters()
print("frozen", [p.requires_grad for p in fe.parameters()][:2], fe(wave).requires_grad)
fe.eval()
print("eval", fe(wave).requires_grad)
