"""A tour of torch.nn.functional as the "Neural Networks" tutorial and the functional API docs
use it: linear/bilinear, one_hot, normalize, cosine_similarity, pairwise_distance, pdist,
embedding (max_norm, padding_idx), pad modes, softmax family with dtype, dropout in eval,
losses with reductions, and the gradients/grad_fn names each produces."""

import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)
x = torch.randn(4, 5, requires_grad=True)
w = torch.randn(3, 5, requires_grad=True)
b = torch.randn(3, requires_grad=True)
y = F.linear(x, w, b)
print(y, type(y.grad_fn).__name__)
print(F.linear(x, w), type(F.linear(x[0], w).grad_fn).__name__)
bw = torch.randn(2, 5, 3, requires_grad=True)
bl = F.bilinear(x, torch.randn(4, 3), bw, torch.zeros(2))
print(bl, type(bl.grad_fn).__name__)

labels = torch.tensor([0, 2, 1, 2])
print(F.one_hot(labels), F.one_hot(labels, num_classes=5).dtype, F.one_hot(torch.tensor(3), 4))
print(F.one_hot(torch.tensor([[0, 1], [1, 0]])).shape)
try:
    F.one_hot(torch.tensor([0.0, 1.0]))
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    F.one_hot(torch.tensor([0, 4]), 3)
except RuntimeError as e:
    print(type(e).__name__, e)

n = F.normalize(x, dim=1)
print(n, n.norm(dim=1), type(n.grad_fn).__name__)
print(F.normalize(x, p=1, dim=0), F.normalize(torch.zeros(2, 3), dim=1))
print(F.cosine_similarity(x[:2], x[2:]), F.cosine_similarity(x, x[:1], dim=1))
print(F.pairwise_distance(x[:2], x[2:]), F.pairwise_distance(x[:2], x[2:], p=1, keepdim=True))
print(F.pdist(x), F.pdist(x, p=1).shape, torch.cdist(x, x).diagonal())
print(nn.CosineSimilarity(dim=0)(x, x + 1), nn.PairwiseDistance(p=3)(x, -x))

emb_w = torch.randn(10, 3, requires_grad=True)
idx = torch.tensor([[1, 2, 4], [4, 3, 9]])
e = F.embedding(idx, emb_w)
print(e.shape, e[1, 0], type(e.grad_fn).__name__)
e.sum().backward()
print(emb_w.grad[:5])
e2 = F.embedding(idx, emb_w, padding_idx=4)
e2.sum().backward()
print(emb_w.grad[4])
w2 = torch.randn(10, 3) * 3
F.embedding(idx, w2, max_norm=1.0)
print(w2.norm(dim=1))
emb = nn.Embedding(10, 3, padding_idx=0)
print(emb, emb.weight[0], nn.Embedding(5, 2, max_norm=2.0, scale_grad_by_freq=True))
pre = nn.Embedding.from_pretrained(torch.arange(6.0).reshape(3, 2))
print(pre, pre.weight.requires_grad, pre(torch.tensor([2, 0])))
bag = nn.EmbeddingBag(10, 3, mode="mean")
print(bag, bag(torch.tensor([1, 2, 4, 5, 4, 3]), torch.tensor([0, 3])))

img = torch.arange(9.0).reshape(1, 1, 3, 3)
for mode in ("constant", "reflect", "replicate", "circular"):
    print(mode, F.pad(img, (1, 1, 1, 0), mode=mode)[0, 0])
print(F.pad(torch.ones(2, 3), (1, 2)), F.pad(torch.ones(2, 3), (0, 0, 1, 1), value=-1.0))
print(F.pad(torch.ones(1, 2, 2), (1, 1), mode="reflect"), F.pad(torch.ones(3), (2, -1)))
print(
    nn.ZeroPad2d(1)(img).shape,
    nn.ConstantPad1d((1, 2), 3.5)(torch.ones(1, 2)),
    nn.ReflectionPad2d((1, 0, 0, 1))(img)[0, 0],
    nn.ReplicationPad1d(2)(torch.arange(3.0).reshape(1, 1, 3)),
    nn.CircularPad2d(1)(img)[0, 0, 0],
)

