"""Session 11 fixes in nn: Module.to(memory_format), embedding's renorm errors, the CPU choice
of scaled_dot_product_attention's kernel (and autocast), backends.mha, and torch's class tree
(MRO and ``__constants__``) of the nn modules. PyTorch is the oracle."""
import inspect
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(fn):
    """(kind, message or value summary) of ``fn()``."""
    try:
        r = fn()
    except Exception as e:     # noqa: BLE001 (comparing the exception itself)
        return ("raise", type(e).__name__, str(e).split("\n")[0])
    return ("ok", r)


def _both(fn):
    return _outcome(lambda: fn(ember)), _outcome(lambda: fn(torch))


def _np(t):
    return np.asarray(t.detach().float().numpy())


# -- Module.to(memory_format=...) -------------------------------------------------------------

def test_module_to_channels_last_skips_non_4d():
    def run(lib):
        conv = lib.nn.Conv2d(3, 4, 3, padding=1).to(memory_format=lib.channels_last)
        w = conv.weight
        return (w.stride(), conv.bias.stride(), w.is_contiguous(),
                w.is_contiguous(memory_format=lib.channels_last))
    assert run(ember) == run(torch)


@pytest.mark.parametrize("fmt", ["channels_last", "channels_last_3d"])
def test_module_to_memory_format_rank_errors(fmt):
    def run(lib):
        c = lib.nn.Conv3d(2, 2, 2).to(memory_format=getattr(lib, fmt))
        return c.weight.stride()
    assert _outcome(lambda: run(ember)) == _outcome(lambda: run(torch))


def test_module_to_dtype_only_for_floating_tensors():
    def run(lib):
        m = lib.nn.BatchNorm2d(3)
        m.to(lib.zeros(1, dtype=lib.float64))
        lin = lib.nn.Linear(2, 2).bfloat16().to(lib.float32)
        c = lib.nn.Conv2d(2, 2, 2).to(lib.float64, memory_format=lib.channels_last)
        return (str(m.num_batches_tracked.dtype), str(m.weight.dtype), str(lin.weight.dtype),
                c.weight.stride(), str(c.weight.dtype))
    assert run(ember) == run(torch)


# -- embedding ---------------------------------------------------------------------------------

@pytest.mark.parametrize("idx", [[5, 2, 7, 9], [9, 7, 5], [-1, 2], [-4, 1], [-5, 1], [1, -7],
                                 [[0.0, 1.0]], [1, 3]])
def test_embedding_max_norm_renorm_first(idx):
    def run(lib):
        w = lib.arange(12.0).view(4, 3)
        out = _outcome(lambda: lib.nn.functional.embedding(lib.tensor(idx), w, max_norm=1.0))
        if out[0] == "ok":
            out = ("ok", _np(out[1]).round(4).tolist())
        return out, _np(w).round(4).tolist()
    assert run(ember) == run(torch)


@pytest.mark.parametrize("case", range(12))
def test_embedding_argument_errors(case):
    def run(lib):
        F = lib.nn.functional
        w = lib.arange(12.0).view(4, 3)
        i = lib.tensor([1, 0])
        fns = [
            lambda: F.embedding(i.to(lib.bool), w),
            lambda: F.embedding(i.to(lib.uint8), w),
            lambda: F.embedding(i.to(lib.int16), w, max_norm=1.0),
            lambda: F.embedding(i.to(lib.complex64), w),
            lambda: F.embedding(i.to(lib.bool), w, max_norm=1.0),
            lambda: F.embedding(i, w, padding_idx=4),
            lambda: F.embedding(i, w, padding_idx=-5, max_norm=1.0),
            lambda: F.embedding(i, lib.arange(3.0), max_norm=1.0),
            lambda: F.embedding(i, lib.arange(3.0)),
            lambda: F.embedding(i, lib.ones(2, 2, 2)),
            lambda: F.embedding(i, w.long(), max_norm=1.0),
            lambda: F.embedding_bag(lib.tensor([1, 2]), w, lib.tensor([0]),
                                    per_sample_weights=lib.ones(2), mode="mean"),
        ]
        out = _outcome(fns[case])
        return out if out[0] == "raise" else ("ok", tuple(out[1].shape))
    assert run(ember) == run(torch)


