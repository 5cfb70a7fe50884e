"""Regression tests (session 10): shared memory and multiprocessing, custom ``jvp`` under
forward AD, ``tensor()`` and indexing edge cases; torch is the oracle."""
import importlib
import multiprocessing
import pathlib
import sys
import warnings

import numpy as np
import pytest

import ember
import ember.multiprocessing  # noqa: F401

torch = pytest.importorskip("torch")

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _mp_workers10 as workers  # noqa: E402

LIBS = [torch, ember]


def _lib(name):
    return importlib.import_module(name)


# ---- Tensor.share_memory_ / is_shared ------------------------------------------------------

@pytest.mark.parametrize("lib", LIBS, ids=["torch", "ember"])
def test_share_memory_in_place(lib):
    x = lib.arange(6.0)
    view = x.view(2, 3)
    det = x.detach()
    assert not x.is_shared() and not view.is_shared()
    assert x.share_memory_() is x
    assert x.is_shared() and view.is_shared() and det.is_shared()
    assert x._version == 0
    view[0, 1] = 10.0
    det[5] = -1.0
    assert x.tolist() == [0.0, 10.0, 2.0, 3.0, 4.0, -1.0]
    assert view._base is x
    ptr = x.data_ptr()
    x.share_memory_()
    assert x.data_ptr() == ptr
    later = x[2:]
    assert later.is_shared() and later.storage_offset() == 2
    w = lib.zeros(3, requires_grad=True)
    assert w.share_memory_() is w and w.is_shared() and w.requires_grad
    for t in (lib.tensor(1.0), lib.zeros(0), lib.arange(3)):
        assert t.share_memory_().is_shared()


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "ember"])
def test_share_memory_from_numpy(lib):
    a = np.zeros(3, dtype=np.float32)
    t = lib.from_numpy(a)
    v = t[1:]
    t.share_memory_()
    assert t.is_shared() and v.is_shared()
    t[0] = 5.0
    v[0] = 7.0
    assert a.tolist() == [0.0, 0.0, 0.0]      # the array keeps the old memory, as torch
    assert t.tolist() == [5.0, 7.0, 0.0]


def test_module_share_memory():
    model = workers.make_net(ember)
    assert model.share_memory() is model
    assert all(t.is_shared() for t in list(model.parameters()) + list(model.buffers()))


def _share(model):
    model.share_memory()
    for t in list(model.parameters()) + list(model.buffers()):   # (see test above)
        t.share_memory_()


def _data(lib):
    rng = np.random.RandomState(0)
    return (lib.tensor(rng.randn(16, 8).astype(np.float32)),
            lib.tensor(rng.randint(0, 4, 16)))


def _hogwild(concurrent):
    ember.manual_seed(0)
    model = workers.make_net(ember)
    _share(model)
    data, target = _data(ember)
    ctx = multiprocessing.get_context("fork")
    processes = []
    for rank in range(2):
        p = ctx.Process(target=workers.train, args=(rank, "ember", model, data, target, 3))
        p.start()
        if not concurrent:
            p.join(60)
        processes.append(p)
    for p in processes:
        p.join(60)
        assert p.exitcode == 0
    return model


def test_hogwild_fork_parent_sees_updates():
    got = _hogwild(concurrent=False)
    torch.manual_seed(0)                 # torch's result: the two trainings one after the other
    want = workers.make_net(torch)
    data, target = _data(torch)
    for rank in range(2):
        workers.train(rank, "torch", want, data, target, 3)
    for (name, a), (_, b) in zip(got.state_dict().items(), want.state_dict().items()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=name)
    ember.manual_seed(0)
    fresh = workers.make_net(ember)
    got = _hogwild(concurrent=True)
    assert not np.allclose(got.fc1.weight.detach().numpy(), fresh.fc1.weight.detach().numpy())
    assert np.isfinite(got.fc2.weight.detach().numpy()).all()


