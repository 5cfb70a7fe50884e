"""Regressions found by the numerical-methods programs (tests/programs/p_r2numeric_*): each
checked against PyTorch."""
import warnings

import pytest

import ember

torch = pytest.importorskip("torch")


def _names(fn):
    """The grad_fn chain names of ``fn(lib)``'s result, for ember and torch."""
    out = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = fn(lib)
        node, names = y.grad_fn, []
        while node is not None and len(names) < 3:
            names.append(type(node).__name__)
            node = node.next_functions[0][0] if node.next_functions else None
        out.append((names, y._version))
    return out


@pytest.mark.parametrize("shape", [(64,), (2, 64)])
@pytest.mark.parametrize("return_complex", [True, False])
def test_stft_transposes_and_squeezes_in_place(shape, return_complex):
    def fn(lib):
        x = lib.randn(*shape, requires_grad=True)
        return lib.stft(x, 16, hop_length=4, window=lib.hann_window(16),
                        return_complex=return_complex)
    got, want = _names(fn)
    assert got == want


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
@pytest.mark.parametrize("sa,sb", [((2, 2), (2, 3)), ((3,), (2,)), ((2, 1, 2), (2, 2)),
                                   ((), (3,)), ((2, 2), ())])
def test_kron_ends_with_unsafe_view(dtype, sa, sb):
    def fn(lib):
        dt = getattr(lib, dtype)
        a = lib.randn(sa, dtype=dt, requires_grad=True)
        return lib.kron(a, lib.randn(sb, dtype=dt))
    got, want = _names(fn)
    assert got == want
    a = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    ea = ember.tensor(a.detach().numpy(), requires_grad=True)
    b = torch.randn(3, 2, dtype=torch.float64)
    g = torch.randn(6, 6, dtype=torch.float64)
    torch.kron(a, b).backward(g)
    ember.kron(ea, ember.tensor(b.numpy())).backward(ember.tensor(g.numpy()))
    assert torch.allclose(torch.from_numpy(ea.grad.numpy()), a.grad)


_FFT_CASES = {
    "fft0": lambda f, x: f.fft(x, dim=0),
    "fft_n": lambda f, x: f.fft(x, n=7, dim=2),
    "ifft2": lambda f, x: f.ifft2(x, dim=(0, 2)),
    "fftn21": lambda f, x: f.fftn(x, dim=(2, 1)),
    "fftn_s": lambda f, x: f.fftn(x, s=(6, 3), dim=(0, 3)),
    "rfft0": lambda f, x: f.rfft(x.real, dim=0),
    "rfftn": lambda f, x: f.rfftn(x.real, dim=(1, 3, 0)),
    "irfft1": lambda f, x: f.irfft(x, dim=1),
    "irfftn3": lambda f, x: f.irfftn(x, dim=(3, 0, 1)),
    "hfftn": lambda f, x: f.hfftn(x, dim=(1, 0)),
    "ihfftn": lambda f, x: f.ihfftn(x.real, dim=(0, 2)),
}


