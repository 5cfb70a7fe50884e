"""gradcheck / gradgradcheck: compare analytic gradients with central finite differences.

Inputs may live on any device: the perturbed inputs and the unit vectors are made on the
inputs' devices; the Jacobians are compared on host copies.
"""
import numpy as np

from ..backend import backend_of, to_host

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytic and numerical gradients disagree.

    Attributes (None when not a Jacobian mismatch): ``output_index``, ``input_index``,
    ``input_element``, ``output_element``, ``numerical``, ``analytical``.
    """

    output_index = input_index = input_element = output_element = None
    numerical = analytical = None


def _mismatch(o_idx, i, r, c, numerical, analytical, message):
    err = GradcheckError(message)
    err.output_index, err.input_index = o_idx, i
    err.input_element, err.output_element = r, c
    err.numerical, err.analytical = numerical, analytical
    return err


def _as_tuple(x):
    return x if isinstance(x, tuple) else (tuple(x) if isinstance(x, list) else (x,))


def _differentiable_outputs(fn, inputs):
    from ..tensor import Tensor
    outs = _as_tuple(fn(*inputs))
    return [o for o in outs if isinstance(o, Tensor) and o._requires_grad]


def _as_reals(arr):
    """A host array as float64, a complex one as interleaved (real, imag) pairs."""
    if arr.dtype.kind == "c":
        return np.array(arr, dtype=np.complex128).reshape(-1).view(np.float64)
    return np.array(arr, dtype=np.float64).ravel()


def _numerical_jacobian(fn, inputs, out_index, i, eps):
    """d out[out_index] / d inputs[i] by central differences, as a (numel_in, numel_out) array.

    A complex input or output counts as two reals (its real and imaginary parts, interleaved),
    as torch's gradcheck perturbs and compares both."""
    from ..autograd.grad_mode import no_grad
    from ..tensor import Tensor
    # Perturb a host copy, not the input: under anomaly mode saved arrays are read-only.
    device = backend_of(inputs[i]._array)
    base = np.array(to_host(inputs[i]._array), copy=True)
    flat = base.reshape(-1)
    args = list(inputs)
    cols = []
    if flat.size == 0:
        with no_grad():
            out = _as_tuple(fn(*inputs))[out_index]._array
            return np.zeros((0, out.size * (2 if out.dtype.kind == "c" else 1)))
    steps = (eps, eps * 1j) if base.dtype.kind == "c" else (eps,)

    def run(value, k):
        arr = base.copy()
        arr.reshape(-1)[k] = value
        args[i] = Tensor._wrap(device.asarray(arr), requires_grad=inputs[i]._requires_grad)
        out = _as_tuple(fn(*args))[out_index]._array
        return _as_reals(to_host(out))

    with no_grad():
        for k in range(flat.size):
            orig = flat[k].item()
            for step in steps:
                plus = run(orig + step, k)
                minus = run(orig - step, k)
                cols.append((plus - minus) / (2 * eps))
    return np.array(cols).reshape(flat.size * len(steps), -1)


def _analytic_jacobian(outputs, out_index, inputs, diff_idx):
    """Rows per output element: the vector-Jacobian product with each unit vector."""
    from ..autograd.engine import grad as _grad
    from ..tensor import Tensor
    out = outputs[out_index]
    n_out = out._array.size
    # (a complex output's real and imaginary parts: upstream gradients 1 and 1j)
    units = (1, 1j) if out._array.dtype.kind == "c" else (1,)
    jac = {i: np.zeros((inputs[i]._array.size * (2 if inputs[i]._array.dtype.kind == "c"
                                                 else 1), n_out * len(units)))
           for i in diff_idx}
    xp = backend_of(out._array).xp
    for k in range(n_out):
        for u, unit in enumerate(units):
            g = xp.zeros(out._array.size, dtype=out._array.dtype)
            g[k] = unit
            grads = _grad((out,), tuple(inputs[i] for i in diff_idx),
                          (Tensor._wrap(g.reshape(out._array.shape)),), retain_graph=True,
                          allow_unused=True)
            for i, gi in zip(diff_idx, grads):
                if gi is not None:
                    jac[i][:, k * len(units) + u] = _as_reals(to_host(gi._array))
    return jac


