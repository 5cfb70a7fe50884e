"""BERT masked-language-model pretraining in plain torch, shrunk: Hugging Face's
DataCollatorForLanguageModeling.torch_mask_tokens (torch.full probability matrix, special tokens
mask, bernoulli, 80/10/10 replacement, labels with -100), BertEmbeddings with position_ids and
token_type_ids buffers registered persistent=False, the extended attention mask
(1.0 - mask) * finfo.min, a small encoder, the MLM head with a decoder tied to the word
embeddings and a separate bias, CrossEntropyLoss(ignore_index=-100), gradient accumulation with
clip_grad_norm_, a linear warmup LambdaLR, and masked-token accuracy."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

VOCAB, HIDDEN, MAXLEN = 40, 32, 16
PAD, CLS, SEP, MASK = 0, 1, 2, 3


class BertEmbeddings(nn.Module):
    def __init__(self):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, HIDDEN, padding_idx=PAD)
        self.position_embeddings = nn.Embedding(MAXLEN, HIDDEN)
        self.token_type_embeddings = nn.Embedding(2, HIDDEN)
        self.LayerNorm = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.dropout = nn.Dropout(0.1)
        self.register_buffer("position_ids", torch.arange(MAXLEN).expand((1, -1)),
                             persistent=False)
        self.register_buffer("token_type_ids",
                             torch.zeros(self.position_ids.size(), dtype=torch.long),
                             persistent=False)

    def forward(self, input_ids, token_type_ids=None):
        seq_length = input_ids.size(1)
        position_ids = self.position_ids[:, :seq_length]
        if token_type_ids is None:
            buffered = self.token_type_ids[:, :seq_length]
            token_type_ids = buffered.expand(input_ids.shape[0], seq_length)
        embeddings = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        embeddings = embeddings + self.position_embeddings(position_ids)
        return self.dropout(self.LayerNorm(embeddings))


class BertSelfAttention(nn.Module):
    def __init__(self, num_heads=4):
        super().__init__()
        self.num_attention_heads = num_heads
        self.attention_head_size = HIDDEN // num_heads
        self.all_head_size = HIDDEN
        self.query = nn.Linear(HIDDEN, HIDDEN)
        self.key = nn.Linear(HIDDEN, HIDDEN)
        self.value = nn.Linear(HIDDEN, HIDDEN)
        self.dropout = nn.Dropout(0.1)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        x = x.view(new_x_shape)
        return x.permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask):
        query_layer = self.transpose_for_scores(self.query(hidden_states))
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        attention_scores = attention_scores + attention_mask
        attention_probs = nn.functional.softmax(attention_scores, dim=-1)
        attention_probs = self.dropout(attention_probs)
        context_layer = torch.matmul(attention_probs, value_layer)
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        new_context_layer_shape = context_layer.size()[:-2] + (self.all_head_size,)
        return context_layer.view(new_context_layer_shape), attention_probs


class BertLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = BertSelfAttention()
        self.attn_out = nn.Linear(HIDDEN, HIDDEN)
        self.ln1 = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.intermediate = nn.Sequential(nn.Linear(HIDDEN, 4 * HIDDEN), nn.GELU())
        self.output = nn.Linear(4 * HIDDEN, HIDDEN)
        self.ln2 = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.dropout = nn.Dropout(0.1)

    def forward(self, h, mask):
        ctx, probs = self.attention(h, mask)
        h = self.ln1(h + self.dropout(self.attn_out(ctx)))
        return self.ln2(h + self.dropout(self.output(self.intermediate(h)))), probs


class BertLMPredictionHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(HIDDEN, HIDDEN)
        self.transform_act_fn = nn.GELU()
        self.LayerNorm = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.decoder = nn.Linear(HIDDEN, VOCAB, bias=False)
        self.bias = nn.Parameter(torch.zeros(VOCAB))
        self.decoder.bias = self.bias

    def forward(self, h):
        return self.decoder(self.LayerNorm(self.transform_act_fn(self.dense(h))))


class BertForMaskedLM(nn.Module):
    def __init__(self, num_layers=2):
        super().__init__()
        self.embeddings = BertEmbeddings()
        self.layer = nn.ModuleList([BertLayer() for _ in range(num_layers)])
        self.cls = BertLMPredictionHead()
        self.cls.decoder.weight = self.embeddings.word_embeddings.weight
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            module.weight.data.normal_(mean=0.0, std=0.02)
            if module.bias is not None:
                module.bias.data.zero_()
        elif isinstance(module, nn.Embedding):
            module.weight.data.normal_(mean=0.0, std=0.02)
            if module.padding_idx is not None:
                module.weight.data[module.padding_idx].zero_()
        elif isinstance(module, nn.LayerNorm):
            module.bias.data.zero_()
            module.weight.data.fill_(1.0)

    def get_extended_attention_mask(self, attention_mask, dtype=torch.float32):
        extended_attention_mask = attention_mask[:, None, None, :]
        extended_attention_mask = extended_attention_mask.to(dtype=dtype)
        return (1.0 - extended_attention_mask) * torch.finfo(dtype).min

    def forward(self, input_ids, attention_mask, labels=None):
        h = self.embeddings(input_ids)
        ext = self.get_extended_attention_mask(attention_mask)
        for layer in self.layer:
            h, probs = layer(h, ext)
        prediction_scores = self.cls(h)
        masked_lm_loss = None
        if labels is not None:
            loss_fct = nn.CrossEntropyLoss()  # -100 index = padding token
            masked_lm_loss = loss_fct(prediction_scores.view(-1, VOCAB), labels.view(-1))
        return masked_lm_loss, prediction_scores, probs


def torch_mask_tokens(inputs, special_tokens_mask, mlm_probability=0.15, generator=None):
    labels = inputs.clone()
    probability_matrix = torch.full(labels.shape, mlm_probability)
    probability_matrix.masked_fill_(special_tokens_mask, value=0.0)
    masked_indices = torch.bernoulli(probability_matrix, generator=generator).bool()
    labels[~masked_indices] = -100
    indices_replaced = torch.bernoulli(torch.full(labels.shape, 0.8),
                                       generator=generator).bool() & masked_indices
    inputs[indices_replaced] = MASK
    indices_random = (torch.bernoulli(torch.full(labels.shape, 0.5), generator=generator).bool()
                      & masked_indices & ~indices_replaced)
    random_words = torch.randint(VOCAB, labels.shape, dtype=torch.long, generator=generator)
    inputs[indices_random] = random_words[indices_random]
    return inputs, labels


def make_batch(bsz=6, g=None):
    lengths = torch.randint(6, MAXLEN - 1, (bsz,), generator=g)
    ids = torch.full((bsz, MAXLEN), PAD, dtype=torch.long)
    for i, n in enumerate(lengths.tolist()):
        body = (torch.arange(n - 2) * 3 + i) % (VOCAB - 4) + 4
        ids[i, :n] = torch.cat([torch.tensor([CLS]), body, torch.tensor([SEP])])
    attention_mask = (ids != PAD).long()
    special = (ids == PAD) | (ids == CLS) | (ids == SEP)
    return ids, attention_mask, special


torch.manual_seed(0)
g = torch.Generator().manual_seed(1234)
ids, am, special = make_batch(g=g)
print(ids[:3], am.sum(1), special.dtype, sep="\n")
inputs, labels = torch_mask_tokens(ids.clone(), special, mlm_probability=0.3, generator=g)
print(inputs[:3], labels[:3], sep="\n")
print("masked:", (labels != -100).sum().item(), "as [MASK]:", (inputs == MASK).sum().item())

model = BertForMaskedLM()
print(model.embeddings)
print(model.cls)
print(model.cls.decoder.weight is model.embeddings.word_embeddings.weight,
      model.cls.decoder.bias is model.cls.bias)
sd = model.state_dict()
print(len(sd), [k for k in sd if "embeddings" in k or "cls" in k])
print("position_ids" in sd, model.embeddings.position_ids.shape,
      model.embeddings.position_ids.is_contiguous())
print("params", sum(p.numel() for p in model.parameters()),
      "unique", len({id(p) for p in model.parameters()}))
ext = model.get_extended_attention_mask(am[:2, :8])
print(ext.shape, ext.dtype, ext[1, 0, 0])

model.eval()
loss, scores, probs = model(inputs, am, labels)
print(f"initial loss {loss.item():.4f} (ln V = {math.log(VOCAB):.4f})", scores.shape)
print("attn rows sum", probs[0, 0].sum(-1)[:4], "pad col", probs[0, 0, :, -1].max().item() < 1e-6)
print("ignore_index", nn.CrossEntropyLoss().ignore_index,
      F.cross_entropy(torch.zeros(2, 3), torch.tensor([-100, -100])))

no_decay = ["bias", "LayerNorm.weight"]
grouped = [
    {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
     "weight_decay": 0.01},
    {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
     "weight_decay": 0.0},
]
print([len(gr["params"]) for gr in grouped])
optimizer = torch.optim.AdamW(grouped, lr=5e-3)
warmup, total, accum = 2, 5, 2
scheduler = torch.optim.lr_scheduler.LambdaLR(
    optimizer, lambda s: s / warmup if s < warmup else max(0.0, (total - s) / (total - warmup)))
model.train()
torch.manual_seed(1)
for step in range(total * accum):
    ids, am, special = make_batch(g=g)
    inputs, labels = torch_mask_tokens(ids, special, generator=g)
    loss, scores, _ = model(inputs, am, labels)
    (loss / accum).backward()
    if (step + 1) % accum == 0:
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        with torch.no_grad():
            m = labels != -100
            acc = (scores.argmax(-1)[m] == labels[m]).float().mean()
        print(f"step {step // accum} loss {loss.item():.4f} norm {norm:.4f} "
              f"lr {scheduler.get_last_lr()[0]:.5f} acc {acc.item():.3f}")
print(model.embeddings.word_embeddings.weight[PAD].abs().sum().item())
print("RESULT:", f"{loss.item():.4f}")
