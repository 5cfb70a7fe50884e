"""What ember cannot go below on this machine: the GEMMs and the Adam update of a W3 and a W6 step.

    python -m benchmarks.floors [--threads 1] [--rounds 7]

ember multiplies matrices through NumPy's BLAS; its element-wise work and Python overhead come
on top. For W3 (MLP) and W6 (LSTM) this times the matrix products of one training step with
the shapes and operand layouts ember's ``nn.Linear`` and LSTM code use, once in NumPy and once
in torch (in torch's own layouts), and the Adam update of the workload's parameters in both
libraries; then each library's whole step. The last column, (NumPy GEMMs + ember's Adam) /
torch's step, is the ratio ember would reach if all its other work took no time at all.
"""
import argparse
import statistics
import time

import numpy as np

from . import workloads as W

__all__ = ["adam_time", "main", "products", "step_time", "time_products"]


def _same(sa, sb, f_np, f_torch):
    """A product whose operands have the same shapes and layouts in both libraries."""
    return (sa, sb, f_np), (sa, sb, f_torch)


def _mlp_products():
    d, h, c, b = W.MLP_SIZES
    lin = lambda x, w: x @ w.T
    lin_t = lambda x, w: x @ w.t()
    grad_w = lambda g, x: g.T @ x
    grad_w_t = lambda g, x: g.t() @ x
    grad_x = lambda g, w: g @ w
    # name, count per step, (ember's operand shapes and product), (torch's)
    return [
        ("x @ W1.T", 1) + _same((b, d), (h, d), lin, lin_t),
        ("h @ W2.T", 1) + _same((b, h), (h, h), lin, lin_t),
        ("h @ W3.T", 1) + _same((b, h), (c, h), lin, lin_t),
        ("g.T @ x (dW1)", 1) + _same((b, h), (b, d), grad_w, grad_w_t),
        ("g.T @ h (dW2)", 1) + _same((b, h), (b, h), grad_w, grad_w_t),
        ("g.T @ h (dW3)", 1) + _same((b, c), (b, h), grad_w, grad_w_t),
        ("g @ W2 (dh1)", 1) + _same((b, h), (h, h), grad_x, grad_x),
        ("g @ W3 (dh2)", 1) + _same((b, c), (c, h), grad_x, grad_x),
    ]


def _lstm_products():
    v, e, h, t, n = W.LSTM_SIZES
    g4, rows = 4 * h, t * n
    per_gate = lambda d, x: [d[k * h:(k + 1) * h] @ x for k in range(4)]
    # ember keeps states transposed, (H, N): each step's gates are W_hh @ h, the input
    # projection of all steps is one batched product, and the gate gradients are stored
    # gate-major, (4H, L*N). torch's layout is (N, 4H) per step and (L*N, 4H) for all steps.
    # Both fold the biases into the input products as an extra input column of ones.
    return [
        ("input projection", 1,
         ((g4, e + 1), (t, n, e + 1), lambda w, x: np.matmul(w, x.transpose(0, 2, 1))),
         ((g4, e + 1), (rows, e + 1), lambda w, x: x @ w.t())),
        ("step: gates from h", t,
         ((g4, h), (h, n), lambda w, x: w @ x), ((g4, h), (n, h), lambda w, x: x @ w.t())),
        ("step: dh from d gates", t,
         ((g4, h), (g4, n), lambda w, d: w.T @ d), ((g4, h), (n, g4), lambda w, d: d @ w)),
        ("dW_ih and bias", 1,
         ((g4, rows), (rows, e + 1), per_gate),
         ((rows, g4), (rows, e + 1), lambda d, x: d.t() @ x)),
        ("dW_hh", 1,
         ((g4, rows), (rows, h), per_gate), ((rows, g4), (rows, h), lambda d, x: d.t() @ x)),
        ("d input", 1,
         ((g4, rows), (g4, e), lambda d, w: d.T @ w), ((rows, g4), (g4, e), lambda d, w: d @ w)),
        ("head: out @ W.T", 1) + _same((rows, h), (v, h), lambda x, w: x @ w.T,
                                       lambda x, w: x @ w.t()),
        ("head: g @ W", 1) + _same((rows, v), (v, h), lambda g, w: g @ w, lambda g, w: g @ w),
        ("head: g.T @ out", 1) + _same((rows, v), (rows, h), lambda g, x: g.T @ x,
                                       lambda g, x: g.t() @ x),
    ]


