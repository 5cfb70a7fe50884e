"""Tensor's operators with an operand that is neither a tensor nor a number answer
NotImplemented, as torch's: Python then raises its own TypeError (or the operand's operator
answers), never an op's argument error or a silent result."""
import decimal
import fractions
import operator

import pytest

import ember

torch = pytest.importorskip("torch")

_OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
        operator.mod, operator.pow, operator.matmul, operator.and_, operator.or_, operator.xor,
        operator.lshift, operator.rshift]
_IOPS = [operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ifloordiv,
         operator.imod, operator.ipow, operator.iand, operator.ior, operator.ixor,
         operator.ilshift, operator.irshift]


class _Floaty:
    def __float__(self):
        return 2.0


_OTHERS = [[1, 2], (1, 2), None, "a", fractions.Fraction(1, 2), decimal.Decimal("0.5"),
           _Floaty(), range(2), {1: 2}]


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:   # noqa: BLE001 (the outcome is what is compared)
        return "raise", type(e).__name__, str(e)
    return "value", type(r).__name__, repr(r.tolist() if hasattr(r, "tolist") else r)


@pytest.mark.parametrize("op", _OPS + _IOPS, ids=lambda o: o.__name__)
@pytest.mark.parametrize("flip", [False, True])
def test_operator_with_a_non_number_operand(op, flip):
    if flip and op in _IOPS:
        return
    for other in _OTHERS:
        def fn(lib):
            t = lib.tensor([1, 2])
            return (lambda: op(other, t)) if flip else (lambda: op(t, other))
        assert _outcome(fn(ember)) == _outcome(fn(torch)), (op.__name__, other, flip)
