"""Hugging Face transformers' modeling_gpt2.py and modeling_vit.py, shrunk: Conv1D (addmm over a
transposed weight), GPT2Attention with the causal "bias" buffer registered persistent=False,
_split_heads/_merge_heads, layer_past / use_cache key-value caching, additive attention mask
from torch.finfo(dtype).min, scale_attn_by_inverse_layer_idx, NewGELUActivation, _init_weights
with the scaled c_proj init, tied lm_head, generate-style greedy decoding; ViTEmbeddings with cls
token, interpolate_pos_encoding (bicubic) and ViTPatchEmbeddings' channel check."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class Config:
    vocab_size = 50
    n_positions = 16
    n_embd = 24
    n_layer = 2
    n_head = 4
    n_inner = None
    resid_pdrop = 0.0
    embd_pdrop = 0.0
    attn_pdrop = 0.0
    layer_norm_epsilon = 1e-5
    initializer_range = 0.02
    scale_attn_weights = True
    scale_attn_by_inverse_layer_idx = True


class NewGELUActivation(nn.Module):
    def forward(self, input):
        return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi)
                                               * (input + 0.044715 * torch.pow(input, 3.0))))


class Conv1D(nn.Module):
    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.nx = nx
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))
        nn.init.normal_(self.weight, std=0.02)

    def __repr__(self):
        return "Conv1D(nf={nf}, nx={nx})".format(**self.__dict__)

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        x = x.view(size_out)
        return x


class GPT2Attention(nn.Module):
    def __init__(self, config, layer_idx=None):
        super().__init__()
        max_positions = config.n_positions
        self.register_buffer(
            "bias",
            torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(
                1, 1, max_positions, max_positions),
            persistent=False,
        )
        self.register_buffer("masked_bias", torch.tensor(-1e4), persistent=False)
        self.embed_dim = config.n_embd
        self.num_heads = config.n_head
        self.head_dim = self.embed_dim // self.num_heads
        self.split_size = self.embed_dim
        if self.head_dim * self.num_heads != self.embed_dim:
            raise ValueError(
                f"`embed_dim` must be divisible by num_heads (got `embed_dim`: {self.embed_dim} and `num_heads`:"  # noqa: E501
                f" {self.num_heads}).")
        self.scale_attn_weights = config.scale_attn_weights
        self.scale_attn_by_inverse_layer_idx = config.scale_attn_by_inverse_layer_idx
        self.layer_idx = layer_idx
        self.c_attn = Conv1D(3 * self.embed_dim, self.embed_dim)
        self.c_proj = Conv1D(self.embed_dim, self.embed_dim)
        self.attn_dropout = nn.Dropout(config.attn_pdrop)
        self.resid_dropout = nn.Dropout(config.resid_pdrop)

    def _attn(self, query, key, value, attention_mask=None):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        if self.scale_attn_weights:
            attn_weights = attn_weights / torch.full(
                [], value.size(-1) ** 0.5, dtype=attn_weights.dtype, device=attn_weights.device)
        if self.scale_attn_by_inverse_layer_idx:
            attn_weights = attn_weights / float(self.layer_idx + 1)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype,
                                device=attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.type(value.dtype)
        attn_weights = self.attn_dropout(attn_weights)
        attn_output = torch.matmul(attn_weights, value)
        return attn_output, attn_weights

    def _split_heads(self, tensor, num_heads, attn_head_size):
        new_shape = tensor.size()[:-1] + (num_heads, attn_head_size)
        tensor = tensor.view(new_shape)
        return tensor.permute(0, 2, 1, 3)

    def _merge_heads(self, tensor, num_heads, attn_head_size):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        new_shape = tensor.size()[:-2] + (num_heads * attn_head_size,)
        return tensor.view(new_shape)

    def forward(self, hidden_states, layer_past=None, attention_mask=None, use_cache=False):
        query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
        query = self._split_heads(query, self.num_heads, self.head_dim)
        key = self._split_heads(key, self.num_heads, self.head_dim)
        value = self._split_heads(value, self.num_heads, self.head_dim)
        if layer_past is not None:
            past_key, past_value = layer_past
            key = torch.cat((past_key, key), dim=-2)
            value = torch.cat((past_value, value), dim=-2)
        present = (key, value) if use_cache is True else None
        attn_output, attn_weights = self._attn(query, key, value, attention_mask)
        attn_output = self._merge_heads(attn_output, self.num_heads, self.head_dim)
        attn_output = self.c_proj(attn_output)
        attn_output = self.resid_dropout(attn_output)
        return (attn_output, present, attn_weights)


class GPT2MLP(nn.Module):
    def __init__(self, intermediate_size, config):
        super().__init__()
        embed_dim = config.n_embd
        self.c_fc = Conv1D(intermediate_size, embed_dim)
        self.c_proj = Conv1D(embed_dim, intermediate_size)
        self.act = NewGELUActivation()
        self.dropout = nn.Dropout(config.resid_pdrop)

    def forward(self, hidden_states):
        hidden_states = self.c_fc(hidden_states)
        hidden_states = self.act(hidden_states)
        hidden_states = self.c_proj(hidden_states)
        return self.dropout(hidden_states)


class GPT2Block(nn.Module):
    def __init__(self, config, layer_idx=None):
        super().__init__()
        hidden_size = config.n_embd
        inner_dim = config.n_inner if config.n_inner is not None else 4 * hidden_size
        self.ln_1 = nn.LayerNorm(hidden_size, eps=config.layer_norm_epsilon)
        self.attn = GPT2Attention(config, layer_idx=layer_idx)
        self.ln_2 = nn.LayerNorm(hidden_size, eps=config.layer_norm_epsilon)
        self.mlp = GPT2MLP(inner_dim, config)

    def forward(self, hidden_states, layer_past=None, attention_mask=None, use_cache=False):
        residual = hidden_states
        hidden_states = self.ln_1(hidden_states)
        attn_output, present, _ = self.attn(hidden_states, layer_past=layer_past,
                                            attention_mask=attention_mask, use_cache=use_cache)
        hidden_states = attn_output + residual
        residual = hidden_states
        hidden_states = self.ln_2(hidden_states)
        feed_forward_hidden_states = self.mlp(hidden_states)
        hidden_states = residual + feed_forward_hidden_states
        return hidden_states, present


class GPT2LMHeadModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.n_positions, config.n_embd)
        self.drop = nn.Dropout(config.embd_pdrop)
        self.h = nn.ModuleList([GPT2Block(config, layer_idx=i) for i in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.apply(self._init_weights)
        self.lm_head.weight = self.wte.weight

    def _init_weights(self, module):
        if isinstance(module, (nn.Linear, Conv1D)):
            module.weight.data.normal_(mean=0.0, std=self.config.initializer_range)
            if module.bias is not None:
                module.bias.data.zero_()
        elif isinstance(module, nn.Embedding):
            module.weight.data.normal_(mean=0.0, std=self.config.initializer_range)
            if module.padding_idx is not None:
                module.weight.data[module.padding_idx].zero_()
        elif isinstance(module, nn.LayerNorm):
            module.bias.data.zero_()
            module.weight.data.fill_(1.0)
        for name, p in module.named_parameters():
            if name == "c_proj.weight":
                p.data.normal_(mean=0.0, std=(self.config.initializer_range
                                              / math.sqrt(2 * self.config.n_layer)))

    def forward(self, input_ids, past_key_values=None, attention_mask=None, labels=None,
                use_cache=False):
        batch_size, seq_len = input_ids.shape
        if past_key_values is None:
            past_length = 0
            past_key_values = tuple([None] * len(self.h))
        else:
            past_length = past_key_values[0][0].size(-2)
        position_ids = torch.arange(past_length, seq_len + past_length, dtype=torch.long)
        position_ids = position_ids.unsqueeze(0)
        if attention_mask is not None:
            attention_mask = attention_mask.view(batch_size, -1)
            attention_mask = attention_mask[:, None, None, :]
            attention_mask = attention_mask.to(dtype=self.wte.weight.dtype)
            attention_mask = (1.0 - attention_mask) * torch.finfo(self.wte.weight.dtype).min
        hidden_states = self.drop(self.wte(input_ids) + self.wpe(position_ids))
        presents = () if use_cache else None
        for block, layer_past in zip(self.h, past_key_values):
            hidden_states, present = block(hidden_states, layer_past=layer_past,
                                           attention_mask=attention_mask, use_cache=use_cache)
            if use_cache:
                presents = presents + (present,)
        hidden_states = self.ln_f(hidden_states)
        lm_logits = self.lm_head(hidden_states)
        loss = None
        if labels is not None:
            shift_logits = lm_logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            loss = F.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)),
                                   shift_labels.view(-1))
        return loss, lm_logits, presents


torch.manual_seed(0)
config = Config()
model = GPT2LMHeadModel(config)
print(model.h[0])
sd = model.state_dict()
print(len(sd), [k for k in sd if k.startswith("h.0.attn")], "lm_head.weight" in sd)
print("buffers", [n for n, _ in model.named_buffers()][:3], len(list(model.buffers())))
print("params", sum(p.numel() for p in model.parameters()), model.lm_head.weight is model.wte.weight)  # noqa: E501
print("c_proj std", model.h[0].attn.c_proj.weight.std().item(), model.h[1].mlp.c_fc.weight.std().item())  # noqa: E501
try:
    cfg = Config()
    cfg.n_head = 5
    GPT2Attention(cfg, 0)
except ValueError as e:
    print(type(e).__name__, e)

ids = torch.randint(0, config.vocab_size, (2, 10))
mask = torch.ones(2, 10, dtype=torch.long)
mask[1, :3] = 0
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1)
for step in range(4):
    loss, logits, _ = model(ids, attention_mask=mask, labels=ids)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    gn = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    print("gpt2 step", step, round(loss.item(), 5), round(gn.item(), 5))
print("wte grad tied", model.wte.weight.grad.abs().sum().item())

model.eval()
with torch.no_grad():
    full = model(ids[:, :7])[1]
    _, l1, past = model(ids[:, :5], use_cache=True)
    _, l2, past2 = model(ids[:, 5:7], past_key_values=past, use_cache=True)
    print("cache", len(past), past[0][0].shape, past2[1][1].shape,
          torch.allclose(torch.cat([l1, l2], 1), full, atol=1e-5))
    gen = ids[:1, :3]
    _, logits, past = model(gen, use_cache=True)
    for _ in range(5):
        nxt = logits[:, -1, :].argmax(dim=-1, keepdim=True)
        gen = torch.cat([gen, nxt], dim=1)
        _, logits, past = model(nxt, past_key_values=past, use_cache=True)
    print("greedy", gen.tolist())


class ViTPatchEmbeddings(nn.Module):
    def __init__(self, image_size=16, patch_size=4, num_channels=3, hidden_size=24):
        super().__init__()
        self.image_size = (image_size, image_size)
        self.patch_size = (patch_size, patch_size)
        self.num_channels = num_channels
        self.num_patches = (image_size // patch_size) ** 2
        self.projection = nn.Conv2d(num_channels, hidden_size, kernel_size=patch_size,
                                    stride=patch_size)

    def forward(self, pixel_values, interpolate_pos_encoding=False):
        batch_size, num_channels, height, width = pixel_values.shape
        if num_channels != self.num_channels:
            raise ValueError(
                "Make sure that the channel dimension of the pixel values match with the one set in the configuration."  # noqa: E501
                f" Expected {self.num_channels} but got {num_channels}.")
        if not interpolate_pos_encoding:
            if height != self.image_size[0] or width != self.image_size[1]:
                raise ValueError(
                    f"Input image size ({height}*{width}) doesn't match model"
                    f" ({self.image_size[0]}*{self.image_size[1]}).")
        return self.projection(pixel_values).flatten(2).transpose(1, 2)


class ViTEmbeddings(nn.Module):
    def __init__(self, hidden_size=24, patch_size=4):
        super().__init__()
        self.cls_token = nn.Parameter(torch.randn(1, 1, hidden_size))
        self.patch_embeddings = ViTPatchEmbeddings(hidden_size=hidden_size)
        num_patches = self.patch_embeddings.num_patches
        self.position_embeddings = nn.Parameter(torch.randn(1, num_patches + 1, hidden_size))
        self.patch_size = patch_size

    def interpolate_pos_encoding(self, embeddings, height, width):
        num_patches = embeddings.shape[1] - 1
        num_positions = self.position_embeddings.shape[1] - 1
        if num_patches == num_positions and height == width:
            return self.position_embeddings
        class_pos_embed = self.position_embeddings[:, :1]
        patch_pos_embed = self.position_embeddings[:, 1:]
        dim = embeddings.shape[-1]
        new_height = height // self.patch_size
        new_width = width // self.patch_size
        sqrt_num_positions = int(num_positions ** 0.5)
        patch_pos_embed = patch_pos_embed.reshape(1, sqrt_num_positions, sqrt_num_positions, dim)
        patch_pos_embed = patch_pos_embed.permute(0, 3, 1, 2)
        patch_pos_embed = nn.functional.interpolate(patch_pos_embed, size=(new_height, new_width),
                                                    mode="bicubic", align_corners=False)
        patch_pos_embed = patch_pos_embed.permute(0, 2, 3, 1).view(1, -1, dim)
        return torch.cat((class_pos_embed, patch_pos_embed), dim=1)

    def forward(self, pixel_values, interpolate_pos_encoding=False):
        batch_size, num_channels, height, width = pixel_values.shape
        embeddings = self.patch_embeddings(pixel_values,
                                           interpolate_pos_encoding=interpolate_pos_encoding)
        cls_tokens = self.cls_token.expand(batch_size, -1, -1)
        embeddings = torch.cat((cls_tokens, embeddings), dim=1)
        if interpolate_pos_encoding:
            embeddings = embeddings + self.interpolate_pos_encoding(embeddings, height, width)
        else:
            embeddings = embeddings + self.position_embeddings
        return embeddings


torch.manual_seed(2)
emb = ViTEmbeddings()
print(emb)
px = torch.randn(2, 3, 16, 16)
e = emb(px)
print("vit emb", e.shape, e[0, :2, :4])
big = torch.randn(1, 3, 24, 20, requires_grad=True)
e2 = emb(big, interpolate_pos_encoding=True)
print("interp", e2.shape, e2[0, -1, :4])
e2.pow(2).mean().backward()
print("pos grad", emb.position_embeddings.grad.abs().sum().item(), big.grad.abs().sum().item())
for bad in (torch.randn(1, 1, 16, 16), torch.randn(1, 3, 24, 24)):
    try:
        emb(bad)
    except ValueError as err:
        print(type(err).__name__, err)