def test_embedding_bag_max_norm_out_of_range():
    def run(lib):
        w = lib.arange(12.0).view(4, 3)
        out = _outcome(lambda: lib.nn.functional.embedding_bag(
            lib.tensor([1, 9]), w, lib.tensor([0]), max_norm=1.0))
        return out, _np(w).round(4).tolist()
    assert run(ember) == run(torch)


def test_local_response_norm_message():
    fn = lambda lib: lib.nn.functional.local_response_norm(lib.randn(2, 3), 2)  # noqa: E731
    assert _outcome(lambda: fn(ember)) == _outcome(lambda: fn(torch))


# -- scaled_dot_product_attention ------------------------------------------------------------

def _sdpa_run(lib, q_shape, mask_shape, mask_kind="float", is_causal=False, dtype="float32",
              grad_mode=True, mask_grad=False, dropout_p=0.0, kernels=None):
    rng = np.random.default_rng(0)
    lq, lk = q_shape[-2], q_shape[-2] + 2
    kshape = tuple(q_shape[:-2]) + (lk, q_shape[-1])
    dt = getattr(lib, dtype)
    q = lib.tensor(rng.standard_normal(q_shape), dtype=dt).requires_grad_()
    k = lib.tensor(rng.standard_normal(kshape), dtype=dt)
    v = lib.tensor(rng.standard_normal(kshape), dtype=dt)
    mask = None
    if mask_shape is not None:
        shape = tuple(lq if s == "L" else lk if s == "S" else s for s in mask_shape)
        arr = rng.standard_normal(shape)
        mask = lib.tensor(arr > -0.5) if mask_kind == "bool" else lib.tensor(arr, dtype=dt)
        if mask_grad:
            mask.requires_grad_()

    def call():
        with lib.set_grad_enabled(grad_mode):
            out = lib.nn.functional.scaled_dot_product_attention(
                q, k, v, mask, dropout_p=dropout_p, is_causal=is_causal)
        node = type(out.grad_fn).__name__ if out.grad_fn is not None else None
        values = None if dropout_p else _np(out)
        return node, str(out.dtype), tuple(out.shape), values

    if kernels is None:
        return _outcome(call)
    att = lib.nn.attention
    with att.sdpa_kernel([getattr(att.SDPBackend, b) for b in kernels]):
        return _outcome(call)


SDPA_CASES = [
    dict(q_shape=(2, 2, 3, 4), mask_shape=("L", "S"), is_causal=True),
    dict(q_shape=(2, 2, 3, 4), mask_shape=("L", "S"), mask_kind="bool", is_causal=True),
    dict(q_shape=(2, 2, 3, 4), mask_shape=(1, 1, "L", "S"), is_causal=True),
    dict(q_shape=(2, 2, 3, 4), mask_shape=(2, "L", "S"), is_causal=True),
    dict(q_shape=(2, 2, 3, 4), mask_shape=("L", "S"), is_causal=True, mask_grad=True),
    dict(q_shape=(2, 3, 4), mask_shape=("L", "S"), is_causal=True),
    dict(q_shape=(2, 2, 3, 4), mask_shape=("S",)),
    dict(q_shape=(2, 2, 3, 4), mask_shape=()),
    dict(q_shape=(2, 2, 3, 4), mask_shape=("S",), dropout_p=0.5),
    dict(q_shape=(2, 3, 4), mask_shape=("S",)),
    dict(q_shape=(2, 2, 3, 4), mask_shape=(2, "L", "S")),
    dict(q_shape=(2, 2, 3, 4), mask_shape=("L", 3)),
    dict(q_shape=(2, 2, 3, 4), mask_shape=("L", "S"), grad_mode=False, mask_grad=True,
         is_causal=True),
    dict(q_shape=(2, 2, 3, 4), mask_shape=None, kernels=["MATH"]),
    dict(q_shape=(2, 2, 3, 4), mask_shape=("S",), kernels=["MATH"]),
    dict(q_shape=(2, 3, 4), mask_shape=None, kernels=["FLASH_ATTENTION"]),
    dict(q_shape=(2, 2, 3, 4), mask_shape=None, kernels=["FLASH_ATTENTION"]),
    dict(q_shape=(2, 2, 3, 4), mask_shape=None, kernels=["EFFICIENT_ATTENTION"]),
    dict(q_shape=(2, 3, 4), mask_shape=("L", "S"), dtype="bfloat16"),
    dict(q_shape=(2, 3, 4), mask_shape=("L", "S"), mask_kind="bool", dtype="float16"),
    dict(q_shape=(2, 3, 4), mask_shape=None, is_causal=True, dtype="bfloat16"),
    dict(q_shape=(2, 2, 5, 8), mask_shape=("L", "S"), dtype="bfloat16"),
    dict(q_shape=(2, 2, 5, 8), mask_shape=None, dtype="float16"),
]


