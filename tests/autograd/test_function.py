"""The custom Function API against torch: ctx, saved tensors, marks, several outputs, None
grads, once_differentiable, higher derivatives and the legacy style."""
import numpy as np
import pytest

import ember
from oracle import compare

__all__ = []


def define(lib):
    """The same custom Functions written against ``lib`` (ember or torch)."""
    F = lib.autograd.Function

    class MyReLU(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            grad_input = grad_output.clone()
            grad_input[x < 0] = 0
            return grad_input

    class Linear(F):
        @staticmethod
        def forward(ctx, x, weight, bias=None):
            ctx.save_for_backward(x, weight, bias)
            out = x.mm(weight.t())
            if bias is not None:
                out = out + bias.unsqueeze(0).expand_as(out)
            return out

        @staticmethod
        def backward(ctx, grad_output):
            x, weight, bias = ctx.saved_tensors
            gx = gw = gb = None
            if ctx.needs_input_grad[0]:
                gx = grad_output.mm(weight)
            if ctx.needs_input_grad[1]:
                gw = grad_output.t().mm(x)
            if bias is not None and ctx.needs_input_grad[2]:
                gb = grad_output.sum(0)
            return gx, gw, gb

    class ScaleShift(F):
        """Non-tensor arguments and plain ctx attributes."""

        @staticmethod
        def forward(ctx, x, scale, shift=0.0, tag="unused"):
            ctx.scale = scale
            ctx.tag = tag
            return x * scale + shift

        @staticmethod
        def backward(ctx, grad_output):
            assert ctx.tag == "checked"
            return grad_output * ctx.scale, None, None, None

    class SinCos(F):
        """Two outputs, both saved (outputs saved for backward)."""

        @staticmethod
        def forward(ctx, x):
            s, c = x.sin(), x.cos()
            ctx.save_for_backward(s, c)
            return s, c

        @staticmethod
        def backward(ctx, gs, gc):
            s, c = ctx.saved_tensors
            return gs * c - gc * s

    class Cube(F):
        """Backward in Tensor ops, so it can be differentiated again."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output * 3 * x ** 2

    class Exp(F):
        """Saves its output."""

        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            (y,) = ctx.saved_tensors
            return grad_output * y

    return dict(MyReLU=MyReLU, Linear=Linear, ScaleShift=ScaleShift, SinCos=SinCos, Cube=Cube,
                Exp=Exp)


_FNS = {}


def fns(lib):
    if lib.__name__ not in _FNS:
        _FNS[lib.__name__] = define(lib)
    return _FNS[lib.__name__]


X = np.array([[-1.5, 0.5, 2.0], [0.25, -0.75, 1.0]])


def test_myrelu(torch):
    compare(torch, lambda L, x: fns(L)["MyReLU"].apply(x), X.astype(np.float32))


def test_myrelu_gradcheck():
    x = ember.tensor(X, requires_grad=True)
    assert ember.autograd.gradcheck(define(ember)["MyReLU"].apply, (x,))


@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_linear_function(torch, with_bias, dt):
    w = np.array([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]], dtype=dt)
    b = np.array([0.5, -1.0], dtype=dt)
    if with_bias:
        compare(torch, lambda L, x, w, b: fns(L)["Linear"].apply(x, w, b), X.astype(dt), w, b)
    else:
        compare(torch, lambda L, x, w: fns(L)["Linear"].apply(x, w), X.astype(dt), w)


def test_linear_needs_input_grad(torch):
    for lib in (ember, torch):
        seen = []

        class Probe(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, c):
                seen.append(ctx.needs_input_grad)
                return a * 1

            @staticmethod
            def backward(ctx, g):
                seen.append(ctx.needs_input_grad)
                return g, None, None
        Probe.apply(lib.ones(2, requires_grad=True), lib.ones(2), 3).sum().backward()
        assert seen == [(True, False, False), (True, False, False)]


def test_linear_gradcheck():
    x = ember.tensor(X, requires_grad=True)
    w = ember.tensor(np.arange(6.0).reshape(2, 3) / 10, requires_grad=True)
    b = ember.tensor([0.5, -1.0], dtype=ember.float64, requires_grad=True)
    Linear = fns(ember)["Linear"]
    assert ember.autograd.gradcheck(Linear.apply, (x, w, b))
    assert ember.autograd.gradcheck(Linear.apply, (x, w))


def test_non_tensor_and_optional_args_and_ctx_attributes(torch):
    def fn(L, x):
        return fns(L)["ScaleShift"].apply(x, 2.5, 1.0, "checked")
    compare(torch, fn, X.astype(np.float32))
    res = []
    for lib in (ember, torch):
        x = lib.tensor(X, requires_grad=True)
        y = fns(lib)["ScaleShift"].apply(x, 3.0)
        res.append(y.tolist())
    assert res[0] == res[1]


def test_several_outputs(torch):
    compare(torch, lambda L, x: fns(L)["SinCos"].apply(x), X)
    compare(torch, lambda L, x: fns(L)["SinCos"].apply(x)[0] * 2, X)


def test_several_outputs_share_one_node(torch):
    for lib in (ember, torch):
        s, c = fns(lib)["SinCos"].apply(lib.tensor(X, requires_grad=True))
        assert s.grad_fn is c.grad_fn
        assert type(s.grad_fn).__name__ == "SinCosBackward"


def test_unused_output_gets_zeros_by_default(torch):
    res = []
    for lib in (ember, torch):
        got = []

        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                got.append(g2.tolist())
                return g1 * 2 + g2 * 3
        x = lib.ones(2, requires_grad=True)
        a, _ = Two.apply(x)
        a.sum().backward()
        res.append((got, x.grad.tolist()))
    assert res[0] == res[1] == ([[0.0, 0.0]], [2.0, 2.0])


def test_set_materialize_grads_false_gives_none(torch):
    res = []
    for lib in (ember, torch):
        got = []

        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                got.append(g2)
                return g1 * 2 if g2 is None else g1 * 2 + g2 * 3
        x = lib.ones(2, requires_grad=True)
        a, _ = Two.apply(x)
        a.sum().backward()
        res.append((got, x.grad.tolist()))
    assert res[0] == res[1] == ([None], [2.0, 2.0])


def test_backward_returning_none_for_input(torch):
    res = []
    for lib in (ember, torch):
        class OnlyFirst(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a * b

            @staticmethod
            def backward(ctx, g):
                return g * 2, None
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2, requires_grad=True)
        OnlyFirst.apply(a, b).sum().backward()
        res.append((a.grad.tolist(), b.grad))
    assert res[0] == res[1] == ([2.0, 2.0], None)


def test_extra_trailing_none_gradients_are_accepted(torch):
    for lib in (ember, torch):
        class Extra(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2, None, None
        a = lib.ones(2, requires_grad=True)
        Extra.apply(a).sum().backward()
        assert a.grad.tolist() == [2.0, 2.0]


def test_mark_non_differentiable(torch):
    res = []
    for lib in (ember, torch):
        class MaxIdx(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                idx = x.argmax()
                ctx.mark_non_differentiable(idx)
                ctx.save_for_backward(x, idx)
                return x.max(), idx

            @staticmethod
            def backward(ctx, gv, gi):
                x, idx = ctx.saved_tensors
                g = lib.zeros_like(x)
                g[idx] = gv
                return g
        x = lib.tensor([1.0, 3.0, 2.0], requires_grad=True)
        v, i = MaxIdx.apply(x)
        assert not i.requires_grad and v.requires_grad
        v.backward()
        res.append((v.item(), i.item(), x.grad.tolist()))
    assert res[0] == res[1]


def test_mark_non_differentiable_float_output(torch):
    for lib in (ember, torch):
        class Half(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                a, b = x * 2, x * 3
                ctx.mark_non_differentiable(b)
                return a, b

            @staticmethod
            def backward(ctx, ga, gb):
                return ga * 2
        a, b = Half.apply(lib.ones(2, requires_grad=True))
        assert a.requires_grad and not b.requires_grad and b.grad_fn is None


def test_mark_dirty(torch):
    res = []
    for lib in (ember, torch):
        class Double_(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2
        x = lib.tensor([1.0, 3.0], requires_grad=True)
        h = x * 1
        v = h._version
        out = Double_.apply(h)
        assert out is h and h._version > v
        assert type(h.grad_fn).__name__ == "Double_Backward"
        (out * out).sum().backward()
        res.append((h.tolist(), x.grad.tolist()))
    assert res[0] == res[1]


def test_mark_dirty_on_leaf_raises(torch):
    for lib in (ember, torch):
        class Double_(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            Double_.apply(lib.tensor([1.0, 3.0], requires_grad=True))


def test_input_returned_unchanged_becomes_a_view(torch):
    for lib in (ember, torch):
        class Ident(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2
        x = lib.tensor([1.0, 3.0], requires_grad=True)
        o = Ident.apply(x)
        assert o is not x and o._base is x and o.grad_fn is not None
        o.sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]


def test_saved_output_and_double_backward(torch):
    compare(torch, lambda L, x: fns(L)["Exp"].apply(x), X)
    x = ember.tensor(X, requires_grad=True)
    assert ember.autograd.gradgradcheck(fns(ember)["Exp"].apply, (x,))


def test_second_derivative_of_cube(torch):
    res = []
    for lib in (ember, torch):
        for f in (lambda t: t ** 3, fns(lib)["Cube"].apply):
            x = lib.tensor([2.0, -1.0], requires_grad=True)
            y = f(x)
            (d1,) = lib.autograd.grad(y.sum(), x, create_graph=True)
            (d2,) = lib.autograd.grad(d1.sum(), x, create_graph=True)
            (d3,) = lib.autograd.grad(d2.sum(), x)
            res.append((d1.tolist(), d2.tolist(), d3.tolist()))
    assert res[0] == res[1] == res[2] == res[3] == ([12.0, 3.0], [12.0, -6.0], [6.0, 6.0])


def test_gradgradcheck_custom_function():
    x = ember.tensor(X, requires_grad=True)
    assert ember.autograd.gradgradcheck(fns(ember)["Cube"].apply, (x,))
    assert ember.autograd.gradgradcheck(lambda t: fns(ember)["SinCos"].apply(t), (x,))


def test_once_differentiable(torch):
    for lib in (ember, torch):
        class Sq(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 2 * x
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        Sq.apply(x).sum().backward()
        assert x.grad.tolist() == [2.0, 4.0]
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (g,) = lib.autograd.grad(Sq.apply(x).sum(), x, create_graph=True)
        assert g.tolist() == [2.0, 4.0] and not g.requires_grad   # no upstream graph
        (g,) = lib.autograd.grad(Sq.apply(x), x, lib.ones(2, requires_grad=True),
                                 create_graph=True)
        assert g.tolist() == [2.0, 4.0] and g.requires_grad
        with pytest.raises(RuntimeError, match="trying to differentiate twice a function that "
                                               "was marked with @once_differentiable"):
            g.sum().backward()


def test_once_differentiable_raw_arrays():
    class Sq(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return ember.tensor(x.detach().numpy() ** 2)

        @staticmethod
        @ember.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return ember.tensor(g.numpy() * 2 * x.detach().numpy())
    x = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(Sq.apply, (x,))


def test_save_for_backward_rejects_non_tensor(torch):
    for lib in (ember, torch):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g
        with pytest.raises(TypeError, match="save_for_backward can only save variables"):
            Bad.apply(lib.ones(1, requires_grad=True))


def test_saved_tensors_none_entry(torch):
    res = []
    for lib in (ember, torch):
        class WithNone(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, None)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                x, nothing = ctx.saved_tensors
                assert nothing is None
                return g * 2
        x = lib.ones(2, requires_grad=True)
        WithNone.apply(x).sum().backward()
        res.append(x.grad.tolist())
    assert res[0] == res[1]


def test_saved_tensor_modified_in_place_raises(torch):
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * 1
        y = fns(lib)["MyReLU"].apply(h)
        h.add_(1)
        with pytest.raises(RuntimeError, match="one of the variables needed for gradient "
                                               "computation has been modified by an inplace "
                                               "operation: .* is at version 1; expected version "
                                               "0 instead"):
            y.sum().backward()
        assert x.grad is None


def test_builtin_saved_tensor_modified_in_place_raises(torch):
    msgs = []
    for lib in (ember, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        h = a * 2
        y = h * h
        h.mul_(3)
        h.add_(1)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        msgs.append(str(info.value))
    for m in msgs:
        assert "modified by an inplace operation" in m
        assert "[torch.FloatTensor [2]], which is output 0 of Add" in m
        assert "is at version 2; expected version 0 instead" in m


def test_saved_tensors_after_backward_raise(torch):
    for lib in (ember, torch):
        keep = []

        class Keep(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                keep.append(ctx)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        Keep.apply(lib.ones(2, requires_grad=True)).sum().backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second "
                                               "time \\(or directly access saved tensors after "
                                               "they have already been freed\\)"):
            keep[0].saved_tensors


def test_function_name_of_node(torch):
    for lib in (ember, torch):
        y = fns(lib)["MyReLU"].apply(lib.ones(2, requires_grad=True))
        assert type(y.grad_fn).__name__ == "MyReLUBackward"
        assert y.grad_fn.name() == "MyReLUBackward"


def test_apply_without_grad_records_nothing(torch):
    for lib in (ember, torch):
        y = fns(lib)["MyReLU"].apply(lib.ones(2))
        assert y.grad_fn is None and not y.requires_grad
        with lib.no_grad():
            y = fns(lib)["MyReLU"].apply(lib.ones(2, requires_grad=True))
        assert y.grad_fn is None and not y.requires_grad


def test_integer_output_does_not_require_grad(torch):
    for lib in (ember, torch):
        class Round(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.long()

            @staticmethod
            def backward(ctx, g):
                return None
        assert not Round.apply(lib.ones(2, requires_grad=True)).requires_grad


def test_float64_gradient_for_float32_input_is_cast(torch):
    for lib in (ember, torch):
        class Up(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g.double() * 2
        x = lib.ones(2, requires_grad=True)
        Up.apply(x).sum().backward()
        assert str(x.grad.dtype).endswith("float32") and x.grad.tolist() == [2.0, 2.0]


def test_broadcastable_gradient_is_summed(torch):
    res = []
    for lib in (ember, torch):
        class Wide(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return lib.ones(3, 2)
        x = lib.ones(2, requires_grad=True)
        Wide.apply(x).sum().backward()
        res.append(x.grad.tolist())
    assert res[0] == res[1] == [3.0, 3.0]


class LegacyReLU(ember.autograd.Function):
    def forward(self, x):
        self.save_for_backward(x)
        return x.clamp(min=0)

    def backward(self, grad_output):
        (x,) = self.saved_tensors
        g = grad_output.clone()
        g[x < 0] = 0
        return g


def test_legacy_style_runs_with_deprecation_warning():
    relu = LegacyReLU()
    x = ember.tensor([-1.0, 2.0, 0.5], requires_grad=True)
    with pytest.warns(DeprecationWarning, match="static") as rec:
        y = relu(x)
    assert "@staticmethod" in str(rec[0].message) and "LegacyReLU.apply" in str(rec[0].message)
    assert y.creator is relu and y.grad_fn is relu
    assert y.tolist() == [0.0, 2.0, 0.5]
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0]


def test_legacy_style_without_grad_sets_creator():
    relu = LegacyReLU()
    with pytest.warns(DeprecationWarning):
        y = relu(ember.tensor([-1.0, 2.0]))
    assert y.creator is relu


def test_legacy_apply_is_an_error():
    with pytest.raises(RuntimeError, match="non-static forward method is deprecated"):
        LegacyReLU.apply(ember.ones(1))


def test_new_style_called_as_instance_is_an_error(torch):
    """torch warns at the instance (DeprecationWarning) and refuses the call."""
    got = []
    for lib in (torch, ember):
        with pytest.warns(DeprecationWarning, match="should not be instantiated") as w:
            f = fns(lib)["MyReLU"]()
        with pytest.raises(RuntimeError) as e:
            f(lib.ones(1))
        got.append((str(w[0].message), str(e.value)))
    assert got[0] == got[1]
