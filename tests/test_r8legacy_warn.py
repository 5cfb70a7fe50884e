"""Legacy (2017-era) PyTorch code: deprecation warnings, legacy tensor types and uint8 masks,
each checked against torch (session 14, found by the r7legacy programs)."""
import json
import os
import subprocess
import sys
import warnings

import pytest

import ember


def _run(lib, fn):
    """``fn(lib)``'s result (or error class and message) and the warnings it gave, with torch's
    " (Triggered internally at ...)" suffix dropped, as ember's texts omit it."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            out = fn(lib)
        except Exception as e:      # noqa: BLE001 (the class and message are what is compared)
            out = type(e).__name__, str(e)
    return out, [(m.category.__name__, str(m.message).split(" (Triggered internally")[0])
                 for m in w]


def _same(torch, fn):
    assert _run(ember, fn) == _run(torch, fn)


@pytest.mark.parametrize("name", ["upsample", "upsample_nearest", "upsample_bilinear"])
def test_upsample_warns_every_call(torch, name):
    def probe(lib):
        f = getattr(lib.nn.functional, name)
        x = lib.arange(4.0).reshape(1, 1, 2, 2)
        return [[round(v, 5) for v in f(x, scale_factor=2).flatten().tolist()] for _ in range(2)]
    _same(torch, probe)


_LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
           "CharTensor", "ByteTensor", "BoolTensor"]


@pytest.mark.parametrize("ns", ["", "cuda", "sparse"])
def test_legacy_type_class_attributes(torch, ns):
    def probe(lib):
        mod = getattr(lib, ns) if ns else lib
        names = _LEGACY if ns != "sparse" else ["FloatTensor", "DoubleTensor", "LongTensor"]
        return [(str(getattr(mod, n).dtype), str(getattr(mod, n).layout), getattr(mod, n).is_cuda,
                 getattr(mod, n).is_sparse, getattr(mod, n).is_sparse_csr) for n in names]
    _same(torch, probe)


@pytest.mark.parametrize("cls", _LEGACY)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "uint8",
                                   "int8", "bool", "complex64"])
def test_legacy_type_of_a_tensor(torch, cls, dtype):
    """An alias of a tensor of the class's own dtype (AliasBackward0 in the graph); any other
    dtype is torch's TensorOptions TypeError."""
    def probe(lib):
        src = lib.ones(2, 3, dtype=getattr(lib, dtype))[:, 1]
        if src.is_floating_point():
            src.requires_grad_()
        out = getattr(lib, cls)(src)
        return (str(out.dtype), out.tolist(), out.data_ptr() == src.data_ptr(), out.shape,
                type(out.grad_fn).__name__, out._base is src)
    _same(torch, probe)


@pytest.mark.parametrize("call", [
    lambda lib: lib.FloatTensor([1, 2], device="cpu").tolist(),
    lambda lib: lib.FloatTensor(2, 3, device="cpu").shape,
    lambda lib: lib.LongTensor(lib.arange(3), device="cpu"),
    lambda lib: lib.FloatTensor([1.0], dtype=lib.float64),
    lambda lib: lib.FloatTensor([1.0], requires_grad=True),
    lambda lib: lib.DoubleTensor(data=[1.5]).tolist(),
    lambda lib: lib.IntTensor(other=lib.ones(2, dtype=lib.int32)).tolist(),
    lambda lib: lib.FloatTensor(lib.ones(1), lib.ones(1)),
    lambda lib: lib.FloatTensor([1, 2]).tolist(),
    lambda lib: lib.ByteTensor(3).shape])
def test_legacy_type_arguments(torch, call):
    _same(torch, call)


def _x(lib):
    return lib.arange(6.0).reshape(2, 3)


def _put(index, value):
    def probe(lib):
        x = _x(lib)
        x[index(lib)] = value(lib)
        return x.tolist()
    return probe


def _m(lib):
    return lib.tensor([[1, 0, 1], [0, 1, 0]], dtype=lib.uint8)


def _r(lib):
    return lib.tensor([1, 0], dtype=lib.uint8)


