"""Custom autograd Functions as real repos write them (shrunk): fungtion/DANN's ReverseLayerF
(gradient reversal with ctx.alpha and view_as), lukemelas/EfficientNet-PyTorch's
SwishImplementation (memory-efficient swish), fairseq's GradMultiply (x.new(x)) and its
straight-through round/clamp, BinaryConnect's sign STE with hardtanh gating, an in-place
Function with ctx.mark_dirty, set_materialize_grads(False) with an unused output, non-tensor
outputs, setup_context-style Functions with needs_input_grad, and the errors autograd raises
for wrong gradient counts/shapes, once_differentiable double backward, and saved tensors
freed after backward."""
import importlib
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
Function = torch.autograd.Function
once_differentiable = importlib.import_module(LIB + ".autograd.function").once_differentiable

torch.manual_seed(0)


def fmt(t):
    return [round(v, 5) for v in t.detach().reshape(-1)[:5].tolist()]


class ReverseLayerF(Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        output = grad_output.neg() * ctx.alpha
        return output, None


class SwishImplementation(Function):
    @staticmethod
    def forward(ctx, i):
        result = i * torch.sigmoid(i)
        ctx.save_for_backward(i)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        i = ctx.saved_tensors[0]
        sigmoid_i = torch.sigmoid(i)
        return grad_output * (sigmoid_i * (1 + i * (1 - sigmoid_i)))


class MemoryEfficientSwish(nn.Module):
    def forward(self, x):
        return SwishImplementation.apply(x)


class GradMultiply(Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        res = x.new(x)
        return res

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale, None


class RoundSTE(Function):
    @staticmethod
    def forward(ctx, x):
        return x.round()

    @staticmethod
    def backward(ctx, grad):
        return grad


class BinarizeF(Function):
    @staticmethod
    def forward(ctx, inp):
        ctx.save_for_backward(inp)
        return inp.sign()

    @staticmethod
    def backward(ctx, grad_output):
        (inp,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[inp.abs() > 1] = 0
        return grad_input


# DANN: feature extractor -> (class head, reversed domain head)
feat = nn.Sequential(nn.Linear(4, 6), MemoryEfficientSwish())
cls_head, dom_head = nn.Linear(6, 2), nn.Linear(6, 2)
x = torch.randn(8, 4)
yc, yd = torch.randint(0, 2, (8,)), torch.randint(0, 2, (8,))
for alpha in (0.0, 0.5):
    for m in (feat, cls_head, dom_head):
        m.zero_grad()
    f = feat(x)
    rev = ReverseLayerF.apply(f, alpha)
    print("rev grad_fn", type(rev.grad_fn).__name__, rev.is_leaf, rev._base is f)
    loss = F.cross_entropy(cls_head(f), yc) + F.cross_entropy(dom_head(rev), yd)
    loss.backward()
    print("dann", alpha, round(loss.item(), 5), fmt(feat[0].weight.grad), fmt(dom_head.weight.grad))
print("swish check", torch.autograd.gradcheck(SwishImplementation.apply,
                                               (torch.randn(5, dtype=torch.double,
                                                            requires_grad=True),)))
t = torch.randn(4, requires_grad=True)
y = GradMultiply.apply(t, 0.25)
y.sum().backward()
print("gradmultiply", fmt(t.grad), type(y.grad_fn).__name__, y.data_ptr() != t.data_ptr())
w = torch.randn(6, requires_grad=True)
q = RoundSTE.apply(w * 3) / 3
qb = BinarizeF.apply(w * 2)
(q.sum() + (qb * torch.arange(6.0)).sum()).backward()
print("ste", fmt(q), fmt(qb), fmt(w.grad))


class AddOne_(Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


a = torch.randn(3, requires_grad=True)
b = a * 2
v0 = b._version
c = AddOne_.apply(b)
print("mark_dirty", c is b, b._version - v0, type(c.grad_fn).__name__, fmt(c))
(c * c).sum().backward()
print("  grad", fmt(a.grad))
try:
    AddOne_.apply(a)
except RuntimeError as e:
    print("  leaf", e)


class TwoOut(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        (x,) = ctx.saved_tensors
        print("  got", g1 is None, g2 is None)
        out = torch.zeros_like(x)
        if g1 is not None:
            out = out + 2 * g1
        if g2 is not None:
            out = out + 3 * g2
        return out


x = torch.ones(2, requires_grad=True)
o1, o2 = TwoOut.apply(x)
o2.sum().backward()
print("materialize", fmt(x.grad))


class WithInfo(Function):
    @staticmethod
    def forward(x, k):
        vals, idx = x.topk(k)
        return vals, idx, k, "topk"

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, k = inputs
        _, idx, _, _ = output
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        ctx.shape = x.shape
        ctx.flags = ctx.needs_input_grad

    @staticmethod
    def backward(ctx, gv, gi, gk, gs):
        (idx,) = ctx.saved_tensors
        print("  needs_input_grad", ctx.flags, gi is None or float(gi.abs().sum()))
        return torch.zeros(ctx.shape).scatter(0, idx, gv), None


x = torch.tensor([0.3, 2.0, -1.0, 5.0], requires_grad=True)
vals, idx, k, tag = WithInfo.apply(x, 2)
print("outputs", fmt(vals), idx.tolist(), idx.requires_grad, k, tag, vals.requires_grad)
(vals * torch.tensor([1.0, 10.0])).sum().backward()
print("  grad", fmt(x.grad))


# error paths
class TooMany(Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g, g


class BadShape(Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g.sum(0)


class SaveNonTensor(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x, 3)
        return x * 1


class Once(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


class NoBackward(Function):
    @staticmethod
    def forward(ctx, x):
        return x + 1


m = torch.randn(2, 3, requires_grad=True)
for name, fn in [
    ("too many", lambda: TooMany.apply(m).sum().backward()),
    ("bad shape", lambda: BadShape.apply(m).sum().backward()),
    ("non-tensor save", lambda: SaveNonTensor.apply(m)),
    ("no backward", lambda: NoBackward.apply(m).sum().backward()),
    ("kwargs", lambda: Once.apply(x=m)),
    ("instantiate", lambda: Once()(m)),
]:
    try:
        fn()
        print(name, "ok")
    except Exception as e:
        print(name, type(e).__name__, str(e).split("\n")[0])
xo = torch.tensor([1.0, 2.0], requires_grad=True)
(g,) = torch.autograd.grad(Once.apply(xo).sum(), xo, create_graph=True)
print("once first", fmt(g), g.requires_grad, type(g.grad_fn).__name__)
try:
    g.sum().backward()
except Exception as e:
    print(type(e).__name__, e)
s = SwishImplementation.apply(xo)
s.sum().backward()
try:
    s.sum().backward()
except Exception as e:
    print(type(e).__name__, str(e).split(".")[0])
try:
    print(s.grad_fn.saved_tensors)
except Exception as e:
    print(type(e).__name__, str(e).split(".")[0])
