"""Hugging Face transformers' sharded checkpoints, shrunk: ``shard_checkpoint`` /
``save_pretrained(max_shard_size=...)`` splitting a state_dict into
``pytorch_model-0000i-of-0000n.bin`` files plus ``pytorch_model.bin.index.json`` (metadata
total_size, weight_map), tied input/output embeddings (``_tied_weights_keys``: the shared
tensor is saved once), ``load_sharded_checkpoint`` (index -> shards, torch.load with
map_location="cpu", weights_only=True, load_state_dict(strict=False) and its missing /
unexpected keys), loading a base model's checkpoint into a model with a head (prefix
handling as in ``_load_state_dict_into_model``), and ``safe_serialization`` through
safetensors' numpy API."""
import collections
import gc
import importlib
import json
import os
import tempfile

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn

WEIGHTS_NAME = "pytorch_model.bin"
WEIGHTS_INDEX_NAME = "pytorch_model.bin.index.json"


class TinyConfig:
    vocab_size, hidden, layers, heads = 50, 16, 3, 2


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.hidden)
        self.attn = nn.MultiheadAttention(cfg.hidden, cfg.heads, batch_first=True)
        self.ln_2 = nn.LayerNorm(cfg.hidden)
        self.mlp = nn.Sequential(nn.Linear(cfg.hidden, 4 * cfg.hidden), nn.GELU(),
                                 nn.Linear(4 * cfg.hidden, cfg.hidden))

    def forward(self, x, mask):
        h = self.ln_1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln_2(x))


class TinyModel(nn.Module):
    base_model_prefix = "transformer"

    def __init__(self, cfg):
        super().__init__()
        self.wte = nn.Embedding(cfg.vocab_size, cfg.hidden)
        self.wpe = nn.Embedding(32, cfg.hidden)
        self.h = nn.ModuleList([Block(cfg) for _ in range(cfg.layers)])
        self.ln_f = nn.LayerNorm(cfg.hidden)
        self.register_buffer("bias", torch.tril(torch.ones(32, 32, dtype=torch.bool)),
                             persistent=False)

    def forward(self, ids):
        t = ids.shape[1]
        x = self.wte(ids) + self.wpe(torch.arange(t))
        mask = ~self.bias[:t, :t]
        for block in self.h:
            x = block(x, mask)
        return self.ln_f(x)


