"""The "Examples:" sections of the torch.nn module docstrings (torch/nn/modules/*.py), run as
the docs write them and shrunk: each module is built with the docs' arguments, printed (its
extra_repr), applied to the docs' input and its output shape and a checksum printed."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn

torch.manual_seed(0)
cases = [
    (nn.Conv2d(4, 6, (3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1)), (2, 4, 10, 12)),
    (nn.Conv1d(4, 6, 3, stride=2, padding="valid", padding_mode="circular"), (2, 4, 11)),
    (nn.Conv2d(4, 4, 3, padding="same", padding_mode="reflect", groups=2, bias=False), (1, 4, 6, 6)),  # noqa: E501
    (nn.ConvTranspose2d(4, 6, (3, 5), stride=(2, 1), padding=(4, 2), output_padding=(1, 0)), (1, 4, 8, 9)),  # noqa: E501
    (nn.ConvTranspose1d(4, 2, 3, stride=2, dilation=2), (1, 4, 5)),
    (nn.Conv3d(2, 3, (3, 5, 2), stride=(2, 1, 1), padding=(4, 2, 0)), (1, 2, 6, 7, 4)),
    (nn.MaxPool2d((3, 2), stride=(2, 1), return_indices=False, ceil_mode=True), (1, 2, 7, 6)),
    (nn.MaxPool1d(3, stride=2, padding=1, dilation=2), (1, 2, 9)),
    (nn.AvgPool2d((3, 2), stride=(2, 1), count_include_pad=False, divisor_override=3), (1, 2, 7, 6)),  # noqa: E501
    (nn.LPPool2d(1.5, (3, 2), stride=(2, 1)), (1, 2, 7, 6)),
    (nn.LPPool1d(2, 3, stride=2), (1, 2, 9)),
    (nn.AdaptiveMaxPool2d((5, None)), (1, 2, 8, 9)),
    (nn.AdaptiveAvgPool3d((2, None, 3)), (1, 2, 5, 6, 7)),
    (nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5)), (1, 2, 10, 10)),
    (nn.BatchNorm2d(4, affine=False, momentum=None), (3, 4, 2, 2)),
    (nn.InstanceNorm1d(4, affine=True, track_running_stats=True), (2, 4, 6)),
    (nn.GroupNorm(2, 4, eps=1e-3), (2, 4, 3)),
    (nn.LayerNorm([3, 4], elementwise_affine=False), (2, 3, 4)),
    (nn.LayerNorm(4, bias=False), (2, 4)),
    (nn.RMSNorm([4], eps=1e-6), (2, 3, 4)),
    (nn.LocalResponseNorm(2), (1, 4, 3, 3)),
    (nn.CrossMapLRN2d(3, alpha=1e-3), (1, 4, 3, 3)),
    (nn.Dropout1d(p=0.2), (2, 4, 5)),
    (nn.AlphaDropout(p=0.2), (3, 4)),
    (nn.FeatureAlphaDropout(p=0.2), (2, 4, 3, 3)),
    (nn.Hardtanh(-2, 2), (3, 4)),
    (nn.ReLU6(inplace=True), (3, 4)),
    (nn.RReLU(0.1, 0.3), (3, 4)),
    (nn.Threshold(0.1, 20), (3, 4)),
    (nn.ELU(alpha=0.5, inplace=False), (3, 4)),
    (nn.CELU(alpha=2.0), (3, 4)),
    (nn.Softplus(beta=2, threshold=10), (3, 4)),
    (nn.Softshrink(0.3), (3, 4)),
    (nn.Hardshrink(lambd=0.2), (3, 4)),
    (nn.LeakyReLU(0.1), (3, 4)),
    (nn.PReLU(num_parameters=4, init=0.1), (3, 4)),
    (nn.GLU(dim=0), (4, 3)),
    (nn.Softmin(dim=1), (3, 4)),
    (nn.Softmax2d(), (1, 4, 2, 2)),
    (nn.LogSoftmax(dim=-1), (3, 4)),
    (nn.GELU(approximate="tanh"), (3, 4)),
    (nn.Hardswish(), (3, 4)),
    (nn.Tanhshrink(), (3, 4)),
    (nn.Flatten(0, 2), (2, 3, 4)),
    (nn.Unflatten(1, (2, 2)), (3, 4)),
    (nn.Unflatten(-1, torch.Size([2, 2])), (3, 4)),
    (nn.PixelShuffle(2), (1, 8, 2, 3)),
    (nn.PixelUnshuffle(2), (1, 2, 4, 6)),
    (nn.ChannelShuffle(2), (1, 4, 2, 2)),
    (nn.Upsample(scale_factor=1.5, mode="bilinear", align_corners=True), (1, 2, 2, 2)),
    (nn.Upsample(size=(3, 5), mode="nearest-exact"), (1, 2, 2, 2)),
    (nn.UpsamplingNearest2d(scale_factor=2), (1, 1, 2, 2)),
    (nn.UpsamplingBilinear2d(size=(3, 3)), (1, 1, 2, 2)),
    (nn.ReflectionPad2d((1, 1, 2, 0)), (1, 1, 3, 3)),
    (nn.ReplicationPad1d(2), (1, 2, 4)),
    (nn.CircularPad2d((1, 0, 2, 1)), (1, 1, 3, 3)),
    (nn.ConstantPad3d((3, 3, 6, 6, 0, 1), 3.5), (1, 1, 2, 2, 2)),
    (nn.ZeroPad1d((2, -1)), (1, 2, 4)),
    (nn.Fold(output_size=(4, 5), kernel_size=(2, 2)), (1, 8, 12)),
    (nn.Unfold(kernel_size=(2, 3), dilation=1, padding=1, stride=2), (1, 2, 4, 5)),
    (nn.Identity(54, unused_argument1=0.1, unused_argument2=False), (3, 4)),
    (nn.Linear(4, 3, bias=False), (2, 4)),
    (nn.Embedding(10, 3, padding_idx=0, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True), None),  # noqa: E501
    (nn.EmbeddingBag(10, 3, mode="max"), None),
    (nn.CosineSimilarity(dim=1, eps=1e-6), None),
    (nn.PairwiseDistance(p=1.5, keepdim=True), None),
    (nn.RNN(4, 5, 2, nonlinearity="relu", bias=False, dropout=0.0), (3, 2, 4)),
    (nn.LSTM(4, 6, proj_size=3, batch_first=True, bidirectional=True), (2, 3, 4)),
    (nn.GRU(4, 5, num_layers=1), (3, 2, 4)),
    (nn.LSTMCell(4, 5, bias=False), (2, 4)),
    (nn.RNNCell(4, 5, nonlinearity="relu"), (2, 4)),
    (nn.Bilinear(4, 3, 2), None),
    (nn.MaxUnpool2d(2, stride=2), None),
]
for mod, shape in cases:
    print(mod)
    if shape is None:
        continue
    x = torch.randn(*shape)
    out = mod(x)
    if isinstance(out, tuple):
        out = out[0]
    print("  ->", tuple(out.shape), round(out.double().abs().sum().item(), 4))

emb, bag, cos, pdist, bil, unpool = [c[0] for c in cases if c[1] is None]
idx = torch.tensor([[1, 2, 4, 5], [4, 3, 2, 9]])
print("emb", emb(idx).abs().sum().item(), emb.weight.norm(p=1, dim=1)[:5])
print("bag", bag(torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 4])).shape)
a, b = torch.randn(5, 3), torch.randn(5, 3)
print("cos", cos(a, b), "pdist", pdist(a, b).shape)
print("bil", bil(torch.randn(2, 4), torch.randn(2, 3)).shape)
pool = nn.MaxPool2d(2, stride=2, return_indices=True)
print(pool)
o, ind = pool(torch.arange(16.0).view(1, 1, 4, 4))
print("unpool", unpool(o, ind), unpool(o, ind, output_size=torch.Size([1, 1, 5, 5])).shape)
lazy = nn.LazyConv2d(5, 3)
print(lazy)
lazy(torch.randn(1, 2, 4, 4))
print(lazy, type(lazy).__name__)
als = nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[3, 6], div_value=2.0)
print(als)
res = als(torch.randn(4, 8), torch.tensor([0, 4, 7, 9]))
print("asm", res.output.shape, res.loss.item() > 0, als.predict(torch.randn(2, 8)).shape)
losses = [nn.CTCLoss(blank=1, zero_infinity=True), nn.MultiLabelSoftMarginLoss(reduction="sum"),
          nn.TripletMarginWithDistanceLoss(margin=0.5, swap=True), nn.PoissonNLLLoss(log_input=False),  # noqa: E501
          nn.GaussianNLLLoss(full=True, eps=1e-3), nn.HuberLoss(delta=0.5), nn.SmoothL1Loss(beta=0.2),  # noqa: E501
          nn.MarginRankingLoss(margin=0.1), nn.CosineEmbeddingLoss(margin=0.2),
          nn.MultiMarginLoss(p=2, margin=0.5), nn.KLDivLoss(reduction="batchmean", log_target=True),
          nn.NLLLoss(ignore_index=2), nn.CrossEntropyLoss(label_smoothing=0.1),
          nn.BCEWithLogitsLoss(pos_weight=torch.ones(3))]
for loss in losses:
    print(loss, loss.reduction)