def _forward_jacobian(func, inputs, keep, out_index, i):
    """d out[out_index] / d inputs[i] column by column with forward-mode AD (real tensors), as
    a (numel_in, numel_out) array."""
    from . import forward_ad as fwAD
    from ..tensor import Tensor
    x = inputs[i]
    device = backend_of(x._array)
    rows = []
    with fwAD.dual_level():
        for k in range(x._array.size):
            unit = np.zeros(x._array.size, dtype=to_host(x._array).dtype)
            unit[k] = 1
            args = list(inputs)
            args[i] = fwAD.make_dual(x.detach(), Tensor._wrap(device.asarray(
                unit.reshape(x._array.shape))))
            out = [_as_tuple(func(*args))[j] for j in keep][out_index]
            tangent = fwAD.unpack_dual(out).tangent
            rows.append(np.zeros(out._array.size) if tangent is None
                        else _as_reals(to_host(tangent._array)))
    n_out = [_as_tuple(func(*inputs))[j] for j in keep][out_index]._array.size
    return np.array(rows).reshape(x._array.size, n_out)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, fast_mode=False,
              check_backward_ad=True, check_forward_ad=False, **_ignored):
    """Check ``func``'s gradients against finite differences on float64 inputs.

    Returns True, or raises GradcheckError naming the output, the input index, the element
    and both values (returns False instead when ``raise_exception=False``).

    Example:
        >>> import ember
        >>> x = ember.randn(3, dtype=ember.float64, requires_grad=True)
        >>> ember.autograd.gradcheck(ember.sin, (x,))
        True
    """
    from ..tensor import Tensor
    inputs = _as_tuple(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._requires_grad]
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of them have requires_grad=True.")
    for i in diff_idx:
        if inputs[i]._array.dtype not in (np.float64, np.complex128):
            import warnings
            warnings.warn("Input #%d requires gradient and is not a double precision floating "
                          "point or complex. This check will likely fail if all the inputs are "
                          "not of double precision floating point or complex. " % i,
                          UserWarning, stacklevel=2)
    all_outs = _as_tuple(func(*inputs))
    keep = [j for j, o in enumerate(all_outs) if isinstance(o, Tensor) and o._requires_grad]
    outputs = [all_outs[j] for j in keep]
    try:
        for o_idx in range(len(outputs)):
            modes = []
            if check_backward_ad:
                modes.append(("", _analytic_jacobian(outputs, o_idx, inputs, diff_idx)))
            if check_forward_ad:
                modes.append((" computed with forward mode",
                              {i: _forward_jacobian(func, inputs, keep, o_idx, i)
                               for i in diff_idx}))
            for i, how, analytic in ((i, h, m) for h, m in modes for i in diff_idx):
                # The finite differences run under no_grad: pick outputs by position.
                numeric = _numerical_jacobian(lambda *a: [_as_tuple(func(*a))[j] for j in keep],
                                              inputs, o_idx, i, eps)
                a = analytic[i]
                bad = ~np.isclose(a, numeric, rtol=rtol, atol=atol, equal_nan=True)
                if bad.any():
                    err = np.where(bad, np.abs(a - numeric), -1)
                    r, c = np.unravel_index(np.argmax(err), err.shape)
                    dt = inputs[i]._array.dtype if inputs[i]._array.dtype.kind == "f" else None
                    raise _mismatch(
                        o_idx, i, int(r), int(c), float(numeric[r, c]), float(a[r, c]),
                        "Jacobian%s mismatch for output %d with respect to input %d,\n"
                        "numerical:%s\nanalytical:%s\n"     # (torch's text: in the input's dtype)
                        % (how, o_idx, i, Tensor._wrap(numeric.astype(dt or numeric.dtype)),
                           Tensor._wrap(a.astype(dt or a.dtype))))
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _random_like(rng, arr):
    values = rng.standard_normal(arr.shape)
    if arr.dtype.kind == "c":
        values = values + 1j * rng.standard_normal(arr.shape)
    return values.astype(arr.dtype)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, **_ignored):
    """Check second derivatives: gradcheck of the vector-Jacobian product of ``func``."""
    from ..tensor import Tensor
    from ..autograd.engine import grad as _grad
    from ..autograd.grad_mode import enable_grad
    inputs = _as_tuple(inputs)
    outputs = _differentiable_outputs(func, inputs)
    rng = np.random.default_rng(0)
    if grad_outputs is None:
        grad_outputs = tuple(Tensor._wrap(backend_of(o._array).asarray(
            _random_like(rng, o._array)), requires_grad=True) for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._requires_grad]

    def vjp(*args):
        ins, gos = args[:n_in], args[n_in:]
        with enable_grad():    # also inside gradcheck's finite differences (run under no_grad)
            outs = _differentiable_outputs(func, ins)
            gs = _grad(tuple(outs), tuple(ins[i] for i in diff_idx), tuple(gos),
                       create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(vjp, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