class TinyLMHeadModel(nn.Module):
    _tied_weights_keys = ["lm_head.weight"]

    def __init__(self, cfg):
        super().__init__()
        self.transformer = TinyModel(cfg)
        self.lm_head = nn.Linear(cfg.hidden, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.transformer.wte.weight       # tie_weights()

    def forward(self, ids):
        return self.lm_head(self.transformer(ids))


def dtype_byte_size(dtype):
    if dtype == torch.bool:
        return 1 / 8
    return torch.finfo(dtype).bits // 8 if dtype.is_floating_point else torch.iinfo(dtype).bits // 8


def shard_checkpoint(state_dict, max_shard_size):
    """transformers.modeling_utils.shard_checkpoint (sizes in bytes)."""
    sharded, current, current_size, total_size = [], {}, 0, 0
    storage_ids = {}
    for key, weight in state_dict.items():
        sid = (weight.untyped_storage().data_ptr(), weight.untyped_storage().nbytes())
        if sid in storage_ids:                       # a tied weight: already in a shard
            storage_ids[sid].append(key)
            continue
        storage_ids[sid] = [key]
        size = int(weight.numel() * dtype_byte_size(weight.dtype))
        if current_size + size > max_shard_size and current:
            sharded.append(current)
            current, current_size = {}, 0
        current[key] = weight
        current_size += size
        total_size += size
    sharded.append(current)
    if len(sharded) == 1:
        return {WEIGHTS_NAME: sharded[0]}, None
    shards, weight_map = {}, {}
    for idx, shard in enumerate(sharded):
        name = WEIGHTS_NAME.replace(".bin", "-%05d-of-%05d.bin" % (idx + 1, len(sharded)))
        shards[name] = shard
        for key in shard:
            weight_map[key] = name
    return shards, {"metadata": {"total_size": total_size}, "weight_map": weight_map}


def save_pretrained(model, save_directory, max_shard_size):
    state_dict = model.state_dict()
    for key in getattr(model, "_tied_weights_keys", []):
        state_dict.pop(key, None)                    # saved through the tied embedding
    shards, index = shard_checkpoint(state_dict, max_shard_size)
    for name, shard in shards.items():
        torch.save(shard, os.path.join(save_directory, name))
    if index is not None:
        with open(os.path.join(save_directory, WEIGHTS_INDEX_NAME), "w", encoding="utf-8") as f:
            f.write(json.dumps(index, indent=2, sort_keys=True) + "\n")
    return shards, index


def load_sharded_checkpoint(model, folder, strict=True):
    """transformers.modeling_utils.load_sharded_checkpoint."""
    with open(os.path.join(folder, WEIGHTS_INDEX_NAME), "r", encoding="utf-8") as f:
        index = json.load(f)
    shard_files = list(set(index["weight_map"].values()))
    loaded_keys = index["weight_map"].keys()
    model_keys = model.state_dict().keys()
    missing_keys = [key for key in model_keys if key not in loaded_keys]
    unexpected_keys = [key for key in loaded_keys if key not in model_keys]
    if strict and (missing_keys or unexpected_keys):
        error_message = "Error(s) in loading state_dict for %s" % model.__class__.__name__
        if missing_keys:
            error_message += "\nMissing key(s): %s." % ", ".join('"%s"' % k for k in missing_keys)
        raise RuntimeError(error_message)
    for shard_file in sorted(shard_files):
        state_dict = torch.load(os.path.join(folder, shard_file), map_location="cpu",
                                weights_only=True)
        model.load_state_dict(state_dict, strict=False)
        del state_dict
        gc.collect()
    return missing_keys, unexpected_keys


def checksum(model):
    return sum(float(p.double().sum()) for p in model.state_dict().values()
               if p.dtype.is_floating_point)


torch.manual_seed(0)
cfg = TinyConfig()
model = TinyLMHeadModel(cfg).eval()
ids = torch.randint(0, cfg.vocab_size, (2, 7))
with torch.no_grad():
    ref = model(ids)
print("logits", tuple(ref.shape), round(float(ref.sum()), 4), round(float(ref.std()), 5))
print("tied", model.lm_head.weight is model.transformer.wte.weight)

with tempfile.TemporaryDirectory() as tmp:
    shards, index = save_pretrained(model, tmp, max_shard_size=6000)
    print("shards", len(shards), sorted(os.listdir(tmp)))
    print("total_size", index["metadata"]["total_size"])
    for name in sorted(shards):
        print(" ", name, len(shards[name]), sorted(shards[name])[:2])
    with open(os.path.join(tmp, WEIGHTS_INDEX_NAME)) as f:
        print("index keys", sorted(json.load(f)), len(index["weight_map"]))

    torch.manual_seed(1)
    fresh = TinyLMHeadModel(cfg).eval()
    print("before", round(checksum(fresh), 4))
    try:
        load_sharded_checkpoint(fresh, tmp, strict=True)
    except Exception as e:
        print(type(e).__name__, e)
    missing, unexpected = load_sharded_checkpoint(fresh, tmp, strict=False)
    print("missing", missing, "unexpected", unexpected)
    print("tied after load", fresh.lm_head.weight is fresh.transformer.wte.weight)
    with torch.no_grad():
        out = fresh(ids)
    print("same logits", torch.equal(out, ref), round(checksum(fresh) - checksum(model), 6))

    # One shard straight: what torch.load gives back.
    first = sorted(shards)[0]
    sd = torch.load(os.path.join(tmp, first), map_location=torch.device("cpu"), weights_only=True)
    print(type(sd).__name__, [(k, tuple(v.shape), str(v.dtype), v.stride(), v.is_contiguous())
                              for k, v in list(sd.items())[:4]])

    # Base-model checkpoint into a model with a head: strip / add the base_model_prefix.
    base_sd = model.transformer.state_dict()
    torch.save(base_sd, os.path.join(tmp, "base.bin"))
    loaded = torch.load(os.path.join(tmp, "base.bin"), weights_only=True)
    prefix = TinyModel.base_model_prefix + "."
    head_model = TinyLMHeadModel(cfg).eval()
    expected = set(head_model.state_dict())
    has_prefix = any(k.startswith(prefix) for k in loaded)
    remapped = collections.OrderedDict((k if has_prefix else prefix + k, v)
                                       for k, v in loaded.items())
    result = head_model.load_state_dict(remapped, strict=False)
    print("prefix", has_prefix, "missing", result.missing_keys,
          "unexpected", result.unexpected_keys, len(expected))
    with torch.no_grad():
        print("head logits equal", torch.equal(head_model(ids), ref))

    # fp16 shards (save_pretrained(torch_dtype=float16)) and back.
    half = {k: v.half() for k, v in model.state_dict().items() if k != "lm_head.weight"}
    torch.save(half, os.path.join(tmp, "half.bin"))
    back = torch.load(os.path.join(tmp, "half.bin"), weights_only=True)
    print("fp16", str(back["transformer.wte.weight"].dtype),
          round(float(back["transformer.ln_f.weight"].float().sum()), 4),
          round(float((back["transformer.h.0.mlp.0.weight"].float()
                       - model.transformer.h[0].mlp[0].weight).abs().max()), 7))

    # safe_serialization: safetensors refuses shared tensors, so tied keys are dropped first.
    try:
        import safetensors.numpy as st
    except ImportError:
        st = None
    if st is not None:
        flat = {k: v.detach().numpy() for k, v in model.state_dict().items()
                if k not in model._tied_weights_keys}
        st.save_file(flat, os.path.join(tmp, "model.safetensors"), metadata={"format": "pt"})
        arrays = st.load_file(os.path.join(tmp, "model.safetensors"))
        sd = {k: torch.from_numpy(a) for k, a in arrays.items()}
        again = TinyLMHeadModel(cfg).eval()
        res = again.load_state_dict(sd, strict=False)
        again.lm_head.weight = again.transformer.wte.weight
        with torch.no_grad():
            print("safetensors", len(arrays), res.missing_keys, torch.equal(again(ids), ref))
