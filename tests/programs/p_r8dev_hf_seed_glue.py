"""HuggingFace transformers' seeding and environment utilities (trainer_utils.set_seed,
enable_full_determinism, utils.import_utils is_torch_*_available, the ``transformers env``
report) and run_glue.py's device placement and eval loop, shrunk: a tiny text classifier
trained for a few steps on synthetic token ids under CPU bfloat16 autocast, with all the
CUDA/MPS/XPU/version checks the originals make before and during training."""
import importlib
import os
import random
import warnings

import numpy as np
from packaging import version

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = importlib.import_module(LIB + ".nn")
F = importlib.import_module(LIB + ".nn.functional")
data = importlib.import_module(LIB + ".utils.data")


def is_torch_available():
    return True


def get_torch_version():
    return version.parse(torch.__version__).base_version


def is_torch_greater_or_equal(library_version, accept_dev=False):
    if accept_dev:
        return version.parse(version.parse(torch.__version__).base_version) >= version.parse(
            library_version)
    return version.parse(torch.__version__) >= version.parse(library_version)


def is_torch_cuda_available():
    return torch.cuda.is_available()


def is_torch_mps_available(min_version=None):
    if hasattr(torch.backends, "mps"):
        backend_available = torch.backends.mps.is_available() and torch.backends.mps.is_built()
        if min_version is not None:
            flag = version.parse(get_torch_version()) >= version.parse(min_version)
            backend_available = backend_available and flag
        return backend_available
    return False


def is_torch_xpu_available(check_device=False):
    if is_torch_greater_or_equal("2.6", accept_dev=True) is False:
        return False
    return hasattr(torch, "xpu") and torch.xpu.is_available()


def is_torch_bf16_gpu_available():
    return torch.cuda.is_available() and torch.cuda.is_bf16_supported()


def is_torch_bf16_cpu_available():
    return True


def is_torch_tf32_available():
    if not torch.cuda.is_available() or torch.version.cuda is None:
        return False
    if torch.cuda.get_device_properties(torch.cuda.current_device()).major < 8:
        return False
    return True


def is_torch_sdpa_available():
    return version.parse(get_torch_version()) >= version.parse("2.1.1")


def enable_full_determinism(seed, warn_only=False):
    """trainer_utils.enable_full_determinism."""
    set_seed(seed)
    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
    os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":16:8"
    os.environ["ASCEND_LAUNCH_BLOCKING"] = "1"
    os.environ["HCCL_DETERMINISTIC"] = "1"
    os.environ["FLASH_ATTENTION_DETERMINISTIC"] = "1"
    torch.use_deterministic_algorithms(True, warn_only=warn_only)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def set_seed(seed, deterministic=False):
    """trainer_utils.set_seed."""
    random.seed(seed)
    np.random.seed(seed)
    if is_torch_available():
        torch.manual_seed(seed)
        torch.cuda.manual_seed_all(seed)
        if deterministic:
            torch.use_deterministic_algorithms(True)
    if is_torch_mps_available():
        torch.mps.manual_seed(seed)
    if is_torch_xpu_available():
        torch.xpu.manual_seed_all(seed)


def env_report():
    """The fields of ``transformers env`` that do not name versions of this machine."""
    pt_cuda_available = torch.cuda.is_available()
    pt_accelerator = "NA"
    if pt_cuda_available:
        pt_accelerator = "CUDA"
    elif is_torch_xpu_available():
        pt_accelerator = "XPU"
    elif is_torch_mps_available():
        pt_accelerator = "MPS"
    info = {
        "PyTorch version (accelerator?)": "(%s)" % pt_accelerator,
        "Using distributed or parallel set-up in script?": "<fill in>",
        "torch >= 2.0": is_torch_greater_or_equal("2.0"),
        "torch >= 2.1.1 (sdpa)": is_torch_sdpa_available(),
        "bf16 gpu": is_torch_bf16_gpu_available(),
        "bf16 cpu": is_torch_bf16_cpu_available(),
        "tf32": is_torch_tf32_available(),
        "cuda version": torch.version.cuda,
        "cudnn available": torch.backends.cudnn.is_available(),
        "GPU type": torch.cuda.get_device_name() if pt_cuda_available else None,
        "num GPUs": torch.cuda.device_count(),
    }
    for k, v in info.items():
        print("- %s: %s" % (k, v))


class TextClassifier(nn.Module):
    def __init__(self, vocab=50, dim=16, labels=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.encoder = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.LayerNorm(dim))
        self.classifier = nn.Linear(dim, labels)

    def forward(self, input_ids, attention_mask, labels=None):
        h = self.encoder(self.emb(input_ids))
        mask = attention_mask.unsqueeze(-1).to(h.dtype)
        pooled = (h * mask).sum(1) / mask.sum(1)
        logits = self.classifier(pooled)
        loss = None if labels is None else F.cross_entropy(logits.float(), labels)
        return loss, logits


def main():
    warnings.simplefilter("ignore")
    env_report()
    set_seed(42)
    enable_full_determinism(42)
    print("deterministic", torch.are_deterministic_algorithms_enabled(),
          torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark,
          os.environ["CUBLAS_WORKSPACE_CONFIG"])
    torch.use_deterministic_algorithms(False)

    # TrainingArguments._setup_devices: no GPU -> cpu, n_gpu 0
    if torch.cuda.is_available():
        device, n_gpu = torch.device("cuda:0"), torch.cuda.device_count()
    elif is_torch_mps_available():
        device, n_gpu = torch.device("mps"), 1
    else:
        device, n_gpu = torch.device("cpu"), 0
    print("device", device, "n_gpu", n_gpu, "fp16 backend:",
          "cuda amp" if device.type == "cuda" else "cpu amp (bf16)")
    bf16 = is_torch_bf16_cpu_available() and device.type == "cpu"

    g = torch.Generator().manual_seed(0)
    ids = torch.randint(1, 50, (24, 7), generator=g)
    mask = (torch.rand(24, 7, generator=g) > 0.2).long()
    mask[:, 0] = 1
    labels = (ids[:, 0] % 3)
    loader = data.DataLoader(data.TensorDataset(ids, mask, labels), batch_size=8,
                             pin_memory=torch.cuda.is_available(), shuffle=False)
    model = TextClassifier().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.01)
    scaler = torch.amp.GradScaler(device.type, enabled=device.type == "cuda")
    print("scaler enabled", scaler.is_enabled(), "scale", scaler.get_scale())
    for epoch in range(2):
        model.train()
        total = 0.0
        for input_ids, attention_mask, y in loader:
            input_ids = input_ids.to(device, non_blocking=True)
            attention_mask = attention_mask.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=bf16):
                loss, logits = model(input_ids, attention_mask, y)
            print("  logits dtype", logits.dtype, "loss dtype", loss.dtype)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            total += loss.item()
        print("epoch %d train loss %.2f" % (epoch, total / len(loader)))

    model.eval()
    correct = 0
    with torch.no_grad():
        for input_ids, attention_mask, y in loader:
            _, logits = model(input_ids.to(device), attention_mask.to(device))
            correct += (logits.argmax(-1) == y.to(device)).sum().item()
    print("eval accuracy %.3f" % (correct / len(ids)))
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    print("peak mem MB", torch.cuda.max_memory_allocated() / 2 ** 20
          if torch.cuda.is_available() else 0)


if __name__ == "__main__":
    main()
