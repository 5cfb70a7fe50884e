"""MaskedTensor semantics, shrunk from the PyTorch MaskedTensor tutorials (prototype/
maskedtensor_overview: construction, get_data/get_mask/to_tensor, reductions and unary/binary
ops that respect the mask; the "distinguishing between 0 and NaN gradient" issues from
torch.masked's README, with torch.where over masked tensors; and the torch.masked functional
reductions, softmax over padded rows included)."""
import importlib
import os
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
warnings.filterwarnings("ignore", message="The PyTorch API of MaskedTensors")
warnings.filterwarnings("ignore", message="It is not recommended to create a MaskedTensor")
masked_tensor = torch.masked.masked_tensor
as_masked_tensor = torch.masked.as_masked_tensor
torch.manual_seed(0)

# construction and accessors
data = torch.arange(24).reshape(2, 3, 4)
mask = data % 2 == 0
mt = masked_tensor(data.float(), mask)
print("data:\n", data)
print("mask:\n", mask)
print("mt:\n", mt)
print("to_tensor(0):\n", mt.to_tensor(0))
print("get_data is data:", torch.equal(mt.get_data(), data.float()))

# reductions skip masked-out elements
print("sum:", mt.sum())
print("sum(1):", mt.sum(1))
print("mean(0):", mt.mean(0))
print("amax(2):", mt.amax(2))
print("amin(2):", mt.amin(2))
print("prod(2):", mt.prod(2))
print("argmax(2):", mt.argmax(2))

# unary and binary ops keep the mask
print("sin:", mt.sin()[0])
print("mt * 2 + 1:", (mt * 2 + 1)[1])
other = masked_tensor(torch.ones(2, 3, 4), mask)
print("mt / other:", (mt / other)[0])
try:
    mt + masked_tensor(torch.ones(2, 3, 4), ~mask)
except ValueError as e:
    print("ValueError:", e)

# "sparse-ish" semantics: masked-out is absent, not zero
x = torch.tensor([[0., 0, 3], [4, 0, 5]])
mx = masked_tensor(x, x != 0)
print("mean of nonzeros:", mx.mean(), "dense mean: %.4f" % x.mean().item())
print("max over rows:", mx.amax(1))

# issue: torch.where with a NaN gradient outside the selected branch
x = torch.tensor([-10., -5, 0, 5, 10, 50, 60, 70, 80, 90, 100], requires_grad=True)
y = torch.where(x < 0, torch.exp(x), torch.ones_like(x))
y.sum().backward()
print("dense x.grad:", x.grad)
x = torch.tensor([-10., -5, 0, 5, 10, 50, 60, 70, 80, 90, 100])
m = x < 0
mx = masked_tensor(x, m, requires_grad=True)
my = masked_tensor(torch.ones_like(x), ~m, requires_grad=True)
y = torch.where(m, torch.exp(mx), my)
y.sum().backward()
print("y:", y)
print("mx.grad:", mx.grad)
print("my.grad:", my.grad)

# gradients of masked reductions land on the kept elements only
a = torch.randn(3, 4)
ma = masked_tensor(a, a > 0, requires_grad=True)
loss = ma.mean()
loss.backward()
print("masked mean %.4f" % loss.get_data().item())
print("grad:", ma.grad)
mb = masked_tensor(a, a > 0, requires_grad=True)
(mb.to_tensor(0) * 3).sum().backward()
print("grad of to_tensor:", mb.grad)

# torch.masked functional reductions over padded sequences
scores = torch.randn(3, 5, dtype=torch.float64)
lengths = torch.tensor([5, 2, 0])
pad_mask = torch.arange(5)[None, :] < lengths[:, None]
print("masked softmax:\n", torch.masked.softmax(scores, 1, mask=pad_mask))
print("masked log_softmax:\n", torch.masked.log_softmax(scores, 1, mask=pad_mask))
print("masked sum:", torch.masked.sum(scores, 1, mask=pad_mask))
print("masked mean:", torch.masked.mean(scores, 1, mask=pad_mask))
print("masked amax:", torch.masked.amax(scores, 1, mask=pad_mask))
print("masked amin keepdim:", torch.masked.amin(scores, 1, keepdim=True, mask=pad_mask))
print("masked prod:", torch.masked.prod(scores, 1, mask=pad_mask))
print("masked norm:", torch.masked.norm(scores, 2.0, 1, mask=pad_mask))
print("masked var:", torch.masked.var(scores, 1, unbiased=False, mask=pad_mask))
print("masked std:", torch.masked.std(scores, 1, mask=pad_mask))
print("masked sum all:", torch.masked.sum(scores, mask=pad_mask))
s = scores.clone().requires_grad_()
torch.masked.softmax(s, 1, mask=pad_mask)[:2].mul(torch.arange(5.)).sum().backward()
print("softmax grad:\n", s.grad)
