"""A tour of torch's math and reduction ops as the "torch" API reference's examples use them:
pointwise, reductions (sum/mean/std/var/median/mode/logsumexp/quantile...), comparison,
and the other-ops section (cross, cdist, histc, bincount, diff, kron, trapezoid...)."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))

torch.manual_seed(0)
a = torch.randn(4)
print(a, torch.abs(a), torch.ceil(a), torch.floor(a), torch.round(a), torch.trunc(a))
print(torch.round(torch.tensor([0.5, 1.5, 2.5, -0.5])), torch.round(a, decimals=2),
      torch.frac(a), torch.sign(a), torch.sgn(a))
print(torch.clamp(a, min=-0.5, max=0.5), a.clamp(min=0), torch.clip(a, -0.1, 0.1))
print(torch.exp(a), torch.expm1(a), torch.log(a.abs()), torch.log1p(a.abs()), torch.log2(a.abs()))
print(torch.exp(a), torch.expm1(a), torch.log(a.abs()), torch.log1p(a.abs()),
      torch.log2(a.abs()))
print(torch.sqrt(a.abs()), torch.rsqrt(a.abs()), torch.sigmoid(a), torch.erf(a),
      torch.erfinv(a / 3))
print(torch.pow(a, 2), torch.pow(2, torch.arange(4)), torch.square(a), torch.reciprocal(a))
print(torch.logit(torch.tensor([0.25, 0.5])), torch.xlogy(torch.tensor([0.0, 2.0]), 3.0),
      torch.nan_to_num(torch.tensor([float('nan'), float('inf'), -float('inf'), 1.0])))
print(torch.add(a, 20), torch.add(a, torch.ones(4), alpha=10), torch.sub(a, 1, alpha=2),
      torch.mul(a, 100), torch.addcmul(a, a, a, value=0.1), torch.addcdiv(a, a, a + 5, value=2))
print(torch.float_power(torch.arange(3), 2), torch.copysign(a, -1),
      torch.deg2rad(torch.tensor(180.)))
print(torch.bitwise_and(torch.tensor([12, 10]), 6), torch.tensor([5]) << 1,
      torch.logical_xor(torch.tensor([True, False]), torch.tensor([True, True])))

x = torch.randn(4, 5)
print(torch.sum(x), x.sum(1), x.sum((0, 1)), x.sum(-1, keepdim=True).shape, x.nansum())
print(torch.mean(x), x.mean(0), torch.std(x), x.std(1, unbiased=False), x.var(0, correction=0))
print(torch.std_mean(x, dim=1), torch.var_mean(x, 0))
print(torch.median(x), x.median(1), torch.nanmedian(torch.tensor([1.0, float('nan'), 3.0])))
print(torch.mode(torch.tensor([1, 2, 2, 3, 3, 3, 1])), torch.logsumexp(x, 1), x.amax(1), x.amin(0))
print(torch.prod(x[0]), x.prod(1), torch.max(x), torch.min(x), torch.aminmax(x))
print(torch.quantile(x, 0.3), torch.quantile(x, torch.tensor([0.25, 0.75]), dim=1),
      torch.nanquantile(x, 0.5))
print(torch.all(x > -5), torch.any(x > 2), (x > 0).all(1), (x > 0).any(0), x.norm(), x.norm(1, 1))
print(torch.count_nonzero(x > 0, dim=1), torch.dist(x[0], x[1]), torch.dist(x[0], x[1], p=1))
print(torch.cumsum(x, 1), torch.logcumsumexp(x[0], 0), torch.cummin(x[0], 0))

print(torch.eq(x, x), torch.equal(x, x.clone()), torch.allclose(x, x + 1e-9),
      torch.isclose(torch.tensor([1.0, 1.1]), torch.tensor([1.0, 1.0])))
print(torch.ge(x[0], 0), torch.gt(x[0], x[1]), torch.maximum(x[0], x[1]), torch.fmax(x[0], x[1]))
print(torch.isnan(torch.tensor([1.0, float('nan')])), torch.isinf(torch.tensor([math.inf, 1.0])),
      torch.isfinite(torch.tensor([math.inf, 1.0, math.nan])), torch.isin(torch.arange(5),
                                                                          torch.tensor([1, 3])))

v1 = torch.randn(4, 3)
v2 = torch.randn(4, 3)
print(torch.cross(v1, v2, dim=1), torch.cdist(v1, v2), torch.cdist(v1, v2, p=1))
print(torch.histc(torch.tensor([1., 2, 1]), bins=4, min=0, max=3), torch.bincount(
    torch.tensor([0, 1, 1, 3])), torch.bincount(torch.tensor([0, 1]), torch.tensor([0.5, 2.0])))
print(torch.diff(torch.tensor([1, 3, 2])), torch.diff(x, dim=0).shape, torch.kron(
    torch.eye(2), torch.ones(2, 2)), torch.trapezoid(torch.tensor([1.0, 2.0, 3.0])))
print(torch.outer(torch.arange(3.), torch.arange(2.)), torch.dot(v1[0], v2[0]), torch.mv(v1, v2[0]))
print(torch.bmm(torch.ones(2, 2, 3), torch.ones(2, 3, 1)), torch.addmm(torch.zeros(4, 4), v1, v2.T))
print(torch.tensordot(v1, v2, dims=([1], [1])).shape, torch.inner(v1[0], v2[0]), torch.vander(
    torch.tensor([1, 2, 3]), N=3), torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([3])))
print(torch.combinations(torch.tensor([1, 2, 3])), torch.rot90(torch.arange(4).view(2, 2)),
      torch.block_diag(torch.ones(1, 1), 2 * torch.ones(2, 2)), torch.atleast_2d(torch.tensor(1.)))
print(torch.renorm(x, 2, 0, 1.0).norm(dim=1), torch.cov(x), torch.corrcoef(x[:2]))
print(torch.bucketize(torch.tensor([1, 5, 9]), torch.tensor([1, 3, 5, 7, 9])),
      torch.clamp(torch.arange(6), 1, 4),
      torch.heaviside(torch.tensor([-1., 0, 2]), torch.tensor(.5)))
print("RESULT: ok")
