"""Import paths and module-level API that real programs touch, checked against torch."""
import importlib
import os
import pkgutil
import subprocess
import sys
import warnings

import pytest

import ember

torch = pytest.importorskip("torch")

PATHS = ["backends.cudnn", "backends.cuda", "backends.mps", "backends.cpu", "backends.mkldnn",
         "backends.mkl", "backends.openmp", "backends.opt_einsum", "backends.nnpack",
         "nn.attention", "nn.common_types", "multiprocessing", "autograd.profiler", "profiler",
         "autograd.grad_mode", "random", "serialization", "types", "overrides", "hub",
         "cuda.amp", "cpu.amp", "utils.data.distributed", "utils.hooks", "utils.model_zoo",
         "accelerator", "mps", "xpu", "jit", "compiler", "amp"]


@pytest.mark.parametrize("path", PATHS)
def test_module_path_imports(path):
    importlib.import_module("torch." + path)
    mod = importlib.import_module("ember." + path)
    parent, _, leaf = ("ember." + path).rpartition(".")
    assert getattr(importlib.import_module(parent), leaf) is mod


def test_every_nn_modules_submodule_imports():
    base = importlib.import_module("torch.nn.modules")
    names = [m.name for m in pkgutil.iter_modules(base.__path__)
             if not m.name.startswith("_") and not m.name.startswith("linear_cross_entropy")]
    for name in names:
        importlib.import_module("ember.nn.modules." + name)


def test_import_statement_forms():
    code = ("import ember.backends.cudnn as cudnn, ember.cuda.amp, ember.cpu.amp\n"
            "from ember.nn.modules.activation import MultiheadAttention\n"
            "from ember.cuda.amp import autocast, GradScaler\n"
            "from ember.backends.cuda import sdp_kernel\n"
            "import ember\n"
            "assert cudnn is ember.backends.cudnn and MultiheadAttention is "
            "ember.nn.MultiheadAttention\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), "..", "src"))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_tensorboard_missing_raises_like_torch():
    try:
        import tensorboard  # noqa: F401
        pytest.skip("tensorboard is installed")
    except ImportError:
        pass
    with pytest.raises(ModuleNotFoundError, match="No module named 'tensorboard'"):
        importlib.import_module("torch.utils.tensorboard")
    with pytest.raises(ModuleNotFoundError, match="No module named 'tensorboard'"):
        importlib.import_module("ember.utils.tensorboard")


def test_backend_flags_match_torch():
    for lib in (torch, ember):
        b = lib.backends
        got = (b.mps.is_available(), b.mps.is_built(), b.cudnn.is_available(),
               b.cuda.flash_sdp_enabled(), b.cuda.math_sdp_enabled(),
               b.cuda.mem_efficient_sdp_enabled(), b.cuda.cudnn_sdp_enabled(),
               b.opt_einsum.is_available(), b.opt_einsum.enabled, b.opt_einsum.strategy)
        if lib is torch:
            expected = got
    assert got == expected


def test_sdpa_kernel_sets_and_restores_flags():
    for lib in (torch, ember):
        A = importlib.import_module(lib.__name__ + ".nn.attention")
        b = lib.backends.cuda
        with A.sdpa_kernel(A.SDPBackend.MATH):
            inside = (b.flash_sdp_enabled(), b.math_sdp_enabled())
        with A.sdpa_kernel([A.SDPBackend.FLASH_ATTENTION, A.SDPBackend.EFFICIENT_ATTENTION]):
            inside2 = (b.flash_sdp_enabled(), b.math_sdp_enabled(),
                       b.mem_efficient_sdp_enabled())
        with b.sdp_kernel(enable_flash=False):
            inside3 = b.flash_sdp_enabled()
        after = (b.flash_sdp_enabled(), b.math_sdp_enabled())
        got = (inside, inside2, inside3, after, repr(A.SDPBackend.MATH),
               int(A.SDPBackend.ERROR.value))
        if lib is torch:
            expected = got
        with pytest.raises(AssertionError, match="got str"):
            with A.sdpa_kernel("math"):
                pass
    assert got == expected


def test_cuda_and_cpu_amp_spellings():
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            s = lib.cuda.amp.GradScaler(enabled=False)
            ac = lib.cpu.amp.autocast()
        assert any(issubclass(x.category, FutureWarning) for x in w)
        with ac:
            y = lib.mm(lib.ones(2, 3), lib.ones(3, 2))
        got = (s.is_enabled(), str(y.dtype).split(".")[-1], ac.fast_dtype == lib.bfloat16,
               sorted(n for n in ("autocast", "GradScaler", "custom_fwd", "custom_bwd")
                      if hasattr(lib.cuda.amp, n)))
        if lib is torch:
            expected = got
    assert got == expected


def test_accelerator_mps_xpu_queries():
    for lib in (torch, ember):
        got = [lib.accelerator.is_available(), lib.accelerator.current_accelerator(),
               lib.accelerator.device_count(), lib.mps.is_available(), lib.mps.device_count(),
               lib.xpu.is_available(), lib.xpu.device_count()]
        errors = []
        for f in (lib.accelerator.current_device_index, lib.mps.synchronize,
                  lib.xpu.synchronize):
            try:
                f()
                errors.append(None)
            except Exception as e:       # noqa: BLE001 (compared below)
                errors.append((type(e).__name__, str(e)))
        got.append(errors)
        if lib is torch:
            expected = got
    if ember.cuda.is_available():
        pytest.skip("an accelerator is present for ember only")
    assert got == expected


def test_profiler_schedule_matches_torch():
    for lib in (torch, ember):
        P = importlib.import_module(lib.__name__ + ".profiler")
        s = P.schedule(skip_first=1, wait=1, warmup=1, active=2, repeat=2)
        got = [repr(s(i)) for i in range(12)]
        got.append(repr(P.ProfilerActivity.CPU))
        if lib is torch:
            expected = got
    assert got == expected
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
        ember.profiler.schedule(wait=0, warmup=0, active=0)


def _profile_keys(lib, repeat):
    P = importlib.import_module(lib.__name__ + ".profiler")
    lib.manual_seed(0)
    m = lib.nn.Linear(3, 2)
    calls = []
    with P.profile(activities=[P.ProfilerActivity.CPU],
                   schedule=P.schedule(wait=1, warmup=1, active=2, repeat=repeat),
                   on_trace_ready=lambda p: calls.append(p.step_num)) as prof:
        for _ in range(5):
            with P.record_function("fwd"):
                m(lib.ones(1, 3)).sum()
            prof.step()
    keys = [e.key for e in prof.key_averages()]
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=3)
    header = [line.split() for line in table.splitlines()[1:2]]
    return calls, "fwd" in keys, "ProfilerStep*" in keys, header


