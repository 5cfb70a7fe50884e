"""Session 14: core fixes, each checked against torch."""
import pytest

import ember


def _names(fn, depth=0, out=None):
    """The node names of a graph, depth first, with their depth."""
    out = [] if out is None else out
    if fn is None or depth > 6:
        return out
    out.append((depth, type(fn).__name__))
    for f, _ in getattr(fn, "next_functions", ()):
        _names(f, depth + 1, out)
    return out


@pytest.mark.parametrize("e", [1, 2, 3, 0.5, -1.5])
def test_pow_scalar_higher_derivatives(torch, e):
    """torch's pow gradient is ``e * x ** (e - 1)``: its graph keeps x even for e in (1, 2), so
    the next derivatives require grad (zeros where the maths gives zero)."""
    def probe(lib):
        x = lib.tensor([1.5, 2.0, 0.75], dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad((x ** e).sum(), x, create_graph=True)
        h, = lib.autograd.grad(g.sum(), x, create_graph=True)
        k, = lib.autograd.grad(h.sum(), x, allow_unused=True) if h.requires_grad else (None,)
        return (_names(g.grad_fn), _names(h.grad_fn), h.requires_grad, g.tolist(), h.tolist(),
                None if k is None else k.tolist())
    got, want = probe(ember), probe(torch)
    assert got[:3] == want[:3]
    for a, b in zip(got[3:], want[3:]):
        assert (a is None) == (b is None)
        if a is not None:
            assert a == pytest.approx(b, rel=1e-12)


def _outcome(lib, fn):
    """What ``fn(lib)`` gives: its result, or its error's class and message."""
    try:
        return fn(lib)
    except Exception as e:      # noqa: BLE001 (the class and message are what is compared)
        return type(e).__name__, str(e)


def _same(torch, fn):
    assert _outcome(ember, fn) == _outcome(torch, fn)


@pytest.mark.parametrize("case", ["nograd_leaf", "detached_view", "nonleaf"])
def test_backward_inputs_retain_grad(torch, case):
    """``backward(inputs=)`` retains each input's gradient as ``retain_grad`` does."""
    import warnings

    def probe(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        z = x * 1
        t = {"nograd_leaf": lib.ones(3), "detached_view": x.detach()[:2], "nonleaf": z}[case]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            (z * z).sum().backward(inputs=[t])
            return t.grad.tolist(), t.retains_grad, x.grad, len(w)
    _same(torch, probe)


@pytest.mark.parametrize("args,kwargs", [
    ((5,), {}), ((1, 5), {}), ((), {"high": 5}), ((), {"low": 1, "high": 5}), ((1,), {"high": 4}),
    ((), {"low": 5}), ((1,), {"low": 2}), ((3, 4, 5), {}), ((2.5,), {}), ((1, 2), {"high": 3})])
def test_randint_like_forms(torch, args, kwargs):
    def probe(lib):
        lib.manual_seed(0)
        return lib.randint_like(lib.zeros(6), *args, **kwargs).tolist()
    _same(torch, probe)


@pytest.mark.parametrize("x,w,b", [((2, 3), (3,), (1,)), ((3,), (3,), (1,)),
                                   ((2, 2, 3), (3,), (1,)),
                                   ((2, 2, 3), (3,), None), ((2, 3), (), None), ((), (2, 3), None),
                                   ((2, 3), (1, 2, 3), None), ((2, 3), (3,), ())])
def test_linear_weight_dims(torch, x, w, b):
    def probe(lib):
        g = lib.Generator().manual_seed(0)
        r = lib.nn.functional.linear(lib.randn(x, generator=g), lib.randn(w, generator=g),
                                     None if b is None else lib.randn(b, generator=g))
        return tuple(r.shape), [round(v, 5) for v in r.flatten().tolist()]
    _same(torch, probe)


@pytest.mark.parametrize("ml", [5, 1.5, [1]])
@pytest.mark.parametrize("weights_only", [True, False])
def test_load_map_location_not_callable(torch, ml, weights_only):
    import io

    def probe(lib):
        buf = io.BytesIO()
        lib.save({"a": lib.ones(2)}, buf)
        buf.seek(0)
        return lib.load(buf, map_location=ml, weights_only=weights_only)
    _same(torch, probe)


def test_data_ptr_of_no_elements(torch):
    def probe(lib):
        x = lib.arange(4.0)
        return [t.data_ptr() == 0 for t in (lib.zeros(0), lib.empty(2, 0, 3), x[4:], x[1:1], x)]
    _same(torch, probe)


def test_T_warns_once_for_other_than_2d(torch, monkeypatch):
    import warnings
    monkeypatch.setattr(ember.ops._util, "_WARNED", set())

    def probe(lib):
        out = []
        for shape in [(2, 3), (3,), (), (2, 3, 4)]:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                lib.zeros(shape).T
            out.append([str(m.message).split(" (Triggered")[0] for m in w])
        return out
    got = probe(ember)
    assert got[0] == [] and got[2:] == [[], []] and len(got[1]) == 1
    # torch warns once per process: compare the text with a fresh torch process's first warning
    import subprocess
    import sys
    want = subprocess.run([sys.executable, "-W", "always", "-c", "import torch; torch.zeros(3).T"],
                          capture_output=True, text=True).stderr
    assert got[1][0] in want


@pytest.mark.parametrize("code", [
    "(x * 2).sum().backward(create_graph=True); (x * 2).sum().backward(create_graph=True)",
    "(x ** 2).sum().backward(create_graph=True, inputs=[x])",
    "torch.autograd.grad((x ** 2).sum(), x, create_graph=True)",
    "(x ** 2).sum().backward()"])
def test_create_graph_backward_warns_once(torch, code):
    """torch warns once per process that backward(create_graph=True) makes a reference cycle."""
    import os
    import subprocess
    import sys

    def count(lib):
        prog = "import %s as torch; x = torch.tensor([1., 2.], requires_grad=True); %s" % (
            lib, code)
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ember.__file__)))
        err = subprocess.run([sys.executable, "-W", "always", "-c", prog], capture_output=True,
                             text=True, env=env).stderr
        return err.count("will create a reference cycle between the parameter and its gradient")
    assert count("ember") == count("torch")


