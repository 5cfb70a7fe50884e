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
        if kind not in ("forward", "strict") and (not op.differentiable or op.skip_gradcheck):
            continue
        if kind == "gradgrad" and not op.double_backward:
            continue
        dtypes = op.dtypes if kind == "forward" else (np.float64,)
        if kind == "strict":
            dtypes = op.dtypes[-1:]
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


@pytest.mark.parametrize("op, dtype, sample", _cases("strict"))
def test_strict_device(torch, op, dtype, sample):
    """The same comparison on the strict test device (NumPy behind CuPy's rules): a host array
    that slipped into an op, or an output or gradient that left the device, fails here."""
    _check_sample(sample)
    rtol = atol = None
    if op.rtol is not None or op.atol is not None:
        default_rtol, default_atol = tol(dtype)
        rtol = default_rtol if op.rtol is None else op.rtol
        atol = default_atol if op.atol is None else op.atol
    compare(torch, op.fn, *sample, grad=op.differentiable, rtol=rtol, atol=atol,
            check_dtype=op.check_dtype, requires_grad=grad_mask(op, sample), device="strict")


def _arrays_in(value, depth=0):
    """Names of raw backend arrays held in ``value`` (a node's attribute), searched shallowly."""
    if ember.backend.is_array(value):
        return True
    if depth < 2 and isinstance(value, (tuple, list)):
        return any(_arrays_in(v, depth + 1) for v in value)
    if depth < 2 and isinstance(value, dict):
        return any(_arrays_in(v, depth + 1) for v in value.values())
    return False


@pytest.mark.parametrize("op, dtype, sample", _cases("gradcheck"))
def test_saved_state_channel(op, dtype, sample):
    """Every node keeps what it needs for backward through save_for_backward: no raw array
    on a node's attributes, and nothing left on any node after backward."""
    _check_sample(sample)
    if not _has_grad_input(op, sample):
        pytest.skip("no floating input requires grad")
    inputs = _ember_inputs(op, sample)
    out = op.fn(ember, *inputs)
    outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,))
            if isinstance(o, ember.Tensor) and o.grad_fn is not None]
    nodes = []
    stack = [o.grad_fn for o in outs]
    while stack:
        node = stack.pop()
        if node is None or node in nodes or not hasattr(node, "next_functions"):
            continue
        nodes.append(node)
        stack.extend(fn for fn, _ in node.next_functions)
    for node in nodes:
        held = [k for k, v in vars(node).items() if _arrays_in(v)]
        assert not held, "%s keeps raw arrays outside save_for_backward: %s" % (node.name(), held)
    if outs:
        ember.autograd.backward([o.sum() for o in outs])
        for node in nodes:
            assert getattr(node, "_saved", None) is None, "%s kept its saved tensors" % node.name()


@pytest.mark.parametrize("op, dtype, sample", _cases("gradcheck"))
def test_one_gradient_formula(op, dtype, sample):
    """The gradients without a graph (an op's array_backward, where it has one) equal those of
    its Tensor-op backward (run under create_graph=True)."""
    _check_sample(sample)
    if not _has_grad_input(op, sample):
        pytest.skip("no floating input requires grad")
    results = []
    for create_graph in (False, True):
        inputs = _ember_inputs(op, sample)
        out = op.fn(ember, *inputs)
        outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,))
                if isinstance(o, ember.Tensor) and o.requires_grad]
        wrt = [t for t in inputs if isinstance(t, ember.Tensor) and t.requires_grad]
        if not outs:
            pytest.skip("no differentiable output")
        rng = np.random.default_rng(1)
        ups = [ember.tensor(rng.standard_normal(tuple(o.shape)).astype(o.numpy(force=True).dtype))
               for o in outs]
        grads = ember.autograd.grad(outs, wrt, ups, create_graph=create_graph, allow_unused=True)
        results.append([None if g is None else g.detach().numpy() for g in grads])
    for a, b in zip(*results):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, equal_nan=True)


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
