"""Gradients through the less common layers, checked the way forum answers do it (print the
.grad of a small arange input): 3-D / unbatched pooling with indices, FractionalMaxPool3d,
AdaptiveMaxPool3d, LPPool3d, MaxUnpool with stride != kernel, EmbeddingBag max/mean backward
with padding_idx and per_sample_weights, Fold/Unfold, padding layers, Bilinear and
PairwiseDistance, plus parametrize.type_before_parametrizations and transfer_parametrizations."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
P = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.utils.parametrize")


def grad_of(fn, *shape, scale=1.0):
    x = (torch.arange(1, 1 + int(torch.tensor(shape).prod()), dtype=torch.float32)
         .reshape(*shape) * scale)
    x = ((x * 37) % 11 - 5).requires_grad_()
    out = fn(x)
    out = out[0] if isinstance(out, tuple) else out
    w = torch.linspace(-1, 1, out.numel()).reshape(out.shape)
    (out * w).sum().backward()
    print(type(out.grad_fn).__name__, tuple(out.shape))
    print(x.grad)


torch.manual_seed(0)
grad_of(nn.MaxPool3d(2, stride=1, return_indices=True), 1, 1, 3, 3, 3)
grad_of(nn.MaxPool1d(3, stride=2, padding=1, dilation=2, ceil_mode=True), 1, 2, 9)
grad_of(nn.MaxPool2d(2, ceil_mode=True), 2, 5, 5)
grad_of(nn.AvgPool1d(3, stride=2, padding=1, count_include_pad=False), 1, 7)
grad_of(nn.AvgPool3d((1, 2, 2), ceil_mode=True), 1, 1, 2, 3, 3)
grad_of(nn.AdaptiveMaxPool3d((2, 1, 2), return_indices=True), 1, 2, 3, 3, 4)
grad_of(nn.AdaptiveAvgPool1d(3), 2, 7)
grad_of(nn.AdaptiveAvgPool3d((1, 2, None)), 1, 1, 2, 3, 2)
grad_of(nn.LPPool1d(2, 3, stride=2), 1, 1, 7)
grad_of(nn.LPPool3d(2, 2), 1, 1, 2, 4, 4, scale=0.1)
o, i = nn.AdaptiveMaxPool3d(2, return_indices=True)(torch.arange(27.0).view(1, 3, 3, 3))
print(o, i)
fmp3 = nn.FractionalMaxPool3d(2, output_size=(2, 3, 2), return_indices=True,
                              _random_samples=torch.tensor([[[0.2, 0.5, 0.8]]]))
print(fmp3)
grad_of(fmp3, 1, 1, 4, 5, 4)
fmp = nn.FractionalMaxPool2d((2, 3), output_ratio=0.5,
                             _random_samples=torch.tensor([[[0.7, 0.2]], [[0.1, 0.4]]]))
grad_of(fmp, 2, 1, 6, 8)
pool = nn.MaxPool2d(3, stride=2, return_indices=True)
unpool = nn.MaxUnpool2d(3, stride=2)
x = torch.randn(1, 1, 7, 7)
o, i = pool(x)
print(unpool(o, i).shape, (unpool(o, i) != 0).sum().item())
o = o.detach().requires_grad_()
u = F.max_unpool2d(o, i, 3, 2, output_size=(8, 8))
(u * torch.arange(64.0).view(1, 1, 8, 8)).sum().backward()
print(type(u.grad_fn).__name__, o.grad)
print(F.max_unpool1d(torch.tensor([[[5.0, 7.0]]]), torch.tensor([[[1, 4]]]), 2, 3))
print(F.max_unpool3d(torch.ones(1, 1, 1, 1, 1), torch.tensor([[[[[5]]]]]), 2).view(-1))

w = torch.arange(12.0).view(6, 2).requires_grad_()
for mode in ["sum", "mean", "max"]:
    out = F.embedding_bag(torch.tensor([1, 2, 2, 4, 5, 0]), w, torch.tensor([0, 2, 2]),
                          mode=mode, padding_idx=2)
    (out * torch.tensor([[1.0, -2.0], [3.0, 4.0], [0.5, 0.25]])).sum().backward()
    print(mode, type(out.grad_fn).__name__, out, w.grad, sep="\n")
    w.grad = None
psw = torch.tensor([0.5, 2.0, -1.0, 3.0], requires_grad=True)
out = F.embedding_bag(torch.tensor([1, 3, 3, 5]), w, torch.tensor([0, 1]), mode="sum",
                      per_sample_weights=psw, padding_idx=5)
out.sum().backward()
print(out, psw.grad, w.grad, sep="\n")
grad_of(lambda t: F.fold(t, (3, 4), (2, 2), stride=1), 1, 4, 6)
grad_of(lambda t: F.unfold(t, (2, 2), dilation=(1, 2), padding=(0, 1), stride=(2, 1)), 1, 1, 4, 4)
grad_of(nn.ReflectionPad3d((1, 0, 0, 1, 1, 0)), 1, 1, 2, 2, 2)
grad_of(nn.ReplicationPad1d((3, 1)), 1, 2, 3)
grad_of(nn.CircularPad3d(1), 1, 1, 2, 2, 2)
grad_of(nn.ZeroPad2d((-1, 2, 1, -1)), 1, 1, 3, 3)
bl = nn.Bilinear(2, 3, 2)
grad_of(lambda t: bl(t, t[:, :1].expand(4, 3)), 4, 2)
print(bl.weight.grad, bl.bias.grad)
grad_of(lambda t: nn.PairwiseDistance(p=1.5)(t[:2], t[2:]), 4, 3)
grad_of(lambda t: nn.CosineSimilarity(dim=0)(t[:2], t[2:]), 4, 3)
grad_of(lambda t: F.pdist(t, p=3), 4, 3)
grad_of(lambda t: F.pixel_unshuffle(t, 2), 1, 1, 4, 4)
grad_of(lambda t: F.interpolate(t, scale_factor=2.5, mode="bicubic", align_corners=False),
        1, 1, 2, 3)
grad_of(lambda t: F.interpolate(t, size=(2, 3, 3), mode="trilinear"), 1, 1, 2, 2, 2)


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


m = nn.Linear(3, 3)
P.register_parametrization(m, "weight", Symmetric())
print(type(m).__name__, P.type_before_parametrizations(m).__name__)
m2 = nn.Linear(3, 3)
P.transfer_parametrizations_and_params(m, m2)
print(P.is_parametrized(m2, "weight"), torch.equal(m2.weight, m.weight), type(m2).__name__)
print(sorted(m2.state_dict().keys()))
pre = nn.Linear(3, 3)
P.register_parametrization(pre, "weight", nn.Identity(), unsafe=True)
print(pre.parametrizations.weight, pre.weight.shape)
print("RESULT: done")
