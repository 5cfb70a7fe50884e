"""Session 13 (H7, theme tensor): fixes found by the p_r5tensor_* programs, each checked
against torch."""
import numpy as np
import pytest

import ember


def _err(lib, fn):
    try:
        fn(lib)
    except Exception as e:      # noqa: BLE001 (the class and message are what is compared)
        return type(e).__name__, str(e)
    return None


def _same_error(torch, fn):
    got, want = _err(ember, fn), _err(torch, fn)
    assert want is not None
    assert got == want


def test_is_set_to(torch):
    def probe(lib):
        x = lib.arange(24.0).view(2, 3, 4)
        return [x.is_set_to(x), x[0].is_set_to(x), x.view(2, 3, 4).is_set_to(x),
                x.t().is_set_to(x) if x.dim() == 2 else x.transpose(0, 1).is_set_to(x),
                x.clone().is_set_to(x)]
    assert probe(ember) == probe(torch)


def test_set_storage_and_own_version_counter(torch):
    def probe(lib):
        f = lib.zeros(4)
        f.add_(1)
        f.add_(1)
        g = lib.ones(4)
        g.add_(1)
        f.set_(g)
        out = [f._version, g._version]
        g.add_(1)
        out += [f._version, g._version, f.tolist()]
        z = lib.empty(0)
        z.set_(lib.arange(24.0).view(2, 3, 4).untyped_storage(), 4, (2, 2), (1, 2))
        out += [z.tolist(), z._version]
        return out
    assert probe(ember) == probe(torch)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int64", "float16", "bfloat16", "float32",
                                   "complex64"])
def test_expand_too_few_sizes_names_the_type(torch, dtype):
    _same_error(torch, lambda lib: lib.zeros(2, 2, dtype=getattr(lib, dtype)).expand(4))


def test_setitem_into_non_overlapping_view_of_expanded(torch):
    def probe(lib):
        x = lib.tensor([[1], [2], [3]])
        e = x.expand(3, 2)
        e[0, 0] = 5
        e[:, 1] = lib.tensor([7, 8, 9])
        e[1:2, 0] = 4
        e[..., 0] = 1
        return x.flatten().tolist(), x._version
    assert probe(ember) == probe(torch)
    _same_error(torch, lambda lib: lib.tensor([[1], [2]]).expand(2, 2).__setitem__(0, 3))
    _same_error(torch, lambda lib: lib.tensor([[1], [2]]).expand(2, 2).__setitem__(Ellipsis, 3))


@pytest.mark.parametrize("idx", ["[[1]]", "[1.0]", "[True]"])
def test_tensor_split_tensor_indices_errors(torch, idx):
    _same_error(torch, lambda lib: lib.tensor_split(lib.arange(14).reshape(2, 7),
                                                   lib.tensor(eval(idx)), dim=1))


@pytest.mark.parametrize("dim,sizes", [(1, (3, -1)), (-1, (3,)), (0, (3,)), (1, (-1, 3))])
def test_unflatten_size_errors(torch, dim, sizes):
    _same_error(torch, lambda lib: lib.arange(16.0).reshape(4, 4).unflatten(dim, sizes))


def test_unflatten_two_inferred_dims(torch):
    got, want = (_err(lib, lambda t: t.arange(16.0).reshape(4, 4).unflatten(1, (-1, -1)))
                 for lib in (ember, torch))
    assert got[0] == want[0] and want[1].startswith(got[1])     # (torch adds C++ frames)


@pytest.mark.parametrize("arr", [np.array([1, "a"], dtype=object), np.array(["a", "b"])])
def test_unsupported_numpy_dtype_message(torch, arr):
    _same_error(torch, lambda lib: lib.from_numpy(arr))
    _same_error(torch, lambda lib: lib.tensor(arr))


@pytest.mark.parametrize("d", ["int64", "complex64", "bool", "'float'"])
def test_set_default_dtype_errors(torch, d):
    def fn(lib):
        lib.set_default_dtype(getattr(lib, d) if d[0] != "'" else eval(d))
    try:
        _same_error(torch, fn)
    finally:
        torch.set_default_dtype(torch.float32)
        ember.set_default_dtype(ember.float32)


def test_masked_scatter_short_source(torch):
    _same_error(torch, lambda lib: lib.zeros(2, 3).masked_scatter(
        lib.tensor([[True, False, True], [False, True, False]]), lib.ones(2)))


@pytest.mark.parametrize("reduce", ["mean", "max", "sum"])
def test_scatter_reduce_argument(torch, reduce):
    _same_error(torch, lambda lib: lib.zeros(3).scatter_(0, lib.tensor([0]), 1.0, reduce=reduce))
    _same_error(torch, lambda lib: lib.zeros(3).scatter(0, lib.tensor([0]), lib.ones(1),
                                                        reduce=reduce))


def test_scatter_reduce_argument_deprecation_warning(torch):
    """torch warns once per process (its earlier calls here may have used it up): its text,
    less the C++ location, checked in a fresh torch process."""
    import subprocess
    import sys
    import warnings
    import importlib
    _scatter = importlib.import_module("ember.ops.scatter")
    code = ("import torch, warnings\nwarnings.simplefilter('always')\n"
            "torch.zeros(3).scatter(0, torch.tensor([0]), torch.ones(1), reduce='add')\n"
            "torch.zeros(3).scatter_(0, torch.tensor([0]), 2.0, reduce='multiply')\n")
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stderr
    want = [line.split("UserWarning: ")[1].split(" (Triggered")[0]
            for line in err.splitlines() if "UserWarning: " in line]
    _scatter._WARNED_REDUCE[0] = False
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        ember.zeros(3).scatter(0, ember.tensor([0]), ember.ones(1), reduce="add")
        ember.zeros(3).scatter_(0, ember.tensor([0]), 2.0, reduce="multiply")
        ember.zeros(3).scatter_(0, ember.tensor([0]), ember.ones(1), reduce="multiply")
    assert [str(w.message) for w in got if w.category is UserWarning] == want


@pytest.mark.parametrize("index", ["lib.tensor([0, 1])", "lib.tensor([True, False, True])",
                                   "(Ellipsis, lib.tensor([0]))", "1"])
@pytest.mark.parametrize("value", ["3.0", "2", "[4.0, 5.0]", "lib.tensor(3.0)"])
def test_setitem_number_value_edge(torch, index, value):
    """The value of an index_put is wrapped into a tensor: an edge of None, as torch's."""
    def probe(lib):
        c = lib.ones(3, requires_grad=True).clone()
        try:
            c[eval(index)] = eval(value)
        except Exception as e:      # noqa: BLE001
            return type(e).__name__
        return (c.grad_fn.name(), [(f.name() if f else None, i)
                                   for f, i in c.grad_fn.next_functions], c.tolist())
    assert probe(ember) == probe(torch)
