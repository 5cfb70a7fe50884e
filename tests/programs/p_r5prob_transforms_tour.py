"""Tour of torch.distributions.transforms as the PyTorch docs and Pyro's "Normalizing flows"
intro use them: AffineTransform/ExpTransform/SigmoidTransform/TanhTransform/PowerTransform/
SoftmaxTransform/StickBreakingTransform/CorrCholeskyTransform/LowerCholeskyTransform/
ReshapeTransform/IndependentTransform/CatTransform/StackTransform/ComposeTransform, their
inverses, log_abs_det_jacobian, domain/codomain, biject_to/transform_to, and
TransformedDistribution built from them (LogNormal-by-hand, a squashed Gaussian policy)."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
D = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".distributions")
T = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".distributions.transforms")
C = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".distributions.constraints")

torch.manual_seed(0)
torch.set_printoptions(precision=5)

x = torch.randn(2, 3, dtype=torch.float64)
simple = [
    T.AffineTransform(loc=1.5, scale=-2.0),
    T.ExpTransform(),
    T.SigmoidTransform(),
    T.TanhTransform(),
    T.AbsTransform(),
    T.PowerTransform(exponent=torch.tensor(3.0, dtype=torch.float64)),
    T.SoftplusTransform(),
]
for t in simple:
    xx = x.abs() + 0.1 if isinstance(t, T.PowerTransform) else x
    y = t(xx)
    print(t, "bijective", t.bijective, "sign", getattr(t, "sign", None) if t.bijective else "-",
          "event_dim", t.event_dim)
    print("  domain", t.domain, "codomain", t.codomain)
    print("  y", y)
    if t.bijective:
        print("  inv(y)", t.inv(y))
        print("  ladj", t.log_abs_det_jacobian(xx, y))
    print("  inv repr", t.inv, "inv.inv is t", t.inv.inv is t)

# event-shaped transforms
v = torch.randn(2, 4, dtype=torch.float64)
for t in [T.SoftmaxTransform(), T.StickBreakingTransform()]:
    y = t(v)
    print(t, "event_dim", t.event_dim, y, y.sum(-1))
    print("  inv", t.inv(y))
    if t.bijective:
        print("  ladj", t.log_abs_det_jacobian(v, y))
    print("  shapes", t.forward_shape((2, 4)), t.inverse_shape(t.forward_shape((2, 4))))

cc = T.CorrCholeskyTransform()
r = torch.randn(3, dtype=torch.float64)
L = cc(r)
print("corr cholesky", L, L @ L.T)
print("  inv", cc.inv(L), "ladj", cc.log_abs_det_jacobian(r, L))
lc = T.LowerCholeskyTransform()
m = torch.randn(3, 3, dtype=torch.float64)
print("lower cholesky", lc(m))
print("positive definite", T.PositiveDefiniteTransform()(m))

rs = T.ReshapeTransform((6,), (2, 3))
y = rs(torch.arange(12.0).reshape(2, 6))
print("reshape", y.shape, rs.inv(y).shape, rs.log_abs_det_jacobian(torch.zeros(2, 6), y))
print("  shapes", rs.forward_shape((5, 6)), rs.inverse_shape((5, 2, 3)))

it = T.IndependentTransform(T.ExpTransform(), 1)
print("independent", it, it.event_dim, it.log_abs_det_jacobian(x, it(x)))

cat = T.CatTransform([T.ExpTransform(), T.AffineTransform(0.0, 3.0)], dim=1, lengths=[1, 2])
print("cat", cat(x), cat.log_abs_det_jacobian(x, cat(x)), cat.bijective)
st = T.StackTransform([T.ExpTransform(), T.SigmoidTransform()], dim=0)
print("stack", st(x), st.inv(st(x)), st.log_abs_det_jacobian(x, st(x)))

comp = T.ComposeTransform([T.AffineTransform(0.5, 2.0), T.TanhTransform(), T.AffineTransform(1.0, 3.0)])
y = comp(x)
print("compose", comp.event_dim, comp.domain, comp.codomain, comp.bijective)
print("  y", y, "inv", comp.inv(y))
print("  ladj", comp.log_abs_det_jacobian(x, y))
print("  cache_size", comp.with_cache(1)._cache_size if hasattr(comp, "_cache_size") else "n/a")
print("  eq", T.ExpTransform() == T.ExpTransform(), T.ExpTransform() == T.SigmoidTransform())
print("  identity", T.identity_transform, T.identity_transform(x).equal(x))

for c in [C.positive, C.real, C.unit_interval, C.simplex, C.lower_cholesky, C.corr_cholesky,
          C.positive_definite, C.interval(-1.0, 2.0), C.greater_than(3.0), C.real_vector,
          C.less_than(-1.0), C.half_open_interval(0.0, 1.0)]:
    try:
        b = type(D.biject_to(c)).__name__
    except Exception as e:
        b = type(e).__name__ + ": " + str(e)
    t2 = D.transform_to(c)
    print("constraint", c, "->", b, type(t2).__name__, "event_dim", c.event_dim,
          "discrete", c.is_discrete)

u = torch.randn(3, dtype=torch.float64)
print("biject simplex", D.biject_to(C.simplex)(u), D.transform_to(C.simplex)(u))
print("check", C.simplex.check(torch.tensor([0.2, 0.8])), C.positive.check(torch.tensor([-1.0, 2.0])))
print("integer", C.nonnegative_integer.check(torch.tensor([0.0, 1.5, 3.0])),
      C.integer_interval(0, 3).check(torch.tensor([0.0, 3.0, 4.0])))
print("boolean", C.boolean.check(torch.tensor([0.0, 1.0, 0.5])))

# LogNormal by hand vs built-in
base = D.Normal(torch.tensor([0.0, 0.3]), torch.tensor([1.0, 0.5]))
ln = D.TransformedDistribution(base, [T.ExpTransform()])
ref = D.LogNormal(torch.tensor([0.0, 0.3]), torch.tensor([1.0, 0.5]))
pts = torch.tensor([[0.5, 1.0], [2.0, 3.0]])
print("lognormal", ln.log_prob(pts), ref.log_prob(pts))
print("  cdf", ln.cdf(pts), ref.cdf(pts), "icdf", ln.icdf(torch.tensor([0.3, 0.7])))
print("  support", ln.support, "batch", ln.batch_shape, "event", ln.event_shape)
print("  has_rsample", ln.has_rsample, ln.sample((2,)).shape)

# Squashed Gaussian policy (SAC-style) with rsample gradients
mu = torch.tensor([[0.1, -0.3]], requires_grad=True)
log_std = torch.tensor([[-0.5, 0.2]], requires_grad=True)
pol = D.TransformedDistribution(D.Normal(mu, log_std.exp()),
                                [T.TanhTransform(cache_size=1), T.AffineTransform(0.0, 2.0)])
a = pol.rsample()
lp = pol.log_prob(a)
print("policy", a, lp)
(lp.sum() + a.pow(2).sum()).backward()
print("  grads", mu.grad, log_std.grad)
ind = D.Independent(pol, 1)
print("  independent", ind.batch_shape, ind.event_shape, ind.log_prob(a.detach()))

# Affine with event_dim and batch of scales
aff = T.AffineTransform(torch.zeros(3), torch.tensor([1.0, 2.0, 4.0]), event_dim=1)
td = D.TransformedDistribution(D.Independent(D.Normal(torch.zeros(3), torch.ones(3)), 1), aff)
print("affine event", td.event_shape, td.log_prob(torch.tensor([1.0, 1.0, 1.0])))
print("RESULT: done")
