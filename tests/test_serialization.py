"""ember.save/ember.load: round trips in torch's zip format and in safetensors, forged
safetensors files, and a safetensors fuzzer (torch interop: test_serialization_torch.py; the
zip loader's fuzzer: fuzz/test_load_fuzz.py)."""
import io
import json
import os
import pickle
import tempfile
import struct
import time
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

import ember
from ember.serialization import CheckpointError


def _bytes(obj):
    buf = io.BytesIO()
    ember.save(obj, buf)
    return buf.getvalue()


def _st_bytes(obj, tmp):
    """``obj`` saved as a safetensors file (chosen by the suffix), as bytes."""
    path = os.path.join(tmp, "x.safetensors")
    ember.save(obj, path)
    with open(path, "rb") as f:
        return f.read()


def _load_bytes(data, **kwargs):
    return ember.load(io.BytesIO(data), **kwargs)


def _assert_same(a, b):
    if isinstance(a, ember.Tensor):
        assert isinstance(b, ember.Tensor) and a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        assert a.requires_grad == b.requires_grad
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b)
        for k in a:
            _assert_same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y)
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b)
    else:
        assert type(a) is type(b) and a == b


def test_round_trip_nested(tmp_path):
    obj = {
        "w": ember.randn(3, 4),
        "ints": ember.arange(6).reshape(2, 3),
        "flags": ember.tensor([True, False]),
        "half": ember.ones(2, dtype=ember.float16),
        "double": ember.tensor(2.5, dtype=ember.float64),
        "empty": ember.zeros(0, 3),
        "bytes": ember.tensor([1, 2, 255], dtype=ember.uint8),
        "nested": {1: [ember.ones(1), (2, 3.5, None, "x")], "inf": float("inf"),
                   "nan": float("nan"), "b": True},
        "grad": ember.ones(2, requires_grad=True),
    }
    ember.save(obj, tmp_path / "a.safetensors")
    _assert_same(obj, ember.load(tmp_path / "a.safetensors"))
    _assert_same(obj, ember.load(str(tmp_path / "a.safetensors")))


def test_round_trip_nested_torch_format(tmp_path):
    obj = {"w": ember.randn(3, 4), "ints": ember.arange(6).reshape(2, 3),
           "nested": {1: [ember.ones(1), (2, 3.5, None, "x")], "inf": float("inf"),
                      "nan": float("nan"), "b": True},
           "grad": ember.ones(2, requires_grad=True), "dtype": ember.float16,
           "device": ember.device("cpu"), "bytes": b"\x00\xff", "set": {1, 2},
           "size": ember.Size([2, 3])}
    for path in (tmp_path / "a.pt", str(tmp_path / "b.pth")):
        ember.save(obj, path)
        out = ember.load(path)
        _assert_same({k: v for k, v in obj.items() if k not in ("dtype", "device", "size")},
                     {k: v for k, v in out.items() if k not in ("dtype", "device", "size")})
        assert out["dtype"] is ember.float16 and out["device"] == ember.device("cpu")
        assert type(out["size"]) is ember.Size and out["size"] == (2, 3)


def test_non_contiguous_and_shared_tensors():
    base = ember.arange(12.0).reshape(3, 4)
    t = base.t()
    out = _load_bytes(_bytes({"t": t, "again": t, "base": base, "row": base[1, ::2]}))
    np.testing.assert_array_equal(out["t"].numpy(), t.numpy())
    np.testing.assert_array_equal(out["row"].numpy(), [4.0, 6.0])
    assert out["t"] is out["again"]
    assert out["t"].stride() == (1, 4)
    out["t"].add_(1)        # views of one array share their storage, as torch's do
    np.testing.assert_array_equal(out["base"].numpy(), base.numpy() + 1)
    np.testing.assert_array_equal(out["row"].numpy(), [5.0, 7.0])


def test_safetensors_copies_each_tensor(tmp_path):
    base = ember.arange(12.0).reshape(3, 4)
    t = base.t()
    out = _load_bytes(_st_bytes({"t": t, "again": t, "base": base}, tmp_path))
    np.testing.assert_array_equal(out["t"].numpy(), t.numpy())
    assert out["t"] is out["again"]
    out["t"].add_(1)
    np.testing.assert_array_equal(out["base"].numpy(), base.numpy())


