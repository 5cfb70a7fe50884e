"""The inference-benchmark loop found in many repos (HF ``benchmark_utils``-style warmup +
timed iterations with ``torch.cuda.synchronize()`` guarded by ``torch.cuda.is_available()``,
CUDA events only on GPU, ``torch.cuda.max_memory_allocated``/``reset_peak_memory_stats`` in
the log), pytorch/examples' newer ``torch.accelerator`` device selection, the ``mps`` fallback,
``CUDA_VISIBLE_DEVICES`` handling, thread settings, and the try/except blocks scripts wrap
around unguarded CUDA calls (``except (AssertionError, RuntimeError)``) on a CPU-only machine.
Timings are never printed, only how many were taken."""
import importlib
import os
import time
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = importlib.import_module(LIB + ".nn")


def get_device():
    """pytorch/examples (2025) mnist/main.py: ``--no-accel`` style selection."""
    use_accel = torch.accelerator.is_available()
    if use_accel:
        return torch.accelerator.current_accelerator()
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def sync(device):
    if device.type == "cuda" and torch.cuda.is_available():
        torch.cuda.synchronize()
    elif device.type == "mps":
        torch.mps.synchronize()


def benchmark(model, x, device, warmup=2, iters=5):
    """Warm up, then time ``iters`` forward passes (events on CUDA, perf_counter else)."""
    model.eval()
    with torch.inference_mode():
        for _ in range(warmup):
            model(x)
        sync(device)
        times = []
        if device.type == "cuda":
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
        for _ in range(iters):
            if device.type == "cuda":
                start.record()
                out = model(x)
                end.record()
                torch.cuda.synchronize()
                times.append(start.elapsed_time(end) / 1000)
            else:
                t0 = time.perf_counter()
                out = model(x)
                sync(device)
                times.append(time.perf_counter() - t0)
    return out, times


def try_call(label, fn):
    """Run ``fn`` and print its result or the kind of error (the first of the usual ones it is
    an instance of, as ``except`` clauses would see it)."""
    try:
        result = fn()
        print("%-34s -> %r" % (label, result))
    except Exception as e:
        kinds = (AssertionError, KeyError, ValueError, AttributeError, TypeError, RuntimeError)
        print("%-34s -> raised %s" % (label, next(k.__name__ for k in kinds
                                                   if isinstance(e, k))))


def main():
    warnings.simplefilter("ignore")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    print("CUDA_VISIBLE_DEVICES=%r" % os.environ["CUDA_VISIBLE_DEVICES"])
    torch.set_num_threads(2)
    print("threads", torch.get_num_threads())
    device = get_device()
    print("device", device, "accelerator", torch.accelerator.current_accelerator(),
          "count", torch.accelerator.device_count(), torch.cuda.device_count())
    print("cuda", torch.cuda.is_available(), "initialized", torch.cuda.is_initialized(),
          "mps", torch.backends.mps.is_available(), "built", torch.backends.mps.is_built(),
          "version.cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())
    print("bf16 supported", torch.cuda.is_bf16_supported(), "arch", torch.cuda.get_arch_list())
    if torch.cuda.is_available():
        print(torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))
    else:
        print("no GPU: memory", torch.cuda.memory_allocated(), torch.cuda.memory_reserved(),
              torch.cuda.max_memory_allocated(), dict(torch.cuda.memory_stats()))

    # the calls scripts make without a guard, and what a CPU-only machine answers
    try_call("cuda.synchronize()", torch.cuda.synchronize)
    try_call("cuda.current_device()", torch.cuda.current_device)
    try_call("cuda.get_device_name(0)", lambda: torch.cuda.get_device_name(0))
    try_call("cuda.get_device_properties(0)", lambda: torch.cuda.get_device_properties(0))
    try_call("cuda.mem_get_info()", torch.cuda.mem_get_info)
    try_call("cuda.memory_summary()", torch.cuda.memory_summary)
    try_call("cuda.empty_cache()", torch.cuda.empty_cache)
    try_call("cuda.manual_seed_all(0)", lambda: torch.cuda.manual_seed_all(0))
    try_call("cuda.set_device('cuda')", lambda: torch.cuda.set_device("cuda"))
    try_call("cuda.ipc_collect()", torch.cuda.ipc_collect)
    try_call("cuda.get_rng_state()", torch.cuda.get_rng_state)
    try_call("accelerator.synchronize()", torch.accelerator.synchronize)
    try_call("accelerator.current_device_index()", torch.accelerator.current_device_index)
    try_call("accelerator.memory_allocated()", torch.accelerator.memory_allocated)
    try_call("mps.synchronize()", torch.mps.synchronize)
    try_call("mps.empty_cache()", torch.mps.empty_cache)
    try_call("xpu.is_available()", torch.xpu.is_available)
    try_call("cuda.amp.GradScaler().get_scale()", lambda: torch.cuda.amp.GradScaler().get_scale())
    try_call("torch.Tensor.cuda()", lambda: torch.ones(1).cuda())
    try_call("torch.ones(1, device='cuda')", lambda: torch.ones(1, device="cuda"))
    try_call("pin_memory()", lambda: torch.ones(2).pin_memory().is_pinned())
    try_call("cudnn flags", lambda: (torch.backends.cudnn.enabled, torch.backends.cudnn.benchmark,
                                     torch.backends.cudnn.deterministic))

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
    x = torch.randn(8, 16).to(device, non_blocking=True)
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    out, times = benchmark(model, x, device)
    print("out", tuple(out.shape), out.dtype, "sum %.4f" % out.sum().item(),
          "timed iterations", len(times), "all positive", all(t >= 0 for t in times))
    peak = torch.cuda.max_memory_allocated() / 2 ** 20 if torch.cuda.is_available() else 0.0
    print("peak memory %.1f MiB" % peak)


if __name__ == "__main__":
    main()
