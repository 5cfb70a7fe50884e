"""Pairwise scoring layers: nn.Bilinear as in Neural Tensor Networks / bilinear attention,
F.bilinear, nn.PairwiseDistance / nn.CosineSimilarity with their options, F.pdist, torch.cdist,
nn.Flatten / nn.Unflatten (named shapes too), nn.Identity with arbitrary args, and a Siamese
metric-learning head with TripletMarginWithDistanceLoss trained a few steps."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)
m = nn.Bilinear(20, 30, 40)
print(m)
input1 = torch.randn(128, 20)
input2 = torch.randn(128, 30)
output = m(input1, input2)
print(output.size(), type(output.grad_fn).__name__)
print(m.weight.shape, m.bias.shape, [n for n, _ in m.named_parameters()])
bl = nn.Bilinear(3, 2, 2, bias=False)
print(bl, bl.bias)
with torch.no_grad():
    bl.weight.copy_(torch.arange(12.0).view(2, 3, 2) / 10)
u = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
v = torch.tensor([[0.5, -1.0]], requires_grad=True)
out = bl(u, v)
print(out)
out.sum().backward()
print(u.grad, v.grad)
print(F.bilinear(u, v, bl.weight, torch.ones(2)))
print(nn.Bilinear(3, 2, 2)(torch.randn(3), torch.randn(2)).shape)
print(nn.Bilinear(3, 2, 2)(torch.randn(4, 5, 3), torch.randn(4, 5, 2)).shape)
try:
    m(input1, input2[:100])
except Exception as e:
    print(type(e).__name__, e)
try:
    m(input2, input1)
except Exception as e:
    print(type(e).__name__, e)
pdist = nn.PairwiseDistance(p=2)
print(pdist)
a = torch.randn(100, 128)
b = torch.randn(100, 128)
print(pdist(a, b).shape, pdist(a, b)[:3])
for p, eps, keep in [(1, 1e-6, False), (3.0, 0.0, True), (float("inf"), 1e-6, False)]:
    d = nn.PairwiseDistance(p=p, eps=eps, keepdim=keep)
    print(d, d(a[:2, :4], b[:2, :4]))
print(F.pairwise_distance(torch.ones(3), torch.zeros(3)))
cos = nn.CosineSimilarity(dim=1, eps=1e-6)
print(cos)
print(cos(a, b)[:3])
print(nn.CosineSimilarity(dim=0)(torch.tensor([1.0, 0.0]), torch.tensor([0.0, 0.0])))
print(F.cosine_similarity(a[:4, None, :], b[None, :3, :], dim=-1))
pts = torch.tensor([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0], [1.0, 1.0]])
print(F.pdist(pts), F.pdist(pts, p=1))
print(torch.cdist(pts, pts[:2]))
print(torch.cdist(pts[None], pts[None, :3], p=1.0))
print(torch.cdist(pts, pts[:2], compute_mode="donot_use_mm_for_euclid_dist"))
# Flatten / Unflatten / Identity
inp = torch.randn(32, 1, 5, 5)
m = nn.Sequential(nn.Conv2d(1, 32, 5, 1, 1), nn.Flatten())
print(m(inp).size())
print(nn.Flatten(0, 2)(inp).size(), nn.Flatten(start_dim=-2)(inp).shape)
print(nn.Flatten(), nn.Flatten(0, 2))
uf = nn.Unflatten(1, (2, 5, 5))
print(uf, uf(torch.randn(2, 50)).size())
print(nn.Unflatten(1, torch.Size([2, 5, 5]))(torch.randn(2, 50)).size())
print(nn.Unflatten(-1, (5, -1))(torch.randn(2, 50)).shape)
try:
    nn.Unflatten(1, (3, 5))(torch.randn(2, 50))
except Exception as e:
    print(type(e).__name__, e)
ident = nn.Identity(54, unused_argument1=0.1, unused_argument2=False)
print(ident)
t = torch.randn(128, 20)
print(ident(t) is t, ident(t).size())


class SiameseHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Flatten(), nn.Linear(16, 12), nn.ReLU(), nn.Linear(12, 6))
        self.rel = nn.Bilinear(6, 6, 1)
        self.cos = nn.CosineSimilarity(dim=1)

    def forward(self, x1, x2):
        e1, e2 = self.body(x1), self.body(x2)
        return e1, e2, self.rel(e1, e2).squeeze(1), self.cos(e1, e2)


net = SiameseHead()
print(net)
loss_fn = nn.TripletMarginWithDistanceLoss(distance_function=nn.PairwiseDistance(), margin=1.0)
print(loss_fn)
anchor, positive = torch.randn(8, 1, 4, 4), torch.randn(8, 1, 4, 4)
negative = torch.randn(8, 1, 4, 4)
positive = anchor + 0.1 * positive
opt = torch.optim.SGD(net.parameters(), lr=0.05)
for step in range(6):
    opt.zero_grad()
    ea, ep, rel, c = net(anchor, positive)
    _, en, reln, cn = net(anchor, negative)
    loss = loss_fn(ea, ep, en) + F.binary_cross_entropy_with_logits(
        torch.cat([rel, reln]), torch.cat([torch.ones(8), torch.zeros(8)]))
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f} cos+ {c.mean().item():.4f}",
          f"cos- {cn.mean().item():.4f}")
print("RESULT:", f"{loss.item():.4f}")