@pytest.mark.parametrize("case", range(len(SDPA_CASES)))
def test_sdpa_kernel_choice(case):
    kw = SDPA_CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e, t = _sdpa_run(ember, **kw), _sdpa_run(torch, **kw)
    if e[0] == "raise" or t[0] == "raise":
        assert e == t
        return
    assert e[1][:3] == t[1][:3]
    if t[1][3] is not None:
        tol = 1e-5 if kw.get("dtype", "float32") == "float32" else 1e-2
        np.testing.assert_allclose(e[1][3], t[1][3], rtol=tol, atol=tol)


@pytest.mark.parametrize("q_shape,mask", [((2, 2, 3, 4), "float"), ((2, 3, 4), "float"),
                                          ((2, 2, 3, 4), "bool"), ((2, 2, 3, 4), "double"),
                                          ((2, 2, 3, 4), None)])
def test_sdpa_autocast_cpu(q_shape, mask):
    def run(lib):
        rng = np.random.default_rng(1)
        kshape = tuple(q_shape[:-2]) + (5, q_shape[-1])
        q = lib.tensor(rng.standard_normal(q_shape), dtype=lib.float32).requires_grad_()
        k = lib.tensor(rng.standard_normal(kshape), dtype=lib.float32)
        v = lib.tensor(rng.standard_normal(kshape), dtype=lib.float32)
        m = None
        if mask == "float":
            m = lib.tensor(rng.standard_normal((3, 5)), dtype=lib.float32)
        elif mask == "double":
            m = lib.tensor(rng.standard_normal((3, 5)), dtype=lib.float64)
        elif mask == "bool":
            m = lib.tensor(rng.standard_normal((3, 5)) > 0)
        with lib.autocast("cpu"):
            out = _outcome(lambda: lib.nn.functional.scaled_dot_product_attention(q, k, v, m))
        if out[0] == "raise":
            return out
        o = out[1]
        return type(o.grad_fn).__name__, str(o.dtype), _np(o)
    e, t = run(ember), run(torch)
    if e[0] == "raise" or t[0] == "raise":
        assert e == t
        return
    assert e[:2] == t[:2]
    np.testing.assert_allclose(e[2], t[2], rtol=2e-2, atol=1e-2)


def test_sdpa_flash_bfloat16_rounding_matches():
    rng = np.random.default_rng(2)
    arrs = [rng.standard_normal(s) for s in ((2, 2, 7, 8), (2, 2, 9, 8), (2, 2, 9, 8), (7, 9))]
    outs = []
    for lib in (ember, torch):
        q, k, v, m = (lib.tensor(a, dtype=lib.float32).to(lib.bfloat16) for a in arrs)
        outs.append(_np(lib.nn.functional.scaled_dot_product_attention(q, k, v, m)))
    np.testing.assert_array_equal(outs[0], outs[1])


