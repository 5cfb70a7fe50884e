"""The error catalogue (issue 8, part 2): each bad input raises the exact error type, with a
message containing the listed phrases, and the failed call changes nothing (values, versions,
.grad, module parameters, optimizer state). Where the same code runs in torch, torch must raise
the same error type."""
import numpy as np
import pytest

import ember

__all__ = []


def snapshot(tensors):
    out = []
    for t in tensors:
        g = t._grad
        out.append((t._array.copy(), t._version, None if g is None else g._array.copy(),
                    t.grad_fn, t.requires_grad))
    return out


def assert_unchanged(before, tensors):
    for k, ((arr, version, grad, fn, rg), t) in enumerate(zip(before, tensors)):
        np.testing.assert_array_equal(t._array, arr, err_msg="tensor %d values" % k)
        assert t._version == version, "tensor %d version" % k
        assert t.grad_fn is fn and t.requires_grad == rg, "tensor %d graph" % k
        if grad is None:
            assert t._grad is None, "tensor %d got a .grad" % k
        else:
            np.testing.assert_array_equal(t._grad._array, grad, err_msg="tensor %d .grad" % k)


def _leaf(L, *shape, dtype=None):
    """A leaf requiring grad, with a .grad already there (so that a change would show)."""
    t = L.ones(*shape, dtype=dtype or L.float32).requires_grad_()
    (t * 1).sum().backward()
    return t


def _t(L, *shape):
    return L.arange(int(np.prod(shape)), dtype=L.float32).reshape(*shape) if shape else \
        L.tensor(1.0)


CASES = []


def case(name, exc, *phrases, torch=True):
    """Register ``fn(L) -> (call, watched_tensors)`` as a catalogue entry."""
    def deco(fn):
        CASES.append(pytest.param(fn, exc, phrases, torch, id=name))
        return fn
    return deco


def _binary(op):
    def fn(L):
        a, b = _leaf(L, 2, 3), _leaf(L, 4)
        return (lambda: op(a, b)), [a, b]
    return fn


for _name, _op in [("add", lambda a, b: a + b), ("sub", lambda a, b: a - b),
                   ("mul", lambda a, b: a * b), ("div", lambda a, b: a / b),
                   ("pow", lambda a, b: a ** b), ("eq", lambda a, b: a == b),
                   ("lt", lambda a, b: a < b), ("maximum", lambda a, b: a.maximum(b)),
                   ("atan2", lambda a, b: a.atan2(b))]:
    case("broadcast_" + _name, RuntimeError, "must match the size of tensor b",
         "non-singleton dimension 1")(_binary(_op))


@case("broadcast_where", RuntimeError, "must match the size")
def _where(L):
    a, b = _leaf(L, 2, 3), _leaf(L, 4)
    return (lambda: L.where(a > 0, a, b)), [a, b]


@case("inplace_add_broadcast", RuntimeError, "output with shape [3] doesn't match the broadcast "
      "shape [2, 3]")
def _iadd(L):
    a, b = _t(L, 3), _t(L, 2, 3)
    return (lambda: a.add_(b)), [a, b]


@case("inplace_mul_broadcast", RuntimeError, "doesn't match the broadcast shape")
def _imul(L):
    a, b = _t(L, 1, 3), _t(L, 2, 3)
    return (lambda: a.mul_(b)), [a, b]


@case("clamp_bound_overflows_float32", RuntimeError, "cannot be converted to type float",
      "without overflow")
def _clamp_overflow(L):
    a = _leaf(L, 3)
    return (lambda: a.clamp(min=0, max=1e40)), [a]


@case("clamp_bound_overflows_half", RuntimeError, "c10::Half without overflow")
def _clamp_overflow_half(L):
    a = L.ones(3, dtype=L.float16)
    return (lambda: a.clamp(min=-70000)), [a]


@case("mm_inner_mismatch", RuntimeError, "mat1 and mat2 shapes cannot be multiplied (2x3 and "
      "2x3)")
def _mm(L):
    a, b = _leaf(L, 2, 3), _leaf(L, 2, 3)
    return (lambda: a.mm(b)), [a, b]


@case("mm_not_matrix", RuntimeError, "self must be a matrix")
def _mm1(L):
    a, b = _leaf(L, 3), _leaf(L, 3, 2)
    return (lambda: L.mm(a, b)), [a, b]