@pytest.mark.parametrize("perm", [(0, 1, 2, 3), (3, 2, 1, 0), (2, 0, 3, 1)])
@pytest.mark.parametrize("case", sorted(_FFT_CASES))
def test_fft_output_strides_follow_mkl_layout(perm, case):
    """torch's MKL transform lays batch dims (by input stride) outside the transformed ones."""
    x = torch.randn(3, 4, 5, 2, dtype=torch.complex64)
    ex = ember.tensor(x.numpy()).permute(*perm)
    want = _FFT_CASES[case](torch.fft, x.permute(*perm))
    got = _FFT_CASES[case](ember.fft, ex)
    assert got.shape == want.shape and got.stride() == want.stride()
    assert got.is_contiguous() == want.is_contiguous()
    assert torch.allclose(torch.from_numpy(got.numpy().copy()), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dim", range(4))
def test_fft_output_strides_of_size_one_dims(dim):
    x = torch.randn(1, 4, 1, 3, dtype=torch.complex64)
    ex = ember.tensor(x.numpy())
    assert ember.fft.fft(ex, dim=dim).stride() == torch.fft.fft(x, dim=dim).stride()
    p = (3, 1, 2, 0)
    assert ember.fft.fft(ex.permute(*p), dim=dim).stride() == \
        torch.fft.fft(x.permute(*p), dim=dim).stride()


def test_fft_over_first_dim_then_view_fails_as_torch():
    x = torch.randn(6, 3, dtype=torch.complex64)
    msgs = []
    for lib, t in ((torch, x), (ember, ember.tensor(x.numpy()))):
        with pytest.raises(RuntimeError) as info:
            lib.fft.fft(t, dim=0).view(18)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("decimals", [0, 1, -1])
def test_special_round_is_round_decimals(dtype, decimals):
    vals = [1.25, 2.5, -3.5, 14.96, float("nan"), float("inf"), 0.05]
    out = []
    for lib in (ember, torch):
        x = lib.tensor(vals, dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.special.round(x, decimals=decimals)
        y.sum().backward()
        out.append((type(y.grad_fn).__name__, str(y.dtype), y.detach().float().tolist(),
                    x.grad.float().tolist()))
    assert repr(out[0]) == repr(out[1])


def test_special_round_refuses_integers():
    msgs = []
    for lib in (ember, torch):
        with pytest.raises(NotImplementedError) as info:
            lib.special.round(lib.tensor([1, 2]))
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


_OUT_CASES = [
    ("linalg", "inv", lambda lib, A, S, v: (A,)),
    ("linalg", "det", lambda lib, A, S, v: (A,)),
    ("linalg", "svdvals", lambda lib, A, S, v: (A,)),
    ("linalg", "matrix_power", lambda lib, A, S, v: (A, 3)),
    ("linalg", "vector_norm", lambda lib, A, S, v: (v,)),
    ("linalg", "norm", lambda lib, A, S, v: (A,)),
    ("linalg", "cholesky", lambda lib, A, S, v: (S,)),
    ("linalg", "solve", lambda lib, A, S, v: (A, v[:3])),
    ("linalg", "multi_dot", lambda lib, A, S, v: ([A, A],)),
    ("linalg", "eigvalsh", lambda lib, A, S, v: (S,)),
    ("linalg", "pinv", lambda lib, A, S, v: (A,)),
    ("linalg", "vecdot", lambda lib, A, S, v: (v, v)),
    ("fft", "fft", lambda lib, A, S, v: (v,)),
    ("fft", "rfft", lambda lib, A, S, v: (v,)),
    ("fft", "fftn", lambda lib, A, S, v: (A,)),
    ("special", "erf", lambda lib, A, S, v: (v,)),
    ("special", "ndtr", lambda lib, A, S, v: (v,)),
    ("special", "gammaln", lambda lib, A, S, v: (v,)),
    ("special", "logsumexp", lambda lib, A, S, v: (v, 0)),
    ("special", "zeta", lambda lib, A, S, v: (v.abs() + 1, v.abs())),
]


@pytest.mark.parametrize("ns,name,args", _OUT_CASES, ids=[c[0] + "." + c[1] for c in _OUT_CASES])
def test_namespace_functions_write_out(ns, name, args):
    """torch.linalg / torch.fft / torch.special functions fill ``out=`` (not ignore it)."""
    torch.manual_seed(0)
    A = torch.randn(3, 3, dtype=torch.float64)
    S = A @ A.T + torch.eye(3, dtype=torch.float64)
    v = torch.randn(4, dtype=torch.float64)
    results = []
    for lib, tensors in ((torch, (A, S, v)), (ember, [ember.tensor(t.numpy()) for t in (A, S, v)])):
        fn = getattr(getattr(lib, ns), name)
        call_args = args(lib, *tensors)
        ref = fn(*call_args)
        out = lib.empty(0, dtype=ref.dtype)
        got = fn(*call_args, out=out)
        assert got is out
        results.append(out)
    assert tuple(results[0].shape) == tuple(results[1].shape)
    assert torch.allclose(torch.from_numpy(results[1].numpy().copy()), results[0])


def test_linalg_tuple_out():
    A = torch.randn(3, 3, dtype=torch.float64)
    S = A @ A.T
    eS = ember.tensor(S.numpy())
    w, V = ember.empty(0, dtype=ember.float64), ember.empty(0, dtype=ember.float64)
    r = ember.linalg.eigh(eS, out=(w, V))
    assert r[0] is w and r[1] is V and type(r).__name__ == "linalg_eigh"
    assert torch.allclose(torch.from_numpy(w.numpy().copy()), torch.linalg.eigvalsh(S))


@pytest.mark.parametrize("call", [
    "lib.linalg.matrix_power(lib.eye(3), 2.5)", "lib.matrix_power(lib.eye(3), 2.5)",
    "lib.linalg.matrix_power(lib.eye(3), True)", "lib.linalg.svd(lib.eye(3), driver='gesvd')",
    "lib.linalg.svdvals(lib.eye(3), driver='gesvdj')", "lib.linalg.vector_norm(lib.eye(3), 'fro')",
    "lib.linalg.vector_norm(lib.eye(3), None)",
    "lib.cholesky_solve(lib.ones(3, 1), lib.ones(2, 2))",
    "lib.cholesky_solve(lib.ones(3), lib.eye(3))",
    "lib.cholesky_solve(lib.ones(3, 1), lib.ones(3))",
    "lib.cholesky_solve(lib.ones(3, 1), lib.ones(3, 2))",
    "lib.cholesky_solve(lib.ones(3, 1), lib.eye(3).double())",
    "lib.cholesky_solve(lib.ones(2, 3, 1), lib.eye(3).expand(3, 3, 3))",
])
def test_linalg_argument_errors(call):
    msgs = []
    for lib in (torch, ember):
        with pytest.raises(Exception) as info:
            eval(call)
        msgs.append((type(info.value).__name__, str(info.value)))
    assert msgs[0] == msgs[1]
