"""Knowledge distillation for language models, shrunk from jongwooko/distillm distillm/losses.py
(forward_kl, reverse_kl, symmetric_kl, js_distance, tv_distance, skewed_forward_kl /
skewed_reverse_kl, each with the inf_mask masked_fill and -100 label masking) and
microsoft/LMOps minillm finetune.py get_distil_loss + its loss = (1 - kd_ratio) * lm_loss +
kd_ratio * distil_loss training step, plus the classic Hinton loss as Hugging Face's
distillation examples write it (nn.KLDivLoss(reduction="batchmean") on temperature-scaled
log-softmax / softmax, times T**2). A small teacher is first fitted on synthetic sequences, then
a narrower student is distilled with each divergence. The inf_mask paths are exercised on
logits whose padded vocabulary entries are -inf (forward only: the reverse divergences' backward
through 0 * -inf is nan, which is also shown)."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

VOCAB, REAL_VOCAB = 24, 20


def forward_kl(logits, teacher_logits, no_model_batch):
    teacher_probs = F.softmax(teacher_logits, dim=-1, dtype=torch.float32)
    inf_mask = torch.isinf(logits)
    student_logprobs = F.log_softmax(logits, dim=-1, dtype=torch.float32)
    prod_probs = torch.masked_fill(teacher_probs * student_logprobs, inf_mask, 0)
    x = torch.sum(prod_probs, dim=-1).view(-1)
    mask = (no_model_batch["label"] != -100).int()
    distil_loss = -torch.sum(x * mask.view(-1), dim=0) / torch.sum(mask.view(-1), dim=0)
    return distil_loss


def reverse_kl(logits, teacher_logits, no_model_batch):
    student_probs = F.softmax(logits, dim=-1, dtype=torch.float32)
    student_logprobs = F.log_softmax(logits, dim=-1, dtype=torch.float32)
    teacher_logprobs = F.log_softmax(teacher_logits, dim=-1, dtype=torch.float32)
    inf_mask = torch.isinf(teacher_logits) | torch.isinf(logits)
    prod_probs = torch.masked_fill(student_probs * teacher_logprobs, inf_mask, 0)
    prod_probs -= torch.masked_fill(student_probs * student_logprobs, inf_mask, 0)
    x = torch.sum(prod_probs, dim=-1).view(-1)
    mask = (no_model_batch["label"] != -100).int()
    distil_loss = -torch.sum(x * mask.view(-1), dim=0) / torch.sum(mask.view(-1), dim=0)
    return distil_loss


def symmetric_kl(logits, teacher_logits, no_model_batch, lam=0.9):
    for_kl = forward_kl(logits, teacher_logits, no_model_batch)
    rev_kl = reverse_kl(logits, teacher_logits, no_model_batch)
    distil_loss = (1 - lam) * for_kl + lam * rev_kl
    return distil_loss


def js_distance(logits, teacher_logits, no_model_batch, lam=0.9):
    teacher_probs = F.softmax(teacher_logits, dim=-1, dtype=torch.float32)
    student_probs = F.softmax(logits, dim=-1, dtype=torch.float32)
    mixed_probs = (1 - lam) * teacher_probs + lam * student_probs
    teacher_logprobs = F.log_softmax(teacher_logits, dim=-1, dtype=torch.float32)
    student_logprobs = F.log_softmax(logits, dim=-1, dtype=torch.float32)
    mixed_logprobs = torch.log(mixed_probs)
    mask = (no_model_batch["label"] != -100).int()
    inf_mask = torch.isinf(logits) | torch.isinf(teacher_logits)
    prod_probs = torch.masked_fill(student_probs * mixed_logprobs, inf_mask, 0)
    prod_probs -= torch.masked_fill(student_probs * student_logprobs, inf_mask, 0)
    x = torch.sum(prod_probs, dim=-1).view(-1)
    distil_loss = lam * -torch.sum(x * mask.view(-1), dim=0) / torch.sum(mask.view(-1), dim=0)
    prod_probs = torch.masked_fill(teacher_probs * mixed_logprobs, inf_mask, 0)
    prod_probs -= torch.masked_fill(teacher_probs * teacher_logprobs, inf_mask, 0)
    x = torch.sum(prod_probs, dim=-1).view(-1)
    distil_loss += (1 - lam) * -torch.sum(x * mask.view(-1), dim=0) / torch.sum(mask.view(-1),
                                                                                  dim=0)
    return distil_loss


def tv_distance(logits, teacher_logits, no_model_batch):
    teacher_probs = F.softmax(teacher_logits, dim=-1, dtype=torch.float32)
    student_probs = F.softmax(logits, dim=-1, dtype=torch.float32)
    mask = (no_model_batch["label"] != -100).int()
    inf_mask = torch.isinf(logits) | torch.isinf(teacher_logits)
    prod_probs = 0.5 * torch.masked_fill(torch.abs(teacher_probs - student_probs), inf_mask, 0)
    x = torch.sum(prod_probs, dim=-1).view(-1)
    distil_loss = torch.sum(x * mask.view(-1), dim=0) / torch.sum(mask.view(-1), dim=0)
    return distil_loss


def skewed_forward_kl(logits, teacher_logits, no_model_batch, lam=0.1):
    teacher_probs = F.softmax(teacher_logits, dim=-1, dtype=torch.float32)
    student_probs = F.softmax(logits, dim=-1, dtype=torch.float32)
    mixed_probs = lam * teacher_probs + (1 - lam) * student_probs
    mixed_logprobs = torch.log(mixed_probs)
    mask = (no_model_batch["label"] != -100).int()
    inf_mask = torch.isinf(logits)
    prod_probs = torch.masked_fill(teacher_probs * mixed_logprobs, inf_mask, 0)
    x = torch.sum(prod_probs, dim=-1).view(-1)
    distil_loss = -torch.sum(x * mask.view(-1), dim=0) / torch.sum(mask.view(-1), dim=0)
    return distil_loss


def skewed_reverse_kl(logits, teacher_logits, no_model_batch, lam=0.1):
    teacher_probs = F.softmax(teacher_logits, dim=-1, dtype=torch.float32)
    student_probs = F.softmax(logits, dim=-1, dtype=torch.float32)
    mixed_probs = (1 - lam) * teacher_probs + lam * student_probs
    student_logprobs = F.log_softmax(logits, dim=-1, dtype=torch.float32)
    mixed_logprobs = torch.log(mixed_probs)
    mask = (no_model_batch["label"] != -100).int()
    inf_mask = torch.isinf(logits)
    prod_probs = torch.masked_fill(student_probs * mixed_logprobs, inf_mask, 0)
    prod_probs -= torch.masked_fill(student_probs * student_logprobs, inf_mask, 0)
    x = torch.sum(prod_probs, dim=-1).view(-1)
    distil_loss = -torch.sum(x * mask.view(-1), dim=0) / torch.sum(mask.view(-1), dim=0)
    return distil_loss


def hinton_kd(student_logits, teacher_logits, temperature=2.0):
    loss_fct = nn.KLDivLoss(reduction="batchmean")
    return loss_fct(F.log_softmax(student_logits / temperature, dim=-1),
                    F.softmax(teacher_logits / temperature, dim=-1)) * (temperature ** 2)


class LM(nn.Module):
    def __init__(self, d, n_layer, block=16):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, d)
        self.wpe = nn.Embedding(block, d)
        layer = nn.TransformerEncoderLayer(d, 2, 2 * d, dropout=0.0, batch_first=True,
                                           norm_first=True, activation="gelu")
        self.h = nn.TransformerEncoder(layer, n_layer, enable_nested_tensor=False)
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, VOCAB, bias=False)

    def forward(self, input_ids):
        T = input_ids.shape[1]
        x = self.wte(input_ids) + self.wpe(torch.arange(T))
        mask = nn.Transformer.generate_square_subsequent_mask(T)
        return self.lm_head(self.ln_f(self.h(x, mask=mask, is_causal=True)))


def make_batch(g, B=6, T=10):
    start = torch.randint(0, REAL_VOCAB, (B, 1), generator=g)
    step = torch.randint(1, 4, (B, 1), generator=g)
    seq = (start + torch.arange(T + 1) * step) % REAL_VOCAB
    label = seq[:, 1:].clone()
    label[:, :3] = -100  # prompt tokens carry no loss
    return {"input_ids": seq[:, :-1]}, {"label": label}


def get_distil_loss(kd_loss_fn, model_batch, no_model_batch, logits, teacher_model):
    with torch.no_grad():
        teacher_model.eval()
        teacher_logits = teacher_model(**model_batch)
    return kd_loss_fn(logits, teacher_logits, no_model_batch)


torch.manual_seed(0)
g = torch.Generator().manual_seed(0)
loss_func = nn.CrossEntropyLoss(ignore_index=-100)
teacher = LM(32, 2)
opt = torch.optim.AdamW(teacher.parameters(), lr=3e-3)
for it in range(12):
    model_batch, no_model_batch = make_batch(g)
    logits = teacher(**model_batch)
    loss = loss_func(logits.view(-1, VOCAB), no_model_batch["label"].view(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if it % 4 == 3:
        print("teacher", it, "%.5f" % loss.item())

s = torch.randn(2, 3, VOCAB)
t = torch.randn(2, 3, VOCAB)
s[..., REAL_VOCAB:] = float("-inf")
t[..., REAL_VOCAB:] = float("-inf")
nmb = {"label": torch.tensor([[1, -100, 2], [3, 4, -100]])}
for fn in (forward_kl, reverse_kl, symmetric_kl, js_distance, tv_distance, skewed_forward_kl,
           skewed_reverse_kl):
    print(fn.__name__, "%.6f" % fn(s, t, nmb).item(), "self %.6f" % fn(t, t, nmb).item())
kl_ref = F.kl_div(F.log_softmax(s[..., :REAL_VOCAB], -1), F.log_softmax(t[..., :REAL_VOCAB], -1),
                  reduction="none", log_target=True).sum(-1)
ent_t = -(F.softmax(t[..., :REAL_VOCAB], -1) * F.log_softmax(t[..., :REAL_VOCAB], -1)).sum(-1)
m = nmb["label"] != -100
print("forward_kl == KL + H(teacher)", "%.6f" % (kl_ref + ent_t)[m].mean().item())
s_leaf = s.clone().requires_grad_()
forward_kl(s_leaf, t, nmb).backward()
print("forward_kl grad finite", bool(torch.isfinite(s_leaf.grad).all()),
      "%.6f" % s_leaf.grad.abs().sum().item())
s_leaf.grad = None
reverse_kl(s_leaf, t, nmb).backward()
print("reverse_kl grad nan", torch.isnan(s_leaf.grad).sum().item(), s_leaf.grad[1, 2, :3])
print("hinton", "%.6f" % hinton_kd(s[..., :REAL_VOCAB].reshape(-1, REAL_VOCAB),
                                    t[..., :REAL_VOCAB].reshape(-1, REAL_VOCAB)).item())

kd_ratio = 0.5
for kd_loss_fn in (forward_kl, reverse_kl, js_distance, skewed_reverse_kl):
    torch.manual_seed(1)
    student = LM(16, 1)
    optimizer = torch.optim.AdamW(student.parameters(), lr=5e-3, weight_decay=0.01)
    g = torch.Generator().manual_seed(1)
    for it in range(5):
        model_batch, no_model_batch = make_batch(g)
        logits = student(**model_batch)
        lm_loss = loss_func(logits.float().view(-1, logits.shape[-1]),
                            no_model_batch["label"].view(-1))
        distil_loss = get_distil_loss(kd_loss_fn, model_batch, no_model_batch, logits, teacher)
        loss = (1 - kd_ratio) * lm_loss + kd_ratio * distil_loss
        optimizer.zero_grad()
        loss.backward()
        gn = nn.utils.clip_grad_norm_(student.parameters(), 1.0)
        optimizer.step()
        print(kd_loss_fn.__name__, it, "lm %.5f distil %.5f grad_norm %.5f" % (
            lm_loss.item(), distil_loss.item(), gn.item()))
    grads_finite = all(bool(torch.isfinite(p.grad).all()) for p in student.parameters())
    print("grads finite", grads_finite, "head grad %.6f" % student.lm_head.weight.grad.norm())

with torch.no_grad():
    model_batch, no_model_batch = make_batch(g)
    sl, tl = student(**model_batch), teacher(**model_batch)
print("student logits", tuple(sl.shape), "%.5f %.5f" % (sl.mean().item(), sl.std().item()))
print("agreement", (sl.argmax(-1) == tl.argmax(-1)).float().mean().item())