@case("matmul_mismatch", RuntimeError, "cannot be multiplied", "2x3", "4x5")
def _matmul(L):
    a, b = _leaf(L, 2, 3), _leaf(L, 4, 5)
    return (lambda: a @ b), [a, b]


@case("bmm_batch_mismatch", RuntimeError, "batch2", "[2, 4] but got: [3, 4]")
def _bmm(L):
    a, b = _leaf(L, 2, 3, 4), _leaf(L, 3, 4, 5)
    return (lambda: L.bmm(a, b)), [a, b]


@case("mv_mismatch", RuntimeError, "size mismatch")
def _mv(L):
    a, b = _leaf(L, 2, 3), _leaf(L, 4)
    return (lambda: L.mv(a, b)), [a, b]


@case("dot_mismatch", RuntimeError, "inconsistent tensor size")
def _dot(L):
    a, b = _leaf(L, 3), _leaf(L, 4)
    return (lambda: L.dot(a, b)), [a, b]


@case("matmul_dtype_mismatch", RuntimeError, "expected", "same dtype")
def _mm_dtype(L):
    a, b = _leaf(L, 2, 3), _leaf(L, 3, 2, dtype=L.float64)
    return (lambda: a.mm(b)), [a, b]


@case("cat_shape_mismatch", RuntimeError, "Sizes of tensors must match except in dimension 0")
def _cat(L):
    a, b = _leaf(L, 2, 3), _leaf(L, 2, 4)
    return (lambda: L.cat([a, b])), [a, b]


@case("cat_empty", ValueError, "expected a non-empty list of Tensors")
def _cat_empty(L):
    return (lambda: L.cat([])), []


@case("cat_dim_out_of_range", IndexError, "Dimension out of range")
def _cat_dim(L):
    a, b = _leaf(L, 2, 3), _leaf(L, 2, 3)
    return (lambda: L.cat([a, b], dim=2)), [a, b]


@case("stack_shape_mismatch", RuntimeError, "stack expects each tensor to be equal size")
def _stack(L):
    a, b = _leaf(L, 2, 3), _leaf(L, 3, 2)
    return (lambda: L.stack([a, b])), [a, b]


@case("conv2d_channel_mismatch", RuntimeError, "expected input", "to have 3 channels, but got 2 "
      "channels instead")
def _conv(L):
    x, w = _leaf(L, 1, 2, 5, 5), _leaf(L, 4, 3, 3, 3)
    return (lambda: L.nn.functional.conv2d(x, w)), [x, w]


@case("conv2d_kernel_too_large", RuntimeError, "Kernel size can't be greater than actual input "
      "size")
def _conv_big(L):
    x, w = _leaf(L, 1, 1, 2, 2), _leaf(L, 1, 1, 3, 3)
    return (lambda: L.nn.functional.conv2d(x, w)), [x, w]


@case("conv2d_padding_mode_unknown", ValueError, "padding_mode must be one of",
      "but got padding_mode='bogus'")
def _conv_mode(L):
    return (lambda: L.nn.Conv2d(1, 1, 3, padding_mode="bogus")), []


@case("conv_transpose2d_padding_mode", ValueError, 'Only "zeros" padding mode is supported for '
      "ConvTranspose2d")
def _convt_mode(L):
    return (lambda: L.nn.ConvTranspose2d(1, 1, 3, padding_mode="reflect")), []


@case("conv2d_reflect_padding_too_large", RuntimeError, "Argument #6: Padding size should be "
      "less than the corresponding input dimension", "padding (4, 4) at dimension 2")
def _conv_reflect(L):
    x = _leaf(L, 1, 1, 3, 5)
    conv = L.nn.Conv2d(1, 1, 3, padding=4, padding_mode="reflect")
    return (lambda: conv(x)), [x]


def _dim_case(name, call):
    @case(name, IndexError, "Dimension out of range")
    def fn(L):
        a = _leaf(L, 2, 3)
        return (lambda: call(L, a)), [a]
    return fn


for _name, _call in [("sum_dim", lambda L, a: a.sum(2)), ("mean_dim", lambda L, a: a.mean(-3)),
                     ("softmax_dim", lambda L, a: L.softmax(a, 5)),
                     ("unsqueeze_dim", lambda L, a: a.unsqueeze(4)),
                     ("transpose_dim", lambda L, a: a.transpose(0, 3)),
                     ("size_dim", lambda L, a: a.size(5)),
                     ("argmax_dim", lambda L, a: a.argmax(2)),
                     ("max_dim", lambda L, a: a.max(-4)),
                     ("flatten_dim", lambda L, a: a.flatten(0, 4)),
                     ("select_dim", lambda L, a: a.select(3, 0))]:
    _dim_case("dim_out_of_range_" + _name, _call)


