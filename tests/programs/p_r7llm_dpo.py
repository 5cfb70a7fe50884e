"""Direct Preference Optimization, shrunk from eric-mitchell/direct-preference-optimization:
trainers.py (preference_loss with the sigmoid / IPO / conservative label-smoothed variants and
reference_free, _get_batch_logps with -100 label masking and average_log_prob,
concatenated_inputs + concatenated_forward running chosen and rejected in one batch,
get_batch_metrics' rewards / accuracies / margins, the SFT loss), utils.py pad_to_length,
preference_datasets.py tokenize_batch_element (prompt tokens masked to -100 in the labels) and
the training loop (RMSprop, LambdaLR linear warmup, gradient accumulation, clip_grad_norm_). A
frozen deep-copied reference model, a byte-level "tokenizer" and a tiny causal LM stand in for
the Hugging Face models."""
import copy
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

VOCAB = 40


def tokenize(text):
    return [3 + (ord(c) - 97) % (VOCAB - 3) for c in text]


def pad_to_length(tensor, length, pad_value, dim=-1):
    if tensor.size(dim) >= length:
        return tensor
    else:
        pad_size = list(tensor.shape)
        pad_size[dim] = length - tensor.size(dim)
        return torch.cat([tensor, pad_value * torch.ones(*pad_size, dtype=tensor.dtype,
                                                         device=tensor.device)], dim=dim)


def tokenize_batch_element(prompt, chosen, rejected, truncation_mode="keep_end", max_length=16,
                           max_prompt_length=8):
    chosen_tokens = {"input_ids": tokenize(chosen) + [2]}
    rejected_tokens = {"input_ids": tokenize(rejected) + [2]}
    prompt_tokens = {"input_ids": tokenize(prompt)}
    for toks in (chosen_tokens, rejected_tokens, prompt_tokens):
        toks["attention_mask"] = [1] * len(toks["input_ids"])
    longer_response_length = max(len(chosen_tokens["input_ids"]),
                                 len(rejected_tokens["input_ids"]))
    # if combined sequence is too long, truncate the prompt
    if len(prompt_tokens["input_ids"]) + longer_response_length > max_length:
        if truncation_mode == "keep_start":
            prompt_tokens = {k: v[:max_prompt_length] for k, v in prompt_tokens.items()}
        elif truncation_mode == "keep_end":
            prompt_tokens = {k: v[-max_prompt_length:] for k, v in prompt_tokens.items()}
        else:
            raise ValueError(f"Unknown truncation mode: {truncation_mode}")
    # if that's still too long, truncate the response
    if len(prompt_tokens["input_ids"]) + longer_response_length > max_length:
        chosen_tokens = {k: v[:max_length - max_prompt_length] for k, v in chosen_tokens.items()}
        rejected_tokens = {k: v[:max_length - max_prompt_length]
                           for k, v in rejected_tokens.items()}
    chosen_sequence_tokens = {k: prompt_tokens[k] + chosen_tokens[k] for k in chosen_tokens}
    rejected_sequence_tokens = {k: prompt_tokens[k] + rejected_tokens[k] for k in rejected_tokens}
    chosen_sequence_tokens["labels"] = chosen_sequence_tokens["input_ids"][:]
    chosen_sequence_tokens["labels"][:len(prompt_tokens["input_ids"])] = \
        [-100] * len(prompt_tokens["input_ids"])
    rejected_sequence_tokens["labels"] = rejected_sequence_tokens["input_ids"][:]
    rejected_sequence_tokens["labels"][:len(prompt_tokens["input_ids"])] = \
        [-100] * len(prompt_tokens["input_ids"])
    batch = {}
    for k, toks in {"chosen": chosen_sequence_tokens, "rejected": rejected_sequence_tokens}.items():
        for type_key, tokens in toks.items():
            batch[f"{k}_{type_key}"] = tokens
    return batch


def collate(elements):
    """get_collate_fn: right-pad input_ids with the pad token, labels with -100, masks with 0."""
    padded = {}
    for k in elements[0]:
        seqs = [torch.LongTensor(e[k]) for e in elements]
        padding_value = -100 if k.endswith("_labels") else 0
        padded[k] = nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=padding_value)
    return padded


class TinyLM(nn.Module):
    def __init__(self, d=32, n_head=2, block=32):
        super().__init__()
        self.n_head = n_head
        self.wte = nn.Embedding(VOCAB, d)
        self.wpe = nn.Embedding(block, d)
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, VOCAB, bias=False)

    def forward(self, input_ids, attention_mask):
        B, T = input_ids.shape
        x = self.wte(input_ids) + self.wpe(torch.arange(T))
        q, k, v = self.qkv(self.ln1(x)).split(x.size(-1), dim=2)
        q, k, v = (t.view(B, T, self.n_head, -1).transpose(1, 2) for t in (q, k, v))
        causal = torch.ones(T, T, dtype=torch.bool).tril()
        mask = causal[None, None] & attention_mask[:, None, None, :].bool()
        mask = mask | torch.eye(T, dtype=torch.bool)  # padded rows still attend to themselves
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.proj(y.transpose(1, 2).reshape(B, T, -1))
        x = x + self.mlp(self.ln2(x))
        return self.lm_head(self.ln_f(x))


