"""ember.save/ember.load against real torch.save/torch.load, both ways, in torch's zip format."""
import argparse
import collections
import io
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


def _ember_to_torch(obj):
    buf = io.BytesIO()
    ember.save(obj, buf)
    buf.seek(0)
    return torch.load(buf)


def _torch_to_ember(obj, **kwargs):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return ember.load(buf, **kwargs)


def _sample(dtype, shape=(3, 4), seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("float"):
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(0, 100, shape).astype(dtype)


def _same(e, t):
    """ember tensor ``e`` and torch tensor ``t`` agree in values, dtype, shape, strides, grad."""
    assert str(e.dtype) == str(t.dtype)
    assert tuple(e.shape) == tuple(t.shape)
    if t.numel():       # (ember.zeros(0, 3).stride() is (0, 0), torch's (3, 1): not ours)
        assert e.stride() == t.stride()
    assert e.requires_grad == t.requires_grad
    np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtypes_both_ways(dtype):
    arr = _sample(dtype)
    e = ember.tensor(arr)
    _same(e, _ember_to_torch(e))
    t = torch.from_numpy(arr.copy())
    _same(_torch_to_ember(t), t)


def test_bfloat16_from_torch_widens_to_float32():
    if ember.bfloat16 is ember.float32:
        t = torch.tensor([1.5, -2.25, 3e38], dtype=torch.bfloat16)
        out = _torch_to_ember(t)
        assert out.dtype == ember.float32
        np.testing.assert_array_equal(out.numpy(), t.float().numpy())
    else:       # pragma: no cover (a real bfloat16 in ember)
        pytest.skip("ember has a real bfloat16")


def test_zero_dim_and_empty():
    for e in (ember.tensor(2.5), ember.tensor(7, dtype=ember.int16), ember.zeros(0, 3)):
        _same(e, _ember_to_torch(e))
    for t in (torch.tensor(2.5), torch.tensor(True), torch.zeros(0, 3)):
        _same(_torch_to_ember(t), t)


def test_non_contiguous_both_ways():
    base = ember.tensor(_sample("float32", (4, 6)))
    for e in (base.t(), base[:, ::2], base[1::2, 1:5:3]):
        t = _ember_to_torch(e)
        _same(e, t)
    tbase = torch.from_numpy(_sample("float64", (4, 6)))
    for t in (tbase.t(), tbase[:, ::2], tbase[1::2, 1:5:3]):
        _same(_torch_to_ember(t), t)


def test_shared_storage_ember_to_torch():
    t = ember.arange(12.0)
    obj = {"t": t, "tail": t[1:], "view": t.view(3, 4), "tt": t.view(3, 4).t()}
    out = _ember_to_torch(obj)
    ptr = out["t"].untyped_storage().data_ptr()
    for k in ("tail", "view", "tt"):
        assert out[k].untyped_storage().data_ptr() == ptr
        _same(obj[k], out[k])
    assert out["tail"].storage_offset() == 1
    out["t"].add_(100)
    assert out["tail"][0].item() == 101.0 and out["tt"][0, 1].item() == 104.0


def test_shared_storage_torch_to_ember():
    t = torch.arange(12.0)
    obj = {"t": t, "tail": t[1:], "tt": t.view(3, 4).t()}
    out = _torch_to_ember(obj)
    for k in ("tail", "tt"):
        _same(out[k], obj[k])
        assert np.shares_memory(out[k].numpy(), out["t"].numpy())
    out["t"].add_(100)
    assert out["tail"][0].item() == 101.0 and out["tt"][0, 1].item() == 104.0


def test_parameters_and_requires_grad():
    p = ember.nn.Parameter(ember.tensor(_sample("float32")))
    q = ember.nn.Parameter(ember.ones(2), requires_grad=False)
    g = ember.ones(3, requires_grad=True)
    out = _ember_to_torch({"p": p, "q": q, "g": g})
    assert type(out["p"]) is torch.nn.Parameter and type(out["q"]) is torch.nn.Parameter
    _same(p, out["p"])
    _same(q, out["q"])
    _same(g, out["g"])
    back = _torch_to_ember({"p": torch.nn.Parameter(torch.ones(2)),
                            "g": torch.zeros(2, requires_grad=True)})
    assert type(back["p"]) is ember.nn.Parameter and back["p"].requires_grad
    assert back["g"].requires_grad and back["g"].is_leaf


def test_linear_state_dict_both_ways():
    x = _sample("float32", (5, 4))
    model = ember.nn.Linear(4, 3)
    tmodel = torch.nn.Linear(4, 3)
    tmodel.load_state_dict(_ember_to_torch(model.state_dict()))
    np.testing.assert_allclose(tmodel(torch.from_numpy(x)).detach().numpy(),
                               model(ember.tensor(x)).detach().numpy(), rtol=1e-6, atol=1e-6)
    tmodel2 = torch.nn.Linear(4, 3)
    sd = _torch_to_ember(tmodel2.state_dict())
    assert isinstance(sd, collections.OrderedDict) and sd._metadata == {"": {"version": 1}}
    model2 = ember.nn.Linear(4, 3)
    model2.load_state_dict(sd)
    np.testing.assert_allclose(model2(ember.tensor(x)).detach().numpy(),
                               tmodel2(torch.from_numpy(x)).detach().numpy(), rtol=1e-6,
                               atol=1e-6)


def test_adam_state_dict_both_ways():
    w0 = _sample("float32", (3,))
    w = ember.nn.Parameter(ember.tensor(w0))
    opt = ember.optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    tw = torch.nn.Parameter(torch.from_numpy(w.detach().numpy().copy()))
    topt = torch.optim.Adam([tw], lr=0.1)
    topt.load_state_dict(_ember_to_torch(opt.state_dict()))
    tw0 = torch.nn.Parameter(torch.from_numpy(w0.copy()))
    ref = torch.optim.Adam([tw0], lr=0.1)
    (tw0 * tw0).sum().backward()
    ref.step()
    for key in ("exp_avg", "exp_avg_sq"):
        np.testing.assert_allclose(topt.state[tw][key].numpy(), ref.state[tw0][key].numpy(),
                                   rtol=1e-6)
    assert float(topt.state[tw]["step"]) == 1.0
    # torch -> ember: the loaded state continues the trajectory as torch's does.
    w2 = ember.nn.Parameter(ember.tensor(tw0.detach().numpy().copy()))
    opt2 = ember.optim.Adam([w2], lr=0.1)
    opt2.load_state_dict(_torch_to_ember(ref.state_dict()))
    for o, p in ((opt2, w2),):
        o.zero_grad()
        (p * p).sum().backward()
        o.step()
    ref.zero_grad()
    (tw0 * tw0).sum().backward()
    ref.step()
    np.testing.assert_allclose(w2.detach().numpy(), tw0.detach().numpy(), rtol=1e-6)


def test_nested_containers_both_ways():
    e = {"list": [1, 2.5, "s", None, True], "tuple": (ember.ones(2), -3),
         "od": collections.OrderedDict(a=ember.zeros(1, dtype=ember.int64)),
         "dtypes": [ember.float32, ember.int64, ember.bool],
         "devices": [ember.device("cpu"), ember.device("cuda", 1)],
         "nested": {"deep": [{"x": ember.tensor([1, 2])}]}, 7: "int key"}
    t = _ember_to_torch(e)
    assert t["list"] == [1, 2.5, "s", None, True]
    assert t["dtypes"] == [torch.float32, torch.int64, torch.bool]
    assert t["devices"] == [torch.device("cpu"), torch.device("cuda", 1)]
    assert type(t["od"]) is collections.OrderedDict and t[7] == "int key"
    assert t["tuple"][1] == -3 and torch.equal(t["tuple"][0], torch.ones(2))
    assert torch.equal(t["nested"]["deep"][0]["x"], torch.tensor([1, 2]))
    back = _torch_to_ember(t)
    assert back["dtypes"] == [ember.float32, ember.int64, ember.bool]
    assert back["devices"] == [ember.device("cpu"), ember.device("cuda", 1)]
    assert back["list"] == e["list"] and back[7] == "int key"
    _same(back["od"]["a"], t["od"]["a"])
    assert type(back["tuple"]) is tuple and back["tuple"][1] == -3


def test_weights_only_false_objects():
    ns = argparse.Namespace(lr=0.1, name="run")
    arr = np.arange(6).reshape(2, 3)
    out = _torch_to_ember({"args": ns, "arr": arr, "w": torch.ones(2)}, weights_only=False)
    assert out["args"] == ns
    assert type(out["arr"]) is np.ndarray
    np.testing.assert_array_equal(out["arr"], arr)
    assert isinstance(out["w"], ember.Tensor)
    with pytest.raises(Exception, match="Weights only load failed"):
        _torch_to_ember({"args": ns})
    # and ember's file of the same objects loads in torch with weights_only=False
    buf = io.BytesIO()
    ember.save({"args": ns, "arr": arr}, buf)
    buf.seek(0)
    t = torch.load(buf, weights_only=False)
    assert t["args"] == ns and type(t["arr"]) is np.ndarray


def test_whole_module_with_weights_only_false():
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _torch_to_ember(tmodel, weights_only=False)
    assert type(model) is ember.nn.Sequential and type(model[0]) is ember.nn.Linear
    x = _sample("float32", (4, 3))
    np.testing.assert_allclose(model(ember.tensor(x)).detach().numpy(),
                               tmodel(torch.from_numpy(x)).detach().numpy(), rtol=1e-6)
    buf = io.BytesIO()
    ember.save(model, buf)
    buf.seek(0)
    back = torch.load(buf, weights_only=False)
    assert type(back[0]) is torch.nn.Linear
    np.testing.assert_allclose(back(torch.from_numpy(x)).detach().numpy(),
                               tmodel(torch.from_numpy(x)).detach().numpy(), rtol=1e-6)


def test_file_paths_and_archive_layout(tmp_path):
    import zipfile
    ember.save({"a": ember.ones(2)}, tmp_path / "model.pt")
    torch.save({"a": torch.ones(2)}, tmp_path / "ref.pt")
    names = zipfile.ZipFile(tmp_path / "model.pt").namelist()
    ref = zipfile.ZipFile(tmp_path / "ref.pt").namelist()
    assert [n.split("/", 1)[1] for n in names] == [n.split("/", 1)[1] for n in ref]
    assert names[0] == "model/data.pkl"
    assert torch.equal(torch.load(tmp_path / "model.pt")["a"], torch.ones(2))
    assert torch.equal(torch.load(tmp_path / "model.pt", mmap=True)["a"], torch.ones(2))
    np.testing.assert_array_equal(ember.load(tmp_path / "ref.pt", mmap=True)["a"].numpy(),
                                  np.ones(2, np.float32))


def test_legacy_format_both_ways():
    buf = io.BytesIO()
    t = torch.arange(6.0)
    torch.save({"t": t, "v": t[2:], "n": 1}, buf, _use_new_zipfile_serialization=False)
    buf.seek(0)
    out = ember.load(buf)
    np.testing.assert_array_equal(out["v"].numpy(), [2.0, 3.0, 4.0, 5.0])
    assert np.shares_memory(out["v"].numpy(), out["t"].numpy())
    buf = io.BytesIO()
    e = ember.arange(6.0)
    ember.save({"t": e, "v": e[2:]}, buf, _use_new_zipfile_serialization=False)
    buf.seek(0)
    back = torch.load(buf)
    assert torch.equal(back["v"], torch.arange(2.0, 6.0))
    assert back["v"].untyped_storage().data_ptr() == back["t"].untyped_storage().data_ptr()


def test_safetensors_path_loads_in_torch(tmp_path):
    ember.save({"w": ember.ones(2, 3)}, tmp_path / "m.safetensors")
    out = torch.load(tmp_path / "m.safetensors")
    assert torch.equal(out["w"], torch.ones(2, 3))


def test_malicious_pickle_does_not_run(tmp_path):
    marker = tmp_path / "marker"

    class Evil:
        def __reduce__(self):
            import os
            return (os.system, ("touch %s" % marker,))

    buf = io.BytesIO()
    torch.save({"x": Evil()}, buf)
    buf.seek(0)
    with pytest.raises(Exception) as info:
        ember.load(buf)
    assert "Weights only load failed" in str(info.value)
    assert "posix.system" in str(info.value) or "os.system" in str(info.value)
    assert not marker.exists()
