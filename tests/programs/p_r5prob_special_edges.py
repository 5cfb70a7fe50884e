"""torch.special beyond the happy path, after the torch.special reference page's examples and
scipy.special-porting code (e.g. the "scipy to torch" snippets in GPyTorch/BoTorch utils): integer
and float64 inputs (type promotion), out=, scalar second arguments, edge values (0, +-inf, nan,
poles), orthogonal polynomials with tensor degrees and |x| > 1, and gradients of the
differentiable ones (checked by printing grads)."""
# compare: rtol=1e-4 atol=1e-6
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
S = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".special")

torch.set_printoptions(precision=6)
edge = torch.tensor([float("-inf"), -2.0, -0.0, 0.0, 0.5, 1.0, 3.0, float("inf"), float("nan")])
ints = torch.tensor([0, 1, 2, 5])

unary = ["erf", "erfc", "erfcx", "erfinv", "expit", "exp2", "expm1", "log1p", "gammaln",
         "digamma", "entr", "i0", "i0e", "i1", "i1e", "ndtr", "ndtri", "log_ndtr", "sinc",
         "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
         "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
         "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
         "airy_ai", "logit"]
for name in unary:
    f = getattr(S, name)
    for arg in (edge, ints, edge.double()):
        try:
            r = f(arg)
            print(name, arg.dtype, "->", r.dtype, r)
        except Exception as e:
            print(name, arg.dtype, type(e).__name__, e)

# out= and dtype checks
o = torch.empty(4)
S.erf(torch.tensor([0.1, 0.2, 0.3, 0.4]), out=o)
print("out", o)
try:
    S.erf(torch.tensor([0.1, 0.2]), out=torch.empty(2, dtype=torch.long))
except Exception as e:
    print(type(e).__name__, e)

# binary with scalars and promotion
x = torch.tensor([0.5, 1.0, 2.0, 4.0])
print("xlogy", S.xlogy(x, 2.0), S.xlogy(2, x), S.xlogy(ints, ints))
print("xlog1py", S.xlog1py(x, -1.0), S.xlog1py(0.0, torch.tensor([-1.0, float("nan")])))
print("zeta", S.zeta(torch.tensor([2.0, 3.0, 4.0, 1.0, 0.5]), 1.0), S.zeta(2.0, x),
      S.zeta(torch.tensor([2.0]), torch.tensor([-1.0, -1.5, 0.0])))
print("gammainc", S.gammainc(x, torch.tensor(1.0)), S.gammaincc(x, torch.tensor([0.0, 1.0, 10.0, float("inf")])))
print("polygamma", [S.polygamma(n, torch.tensor([0.5, 1.0, 7.5])) for n in range(4)])
print("polygamma ints", S.polygamma(1, ints))
print("multigammaln", S.multigammaln(torch.tensor([3.0, 5.5], dtype=torch.float64), 3))
try:
    S.multigammaln(torch.tensor([0.5]), 2)
except Exception as e:
    print(type(e).__name__, e)
print("logit eps", S.logit(torch.tensor([0.0, 0.3, 1.0]), eps=0.01), S.logit(edge[4:7], 0.2))
print("round", S.round(torch.tensor([1.2345, -2.5, 12345.6]), decimals=2),
      S.round(torch.tensor([1234.5, 55.0]), decimals=-1))
try:
    S.round(ints)
except Exception as e:
    print(type(e).__name__, e)
print("softmax dtype", S.softmax(ints, 0, dtype=torch.float64), S.log_softmax(x, -1))
print("logsumexp", S.logsumexp(torch.tensor([[0.0, float("-inf")], [1.0, 2.0]]), 1),
      S.logsumexp(torch.full((2,), float("-inf")), 0), S.logsumexp(x, (0,), keepdim=True))

# polynomials: tensor n, scalar n, |x|>1, negative n
xs = torch.tensor([-1.5, -1.0, -0.3, 0.0, 0.7, 1.0, 2.0])
for name in ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
             "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
             "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
             "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
             "laguerre_polynomial_l", "legendre_polynomial_p"]:
    f = getattr(S, name)
    print(name, f(xs, 3), f(xs, torch.tensor([0, 1, 2, 3, 4, 5, 6])), f(xs, -1),
          f(0.5, torch.tensor([2.0, 7.0])))

# gradients of differentiable special functions
g = torch.tensor([0.3, 0.9, 2.5], dtype=torch.float64, requires_grad=True)
for name in ["erf", "erfc", "erfcx", "erfinv", "expit", "gammaln", "digamma", "entr", "i0", "i0e",
             "i1", "i1e", "ndtr", "ndtri", "log_ndtr", "sinc", "logit", "exp2", "expm1", "log1p"]:
    arg = g / 3 if name in ("erfinv", "ndtri", "logit") else g
    try:
        (gr,) = torch.autograd.grad(getattr(S, name)(arg).sum(), g)
        print("grad", name, gr)
    except Exception as e:
        print("grad", name, type(e).__name__, e)
y = torch.tensor([1.5, 2.0, 0.2], dtype=torch.float64, requires_grad=True)
for name, fn in [("xlogy", lambda: S.xlogy(g, y)), ("xlog1py", lambda: S.xlog1py(g, y)),
                 ("polygamma", lambda: S.polygamma(2, g)),
                 ("multigammaln", lambda: S.multigammaln(g + 2, 2)),
                 ("logsumexp", lambda: S.logsumexp(g * y, 0)),
                 ("softmax", lambda: (S.softmax(g, 0) * y).sum()),
                 ("zeta", lambda: S.zeta(g + 2, y)),
                 ("gammainc", lambda: S.gammainc(y, g))]:
    try:
        out = fn().sum()
        grads = torch.autograd.grad(out, (g, y), allow_unused=True)
        print("grad", name, out.grad_fn.name(), grads)
    except Exception as e:
        print("grad", name, type(e).__name__, e)
print("RESULT: done")