@pytest.mark.parametrize("call", [
    lambda lib, t: t.split(2), lambda lib, t: t.split(split_size=[2, 4], dim=-1),
    lambda lib, t: lib.Tensor.split(t, 3), lambda lib, t: t.split(split_size_or_sections=2),
    lambda lib, t: t.split(), lambda lib, t: lib.split(t, split_size=2),
    lambda lib, t: lib.split(t, split_size_or_sections=4)])
def test_tensor_split_argument_names(torch, call):
    def probe(lib):
        r = call(lib, lib.arange(6.0))
        return [p.tolist() for p in r]
    _same(torch, probe)


@pytest.mark.parametrize("assign", [False, True])
def test_module_load(torch, assign):
    def probe(lib):
        a = lib.ones(2)
        b = lib.zeros(2, requires_grad=True)
        r = a.module_load(b, assign=assign)
        return r.tolist(), r is a, r is b, r.requires_grad, a.tolist(), type(a.grad_fn).__name__
    _same(torch, probe)


def test_foreach_names_resolve(torch):
    names = sorted(n for n in dir(torch) if n.startswith("_foreach_"))
    missing = [n for n in names if not hasattr(ember, n)]
    assert len(missing) <= 2, missing     # (_foreach_mm, _foreach_powsum: not yet)
    xs = [ember.ones(2), ember.full((3,), 2.0)]
    ember._foreach_mul_(xs, 3.0)
    assert [x.tolist() for x in xs] == [[3.0, 3.0], [6.0, 6.0, 6.0]]


def test_script_module_is_a_module(torch):
    def probe(lib):
        class A(lib.jit.ScriptModule):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(2, 2)

            def forward(self, x):
                return self.lin(x)
        a = A()
        return ([c.__name__ for c in lib.jit.ScriptModule.__mro__], list(a.state_dict()),
                tuple(a(lib.ones(2)).shape), isinstance(a, lib.nn.Module))
    _same(torch, probe)


def test_repr_keeps_blank_lines_empty(torch):
    """torch 2.13's module repr indents only non-blank lines of a child's repr."""
    def probe(lib):
        class Blank(lib.nn.Module):
            def extra_repr(self):
                return "a=1\n\n  b=2\n   "

        return repr(lib.nn.Sequential(Blank(), lib.nn.Sequential(Blank())))
    _same(torch, probe)