def test_profiler_steps_and_table_match_torch():
    for repeat in (0, 1):       # (0: the profile stops in a warm-up step, emptying the trace)
        assert _profile_keys(ember, repeat) == _profile_keys(torch, repeat)


def test_autograd_profiler_records_ops_and_ranges():
    with ember.autograd.profiler.profile(record_shapes=True) as prof:
        with ember.autograd.profiler.record_function("block"):
            ember.ones(2, 3).mul(2).sum()
    avg = {e.key: e for e in prof.key_averages()}
    assert {"block", "aten::mul", "aten::sum"} <= set(avg)
    block = avg["block"]
    assert block.cpu_time_total >= avg["aten::mul"].cpu_time_total
    shapes = prof.key_averages(group_by_input_shape=True)
    assert [e.input_shapes for e in shapes if e.key == "aten::mul"][0][0] == [2, 3]
    text = prof.key_averages().table(sort_by="self_cpu_time_total")
    assert text.splitlines()[-1].startswith("Self CPU time total:")
    # the hook is removed afterwards
    assert ember.autograd.function._hook is None


def _child_raises(rank):
    raise ValueError("bad rank %d" % rank)


def _child_puts(rank, q):
    q.put(rank * 10)


def test_multiprocessing_start_processes_and_errors():
    mp = ember.multiprocessing
    assert set(torch.multiprocessing.__all__) <= set(dir(mp)) | {"reducer"}
    ctx = mp.get_context("fork")
    q = ctx.SimpleQueue()
    mp.start_processes(_child_puts, args=(q,), nprocs=2, start_method="fork")
    assert sorted([q.get(), q.get()]) == [0, 10]
    with pytest.raises(mp.ProcessRaisedException, match="bad rank 0") as info:
        mp.start_processes(_child_raises, nprocs=1, start_method="fork")
    assert info.value.error_index == 0
    assert "-- Process 0 terminated with the following error:" in str(info.value)
    with pytest.raises(AssertionError, match="invalid sharing strategy"):
        mp.set_sharing_strategy("nope")


