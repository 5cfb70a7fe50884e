"""A fuzzer for ``ember.load``: 2,000 mutated and hostile checkpoints, deterministic (seed 0).

Starting from valid files (ember's and torch's zip format, torch's legacy format, safetensors),
it truncates, flips bits, inflates zip size fields and storage sizes, mutates the pickle inside
a re-packed (CRC-valid) archive, and plants hostile pickles that would run ``os.system``, write
a file or call other globals through GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ and NEWOBJ.
Every load must return or raise ``CheckpointError`` / ``pickle.UnpicklingError``, quickly, with
a bounded allocation, and the marker file a hostile pickle would create must never exist.
"""
import io
import os
import pickle
import random
import signal
import struct
import time
import tracemalloc
import warnings
import zipfile

import numpy as np
import pytest

import ember
from ember.serialization import CheckpointError

N_CASES = 2000
EXPECTED = (CheckpointError, pickle.UnpicklingError)


def _zip_of(records, prefix="archive"):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in records:
            zf.writestr(zipfile.ZipInfo(prefix + "/" + name, (1980, 1, 1, 0, 0, 0)), data)
    return buf.getvalue()


def _records(data):
    zf = zipfile.ZipFile(io.BytesIO(data))
    return [(i.filename.split("/", 1)[1], zf.read(i)) for i in zf.infolist()]


def _seeds(tmp):
    base = ember.arange(12.0).reshape(3, 4)
    obj = {"w": base, "view": base[1:, ::2], "p": ember.nn.Parameter(ember.ones(2)),
           "ints": ember.tensor([1, 2, 3]), "meta": {"step": 3, "lr": 0.1, "name": "x"},
           "dtype": ember.float16, "sd": ember.nn.Linear(2, 2).state_dict()}
    out = {}
    buf = io.BytesIO()
    ember.save(obj, buf)
    out["ember_zip"] = buf.getvalue()
    buf = io.BytesIO()
    ember.save(obj, buf, _use_new_zipfile_serialization=False)
    out["legacy"] = buf.getvalue()
    path = os.path.join(tmp, "s.safetensors")
    ember.save({"a": base, "b": ember.tensor([1, 2])}, path)
    with open(path, "rb") as f:
        out["safetensors"] = f.read()
    try:
        import torch
    except ImportError:
        return out
    buf = io.BytesIO()
    torch.save({"sd": torch.nn.Linear(3, 2).state_dict(), "t": torch.arange(5)[1:]}, buf)
    out["torch_zip"] = buf.getvalue()
    return out


