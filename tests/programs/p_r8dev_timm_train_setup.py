"""timm's train.py, shrunk: its device and AMP setup (``utils.init_distributed_device``,
``--amp-dtype``, ``partial(torch.autocast, device_type=device.type, dtype=amp_dtype)``, the
NativeScaler only on CUDA, ``torch.backends.cudnn.benchmark``, TF32 and channels_last flags,
``torch.compile`` behind a version/attribute check), ``train_one_epoch`` with its
``utils.AverageMeter`` bookkeeping, ``torch.cuda.synchronize`` / ``torch.accelerator.synchronize``
when the device needs it and the memory log line, on a tiny conv+linear net with synthetic
images. (One conv under autocast: see /work/notes/requests14.md, conv after a bfloat16 layer.)"""
import importlib
import os
import time
import warnings
from contextlib import suppress
from functools import partial

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = importlib.import_module(LIB + ".nn")
F = importlib.import_module(LIB + ".nn.functional")

_int_tuple_2_t = tuple
has_compile = hasattr(torch, "compile")


class AverageMeter:
    """timm.utils.metrics.AverageMeter."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class NativeScaler:
    """timm.utils.cuda.NativeScaler."""

    state_dict_key = "amp_scaler"

    def __init__(self, device="cuda"):
        try:
            self._scaler = torch.amp.GradScaler(device=device)
        except (AttributeError, TypeError):
            self._scaler = torch.cuda.amp.GradScaler()

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None, need_update=True):
        self._scaler.scale(loss).backward()
        if need_update:
            if clip_grad is not None:
                self._scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(parameters, clip_grad)
            self._scaler.step(optimizer)
            self._scaler.update()

    def state_dict(self):
        return self._scaler.state_dict()


def device_synchronize(device):
    """timm.utils.device_synchronize (its torch.accelerator branch first)."""
    if hasattr(torch, "accelerator") and torch.accelerator.is_available():
        torch.accelerator.synchronize()
    elif device.type == "cuda":
        torch.cuda.synchronize()
    elif device.type == "npu":
        torch.npu.synchronize()


def init_distributed_device(device_arg="cuda"):
    """timm.utils.distributed.init_distributed_device, single process."""
    device_type, *device_idx = device_arg.split(":", maxsplit=1)
    if device_type == "cuda":
        assert torch.cuda.is_available(), f"CUDA is not available but {device_arg} was specified."
    if device_type == "npu":
        assert torch.npu.is_available(), \
            f"Ascend NPU is not available but {device_arg} was specified."
    if device_idx:
        device = f"{device_type}:{device_idx[0]}"
    else:
        device = device_type
    return torch.device(device)


class SmallNet(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 8)
        self.head = nn.Linear(8, num_classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1)))
        return self.head(x)


def main():
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    print("tf32", torch.backends.cuda.matmul.allow_tf32, torch.get_float32_matmul_precision(),
          torch.backends.cudnn.allow_tf32, "benchmark", torch.backends.cudnn.benchmark)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")

    try:
        init_distributed_device("cuda")
    except AssertionError as e:
        print("AssertionError:", e)
    device_arg = "cuda" if torch.cuda.is_available() else "cpu"
    device = init_distributed_device(device_arg)
    print("Training in single process mode, device", device)
    torch.manual_seed(42)

    amp_dtype = torch.bfloat16           # --amp --amp-dtype bfloat16
    use_amp = "native"
    amp_autocast = suppress
    loss_scaler = None
    if use_amp == "native":
        assert amp_dtype in (torch.float16, torch.bfloat16)
        amp_autocast = partial(torch.autocast, device_type=device.type, dtype=amp_dtype)
        if device.type in ("cuda",) and amp_dtype == torch.float16:
            loss_scaler = NativeScaler(device=device.type)
        print("Using native Torch AMP. Training in mixed precision.", amp_dtype)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        cuda_scaler = NativeScaler(device="cuda")
    print("cuda NativeScaler enabled:", cuda_scaler._scaler.is_enabled(),
          [str(x.message) for x in w], cuda_scaler.state_dict())

    model = SmallNet().to(device=device)
    model.to(memory_format=torch.channels_last)
    print("channels_last", model.conv1.weight.is_contiguous(memory_format=torch.channels_last))
    if has_compile and version_ok():
        print("torch.compile available")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True,
                                weight_decay=1e-4)
    g = torch.Generator().manual_seed(0)
    images = torch.randn(16, 3, 8, 8, generator=g)
    targets = torch.randint(0, 4, (16,), generator=g)

    losses_m = AverageMeter()
    data_time_m = AverageMeter()
    model.train()
    for batch_idx in range(4):
        lo = (batch_idx % 2) * 8
        input, target = images[lo:lo + 8], targets[lo:lo + 8]
        input, target = input.to(device, non_blocking=True), target.to(device, non_blocking=True)
        input = input.contiguous(memory_format=torch.channels_last)
        data_time_m.update(time.time() - time.time())
        with amp_autocast():
            output = model(input)
            loss = F.cross_entropy(output, target, label_smoothing=0.1)
        if loss_scaler is not None:
            loss_scaler(loss, optimizer, clip_grad=1.0, parameters=model.parameters())
        else:
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        optimizer.zero_grad()
        losses_m.update(loss.item(), input.size(0))
        device_synchronize(device)
        print("Train: [%d/4] Loss: %.3f (%.3f) out %s %s" % (
            batch_idx, losses_m.val, losses_m.avg, output.dtype, tuple(output.shape)))
    if device.type == "cuda":
        mem = torch.cuda.max_memory_allocated() / 1e6
    elif hasattr(torch, "accelerator") and torch.accelerator.is_available():
        mem = torch.accelerator.max_memory_allocated() / 1e6
    else:
        mem = 0.0
    print("Mem: %.1fMB" % mem)


def version_ok():
    major, minor = (int(x) for x in torch.__version__.split("+")[0].split(".")[:2])
    return (major, minor) >= (2, 0)


if __name__ == "__main__":
    main()
