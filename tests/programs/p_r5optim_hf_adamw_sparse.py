"""HF transformers' fine-tuning optimizer setup (shrunk from Trainer.create_optimizer and
get_linear_schedule_with_warmup: AdamW with a no-decay group for biases and LayerNorm weights,
LambdaLR warmup, clip_grad_norm_, zero_grad(set_to_none=False)), a checkpoint resume of the
optimizer and scheduler mid-training, and fairseq-style sparse embeddings
(nn.Embedding(sparse=True)) stepped by SGD/Adagrad/SparseAdam while dense optimizers refuse the
sparse gradient."""
import importlib
import os
import warnings

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
warnings.simplefilter("ignore")


class TinyClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20, 8)
        self.dense = nn.Linear(8, 8)
        self.LayerNorm = nn.LayerNorm(8)
        self.classifier = nn.Linear(8, 3)

    def forward(self, ids):
        h = self.embed(ids).mean(1)
        return self.classifier(self.LayerNorm(torch.tanh(self.dense(h))))


def get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps):
    def lr_lambda(current_step):
        if current_step < num_warmup_steps:
            return float(current_step) / float(max(1, num_warmup_steps))
        return max(0.0, float(num_training_steps - current_step)
                   / float(max(1, num_training_steps - num_warmup_steps)))
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)


def create_optimizer(model, lr, weight_decay):
    no_decay = ["bias", "LayerNorm.weight"]
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
         "weight_decay": weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
         "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.98), eps=1e-6)


def train(model, opt, sched, steps, ids, labels, start=0):
    for step in range(start, start + steps):
        loss = nn.functional.cross_entropy(model(ids), labels)
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=False)
        print("step %d loss %.5f norm %.5f lr %.6f" % (step, loss.item(), norm.item(),
                                                        sched.get_last_lr()[0]))


torch.manual_seed(0)
ids = torch.randint(0, 20, (6, 5))
labels = torch.randint(0, 3, (6,))
model = TinyClassifier()
opt = create_optimizer(model, 1e-2, 0.01)
sched = get_linear_schedule_with_warmup(opt, 2, 8)
print([len(g["params"]) for g in opt.param_groups], [g["weight_decay"] for g in opt.param_groups])
train(model, opt, sched, 4, ids, labels)
print("grad zeroed", float(model.dense.weight.grad.abs().sum()))
ckpt = {"model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict()}
print(sorted(ckpt["optimizer"]["state"][0]), float(ckpt["optimizer"]["state"][0]["step"]))

torch.manual_seed(1)
resumed = TinyClassifier()
resumed.load_state_dict(ckpt["model"])
opt2 = create_optimizer(resumed, 1e-2, 0.01)
opt2.load_state_dict(ckpt["optimizer"])
sched2 = get_linear_schedule_with_warmup(opt2, 2, 8)
sched2.load_state_dict(ckpt["scheduler"])
print("resumed lr", sched2.get_last_lr())
train(resumed, opt2, sched2, 4, ids, labels, start=4)
print("weights", [round(v, 4) for v in resumed.classifier.weight[0].tolist()])

# fairseq-style sparse embeddings: only sparse-aware optimizers step them
for name, kwargs in [("SGD", dict(lr=0.5, momentum=0.9)), ("Adagrad", dict(lr=0.5)),
                     ("SparseAdam", dict(lr=0.1)), ("Adam", dict(lr=0.1)),
                     ("AdamW", dict(lr=0.1)), ("RMSprop", dict(lr=0.1)),
                     ("Adafactor", dict(lr=0.1)), ("NAdam", dict(lr=0.1))]:
    torch.manual_seed(2)
    emb = nn.Embedding(10, 4, sparse=True)
    opt = getattr(torch.optim, name)(emb.parameters(), **kwargs)
    try:
        for _ in range(3):
            opt.zero_grad(set_to_none=False)
            out = emb(torch.tensor([[1, 2, 1], [4, 2, 9]]))
            (out * out).sum().backward()
            opt.step()
        g = emb.weight.grad
        print(name, g.is_sparse, g._nnz(), [round(v, 5) for v in emb.weight[1].tolist()],
              sorted(opt.state[emb.weight]) if emb.weight in opt.state else None)
    except Exception as e:
        print(name, type(e).__name__, e, float(emb.weight.sum()))
