"""Regression tests (against torch) for the differences the training programs
(tests/programs/p_r2train_*.py) exposed: persistent DataLoader workers keeping their seeds and
RNG streams across epochs, a worker's KeyError re-raised readably, nn.init's fan-mode checks
and dirac_ groups, and CPU autocast (ops whose node name depends on the call, the LSTM layer,
device-type errors, custom_fwd with cast_inputs)."""
import warnings

import pytest

import ember

torch = pytest.importorskip("torch")


class _Noisy:
    """A map-style dataset whose items draw from the worker's torch RNG (host-only use)."""

    def __init__(self, lib, n):
        self.lib = lib
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        info = self.lib.utils.data.get_worker_info()
        return [i, round(self.lib.rand(1).item(), 6), info.id, info.seed]


def _epochs(lib, persistent, epochs=2):
    g = lib.Generator().manual_seed(3)
    loader = lib.utils.data.DataLoader(_Noisy(lib, 6), batch_size=3, shuffle=True,
                                       num_workers=2, generator=g,
                                       persistent_workers=persistent)
    out = []
    for _ in range(epochs):
        out.append([[[float(v) for v in col] for col in b] for b in loader])
    return out


def test_persistent_workers_keep_rng_across_epochs():
    assert _epochs(ember, True) == _epochs(torch, True)


def _range_dataset(lib, n):
    class _Range(lib.utils.data.IterableDataset):
        def __iter__(self):
            info = lib.utils.data.get_worker_info()
            return iter(range(info.id, n, info.num_workers))
    return _Range()


def test_persistent_workers_iterable_restart_and_early_break():
    res = {}
    for lib in (ember, torch):
        ds = _range_dataset(lib, 7)
        loader = lib.utils.data.DataLoader(ds, batch_size=2, num_workers=2,
                                           persistent_workers=True)
        first = []
        for k, b in enumerate(loader):    # leave the first epoch early: the rest is dropped
            first.append(b.tolist())
            if k == 1:
                break
        res[lib.__name__] = (first, [b.tolist() for b in loader], [b.tolist() for b in loader])
    assert res["ember"] == res["torch"]


class _Faulty:
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            raise KeyError("bad index %d" % i)
        return i


def test_worker_keyerror_message_is_readable():
    msgs = {}
    for lib in (ember, torch):
        loader = lib.utils.data.DataLoader(_Faulty(), batch_size=2, num_workers=1)
        with pytest.raises(KeyError) as info:
            list(loader)
        msgs[lib.__name__] = str(info.value).splitlines()[0]
    assert msgs["ember"] == msgs["torch"] == "Caught KeyError in DataLoader worker process 0."


def _err(fn):
    try:
        fn()
    except Exception as e:      # noqa: BLE001 - the class and message are compared
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("call", [
    lambda L: L.nn.init.kaiming_normal_(L.empty(3, 4), mode="fan_avg"),
    lambda L: L.nn.init.kaiming_uniform_(L.empty(5), mode="fan_avg"),
    lambda L: L.nn.init.kaiming_uniform_(L.empty(5)),
    lambda L: L.nn.init._calculate_correct_fan(L.empty(3, 4), "bad"),
    lambda L: L.nn.init.dirac_(L.empty(3, 2, 3), groups=2),
])
def test_init_errors(call):
    assert _err(lambda: call(ember)) == _err(lambda: call(torch))


def test_init_correct_fan_and_mode_case():
    for shape in [(7, 3), (8, 4, 3), (16, 8, 3, 3)]:
        for mode in ("fan_in", "fan_out", "FAN_OUT"):
            assert ember.nn.init._calculate_correct_fan(ember.empty(shape), mode) == \
                torch.nn.init._calculate_correct_fan(torch.empty(shape), mode)
    ember.manual_seed(0)
    torch.manual_seed(0)
    a = ember.nn.init.kaiming_normal_(ember.empty(4, 3), mode="Fan_Out", nonlinearity="relu")
    b = torch.nn.init.kaiming_normal_(torch.empty(4, 3), mode="Fan_Out", nonlinearity="relu")
    assert a.flatten().tolist() == pytest.approx(b.flatten().tolist(), rel=1e-6)


def _autocast_dtypes(L):
    F = L.nn.functional
    L.manual_seed(0)
    x1, x2, x3 = L.randn(1, 2, 6), L.randn(1, 2, 6, 6), L.randn(1, 2, 4, 4, 4)
    out = []
    with L.autocast("cpu", dtype=L.bfloat16):
        for x in (x1, x2, x3):
            xb = x.bfloat16()
            for mode in ("reflect", "replicate", "circular", "constant"):
                out.append(F.pad(xb, (1, 1) * (x.dim() - 2), mode=mode).dtype)
            d = x.dim() - 2
            for name in ("max_pool", "adaptive_avg_pool", "adaptive_max_pool"):
                out.append(getattr(F, "%s%dd" % (name, d))(xb, 2).dtype)
        out.append(F.fractional_max_pool2d(x2.bfloat16(), 2, output_size=2).dtype)
        for m in (L.nn.LSTM(6, 3), L.nn.RNN(6, 3), L.nn.GRU(6, 3)):
            o, h = m(x1)
            out += [o.dtype] + [t.dtype for t in (h if isinstance(h, tuple) else (h,))]
    return [str(d).replace("ember.", "torch.") for d in out]


def test_autocast_policy_of_per_call_node_names():
    assert _autocast_dtypes(ember) == _autocast_dtypes(torch)


@pytest.mark.parametrize("dev", ["tpu", "lazy", 3])
def test_autocast_device_type_errors(dev):
    assert _err(lambda: ember.autocast(dev)) == _err(lambda: torch.autocast(dev))


def test_autocast_unsupported_dtype_warning():
    msgs = {}
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with lib.autocast("cpu", dtype=lib.float32):
                dt = lib.mm(lib.ones(2, 2), lib.ones(2, 2)).dtype
        msgs[lib.__name__] = (str(dt).split(".")[-1], [str(x.message) for x in w])
    assert msgs["ember"] == msgs["torch"]


def _custom_fwd_trace(L, enabled):
    seen = []

    class MyMM(L.autograd.Function):
        @staticmethod
        @L.amp.custom_fwd(device_type="cpu", cast_inputs=L.float32)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            seen.append(("fwd", str(a.dtype)[-8:], str(b.dtype)[-8:],
                         L.is_autocast_enabled("cpu")))
            return a.mm(b)

        @staticmethod
        @L.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            seen.append(("bwd", str(grad.dtype)[-8:], L.is_autocast_enabled("cpu")))
            return grad.mm(b.t()), a.t().mm(grad)

    a = L.ones(2, 3, requires_grad=True)
    b = L.ones(3, 2, requires_grad=True)
    with L.autocast("cpu", dtype=L.bfloat16, enabled=enabled):
        out = MyMM.apply(a.bfloat16() if enabled else a, b)
        seen.append(("out", str(out.dtype)[-8:]))
        out.sum().backward()
    return seen


@pytest.mark.parametrize("enabled", [True, False])
def test_custom_fwd_cast_inputs(enabled):
    assert _custom_fwd_trace(ember, enabled) == _custom_fwd_trace(torch, enabled)
