"""Utilities on the strict test device (NumPy behind CuPy's rules): collate, gradcheck,
autograd.functional, anomaly mode, checkpoint's RNG replay and the ``ember check`` inputs."""
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import GradcheckError
from ember.utils.checkpoint import checkpoint
from ember.utils.data import DataLoader, TensorDataset, default_collate

X = [0.5, -1.25, 2.0]


def _host(t):
    return t.detach().cpu().numpy()


def _x(lib, device="cpu"):
    return lib.tensor(X, dtype=lib.float64, device=device, requires_grad=True)


def test_default_collate_stacks_strict_tensors_on_strict(torch):
    from torch.utils.data import default_collate as torch_collate
    rows = [[1.0, 2.0], [3.0, 4.0]]
    batch = default_collate([(ember.tensor(r, device="strict"), i) for i, r in enumerate(rows)])
    tbatch = torch_collate([(torch.tensor(r), i) for i, r in enumerate(rows)])
    assert batch[0].device.type == "strict" and batch[1].device.type == "cpu"
    for e, t in zip(batch, tbatch):
        assert str(e.dtype) == str(t.dtype)
        np.testing.assert_array_equal(_host(e), t.numpy())
    data = TensorDataset(ember.arange(4, device="strict"), ember.ones(4, 2, device="strict"))
    xs, ys = next(iter(DataLoader(data, batch_size=3)))
    assert xs.device.type == ys.device.type == "strict" and xs.tolist() == [0, 1, 2]


def test_gradcheck_on_strict_inputs():
    x = _x(ember, "strict")
    assert ember.autograd.gradcheck(lambda t: t * t * t, (x,))
    assert ember.autograd.gradgradcheck(lambda t: t * t * t, (x,))

    class WrongGrad(ember.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * t

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return g * t        # should be 2 * g * t

    with pytest.raises(GradcheckError, match="Jacobian mismatch") as info:
        ember.autograd.gradcheck(WrongGrad.apply, (x,))
    err = info.value        # worst at x = 2: analytic x, numeric 2x
    assert (err.input_index, err.input_element) == (0, 2)
    assert err.analytical == pytest.approx(2.0) and err.numerical == pytest.approx(4.0)
    assert not ember.autograd.gradcheck(WrongGrad.apply, (x,), raise_exception=False)


def _cube_sum(lib):
    return lambda t: (t * t * t).sum()


@pytest.mark.parametrize("name", ["jacobian", "hessian", "vjp", "jvp", "vhp", "hvp"])
def test_autograd_functional_on_strict_matches_torch(torch, name):
    v = [1.0, -2.0, 0.5]
    results = []
    for lib, device in ((ember, "strict"), (torch, "cpu")):
        fn = getattr(lib.autograd.functional, name)
        x = _x(lib, device)
        vec = lib.tensor(v, dtype=lib.float64, device=device)
        if name == "jacobian":
            out = fn(lambda t: t * t, x)
        elif name == "hessian":
            out = fn(_cube_sum(lib), x)
        elif name in ("vjp", "jvp"):
            out = fn(lambda t: t * t, x, vec)[1]
        else:
            out = fn(_cube_sum(lib), x, vec)[1]
        results.append(out)
    mine, theirs = results
    assert mine.device.type == "strict" and str(mine.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(_host(mine), theirs.numpy(), rtol=1e-12)


def test_anomaly_mode_names_the_nan_node_on_strict(torch):
    messages = []
    for lib, device in ((ember, "strict"), (torch, "cpu")):
        x = lib.tensor([0.0, 1.0], device=device, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                with pytest.raises(RuntimeError) as e:
                    (x.sqrt() * 0).sum().backward()
        messages.append(str(e.value).splitlines()[0])
    assert messages[0] == messages[1]


def test_checkpoint_replays_random_numbers_on_strict():
    x = ember.tensor([1.0, 2.0, -3.0], device="strict", requires_grad=True)

    def segment(t):
        return t * ember.rand_like(t) * t      # grad = 2 * t * r, r drawn again on recompute

    out = checkpoint(segment, x, use_reentrant=False)
    r = _host(out) / (_host(x) ** 2)
    out.sum().backward()
    assert x.grad.device.type == "strict"
    np.testing.assert_allclose(_host(x.grad), 2 * _host(x) * r, rtol=1e-6)


def test_rng_state_is_a_cpu_tensor_whatever_the_default_device(torch):
    ember.set_default_device("strict")
    try:
        state = ember.get_rng_state()
        assert state.device.type == "cpu" and state.dtype is ember.uint8
        a = ember.rand(3)
        ember.set_rng_state(state)
        assert a.device.type == "strict" and ember.rand(3).tolist() == a.tolist()
    finally:
        ember.set_default_device(None)
    assert torch.get_rng_state().device.type == "cpu"
    assert ember.Generator().device == ember.device("cpu")


def test_check_inputs_follow_the_example_device():
    from ember import _check
    rng = np.random.default_rng(0)
    ins = _check._make_inputs([("array", ember.ones(2, device="strict")._array),
                               ("tensor", (2,))], rng)
    assert ins[0].device.type == "strict" and ins[1].device.type == "cpu"
    assert ins[0].dtype is ember.float64 and ins[0].requires_grad