z = torch.randn(2, 4)
print(F.softmax(z, dim=-1, dtype=torch.float64), F.log_softmax(z, 0, dtype=torch.float64).dtype)
print(F.softmin(z, 1), F.gumbel_softmax(z, tau=0.5, hard=True).sum(1))
print(F.dropout(z, 0.5, training=False), F.dropout(z, p=0.0), F.alpha_dropout(z, 0.3, False))
print(
    F.dropout2d(torch.ones(1, 2, 2, 2), 0.5, training=False).sum(), F.feature_alpha_dropout(z, 0.1)
)

pred = torch.randn(4, 3, requires_grad=True)
tgt = torch.tensor([2, 0, 1, 1])
for red in ("mean", "sum", "none"):
    print(
        red,
        F.cross_entropy(pred, tgt, reduction=red),
        F.nll_loss(F.log_softmax(pred, 1), tgt, reduction=red),
    )
print(F.cross_entropy(pred, tgt, label_smoothing=0.1), F.cross_entropy(pred, tgt, ignore_index=1))
print(F.cross_entropy(pred, tgt, weight=torch.tensor([1.0, 2.0, 0.5])))
print(F.cross_entropy(pred, F.softmax(torch.randn(4, 3), 1)))
r = torch.randn(4, requires_grad=True)
t01 = torch.tensor([1.0, 0.0, 1.0, 0.0])
print(
    F.mse_loss(r, t01),
    F.l1_loss(r, t01),
    F.smooth_l1_loss(r, t01, beta=0.5),
    F.huber_loss(r, t01, delta=0.3),
)
print(
    F.binary_cross_entropy(torch.sigmoid(r), t01),
    F.binary_cross_entropy_with_logits(r, t01, pos_weight=torch.tensor(2.0)),
)
print(F.kl_div(F.log_softmax(pred, 1), F.softmax(torch.randn(4, 3), 1), reduction="batchmean"))
print(
    F.soft_margin_loss(r, t01 * 2 - 1),
    F.hinge_embedding_loss(r, t01 * 2 - 1),
    F.poisson_nll_loss(r, t01),
)
print(
    F.margin_ranking_loss(r, -r, t01 * 2 - 1),
    F.multi_margin_loss(pred, tgt),
    F.gaussian_nll_loss(r, t01, torch.ones(4)),
)
print(
    F.cosine_embedding_loss(x[:2], x[2:], torch.tensor([1, -1])),
    F.triplet_margin_loss(x[:1], x[1:2], x[2:3]),
)
print(
    F.multilabel_soft_margin_loss(pred, torch.tensor([[1.0, 0, 1]] * 4)),
    F.multilabel_margin_loss(pred, torch.tensor([[2, 0, -1]] * 4)),
)
loss = F.cross_entropy(pred, tgt) + F.mse_loss(y, torch.zeros(4, 3)) + bl.pow(2).mean()
loss.backward()
print(f"{loss.item():.5f}", pred.grad, x.grad, w.grad, b.grad, bw.grad.shape)
print(
    type(F.cross_entropy(pred, tgt).grad_fn).__name__,
    type(F.mse_loss(r, t01).grad_fn).__name__,
    type(F.l1_loss(r, t01).grad_fn).__name__,
    type(F.binary_cross_entropy_with_logits(r, t01).grad_fn).__name__,
    type(F.nll_loss(pred, tgt).grad_fn).__name__,
    type(F.smooth_l1_loss(r, t01).grad_fn).__name__,
    type(F.kl_div(pred, pred, reduction="sum").grad_fn).__name__,
)
print("RESULT: ok")