@case("requires_grad_int_tensor", RuntimeError, "only Tensors of floating point")
def _int_rg(L):
    t = L.tensor([1, 2, 3])
    return (lambda: t.requires_grad_()), [t]


@case("requires_grad_int_factory", RuntimeError, "Tensors of floating point")
def _int_rg2(L):
    return (lambda: L.zeros(3, dtype=L.int64, requires_grad=True)), []


@case("float_index", IndexError, "tensors used as indices must be long, int, byte or bool")
def _float_index(L):
    a = _leaf(L, 4)
    i = L.tensor([0.0, 1.0])
    return (lambda: a[i]), [a, i]


@case("index_out_of_bounds", IndexError, "index 5 is out of bounds for dimension 0 with size 4")
def _oob(L):
    a = _leaf(L, 4, 2)
    return (lambda: a[5]), [a]


@case("index_out_of_bounds_dim1", IndexError, "index 7 is out of bounds for dimension 1 with "
      "size 2")
def _oob1(L):
    a = _leaf(L, 4, 2)
    return (lambda: a[:, 7]), [a]


@case("tensor_index_out_of_bounds", IndexError, "out of bounds")
def _oob_t(L):
    a = _leaf(L, 4)
    i = L.tensor([0, 9])
    return (lambda: a[i]), [a, i]


@case("index_select_out_of_range", IndexError, "out of range")
def _index_select(L):
    a = _leaf(L, 3, 2)
    i = L.tensor([0, 3])
    return (lambda: a.index_select(0, i)), [a, i]


@case("gather_out_of_bounds", RuntimeError, "out of bounds")
def _gather(L):
    a = _leaf(L, 3, 2)
    i = L.tensor([[0, 5]])
    return (lambda: a.gather(1, i)), [a, i]


@case("setitem_out_of_bounds", IndexError, "out of bounds")
def _setitem(L):
    a = _t(L, 3)
    return (lambda: a.__setitem__(3, 1.0)), [a]


@case("mask_shape_mismatch", IndexError, "The shape of the mask [2] at index 0 does not match "
      "the shape of the indexed tensor [3]")
def _mask(L):
    a = _leaf(L, 3)
    m = L.tensor([True, False])
    return (lambda: a[m]), [a, m]


@case("view_bad_size", RuntimeError, "shape '[7]' is invalid for input of size 6")
def _view(L):
    a = _leaf(L, 2, 3)
    return (lambda: a.view(7)), [a]


@case("reshape_bad_size", RuntimeError, "shape '[4, -1]' is invalid for input of size 6")
def _reshape(L):
    a = _leaf(L, 2, 3)
    return (lambda: a.reshape(4, -1)), [a]


@case("expand_bad_size", RuntimeError, "The expanded size of the tensor (4) must match the "
      "existing size (3) at non-singleton dimension 1")
def _expand(L):
    a = _leaf(L, 2, 3)
    return (lambda: a.expand(2, 4)), [a]


@case("item_many_elements", RuntimeError, "a Tensor with 3 elements cannot be converted to "
      "Scalar")
def _item(L):
    a = _leaf(L, 3)
    return (lambda: a.item()), [a]


@case("bool_ambiguous", RuntimeError, "Boolean value of Tensor with more than one value is "
      "ambiguous")
def _bool(L):
    a = _leaf(L, 3)
    return (lambda: bool(a)), [a]


@case("backward_twice", RuntimeError, "Trying to backward through the graph a second time",
      "retain_graph=True")
def _twice(L):
    a = _leaf(L, 3)
    y = (a.exp() * a).sum()
    y.backward()
    return (lambda: y.backward()), [a]


@case("backward_non_scalar", RuntimeError, "grad can be implicitly created only for scalar "
      "outputs")
def _nonscalar(L):
    a = _leaf(L, 3)
    y = a * 2
    return (lambda: y.backward()), [a]


@case("backward_no_grad_fn", RuntimeError, "element 0 of tensors does not require grad and "
      "does not have a grad_fn")
def _nograd(L):
    a = _t(L, 3)
    return (lambda: a.sum().backward()), [a]