def test_inf_nan_arithmetic_is_silent():
    """torch's kernels give inf/nan without a warning; NumPy's ufuncs inside ember must not
    print RuntimeWarnings (a user's own NumPy calls still do)."""
    import os
    import subprocess
    import sys
    prog = ("import ember as t, numpy as np\n"
            "a = t.tensor([0., float('inf')]); b = t.tensor([-float('inf'), float('inf')])\n"
            "a * b; a - b; a + b; t.log(t.tensor([-1.])); t.tensor([3e38]) * 10\n"
            "x = t.tensor([0., 1.], requires_grad=True); (x * b).sum().backward()\n"
            "np.log(np.array([-1.]))\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ember.__file__)))
    err = subprocess.run([sys.executable, "-W", "always", "-c", prog], capture_output=True,
                         text=True, env=env).stderr
    assert err.count("RuntimeWarning") == 1 and "<string>" in err, err


def test_grad_mode_decorators_without_parentheses(torch):
    def probe(lib):
        x = lib.ones(2, requires_grad=True)

        @lib.no_grad
        def f(a):
            return a * 2

        @lib.enable_grad
        def g(a):
            return a * 2

        @lib.inference_mode
        def h(a):
            return a * 2

        @lib.inference_mode(False)
        def h2(a):
            return a * 2
        with lib.no_grad():
            inner = g(x).requires_grad
        return (f(x).requires_grad, f.__name__, h(x).is_inference(), h2(x).requires_grad, inner,
                type(lib.no_grad()).__name__, type(lib.inference_mode()).__name__)
    _same(torch, probe)


def test_disabled_profiler_binds_none(torch):
    def probe(lib):
        with lib.autograd.profiler.profile(enabled=False) as prof:
            pass
        return prof
    _same(torch, probe)


def test_meta_creation_allocates_nothing(torch):
    """The "Reasoning about Shapes" recipe makes a 48 TiB meta tensor: shapes and dtypes only."""
    def probe(lib):
        big = (2 ** 10, 3, 2 ** 16, 2 ** 16)
        ts = [lib.rand(*big, device="meta"), lib.zeros(big, dtype=lib.int32, device="meta"),
              lib.ones(*big, device="meta"), lib.full(big, 3, device="meta"),
              lib.empty(big, device="meta")]
        return [(tuple(t.shape), str(t.dtype), str(t.device)) for t in ts]
    _same(torch, probe)


def test_subclass_with_only_new(torch):
    def probe(lib):
        class Q(lib.Tensor):
            @staticmethod
            def __new__(cls, elem, scale):
                return lib.Tensor._make_subclass(cls, elem)
        q = Q(lib.ones(2), 0.5)
        return type(q).__name__, q.tolist(), (q * 2).tolist()
    _same(torch, probe)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_tanh_backward_rounds_as_torch(torch, dtype):
    """torch's tanh_backward fuses ``1 - y*y`` (one rounding) and works in float for 16-bit
    types: bit for bit, given the same forward output."""
    import numpy as np
    g = torch.Generator().manual_seed(0)
    h = torch.tanh(torch.randn(4000, generator=g) * 2).to(getattr(torch, dtype))
    up = torch.randn(4000, generator=g).to(getattr(torch, dtype))
    want = torch.ops.aten.tanh_backward(up, h).double().numpy()
    from ember.ops.unary import TanhGrad
    got = TanhGrad.apply(ember.tensor(up.double().numpy()).to(getattr(ember, dtype)),
                         ember.tensor(h.double().numpy()).to(getattr(ember, dtype)))
    np.testing.assert_array_equal(got.double().numpy(), want)


_AUTOCAST_CASES = {
    "conv_chain": lambda L, x: L.nn.Sequential(L.nn.Conv2d(4, 4, 3), L.nn.BatchNorm2d(4),
                                               L.nn.ReLU(), L.nn.Conv2d(4, 2, 3))(x.float()),
    "conv_bf16_input": lambda L, x: L.nn.Conv2d(4, 2, 3)(x),
    "conv_transpose": lambda L, x: L.nn.ConvTranspose2d(4, 2, 3)(x),
    "conv1d": lambda L, x: L.nn.Conv1d(4, 2, 3)(x[:, :, 0]),
    "prelu": lambda L, x: L.nn.PReLU()(x),
    "bilinear_cpu_not_cast": lambda L, x: L.nn.Bilinear(6, 6, 2)(x[0, 0], x[0, 1]),
    "baddbmm_rounds_once": lambda L, x: L.baddbmm(L.randn(4, 6, 2), x[0], L.randn(4, 6, 2)),
    "addbmm": lambda L, x: L.addbmm(L.randn(6, 2), x[0], L.randn(4, 6, 2)),
    "addmm": lambda L, x: L.addmm(L.randn(6, 2), x[0, 0], L.randn(6, 2)),
}


@pytest.mark.parametrize("case", sorted(_AUTOCAST_CASES))
def test_cpu_autocast_layers(torch, case):
    """CPU autocast casts before the layers' dtype checks, and a product inside an op is not
    cast again (one rounding, as torch's kernels)."""
    def probe(lib):
        lib.manual_seed(0)
        x = lib.randn(2, 4, 6, 6).to(lib.bfloat16)
        with lib.autocast("cpu", dtype=lib.bfloat16):
            y = _AUTOCAST_CASES[case](lib, x)
        return str(y.dtype), y.float().flatten().tolist()
    _same(torch, probe)


def test_sparse_inplace_arithmetic(torch):
    """pytorch3d's ``L += L.t()`` / ``L -= eye``: in-place COO ops keep indices and values."""
    def probe(lib):
        i = lib.tensor([[0, 1, 2], [1, 2, 0]])
        L = lib.sparse_coo_tensor(i, lib.tensor([1.0, 2.0, 3.0]), (3, 3))
        same = L
        L += L.t()
        L -= lib.sparse_coo_tensor(lib.tensor([[0, 1, 2], [0, 1, 2]]), lib.ones(3), (3, 3))
        L.mul_(2)
        L.div_(4)
        c = L.coalesce()
        return (same is L, L._nnz(), c.indices().tolist(), c.values().tolist(),
                lib.sparse.mm(L, lib.ones(3, 1)).flatten().tolist(), L._version > 0)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(torch, probe)


@pytest.mark.parametrize("code", [
    "torch.sparse_coo_tensor(i, v, (3, 3)); torch.sparse_coo_tensor(i, v, (3, 3))",
    "torch.sparse_coo_tensor(i, v, (3, 3), check_invariants=False)",
    "torch.eye(3).to_sparse()",
    "torch.sparse_csr_tensor(torch.tensor([0, 1, 2, 3]), torch.tensor([1, 2, 0]), v, (3, 3))",
    "s = torch.sparse_coo_tensor(i, v, check_invariants=True); s.clone(); s.double(); s + s"])
def test_sparse_invariants_warning(torch, code):
    """torch warns once per process when a user builds a sparse tensor without choosing
    ``check_invariants``; its own operations never do."""
    import os
    import subprocess
    import sys

    def count(lib):
        prog = ("import %s as torch; i = torch.tensor([[0, 1, 2], [1, 2, 0]]); "
                "v = torch.tensor([1., 2., 3.]); %s" % (lib, code))
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ember.__file__)))
        err = subprocess.run([sys.executable, "-W", "always", "-c", prog], capture_output=True,
                             text=True, env=env).stderr
        return err.count("Sparse invariant checks are implicitly disabled")
    assert count("ember") == count("torch")