def preference_loss(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps,
                    reference_rejected_logps, beta, label_smoothing=0.0, ipo=False,
                    reference_free=False):
    pi_logratios = policy_chosen_logps - policy_rejected_logps
    ref_logratios = reference_chosen_logps - reference_rejected_logps
    if reference_free:
        ref_logratios = 0
    logits = pi_logratios - ref_logratios  # also known as h_{\pi_\theta}^{y_w,y_l}
    if ipo:
        losses = (logits - 1 / (2 * beta)) ** 2  # Eq. 17 of https://arxiv.org/pdf/2310.12036v2.pdf
    else:
        # Eq. 3 https://ericmitchell.ai/cdpo.pdf; label_smoothing=0 gives original DPO
        losses = (-F.logsigmoid(beta * logits) * (1 - label_smoothing)
                  - F.logsigmoid(-beta * logits) * label_smoothing)
    chosen_rewards = beta * (policy_chosen_logps - reference_chosen_logps).detach()
    rejected_rewards = beta * (policy_rejected_logps - reference_rejected_logps).detach()
    return losses, chosen_rewards, rejected_rewards


def _get_batch_logps(logits, labels, average_log_prob=False):
    assert logits.shape[:-1] == labels.shape
    labels = labels[:, 1:].clone()
    logits = logits[:, :-1, :]
    loss_mask = (labels != -100)
    # dummy token; we'll ignore the losses on these tokens later
    labels[labels == -100] = 0
    per_token_logps = torch.gather(logits.log_softmax(-1), dim=2,
                                   index=labels.unsqueeze(2)).squeeze(2)
    if average_log_prob:
        return (per_token_logps * loss_mask).sum(-1) / loss_mask.sum(-1)
    else:
        return (per_token_logps * loss_mask).sum(-1)


def concatenated_inputs(batch):
    max_length = max(batch["chosen_input_ids"].shape[1], batch["rejected_input_ids"].shape[1])
    concatenated_batch = {}
    for k in batch:
        if k.startswith("chosen") and isinstance(batch[k], torch.Tensor):
            pad_value = -100 if "labels" in k else 0
            concatenated_key = k.replace("chosen", "concatenated")
            concatenated_batch[concatenated_key] = pad_to_length(batch[k], max_length,
                                                                 pad_value=pad_value)
    for k in batch:
        if k.startswith("rejected") and isinstance(batch[k], torch.Tensor):
            pad_value = -100 if "labels" in k else 0
            concatenated_key = k.replace("rejected", "concatenated")
            concatenated_batch[concatenated_key] = torch.cat((
                concatenated_batch[concatenated_key],
                pad_to_length(batch[k], max_length, pad_value=pad_value),
            ), dim=0)
    return concatenated_batch


def concatenated_forward(model, batch):
    concatenated_batch = concatenated_inputs(batch)
    all_logits = model(concatenated_batch["concatenated_input_ids"],
                       attention_mask=concatenated_batch["concatenated_attention_mask"]
                       ).to(torch.float32)
    all_logps = _get_batch_logps(all_logits, concatenated_batch["concatenated_labels"],
                                 average_log_prob=False)
    chosen_logps = all_logps[:batch["chosen_input_ids"].shape[0]]
    rejected_logps = all_logps[batch["chosen_input_ids"].shape[0]:]
    return chosen_logps, rejected_logps


