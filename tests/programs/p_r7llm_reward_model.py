"""Reward-model training on preference pairs, shrunk from huggingface/trl RewardTrainer
(compute_loss: -logsigmoid(r_chosen - r_rejected - margin) plus center_rewards_coefficient,
prediction_step's stacked-logits softmax and compute_accuracy, RewardDataCollatorWithPadding),
transformers' GPT2ForSequenceClassification pooling (score head on the last non-pad token, both
the argmax-of-first-pad and the newer token_indices * non_pad_mask forms), and
LAION-AI/Open-Assistant model_training/losses.py RMLoss (all ranked pairs of a conversation via
torch.combinations + Tensor.take, an L2 penalty on the logits, cu_lengths). AdamW with
weight-decay groups and a cosine schedule with warmup (transformers' get_cosine_schedule_with_
warmup as a LambdaLR)."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

VOCAB, PAD = 30, 0


class GPT2ForSequenceClassification(nn.Module):
    def __init__(self, d=32, n_layer=2, block=16, num_labels=1, new_pooling=True):
        super().__init__()
        self.new_pooling = new_pooling
        self.wte = nn.Embedding(VOCAB, d)
        self.wpe = nn.Embedding(block, d)
        layer = nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.h = nn.TransformerEncoder(layer, n_layer, enable_nested_tensor=False)
        self.ln_f = nn.LayerNorm(d)
        self.score = nn.Linear(d, num_labels, bias=False)

    def forward(self, input_ids, attention_mask):
        batch_size, T = input_ids.shape
        x = self.wte(input_ids) + self.wpe(torch.arange(T))
        causal = nn.Transformer.generate_square_subsequent_mask(T)
        hidden = self.ln_f(self.h(x, mask=causal, src_key_padding_mask=None, is_causal=True))
        logits = self.score(hidden)
        if self.new_pooling:
            non_pad_mask = (input_ids != PAD).to(torch.int32)
            token_indices = torch.arange(input_ids.shape[-1], dtype=torch.int32)
            sequence_lengths = (token_indices * non_pad_mask).argmax(-1)
        else:
            sequence_lengths = torch.eq(input_ids, PAD).int().argmax(-1) - 1
            sequence_lengths = sequence_lengths % input_ids.shape[-1]
        pooled_logits = logits[torch.arange(batch_size), sequence_lengths]
        return {"logits": pooled_logits}


def pad(seqs):
    return nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs], batch_first=True,
                                     padding_value=PAD)


def reward_collator(features):
    batch = {"input_ids_chosen": pad([f["input_ids_chosen"] for f in features]),
             "input_ids_rejected": pad([f["input_ids_rejected"] for f in features])}
    batch["attention_mask_chosen"] = (batch["input_ids_chosen"] != PAD).long()
    batch["attention_mask_rejected"] = (batch["input_ids_rejected"] != PAD).long()
    if "margin" in features[0]:
        batch["margin"] = torch.tensor([f["margin"] for f in features], dtype=torch.float)
    return batch


def compute_loss(model, inputs, center_rewards_coefficient=None, return_outputs=False):
    rewards_chosen = model(input_ids=inputs["input_ids_chosen"],
                           attention_mask=inputs["attention_mask_chosen"])["logits"]
    rewards_rejected = model(input_ids=inputs["input_ids_rejected"],
                             attention_mask=inputs["attention_mask_rejected"])["logits"]
    # calculate loss, optionally modulate with margin
    if "margin" in inputs:
        loss = -nn.functional.logsigmoid(rewards_chosen - rewards_rejected
                                         - inputs["margin"]).mean()
    else:
        loss = -nn.functional.logsigmoid(rewards_chosen - rewards_rejected).mean()
    if center_rewards_coefficient is not None:
        loss += center_rewards_coefficient * torch.mean((rewards_chosen + rewards_rejected) ** 2)
    if return_outputs:
        return loss, {"rewards_chosen": rewards_chosen, "rewards_rejected": rewards_rejected}
    return loss


def prediction_step(model, inputs):
    with torch.no_grad():
        loss, logits_dict = compute_loss(model, inputs, return_outputs=True)
    logits = tuple(v for k, v in logits_dict.items())
    logits = tuple(t.detach() for t in logits)
    logits = torch.stack(logits).mean(dim=2).softmax(dim=0).T
    labels = torch.zeros(logits.shape[0])
    return loss, logits, labels


def compute_accuracy(predictions, labels):
    predictions = predictions.argmax(1)
    return (predictions == labels).float().mean().item()


class RMLoss(nn.Module):
    def __init__(self, reduction="mean", beta=0.001):
        super().__init__()
        self.reduction = reduction
        self.beta = beta

    def forward(self, logits, cu_lengths=None):
        # if cu_lengths is None, assume that all examples belong to the same conversation
        if cu_lengths is None:
            cu_lengths = [0, logits.size(0)]
        device = logits.device
        losses = []
        for start, end in zip(cu_lengths[:-1], cu_lengths[1:]):
            pairs = torch.combinations(torch.arange(end - start, device=device), 2)
            pos_ids, neg_ids = pairs[:, 0], pairs[:, 1]
            pos_logits = logits.take(start + pos_ids)
            neg_logits = logits.take(start + neg_ids)
            l2 = 0.5 * (pos_logits**2 + neg_logits**2)
            _loss = (-F.logsigmoid(pos_logits - neg_logits) + self.beta * l2).mean()
            losses.append(_loss)
        loss = torch.stack(losses)
        if self.reduction == "none":
            return loss
        return loss.mean()


def get_cosine_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps,
                                    num_cycles=0.5):
    def lr_lambda(current_step):
        if current_step < num_warmup_steps:
            return float(current_step) / float(max(1, num_warmup_steps))
        progress = float(current_step - num_warmup_steps) / float(
            max(1, num_training_steps - num_warmup_steps))
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * progress)))
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)


def make_pair(g):
    """chosen responses contain more of token 5; lengths differ so padding matters."""
    n_c, n_r = (int(v) for v in torch.randint(4, 10, (2,), generator=g))
    chosen = torch.randint(1, VOCAB, (n_c,), generator=g)
    chosen[::2] = 5
    rejected = torch.randint(6, VOCAB, (n_r,), generator=g)
    margin = float(n_c) / 10
    return {"input_ids_chosen": chosen.tolist(), "input_ids_rejected": rejected.tolist(),
            "margin": margin}


torch.manual_seed(0)
g = torch.Generator().manual_seed(1)
train = [make_pair(g) for _ in range(16)]
evals = [make_pair(g) for _ in range(8)]
batch = reward_collator(train[:4])
print({k: (tuple(v.shape), v.dtype) for k, v in batch.items()})
print("lengths", batch["attention_mask_chosen"].sum(1), batch["attention_mask_rejected"].sum(1))

old = GPT2ForSequenceClassification(new_pooling=False)
new = GPT2ForSequenceClassification(new_pooling=True)
new.load_state_dict(old.state_dict())
a = old(batch["input_ids_chosen"], batch["attention_mask_chosen"])["logits"]
b = new(batch["input_ids_chosen"], batch["attention_mask_chosen"])["logits"]
print("pooling agree", torch.allclose(a, b), a.shape, a.flatten())

rm_loss = RMLoss(beta=0.001)
ranked = torch.tensor([2.0, 1.0, 0.5, -1.0, 0.3, 0.1, 0.2])
print("combinations", torch.combinations(torch.arange(3), 2).tolist())
print("RMLoss", rm_loss(ranked).item(), RMLoss(reduction="none")(ranked, [0, 4, 7]))

model = GPT2ForSequenceClassification()
decay, no_decay = [], []
for n, p in model.named_parameters():
    (no_decay if p.dim() < 2 or "ln" in n or "norm" in n else decay).append(p)
print("param groups", len(decay), len(no_decay), sum(p.numel() for p in model.parameters()))
optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                               {"params": no_decay, "weight_decay": 0.0}], lr=2e-3)
epochs, bs = 3, 4
scheduler = get_cosine_schedule_with_warmup(optimizer, 2, epochs * len(train) // bs)
step = 0
for epoch in range(epochs):
    model.train()
    perm = torch.randperm(len(train)).tolist()
    for i in range(0, len(train), bs):
        inputs = reward_collator([train[j] for j in perm[i:i + bs]])
        if epoch == 2:
            inputs.pop("margin")
        loss = compute_loss(model, inputs, center_rewards_coefficient=0.01)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        gn = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        step += 1
        if step % 2 == 0:
            print("step", step, "loss %.5f" % loss.item(), "grad_norm %.5f" % gn.item(),
                  "lr %.6f" % scheduler.get_last_lr()[0])
    model.eval()
    eval_loss, preds, labels = prediction_step(model, reward_collator(evals))
    print("epoch", epoch, "eval_loss %.5f" % eval_loss.item(), "accuracy",
          compute_accuracy(preds, labels), "probs", preds[:3])

out = model(reward_collator(evals)["input_ids_chosen"], None)["logits"]
print("rewards", out.shape, "%.5f %.5f" % (out.mean().item(), out.std().item()))
# OpenAssistant: the ranked replies of a conversation, scored and trained with RMLoss
conv = pad([train[0]["input_ids_chosen"], train[1]["input_ids_chosen"],
            train[0]["input_ids_rejected"], train[1]["input_ids_rejected"]])
logits = model(conv, None)["logits"].squeeze(-1)
loss = rm_loss(logits, cu_lengths=[0, 2, 4])
loss.backward()
print("RMLoss on model", "%.5f" % loss.item(), "score grad",
      "%.5f" % model.score.weight.grad.norm())
