"""Fixes from session 13, theme nn (helper H5): checked against torch."""
import ember


def _load_partial(lib):
    """A strict load that fails still loads every key that fits, as torch does."""
    lib.manual_seed(0)
    nn = lib.nn
    src = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 4))
    dst = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 5))
    sd = src.state_dict()
    try:
        dst.load_state_dict(sd)
    except RuntimeError as e:
        msg = str(e)
    return (msg, lib.equal(dst[0].weight, src[0].weight), lib.equal(dst[0].bias, src[0].bias),
            dst[1].weight.shape[0])


def test_failed_strict_load_keeps_fitting_keys(torch):
    assert _load_partial(ember) == _load_partial(torch)


def _to_outcomes(lib):
    """What Module.to does with each argument combination: the error class and message."""
    m = lib.nn.Linear(2, 2)
    t = lib.ones(1)
    cases = [((1, 2, 3, 4), {}), ((lib.float32, lib.float32), {}), (("cpu", "cpu"), {}),
             ((), {"foo": 1}), ((lib.float32,), {"copy": None}), ((t, "cpu"), {}),
             ((None,), {}), (("cpu", None, True), {}), (("cpu",), {"non_blocking": 1}),
             ((lib.float32,), {"foo": 1, "bar": 2}), ((lib.float32, False, True), {}),
             (("cpu", lib.float64, False, False), {}), (("cpu",), {"copy": False}),
             ((t,), {"copy": True}), ((t, False), {}), ((), {"dtype": lib.float64}),
             ((lib.int32,), {}), (("cpu", lib.float16), {"memory_format": lib.channels_last})]
    out = []
    for args, kwargs in cases:
        try:
            m.to(*args, **kwargs)
            out.append("ok")
        except Exception as e:  # noqa: BLE001 (the class is what is compared)
            out.append((type(e).__name__, str(e)))
    return out


def test_module_to_argument_errors(torch):
    assert _to_outcomes(ember) == _to_outcomes(torch)


def _constant_outcomes(lib):
    """nn.init.constant_ is fill_ without grad: its overflow and shape errors, its version."""
    cases = [(lib.empty(2), lib.tensor(3.0)), (lib.empty(2, dtype=lib.int8), 1000),
             (lib.empty(2, dtype=lib.int64), 2.7), (lib.empty(2), lib.ones(2)),
             (lib.empty(2), 1 + 2j), (lib.nn.Parameter(lib.empty(2)), 0.5)]
    out = []
    for t, val in cases:
        try:
            r = lib.nn.init.constant_(t, val)
            out.append((r.tolist(), r._version, r.requires_grad))
        except Exception as e:  # noqa: BLE001 (the class is what is compared)
            out.append((type(e).__name__, str(e)))
    return out


def test_init_constant_is_checked_fill(torch):
    assert _constant_outcomes(ember) == _constant_outcomes(torch)