@pytest.mark.parametrize("expr", [
    "L.ones(2).new([1+2j])", "L.FloatTensor([1+2j])", "L.DoubleTensor([1, 2+0j])",
    "L.Tensor([1+2j])", "L.tensor([1+2j], dtype=L.float32)", "L.tensor(1+2j, dtype=L.float64)",
    "L.tensor([1, 2+0j], dtype=L.int64)", "L.as_tensor([1+2j], dtype=L.float32)",
    "L.tensor([1+2j], dtype=L.bfloat16)", "L.tensor([[1, 2], [3, 4+1j]], dtype=L.float16)",
    "L.IntTensor([1j])", "L.tensor([1+2j], dtype=L.complex64)"])
def test_complex_data_for_a_real_dtype(torch, expr):
    """Python complex numbers made into a real tensor: torch's TypeError (not the real part)."""
    def probe(lib):
        r = eval(expr, {"L": lib})
        return str(r.dtype), r.tolist()
    _same(torch, probe)


def test_fp32_precision_reads_ieee_once_set(torch):
    import os
    import subprocess
    import sys
    prog = ("import %s as torch\nout = [torch.backends.cuda.matmul.fp32_precision]\n"
            "for p in ['high', 'medium', 'highest']:\n"
            "    torch.set_float32_matmul_precision(p)\n"
            "    out.append((torch.backends.cuda.matmul.fp32_precision,"
            " torch.backends.cuda.matmul.allow_tf32, torch.get_float32_matmul_precision()))\n"
            "print(out)\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ember.__file__)))

    def run(lib):
        return subprocess.run([sys.executable, "-c", prog % lib], capture_output=True, text=True,
                              env=env).stdout
    assert run("ember") == run("torch") != ""


@pytest.mark.parametrize("make", ["float64", "int64", "float32", "grad"])
def test_legacy_tensor_of_a_tensor_is_an_alias(torch, make):
    """``torch.Tensor(t)`` aliases ``t`` and keeps its dtype (a view: writes reach ``t``)."""
    def probe(lib):
        a = {"float64": lambda: lib.ones(2, dtype=lib.float64), "int64": lambda: lib.arange(3),
             "float32": lambda: lib.ones(2),
             "grad": lambda: lib.ones(2, requires_grad=True)}[make]()
        b = lib.Tensor(a)
        if not a.requires_grad:
            b.add_(1)
        return (str(b.dtype), b.tolist(), a.tolist(), b._base is a, b.requires_grad,
                type(b.grad_fn).__name__, a._version, b._version)
    _same(torch, probe)