def test_spawn_queue_round_trip():
    # (what torch.multiprocessing does with the same calls, checked by hand: spawning torch
    # children takes too long for this file)
    ctx = ember.multiprocessing.get_context("spawn")
    arg = ember.arange(3.0)
    t = ember.arange(4.0)
    base = ember.zeros(5)
    p = ember.nn.Parameter(ember.ones(2))
    q_in, q_out = ctx.Queue(), ctx.Queue()
    proc = ctx.Process(target=workers.bump, args=("ember", arg, q_in, q_out))
    proc.start()
    try:
        q_in.put((t, base[1:3], p))
        shared_t, shared_v, pname, preq, seen, t_back, p_back = q_out.get(timeout=60)
        assert (shared_t, shared_v, pname, preq) == (True, True, "Parameter", True)
        assert arg.is_shared() and arg.tolist() == [0.0, 2.0, 4.0]
        assert seen == [1.0, 2.0, 3.0, 4.0]
        assert t.is_shared() and t.tolist() == [1.0, 2.0, 3.0, 4.0]
        assert base.tolist() == [0.0, 0.0, 0.0, 0.0, 0.0]   # 0 * 10
        assert p.tolist() == [-4.0, -4.0]
        assert type(p_back).__name__ == "Parameter" and p_back.requires_grad
        t_back[0] = 100.0                  # the tensor that came back is the same memory
        assert t[0].item() == 100.0
    finally:
        q_in.put(None)
        proc.join(60)
    assert proc.exitcode == 0


@pytest.mark.parametrize("name", ["torch", "ember"])
def test_queue_refuses_non_leaf(name):
    lib = _lib(name)
    _lib(name + ".multiprocessing")
    from multiprocessing.reduction import ForkingPickler
    y = lib.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        ForkingPickler.dumps(y)


def test_plain_pickle_still_copies():
    import pickle
    t = ember.arange(3.0).share_memory_()
    u = pickle.loads(pickle.dumps(t))
    u[0] = 9.0
    assert t[0].item() == 0.0 and not u.is_shared()


def test_warnings_quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.ones(2).share_memory_()


# ---- custom Function with jvp under forward AD ------------------------------------------------

def _fn_classes(lib):
    Function = lib.autograd.Function

    class Fn(Function):                      # the forward-mode AD tutorial's Function
        @staticmethod
        def forward(foo):
            return lib.exp(foo)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.result = output

        @staticmethod
        def jvp(ctx, gI):
            gO = gI * ctx.result
            del ctx.result
            return gO

    class MulSin(Function):                  # two inputs, two outputs, ctx-style forward
        @staticmethod
        def forward(ctx, x, y, scale):
            ctx.save_for_forward(x, y)
            ctx.scale = scale
            return x * y * scale, lib.sin(x)

        @staticmethod
        def jvp(ctx, tx, ty, tscale):
            x, y = ctx.saved_tensors
            assert tscale is None
            tx = lib.zeros_like(x) if tx is None else tx
            ty = lib.zeros_like(y) if ty is None else ty
            return (tx * y + x * ty) * ctx.scale, tx * lib.cos(x)

    class OnlyBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Fn, MulSin, OnlyBackward


def _fw_run(lib):
    fwAD = importlib.import_module(lib.__name__ + ".autograd.forward_ad")
    Fn, MulSin, OnlyBackward = _fn_classes(lib)
    rng = np.random.RandomState(0)
    primal = lib.tensor(rng.randn(3, 4), requires_grad=True)
    tangent = lib.tensor(rng.randn(3, 4))
    y = lib.tensor(rng.randn(3, 4))
    res = {}
    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        dual_output = Fn.apply(dual_input)
        p, t = fwAD.unpack_dual(dual_output)
        res["primal"], res["jvp"] = p.detach().numpy(), t.detach().numpy()
        res["requires_grad"] = dual_output.requires_grad
        res["chain"] = fwAD.unpack_dual(dual_output * 3 + 1).tangent.detach().numpy()
        a, b = MulSin.apply(dual_input, y, 2.0)
        res["mulsin"] = [fwAD.unpack_dual(v).tangent.detach().numpy() for v in (a, b)]
        res["plain"] = Fn.apply(y).numpy()     # no tangent: an ordinary call
        with pytest.raises(NotImplementedError) as e:
            OnlyBackward.apply(dual_input)
        res["err"] = str(e.value)
        with pytest.raises(NotImplementedError) as e:
            dual_output.sum().backward()
        res["bwd_err"] = str(e.value)
    res["after"] = Fn.apply(primal).detach().numpy()
    return res


