"""Compare an ember computation with the same computation in PyTorch.

``compare(fn, *arrays)`` runs ``fn(lib, *tensors)`` with ``lib`` = ember and = torch on the same
input values, checks shape, dtype and values, then back-propagates one *random* upstream
gradient through every floating output and compares every input's ``.grad``.
"""
import numpy as np

import ember


def to_numpy(t):
    if t is None:
        return None
    if hasattr(t, "detach"):
        t = t.detach()
    if hasattr(t, "cpu"):
        t = t.cpu()
    return np.asarray(t.numpy() if hasattr(t, "numpy") else t)


def dtype_name(d):
    return str(d).replace("torch.", "")


def tol(dtype):
    return (1e-4, 1e-5) if str(dtype).endswith("float32") else (1e-7, 1e-9)


def compare(torch, fn, *arrays, grad=True, rtol=None, atol=None, seed=0, check_dtype=True,
            requires_grad=None, device=None):
    """Run ``fn(lib, *inputs)`` in both libraries and assert equal outputs and gradients.

    ``device`` puts ember's inputs (and upstream gradients) on that device (e.g. ``"strict"``);
    every output and gradient must then live on it too.
    """
    rng = np.random.default_rng(seed)
    results = {}
    upstream = None
    for lib in (ember, torch):
        inputs = []
        for i, a in enumerate(arrays):
            if isinstance(a, np.ndarray):
                t = lib.tensor(a.copy(), device=device) if lib is ember else lib.tensor(a.copy())
                rg = grad and a.dtype.kind == "f" and (requires_grad is None or requires_grad[i])
                if rg:
                    t.requires_grad_(True)
                inputs.append(t)
            else:
                inputs.append(a)
        out = fn(lib, *inputs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        outs = [o for o in outs if hasattr(o, "shape")]
        if upstream is None:
            upstream = [rng.standard_normal(tuple(o.shape)).astype(to_numpy(o).dtype)
                        if to_numpy(o).dtype.kind == "f" else None for o in outs]
        if lib is ember and device is not None:
            for o in outs:
                assert str(o.device) == str(device), "an output left device %s" % device
        grads = None
        diff = [(o, u) for o, u in zip(outs, upstream) if u is not None and o.requires_grad]
        if grad and diff:
            lib.autograd.backward([o for o, _ in diff],
                                  [lib.tensor(u, device=device) if lib is ember else
                                   lib.tensor(u) for _, u in diff])
            if lib is ember and device is not None:
                for t in inputs:
                    if getattr(t, "grad", None) is not None:
                        assert str(t.grad.device) == str(device), "a gradient left the device"
            grads = [to_numpy(t.grad) if hasattr(t, "grad") and t.requires_grad else None
                     for t in inputs]
        results[lib.__name__] = ([to_numpy(o) for o in outs], [o.dtype for o in outs], grads)
    (e_out, e_dt, e_g), (t_out, t_dt, t_g) = results["ember"], results["torch"]
    assert len(e_out) == len(t_out), "number of outputs differ"
    for k, (a, b) in enumerate(zip(e_out, t_out)):
        r, at = tol(b.dtype) if rtol is None else (rtol, atol)
        assert a.shape == b.shape, "output %d shape: ember %s, torch %s" % (k, a.shape, b.shape)
        if check_dtype:
            assert dtype_name(e_dt[k]) == dtype_name(t_dt[k]), \
                "output %d dtype: ember %s, torch %s" % (k, e_dt[k], t_dt[k])
        np.testing.assert_allclose(a, b, rtol=r, atol=at, equal_nan=True,
                                   err_msg="output %d values" % k)
    if e_g is not None or t_g is not None:
        assert (e_g is None) == (t_g is None)
        for k, (a, b) in enumerate(zip(e_g, t_g)):
            assert (a is None) == (b is None), "input %d grad: ember %s, torch %s" % (k, a, b)
            if a is None:
                continue
            r, at = tol(b.dtype) if rtol is None else (rtol, atol)
            np.testing.assert_allclose(a, b, rtol=r, atol=at, equal_nan=True,
                                       err_msg="input %d gradient" % k)
    return results