def test_overrides_and_types():
    class Like:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return "handled"

    for lib in (torch, ember):
        o = importlib.import_module(lib.__name__ + ".overrides")
        t = lib.ones(1)
        got = (o.has_torch_function((Like(),)), o.is_tensor_like(Like()), o.is_tensor_like(3),
               o.handle_torch_function(lib.add, (Like(),), Like(), 1))
        if lib is torch:
            expected = got
    assert got == expected
    assert ember.overrides.is_tensor_like(t)
    assert ember.types.Number == torch.types.Number


def test_hub_dir_and_cached_state_dict(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    assert ember.hub.get_dir() == torch.hub.get_dir() == str(tmp_path / "hub")
    ckpt = tmp_path / "hub" / "checkpoints"
    ckpt.mkdir(parents=True)
    torch.save({"w": torch.arange(3)}, ckpt / "tiny-abc.pth")
    sd = ember.hub.load_state_dict_from_url("https://example.invalid/x/tiny-abc.pth")
    assert sd["w"].tolist() == [0, 1, 2]
    assert ember.utils.model_zoo.load_url is ember.hub.load_state_dict_from_url
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "hubconf.py").write_text(
        "def tiny(n=2):\n    'A tiny model.'\n    import ember\n    return ember.nn.Linear(n, 1)\n")
    m = ember.hub.load(str(tmp_path / "repo"), "tiny", 3, source="local")
    assert m.in_features == 3
    assert ember.hub.list(str(tmp_path / "repo"), source="local") == ["tiny"]


def test_top_level_setup_calls():
    for lib in (torch, ember):
        lib._assert(True, "fine")
        with pytest.raises(AssertionError, match="boom"):
            lib._assert(False, "boom")
        got = (lib.get_default_dtype(), lib.cuda.is_available(), lib.cuda.device_count(),
               lib.backends.mps.is_available(), lib.version.cuda)
        got = tuple(str(x).replace("torch.", "") for x in got)
        if lib is torch:
            expected = got
    assert got == expected


def test_cuda_queries_without_cuda_match_torch():
    if ember.cuda.is_available():
        pytest.skip("CUDA present")
    for lib in (torch, ember):
        c = lib.cuda
        got = [c.get_rng_state_all(), c.set_rng_state_all([]), c.is_bf16_supported(),
               c.is_tf32_supported(), dict(c.memory_stats()), c.get_arch_list(),
               c.default_generators, c.has_half, c.StreamContext(None).__enter__()]
        for f in (c.get_rng_state, c.initial_seed, c.mem_get_info, c.ipc_collect,
                  lambda: c.nvtx.range_push("x")):
            try:
                f()
                got.append(None)
            except Exception as e:       # noqa: BLE001 (compared below)
                got.append(isinstance(e, AssertionError) or str(e))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            got.append(c.memory_cached())
        got.append(str(w[0].message))
        if lib is torch:
            expected = got
    assert got == expected


def test_small_module_level_helpers_match_torch():
    import collections
    for lib in (torch, ember):
        u = importlib.import_module(lib.__name__ + ".nn.modules.utils")
        sd = collections.OrderedDict([("module.a", 1), ("b", 2), ("module.c.d", 3)])
        sd._metadata = {"": {}, "module": {"v": 1}, "module.c": {"v": 2}}
        u.consume_prefix_in_state_dict_if_present(sd, "module.")
        P = importlib.import_module(lib.__name__ + ".profiler")
        cr = importlib.import_module(lib.__name__ + ".cuda.random")
        got = (list(sd.items()), sd._metadata, lib.backends.cudnn.is_acceptable(lib.ones(1)),
               [(k, v.value) for k, v in P.DeviceType.__members__.items()],
               P.kineto_available(), cr.get_rng_state_all(), isinstance(3, lib.SymInt))
        if lib is torch:
            expected = got
    assert got == expected
    fut = ember.fork(lambda a: a * 2, 4)
    assert ember.wait(fut) == 8


def test_utils_submodules_reachable_after_import_only():
    code = ("import ember\n"
            "assert ember.utils.hooks.RemovableHandle and ember.utils.checkpoint.checkpoint\n"
            "assert ember.nn.attention.SDPBackend and ember.cuda.amp.autocast\n"
            "assert ember.autograd.grad_mode.no_grad and ember.multiprocessing.spawn\n"
            "assert ember.autograd.profiler.profile and ember.profiler.profile\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), "..", "src"))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
