"""Fixes made by the lead in session 10, each against torch."""
import itertools
import math

import numpy as np
import pytest

import ember

VALS = [3., -3., 0., -0., 5.5, -5.5, math.inf, -math.inf, math.nan, 1e-30, 2.]


def _bits(t):
    a = t.detach().double().numpy()
    return [("nan", 0) if math.isnan(v) else (v, math.copysign(1, v)) for v in a.tolist()]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_remainder_signed_zeros_and_infinities(torch, dtype):
    a = [x for x, _ in itertools.product(VALS, VALS)]
    b = [y for _, y in itertools.product(VALS, VALS)]
    for lib_args in ((a, b), (a, 3.0), (-2.5, b)):
        res = []
        for lib in (torch, ember):
            dt = getattr(lib, dtype)
            x, y = [lib.tensor(v, dtype=dt) if isinstance(v, list) else v for v in lib_args]
            res.append(_bits(lib.remainder(x, y)))
        assert res[0] == res[1]


@pytest.mark.parametrize("x,t", [([0.5, 1.5], [1.5, 0.5]), ([0.5, math.nan], [0.2, 0.3]),
                                 ([0.5, 0.2], [0.2, math.nan]), ([-0.1], [0.5]),
                                 ([0.5], [-1e-9])])
def test_bce_checks_input_then_target_element_by_element(torch, x, t):
    msgs = []
    for lib in (torch, ember):
        with pytest.raises(RuntimeError) as e:
            lib.nn.functional.binary_cross_entropy(lib.tensor(x), lib.tensor(t))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_parameter_of_integer_tensor_message(torch):
    msgs = []
    for lib in (torch, ember):
        with pytest.raises(RuntimeError) as e:
            lib.nn.Parameter(lib.arange(3))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    assert ember.nn.Parameter(ember.arange(3), requires_grad=False).dtype == ember.int64


def test_huber_loss_with_weight_refuses_nonpositive_delta(torch):
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="non-positive values for delta"):
            lib.nn.functional.huber_loss(lib.ones(2), lib.zeros(2), weight=lib.ones(2), delta=0.)


def test_instance_norm_is_not_a_batch_norm(torch):
    for lib in (torch, ember):
        m = lib.nn.InstanceNorm2d(3)
        assert not isinstance(m, lib.nn.modules.batchnorm._BatchNorm)
        assert isinstance(m, lib.nn.modules.batchnorm._NormBase)
        assert isinstance(lib.nn.BatchNorm2d(3), lib.nn.modules.batchnorm._NormBase)
    assert repr(ember.nn.InstanceNorm2d(3)) == repr(torch.nn.InstanceNorm2d(3))


def test_scatter_and_gather_with_a_0d_index(torch):
    out = []
    for lib in (torch, ember):
        out.append((lib.zeros(4).scatter_(0, lib.tensor(2), value=1.).tolist(),
                    lib.arange(4.).gather(0, lib.tensor(2)).tolist(),
                    lib.zeros(4).scatter_add(0, lib.tensor(1), lib.tensor(5.)).tolist()))
    assert out[0] == out[1]


def test_bfloat16_max_pooling(torch):
    out = []
    for lib in (torch, ember):
        x = lib.arange(16.).reshape(1, 1, 4, 4).to(lib.bfloat16)
        F = lib.nn.functional
        out.append([F.max_pool2d(x, 2).float().tolist(),
                    F.adaptive_max_pool2d(x, 1).float().tolist(),
                    F.max_pool1d(x[0], 2).float().tolist()])
    assert out[0] == out[1]


def test_affine_grid_generator_is_f_affine_grids_op(torch):
    out = []
    for lib in (torch, ember):
        th = lib.tensor([[[1., 0.2, 0.1], [0.3, 0.9, -0.2]]], requires_grad=True)
        g = lib.affine_grid_generator(th, [1, 1, 3, 5], False)
        g.sum().backward()
        out.append((g.detach().numpy().tobytes(), th.grad.stride(), type(g.grad_fn).__name__))
    assert out[0] == out[1]
    assert np.frombuffer(out[0][0], np.float32).size == 30


