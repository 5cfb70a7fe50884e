"""Medusa heads on a byte-level GPT trained with activation checkpointing. Shrunk from
FasterDecoding/Medusa: medusa/model/medusa_model.py (ResBlock initialised as identity with SiLU,
medusa_head = ModuleList of Sequential([ResBlock] * n_layers, Linear) -- the list repetition
shares one ResBlock --, forward running the frozen base under torch.inference_mode and
cloning the hidden states), medusa/train/train_legacy.py (CustomizedTrainer.compute_loss: head i
predicts token t+2+i, CrossEntropyLoss per head, top-1 accuracy on non-ignored labels) and
medusa/model/utils.py (evaluate_posterior with temperature 0: cumprod of matches, accept
length, best candidate), decoding with a single top-1 candidate chain. The base model follows
karpathy/nanoGPT model.py (tied wte / lm_head weights, configure_optimizers: decay for >= 2-D
params, the inspect.signature check for AdamW's fused argument; train.py's get_lr cosine
schedule with warmup) with each block run through torch.utils.checkpoint.checkpoint(...,
use_reentrant=False) as Hugging Face's gradient_checkpointing_enable does; checkpointed and
plain gradients are compared, with dropout recomputed under the preserved RNG state."""
import importlib
import inspect
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
checkpoint = importlib.import_module(os.environ.get("TORCH_LIB", "torch") +
                                     ".utils.checkpoint").checkpoint

IGNORE_TOKEN_ID = -100
TEXT = ("the quick brown fox jumps over the lazy dog. " * 6).encode()


class Block(nn.Module):
    def __init__(self, d, n_head, dropout):
        super().__init__()
        self.n_head = n_head
        self.ln_1 = nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d),
                                 nn.Dropout(dropout))
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=None,
                                           dropout_p=0.1 if self.training else 0, is_causal=True)
        x = x + self.resid_dropout(self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C)))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size=256, block_size=32, n_layer=2, n_embd=32, n_head=4,
                 dropout=0.1):
        super().__init__()
        self.gradient_checkpointing = False
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd), wpe=nn.Embedding(block_size, n_embd),
            drop=nn.Dropout(dropout),
            h=nn.ModuleList([Block(n_embd, n_head, dropout) for _ in range(n_layer)]),
            ln_f=nn.LayerNorm(n_embd)))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # https://paperswithcode.com/method/weight-tying
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def model(self, idx):
        """the decoder without its head (Hugging Face's base_model.model)."""
        t = idx.size(1)
        x = self.transformer.drop(self.transformer.wte(idx) +
                                  self.transformer.wpe(torch.arange(0, t, dtype=torch.long)))
        for block in self.transformer.h:
            if self.gradient_checkpointing and self.training:
                x = checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        return self.transformer.ln_f(x)

    def forward(self, idx, targets=None):
        logits = self.lm_head(self.model(idx))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        param_dict = {pn: p for pn, p in self.named_parameters()}
        param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [{"params": decay_params, "weight_decay": weight_decay},
                        {"params": nodecay_params, "weight_decay": 0.0}]
        num_decay_params = sum(p.numel() for p in decay_params)
        num_nodecay_params = sum(p.numel() for p in nodecay_params)
        print(f"num decayed parameter tensors: {len(decay_params)}, with "
              f"{num_decay_params:,} parameters")
        print(f"num non-decayed parameter tensors: {len(nodecay_params)}, with "
              f"{num_nodecay_params:,} parameters")
        fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
        use_fused = fused_available and device_type == "cuda"
        extra_args = dict(fused=True) if use_fused else dict()
        optimizer = torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)
        print(f"using fused AdamW: {use_fused} (fused available: {fused_available})")
        return optimizer


class ResBlock(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.linear = nn.Linear(hidden_size, hidden_size)
        # Initialize as an identity mapping
        torch.nn.init.zeros_(self.linear.weight)
        # Use SiLU activation to keep consistent with the Llama model
        self.act = nn.SiLU()

    def forward(self, x):
        return x + self.act(self.linear(x))


class MedusaModel(nn.Module):
    def __init__(self, base_model, medusa_num_heads=3, medusa_num_layers=1):
        super().__init__()
        self.base_model = base_model
        self.hidden_size = base_model.lm_head.weight.shape[-1]
        self.vocab_size = base_model.lm_head.weight.shape[0]
        self.medusa = medusa_num_heads
        self.medusa_head = nn.ModuleList([
            nn.Sequential(*([ResBlock(self.hidden_size)] * medusa_num_layers),
                          nn.Linear(self.hidden_size, self.vocab_size, bias=False))
            for _ in range(medusa_num_heads)])
        # Initialize the lm_head of each medusa head from the base model's
        for i in range(medusa_num_heads):
            self.medusa_head[i][-1].weight.data[:] = base_model.lm_head.weight.data[:]

    def forward(self, input_ids=None, output_orig=False):
        with torch.inference_mode():
            outputs = self.base_model.model(input_ids)
            if output_orig:
                orig = self.base_model.lm_head(outputs)
        # Clone the output hidden states
        hidden_states = outputs.clone()
        medusa_logits = []
        for i in range(self.medusa):
            medusa_logits.append(self.medusa_head[i](hidden_states))
        if output_orig:
            return torch.stack(medusa_logits, dim=0), outputs, orig
        return torch.stack(medusa_logits, dim=0)


def compute_loss(model, inputs):
    logits = model(input_ids=inputs["input_ids"])
    labels = inputs["labels"]
    # Shift so that tokens < n predict n
    loss = 0
    loss_fct = nn.CrossEntropyLoss()
    log = {}
    medusa = logits.shape[0]
    for i in range(medusa):
        medusa_logits = logits[i, :, : -(2 + i)].contiguous()
        medusa_labels = labels[..., 2 + i:].contiguous()
        medusa_logits = medusa_logits.view(-1, logits.shape[-1])
        medusa_labels = medusa_labels.view(-1)
        loss_i = loss_fct(medusa_logits, medusa_labels)
        loss += loss_i
        not_ignore = medusa_labels.ne(IGNORE_TOKEN_ID)
        medusa_labels = medusa_labels[not_ignore]
        # Add top-k accuracy
        for k in range(1, 2):
            _, topk = medusa_logits.topk(k, dim=-1)
            topk = topk[not_ignore]
            correct = topk.eq(medusa_labels.unsqueeze(-1)).any(-1)
            log[f"medusa{i}_top{k}"] = round(correct.float().mean().item(), 4)
        log[f"medusa{i}_loss"] = round(loss_i.item(), 4)
    return loss, log


def evaluate_posterior(logits, candidates):
    # Greedy decoding based on temperature value
    posterior_mask = (candidates[:, 1:] == torch.argmax(logits[:, :-1], dim=-1)).int()
    candidates_accept_length = (torch.cumprod(posterior_mask, dim=1)).sum(dim=1)
    accept_length = candidates_accept_length.max()
    # Choose the best candidate
    if accept_length == 0:
        # Default to the first candidate if none are accepted
        best_candidate = torch.tensor(0, dtype=torch.long, device=candidates.device)
    else:
        best_candidate = torch.argmax(candidates_accept_length).to(torch.long)
    return best_candidate, accept_length


def get_lr(it, warmup_iters=3, lr_decay_iters=12, learning_rate=3e-3, min_lr=3e-4):
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    assert 0 <= decay_ratio <= 1
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))  # coeff ranges 0..1
    return min_lr + coeff * (learning_rate - min_lr)


