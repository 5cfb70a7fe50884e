"""Generic tests over every op-database entry: torch parity, gradcheck, gradgradcheck."""
import numpy as np
import pytest

import ember
from opdb import all_ops, grad_mask, import_errors
from oracle import compare, tol

__all__ = []


def _cases(kind):
    """``pytest.param(op, dtype, sample)`` for each (op, dtype, sample) the test ``kind`` runs."""
    params = []
    for op in all_ops():
        if kind != "forward" and (not op.differentiable or op.skip_gradcheck):
            continue
        if kind == "gradgrad" and not op.double_backward:
            continue
        dtypes = op.dtypes if kind == "forward" else (np.float64,)
        for dt in dtypes:
            dt = np.dtype(dt)
            try:
                samples = list(op.samples(dt))
            except Exception as e:  # noqa: BLE001  (a broken generator fails its own test)
                params.append(pytest.param(op, dt, e, id="%s-%s-samples" % (op.name, dt.name)))
                continue
            for k, sample in enumerate(samples):
                params.append(pytest.param(op, dt, tuple(sample),
                                           id="%s-%s-%d" % (op.name, dt.name, k)))
    return params


def _ember_inputs(op, sample):
    mask = grad_mask(op, sample)
    out = []
    for a, rg in zip(sample, mask):
        if isinstance(a, np.ndarray):
            t = ember.tensor(a.copy())
            if rg:
                t.requires_grad_(True)
            out.append(t)
        else:
            out.append(a)
    return out


def _check_sample(sample):
    if isinstance(sample, Exception):
        raise sample


def test_families_import():
    errors = import_errors()
    assert not errors, "op-database modules failed to import: %s" % errors


def test_entry_names_unique():
    names = [op.name for op in all_ops()]
    dup = sorted({n for n in names if names.count(n) > 1})
    assert not dup, "duplicate OpInfo names: %s" % dup


@pytest.mark.parametrize("op, dtype, sample", _cases("forward"))
def test_matches_torch(torch, op, dtype, sample):
    """Outputs (shape, dtype, values) and every input's gradient under a random upstream grad."""
    _check_sample(sample)
    rtol = atol = None
    if op.rtol is not None or op.atol is not None:
        default_rtol, default_atol = tol(dtype)
        rtol = default_rtol if op.rtol is None else op.rtol
        atol = default_atol if op.atol is None else op.atol
    compare(torch, op.fn, *sample, grad=op.differentiable, rtol=rtol, atol=atol,
            check_dtype=op.check_dtype, requires_grad=grad_mask(op, sample))


def _fn(op):
    def fn(*inputs):
        return op.fn(ember, *inputs)
    return fn


def _has_grad_input(op, sample):
    return any(grad_mask(op, sample))


@pytest.mark.parametrize("op, dtype, sample", _cases("gradcheck"))
def test_gradcheck(op, dtype, sample):
    """Analytic gradients equal central finite differences in float64."""
    _check_sample(sample)
    if not _has_grad_input(op, sample):
        pytest.skip("no floating input requires grad")
    inputs = _ember_inputs(op, sample)
    assert ember.autograd.gradcheck(_fn(op), tuple(inputs), **op.gradcheck_kwargs)


@pytest.mark.parametrize("op, dtype, sample", _cases("gradgrad"))
def test_gradgradcheck(op, dtype, sample):
    """Second derivatives (backward of backward) equal finite differences in float64."""
    _check_sample(sample)
    if not _has_grad_input(op, sample):
        pytest.skip("no floating input requires grad")
    inputs = _ember_inputs(op, sample)
    assert ember.autograd.gradgradcheck(_fn(op), tuple(inputs), **op.gradcheck_kwargs)
