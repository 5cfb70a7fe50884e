"""Regression tests for differences the r7recipe programs (pytorch.org recipes) found."""
import importlib

import pytest

import ember



@pytest.mark.parametrize("x,n", [(19499.999999, 2), (0.0012345, 3), (2.5, 1), (3.5, 1),
                                 (0.15, 1), (987654321.0, 3), (-42.5, 2)])
def test_trim_sigfig_rounds_in_float32(torch, x, n):
    # torch rounds float32 tensors: 19499.99.. becomes 19500 and then 20000 (half to even)
    ours = importlib.import_module("ember.utils.benchmark").trim_sigfig(x, n)
    assert ours == importlib.import_module("torch.utils.benchmark").trim_sigfig(x, n)


def test_significant_figures_match(torch):
    times = [1e-4, 1.01e-4, 1.02e-4, 0.99e-4, 1e-4, 1.005e-4, 1.3e-4]
    eb, tb = (importlib.import_module(lib + ".utils.benchmark") for lib in ("ember", "torch"))
    ours = eb.Measurement(10, times, eb.TaskSpec("s", "pass"))
    ref = tb.Measurement(10, times, tb.TaskSpec("s", "pass"))
    assert ours.significant_figures == ref.significant_figures


def _mmap_round(lib, path, flags):
    lib.save({"a": lib.ones(3), "b": lib.arange(4).reshape(2, 2).t()}, path)
    with lib.serialization.set_default_mmap_options(flags):
        inside = lib.serialization.get_default_mmap_options()
        sd = lib.load(path, mmap=True)
    sd["a"].add_(1.0)
    again = lib.load(path)
    return inside, lib.serialization.get_default_mmap_options(), sd["b"].tolist(), \
        again["a"].tolist(), again["b"].tolist()


@pytest.mark.parametrize("shared", [False, True])
def test_mmap_options_private_and_shared(torch, tmp_path, shared):
    import mmap
    flags = mmap.MAP_SHARED if shared else mmap.MAP_PRIVATE
    ours = _mmap_round(ember, str(tmp_path / "e.pt"), flags)
    assert ours == _mmap_round(torch, str(tmp_path / "t.pt"), flags)


def test_mmap_options_bad_flag(torch):
    with pytest.raises(ValueError) as ref:
        torch.serialization.set_default_mmap_options(12345)
    with pytest.raises(ValueError) as ours:
        ember.serialization.set_default_mmap_options(12345)
    assert str(ours.value) == str(ref.value)
    assert ember.serialization.get_default_mmap_options() == \
        torch.serialization.get_default_mmap_options()


def _meta_copy_warnings(lib):
    import warnings
    with lib.device("meta"):
        m = lib.nn.Linear(2, 3)
    sd = {"weight": lib.ones(3, 2), "bias": lib.ones(3)}
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m.load_state_dict(sd)
        m.load_state_dict(sd, assign=True)
    return [str(x.message) for x in w], m.weight.device.type


def test_load_into_meta_warns_unless_assign(torch):
    assert _meta_copy_warnings(ember) == _meta_copy_warnings(torch)


def _subclass_param(lib):
    class Q(lib.Tensor):
        scale = 0.5

        @staticmethod
        def __new__(cls, elem, scale):
            return lib.Tensor._make_subclass(cls, elem.detach(), elem.requires_grad)

        def __init__(self, elem, scale):
            self.scale = scale

    q = Q(lib.ones(2, requires_grad=True), 0.25)
    p = lib.nn.Parameter(q, requires_grad=False)
    m = lib.nn.Linear(2, 2)
    m.weight = p
    return (type(p).__name__, p is q, p.requires_grad, getattr(p, "scale", None),
            isinstance(p, lib.nn.Parameter), isinstance(q, lib.nn.Parameter),
            isinstance(lib.ones(1), lib.nn.Parameter), [n for n, _ in m.named_parameters()],
            type(m.weight).__name__, type(lib.nn.Parameter(lib.ones(1))).__name__)


def test_parameter_of_a_tensor_subclass_keeps_the_subclass(torch):
    # torch: Parameter(t) of a subclass is t.detach() marked _is_param; isinstance sees it
    assert _subclass_param(ember) == _subclass_param(torch)