data = torch.tensor(list(TEXT), dtype=torch.long)
print("data", data.shape, data[:8].tolist(), bytes(data[:9].tolist()).decode())


def get_batch(g, batch_size=4, block_size=24):
    ix = torch.randint(len(data) - block_size, (batch_size,), generator=g)
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix])
    return x, y


# checkpointed vs plain gradients (dropout on: recomputation must replay the same masks)
torch.manual_seed(0)
model = GPT()
print("tied", model.transformer.wte.weight is model.lm_head.weight,
      "params", sum(p.numel() for p in model.parameters()))
x, y = get_batch(torch.Generator().manual_seed(0))
grads = []
for ckpt in (False, True):
    model.gradient_checkpointing = ckpt
    model.zero_grad()
    torch.manual_seed(5)
    _, loss = model(x, y)
    loss.backward()
    grads.append([p.grad.clone() for p in model.parameters()])
    print("checkpointing", ckpt, "loss %.6f" % loss.item(), "wte grad %.6f" %
          model.lm_head.weight.grad.norm().item())
print("same grads", all(torch.allclose(a, b, atol=1e-6) for a, b in zip(*grads)))
print("grad_fn", loss.grad_fn.name(), type(loss.grad_fn.next_functions[0][0]).__name__)

model.gradient_checkpointing = True
optimizer = model.configure_optimizers(0.1, 3e-3, (0.9, 0.95), "cpu")
g = torch.Generator().manual_seed(1)
for it in range(8):
    lr = get_lr(it)
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr
    x, y = get_batch(g)
    _, loss = model(x, y)
    loss.backward()
    gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    print("base", it, "lr %.6f loss %.5f grad_norm %.5f" % (lr, loss.item(), gn.item()))

# Medusa-1: freeze the base model, train only the heads
model.eval()
for p in model.parameters():
    p.requires_grad_(False)
medusa_model = MedusaModel(model, medusa_num_heads=3, medusa_num_layers=2)
heads = medusa_model.medusa_head
print("shared ResBlock", heads[0][0] is heads[0][1], "trainable",
      sum(p.numel() for p in medusa_model.parameters() if p.requires_grad))
opt = torch.optim.AdamW([p for p in medusa_model.parameters() if p.requires_grad], lr=1e-2)
for it in range(6):
    x, y = get_batch(g)
    labels = x.clone()
    labels[:, :3] = IGNORE_TOKEN_ID
    loss, log = compute_loss(medusa_model, {"input_ids": x, "labels": labels})
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("medusa", it, "loss %.5f" % loss.item(), log)
ml, hidden, orig = medusa_model(x[:1], output_orig=True)
print("medusa logits", tuple(ml.shape), "hidden is_inference", hidden.is_inference(),
      "orig requires_grad", orig.requires_grad, "logits requires_grad", ml.requires_grad)

# greedy Medusa decoding with one top-1 candidate chain per step
with torch.no_grad():
    ids = data[None, :10].clone()
    accepted = []
    while ids.shape[1] < 30:
        ml, _, orig = medusa_model(ids, output_orig=True)
        candidates = torch.cat([orig[:, -1].argmax(-1), ml[:, 0, -1].argmax(-1)])[None]
        logits, _ = model(torch.cat([ids, candidates], dim=1))
        logits = logits[:, -candidates.shape[1]:]
        best_candidate, accept_length = evaluate_posterior(logits, candidates)
        accepted.append(int(accept_length))
        ids = torch.cat([ids, candidates[best_candidate, :accept_length + 1][None]], dim=1)
print("accept lengths", accepted, "decoded", repr(bytes(ids[0].tolist()).decode()))
greedy = data[None, :10].clone()
with torch.no_grad():
    while greedy.shape[1] < ids.shape[1]:
        greedy = torch.cat([greedy, model(greedy)[0][:, -1:].argmax(-1)], dim=1)
print("matches greedy", torch.equal(greedy, ids))
