"""Gradient accumulation and hand-written dynamic loss scaling, shrunk from Hugging Face's
run_glue_no_trainer.py loop (loss / gradient_accumulation_steps, a step every N batches or
at the last batch of a DataLoader with drop_last=False, get_linear_schedule_with_warmup
written with LambdaLR) and fairseq's optim/dynamic_loss_scaler.py + FP16Optimizer (float16
model, float32 master weights, scaled backward, multiply_grads by 1/scale, clip_grad_norm_,
check_overflow raising OverflowError to skip the step and halve the scale, growth every
scale_window clean steps)."""
import importlib
import math
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
data_mod = importlib.import_module(LIB + ".utils.data")
LambdaLR = torch.optim.lr_scheduler.LambdaLR


class DynamicLossScaler(object):
    def __init__(self, init_scale=2.0 ** 15, scale_factor=2.0, scale_window=2000, tolerance=0.0,
                 threshold=None, min_loss_scale=1e-4):
        self.loss_scale = init_scale
        self.scale_factor = scale_factor
        self.scale_window = scale_window
        self.tolerance = tolerance
        self.threshold = threshold
        self._iter = 0
        self._last_overflow_iter = -1
        self._last_rescale_iter = -1
        self._overflows_since_rescale = 0
        self.min_loss_scale = min_loss_scale

    def scale(self, outputs):
        return self.loss_scale * outputs

    def update(self):
        if (self._iter - self._last_overflow_iter) % self.scale_window == 0:
            self.loss_scale *= self.scale_factor
            self._last_rescale_iter = self._iter
        self._iter += 1

    def _decrease_loss_scale(self):
        self.loss_scale /= self.scale_factor
        if self.threshold is not None:
            self.loss_scale = max(self.loss_scale, self.threshold)

    def check_overflow(self, grad_norm):
        # detect inf and nan
        if grad_norm == float("inf") or grad_norm != grad_norm:
            # overflow has occured
            prev_scale = self.loss_scale
            iter_since_rescale = self._iter - self._last_rescale_iter
            self._last_overflow_iter = self._iter
            self._overflows_since_rescale += 1
            pct_overflow = self._overflows_since_rescale / float(iter_since_rescale)
            if pct_overflow >= self.tolerance:
                self._decrease_loss_scale()
                self._last_rescale_iter = self._iter
                self._overflows_since_rescale = 0
            if self.loss_scale <= self.min_loss_scale:
                self.loss_scale = prev_scale
                raise FloatingPointError(
                    ("Minimum loss scale reached ({}). Your loss is probably exploding. "
                     "Try lowering the learning rate, using gradient clipping or "
                     "increasing the batch size.").format(self.min_loss_scale))
            self._iter += 1
            raise OverflowError("setting loss scale to: " + str(self.loss_scale))


def get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, last_epoch=-1):
    def lr_lambda(current_step):
        if current_step < num_warmup_steps:
            return float(current_step) / float(max(1, num_warmup_steps))
        return max(0.0, float(num_training_steps - current_step)
                   / float(max(1, num_training_steps - num_warmup_steps)))
    return LambdaLR(optimizer, lr_lambda, last_epoch)


torch.manual_seed(42)
X = torch.randn(50, 6)
y = (X[:, :3].sum(1) > 0).long()
ds = data_mod.TensorDataset(X, y)
g = torch.Generator().manual_seed(0)
train_dataloader = data_mod.DataLoader(ds, batch_size=8, shuffle=True, drop_last=False, generator=g)
print("batches", len(train_dataloader), [len(b[1]) for b in train_dataloader])

