"""Device boilerplate (torch.cuda, torch.accelerator, torch.backends, torch.amp, torch.mps,
torch.xpu) without CUDA: ember answers as CPU-only torch, with ``CudaUnavailableError`` (naming
CuPy) where torch says "Torch not compiled with CUDA enabled"."""
import warnings

import pytest

import ember


@pytest.fixture
def no_cuda():
    if ember.cuda.is_available():
        pytest.skip("CUDA is available here")


def _outcome(f, *args):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            result = ("ret", f(*args))
        except Exception as e:    # noqa: BLE001 (the class is what is compared)
            result = ("exc", e)
    return result, sorted({(x.category, str(x.message)) for x in w}, key=str)


def _same(t_f, e_f, *args, cupy_error=False):
    (tk, tv), tw = _outcome(t_f, *args)
    (ek, ev), ew = _outcome(e_f, *args)
    assert tk == ek, (tv, ev)
    assert tw == ew
    if tk == "ret":
        assert tv == ev or repr(tv) == repr(ev)     # (pybind enums equal only by repr)
        return
    assert isinstance(ev, type(tv)), (tv, ev)
    if cupy_error:
        assert isinstance(ev, ember.cuda.CudaUnavailableError) and "CuPy" in str(ev)
    else:
        assert str(ev) == str(tv)


@pytest.mark.parametrize("name,args", [
    ("synchronize", ()), ("synchronize", (0,)), ("get_device_name", (0,)),
    ("get_device_properties", (0,)), ("get_device_capability", (0,)),
    ("get_device_name", ()), ("set_device", (0,)), ("reset_peak_memory_stats", ()),
    ("reset_accumulated_memory_stats", ()), ("memory_snapshot", ()),
    ("get_sync_debug_mode", ()), ("set_sync_debug_mode", ("bogus",)),
    ("get_per_process_memory_fraction", ()), ("can_device_access_peer", (0, 1))])
def test_cuda_queries_raise_the_cupy_error(torch, no_cuda, name, args):
    _same(getattr(torch.cuda, name), getattr(ember.cuda, name), *args, cupy_error=True)


def test_deprecated_peak_resets_warn_then_raise(torch, no_cuda):
    for name in ("reset_max_memory_allocated", "reset_max_memory_cached"):
        _same(getattr(torch.cuda, name), getattr(ember.cuda, name), cupy_error=True)


@pytest.mark.parametrize("name,args", [
    ("memory_summary", ()), ("memory_stats_as_nested_dict", ()), ("host_memory_stats", ()),
    ("host_memory_stats_as_nested_dict", ()), ("get_gencode_flags", ()),
    ("manual_seed", ("cuda",)), ("manual_seed_all", ("cuda",)), ("manual_seed_all", ()),
    ("set_rng_state", (0,)), ("set_device", ("cuda",)), ("stream", ()),
    ("caching_allocator_enable", ()), ("memory_allocated", ()), ("max_memory_allocated", ()),
    ("memory_stats", ()), ("is_bf16_supported", ()), ("device_count", ())])
def test_cuda_answers_as_cpu_only_torch(torch, no_cuda, name, args):
    _same(getattr(torch.cuda, name), getattr(ember.cuda, name), *args)


def test_cuda_names_and_types(torch, no_cuda):
    assert type(ember.cuda.stream(None)).__name__ == "StreamContext"
    with ember.cuda.stream(None), ember.cuda.caching_allocator_disabled():
        pass
    assert ember.cuda.OutOfMemoryError is ember.OutOfMemoryError
    assert issubclass(ember.cuda.OutOfMemoryError, RuntimeError)
    try:
        import pynvml  # noqa: F401
    except ModuleNotFoundError:
        assert ember.cuda.list_gpu_processes() == torch.cuda.list_gpu_processes()
        for name in ("temperature", "utilization", "power_draw", "clock_rate", "memory_usage"):
            _same(getattr(torch.cuda, name), getattr(ember.cuda, name))


@pytest.mark.parametrize("name,args", [
    ("synchronize", ()), ("synchronize", (0,)), ("synchronize", ("cuda",)),
    ("empty_cache", ()), ("memory_allocated", ()), ("max_memory_allocated", (0,)),
    ("memory_reserved", ("cuda",)), ("reset_peak_memory_stats", ()), ("memory_stats", ()),
    ("get_memory_info", ()), ("current_stream", ()), ("current_device_idx", ()),
    ("set_device_idx", ()), ("empty_host_cache", ()), ("reset_accumulated_memory_stats", ()),
    ("current_accelerator", ()), ("is_available", ()), ("device_count", ())])
def test_accelerator_without_one(torch, no_cuda, name, args):
    _same(getattr(torch.accelerator, name), getattr(ember.accelerator, name), *args)