def test_legacy_format_round_trip():
    base = ember.arange(6.0).reshape(2, 3)
    buf = io.BytesIO()
    ember.save({"a": base, "b": base[1:], "n": 3}, buf, _use_new_zipfile_serialization=False)
    out = _load_bytes(buf.getvalue())
    np.testing.assert_array_equal(out["b"].numpy(), [[3.0, 4.0, 5.0]])
    out["a"].mul_(2)
    np.testing.assert_array_equal(out["b"].numpy(), [[6.0, 8.0, 10.0]])
    assert out["n"] == 3


def test_single_tensor_and_parameter():
    p = ember.nn.Parameter(ember.randn(2, 2))
    out = _load_bytes(_bytes(p))
    assert isinstance(out, ember.nn.Parameter) and out.requires_grad
    np.testing.assert_array_equal(out.detach().numpy(), p.detach().numpy())


def test_safetensors_refuses_arbitrary_objects(tmp_path):
    with pytest.raises(TypeError, match="cannot store an object of type object"):
        ember.save({"f": object()}, tmp_path / "a.safetensors")


def test_weights_only_refuses_arbitrary_objects():
    import argparse
    data = _bytes({"ns": argparse.Namespace(a=1)})
    with pytest.raises(pickle.UnpicklingError, match="(?s)Weights only load failed.*"
                       "GLOBAL argparse.Namespace was not an allowed global"):
        _load_bytes(data)
    assert _load_bytes(data, weights_only=False)["ns"].a == 1
    with ember.serialization.safe_globals([argparse.Namespace]):
        assert _load_bytes(data)["ns"].a == 1
    assert argparse.Namespace not in ember.serialization.get_safe_globals()