@pytest.mark.parametrize("shape", [(3, 4), (3, 4, 5), (4,), (2, 0)])
@pytest.mark.parametrize("index", [[0, 7, -1], [-2, 1], [1, 9], []])
def test_index_select_out_of_range_errors(torch, shape, index):
    for d in range(-len(shape), len(shape)):
        res = []
        for lib in (torch, ember):
            try:
                r = lib.zeros(shape).index_select(d, lib.tensor(index, dtype=lib.int64)).shape
                res.append(("ok", tuple(r)))
            except Exception as e:   # noqa: BLE001
                res.append((type(e).__name__, str(e)))
        assert res[0] == res[1], (d, res)


NUMPY_CALLS = ["np.clip(t, 0., 1.)", "np.round(t)", "np.transpose(t)", "np.reshape(t, -1)",
               "np.argmax(t)", "np.exp(t)", "np.add(t, 1)", "np.maximum(t, 0)", "np.isnan(t)",
               "t + np.ones((2, 2))", "np.float64(2.0) * t", "t * np.float64(2.0)",
               "np.array(t)", "np.asarray(t)", "np.concatenate([t, t])", "np.stack([t, t])",
               "np.abs(t)", "np.squeeze(t)", "np.where(t > 0, t, 0)", "np.float32(1) + t",
               "np.int64(2) * t", "np.sort(t)", "np.unique(t)", "np.linalg.norm(t)"]


@pytest.mark.parametrize("expr", NUMPY_CALLS)
def test_numpy_functions_on_tensors_as_torch(torch, expr):
    """NumPy functions and ufuncs called on a tensor give what they give on torch's (a Tensor
    through ``__array_wrap__`` or the tensor's own method, or a NumPy value)."""
    out = []
    for lib in (torch, ember):
        t = lib.tensor([[0.5, -1.0], [2.0, 3.0]])
        with np.errstate(all="ignore"):
            r = eval(expr, {"np": np, "t": t})
        arr = r.numpy() if isinstance(r, lib.Tensor) else np.asarray(r)
        out.append((type(r).__name__, str(arr.dtype), arr.tolist()))
    assert out[0] == out[1]


def test_sdpa_grouped_query_attention(torch):
    out = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        q = lib.randn(2, 8, 5, 4, requires_grad=True)
        k, v = lib.randn(2, 2, 6, 4, requires_grad=True), lib.randn(2, 2, 6, 4, requires_grad=True)
        o = lib.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        (o * o).sum().backward()
        out.append((type(o.grad_fn).__name__, o.detach().numpy(), q.grad.numpy(), k.grad.numpy(),
                    v.grad.numpy()))
        with pytest.raises(RuntimeError, match="must divide the number of heads"):
            lib.nn.functional.scaled_dot_product_attention(q, lib.randn(2, 3, 6, 4),
                                                           lib.randn(2, 3, 6, 4), enable_gqa=True)
    assert out[0][0] == out[1][0]
    for a, b in zip(out[0][1:], out[1][1:]):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)


def test_gradcheck_forward_mode_of_a_jvp_only_function(torch):
    def make(lib, factor):
        class MySquare(lib.autograd.Function):
            @staticmethod
            def forward(foo):
                return foo ** 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_forward(inputs[0])

            @staticmethod
            def jvp(ctx, x_t):
                x, = ctx.saved_tensors
                return x_t * factor * x
        return MySquare

    for lib in (torch, ember):
        x = lib.randn(3, dtype=lib.double, requires_grad=True)
        assert lib.autograd.gradcheck(make(lib, 2).apply, (x,), check_forward_ad=True,
                                      check_backward_ad=False)
        assert lib.autograd.gradcheck(lib.sin, (x,), check_forward_ad=True)
        with pytest.raises(RuntimeError, match="Jacobian computed with forward mode mismatch "
                                               "for output 0 with respect to input 0"):
            lib.autograd.gradcheck(make(lib, 3).apply, (x,), check_forward_ad=True,
                                   check_backward_ad=False)
