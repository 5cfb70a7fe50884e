"""Regressions found by the round-2 "func" real programs (tests/programs/p_r2func_*.py): anomaly
mode's messages and warnings, gradcheck's input checks, user autograd.Functions under torch.func
transforms, and ``autograd.grad(is_grads_batched=True)``. torch is the oracle throughout."""
import warnings

import numpy as np
import pytest

import ember


def _both(torch, fn):
    """``fn(lib)`` under torch and ember: (kind, text) of the result or the exception."""
    out = []
    for lib in (torch, ember):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(("ok", fn(lib)))
        except Exception as e:     # noqa: BLE001 - the exception is the compared result
            out.append((type(e).__name__, str(e)))
    return out


def _same_error(torch, fn):
    t, e = _both(torch, fn)
    assert t[0] != "ok", t
    assert e == t


def _np(t):
    return t.detach().numpy()


def test_anomaly_nan_message_has_no_traceback_and_warns_the_forward_stack(torch):
    msgs = []
    for lib in (torch, ember):
        x = lib.zeros(3, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                y = lib.sqrt(x) * 0  # FORWARD-LINE
                with pytest.raises(RuntimeError) as info:
                    y.sum().backward()
        text = [str(m.message) for m in w if "Error detected" in str(m.message)]
        assert len(text) == 1
        assert text[0].startswith("Error detected in SqrtBackward0. Traceback of forward call "
                                  "that caused the error:\n")
        assert "FORWARD-LINE" in text[0]
        msgs.append(str(info.value))
    assert msgs[1] == msgs[0] == "Function 'SqrtBackward0' returned nan values in its 0th output."


def test_anomaly_warns_for_an_error_raised_in_a_user_backward(torch):
    got = []
    for lib in (torch, ember):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                raise RuntimeError("Some error in backward")

        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                out = Bad.apply(lib.ones(2, requires_grad=True)).sum()
                with pytest.raises(RuntimeError) as info:
                    out.backward()
        got.append((str(info.value), [str(m.message).split(".")[0] for m in w
                                      if "Error detected" in str(m.message)]))
    assert got[1] == got[0] == ("Some error in backward", ["Error detected in BadBackward"])


def test_anomaly_node_made_outside_the_mode_warns_no_forward_information(torch):
    got = []
    for lib in (torch, ember):
        x = lib.zeros(2, requires_grad=True)
        y = (lib.sqrt(x) * 0).sum()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                with pytest.raises(RuntimeError):
                    y.backward()
        got.append([str(m.message).split(" (Triggered internally")[0] for m in w
                    if "Error detected" in str(m.message)])
    assert got[1] == got[0] and len(got[0]) == 1


def test_gradcheck_input_messages(torch):
    _same_error(torch, lambda lib: lib.autograd.gradcheck(
        lib.sin, (lib.ones(3, dtype=lib.float64),)))
    got = []
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.autograd.gradcheck(lib.sin, (lib.ones(3, requires_grad=True),), eps=1e-3,
                                   atol=1e-2, rtol=1e-2)
        got.append([str(m.message) for m in w if "double precision" in str(m.message)])
    assert got[1] == got[0] and len(got[0]) == 1


def _functions(lib):
    Function = lib.autograd.Function

    class OldStyle(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class NoVmap(Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Both(NoVmap):
        generate_vmap_rule = True

        @staticmethod
        def vmap(info, in_dims, x):
            return x * 2, in_dims[0]

    class Generated(NoVmap):
        generate_vmap_rule = True

    class OwnRule(NoVmap):
        @staticmethod
        def vmap(info, in_dims, x):
            return NoVmap.forward(x), in_dims[0]

    return OldStyle, NoVmap, Both, Generated, OwnRule


@pytest.mark.parametrize("case", ["old-vmap", "old-grad", "old-jacrev", "old-jvp", "novmap",
                                  "novmap-unbatched", "both"])
def test_user_function_errors_under_func_transforms(torch, case):
    def run(lib):
        func = lib.func
        OldStyle, NoVmap, Both, _, _ = _functions(lib)
        x = lib.ones(2, 3)
        if case == "old-vmap":
            return func.vmap(OldStyle.apply)(x)
        if case == "old-grad":
            return func.grad(lambda t: OldStyle.apply(t).sum())(x)
        if case == "old-jacrev":
            return func.jacrev(OldStyle.apply)(lib.ones(2))
        if case == "old-jvp":
            return func.jvp(OldStyle.apply, (lib.ones(2),), (lib.ones(2),))
        if case == "novmap":
            return func.vmap(NoVmap.apply)(x)
        if case == "novmap-unbatched":
            return func.vmap(lambda t: NoVmap.apply(lib.ones(3)) + t)(x)
        return func.vmap(Both.apply)(x)
    _same_error(torch, run)


def test_user_functions_that_transforms_accept(torch):
    res = []
    for lib in (torch, ember):
        OldStyle, NoVmap, _, Generated, OwnRule = _functions(lib)
        x = lib.arange(6.0).reshape(2, 3)
        res.append([_np(lib.func.vmap(Generated.apply)(x)),
                    _np(lib.func.vmap(OwnRule.apply)(x)),
                    _np(lib.func.grad(lambda t: NoVmap.apply(t).sum())(x)),
                    _np(OldStyle.apply(x)),
                    lib.autograd.Function.generate_vmap_rule])
    for a, b in zip(*res):
        np.testing.assert_array_equal(b, a)


def test_function_base_vmap_staticmethod(torch):
    _same_error(torch, lambda lib: lib.autograd.Function.vmap(None, (0,), lib.ones(2)))


def test_grad_is_grads_batched_values(torch):
    res = []
    for lib in (torch, ember):
        w = lib.tensor([1.0, 2.0, 0.5], requires_grad=True)
        f = (w[0] ** 2 * w[1] + lib.sin(w[2]) * w[0] + w[1] ** 3)
        g, = lib.autograd.grad(f, w, create_graph=True)
        H, = lib.autograd.grad(g, w, lib.eye(3), retain_graph=True, is_grads_batched=True)
        z = lib.ones(2, requires_grad=True)
        u = lib.autograd.grad([w * w], [w, z], [lib.arange(12.0).reshape(4, 3)],
                              is_grads_batched=True, allow_unused=True, retain_graph=True)
        m = lib.autograd.grad([w * w], [w, z], [lib.ones(2, 3)], is_grads_batched=True,
                              materialize_grads=True)
        hw, = lib.autograd.grad(w ** 3, w, lib.eye(3), is_grads_batched=True, create_graph=True)
        hw2, = lib.autograd.grad(hw.sum(), w)
        res.append([_np(H), _np(u[0]), u[1], _np(m[0]), _np(m[1]), _np(hw), hw.requires_grad,
                    _np(hw2)])
    for a, b in zip(*res):
        if a is None:
            assert b is None
        else:
            np.testing.assert_allclose(b, a, rtol=1e-6)


@pytest.mark.parametrize("go", [(3,), (2, 4), (), (2, 3, 3)])
def test_grad_is_grads_batched_shape_errors(torch, go):
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        return lib.autograd.grad(x * x, x, lib.ones(go), is_grads_batched=True)
    _same_error(torch, run)


def test_grad_is_grads_batched_needs_same_batch_sizes(torch):
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        return lib.autograd.grad([x * x, x * 2], x, [lib.ones(2, 3), lib.ones(4, 3)],
                                 is_grads_batched=True)
    _same_error(torch, run)