@case("backward_gradient_shape", RuntimeError, "Mismatch in shape")
def _gshape(L):
    a = _leaf(L, 3)
    y = a * 2
    g = L.ones(4)
    return (lambda: y.backward(g)), [a, g]


@case("inplace_on_leaf", RuntimeError, "a leaf Variable that requires grad is being used in an "
      "in-place operation.")
def _leaf_inplace(L):
    a = _leaf(L, 3)
    return (lambda: a.add_(1)), [a]


@case("inplace_on_view_of_leaf", RuntimeError, "a view of a leaf Variable that requires grad "
      "is being used in an in-place operation.")
def _view_leaf(L):
    a = _leaf(L, 2, 3)
    return (lambda: a[0].mul_(2)), [a]


@case("saved_tensor_modified", RuntimeError, "one of the variables needed for gradient "
      "computation has been modified by an inplace operation", "is at version 1; expected "
      "version 0 instead")
def _saved(L):
    a = _leaf(L, 3)
    h = a.exp()
    y = h.sum()
    h.add_(1)
    return (lambda: y.backward()), [a]


@case("autograd_grad_unused", RuntimeError, "appears to not have been used in the graph")
def _unused(L):
    a, b = _leaf(L, 3), _leaf(L, 3)
    y = (a * 2).sum()
    return (lambda: L.autograd.grad(y, [a, b])), [a, b]


@case("autograd_grad_input_without_grad", RuntimeError, "does not require grad")
def _grad_nrg(L):
    a = _leaf(L, 3)
    b = _t(L, 3)
    y = (a * b).sum()
    return (lambda: L.autograd.grad(y, [b])), [a, b]


@case("requires_grad_false_on_non_leaf", RuntimeError, "you can only change requires_grad "
      "flags of leaf variables")
def _rg_nonleaf(L):
    a = _leaf(L, 3)
    h = a * 2
    return (lambda: h.requires_grad_(False)), [a]


@case("numpy_of_requires_grad", RuntimeError, "Can't call numpy() on Tensor that requires grad")
def _numpy(L):
    a = _leaf(L, 3)
    return (lambda: a.numpy()), [a]


