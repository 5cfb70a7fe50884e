"""Output strides of reductions, cum-ops, sorting, flips/rolls, stack/repeat and the product
backward as torch lays them out; torch's deprecated beta-first product overloads."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ember


def _layouts(lib):
    """The same values in several memory layouts: transposed, permuted, channels-last, sliced,
    and a permutation that moves a size-1 dim (its stride is then not the C one)."""
    return {
        "t": lib.arange(24.).reshape(4, 6).t(),
        "p3": lib.arange(60.).reshape(3, 4, 5).permute(2, 0, 1),
        "p3b": lib.arange(60.).reshape(3, 4, 5).permute(1, 2, 0),
        "cl": lib.arange(120.).reshape(2, 3, 4, 5).contiguous(memory_format=lib.channels_last),
        "sl": lib.arange(48.).reshape(6, 8)[:, ::2],
        "e1": lib.arange(24.).reshape(2, 1, 3, 4).permute(0, 2, 3, 1),
        "c": lib.arange(24.).reshape(4, 6),
    }


def _lib(x):
    return ember if isinstance(x, ember.Tensor) else sys.modules["torch"]


OPS = {
    "sum1k": lambda x: x.sum(1, keepdim=True), "sum0": lambda x: x.sum(0),
    "sum-1k": lambda x: x.sum(-1, keepdim=True), "sum01k": lambda x: x.sum((0, 1), keepdim=True),
    "mean0": lambda x: x.mean(0), "mean1k": lambda x: x.mean(1, keepdim=True),
    "prod1k": lambda x: x.prod(1, keepdim=True), "amax1k": lambda x: x.amax(1, keepdim=True),
    "amin0": lambda x: x.amin(0), "aminmax": lambda x: x.aminmax(dim=1, keepdim=True).max,
    "var1k": lambda x: x.var(1, keepdim=True), "std0": lambda x: x.std(0),
    "var_mean": lambda x: _lib(x).var_mean(x, 1, keepdim=True)[1],
    "logsumexp": lambda x: x.logsumexp(0), "norm": lambda x: x.norm(dim=1, keepdim=True),
    "all": lambda x: x.bool().all(1, keepdim=True), "any": lambda x: x.bool().any(0),
    "count_nonzero": lambda x: x.count_nonzero(1), "nansum": lambda x: x.nansum(1, keepdim=True),
    "nanmean": lambda x: x.nanmean(0), "nanmedian": lambda x: x.nanmedian(1, True).values,
    "cumsum0": lambda x: x.cumsum(0), "cumprod1": lambda x: x.cumprod(1),
    "sort": lambda x: x.sort(0).values, "sort_idx": lambda x: x.sort(-1).indices,
    "argsort": lambda x: x.argsort(1), "msort": lambda x: _lib(x).msort(x),
    "topk": lambda x: x.topk(2, 1).values, "kthvalue": lambda x: x.kthvalue(2, 1, True).values,
    "unique_consecutive": lambda x: _lib(x).unique_consecutive(x, dim=0),
    "flip": lambda x: x.flip(0), "fliplr": lambda x: x.fliplr(),
    "roll": lambda x: x.roll(1, 0), "roll2": lambda x: x.roll((1, 2), (0, 1)),
    "roll0": lambda x: x.roll(0, 0), "rot90": lambda x: x.rot90(), "rot90_2": lambda x: x.rot90(2),
    "rot90_3": lambda x: x.rot90(3), "rot90_0": lambda x: x.rot90(0),
    "stack0": lambda x: _lib(x).stack([x, x]), "stack1": lambda x: _lib(x).stack([x, x], 1),
    "stack-1": lambda x: _lib(x).stack([x, x], -1),
    "repeat": lambda x: x.repeat(*([1] * x.ndim)), "tile": lambda x: x.tile((2,)),
    "tril": lambda x: x.tril(), "triu": lambda x: x.triu(1), "ravel": lambda x: x.ravel(),
    "matmul": lambda x: x @ x.transpose(-1, -2),
}


@pytest.mark.parametrize("op", sorted(OPS))
def test_output_strides_match_torch(torch, op):
    f = OPS[op]
    for (name, t), e in zip(_layouts(torch).items(), _layouts(ember).values()):
        want, got = f(t), f(e)
        assert tuple(got.shape) == tuple(want.shape), name
        assert got.stride() == want.stride(), name
        np.testing.assert_allclose(got.double().numpy(), want.double().numpy(), err_msg=name)


def test_rot90_0_is_a_copy(torch):
    x = ember.arange(6.).reshape(2, 3)
    y = x.rot90(0)
    y[0, 0] = 100.0
    assert x[0, 0].item() == torch.arange(6.).reshape(2, 3).rot90(0)[0, 0].item()


_PRODUCT_CASES = [
    ("linear", lambda L: (L.randn(5, 4), L.randn(3, 4)), lambda L: L.nn.functional.linear),
    ("linear_t", lambda L: (L.randn(4, 5).t(), L.randn(4, 3).t()),
     lambda L: L.nn.functional.linear),
    ("mm_t", lambda L: (L.randn(4, 5).t(), L.randn(3, 4).t()), lambda L: L.mm),
    ("addmm_t", lambda L: (L.randn(3, 5).t(), L.randn(4, 5).t(), L.randn(3, 4).t()),
     lambda L: L.addmm),
]


@pytest.mark.parametrize("case", [c[0] for c in _PRODUCT_CASES])
def test_create_graph_product_grads_keep_torch_layout(torch, case):
    _, make, fn = next(c for c in _PRODUCT_CASES if c[0] == case)
    res = []
    for L in (torch, ember):
        L.manual_seed(0)
        ins = [t.requires_grad_() for t in make(L)]
        out = fn(L)(*ins)
        g = L.ones(out.shape)
        grads = L.autograd.grad(out, ins, g, create_graph=True)
        res.append([(gr.stride(), gr.detach().numpy().copy()) for gr in grads])
    for (ts, tv), (es, ev) in zip(*res):
        assert es == ts
        np.testing.assert_allclose(ev, tv, rtol=1e-5, atol=1e-5)


_DEPRECATED = {
    "addmm5": "L.addmm(2, M, 3, a, b)", "addmv4": "L.addmv(2, v3, a, v)",
    "baddbmm_m4": "MB.baddbmm(2, 3, B1, B2)", "addbmm_m3": "M.addbmm(2, B1, B2)",
    "baddbmm4": "L.baddbmm(2, MB, B1, B2)", "addmm_m3": "M.addmm(2, a, b)",
}
_SETUP = ("M = L.ones(3, 5); a = L.arange(12.).reshape(3, 4); b = L.ones(4, 5); v = L.ones(4)\n"
          "v3 = L.ones(3); B1 = L.arange(24.).reshape(2, 3, 4); B2 = L.ones(2, 4, 5)\n"
          "MB = L.ones(2, 3, 5)\n")


def _torch_warnings(call):
    """torch's warnings (texts) for ``call`` made twice in a fresh process (torch warns once
    per process), and the result's sum."""
    code = ("import warnings, torch as L\n" + _SETUP
            + "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    r = %s; %s\n" % (call, call)
            + "print(repr([str(x.message).split(' (Triggered internally')[0] for x in w]))\n"
            "print(float(r.sum()))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = out.stdout.strip().splitlines()
    return eval(lines[0]), float(lines[1])


@pytest.mark.parametrize("form", sorted(_DEPRECATED))
def test_deprecated_beta_first_overloads(torch, form, monkeypatch):
    call = _DEPRECATED[form]
    want_msgs, want_sum = _torch_warnings(call)
    monkeypatch.setattr(sys.modules["ember.ops._util"], "_WARNED", set())
    scope = {"L": ember}
    exec(_SETUP, scope)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = eval(call, scope)
        eval(call, scope)
    assert [str(x.message) for x in w] == want_msgs
    assert all(x.filename == "<string>" for x in w)     # (the caller: the eval'd call)
    assert float(r.sum()) == want_sum


def test_deprecated_overload_misuse_raises(torch):
    M, a, b = ember.ones(3, 5), ember.ones(3, 4), ember.ones(4, 5)
    tM, ta, tb = torch.ones(3, 5), torch.ones(3, 4), torch.ones(4, 5)
    for call in (lambda L, M, a, b: L.addmm(2, M, a, b, alpha=3),
                 lambda L, M, a, b: M.addmm(2, a, b, alpha=3),
                 lambda L, M, a, b: L.addmm(2, M, 3, a, b, 4)):
        with pytest.raises(TypeError):
            call(torch, tM, ta, tb)
        with pytest.raises(TypeError):
            call(ember, M, a, b)