# -- backends.mha ------------------------------------------------------------------------------

def test_backends_mha_fastpath_flag():
    import ember.backends.mha as mha
    assert mha.get_fastpath_enabled() is torch.backends.mha.get_fastpath_enabled()
    try:
        mha.set_fastpath_enabled(False)
        assert ember.backends.mha.get_fastpath_enabled() is False
    finally:
        mha.set_fastpath_enabled(True)
    assert ember.backends.mha.get_fastpath_enabled() is True


# -- class tree --------------------------------------------------------------------------------

# DataParallel's tree differs (ember's runs the module on the one device it has).
_ELSEWHERE = {"DataParallel"}


def _module_classes():
    return sorted(n for n in dir(torch.nn) if inspect.isclass(getattr(torch.nn, n))
                  and issubclass(getattr(torch.nn, n), torch.nn.Module))


@pytest.mark.parametrize("name", [n for n in _module_classes() if n not in _ELSEWHERE])
def test_module_class_tree_as_torch(name):
    tc, ec = getattr(torch.nn, name), getattr(ember.nn, name)
    assert [c.__name__ for c in ec.__mro__][:-1] == [c.__name__ for c in tc.__mro__][:-1]
    assert getattr(ec, "__constants__", None) == getattr(tc, "__constants__", None)


def test_zero_pad_is_constant_pad():
    m = ember.nn.ZeroPad2d((1, 2, 0, 1))
    assert isinstance(m, ember.nn.ConstantPad2d) and m.value == 0.0
    assert repr(m) == repr(torch.nn.ZeroPad2d((1, 2, 0, 1)))
    assert repr(ember.nn.ReflectionPad1d([2, 1])) == repr(torch.nn.ReflectionPad1d([2, 1]))


@pytest.mark.parametrize("cls", ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyInstanceNorm1d",
                                 "LazyInstanceNorm2d"])
@pytest.mark.parametrize("kw", [{}, {"affine": False}, {"track_running_stats": False},
                                {"bias": False}, {"affine": False, "track_running_stats": False}])
def test_lazy_norm_as_torch(cls, kw):
    nd = 3 if "1d" in cls else 4

    def run(lib):
        m = getattr(lib.nn, cls)(**kw)
        before = (repr(m), type(m.running_mean).__name__, sorted(m.state_dict()),
                  list(m._buffers), [(k, type(v).__name__) for k, v in m._parameters.items()],
                  m.has_uninitialized_params(),
                  isinstance(m, getattr(lib.nn, cls.replace("Lazy", ""))))
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = m(lib.ones(*[2, 3, 5, 5][:nd]))
        after = (type(m).__name__, repr(m), m.num_features, tuple(y.shape), sorted(m.state_dict()),
                 None if m.running_mean is None else _np(m.running_mean).round(4).tolist())
        return before, after
    assert run(ember) == run(torch)


def test_batch_norm_bias_false():
    def run(lib):
        m = lib.nn.BatchNorm2d(3, bias=False)
        s = lib.nn.SyncBatchNorm(3, bias=False)
        y = m(lib.ones(2, 3, 2, 2))
        return repr(m), repr(s), m.bias, sorted(m.state_dict()), tuple(y.shape)
    assert run(ember) == run(torch)


def test_mha_fastpath_flag_turns_fast_path_off():
    def run(lib):
        lib.manual_seed(0)
        m = lib.nn.MultiheadAttention(4, 2, batch_first=True).eval()
        x = lib.ones(2, 3, 4)
        kpm = lib.tensor([[False, False, False], [True, True, True]])
        lib.backends.mha.set_fastpath_enabled(False)
        try:
            with lib.no_grad():
                out = m(x, x, x, key_padding_mask=kpm, need_weights=False)[0]
        finally:
            lib.backends.mha.set_fastpath_enabled(True)
        return bool(out[1].isnan().any())
    assert run(ember) == run(torch)
