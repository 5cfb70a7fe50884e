"""Session 13 (H11): torch's checkpoint format both ways, checked against real torch."""
import io
import os

import pytest

import ember


def _describe(x, lib, ptrs):
    """A comparable summary of a loaded object: per tensor its dtype, shape, strides, offset,
    grad flag, storage (numbered by first appearance) and storage size, and values."""
    if isinstance(x, lib.Tensor):
        y = x.detach()
        if y.dtype == lib.bfloat16:
            y = y.float()
        ptr = x.untyped_storage().data_ptr()
        ptrs.setdefault(ptr, len(ptrs))
        return (type(x).__name__, str(x.dtype).split(".")[-1], tuple(x.shape), x.stride(),
                x.storage_offset(), x.requires_grad, ptrs[ptr], x.untyped_storage().size(),
                repr(y.tolist()))
    if isinstance(x, dict):
        return type(x).__name__, [(k, _describe(v, lib, ptrs)) for k, v in x.items()]
    if isinstance(x, (list, tuple)):
        return type(x).__name__, [_describe(v, lib, ptrs) for v in x]
    return type(x).__name__, repr(x).replace("ember", "torch")


def _both_ways(torch, make, **save_kw):
    """``make(lib)`` saved by torch and loaded by ember, and saved by ember and loaded by torch,
    each described the same as torch's own round trip."""
    buf = io.BytesIO()
    torch.save(make(torch), buf, **save_kw)
    want = _describe(torch.load(io.BytesIO(buf.getvalue())), torch, {})
    assert _describe(ember.load(io.BytesIO(buf.getvalue())), ember, {}) == want
    buf = io.BytesIO()
    ember.save(make(ember), buf, **save_kw)
    assert _describe(torch.load(io.BytesIO(buf.getvalue())), torch, {}) == want


def _views(lib):
    b = lib.arange(24.0).reshape(4, 6)
    return {"b": b, "t": b.t(), "s": b[1:, 2::2], "r": b.view(-1)[5:11],
            "other": lib.arange(999)[:5], "c": lib.arange(6.0).to(lib.complex64)[1:].real}


@pytest.mark.parametrize("legacy", [False, True])
def test_loaded_views_share_torchs_storage(torch, legacy):
    _both_ways(torch, _views, _use_new_zipfile_serialization=not legacy)


def test_untyped_storage_and_is_set_to_of_loaded_views(torch):
    out = []
    for lib in (torch, ember):
        n = lib.arange(1, 10)
        buf = io.BytesIO()
        lib.save([n, n[1::2], lib.arange(999)[:5]], buf)
        a, b, c = lib.load(io.BytesIO(buf.getvalue()))
        out.append((a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr(),
                    c.untyped_storage().size(), c.untyped_storage().nbytes(),
                    b.untyped_storage().size(), b.is_set_to(b), a.is_set_to(b),
                    b[1:].untyped_storage().size(), b[1:].storage_offset()))
    assert out[0] == out[1]


@pytest.mark.parametrize("legacy", [False, True])
def test_bfloat16_in_both_formats(torch, legacy):
    _both_ways(torch, lambda lib: [lib.tensor([1.5, -2.0, 3.25], dtype=lib.bfloat16),
                                   lib.ones(2, 3, dtype=lib.bfloat16).t()],
               _use_new_zipfile_serialization=not legacy)


def test_saving_one_storage_as_two_dtypes_raises(torch):
    for lib in (torch, ember):
        c = lib.ones(3, dtype=lib.complex64)
        for objs in ([c, lib.view_as_real(c)], [c.real, c]):
            with pytest.raises(RuntimeError, match="view the same data as different types"):
                lib.save(objs, io.BytesIO())
        lib.save([c.real, c.imag], io.BytesIO())       # one dtype: fine
        lib.save([lib.view_as_real(c)], io.BytesIO())


def test_unknown_map_location_is_torchs_runtime_error(torch):
    buf = io.BytesIO()
    torch.save({"a": torch.ones(2)}, buf)
    errors = []
    for lib in (torch, ember):
        with pytest.raises(RuntimeError) as info:
            lib.load(io.BytesIO(buf.getvalue()), map_location="xyz")
        errors.append((type(info.value).__name__, str(info.value)))
    assert errors[0] == errors[1]


def test_save_path_errors_as_torch(torch, tmp_path):
    for path in (str(tmp_path), str(tmp_path / "nodir" / "x.pt")):
        errors = []
        for lib in (torch, ember):
            with pytest.raises(RuntimeError) as info:
                lib.save({"a": lib.ones(1)}, path)
            errors.append(str(info.value))
        assert errors[0] == errors[1]
    path = str(tmp_path / "nodir2" / "x.pt")
    for lib in (torch, ember):        # the legacy writer opens with Python: FileNotFoundError
        with pytest.raises(FileNotFoundError):
            lib.save({}, path, _use_new_zipfile_serialization=False)


@pytest.mark.parametrize("form", ["str", "device", "dict", "callable", "callable_none"])
def test_map_location_forms(torch, form):
    buf = io.BytesIO()
    torch.save(_views(torch), buf)
    forms = {"str": lambda lib: "cpu", "device": lambda lib: lib.device("cpu"),
             "dict": lambda lib: {"cpu": "cpu"}, "callable": lambda lib: lambda s, loc: s,
             "callable_none": lambda lib: lambda s, loc: None}
    got = [_describe(lib.load(io.BytesIO(buf.getvalue()), map_location=forms[form](lib)), lib, {})
           for lib in (torch, ember)]
    assert got[0] == got[1]


def test_mmap_both_ways(torch, tmp_path):
    for writer in (torch, ember):
        path = os.path.join(tmp_path, writer.__name__ + ".pt")
        a = writer.arange(10.0)
        writer.save({"a": a, "v": a[2:5], "w": writer.ones(3, dtype=writer.bfloat16)}, path)
        got = [_describe(lib.load(path, mmap=True), lib, {}) for lib in (torch, ember)]
        assert got[0] == got[1]


def test_optimizer_and_nested_checkpoint_both_ways(torch):
    def make(lib):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2))
        opt = lib.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        m(lib.ones(4, 3)).sum().backward()
        opt.step()
        return {"model": m.state_dict(), "opt": opt.state_dict(), "epoch": 3,
                "extra": (lib.float16, lib.Size([2, 3]), [lib.zeros(0, 3), lib.ones(())])}
    _both_ways(torch, make)
