"""PyTorch Lightning's checkpoint dict, shrunk from ``_CheckpointConnector.dump_checkpoint`` /
``restore_training_state`` and ``LightningModule.load_from_checkpoint``: epoch, global_step,
version, ``state_dict`` (module keys), ``optimizer_states`` and ``lr_schedulers`` lists,
``hyper_parameters`` (from ``save_hyperparameters``, including an argparse Namespace), callback
states (ModelCheckpoint's best_model_score as a tensor, EarlyStopping's wait_count), loops
state; ``torch.load`` with ``map_location=lambda storage, loc: storage`` and weights_only=False,
the weights_only=True error on the Namespace and allowlisting it with safe_globals; resuming
must reproduce the uninterrupted run's losses exactly; ``strict=False`` loading of a checkpoint
whose keys carry a ``model.`` prefix (``load_from_checkpoint`` of a wrapped module)."""
import argparse
import importlib
import io
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class LitRegressor(nn.Module):
    """A LightningModule: the network plus training_step/configure_optimizers."""

    def __init__(self, hparams):
        super().__init__()
        self.hparams = hparams
        self.model = nn.Sequential(nn.Linear(4, hparams.hidden), nn.Tanh(),
                                   nn.Dropout(hparams.dropout), nn.Linear(hparams.hidden, 1))

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch):
        x, y = batch
        return F.mse_loss(self(x), y)

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=0.01)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
        return [opt], [{"scheduler": sched, "interval": "epoch", "frequency": 1}]


def batches(epoch):
    g = torch.Generator().manual_seed(100 + epoch)
    x = torch.randn(16, 4, generator=g)
    y = x.sum(1, keepdim=True).sin()
    return [(x[i:i + 4], y[i:i + 4]) for i in range(0, 16, 4)]


def fit(module, opts, scheds, state, epochs, log):
    for epoch in range(state["epoch"], epochs):
        module.train()
        for batch in batches(epoch):
            loss = module.training_step(batch)
            opts[0].zero_grad()
            loss.backward()
            opts[0].step()
            state["global_step"] += 1
            if state["best"] is None or loss < state["best"]:
                state["best"] = loss.detach().clone()
            log.append(round(float(loss), 6))
        scheds[0]["scheduler"].step()
        state["epoch"] = epoch + 1


def dump_checkpoint(module, opts, scheds, state):
    return {
        "epoch": state["epoch"],
        "global_step": state["global_step"],
        "pytorch-lightning_version": "2.4.0",
        "state_dict": module.state_dict(),
        "loops": {"fit_loop": {"epoch_progress": {"current": {"completed": state["epoch"]}}}},
        "callbacks": {
            "ModelCheckpoint{'monitor': 'train_loss', 'mode': 'min'}": {
                "best_model_score": state["best"], "best_model_path": "epoch=1.ckpt",
                "best_k_models": {"epoch=1.ckpt": state["best"]}},
            "EarlyStopping{'monitor': 'train_loss', 'mode': 'min'}": {
                "wait_count": 0, "stopped_epoch": 0, "best_score": state["best"],
                "patience": 3}},
        "optimizer_states": [o.state_dict() for o in opts],
        "lr_schedulers": [s["scheduler"].state_dict() for s in scheds],
        "hparams_name": "hparams",
        "hyper_parameters": module.hparams,
    }


hp = argparse.Namespace(hidden=8, lr=0.05, dropout=0.1, seed=7)

# The uninterrupted run.
torch.manual_seed(hp.seed)
full = LitRegressor(hp)
opts, scheds = full.configure_optimizers()
state = {"epoch": 0, "global_step": 0, "best": None}
full_log = []
fit(full, opts, scheds, state, 6, full_log)
print("full", full_log[-4:], state["global_step"])

# Stop after 3 epochs, checkpoint (with the RNG state, as the dropout stream continues).
torch.manual_seed(hp.seed)
part = LitRegressor(hp)
opts, scheds = part.configure_optimizers()
state = {"epoch": 0, "global_step": 0, "best": None}
part_log = []
fit(part, opts, scheds, state, 3, part_log)
ckpt = dump_checkpoint(part, opts, scheds, state)
ckpt["rng_states"] = {"torch": torch.get_rng_state()}
buf = io.BytesIO()
torch.save(ckpt, buf)
print("ckpt bytes > 0", buf.tell() > 0, sorted(ckpt))

# weights_only=True (torch >= 2.6's default) refuses the Namespace; allowlisting it works.
buf.seek(0)
try:
    torch.load(buf)
except Exception as e:
    print(type(e).__name__, str(e).splitlines()[-1][:120])
    print("names Namespace", "argparse.Namespace" in str(e))
buf.seek(0)
with torch.serialization.safe_globals([argparse.Namespace]):
    safe = torch.load(buf, weights_only=True)
print("safe hparams", vars(safe["hyper_parameters"]))

# Resume in a "new process".
buf.seek(0)
loaded = torch.load(buf, map_location=lambda storage, loc: storage, weights_only=False)
print("epoch", loaded["epoch"], "step", loaded["global_step"], loaded["pytorch-lightning_version"])
cb = loaded["callbacks"]["ModelCheckpoint{'monitor': 'train_loss', 'mode': 'min'}"]
print("best", round(float(cb["best_model_score"]), 6), cb["best_model_score"].dtype,
      cb["best_model_score"].requires_grad, cb["best_model_path"])
es = loaded["callbacks"]["EarlyStopping{'monitor': 'train_loss', 'mode': 'min'}"]
print("early stop shares best", es["best_score"].data_ptr() == cb["best_model_score"].data_ptr())
print("lr_schedulers", loaded["lr_schedulers"][0])
osd = loaded["optimizer_states"][0]
print("opt groups", [{k: v for k, v in g.items() if k != "params"} for g in osd["param_groups"]])
print("opt state", sorted(osd["state"]), sorted(osd["state"][0]),
      osd["state"][0]["step"], tuple(osd["state"][0]["exp_avg"].shape))

torch.manual_seed(0)                                # a different init, overwritten below
resumed = LitRegressor(loaded["hyper_parameters"])
resumed.load_state_dict(loaded["state_dict"])
opts, scheds = resumed.configure_optimizers()
opts[0].load_state_dict(loaded["optimizer_states"][0])
scheds[0]["scheduler"].load_state_dict(loaded["lr_schedulers"][0])
torch.set_rng_state(loaded["rng_states"]["torch"])
state = {"epoch": loaded["epoch"], "global_step": loaded["global_step"],
         "best": cb["best_model_score"]}
resumed_log = []
fit(resumed, opts, scheds, state, 6, resumed_log)
print("resumed", resumed_log[-4:], state["global_step"])
print("identical", part_log + resumed_log == full_log)
print("lr now", opts[0].param_groups[0]["lr"], scheds[0]["scheduler"].get_last_lr())

# load_from_checkpoint of a plain nn.Module wrapped as ``self.model``: strip the prefix.
plain = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Dropout(0.1), nn.Linear(8, 1))
sd = {k[len("model."):]: v for k, v in loaded["state_dict"].items() if k.startswith("model.")}
print(plain.load_state_dict(sd))
try:
    plain.load_state_dict(loaded["state_dict"])
except Exception as e:
    print(type(e).__name__, str(e).splitlines()[0])
print(plain.load_state_dict(loaded["state_dict"], strict=False))