# 1. HF-style accumulation in float32, against one big batch per update
gradient_accumulation_steps = 3
num_update_steps_per_epoch = math.ceil(len(train_dataloader) / gradient_accumulation_steps)
max_train_steps = 2 * num_update_steps_per_epoch
torch.manual_seed(1)
model = nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Linear(16, 2))
no_decay = ["bias", "LayerNorm.weight"]
optimizer_grouped_parameters = [
    {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
     "weight_decay": 0.01},
    {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
     "weight_decay": 0.0},
]
optimizer = torch.optim.AdamW(optimizer_grouped_parameters, lr=5e-3)
lr_scheduler = get_linear_schedule_with_warmup(optimizer, 2, max_train_steps)
completed_steps = 0
for epoch in range(2):
    model.train()
    for step, batch in enumerate(train_dataloader):
        xb, yb = batch
        outputs = model(xb)
        loss = F.cross_entropy(outputs, yb)
        loss = loss / gradient_accumulation_steps
        loss.backward()
        if step % gradient_accumulation_steps == 0 or step == len(train_dataloader) - 1:
            gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            completed_steps += 1
            print("epoch %d step %d update %d loss %.5f gnorm %.5f lr %.6f" % (
                epoch, step, completed_steps, loss.item(), gnorm.item(), lr_scheduler.get_last_lr()[0]))
print("completed", completed_steps, "of", max_train_steps, "last_epoch", lr_scheduler.last_epoch)

# accumulation of unequal batches: mean of means vs token-weighted
torch.manual_seed(1)
lin = nn.Linear(6, 2)
full = F.cross_entropy(lin(X), y)
full_grad = torch.autograd.grad(full, lin.weight)[0]
acc_naive = torch.zeros_like(lin.weight)
acc_weighted = torch.zeros_like(lin.weight)
for xb, yb in data_mod.DataLoader(ds, batch_size=8, drop_last=False):
    acc_naive += torch.autograd.grad(F.cross_entropy(lin(xb), yb) / 7, lin.weight)[0]
    acc_weighted += torch.autograd.grad(F.cross_entropy(lin(xb), yb, reduction="sum") / len(ds), lin.weight)[0]
print("weighted == full", torch.allclose(acc_weighted, full_grad, atol=1e-6),
      "naive err %.6f" % (acc_naive - full_grad).abs().max().item())

# 2. fairseq-style fp16 training with float32 master weights and a dynamic scaler
torch.manual_seed(3)
model16 = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 2)).half()
fp32_params = [p.detach().clone().float().requires_grad_() for p in model16.parameters()]
opt32 = torch.optim.SGD(fp32_params, lr=0.1, momentum=0.9)
scaler = DynamicLossScaler(init_scale=2.0 ** 18, scale_window=4)
for update, (xb, yb) in enumerate(list(train_dataloader) * 2):
    model16.zero_grad()
    loss = F.cross_entropy(model16(xb.half()).float(), yb)
    scaler.scale(loss).backward()
    for p32, p16 in zip(fp32_params, model16.parameters()):
        p32.grad = p16.grad.float()
    multiply = 1.0 / scaler.loss_scale
    for p in fp32_params:
        p.grad.mul_(multiply)
    grad_norm = torch.nn.utils.clip_grad_norm_(fp32_params, 5.0)
    try:
        scaler.check_overflow(grad_norm)
    except OverflowError as e:
        print("update %2d overflow (%s) norm %s, skipping" % (update, e, grad_norm.item()))
        opt32.zero_grad()
        continue
    opt32.step()
    scaler.update()
    with torch.no_grad():
        for p32, p16 in zip(fp32_params, model16.parameters()):
            p16.copy_(p32)
    print("update %2d loss %.4f norm %.4f scale %g" % (update, loss.item(), grad_norm.item(), scaler.loss_scale))
with torch.no_grad():
    print("fp16 final loss %.4f" % F.cross_entropy(model16(X.half()).float(), y).item(),
          model16[0].weight.dtype, fp32_params[0].dtype)
s2 = DynamicLossScaler(init_scale=1e-3, min_loss_scale=1e-3)
try:
    s2.check_overflow(float("nan"))
except Exception as e:
    print(type(e).__name__, e)
try:
    p = torch.ones(3, requires_grad=True)
    p.grad = torch.tensor([1.0, float("inf"), 0.0])
    torch.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
except Exception as e:
    print(type(e).__name__, e)