def test_custom_jvp_forward_ad():
    got, want = _fw_run(ember), _fw_run(torch)
    assert got.keys() == want.keys()
    for k in got:
        if isinstance(got[k], list):
            for a, b in zip(got[k], want[k]):
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=k)
        elif isinstance(got[k], np.ndarray):
            np.testing.assert_allclose(got[k], want[k], rtol=1e-10, atol=1e-12, err_msg=k)
        else:
            assert got[k] == want[k], k


# ---- tensor() edge cases, text indices, 0-d size(), inference detach --------------------------

def _outcome(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn()
        except Exception as e:              # noqa: BLE001 - the class and words are compared
            return type(e).__name__, str(e)
    return tuple(r.shape), str(r.dtype).replace("torch.", ""), r.tolist()


TENSOR_CASES = [
    "[[], [1]]", "[[], [True]]", "[[], [1, [2]]]", "[[[]], [1]]", "[[], 1]", "[[], [1j]]",
    "[[1], []]", "[1, [2, 3]]", "[1.5, [2, 3]]", "[True, [2]]", "[1j, [2]]", "[1, []]",
    "[1, L.ones(2)]", "[L.ones(2), L.ones(3)]", "[L.ones(2), L.ones(2)]", "[L.ones(2), [1, 2]]",
    "[[1, 2], L.ones(2)]", "[[1, 2], L.ones(3)]", "[[1, 2], L.ones(2, 2)]", "[L.ones(2), 3]",
    "[3, L.ones(2)]", "[L.tensor(1.), 2, 3]", "[2, L.tensor(1.5)]", "[L.tensor([1]), 2]",
    "[[L.tensor(1), 2], [3, 4]]", "[L.ones(0), L.ones(0)]", "[[1, 2], [3]]", "[[1, 2], 3]",
    "[(1, 2), [3, 4]]", "[np.ones(2), np.ones(2)]", "[np.ones(2), np.ones(3)]",
    "[L.tensor(1.5, dtype=L.float64), 2]", "[[1], 'ab']", "[1, None]", "[]", "[[]]",
]


@pytest.mark.parametrize("expr", TENSOR_CASES)
def test_tensor_nested_edge_cases(expr):
    def run(L):
        return _outcome(lambda: L.tensor(eval(expr, {"L": L, "np": np})))
    assert run(ember) == run(torch)


def test_tensor_nested_dtype_given():
    for lib in LIBS:
        with pytest.raises(TypeError, match="must be real number, not list"):
            lib.tensor([1, [2]], dtype=lib.float32)
        assert lib.tensor([[], []], dtype=lib.int32).shape == (2, 0)


@pytest.mark.parametrize("index", ["a", b"a", (1, "a"), ("a",), [1, "a"], "ab", "abc"])
def test_text_index(index):
    def run(L, setting, shape):
        x = L.ones(*shape)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                if setting:
                    x[index] = 1.0
                else:
                    x[index]
            except Exception as e:          # noqa: BLE001
                out = (type(e).__name__, str(e))
        msgs = [str(m.message).split(" (Triggered")[0] for m in w]
        return out, msgs
    for setting in (False, True):
        for shape in ((3, 4), (3,)):
            assert run(ember, setting, shape) == run(torch, setting, shape)


def test_zero_dim_size_stride():
    for dim in (0, 1, -1, -2):
        for name in ("size", "stride"):
            got = _outcome(lambda: getattr(ember.tensor(1.0), name)(dim))
            want = _outcome(lambda: getattr(torch.tensor(1.0), name)(dim))
            assert got == want
    with pytest.raises(IndexError, match="tuple index out of range"):
        ember.tensor(1.0).shape[0]


def test_detach_of_inference_tensor():
    for lib in LIBS:
        with lib.inference_mode():
            i = lib.ones(2)
        d = i.detach()
        assert d.is_inference() and i.data.is_inference()
        assert not (i + 1).is_inference()
        with pytest.raises(RuntimeError, match="Setting requires_grad=True on inference tensor"):
            d.requires_grad_()