def products(key):
    """The matrix products of one step of ``key`` ("W3" or "W6")."""
    return {"W3": _mlp_products, "W6": _lstm_products}[key]()


def _median_time(fn, rounds, target_s=0.02):
    fn()
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            fn()
        spent = time.perf_counter() - t
        if spent >= target_s:
            break
        n *= 2
    samples = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t) / n)
    return statistics.median(samples)


def time_products(key, torch=None, rounds=7):
    """[(name, NumPy seconds per step, torch seconds per step or None)] for ``key``'s products."""
    rng = np.random.default_rng(0)
    rows = []
    for name, count, (sa, sb, f_np), (ta, tb, f_torch) in products(key):
        a = rng.standard_normal(sa).astype(np.float32)
        b = rng.standard_normal(sb).astype(np.float32)
        t_np = count * _median_time(lambda f=f_np, a=a, b=b: f(a, b), rounds)
        t_torch = None
        if torch is not None:
            a = torch.from_numpy(rng.standard_normal(ta).astype(np.float32))
            b = torch.from_numpy(rng.standard_normal(tb).astype(np.float32))
            t_torch = count * _median_time(lambda f=f_torch, a=a, b=b: f(a, b), rounds)
        rows.append(("%s (x%d)" % (name, count) if count > 1 else name, t_np, t_torch))
    return rows


def _parameter_shapes(key):
    if key == "W3":
        d, h, c, _ = W.MLP_SIZES
        return [(h, d), (h,), (h, h), (h,), (c, h), (c,)]
    v, e, h, _, _ = W.LSTM_SIZES
    return [(v, e), (4 * h, e), (4 * h, h), (4 * h,), (4 * h,), (v, h), (v,)]


def adam_time(lib, key, rounds=7):
    """Seconds of one ``lib.optim.Adam`` step over the parameters of ``key``'s model."""
    rng = np.random.default_rng(1)
    params = []
    for shape in _parameter_shapes(key):
        p = lib.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
        p.grad = lib.tensor(rng.standard_normal(shape).astype(np.float32) * 1e-3)
        params.append(p)
    opt = lib.optim.Adam(params, lr=1e-3)
    return _median_time(opt.step, rounds)


def step_time(lib, key, rounds=7):
    """Seconds of one training step of workload ``key`` in ``lib``."""
    return _median_time(W.by_key(key).build(lib).step, rounds, target_s=0.1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int,
                    help="limit both libraries' BLAS/OpenMP threads (default: leave them)")
    ap.add_argument("--rounds", type=int, default=7, help="timed rounds per measurement")
    args = ap.parse_args(argv)
    import ember
    from .run import _import_torch, _limit_threads, format_machine, machine_info
    torch = _import_torch()
    if args.threads:
        _limit_threads(args.threads, torch)
    if torch is None:
        print("torch is not installed: NumPy and ember only (no ratio to torch's step)")
    print(format_machine(machine_info(torch)))
    print()
    ms = lambda s: "-" if s is None else "%.2f ms" % (s * 1e3)
    summary = []
    print("| W | product | NumPy | torch |")
    print("|---|---|---|---|")
    for key in ("W3", "W6"):
        rows = time_products(key, torch, args.rounds)
        for name, t_np, t_torch in rows:
            print("| %s | %s | %s | %s |" % (key, name, ms(t_np), ms(t_torch)))
        gemm_np = sum(r[1] for r in rows)
        gemm_torch = sum(r[2] for r in rows) if torch is not None else None
        adam = {"ember": adam_time(ember, key, args.rounds)}
        step = {"ember": step_time(ember, key, args.rounds)}
        if torch is not None:
            adam["torch"] = adam_time(torch, key, args.rounds)
            step["torch"] = step_time(torch, key, args.rounds)
        floor = ("%.2f" % ((gemm_np + adam["ember"]) / step["torch"])
                 if torch is not None else "-")
        summary.append("| %s | %s | %s | %s | %s | %s | %s | %s | <= %g |"
                       % (key, ms(gemm_np), ms(gemm_torch), ms(adam["ember"]),
                          ms(adam.get("torch")), ms(step["ember"]), ms(step.get("torch")),
                          floor, W.by_key(key).target))
    print()
    print("| W | NumPy GEMMs | torch GEMMs | ember Adam | torch Adam | ember step | torch step "
          "| (NumPy GEMMs + ember Adam) / torch step | target |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
