"""Complex numbers in PyTorch (the "Complex Numbers" docs page, end to end): construction,
view_as_real/view_as_complex, polar/abs/angle, conj and its lazy bit, complex matmul and linalg,
complex autograd (Wirtinger, conj-grad), and a complex-valued linear layer trained with Adam."""

# compare: rtol=1e-4 atol=1e-5
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn

torch.manual_seed(0)
x = torch.randn(2, 2, dtype=torch.cfloat)
print(x, x.dtype, x.is_complex(), torch.is_complex(x))
real = torch.randn(2, 2)
imag = torch.randn(2, 2)
z = torch.complex(real, imag)
print(z.dtype, z.real.dtype, torch.equal(z.real, real), z.imag.is_contiguous())
y = torch.randn(3, 2)
vc = torch.view_as_complex(y)
print(vc, vc.shape)
vr = torch.view_as_real(vc)
print(vr.shape, vr.data_ptr() == y.data_ptr())
vc[0] = 1 + 2j
print(y[0])
print(torch.tensor([1 + 2j, 3 - 1j]), torch.tensor(1j).dtype, torch.zeros(2, dtype=torch.cdouble))

a = torch.tensor([3.0 + 4.0j, -1.0 + 0.0j, 0.0 - 2.0j])
print("abs", a.abs(), torch.abs(a).dtype)
print("angle", a.angle(), torch.angle(torch.tensor([-1.0, 2.0])))
p = torch.polar(a.abs(), a.angle())
print("polar", p, torch.allclose(p, a))
print("conj", a.conj(), a.conj().is_conj(), a.conj().resolve_conj().is_conj(), a.conj_physical())
print(torch.exp(1j * math.pi * torch.tensor([0.0, 0.5, 1.0])))
print(a * a.conj(), (a * a.conj()).real, a.sgn(), torch.sgn(a))
print(a.pow(2), a.sqrt(), a.log(), torch.reciprocal(a))
print(a.real.sum(), a.sum(), a.mean(), a.prod())
print(torch.isreal(torch.tensor([1 + 0j, 1 + 1j])), torch.is_floating_point(a))
print(a + 1, a * 2.5, (a / 2).dtype, (a.to(torch.complex128) + torch.ones(3)).dtype)
print(torch.result_type(a, torch.tensor(1.0, dtype=torch.float64)))

A = torch.randn(3, 3, dtype=torch.cfloat)
B = torch.randn(3, 2, dtype=torch.cfloat)
print("matmul", (A @ B).shape, torch.allclose(A @ B, torch.matmul(A, B)))
print(A.mH.shape, torch.allclose(A.mH, A.conj().transpose(-2, -1)), A.adjoint().is_conj())
H = A @ A.mH + 3 * torch.eye(3, dtype=torch.cfloat)
ev, V = torch.linalg.eigh(H)
print("eigh", ev.dtype, ev, torch.allclose(V @ torch.diag(ev).to(V.dtype) @ V.mH, H, atol=1e-4))
print("det", torch.linalg.det(H).real, torch.linalg.norm(A).dtype)
Xs = torch.linalg.solve(H, B)
print("solve", torch.allclose(H @ Xs, B, atol=1e-5))
print(torch.linalg.svdvals(A).dtype, torch.linalg.eigvals(H).real.sort().values)
print(torch.vdot(a, a), torch.dot(a, a), torch.inner(a, a))

w = torch.tensor([1.0 + 1.0j, 2.0 - 1.0j], requires_grad=True)
loss = (w.abs() ** 2).sum()
loss.backward()
print("grad |w|^2", w.grad)
w2 = torch.tensor([0.5 - 0.5j], dtype=torch.cdouble, requires_grad=True)
(w2 * w2.conj()).real.sum().backward()
print(w2.grad)
r = torch.randn(3, requires_grad=True)
out = torch.view_as_complex(torch.stack([r, r * 2], -1)).abs().sum()
out.backward()
print(type(out.grad_fn).__name__, r.grad)
q = torch.randn(2, dtype=torch.cfloat, requires_grad=True)
e = torch.view_as_real(q * (1 + 1j))
print(type(e.grad_fn).__name__, e.shape)
e.sum().backward()
print(q.grad)
ang = torch.tensor([0.3, 1.2], requires_grad=True)
mag = torch.tensor([2.0, 0.5], requires_grad=True)
torch.polar(mag, ang).imag.sum().backward()
print(ang.grad, mag.grad)


class ComplexLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features, dtype=torch.cfloat) * 0.1)
        self.bias = nn.Parameter(torch.zeros(out_features, dtype=torch.cfloat))

    def forward(self, x):
        return x @ self.weight.T + self.bias


torch.manual_seed(1)
layer = ComplexLinear(4, 2)
print(layer, [(n, p.dtype, tuple(p.shape)) for n, p in layer.named_parameters()])
target_w = torch.randn(2, 4, dtype=torch.cfloat)
inputs = torch.randn(16, 4, dtype=torch.cfloat)
targets = inputs @ target_w.T
opt = torch.optim.Adam(layer.parameters(), lr=0.05)
for step in range(10):
    opt.zero_grad()
    pred = layer(inputs)
    loss = (pred - targets).abs().pow(2).mean()
    loss.backward()
    opt.step()
    if step % 3 == 0:
        print(f"step {step} loss {loss.item():.5f}")
print(layer.weight.grad.dtype, opt.state[layer.weight]["exp_avg_sq"].dtype)
print(opt.state[layer.weight]["exp_avg_sq"])
print(nn.functional.mse_loss(torch.view_as_real(pred), torch.view_as_real(targets)).item() > 0)
torch.manual_seed(2)
lin = nn.Linear(4, 2, dtype=torch.cfloat)
print("complex Linear", lin.weight, lin.bias, lin(inputs[:3]))
nn.init.xavier_normal_(lin.weight)
nn.init.kaiming_uniform_(lin.weight, a=math.sqrt(5))
print(lin.weight, lin.weight.dtype)
try:
    torch.view_as_complex(torch.randn(3, 3))
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    torch.randn(2, dtype=torch.cfloat) < 0
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    torch.tensor([1 + 1j]).max()
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    torch.zeros(2, dtype=torch.cfloat, requires_grad=True).abs().backward()
except RuntimeError as e:
    print(type(e).__name__, e)
print("RESULT: ok")
