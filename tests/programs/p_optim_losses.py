"""The torch.nn loss functions as their docs' examples use them (module and functional forms),
with the options people reach for: label_smoothing, class weights, ignore_index, pos_weight,
log_target, reductions; values and input gradients printed."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)


def show(name, loss, *inputs):
    print(name, loss)
    if loss.requires_grad:
        loss.sum().backward() if loss.dim() else loss.backward()
        for t in inputs:
            print("  grad", t.grad)
            t.grad = None


# CrossEntropyLoss: class indices, probabilities, label smoothing, weights, ignore_index
input = torch.randn(5, 4, requires_grad=True)
target = torch.tensor([1, 0, 3, 3, 2])
show("ce", nn.CrossEntropyLoss()(input, target), input)
show("ce smooth", nn.CrossEntropyLoss(label_smoothing=0.1)(input, target), input)
w = torch.tensor([1.0, 2.0, 0.5, 1.5])
show("ce weight", nn.CrossEntropyLoss(weight=w)(input, target), input)
show("ce weight smooth", nn.CrossEntropyLoss(weight=w, label_smoothing=0.2)(input, target), input)
t_ign = torch.tensor([1, -100, 3, 3, -100])
show("ce ignore", nn.CrossEntropyLoss(ignore_index=-100)(input, t_ign), input)
show("ce ignore=3 sum", nn.CrossEntropyLoss(ignore_index=3, reduction="sum")(input, target), input)
show("ce none", nn.CrossEntropyLoss(reduction="none", label_smoothing=0.05)(input, target), input)
probs = torch.randn(5, 4).softmax(dim=1)
show("ce probs", nn.CrossEntropyLoss()(input, probs), input)
show("ce probs smooth w", F.cross_entropy(input, probs, weight=w, label_smoothing=0.3), input)
img = torch.randn(2, 3, 2, 2, requires_grad=True)
img_t = torch.randint(0, 3, (2, 2, 2))
show("ce 4d", F.cross_entropy(img, img_t, label_smoothing=0.1), img)

# NLLLoss after LogSoftmax, as in the docs
m = nn.LogSoftmax(dim=1)
loss = nn.NLLLoss()
show("nll", loss(m(input), target), input)
show("nll w", nn.NLLLoss(weight=w, reduction="mean")(m(input), target), input)
show("nll ignore", F.nll_loss(m(input), t_ign, reduction="none"), input)

# binary losses
logits = torch.randn(4, 3, requires_grad=True)
labels = torch.empty(4, 3).random_(2)
pos_weight = torch.tensor([1.0, 3.0, 0.5])
show("bcewl", nn.BCEWithLogitsLoss()(logits, labels), logits)
show("bcewl pos", nn.BCEWithLogitsLoss(pos_weight=pos_weight)(logits, labels), logits)
show("bcewl w", nn.BCEWithLogitsLoss(weight=torch.tensor([0.2, 1.0, 2.0]), reduction="sum")(
    logits, labels), logits)
p = torch.sigmoid(logits)
show("bce", nn.BCELoss()(p, labels), logits)
show("mlsm", nn.MultiLabelSoftMarginLoss()(logits, labels), logits)
show("mlsm w", nn.MultiLabelSoftMarginLoss(weight=torch.tensor([1.0, 2.0, 3.0]))(logits, labels),
     logits)
show("soft margin", nn.SoftMarginLoss()(logits, labels * 2 - 1), logits)

# regression losses
a = torch.randn(3, 5, requires_grad=True)
b = torch.randn(3, 5) * 2
show("mse", nn.MSELoss()(a, b), a)
show("l1", nn.L1Loss(reduction="sum")(a, b), a)
show("huber", nn.HuberLoss()(a, b), a)
show("huber d", nn.HuberLoss(delta=0.5, reduction="sum")(a, b), a)
show("smoothl1", nn.SmoothL1Loss()(a, b), a)
show("smoothl1 b", nn.SmoothL1Loss(beta=2.0)(a, b), a)
show("smoothl1 b0", F.smooth_l1_loss(a, b, beta=0.0), a)

# KLDivLoss with log_target
kl_loss = nn.KLDivLoss(reduction="batchmean")
input_kl = F.log_softmax(torch.randn(3, 5, requires_grad=True), dim=1)
target_kl = F.softmax(torch.rand(3, 5), dim=1)
print("kl", kl_loss(input_kl, target_kl))
kl_loss = nn.KLDivLoss(reduction="batchmean", log_target=True)
log_target = F.log_softmax(torch.rand(3, 5), dim=1)
print("kl log", kl_loss(input_kl, log_target))
print("kl sum", F.kl_div(input_kl, target_kl, reduction="sum"))
print("kl none", F.kl_div(input_kl, log_target, reduction="none", log_target=True))

# Poisson and Gaussian NLL
log_input = torch.randn(5, 2, requires_grad=True)
counts = torch.randn(5, 2).abs() * 3
show("poisson", nn.PoissonNLLLoss()(log_input, counts), log_input)
show("poisson full", nn.PoissonNLLLoss(log_input=True, full=True)(log_input, counts), log_input)
rates = log_input.exp().detach().requires_grad_()
show("poisson rate", nn.PoissonNLLLoss(log_input=False, eps=1e-6)(rates, counts), rates)
g_in = torch.randn(5, 2, requires_grad=True)
g_t = torch.randn(5, 2)
var = torch.ones(5, 2, requires_grad=True)
show("gauss", nn.GaussianNLLLoss()(g_in, g_t, var), g_in, var)
var1 = torch.full((5, 1), 0.5, requires_grad=True)
show("gauss full", nn.GaussianNLLLoss(full=True, eps=1e-3)(g_in, g_t, var1), g_in, var1)

# embedding and ranking losses
anchor = torch.randn(6, 8, requires_grad=True)
positive = torch.randn(6, 8)
negative = torch.randn(6, 8)
show("triplet", nn.TripletMarginLoss(margin=1.0, p=2)(anchor, positive, negative), anchor)
show("triplet swap", nn.TripletMarginLoss(margin=0.5, p=1, swap=True)(anchor, positive,
                                                                     negative), anchor)
show("triplet dist", nn.TripletMarginWithDistanceLoss(
    distance_function=nn.PairwiseDistance(), margin=2.0)(anchor, positive, negative), anchor)
show("triplet cos", nn.TripletMarginWithDistanceLoss(
    distance_function=lambda x, y: 1.0 - F.cosine_similarity(x, y))(anchor, positive, negative),
    anchor)
y = torch.tensor([1, -1, 1, -1, 1, -1])
show("cosemb", nn.CosineEmbeddingLoss(margin=0.2)(anchor, positive, y), anchor)
x1 = torch.randn(6, requires_grad=True)
x2 = torch.randn(6)
show("rank", nn.MarginRankingLoss(margin=0.1)(x1, x2, y.float()), x1)
show("hinge emb", nn.HingeEmbeddingLoss(margin=0.5)(x1, y.float()), x1)
show("multimargin", nn.MultiMarginLoss()(input, target), input)
show("multimargin p2", nn.MultiMarginLoss(p=2, margin=0.5, weight=w)(input, target), input)
ml_t = torch.tensor([[3, 0, -1, 1], [1, 2, -1, 0], [0, -1, 2, 3], [2, 1, 0, -1], [3, -1, 0, 0]])
show("multilabel margin", nn.MultiLabelMarginLoss()(input, ml_t), input)

# CTC loss, as in its docstring (shrunk)
T, C, N, S, S_min = 12, 5, 3, 6, 2
inp = torch.randn(T, N, C).log_softmax(2).detach().requires_grad_()
tgt = torch.randint(low=1, high=C, size=(N, S), dtype=torch.long)
input_lengths = torch.full(size=(N,), fill_value=T, dtype=torch.long)
target_lengths = torch.randint(low=S_min, high=S, size=(N,), dtype=torch.long)
ctc_loss = nn.CTCLoss()
loss = ctc_loss(inp, tgt, input_lengths, target_lengths)
print("ctc", loss)
loss.backward()
print(inp.grad[0])
inp.grad = None
ctc = nn.CTCLoss(blank=0, reduction="sum", zero_infinity=True)
print("ctc sum", ctc(inp, tgt, input_lengths, target_lengths))
print("ctc none", F.ctc_loss(inp, tgt, input_lengths, target_lengths, reduction="none"))
print(nn.CrossEntropyLoss(label_smoothing=0.1), nn.CTCLoss(), nn.HuberLoss(delta=2.0))
print(nn.BCEWithLogitsLoss(pos_weight=pos_weight).pos_weight)
print(sorted(nn.CrossEntropyLoss(weight=w).state_dict().keys()))
print("RESULT: ok")
