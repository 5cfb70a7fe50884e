"""Templates for binomial, lobpcg and linear_cross_entropy (merged into ops.py's)."""
from .ops import Gen  # noqa: F401  (the argument drawer these functions receive)


def _binomial(g):
    shape = g.pick([(3,), (2, 3), (), (0,)])
    dt = g.pick(["float32", "float64", "float64", "float16", "int64"])
    # (finite integral counts: torch's sampler never returns for a NaN count)
    return [g.tensor(shape, ("idx", 30), dtype=dt, grad=False),
            g.tensor(g.broadcast_like(shape), "prob", dtype=dt, grad=False)], {}


def _lobpcg(g):
    # (a symmetric positive definite A with a starting block X: deterministic in both
    # libraries; eigenvector signs are arbitrary, so lobpcg is in RANDOM: structure only)
    n = g.pick([6, 9])
    k = g.pick([1, 2])
    return [g.tensor((n, n), "spd", dtype="float64")], \
        {"k": k, "X": g.tensor((n, k), "u", dtype="float64", grad=False),
         "niter": g.pick([3, 10]), "largest": g.pick([True, False])}


def _linear_ce(g):
    n, d, c = g.pick([2, 3, 0]), g.pick([4, 1]), g.pick([3, 5])
    dt = g.dtype()
    kwargs = {"reduction": g.pick(["mean", "sum", "none"])}
    if g.chance(0.4):
        kwargs["linear_bias"] = g.tensor((c,), dtype=dt)
    if g.chance(0.3):
        kwargs["label_smoothing"] = g.pick([0.1, 0.0])
    if g.chance(0.2):
        kwargs["ignore_index"] = g.pick([0, -100])
    return [g.tensor((n, d), dtype=dt), g.tensor((c, d), dtype=dt),
            g.idx((n,), c + (1 if g.chance(0.05) else 0))], kwargs


TEMPLATES = {"lead_binomial": _binomial, "lead_lobpcg": _lobpcg, "lead_linear_ce": _linear_ce}
HAND = {("torch", "binomial"): ["lead_binomial"], ("torch", "lobpcg"): ["lead_lobpcg"],
        ("F", "linear_cross_entropy"): ["lead_linear_ce"]}
