"""fairseq's checkpoint handling, shrunk from ``fairseq/checkpoint_utils.py`` and
``scripts/average_checkpoints.py``: ``torch_persistent_save`` (write to a temporary name, then
rename), ``checkpoint{epoch}.pt`` / ``checkpoint_best.pt`` / ``checkpoint_last.pt`` copies and
``keep_last_epochs`` pruning (``checkpoint_paths``), ``load_checkpoint_to_cpu``
(map_location to CPU, weights_only off, ``_upgrade_state_dict`` adding missing keys),
``average_checkpoints`` (half params summed as float, ``div_`` by the count,
``torch.div(..., rounding_mode="floor")`` for integer buffers), files in the old (legacy,
pre-1.6) format as older fairseq releases wrote them, and last-N checkpoint selection by regex."""
import collections
import importlib
import os
import re
import shutil
import tempfile

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def torch_persistent_save(obj, filename, legacy=False):
    tmp = filename + ".tmp"
    torch.save(obj, tmp, _use_new_zipfile_serialization=not legacy)
    os.replace(tmp, filename)


def _upgrade_state_dict(state):
    if "optimizer_history" not in state:
        state["optimizer_history"] = [{"criterion_name": "CrossEntropyCriterion",
                                       "best_loss": state.get("best_loss")}]
        state["last_optimizer_state"] = state.pop("optimizer", None)
        state.pop("best_loss", None)
    if "num_updates" not in state["optimizer_history"][-1]:
        state["optimizer_history"][-1]["num_updates"] = 0
    if "extra_state" not in state:
        state["extra_state"] = {"epoch": state.pop("epoch", 0) + 1}
    return state


def load_checkpoint_to_cpu(path):
    with open(path, "rb") as f:
        state = torch.load(f, map_location=torch.device("cpu"), weights_only=False)
    return _upgrade_state_dict(state)


def average_checkpoints(inputs):
    """scripts/average_checkpoints.py: the mean of the models' parameters."""
    params_dict = collections.OrderedDict()
    params_keys = None
    new_state = None
    num_models = len(inputs)
    for fpath in inputs:
        with open(fpath, "rb") as f:
            state = torch.load(f, map_location=lambda s, _: s, weights_only=False)
        if new_state is None:
            new_state = state
        model_params = state["model"]
        model_params_keys = list(model_params.keys())
        if params_keys is None:
            params_keys = model_params_keys
        elif params_keys != model_params_keys:
            raise KeyError("For checkpoint %s, expected list of params: %s, but found: %s"
                           % (f, params_keys, model_params_keys))
        for k in params_keys:
            p = model_params[k]
            if isinstance(p, torch.HalfTensor):
                p = p.float()
            if k not in params_dict:
                params_dict[k] = p.clone()
            else:
                params_dict[k] += p
    averaged_params = collections.OrderedDict()
    for k, v in params_dict.items():
        averaged_params[k] = v
        if averaged_params[k].is_floating_point():
            averaged_params[k].div_(num_models)
        else:
            averaged_params[k] = torch.div(averaged_params[k], num_models, rounding_mode="floor")
    new_state["model"] = averaged_params
    return new_state


def checkpoint_paths(path, pattern=r"checkpoint(\d+)\.pt"):
    """checkpoint_utils.checkpoint_paths: matching files, newest first."""
    pt_regexp = re.compile(pattern)
    entries = []
    for i, f in enumerate(sorted(os.listdir(path))):
        m = pt_regexp.fullmatch(f)
        if m is not None:
            idx = float(m.group(1)) if len(m.groups()) > 0 else i
            entries.append((idx, m.group(0)))
    return [os.path.join(path, x[1]) for x in sorted(entries, reverse=True)]


def last_n_checkpoints(paths, n, update_based=False, upper_bound=None):
    assert len(paths) == 1
    path = paths[0]
    pt_regexp = re.compile(r"checkpoint_\d+_(\d+)\.pt" if update_based
                           else r"checkpoint(\d+)\.pt")
    entries = []
    for f in os.listdir(path):
        m = pt_regexp.fullmatch(f)
        if m is not None:
            sort_key = int(m.group(1))
            if upper_bound is None or sort_key <= upper_bound:
                entries.append((sort_key, m.group(0)))
    if len(entries) < n:
        raise Exception("Found %d checkpoint files but need at least %d" % (len(entries), n))
    return [os.path.join(path, x[1]) for x in sorted(entries, reverse=True)[:n]]


class TinyTransformerLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20, 8, padding_idx=1)
        self.layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        self.norm = nn.BatchNorm1d(8)
        self.out = nn.Linear(8, 20)

    def forward(self, tokens):
        h = self.layer(self.embed(tokens))
        h = self.norm(h.transpose(1, 2)).transpose(1, 2)
        return self.out(h)


