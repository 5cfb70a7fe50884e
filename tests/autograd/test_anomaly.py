"""Anomaly mode, in-place diagnostics and graph-lifetime messages."""
import warnings

import numpy as np
import pytest

import ember


def test_nan_from_sqrt_backward_names_node_and_forward_line():
    # torch's error names the node; the forward traceback comes in a warning before it
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ember.autograd.detect_anomaly():
            y = x.sqrt()  # FORWARD-LINE-SQRT
            loss = (y * 0).sum()
            with pytest.raises(RuntimeError) as info:
                loss.backward()
    assert str(info.value) == "Function 'SqrtBackward0' returned nan values in its 0th output."
    texts = [str(w.message) for w in caught if "Error detected in SqrtBackward0" in str(w.message)]
    assert texts and "test_anomaly.py" in texts[0] and "FORWARD-LINE-SQRT" in texts[0]


def test_without_anomaly_mode_nan_passes_silently():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    (x.sqrt() * 0).sum().backward()
    assert np.isnan(x.grad.numpy()[0])


def test_set_detect_anomaly_toggles():
    assert not ember.autograd.is_anomaly_enabled()
    with ember.autograd.set_detect_anomaly(True):
        assert ember.autograd.is_anomaly_enabled()
    assert not ember.autograd.is_anomaly_enabled()


def test_inplace_on_saved_tensor_raises_in_backward_as_torch():
    """Under anomaly mode an in-place change of a saved tensor goes ahead (torch marks nothing
    read-only); backward's version check raises torch's error, word for word."""
    torch = pytest.importorskip("torch")
    got = []
    for lib in (torch, ember):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                y = x * 2
                z = y.exp()         # ExpBackward0 saves its output z
                z.add_(1)
                w = y.sin()         # SinBackward0 saves its input y
                y.mul_(3)
                with pytest.raises(RuntimeError) as info:
                    (z.sum() + w.sum()).backward()
        got.append((str(info.value), z.detach().numpy(), y.detach().numpy()))
    assert got[0][0] == got[1][0]
    for a, b in zip(got[0][1:], got[1][1:]):
        np.testing.assert_allclose(b, a, rtol=1e-6)


def _version_errors(lib, make):
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
        make(lib)
    return str(info.value)


@pytest.mark.parametrize("case", ["output", "input", "leaf", "view", "0-d", "float64"])
def test_version_error_message_is_torchs(torch, case):
    def make(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True,
                       dtype=lib.float64 if case == "float64" else lib.float32)
        if case in ("output", "float64"):
            z = (x * 2).exp()           # exp saves its output
            z.add_(1)
        elif case == "input":
            y = x * 2
            z = y.sin()                 # sin saves its input
            y.mul_(3)
        elif case == "leaf":
            z = x * x
            with lib.no_grad():
                x.add_(1)
        elif case == "view":
            y = x * 1
            z = y[1:].sin()             # sin saves the view
            y.mul_(2)
        else:
            z = x[0].exp()
            z.add_(1)
        z.sum().backward()
    assert _version_errors(ember, make) == _version_errors(torch, make)


def test_anomaly_trace_in_version_error(torch):
    # The trace recorded under anomaly mode is shown (as torch, in a warning) only while
    # anomaly mode is on at backward; the message is torch's either way.
    def make(lib, during):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.autograd.detect_anomaly():
            y = x * 2
            z = y.sin()  # SAVING-LINE
        y.mul_(3)       # (leaving anomaly mode made ember's saved arrays writable again)
        if during:
            with lib.autograd.detect_anomaly():
                z.sum().backward()
        z.sum().backward()
    assert _version_errors(ember, lambda L: make(L, False)) == \
        _version_errors(torch, lambda L: make(L, False))
    with pytest.warns(UserWarning, match="SAVING-LINE"):
        got = _version_errors(ember, lambda L: make(L, True))
    with pytest.warns(UserWarning):
        want = _version_errors(torch, lambda L: make(L, True))
    assert got == want


def test_backward_twice_names_the_freed_node(torch):
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.backward()


def test_retain_graph_allows_second_backward(torch):
    grads = []
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])


def test_non_leaf_grad_warning_and_retain_grad(torch):
    out = []
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        (y * y).sum().backward(retain_graph=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert y.grad is None
        assert any("not a leaf Tensor" in str(w.message) for w in caught), lib.__name__
        y2 = x * 3
        y2.retain_grad()
        loss = (y2 * y2).sum()
        loss.backward(retain_graph=True)
        loss.backward()      # retained non-leaf gradients accumulate across calls, as torch's
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out.append(y2.grad.numpy().copy())
    np.testing.assert_allclose(out[0], out[1])
    np.testing.assert_allclose(out[0], 4 * np.array([3.0, 6.0]))


def test_detect_anomaly_warns_as_torch():
    torch = pytest.importorskip("torch")
    got = []
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly(check_nan=False):
                pass
            lib.autograd.set_detect_anomaly(True)
            lib.autograd.set_detect_anomaly(False)
        got.append([(m.category.__name__, str(m.message)) for m in w])
    assert got[0] == got[1]