def _custom(kind, L):
    class Bad(L.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            if kind == "number":
                return (g,)
            if kind == "shape":
                return g, L.ones(5)
            return g, g.long()
    return Bad


@case("custom_wrong_number_of_grads", RuntimeError, "function BadBackward returned an incorrect "
      "number of gradients (expected 2, got 1)")
def _cnum(L):
    a, b = _leaf(L, 3), _leaf(L, 3)
    y = _custom("number", L).apply(a, b).sum()
    return (lambda: y.backward()), [a, b]


@case("custom_wrong_grad_shape", RuntimeError, "Function BadBackward returned an invalid "
      "gradient at index 1 - got [5] but expected shape compatible with [3]")
def _cshape(L):
    a, b = _leaf(L, 3), _leaf(L, 3)
    y = _custom("shape", L).apply(a, b).sum()
    return (lambda: y.backward()), [a, b]


@case("custom_integer_grad", RuntimeError, "Function BadBackward returned an invalid gradient "
      "at index 1", "expected dtype float32 but got int64", torch=False)
def _cdtype(L):
    a, b = _leaf(L, 3), _leaf(L, 3)
    y = _custom("dtype", L).apply(a, b).sum()
    return (lambda: y.backward()), [a, b]


@case("custom_forward_returns_number", TypeError, "Item.forward must return a Tensor or a "
      "tuple of Tensors, but returned float", torch=False)
def _cfwd(L):
    class Item(L.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.sum().item()

        @staticmethod
        def backward(ctx, g):
            return g
    a = _leaf(L, 3)
    return (lambda: Item.apply(a)), [a]


@case("save_for_backward_non_tensor", TypeError, "save_for_backward can only save variables")
def _csave(L):
    class Save(L.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a, 3)
            return a * 1

        @staticmethod
        def backward(ctx, g):
            return g
    a = _leaf(L, 3)
    return (lambda: Save.apply(a)), [a]


def _module_case(L):
    L.manual_seed(0)
    m = L.nn.Linear(3, 2)
    watched = [m.weight, m.bias]
    return m, watched


@case("load_state_dict_missing", RuntimeError, "Error(s) in loading state_dict for Linear",
      'Missing key(s) in state_dict: "bias"')
def _sd_missing(L):
    m, watched = _module_case(L)
    sd = {"weight": L.zeros(2, 3)}
    return (lambda: m.load_state_dict(sd)), []   # (torch loads the keys that fit first)


@case("load_state_dict_unexpected", RuntimeError, "Error(s) in loading state_dict for Linear",
      'Unexpected key(s) in state_dict: "extra"')
def _sd_unexpected(L):
    m, watched = _module_case(L)
    sd = {"weight": L.zeros(2, 3), "bias": L.zeros(2), "extra": L.zeros(1)}
    return (lambda: m.load_state_dict(sd)), []   # (torch loads the keys that fit first)


@case("load_state_dict_shape", RuntimeError, "size mismatch for weight: copying a param with "
      "shape torch.Size([3, 3]) from checkpoint, the shape in current model is "
      "torch.Size([2, 3])")
def _sd_shape(L):
    m, watched = _module_case(L)
    sd = {"weight": L.zeros(3, 3), "bias": L.zeros(2)}
    return (lambda: m.load_state_dict(sd)), []   # (torch loads the keys that fit first)


@case("optimizer_non_leaf", ValueError, "can't optimize a non-leaf Tensor")
def _opt_nonleaf(L):
    a = _leaf(L, 3)
    h = a * 2
    return (lambda: L.optim.SGD([h], lr=0.1)), [a]


@case("optimizer_bad_lr", ValueError, "Invalid learning rate: -1")
def _opt_lr(L):
    a = _leaf(L, 3)
    return (lambda: L.optim.SGD([a], lr=-1)), [a]


@case("linear_input_features", RuntimeError, "mat1 and mat2 shapes cannot be multiplied "
      "(4x5 and 3x2)")
def _linear(L):
    m, watched = _module_case(L)
    x = _leaf(L, 4, 5)
    return (lambda: m(x)), watched + [x]


@case("cross_entropy_target_out_of_bounds", IndexError, "Target 5 is out of bounds")
def _ce(L):
    x = _leaf(L, 2, 3)
    t = L.tensor([0, 5])
    return (lambda: L.nn.functional.cross_entropy(x, t)), [x, t]


@case("mse_loss_size_mismatch", RuntimeError, "must match the size of tensor b")
def _mse(L):
    x, y = _leaf(L, 2, 3), _leaf(L, 3, 2)
    return (lambda: L.nn.functional.mse_loss(x, y)), [x, y]


@pytest.mark.parametrize("build, exc, phrases, in_torch", CASES)
def test_error_catalogue(torch, build, exc, phrases, in_torch):
    call, watched = build(ember)
    before = snapshot(watched)
    with pytest.raises(exc) as info:
        call()
    assert type(info.value) is exc or isinstance(info.value, exc)
    msg = str(info.value)
    for p in phrases:
        assert p in msg, "missing %r in: %s" % (p, msg)
    assert_unchanged(before, watched)
    if in_torch:
        tcall, _ = build(torch)
        with pytest.raises(Exception) as tinfo:
            tcall()
        assert isinstance(tinfo.value, exc), "torch raises %s: %s" % (type(tinfo.value).__name__,
                                                                      tinfo.value)


def test_catalogue_size():
    assert len(CASES) >= 50


def test_optimizer_bad_param_group_leaves_state_unchanged(torch):
    for lib in (ember, torch):
        p = lib.ones(3, requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
        (p * 2).sum().backward()
        opt.step()
        buf = opt.state[p]["momentum_buffer"].clone()
        before = snapshot([p]) if lib is ember else None
        with pytest.raises(ValueError, match="some parameters appear in more than one "
                                             "parameter group"):
            opt.add_param_group({"params": [p], "lr": 5.0})
        assert len(opt.param_groups) == 1 and opt.param_groups[0]["lr"] == 0.1
        assert opt.state[p]["momentum_buffer"].tolist() == buf.tolist()
        if before is not None:
            assert_unchanged(before, [p])


def test_dataloader_worker_error_reaches_main_process():
    data = ember.utils.data

    class Bad(data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            if i == 2:
                raise KeyError("bad item %d" % i)
            return ember.tensor([float(i)])

    loader = data.DataLoader(Bad(), batch_size=1, num_workers=2)
    with pytest.raises(KeyError, match="bad item 2") as info:
        list(loader)
    assert "Traceback" in str(info.value) or "bad item 2" in str(info.value)
