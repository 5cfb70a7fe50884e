"""Spectrograms by hand (the torchaudio "Audio feature extractions" tutorial, rewritten with plain
torch.stft as many blog posts do): window functions, stft/istft round trip, power/magnitude/log
spectrogram, a triangular mel filterbank, MFCC-style DCT, and a tiny classifier on top."""

# compare: rtol=1e-4 atol=1e-4
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn

torch.manual_seed(0)
sr = 800
n_fft, hop, win_length = 64, 16, 64
t = torch.arange(0, 0.4, 1 / sr)
chirp = torch.sin(2 * math.pi * (50 + 200 * t) * t)
wave = (chirp + 0.05 * torch.randn_like(t)).unsqueeze(0)
print("wave", wave.shape, wave.dtype)

for name, fn in [
    ("hann", torch.hann_window),
    ("hamming", torch.hamming_window),
    ("blackman", torch.blackman_window),
    ("bartlett", torch.bartlett_window),
]:
    w = fn(8)
    print(name, w, fn(8, periodic=False)[3])
print(torch.kaiser_window(6, True, 8.0), torch.hann_window(4, dtype=torch.float64).dtype)
print(torch.signal.windows.gaussian(5, std=1.0), torch.signal.windows.cosine(4))

window = torch.hann_window(win_length)
spec = torch.stft(
    wave,
    n_fft=n_fft,
    hop_length=hop,
    win_length=win_length,
    window=window,
    center=True,
    pad_mode="reflect",
    normalized=False,
    onesided=True,
    return_complex=True,
)
print("stft", spec.shape, spec.dtype, spec[0, :3, 0])
power = spec.abs().pow(2)
print("power", power.shape, f"{power.sum().item():.3f}", power[0, :, 5].argmax().item())
mag = spec.abs()
log_spec = 10 * torch.log10(torch.clamp(power, min=1e-10))
print("log spec range", log_spec.max(), (log_spec.max() - 80.0))
print("peak bin per frame", power[0].argmax(dim=0)[:10])

recon = torch.istft(
    spec, n_fft=n_fft, hop_length=hop, win_length=win_length, window=window, length=wave.shape[-1]
)
print(
    "istft", recon.shape, torch.allclose(recon, wave, atol=1e-5), (recon - wave).abs().max() < 1e-5
)
spec_n = torch.stft(
    wave[0], n_fft, hop_length=hop, window=window, normalized=True, return_complex=True
)
print(spec_n.shape, spec_n.abs().max())
spec_nc = torch.stft(
    wave[0], n_fft, hop_length=hop, window=window, center=False, return_complex=True
)
print("center=False", spec_nc.shape)
spec_two = torch.stft(
    wave[0], n_fft, hop_length=hop, window=window, onesided=False, return_complex=True
)
print("twosided", spec_two.shape)
real_view = torch.view_as_real(spec)
print("view_as_real", real_view.shape, real_view.dtype)


def hz_to_mel(f):
    return 2595.0 * math.log10(1.0 + f / 700.0)


def mel_filterbank(n_mels, n_freqs, sample_rate):
    all_freqs = torch.linspace(0, sample_rate // 2, n_freqs)
    m_min, m_max = hz_to_mel(0.0), hz_to_mel(sample_rate / 2)
    m_pts = torch.linspace(m_min, m_max, n_mels + 2)
    f_pts = 700.0 * (10 ** (m_pts / 2595.0) - 1.0)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1)
    down = (-1.0 * slopes[:, :-2]) / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    return torch.max(torch.zeros(1), torch.min(down, up))


fb = mel_filterbank(10, n_fft // 2 + 1, sr)
print("filterbank", fb.shape, fb.sum(0))
mel = torch.matmul(power.transpose(-1, -2), fb).transpose(-1, -2)
print("mel", mel.shape, mel[0, :, 0])
log_mel = torch.log(mel + 1e-6)
n = torch.arange(10, dtype=torch.float32)
k = torch.arange(6, dtype=torch.float32).unsqueeze(1)
dct = torch.cos(math.pi / 10 * (n + 0.5) * k)
dct[0] *= 1.0 / math.sqrt(2.0)
dct *= math.sqrt(2.0 / 10)
mfcc = torch.matmul(dct, log_mel)
print("mfcc", mfcc.shape, mfcc[0, :, 3])
deltas = mfcc[..., 2:] - mfcc[..., :-2]
print("deltas", deltas.shape, deltas.mean())

model = nn.Sequential(
    nn.Conv1d(6, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(8, 2)
)
print(model)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
batch = torch.cat([mfcc, mfcc.flip(-1)])
target = torch.tensor([0, 1])
for step in range(5):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(batch), target)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")

x = torch.randn(256, requires_grad=True)
S = torch.stft(x, 32, hop_length=8, window=torch.hann_window(32), return_complex=True)
S.abs().sum().backward()
print(type(S.grad_fn).__name__, x.grad[:3])
try:
    torch.stft(wave, n_fft, hop_length=hop)
except RuntimeError as e:
    print(type(e).__name__, str(e)[:80])
try:
    torch.stft(wave, 2048, return_complex=True)
except RuntimeError as e:
    print(type(e).__name__, e)
print("RESULT: ok")