@pytest.mark.parametrize("fn", [
    lambda lib: _x(lib)[_m(lib)].tolist(),
    lambda lib: _x(lib)[_r(lib)].tolist(),
    lambda lib: _x(lib)[_r(lib), 1].tolist(),
    lambda lib: _x(lib)[_r(lib), [0, 2]].tolist(),
    lambda lib: _x(lib)[_r(lib)][:, lib.tensor([1, 0, 1], dtype=lib.uint8)].tolist(),
    lambda lib: _x(lib)[_r(lib), lib.tensor(1, dtype=lib.uint8)].tolist(),
    lambda lib: _x(lib)[lib.tensor(1, dtype=lib.uint8)].tolist(),
    lambda lib: _x(lib)[lib.tensor(1, dtype=lib.uint8), 0].tolist(),
    lambda lib: lib.ones(2, 3, requires_grad=True)[_m(lib)].tolist(),
    _put(_m, lambda lib: 9.0),
    _put(_m, lambda lib: lib.tensor(9.0)),
    _put(_m, lambda lib: lib.tensor([9.0])),
    _put(_m, lambda lib: lib.tensor([7.0, 8.0, 9.0])),
    _put(_r, lambda lib: 9.0),
    _put(_r, lambda lib: lib.tensor([7.0, 8.0, 9.0])),
    _put(lambda lib: (_r(lib), 1), lambda lib: 9.0),
    _put(lambda lib: (None, _r(lib)), lambda lib: 9.0),
    _put(lambda lib: (Ellipsis, lib.tensor([1, 0, 1], dtype=lib.uint8)), lambda lib: 9.0),
    _put(lambda lib: (_r(lib), [0]), lambda lib: 9.0),
    _put(lambda lib: (True, _r(lib)), lambda lib: 9.0),
    _put(lambda lib: lib.tensor([1, 0, 1], dtype=lib.uint8), lambda lib: 9.0),
    _put(lambda lib: lib.tensor(1, dtype=lib.uint8), lambda lib: lib.tensor([7.0, 8.0, 9.0])),
    lambda lib: _x(lib).index_put((_m(lib),), lib.tensor([7.0, 8.0, 9.0])).tolist(),
    lambda lib: _x(lib).index_put((_m(lib),), lib.tensor(9.0)).tolist(),
    lambda lib: _x(lib).index_put_((_m(lib),), lib.tensor([[9.0]])).tolist(),
    lambda lib: _x(lib).index_put((_m(lib),), lib.tensor(9.0), accumulate=True).tolist(),
    lambda lib: _x(lib).index_put((_r(lib), lib.tensor(1)), lib.tensor(9.0)).tolist(),
    lambda lib: lib.index_put(_x(lib), (_m(lib),), lib.tensor([7.0, 8.0, 9.0])).tolist(),
    lambda lib: lib.arange(6).index_put_((lib.tensor([1, 0] * 3, dtype=lib.uint8),),
                                         lib.tensor(1)).tolist()])
def test_uint8_mask_indexing(torch, fn):
    """torch warns for each uint8 index on every call; a put of one element through a single
    uint8 mask takes masked_fill_'s path, which rejects the mask (and does not warn)."""
    _same(torch, fn)


@pytest.mark.parametrize("index", [
    lambda lib: [slice(None), 1], lambda lib: [lib.tensor([1, 0])],
    lambda lib: [lib.tensor([True, False])], lambda lib: [lib.tensor([1, 0]), lib.tensor([0, 2])],
    lambda lib: [[1, 0], [0, 2]], lambda lib: [None], lambda lib: [0, (1,)],
    lambda lib: [Ellipsis, 0], lambda lib: [1, 0], lambda lib: [True, False]])
def test_non_tuple_sequence_index(torch, index):
    """A list holding tensors, sequences, slices, None or ``...`` is read as a tuple, with
    torch's deprecation warning on every call (get and set)."""
    def probe(lib):
        x = _x(lib)
        got = x[index(lib)].tolist()
        x[index(lib)] = 9.0
        return got, x.tolist()
    _same(torch, probe)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.linalg.lu_factor(lib.ones(3)),
    lambda lib: lib.linalg.lu_factor_ex(lib.ones(())),
    lambda lib: lib.linalg.lu(lib.ones(3)), lambda lib: lib.linalg.lu_factor(lib.ones(2, 2)),
    lambda lib: [t.tolist() for t in lib.lu(lib.zeros(2, 2))],
    lambda lib: [t.tolist() for t in lib.lu(lib.zeros(2, 2), get_infos=True)]])
def test_lu_dims_and_singular(torch, fn):
    """torch.lu never raises for a singular matrix (``_lu_with_info`` ignores check_errors); the
    LU functions' dimension error text."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = _run(ember, fn)[0], _run(torch, fn)[0]
    assert got == want


# once-per-process warnings (TORCH_WARN_ONCE): each snippet runs twice in a fresh process of
# each library; snippets sharing a flag in torch (torch.qr / Tensor.qr) follow each other
_ONCE = [
    "torch.chain_matmul(A, A)", "torch.chain_matmul(A)",
    "torch.lu(A)", "A.lu()", "A.qr()", "torch.qr(A)",
    "torch.meshgrid(torch.arange(2), torch.arange(3))",
    "torch.meshgrid(torch.arange(2), indexing='xy')",
    "torch.set_default_tensor_type(torch.FloatTensor)",
    "torch.set_default_tensor_type('torch.FloatTensor')",
    "torch.cholesky(A @ A.mT + torch.eye(3))",
    "torch.range(0, 2)", "A.resize(9)"]

_PROG = """
import json, sys, warnings
import %s as torch
A = torch.randn(3, 3)
out = []
for code in json.loads(sys.argv[1]):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(2):
            eval(code)
    out.append([(m.category.__name__, str(m.message).split(" (Triggered internally")[0])
                for m in w])
print(json.dumps(out))
"""


def _fresh(lib):
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ember.__file__)))
    res = subprocess.run([sys.executable, "-c", _PROG % lib, json.dumps(_ONCE)],
                         capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_once_per_process_warnings(torch):
    got, want = _fresh("ember"), _fresh("torch")
    for code, g, w in zip(_ONCE, got, want):
        assert (code, g) == (code, w)
