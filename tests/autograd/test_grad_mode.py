"""no_grad / enable_grad / set_grad_enabled as context managers and decorators, their
thread-locality, and the Variable compatibility wrapper."""
import threading
import warnings

import pytest

import ember

__all__ = []


def test_no_grad_context(torch):
    for lib in (ember, torch):
        x = lib.ones(2, requires_grad=True)
        with lib.no_grad():
            y = x * 2
            assert not lib.is_grad_enabled()
        assert lib.is_grad_enabled()
        assert not y.requires_grad and y.grad_fn is None and y.is_leaf


def test_enable_grad_inside_no_grad(torch):
    for lib in (ember, torch):
        x = lib.ones(2, requires_grad=True)
        with lib.no_grad():
            with lib.enable_grad():
                y = x * 2
            z = x * 2
        assert y.requires_grad and not z.requires_grad


def test_set_grad_enabled_context_and_function(torch):
    for lib in (ember, torch):
        x = lib.ones(2, requires_grad=True)
        with lib.set_grad_enabled(False):
            assert not (x * 2).requires_grad
        assert lib.is_grad_enabled()
        lib.set_grad_enabled(False)
        try:
            assert not lib.is_grad_enabled()
            assert not (x * 2).requires_grad
        finally:
            lib.set_grad_enabled(True)
        assert (x * 2).requires_grad
        with lib.set_grad_enabled(True):
            assert (x * 2).requires_grad


def test_decorators(torch):
    for lib in (ember, torch):
        x = lib.ones(2, requires_grad=True)

        @lib.no_grad()
        def off(t):
            return t * 2

        @lib.enable_grad()
        def on(t):
            return t * 2

        @lib.set_grad_enabled(False)
        def off2(t):
            return t * 2

        assert lib.is_grad_enabled()
        assert not off(x).requires_grad
        with lib.no_grad():
            assert on(x).requires_grad
        assert not off2(x).requires_grad
        assert lib.is_grad_enabled()
        assert off.__name__ == "off"


def test_decorated_generator(torch):
    for lib in (ember, torch):
        x = lib.ones(2, requires_grad=True)

        @lib.no_grad()
        def gen():
            for _ in range(2):
                yield (x * 2).requires_grad, lib.is_grad_enabled()

        for item in gen():
            assert item == (False, False)
            assert lib.is_grad_enabled()


def test_mode_restored_after_exception(torch):
    for lib in (ember, torch):
        with pytest.raises(ValueError):
            with lib.no_grad():
                raise ValueError
        assert lib.is_grad_enabled()


def test_no_grad_nested_restores_outer_state(torch):
    for lib in (ember, torch):
        with lib.no_grad():
            with lib.no_grad():
                pass
            assert not lib.is_grad_enabled()
        assert lib.is_grad_enabled()


def test_autograd_namespace_has_modes(torch):
    for name in ("no_grad", "enable_grad", "set_grad_enabled"):
        assert getattr(ember.autograd, name) is getattr(ember, name)
        assert getattr(torch.autograd, name) is getattr(torch, name)


def test_inference_mode(torch):
    for lib in (ember, torch):
        x = lib.ones(2, requires_grad=True)
        with lib.inference_mode():
            y = x * 2
        assert not y.requires_grad
        with lib.inference_mode(False):
            assert (x * 2).requires_grad


def test_grad_mode_is_thread_local(torch):
    for lib in (ember, torch):
        seen = {}
        inside = threading.Event()
        release = threading.Event()

        def worker():
            x = lib.ones(2, requires_grad=True)
            seen["worker_enabled"] = lib.is_grad_enabled()
            seen["worker_records"] = (x * 2).requires_grad
            inside.set()
            release.wait(5)

        with lib.no_grad():
            t = threading.Thread(target=worker)
            t.start()
            inside.wait(5)
            seen["main_enabled"] = lib.is_grad_enabled()
            release.set()
            t.join()
        assert seen == {"worker_enabled": True, "worker_records": True, "main_enabled": False}


def test_no_grad_in_thread_does_not_leak_to_main(torch):
    for lib in (ember, torch):
        inside = threading.Event()
        release = threading.Event()

        def worker():
            with lib.no_grad():
                inside.set()
                release.wait(5)

        t = threading.Thread(target=worker)
        t.start()
        inside.wait(5)
        enabled = lib.is_grad_enabled()
        release.set()
        t.join()
        assert enabled


def test_backward_under_no_grad_still_works(torch):
    res = []
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        with lib.no_grad():
            y.backward()
        res.append(x.grad.tolist())
    assert res[0] == res[1]


def test_variable_wraps_and_shares(torch):
    for lib in (ember, torch):
        V = lib.autograd.Variable
        t = lib.tensor([1.0, 2.0])
        v = V(t, requires_grad=True)
        assert v.requires_grad and isinstance(v, lib.Tensor)
        y = (v * v).mean()
        y.backward()
        assert v.grad.tolist() == [1.0, 2.0]
        assert not V(t).requires_grad
        assert isinstance(t, V)


def test_variable_volatile_warns_and_records_nothing(torch):
    e = ember.autograd.Variable(ember.ones(2), volatile=True)
    with pytest.warns(UserWarning, match="volatile was removed"):
        e = ember.autograd.Variable(ember.ones(2), volatile=True)
    assert not e.requires_grad and (e * 2).grad_fn is None
    with pytest.warns(UserWarning, match="volatile was removed"):
        torch.autograd.Variable(torch.ones(2), volatile=True)


def test_variable_of_non_tensor_raises():
    with pytest.raises(TypeError, match="Variable data has to be a tensor"):
        ember.autograd.Variable([1.0, 2.0])


def test_variable_data_and_grad_data_sgd_step(torch):
    res = []
    for lib in (ember, torch):
        w = lib.autograd.Variable(lib.tensor([1.0, -1.0]), requires_grad=True)
        for _ in range(3):
            loss = (w * w).sum()
            loss.backward()
            w.data -= 0.1 * w.grad.data
            w.grad.data.zero_()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            res.append(w.tolist())
    assert res[0] == pytest.approx(res[1])
