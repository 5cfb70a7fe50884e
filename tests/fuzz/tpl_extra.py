"""Fuzz templates for ops of ember/ops/extra.py the probe cannot reach: ``bincount`` (torch and
Tensor)."""
from .ops import Gen  # noqa: F401  (the argument drawer the templates receive)

__all__ = ["TEMPLATES", "HAND"]


def _extra_bincount(g):
    n = 5 if g.probe else g.pick([0, 1, 3, 5, 8])
    if g.chance(0.8):     # mostly valid: non-negative integers in a 1-D tensor
        dt = g.pick(["int64", "int64", "int32", "uint8", "int16", "int8"])
        inp = g.idx((n,), g.pick([4, 1, 7, 0]), dtype=dt)
    else:                 # wrong dtype, negative values or not 1-D
        shape = g.pick([(n,), (2, 3), ()])
        inp = g.tensor(shape, "u", dtype=g.pick(["int64", "float32", "bool", "float64"]),
                       grad=False)
    kw = {}
    if g.chance(0.5):
        m = n if g.chance(0.85) else g.pick([n + 1, 0 if n else 1])
        wdt = g.pick(["float32", "float64", "float64", "int64", "float16", "bool", "int32"])
        kw["weights"] = g.tensor((m,), "u", dtype=wdt, layout="c")
    if g.chance(0.4):
        kw["minlength"] = g.pick([0, 3, 10, -1])
    return [inp], kw


TEMPLATES = {"extra_bincount": _extra_bincount}
HAND = {("torch", "bincount"): ["extra_bincount"], ("Tensor", "bincount"): ["extra_bincount"]}
