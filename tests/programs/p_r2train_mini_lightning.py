"""A minimal Lightning-style Trainer written out (the "build your own trainer" blog posts):
a LightningModule-like class with training_step/validation_step/configure_optimizers,
callbacks (EarlyStopping, ModelCheckpoint, LearningRateMonitor), a per-step scheduler,
gradient accumulation with clip_grad_norm_, and checkpoint/resume of model, optimizer,
scheduler and RNG state through torch.save/torch.load that continues bit-for-bit."""
import copy
import importlib
import io
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
data = importlib.import_module(LIB + ".utils.data")


class Callback:
    def on_train_start(self, trainer, module):
        pass

    def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
        pass

    def on_validation_end(self, trainer, module):
        pass

    def state_dict(self):
        return {}

    def load_state_dict(self, state):
        pass


class EarlyStopping(Callback):
    def __init__(self, monitor="val_loss", patience=2, min_delta=0.0, mode="min"):
        self.monitor, self.patience, self.min_delta, self.mode = monitor, patience, min_delta, mode
        self.wait_count = 0
        self.best_score = torch.tensor(float("inf") if mode == "min" else -float("inf"))

    def on_validation_end(self, trainer, module):
        current = trainer.callback_metrics[self.monitor]
        better = (current < self.best_score - self.min_delta if self.mode == "min"
                  else current > self.best_score + self.min_delta)
        if better:
            self.best_score = current
            self.wait_count = 0
        else:
            self.wait_count += 1
            if self.wait_count >= self.patience:
                trainer.should_stop = True
                print(f"EarlyStopping: {self.monitor} did not improve in {self.patience} epochs."
                      f" Best score: {self.best_score:.4f}")

    def state_dict(self):
        return {"wait_count": self.wait_count, "best_score": self.best_score}

    def load_state_dict(self, state):
        self.wait_count = state["wait_count"]
        self.best_score = state["best_score"]


class ModelCheckpoint(Callback):
    def __init__(self, monitor="val_loss"):
        self.monitor = monitor
        self.best_model_score = None
        self.best_state = None
        self.buffer = io.BytesIO()

    def on_validation_end(self, trainer, module):
        current = trainer.callback_metrics[self.monitor]
        if self.best_model_score is None or current < self.best_model_score:
            self.best_model_score = current.clone()
            self.best_state = copy.deepcopy(module.state_dict())
            self.buffer = io.BytesIO()
            torch.save(trainer.dump_checkpoint(), self.buffer)
            print(f"Epoch {trainer.current_epoch}: {self.monitor} reached "
                  f"{current:.5f} (best), saving model ({self.buffer.tell() > 0})")


class LearningRateMonitor(Callback):
    def __init__(self):
        self.lrs = []

    def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
        self.lrs.append(trainer.lr_schedulers[0].get_last_lr()[0])


