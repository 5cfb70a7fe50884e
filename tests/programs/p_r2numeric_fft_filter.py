"""torch.fft tour (the "torch.fft" PyTorch blog post + a signal-processing notebook): spectrum of a
noisy two-tone signal, fftfreq/rfftfreq/fftshift, low-pass filtering with rfft/irfft, FFT
convolution checked against F.conv1d, 2-D FFT of an image, norm modes, hfft/ihfft, and autograd
through the FFT."""

# compare: rtol=1e-4 atol=1e-4
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
fft = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".fft")

torch.manual_seed(0)
fs = 64.0
N = 64
t = torch.arange(N) / fs
clean = torch.sin(2 * math.pi * 5 * t) + 0.5 * torch.sin(2 * math.pi * 12 * t)
signal = clean + 0.3 * torch.randn(N)
print(t.dtype, signal.shape)

X = torch.fft.fft(signal)
print(X.dtype, X.shape, X[:3])
freqs = torch.fft.fftfreq(N, d=1 / fs)
print("fftfreq", freqs[:5], freqs[-3:], freqs.dtype)
mag = X.abs()
top = torch.topk(mag[: N // 2], 2).indices.sort().values
print("peaks at", freqs[top])
print("fftshift", torch.fft.fftshift(freqs)[:4], torch.fft.ifftshift(torch.fft.fftshift(freqs))[:4])
print(torch.fft.fftshift(torch.arange(10).reshape(2, 5), dim=1))

Xr = torch.fft.rfft(signal)
rfreqs = torch.fft.rfftfreq(N, d=1 / fs)
print("rfft", Xr.shape, rfreqs[-1], torch.allclose(Xr, X[: N // 2 + 1], atol=1e-5))
power = Xr.abs() ** 2 / N
print(f"power total {power.sum().item():.4f}")
Xr_f = Xr.clone()
Xr_f[rfreqs > 8] = 0
low = torch.fft.irfft(Xr_f, n=N)
print("lowpass", low.shape, low[:4])
print(f"mse clean-vs-filtered {F.mse_loss(low, torch.sin(2 * math.pi * 5 * t)).item():.5f}")
print(
    torch.allclose(torch.fft.ifft(X).real, signal, atol=1e-5),
    torch.fft.ifft(X).imag.abs().max() < 1e-5,
)

for norm in ["backward", "ortho", "forward"]:
    Y = torch.fft.fft(signal, norm=norm)
    print(norm, Y[0], torch.allclose(torch.fft.ifft(Y, norm=norm).real, signal, atol=1e-5))
print(torch.fft.fft(signal, n=8).shape, torch.fft.rfft(signal, n=100).shape)

kernel = torch.tensor([0.25, 0.5, 0.25, 0.1, -0.1])
L = N + kernel.numel() - 1
conv_fft = torch.fft.irfft(torch.fft.rfft(signal, n=L) * torch.fft.rfft(kernel, n=L), n=L)
conv_direct = F.conv1d(
    F.pad(signal.view(1, 1, -1), (kernel.numel() - 1, kernel.numel() - 1)),
    kernel.flip(0).view(1, 1, -1),
).view(-1)
print(
    "fft conv", conv_fft.shape, conv_direct.shape, torch.allclose(conv_fft, conv_direct, atol=1e-5)
)
print(conv_fft[:5])

img = torch.zeros(8, 8)
img[2:6, 3:5] = 1.0
I2 = torch.fft.fft2(img)
print("fft2", I2.shape, I2[0, 0], I2.abs().sum())
spec = torch.fft.fftshift(torch.fft.fft2(img)).abs()
print(spec[4])
print(torch.allclose(torch.fft.ifft2(I2).real, img, atol=1e-6))
R2 = torch.fft.rfft2(img)
print("rfft2", R2.shape, torch.allclose(torch.fft.irfft2(R2, s=img.shape), img, atol=1e-6))
Fn = torch.fft.fftn(torch.randn(2, 4, 4), dim=(-2, -1))
print(Fn.shape, torch.fft.ifftn(Fn, dim=(-2, -1)).real.shape, torch.fft.rfftn(img).shape)
print(torch.fft.irfftn(torch.fft.rfftn(img), s=(8, 8)).sub(img).abs().max() < 1e-6)

h = torch.fft.ihfft(signal)
print("hfft", h.shape, torch.allclose(torch.fft.hfft(h, n=N), signal, atol=1e-5))

w = torch.randn(N, requires_grad=True)
spectrum = torch.fft.rfft(w)
loss = (spectrum.abs() ** 2).sum()
loss.backward()
print(type(spectrum.grad_fn).__name__, f"{loss.item():.4f}", w.grad[:4])
z = torch.randn(8, dtype=torch.complex64, requires_grad=True)
out = torch.fft.ifft(torch.fft.fft(z) * 2).real.sum()
out.backward()
print(type(z.grad).__name__, z.grad.dtype, z.grad[:2])
print(fft.fft(torch.tensor([1.0, 2.0, 3.0, 4.0])), fft.fftfreq(4))
print(
    torch.fft.fft(torch.arange(4, dtype=torch.float64)).dtype, torch.fft.fft(torch.arange(4)).dtype
)
try:
    torch.fft.fft(signal, norm="bogus")
except (RuntimeError, ValueError) as e:
    print(type(e).__name__, e)
try:
    torch.fft.irfft(Xr, n=0)
except RuntimeError as e:
    print(type(e).__name__, e)
print("RESULT: ok")
