"""Regressions of the random-program fuzzer's session-14 seeds (41-43), compared with torch."""
import warnings

import numpy as np
import pytest

import ember
from fuzz.programs import check


def _run(L, name, grad):
    """``name`` on ``y.expand(2)`` (``y = x * 1``): y's values and x's gradient, or the error
    (its phase, class and message)."""
    m = L.tensor([True, False])
    i = L.tensor([0, 1])
    v = L.tensor(5.0, dtype=L.float64)
    ops = {
        "masked_fill_": lambda z: z.masked_fill_(m, 0.0),
        "masked_fill_t": lambda z: z.masked_fill_(m, L.tensor(-1.0, dtype=L.float64)),
        "setitem_mask": lambda z: z.__setitem__(m, 0.0),
        "setitem_mask_t": lambda z: z.__setitem__(m, L.tensor([5.0], dtype=L.float64)),
        "setitem_int": lambda z: z.__setitem__(L.tensor([1]), 7.0),
        "index_put_": lambda z: z.index_put_((i,), v),
        "index_put_values": lambda z: z.index_put_((i,), L.tensor([5.0, 6.0], dtype=L.float64)),
        "index_fill_": lambda z: z.index_fill_(0, L.tensor([0]), 3.0),
        "fill_": lambda z: z.fill_(2.0),
        "zero_": lambda z: z.zero_(),
        # torch refuses these on an expanded tensor even without a graph
        "mul_": lambda z: z.mul_(2),
        "copy_": lambda z: z.copy_(L.tensor([1.0, 2.0], dtype=L.float64)),
        "scatter_": lambda z: z.scatter_(0, L.tensor([0]), 4.0),
        "index_copy_": lambda z: z.index_copy_(0, L.tensor([0]), L.tensor([3.0], dtype=L.float64)),
    }
    x = L.tensor([0.5], dtype=L.float64, requires_grad=grad)
    y = x * 1
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ops[name](y.expand(2))
    except RuntimeError as e:
        return ("forward", str(e))
    out = [y.tolist(), len(w)]
    if grad:
        assert y.grad_fn.name().endswith("CopySlices")
        try:
            y.sum().backward()
            out.append(x.grad.tolist())
        except RuntimeError as e:
            out.append(("backward", str(e)))
    return out


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("name", ["masked_fill_", "masked_fill_t", "setitem_mask", "setitem_mask_t",
                                  "setitem_int", "index_put_", "index_put_values", "index_fill_",
                                  "fill_", "zero_", "mul_", "copy_", "scatter_", "index_copy_"])
def test_inplace_on_expanded_view(torch, name, grad):
    """masked_fill_/index_put_/index_fill_/fill_/zero_ write into an expanded tensor (the
    shared memory takes the last written value; deprecation warnings on the indexed ones);
    with a graph torch records CopySlices and its backward raises the overlap error (ember
    raised in forward); other in-place ops raise in forward in both."""
    e, t = _run(ember, name, grad), _run(torch, name, grad)
    if name.startswith("setitem_mask"):     # (torch warns twice: index_put_ and masked_fill_)
        e, t = [x for k, x in enumerate(e) if k != 1], [x for k, x in enumerate(t) if k != 1]
    assert e == t


# seed 41: a masked write into an expanded view of a graph tensor, never backpropagated
PROGRAMS = [
    ([(1, 1, 1)], "float64",
     [("binary", "sub", 0, 0), ("no_grad", "scale", 1), ("expand", 1, (2, 2, 2)),
      ("inplace", "mask_zero", 3), ("no_grad", "sqrt", 0)], [4]),
    ([(1, 2)], "float32",
     [("unary", "sin", 0), ("expand", 1, (2, 2)), ("inplace", "mask_zero", 2),
      ("unary", "exp", 0)], [3, 1]),
]


@pytest.mark.parametrize("program", PROGRAMS)
def test_fuzz_programs(torch, program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(torch, program)


def test_expanded_write_keeps_base_values(torch):
    """Only the written elements land in the shared memory: an unmasked alias keeps nothing."""
    res = []
    for L in (ember, torch):
        y = L.tensor(np.array([[0.5, -1.0]]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y.expand(3, 2).masked_fill_(L.tensor([[True, False], [False, False], [False, True]]),
                                        -0.0)
        res.append(np.signbit(y.numpy()).tolist() + y.tolist())
    assert res[0] == res[1]


def test_expanded_write_warning_at_caller(torch):
    """The deprecation warning names the caller's line, as torch's."""
    for L in (ember, torch):
        y = L.tensor([0.5], requires_grad=True) * 1
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y.expand(2).index_fill_(0, L.tensor([0]), 3.0)
        assert [x.filename for x in w] == [__file__], L.__name__