class LitClassifier(nn.Module):
    def __init__(self, in_dim=6, hidden=16, num_classes=3, lr=0.05):
        super().__init__()
        self.hparams = dict(in_dim=in_dim, hidden=hidden, num_classes=num_classes, lr=lr)
        self.net = nn.Sequential(nn.Linear(in_dim, hidden), nn.LayerNorm(hidden), nn.GELU(),
                                 nn.Dropout(0.1), nn.Linear(hidden, num_classes))

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        return {"loss": loss, "acc": (logits.argmax(dim=1) == y).float().mean()}

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        return F.cross_entropy(logits, y, reduction="sum"), (logits.argmax(1) == y).sum()

    def configure_optimizers(self):
        decay, no_decay = [], []
        for name, p in self.named_parameters():
            (no_decay if p.ndim <= 1 or name.endswith(".bias") else decay).append(p)
        optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                                       {"params": no_decay, "weight_decay": 0.0}],
                                      lr=self.hparams["lr"])
        scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=self.hparams["lr"],
                                                        total_steps=40, pct_start=0.25)
        return {"optimizer": optimizer,
                "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}


class Trainer:
    def __init__(self, max_epochs, callbacks=(), accumulate_grad_batches=1,
                 gradient_clip_val=None):
        self.max_epochs = max_epochs
        self.callbacks = list(callbacks)
        self.accumulate_grad_batches = accumulate_grad_batches
        self.gradient_clip_val = gradient_clip_val
        self.callback_metrics = {}
        self.current_epoch = 0
        self.global_step = 0
        self.should_stop = False

    def _call(self, hook, *args):
        for cb in self.callbacks:
            getattr(cb, hook)(self, *args)

    def dump_checkpoint(self):
        return {
            "epoch": self.current_epoch,
            "global_step": self.global_step,
            "state_dict": self.module.state_dict(),
            "optimizer_states": [self.optimizer.state_dict()],
            "lr_schedulers": [s.state_dict() for s in self.lr_schedulers],
            "callbacks": {type(cb).__name__: cb.state_dict() for cb in self.callbacks},
            "rng_state": torch.get_rng_state(),
            "hyper_parameters": dict(self.module.hparams),
        }

    def restore(self, ckpt):
        self.module.load_state_dict(ckpt["state_dict"])
        self.optimizer.load_state_dict(ckpt["optimizer_states"][0])
        for s, st in zip(self.lr_schedulers, ckpt["lr_schedulers"]):
            s.load_state_dict(st)
        for cb in self.callbacks:
            cb.load_state_dict(ckpt["callbacks"][type(cb).__name__])
        torch.set_rng_state(ckpt["rng_state"])
        self.current_epoch = ckpt["epoch"] + 1
        self.global_step = ckpt["global_step"]

    def fit(self, module, train_loader, val_loader, ckpt=None, stop_after=None):
        self.module = module
        conf = module.configure_optimizers()
        self.optimizer = conf["optimizer"]
        self.lr_schedulers = [conf["lr_scheduler"]["scheduler"]]
        if ckpt is not None:
            self.restore(ckpt)
        self._call("on_train_start", module)
        history = []
        while self.current_epoch < self.max_epochs and not self.should_stop:
            module.train()
            self.optimizer.zero_grad(set_to_none=True)
            for batch_idx, batch in enumerate(train_loader):
                out = module.training_step(batch, batch_idx)
                (out["loss"] / self.accumulate_grad_batches).backward()
                if (batch_idx + 1) % self.accumulate_grad_batches == 0:
                    if self.gradient_clip_val is not None:
                        norm = nn.utils.clip_grad_norm_(module.parameters(),
                                                        self.gradient_clip_val)
                        self.callback_metrics["grad_norm"] = norm
                    self.optimizer.step()
                    self.optimizer.zero_grad(set_to_none=True)
                    self.lr_schedulers[0].step()
                    self.global_step += 1
                self._call("on_train_batch_end", module, out, batch, batch_idx)
            module.eval()
            total, correct, n = 0.0, 0, 0
            with torch.no_grad():
                for batch_idx, batch in enumerate(val_loader):
                    loss_sum, c = module.validation_step(batch, batch_idx)
                    total += loss_sum
                    correct += c
                    n += batch[0].shape[0]
            self.callback_metrics["val_loss"] = total / n
            self.callback_metrics["val_acc"] = correct / n
            history.append(self.callback_metrics["val_loss"].item())
            print(f"epoch {self.current_epoch} step {self.global_step} "
                  f"train_loss {out['loss'].item():.5f} val_loss {total / n:.5f} "
                  f"val_acc {correct / n:.3f} grad_norm {self.callback_metrics['grad_norm']:.4f}")
            self._call("on_validation_end", module)
            if stop_after is not None and self.current_epoch == stop_after:
                return history, self.dump_checkpoint()
            self.current_epoch += 1
        return history, None


torch.manual_seed(0)
X = torch.randn(96, 6)
W = torch.randn(6, 3)
y = (X @ W + 0.3 * torch.randn(96, 3)).argmax(dim=1)
full = data.TensorDataset(X, y)
train_set, val_set = data.random_split(full, [0.75, 0.25],
                                       generator=torch.Generator().manual_seed(42))
print(len(train_set), len(val_set), type(train_set).__name__, train_set.indices[:6])
train_loader = data.DataLoader(train_set, batch_size=8, shuffle=True,
                               generator=torch.Generator().manual_seed(1))
val_loader = data.DataLoader(val_set, batch_size=16)
print(len(train_loader), len(val_loader))

torch.manual_seed(1)
model = LitClassifier()
print(model)
start_state = copy.deepcopy(model.state_dict())
callbacks = [EarlyStopping(patience=3), ModelCheckpoint(), LearningRateMonitor()]
trainer = Trainer(max_epochs=4, callbacks=callbacks, accumulate_grad_batches=2,
                  gradient_clip_val=1.0)
full_history, _ = trainer.fit(model, train_loader, val_loader)
print("lrs", [round(v, 6) for v in callbacks[2].lrs[::3]])
print("best", f"{callbacks[1].best_model_score:.5f}", callbacks[0].wait_count)
print([f"{v:.5f}" for v in full_history])
final_full = copy.deepcopy(model.state_dict())

# the same run interrupted after epoch 1, checkpointed and resumed in a fresh Trainer
torch.manual_seed(1)
model = LitClassifier()
train_loader.generator.manual_seed(1)
callbacks = [EarlyStopping(patience=3), ModelCheckpoint(), LearningRateMonitor()]
trainer = Trainer(max_epochs=4, callbacks=callbacks, accumulate_grad_batches=2,
                  gradient_clip_val=1.0)
part1, ckpt = trainer.fit(model, train_loader, val_loader, stop_after=1)
buf = io.BytesIO()
torch.save(ckpt, buf)
buf.seek(0)
loaded = torch.load(buf, weights_only=False)
print(sorted(loaded.keys()))
print(loaded["epoch"], loaded["global_step"], loaded["hyper_parameters"])
print(loaded["rng_state"].dtype, loaded["rng_state"].shape)
opt_sd = loaded["optimizer_states"][0]
print(sorted(opt_sd["state"].keys()), sorted(opt_sd["state"][0].keys()))
print([{k: v for k, v in g.items() if k != "params"} for g in opt_sd["param_groups"]][1])
sched_sd = loaded["lr_schedulers"][0]
print(sorted(sched_sd.keys()))
print(sched_sd["last_epoch"], sched_sd["total_steps"], sched_sd["_step_count"],
      [round(v, 6) for v in sched_sd["_last_lr"]])
print(loaded["callbacks"]["EarlyStopping"])

torch.manual_seed(123)  # scramble the global RNG: resume must restore it
model2 = LitClassifier()
train_loader.generator.manual_seed(1)
for _ in range(2):       # the loader's generator state after two epochs
    for _ in train_loader:
        pass
trainer2 = Trainer(max_epochs=4, callbacks=[EarlyStopping(patience=3), ModelCheckpoint(),
                                            LearningRateMonitor()],
                   accumulate_grad_batches=2, gradient_clip_val=1.0)
part2, _ = trainer2.fit(model2, train_loader, val_loader, ckpt=loaded)
print([f"{v:.5f}" for v in part1 + part2])
same = all(torch.equal(final_full[k], model2.state_dict()[k]) for k in final_full)
print("resumed run identical:", same)
changed = [k for k in start_state if not torch.equal(start_state[k], final_full[k])]
print(changed)

best = LitClassifier()
print(best.load_state_dict(callbacks[1].best_state))
best_ckpt = torch.load(io.BytesIO(callbacks[1].buffer.getvalue()), weights_only=False)
print(best_ckpt["epoch"], f"{callbacks[1].best_model_score:.5f}")
print("RESULT:", f"{full_history[-1]:.5f}", same)