def test_accelerator_device_index_context(torch, no_cuda):
    for lib in (torch, ember):
        with lib.accelerator.device_index(None):
            pass
    _same(lambda: torch.accelerator.device_index(0).__enter__(),
          lambda: ember.accelerator.device_index(0).__enter__())


def test_cuda_amp_legacy_decorator_names(torch):
    _same(torch.cuda.amp.custom_bwd, ember.cuda.amp.custom_bwd)
    _same(torch.amp.is_autocast_available, ember.amp.is_autocast_available, 0)


def test_matmul_flags_follow_float32_matmul_precision(torch):
    old_t, old_e = torch.get_float32_matmul_precision(), ember.get_float32_matmul_precision()
    try:
        for precision in ("high", "medium"):     # (after "highest" torch says "ieee")
            for lib in (torch, ember):
                lib.set_float32_matmul_precision(precision)
            tm, em = torch.backends.cuda.matmul, ember.backends.cuda.matmul
            assert em.allow_tf32 == tm.allow_tf32 and em.fp32_precision == tm.fp32_precision
        for name in ("allow_fp16_reduced_precision_reduction_split_k",
                     "allow_bf16_reduced_precision_reduction", "allow_fp16_accumulation"):
            assert getattr(em, name) == getattr(tm, name)
        for value in ((True, False), 1, (), (True, True, True), (True, 1)):
            _same(lambda: setattr(tm, "allow_fp16_reduced_precision_reduction", value),
                  lambda: setattr(em, "allow_fp16_reduced_precision_reduction", value))
        _same(lambda: tm.bogus, lambda: em.bogus)
        _same(lambda: setattr(tm, "bogus", 1), lambda: setattr(em, "bogus", 1))
    finally:
        torch.set_float32_matmul_precision(old_t)
        ember.set_float32_matmul_precision(old_e)


def test_backends_cuda_and_cudnn_answers(torch):
    tb, eb = torch.backends, ember.backends
    for name in ("is_flash_attention_available", "is_ck_sdpa_available",
                 "fp16_bf16_reduction_math_sdp_allowed", "preferred_blas_library",
                 "preferred_linalg_library"):
        _same(getattr(tb.cuda, name), getattr(eb.cuda, name))
    assert repr(eb.cuda.preferred_linalg_library()) == repr(tb.cuda.preferred_linalg_library())
    for bad in (0, "x"):
        _same(tb.cuda.preferred_linalg_library, eb.cuda.preferred_linalg_library, bad)
        _same(tb.cuda.preferred_blas_library, eb.cuda.preferred_blas_library, bad)
    for name in ("enable_flash_sdp", "enable_math_sdp", "enable_mem_efficient_sdp",
                 "enable_cudnn_sdp", "allow_fp16_bf16_reduction_math_sdp"):
        _same(getattr(tb.cuda, name), getattr(eb.cuda, name), 1)
    _same(lambda: type(tb.cuda.sdp_kernel()), lambda: type(eb.cuda.sdp_kernel()))
    assert (eb.cudnn.benchmark_limit, eb.cudnn.fp32_precision, eb.cudnn.conv.fp32_precision,
            eb.cudnn.rnn.fp32_precision, eb.mkldnn.fp32_precision) == (
        tb.cudnn.benchmark_limit, tb.cudnn.fp32_precision, tb.cudnn.conv.fp32_precision,
        tb.cudnn.rnn.fp32_precision, tb.mkldnn.fp32_precision)
    _same(tb.mps.is_macos13_or_newer, eb.mps.is_macos13_or_newer)


@pytest.mark.parametrize("name,args", [
    ("seed", ()), ("get_rng_state", ()), ("set_rng_state", (0,)),
    ("set_per_process_memory_fraction", (1,)), ("set_per_process_memory_fraction", (0.5,))])
def test_mps_without_mps(torch, name, args):
    if torch.backends.mps.is_available():
        pytest.skip("MPS is available here")
    _same(getattr(torch.mps, name), getattr(ember.mps, name), *args)


@pytest.mark.parametrize("name,args", [
    ("current_device", ()), ("get_device_name", ()), ("init", ()), ("initial_seed", ()),
    ("manual_seed_all", ("a",)), ("is_initialized", ()), ("is_bf16_supported", ()),
    ("get_arch_list", ()), ("get_rng_state_all", ()), ("memory_allocated", ()),
    ("memory_stats", ()), ("memory_snapshot", ()), ("set_device", (0,)), ("synchronize", ())])
def test_xpu_without_xpu(torch, name, args):
    if torch.xpu.is_available():
        pytest.skip("XPU is available here")
    _same(getattr(torch.xpu, name), getattr(ember.xpu, name), *args)