def get_batch_metrics(policy, reference_model, batch, loss_config):
    metrics = {}
    if loss_config["name"] in {"dpo", "ipo"}:
        policy_chosen_logps, policy_rejected_logps = concatenated_forward(policy, batch)
        with torch.no_grad():
            reference_chosen_logps, reference_rejected_logps = concatenated_forward(
                reference_model, batch)
        if loss_config["name"] == "dpo":
            loss_kwargs = {"beta": loss_config["beta"], "reference_free": False,
                           "label_smoothing": loss_config["label_smoothing"], "ipo": False}
        else:
            loss_kwargs = {"beta": loss_config["beta"], "ipo": True}
        losses, chosen_rewards, rejected_rewards = preference_loss(
            policy_chosen_logps, policy_rejected_logps, reference_chosen_logps,
            reference_rejected_logps, **loss_kwargs)
        reward_accuracies = (chosen_rewards > rejected_rewards).float()
        metrics["rewards/chosen"] = chosen_rewards.mean().item()
        metrics["rewards/rejected"] = rejected_rewards.mean().item()
        metrics["rewards/accuracies"] = reward_accuracies.mean().item()
        metrics["rewards/margins"] = (chosen_rewards - rejected_rewards).mean().item()
        metrics["logps/rejected"] = policy_rejected_logps.detach().mean().item()
    elif loss_config["name"] == "sft":
        policy_chosen_logits = policy(batch["chosen_input_ids"],
                                      attention_mask=batch["chosen_attention_mask"]
                                      ).to(torch.float32)
        policy_chosen_logps = _get_batch_logps(policy_chosen_logits, batch["chosen_labels"],
                                               average_log_prob=False)
        losses = -policy_chosen_logps
    metrics["logps/chosen"] = policy_chosen_logps.detach().mean().item()
    return losses.mean(), metrics


torch.manual_seed(0)
pairs = [("what is ab", "abc ok", "no"), ("say hi", "hi there", "bye bye bye"),
         ("count", "one two three", "four"), ("a long prompt that is cut", "yes", "nope"),
         ("tell me", "sure thing", "no way"), ("hello", "hey", "go away now")]
elements = [tokenize_batch_element(*p) for p in pairs]
print("element keys", sorted(elements[0]))
print("labels[3]", elements[3]["chosen_labels"])
batch = collate(elements)
for k in sorted(batch):
    print(k, tuple(batch[k].shape), batch[k].dtype, int(batch[k].sum()))
cat = concatenated_inputs(batch)
print("concatenated", {k: tuple(v.shape) for k, v in cat.items()})
print("pad_to_length", pad_to_length(torch.tensor([[1, 2]]), 4, pad_value=-100))

# the loss variants on fixed log-probs
pc, pr = torch.tensor([-3.0, -5.0, -2.5]), torch.tensor([-4.0, -4.5, -6.0])
rc, rr = torch.tensor([-3.5, -5.0, -3.0]), torch.tensor([-3.8, -4.0, -5.5])
for kw in ({}, {"label_smoothing": 0.1}, {"ipo": True}, {"reference_free": True}):
    losses, cr, rj = preference_loss(pc, pr, rc, rr, beta=0.1, **kw)
    print("preference_loss", kw, [round(v, 5) for v in losses.tolist()],
          [round(v, 4) for v in (cr - rj).tolist()])

logits = torch.randn(2, 5, VOCAB)
labels = torch.tensor([[-100, -100, 4, 5, 6], [-100, 7, 8, -100, -100]])
print("batch logps", _get_batch_logps(logits, labels),
      _get_batch_logps(logits, labels, average_log_prob=True))

policy = TinyLM()
# SFT first, then DPO against the SFT model as the reference, as the repo's README prescribes
for loss_config in ({"name": "sft"},
                    {"name": "dpo", "beta": 0.1, "label_smoothing": 0.0},
                    {"name": "ipo", "beta": 0.1}):
    reference_model = copy.deepcopy(policy)
    reference_model.eval()
    for p in reference_model.parameters():
        p.requires_grad_(False)
    optimizer = torch.optim.RMSprop(policy.parameters(), lr=3e-3)
    warmup_steps = 2
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lr_lambda=lambda step: min(1.0, (step + 1) / (warmup_steps + 1)))
    grad_accumulation_steps = 2
    micro = len(pairs) // grad_accumulation_steps
    for step in range(4):
        policy.train()
        all_metrics = {}
        for microbatch_idx in range(grad_accumulation_steps):
            sl = slice(microbatch_idx * micro, (microbatch_idx + 1) * micro)
            local_microbatch = {k: v[sl] for k, v in batch.items()}
            loss, metrics = get_batch_metrics(policy, reference_model, local_microbatch,
                                              loss_config)
            (loss / grad_accumulation_steps).backward()
            for k, v in metrics.items():
                all_metrics.setdefault(k, []).append(v)
        grad_norm = nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        mean_metrics = {k: round(sum(v) / len(v), 4) for k, v in sorted(all_metrics.items())}
        print(loss_config["name"], step, "loss %.5f" % loss.item(), "grad_norm %.5f" % grad_norm,
              "lr %.6f" % scheduler.get_last_lr()[0], mean_metrics)

with torch.no_grad():
    out = policy(batch["chosen_input_ids"], batch["chosen_attention_mask"])
print("logits", tuple(out.shape), "%.5f %.5f" % (out.mean().item(), out.std().item()))
print("rmsprop state", sorted(optimizer.state_dict()["state"][0]),
      optimizer.state_dict()["param_groups"][0]["initial_lr"])
