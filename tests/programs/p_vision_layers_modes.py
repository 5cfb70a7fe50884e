"""eval() vs train() of BatchNorm/Dropout (the classic forum questions), plus the vision layers a
tutorial prints: reprs, state_dict keys, momentum=None, track_running_stats, freeze-BN idiom."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)
x = torch.randn(4, 3, 6, 6) * 2 + 1
bn = nn.BatchNorm2d(3)
print(bn, bn.training, bn.momentum, bn.eps)
y_train = bn(x)
print(y_train.mean(dim=(0, 2, 3)), y_train.var(dim=(0, 2, 3), unbiased=False))
print(bn.running_mean, bn.running_var, bn.num_batches_tracked)
bn.eval()
y_eval = bn(x)
print(y_eval[0, 0, 0], torch.allclose(y_train, y_eval))
bn_cma = nn.BatchNorm2d(3, momentum=None)
for _ in range(3):
    bn_cma(torch.randn(4, 3, 5, 5))
print(bn_cma.running_mean, bn_cma.running_var, bn_cma.num_batches_tracked)
bn_nt = nn.BatchNorm1d(5, affine=False, track_running_stats=False)
print(bn_nt, bn_nt.running_mean, list(bn_nt.state_dict().keys()))
bn_nt.eval()
print(bn_nt(torch.randn(6, 5))[0])
print(list(nn.BatchNorm3d(2).state_dict().keys()))
print(nn.BatchNorm1d(4)(torch.randn(3, 4, 7)).shape)

drop = nn.Dropout(p=0.5)
ones = torch.ones(2, 8)
print(drop, drop(ones))
drop.eval()
print(drop(ones))
d2 = nn.Dropout2d(0.3)
print(d2, d2(torch.ones(2, 4, 2, 2))[:, :, 0, 0])
print(nn.AlphaDropout(0.2)(torch.randn(3, 4)))
print(nn.FeatureAlphaDropout(0.2)(torch.randn(2, 3, 2)))
print(F.dropout(ones, 0.25, training=False).sum(), F.dropout1d(torch.ones(1, 4, 3), 0.5)[0, :, 0])

model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                      nn.Dropout(0.2), nn.AdaptiveMaxPool2d(2), nn.Flatten(), nn.Linear(16, 2))
model.train()


def set_bn_eval(m):
    classname = m.__class__.__name__
    if classname.find('BatchNorm') != -1:
        m.eval()


model.apply(set_bn_eval)
print([m.training for m in model])
out = model(x)
out.sum().backward()
print(out, model[1].running_mean, model[1].weight.grad)
for m in model.modules():
    if isinstance(m, nn.BatchNorm2d):
        m.weight.requires_grad_(False)
        m.bias.requires_grad_(False)
print(sum(p.numel() for p in model.parameters() if p.requires_grad))

inorm = nn.InstanceNorm2d(3)
print(inorm, inorm(x)[0, 0, 0])
inorm_t = nn.InstanceNorm2d(3, affine=True, track_running_stats=True)
inorm_t(x)
print(inorm_t.running_mean, list(inorm_t.state_dict().keys()))
inorm_t.eval()
print(inorm_t(x)[0, 0, 0])
gn = nn.GroupNorm(1, 3)
ln = nn.LayerNorm([3, 6, 6], elementwise_affine=False)
print(gn, ln, torch.allclose(gn(x), ln(x), atol=1e-5))
lrn = nn.LocalResponseNorm(2)
print(lrn, lrn(x)[0, :, 0, 0])
print(nn.CrossMapLRN2d(3)(x)[0, :, 0, 0] if hasattr(nn, "CrossMapLRN2d") else "n/a")

ups = [nn.Upsample(scale_factor=2, mode=m) for m in ("nearest", "bilinear", "bicubic")]
ups.append(nn.UpsamplingNearest2d(scale_factor=2))
ups.append(nn.UpsamplingBilinear2d(size=(9, 9)))
for u in ups:
    print(u, u(x)[0, 0, 1, :4])
print(F.interpolate(x, size=(4, 5), mode="area")[0, 0, 0])
print(F.interpolate(x, scale_factor=1.5, mode="nearest-exact")[0, 0, 0])
print(F.interpolate(x, scale_factor=0.7, mode="bilinear", antialias=True)[0, 0, 0])
print(F.interpolate(x[:, :, 0], scale_factor=2, mode="linear", align_corners=False)[0, 0, :5])
pads = [nn.ReflectionPad2d((1, 0, 2, 1)), nn.ReplicationPad2d(1), nn.ZeroPad2d((0, 1, 1, 0)),
        nn.ConstantPad2d(1, 3.5), nn.CircularPad2d(1)]
for p in pads:
    print(p, p(x).shape, p(x)[0, 0, 0, :4])
print(nn.ChannelShuffle(3)(torch.arange(6.).view(1, 6, 1, 1)).view(-1))
print(nn.PixelShuffle(2), nn.PixelUnshuffle(2)(x[:, :, :4, :4]).shape)
unf = nn.Unfold(kernel_size=(2, 3), padding=1, stride=2)
fold = nn.Fold(output_size=(6, 6), kernel_size=(2, 3), padding=1, stride=2)
cols = unf(x)
print(unf, fold, cols.shape, fold(cols)[0, 0, 0])
print(nn.Unflatten(1, (2, 2))(torch.arange(8.).view(2, 4)).shape, nn.Flatten(0, 2)(x).shape)
pools = [nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), nn.AvgPool2d(3, 2, 1,
         count_include_pad=False), nn.LPPool2d(2, 2), nn.AdaptiveAvgPool2d((None, 2)),
         nn.FractionalMaxPool2d(2, output_size=3)]
for p in pools:
    print(p, p(x)[0, 0])
mp = nn.MaxPool2d(2, return_indices=True)
o, idx = mp(x)
print(idx[0, 0], nn.MaxUnpool2d(2)(o, idx).shape)
convs = [nn.Conv2d(3, 6, 3, groups=3, padding="same", padding_mode="reflect"),
         nn.Conv2d(3, 4, (3, 2), stride=(2, 1), dilation=2, padding_mode="circular", padding=2),
         nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1),
         nn.Conv1d(3, 2, 2), nn.Conv3d(3, 2, 1)]
for c in convs:
    print(c)
print(convs[0](x).shape, convs[1](x).shape, convs[2](x).shape,
      convs[2](x, output_size=[12, 12]).shape)
print("RESULT:", convs[0](x)[0, 0, 0])
