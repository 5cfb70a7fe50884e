"""Signal processing and autodiff for science (torch.fft docs and "FFT convolution in PyTorch"
posts, plus the torch.autograd.functional / torch.func docs): rfft/irfft, fftfreq/rfftfreq,
fftshift, windows (hann, hamming, blackman, kaiser), spectral peak finding, FFT convolution vs
conv1d, spectral differentiation, interpolation, and jacobian/hessian/hvp/vjp/jvp, jacrev/hessian
from torch.func on physics functions."""

import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
fft = torch.fft
AF = torch.autograd.functional
func = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".func")

torch.manual_seed(0)
fs, N = 64.0, 128
t = torch.arange(N) / fs
sig = torch.sin(2 * math.pi * 5 * t) + 0.5 * torch.sin(2 * math.pi * 12 * t) + 0.1 * torch.randn(N)

win = torch.hann_window(N)
print("windows", win.shape, win.dtype, f"{win.sum().item():.4f}",
      f"{torch.hann_window(N, periodic=False).sum().item():.4f}")
for name, w in [("hamming", torch.hamming_window(16)), ("blackman", torch.blackman_window(16)),
                ("bartlett", torch.bartlett_window(16)), ("kaiser", torch.kaiser_window(16))]:
    print(name, w[:4])
spec = fft.rfft(sig * win)
freqs = fft.rfftfreq(N, d=1 / fs)
print("rfft", spec.shape, spec.dtype, freqs[:5], freqs[-1].item())
mag = spec.abs()
top = torch.topk(mag, 2).indices.sort().values
print("peaks at Hz", freqs[top])
power = mag ** 2 / (win ** 2).sum()
print(f"power total {power.sum().item():.4f}")
rec = fft.irfft(fft.rfft(sig), n=N)
print("irfft roundtrip", torch.allclose(rec, sig, atol=1e-5))
full = fft.fft(sig)
print("fftfreq", fft.fftfreq(8), fft.fftshift(fft.fftfreq(8)))
print("fftshift/ifftshift", torch.equal(fft.ifftshift(fft.fftshift(full)), full))
print("hermitian", torch.allclose(full[1:N // 2], full[N // 2 + 1:].flip(0).conj(), atol=1e-4))
print("ortho norm parseval", f"{fft.fft(sig, norm='ortho').abs().pow(2).sum().item():.4f}",
      f"{sig.pow(2).sum().item():.4f}")

# low-pass filter in the frequency domain
spec_f = fft.rfft(sig)
spec_f[freqs > 8] = 0
smooth = fft.irfft(spec_f, n=N)
corr = torch.corrcoef(torch.stack([smooth, torch.sin(2 * math.pi * 5 * t)]))
print(f"lowpass corr {corr[0, 1].item():.4f}")

# convolution via FFT equals F.conv1d (which is correlation -> flip kernel)
x = torch.randn(2, 50)
k = torch.randn(7)
n_fft = 50 + 7 - 1
y_fft = fft.irfft(fft.rfft(x, n=n_fft) * fft.rfft(k, n=n_fft), n=n_fft)
y_conv = F.conv1d(x[:, None], k.flip(0)[None, None], padding=6)[:, 0]
print("fft conv == conv1d", y_fft.shape, torch.allclose(y_fft, y_conv, atol=1e-4))

# 2-D: fft2 / rfft2 / ifftn
img = torch.randn(8, 8)
print("rfft2", fft.rfft2(img).shape, torch.allclose(fft.irfft2(fft.rfft2(img), s=(8, 8)), img,
                                                     atol=1e-5))
print("fftn dims", fft.fftn(img, dim=(0,)).shape,
      fft.ifftn(fft.fftn(img)).real.sub(img).abs().max() < 1e-5)

# spectral derivative of a periodic function
L = 2 * math.pi
xg = torch.arange(64, dtype=torch.float64) * L / 64
fx = torch.exp(torch.sin(xg))
kx = 2 * math.pi * fft.fftfreq(64, d=L / 64).to(torch.float64)
dfx = fft.ifft(1j * kx * fft.fft(fx)).real
print(f"spectral derivative err {(dfx - torch.cos(xg) * fx).abs().max().item():.2e}")

# Fourier interpolation (zero padding the spectrum)
coarse = torch.sin(torch.arange(16) * 2 * math.pi / 16)
fine = fft.irfft(fft.rfft(coarse), n=64) * 4
print("fourier interp", fine[::8])
print("linear interp", F.interpolate(coarse[None, None], size=32, mode="linear",
                                     align_corners=False)[0, 0, :6])

# autograd.functional on physics functions
def potential(q):
    return 0.5 * (q ** 2).sum() + 0.25 * (q ** 4).sum() + q[0] * q[1]


q0 = torch.tensor([0.5, -1.0, 2.0])
J = AF.jacobian(potential, q0)
Hm = AF.hessian(potential, q0)
print("grad", J)
print("hessian", Hm)
v = torch.tensor([1.0, 0.0, -1.0])
val, hv = AF.hvp(potential, q0, v)
print("hvp", val, hv, torch.allclose(hv, Hm @ v))
_, vhp = AF.vhp(potential, q0, v)
print("vhp", vhp)


def field(r):
    return torch.stack([r[0] * r[1], torch.sin(r[1]) * r[2], r[0] ** 2 - r[2]])


r0 = torch.tensor([1.0, 2.0, 3.0])
Jf = AF.jacobian(field, r0)
print("jacobian", Jf)
print(f"divergence {torch.trace(Jf).item():.6f}")
curl = torch.stack([Jf[2, 1] - Jf[1, 2], Jf[0, 2] - Jf[2, 0], Jf[1, 0] - Jf[0, 1]])
print("curl", curl)
_, vjp = AF.vjp(field, r0, torch.ones(3))
_, jvp = AF.jvp(field, r0, torch.ones(3))
print("vjp", vjp, "jvp", jvp)
Jb = AF.jacobian(field, r0, vectorize=True)
print("vectorize", torch.allclose(Jb, Jf))
Jx, Jy = AF.jacobian(lambda a, b: a * b.sum(), (torch.ones(2), torch.arange(3.0)))
print("multi-input", Jx, Jy)

print("func.jacrev", func.jacrev(field)(r0).shape, torch.allclose(func.jacrev(field)(r0), Jf))
print("func.jacfwd", torch.allclose(func.jacfwd(field)(r0), Jf))
print("func.hessian", torch.allclose(func.hessian(potential)(q0), Hm))
batch = torch.randn(4, 3)
per_sample = func.vmap(func.grad(potential))(batch)
print("vmap grad", per_sample.shape,
      torch.allclose(per_sample[1], AF.jacobian(potential, batch[1])))
print("RESULT:", f"{Hm.trace().item():.4f}")