def _hostile_pickles(marker):
    """Pickles that would run code or touch ``marker`` if loaded by a plain unpickler."""
    cmd = ("touch " + marker).encode()
    m = marker.encode()

    def uni(s):
        return b"X" + struct.pack("<I", len(s)) + s

    def short(s):
        return b"\x8c" + bytes([len(s)]) + s

    return [
        b"cos\nsystem\n(S'" + cmd + b"'\ntR.",                        # GLOBAL + REDUCE
        b"\x80\x02cposix\nsystem\n" + uni(cmd) + b"\x85R.",
        b"\x80\x04" + short(b"os") + short(b"system") + b"\x93" + short(cmd) + b"\x85R.",
        b"\x80\x02c__builtin__\nopen\n" + uni(m) + uni(b"w") + b"\x86R.",
        b"\x80\x02cbuiltins\nexec\n" + uni(b"open('" + m + b"','w')") + b"\x85R.",
        b"\x80\x02cbuiltins\neval\n" + uni(b"open('" + m + b"','w')") + b"\x85R.",
        b"\x80\x02csubprocess\ncall\n" + uni(b"sh") + uni(b"-c") + uni(cmd) + b"\x87\x85R.",
        b"(S'" + cmd + b"'\nios\nsystem\n.",                           # INST
        b"(cos\nsystem\nS'" + cmd + b"'\no.",                          # OBJ
        b"\x80\x02cos\nsystem\n" + uni(cmd) + b"\x85\x81.",             # NEWOBJ
        b"\x80\x02ccollections\nOrderedDict\n)\x81}" + uni(b"__class__")
        + b"cos\nsystem\nsb.",                                          # BUILD a hostile state
        b"\x80\x02ccollections\nOrderedDict\n)R}" + uni(b"x") + b"K\x01sb.",
        b"\x80\x02ctorch\ndevice\n" + uni(b"cpu") + b"\x85\x81}" + uni(b"y") + b"K\x01sb.",
        b"\x80\x02c_codecs\nencode\n" + uni(b"x" * 64) + uni(b"zlib_codec") + b"\x86R.",
        b"\x80\x02c__builtin__\nbytearray\nJ\x00\x00\x00\x7f\x85R.",    # 2 GB bytearray
        b"\x80\x02c__builtin__\ngetattr\nccollections\nOrderedDict\n" + uni(b"__init__")
        + b"\x86R.",
        b"\x80\x02ctorch.serialization\nadd_safe_globals\n]cos\nsystem\na\x85R.",
        b"\x80\x02cember.serialization\nadd_safe_globals\n]cos\nsystem\na\x85R.",
        b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(" + uni(b"storage")
        + b"ctorch\nFloatStorage\n" + uni(b"0") + uni(b"cpu") + b"\x8a\x05\x00\x00\x00\x00\x01"
        + b"tQK\x00\x8a\x05\x00\x00\x00\x00\x01\x85K\x01\x85\x89ccollections\nOrderedDict\n)Rt"
        + b"R.",                                                        # 2**32-element storage
        b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(" + uni(b"module") + b"cos\nsystem\n"
        + b"\x86QK\x00)))\x89NtR.",                                     # non-storage pid
        b"\x80\x02" + b"(" * 20000 + b".",                             # deep MARKs
        b"\x80\x02" + b"]" * 20000 + b"a" * 19999 + b".",              # deep lists
        b"\x80\x02X\xff\xff\xff\xff" + b"a" * 10 + b".",              # huge string length
        b"\x80\x02j\xff\xff\xff\x7f.",                                 # missing memo
        b"\x80\x02ctorch\nTensor\n)R.",                                 # torch.Tensor() call
        b"\x80\x02ctorch._utils\n_rebuild_sparse_tensor\n)R.",
    ]


def _legacy_wrap(pkl):
    head = b"".join(pickle.dumps(v, protocol=2) for v in (
        0x1950A86A20F9469CFC6C, 1001, {"protocol_version": 1001, "little_endian": True,
                                       "type_sizes": {"short": 2, "int": 4, "long": 4}}))
    return head + pkl + pickle.dumps([], protocol=2)


def _patch_sizes(data, rng):
    """Overwrite the size fields of some zip headers with large values."""
    buf = bytearray(data)
    spots = []
    for sig, offs in ((b"PK\x03\x04", (18, 22)), (b"PK\x01\x02", (20, 24, 42))):
        i = buf.find(sig)
        while i >= 0:
            spots.extend(i + o for o in offs if i + o + 4 <= len(buf))
            i = buf.find(sig, i + 1)
    for spot in rng.sample(spots, min(len(spots), rng.randint(1, 3))):
        value = rng.choice([0xFFFFFFFF, 0x7FFFFFFF, 2 ** 30, rng.randrange(2 ** 32)])
        buf[spot:spot + 4] = struct.pack("<I", value)
    return bytes(buf)


def _mutate_pickle(pkl, rng, hostile):
    kind = rng.randrange(4)
    buf = bytearray(pkl)
    if kind == 0:
        for _ in range(rng.randint(1, 6)):
            i = rng.randrange(len(buf))
            buf[i] ^= 1 << rng.randrange(8)
    elif kind == 1:
        buf = buf[:rng.randrange(len(buf))]
    elif kind == 2:
        body = rng.choice(hostile)
        body = body[2:] if body.startswith(b"\x80") else body
        i = rng.randrange(len(buf))
        buf[i:i] = body[:-1]
    else:
        i = rng.randrange(len(buf))
        buf[i:i + rng.randint(1, 8)] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    return bytes(buf)


def _cases(seeds, hostile, rng):
    cases = []
    for h in hostile:
        cases += [("hostile", h), ("hostile-zip", _zip_of([("data.pkl", h), ("byteorder",
                                                                             b"little")])),
                  ("hostile-legacy", _legacy_wrap(h))]
    zips = [s for k, s in seeds.items() if k.endswith("zip")]
    names = sorted(seeds)
    while len(cases) < N_CASES:
        kind = rng.randrange(6)
        seed = seeds[rng.choice(names)]
        if kind == 0:
            cases.append(("truncate", seed[:rng.randrange(len(seed))]))
        elif kind == 1:
            buf = bytearray(seed)
            for _ in range(rng.randint(1, 8)):
                i = rng.randrange(len(buf))
                buf[i] ^= 1 << rng.randrange(8)
            cases.append(("flip", bytes(buf)))
        elif kind == 2:
            cases.append(("sizes", _patch_sizes(rng.choice(zips), rng)))
        elif kind in (3, 4):
            records = _records(rng.choice(zips))
            records = [(n, _mutate_pickle(d, rng, hostile) if n == "data.pkl" else d)
                       for n, d in records]
            cases.append(("pickle", _zip_of(records)))
        else:
            records = _records(rng.choice(zips))
            victim = rng.randrange(len(records))
            name, data = records[victim]
            if rng.random() < 0.5:
                del records[victim]
            else:
                records[victim] = (name, data[:rng.randrange(len(data) + 1)] + b"\0" * rng.choice(
                    [0, 1, 4096]))
            cases.append(("records", _zip_of(records)))
    return cases[:N_CASES]


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def test_load_fuzz(tmp_path):
    marker = str(tmp_path / "pwned")
    rng = random.Random(0)
    seeds = _seeds(str(tmp_path))
    for data in seeds.values():                  # the seeds themselves load
        ember.load(io.BytesIO(data))
    hostile = _hostile_pickles(marker)
    cases = _cases(seeds, hostile, rng)
    assert len(cases) == N_CASES
    old = signal.signal(signal.SIGALRM, _alarm) if hasattr(signal, "SIGALRM") else None
    slowest = 0.0
    try:
        for i, (kind, data) in enumerate(cases):
            tracemalloc.start()
            start = time.perf_counter()
            if old is not None:
                signal.alarm(20)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ember.load(io.BytesIO(data))
            except EXPECTED:
                pass
            except _Timeout:
                pytest.fail("case %d (%s) hung" % (i, kind))
            except Exception as e:   # noqa: BLE001 (the point: nothing else may escape)
                pytest.fail("case %d (%s) raised %s: %s" % (i, kind, type(e).__name__, e))
            finally:
                if old is not None:
                    signal.alarm(0)
                _, peak = tracemalloc.get_traced_memory()
                tracemalloc.stop()
            elapsed = time.perf_counter() - start
            slowest = max(slowest, elapsed)
            assert elapsed < 5.0, (i, kind, elapsed)
            assert peak <= 8 * len(data) + 4 * 2 ** 20, (i, kind, peak, len(data))
            assert not os.path.exists(marker), (i, kind)
    finally:
        if old is not None:
            signal.signal(signal.SIGALRM, old)
    assert not os.path.exists(marker)


def test_hostile_pickles_raise_unpickling_error(tmp_path):
    marker = str(tmp_path / "pwned")
    for h in _hostile_pickles(marker):
        calls_out = any(name in h for name in (
            b"os\nsystem", b"posix", b"\x8c\x02os", b"open\n", b"exec\n", b"eval\n",
            b"getattr\n", b"subprocess", b"add_safe_globals"))
        for data in (_zip_of([("data.pkl", h)]), _legacy_wrap(h)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    ember.load(io.BytesIO(data))
                except EXPECTED as e:
                    if calls_out:
                        assert isinstance(e, pickle.UnpicklingError)
                        assert "Weights only load failed" in str(e)
                else:
                    assert not calls_out, h[:40]
    assert not os.path.exists(marker)


def test_forged_storage_size_is_refused_before_allocation():
    records = [("data.pkl", _hostile_pickles("/nonexistent")[18]), ("data/0", b"\0" * 16)]
    tracemalloc.start()
    try:
        with pytest.raises(CheckpointError, match="holds 16 bytes but its storage needs"):
            ember.load(io.BytesIO(_zip_of(records)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 ** 20
    np.testing.assert_equal(peak < 2 ** 20, True)