torch.manual_seed(0)
tokens = torch.randint(2, 20, (4, 6))
target = torch.roll(tokens, -1, 1)
model = TinyTransformerLM()
opt = torch.optim.Adam(model.parameters(), lr=3e-3, betas=(0.9, 0.98), eps=1e-8)

with tempfile.TemporaryDirectory() as save_dir:
    best = None
    keep_last_epochs = 3
    for epoch in range(1, 6):
        for _ in range(3):
            loss = F.cross_entropy(model(tokens).reshape(-1, 20), target.reshape(-1),
                                   ignore_index=1)
            opt.zero_grad()
            loss.backward()
            opt.step()
        val = float(loss)
        print("epoch", epoch, round(val, 6))
        state = {"args": None, "model": model.state_dict(),
                 "optimizer_history": [{"criterion_name": "CrossEntropyCriterion",
                                        "optimizer_name": "Adam",
                                        "lr_scheduler_state": {"best": best},
                                        "num_updates": epoch * 3}],
                 "extra_state": {"epoch": epoch, "val_loss": val},
                 "last_optimizer_state": opt.state_dict()}
        checkpoints = ["checkpoint%d.pt" % epoch, "checkpoint_last.pt"]
        if best is None or val < best:
            best = val
            checkpoints.append("checkpoint_best.pt")
        first = os.path.join(save_dir, checkpoints[0])
        torch_persistent_save(state, first, legacy=(epoch % 2 == 0))   # even epochs: old format
        for cp in checkpoints[1:]:
            shutil.copyfile(first, os.path.join(save_dir, cp))
        old = checkpoint_paths(save_dir)[keep_last_epochs:]
        for old_chk in old:
            os.remove(old_chk)
    print("files", sorted(os.listdir(save_dir)))

    last = load_checkpoint_to_cpu(os.path.join(save_dir, "checkpoint_last.pt"))
    print("last", last["extra_state"], last["optimizer_history"][-1]["num_updates"])
    osd = last["last_optimizer_state"]
    print("opt", osd["param_groups"][0]["betas"], len(osd["state"]),
          float(osd["state"][0]["step"]))

    # An old checkpoint without optimizer_history gets upgraded.
    legacy = {"model": model.state_dict(), "optimizer": opt.state_dict(), "best_loss": 1.5,
              "epoch": 2}
    torch_persistent_save(legacy, os.path.join(save_dir, "old.pt"), legacy=True)
    up = load_checkpoint_to_cpu(os.path.join(save_dir, "old.pt"))
    print("upgraded", sorted(up), up["optimizer_history"], up["extra_state"])

    inputs = last_n_checkpoints([save_dir], 3)
    print("averaging", [os.path.basename(p) for p in inputs])
    avg = average_checkpoints(inputs)
    per = [torch.load(p, weights_only=False)["model"] for p in inputs]
    for k in ("embed.weight", "out.bias", "norm.running_var", "norm.num_batches_tracked"):
        v = avg["model"][k]
        ref = sum(s[k].double() for s in per) / 3
        print(k, str(v.dtype), tuple(v.shape),
              round(float((v.double() - ref).abs().max()), 7) if v.is_floating_point()
              else int(v))
    torch.save(avg, os.path.join(save_dir, "averaged.pt"))

    # fp16 checkpoints (--fp16 training saves half params) averaged in float32.
    half_paths = []
    for i, p in enumerate(inputs):
        st = torch.load(p, weights_only=False)
        st["model"] = collections.OrderedDict(
            (k, v.half() if v.is_floating_point() else v) for k, v in st["model"].items())
        half_paths.append(os.path.join(save_dir, "half%d.pt" % i))
        torch_persistent_save(st, half_paths[-1], legacy=(i == 1))
    havg = average_checkpoints(half_paths)
    print("half avg", str(havg["model"]["out.weight"].dtype),
          round(float(havg["model"]["out.weight"].sum()), 4),
          str(havg["model"]["norm.num_batches_tracked"].dtype))

    final = TinyTransformerLM()
    print(final.load_state_dict(torch.load(os.path.join(save_dir, "averaged.pt"),
                                           weights_only=False)["model"]))
    final.eval()
    with torch.no_grad():
        out = final(tokens)
    print("averaged loss", round(float(F.cross_entropy(out.reshape(-1, 20), target.reshape(-1),
                                                       ignore_index=1)), 5))
    try:
        last_n_checkpoints([save_dir], 10)
    except Exception as e:
        print(type(e).__name__, e)
    try:
        bad = os.path.join(save_dir, "bad.pt")
        s2 = torch.load(inputs[0], weights_only=False)
        s2["model"] = collections.OrderedDict(reversed(list(s2["model"].items())))
        torch.save(s2, bad)
        average_checkpoints([inputs[0], bad])
    except KeyError as e:
        print("KeyError", "expected list of params" in str(e), "bad.pt" in str(e))