def test_state_dict_interop_with_torch(torch, tmp_path):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    torch.manual_seed(0)
    tmodel = torch.nn.Linear(4, 3)
    model = ember.nn.Linear(4, 3)
    path = tmp_path / "model.safetensors"
    model.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in
                           tmodel.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    # ember -> torch: the torch model built from ember's file equals the original torch model.
    ember.save(model.state_dict(), path)
    tmodel2 = torch.nn.Linear(4, 3)
    tmodel2.load_state_dict(safetensors_torch.load_file(str(path)))
    np.testing.assert_array_equal(tmodel2(torch.tensor(x)).detach().numpy(),
                                  tmodel(torch.tensor(x)).detach().numpy())
    # torch -> ember: and back, bit for bit.
    safetensors_torch.save_file(tmodel2.state_dict(), str(tmp_path / "t.safetensors"))
    model2 = ember.nn.Linear(4, 3)
    model2.load_state_dict(ember.load(tmp_path / "t.safetensors"))
    np.testing.assert_array_equal(model2(ember.tensor(x)).detach().numpy(),
                                  model(ember.tensor(x)).detach().numpy())
    np.testing.assert_allclose(model2(ember.tensor(x)).detach().numpy(),
                               tmodel(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("suffix", [".safetensors", ".pt"])
def test_optimizer_state_dict_round_trip(tmp_path, suffix):
    w = ember.nn.Parameter(ember.randn(3))
    opt = ember.optim.Adam([w], lr=0.01, amsgrad=True)
    for _ in range(3):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
    ember.save(opt.state_dict(), tmp_path / ("opt" + suffix))
    loaded = ember.load(tmp_path / ("opt" + suffix))
    _assert_same(opt.state_dict(), loaded)
    w2 = ember.nn.Parameter(w.detach().clone())
    opt2 = ember.optim.Adam([w2])
    opt2.load_state_dict(loaded)
    for o, p in ((opt, w), (opt2, w2)):
        o.zero_grad()
        (p * p).sum().backward()
        o.step()
    np.testing.assert_array_equal(w.detach().numpy(), w2.detach().numpy())


def test_optimizer_file_readable_by_safetensors(torch, tmp_path):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    w = ember.nn.Parameter(ember.randn(3))
    opt = ember.optim.SGD([w], lr=0.01, momentum=0.9)
    (w * w).sum().backward()
    opt.step()
    ember.save(opt.state_dict(), tmp_path / "opt.safetensors")
    tensors = safetensors_torch.load_file(str(tmp_path / "opt.safetensors"))
    np.testing.assert_array_equal(tensors["state.0.momentum_buffer"].numpy(),
                                  opt.state[w]["momentum_buffer"].numpy())


def _header_file(header, data=b""):
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data


def _valid_file():
    with tempfile.TemporaryDirectory() as tmp:
        return _st_bytes({"a": ember.arange(6.0).reshape(2, 3), "b": ember.tensor([1, 2, 3]),
                          "meta": {"step": 3, "groups": [{"lr": 0.1, "params": [0, 1]}]}},
                         tmp)


def _check_rejected_safely(data, json_factor=0):
    """``data`` loads cleanly or raises CheckpointError, fast, allocating at most its size.

    Parsing a JSON header builds Python objects a few times its size; ``json_factor`` allows
    that many bytes per header byte for the cases that are mostly header (see docs/security.md).
    """
    tracemalloc.start()
    start = time.perf_counter()
    try:
        _load_bytes(data)
    except CheckpointError as e:
        if not isinstance(e, (pickle.UnpicklingError, EOFError)):     # (torch's classes)
            assert str(e).startswith("ember.load: ")
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert time.perf_counter() - start < 1.0
    # The file read once, the safetensors library's copy of each tensor's bytes and the
    # tensors themselves: at most 3x the file; the constant covers the JSON parser's objects
    # for a header of a few hundred bytes.
    assert peak <= len(data) * (3 + json_factor) + 64 * 1024, (peak, len(data))


FORGED = {
    "huge header length": struct.pack("<Q", 2 ** 63) + b"{}",
    "short file": b"\x01\x00",
    "empty": b"",
    "truncated header": struct.pack("<Q", 100) + b'{"a":',
    "huge declared shape": _header_file(
        {"a": {"dtype": "F32", "shape": [2 ** 40, 2 ** 20], "data_offsets": [0, 2 ** 62]}}),
    "offsets past end": _header_file(
        {"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 8),
    "size mismatch": _header_file(
        {"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8),
    "overlapping ranges": _header_file(
        {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
         "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, b"\0" * 12),
    "gap": _header_file(
        {"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8),
    "unknown dtype": _header_file(
        {"a": {"dtype": "PICKLE", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4),
    "negative offset": _header_file(
        {"a": {"dtype": "U8", "shape": [1], "data_offsets": [-1, 0]}}, b"\0"),
    "float shape": _header_file(
        {"a": {"dtype": "U8", "shape": [1.5], "data_offsets": [0, 1]}}, b"\0"),
    "bool shape": _header_file(
        {"a": {"dtype": "U8", "shape": [True], "data_offsets": [0, 1]}}, b"\0"),
    "too many dims": _header_file(
        {"a": {"dtype": "U8", "shape": [1] * 100, "data_offsets": [0, 1]}}, b"\0"),
    "non-utf8 name": struct.pack("<Q", 16) + b'{"\xff\xfe":1}   ',
    "lone surrogate name": _header_file(
        {"\ud800": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}, b"\0"),
    "deep json": struct.pack("<Q", 200000) + b"[" * 100000 + b"]" * 100000,
    "deep structure": _header_file({"__metadata__": {"ember": "[" * 50000 + "]" * 50000}}),
    "deep ember nodes": _header_file(
        {"__metadata__": {"ember": '{"l":[' * 200 + "]}" * 200}}),
    "header not object": _header_file([1, 2, 3]),
    "metadata not strings": _header_file({"__metadata__": {"ember": 3}}),
    "missing tensor": _header_file({"__metadata__": {"ember": '{"T": "nope"}'}}),
    "unknown node": _header_file({"__metadata__": {"ember": '{"__reduce__": "os.system"}'}}),
    "NaN in header": struct.pack("<Q", 8) + b"NaN     ",
    "huge int": _header_file({"a": {"dtype": "U8", "shape": [1],
                                    "data_offsets": [0, 1]}}).replace(b"[1]", b"[" + b"9" * 5000
                                                                        + b"]"),
    "many empty entries": _header_file({str(i): {} for i in range(20000)}),
    "many metadata strings": _header_file({"__metadata__": {str(i): "" for i in range(20000)}}),
    "extra keys": _header_file(
        {"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1], "x": 0}}, b"\0"),
}


@pytest.mark.parametrize("name", list(FORGED))
def test_forged_files_raise_clear_errors(name):
    data = FORGED[name]
    if name not in LOADABLE:
        with pytest.raises(CheckpointError):
            _load_bytes(data)
    _check_rejected_safely(data, json_factor=24 if name in HEAVY_JSON else 0)


# a valid file with no tensors; the safetensors library ignores unknown keys of an entry
LOADABLE = {"many metadata strings", "extra keys"}
HEAVY_JSON = {"deep json", "deep structure", "many empty entries", "many metadata strings"}


def test_error_is_a_value_error():
    assert issubclass(CheckpointError, ValueError)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzz_mutated_files(data):
    valid = _valid_file()
    mode = data.draw(st.sampled_from(["flip", "truncate", "extend", "splice"]))
    buf = bytearray(valid)
    if mode == "flip":
        for _ in range(data.draw(st.integers(1, 8))):
            i = data.draw(st.integers(0, len(buf) - 1))
            buf[i] ^= 1 << data.draw(st.integers(0, 7))
    elif mode == "truncate":
        buf = buf[:data.draw(st.integers(0, len(buf) - 1))]
    elif mode == "extend":
        buf += data.draw(st.binary(min_size=1, max_size=64))
    else:
        i = data.draw(st.integers(0, len(buf)))
        buf[i:i + data.draw(st.integers(0, 16))] = data.draw(st.binary(max_size=16))
    _check_rejected_safely(bytes(buf))


def test_plain_pickle_is_refused(tmp_path):
    path = tmp_path / "evil.pt"
    with open(path, "wb") as f:
        pickle.dump({"a": 1}, f)
    with pytest.raises(CheckpointError, match="Invalid magic number"):
        ember.load(path, weights_only=False)
    with pytest.raises(RuntimeError):       # torch's class for it
        ember.load(path, weights_only=False)
    with pytest.raises(CheckpointError, match="Unsupported operand"):   # torch's weights_only
        ember.load(path)


def test_not_a_checkpoint_names_the_cause():
    with pytest.raises(CheckpointError, match="not a PyTorch checkpoint .* not a valid "
                       "safetensors file"):
        _load_bytes(struct.pack("<Q", 20) + b"{this is not json}  ")
    with pytest.raises(pickle.UnpicklingError, match="^Weights only load failed"):
        _load_bytes(b"hello world, this is text")
    data = _bytes({"a": ember.ones(3)})
    with pytest.raises(CheckpointError, match="zip archive .* truncated"):
        _load_bytes(data[:len(data) // 2])


def test_missing_record_is_named():
    import zipfile
    data = _bytes({"a": ember.ones(3)})
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if not info.filename.endswith("data/0"):
                dst.writestr(info, src.read(info))
    with pytest.raises(CheckpointError, match="no record 'archive/data/0'"):
        _load_bytes(out.getvalue())


def test_mmap(tmp_path):
    ember.save({"a": ember.arange(5.0)}, tmp_path / "m.pt")
    out = ember.load(tmp_path / "m.pt", mmap=True)
    np.testing.assert_array_equal(out["a"].numpy(), np.arange(5.0))
    with pytest.raises(ValueError, match="f must be a file path"):
        ember.load(io.BytesIO(_bytes(1)), mmap=True)


def test_map_location():
    data = _bytes({"a": ember.ones(2)})
    cases = [("cpu", "cpu"), (ember.device("cpu"), "cpu"), ("strict", "strict"),
             ({"cpu": "strict"}, "strict"), ({"cuda:0": "cpu"}, "cpu"),
             (lambda s, loc: s.to("strict"), "strict"), (lambda s, loc: None, "cpu"),
             (lambda s, loc: s, "cpu")]
    for ml, expected in cases:
        out = _load_bytes(data, map_location=ml)
        assert str(out["a"].device) == expected
        np.testing.assert_array_equal(out["a"].cpu().numpy(), [1.0, 1.0])
