"""torchaudio.functional / torchaudio.transforms rewritten in torch, shrunk: melscale_fbanks
(htk and slaney scales, slaney norm), Spectrogram/MelSpectrogram/AmplitudeToDB/MFCC as
nn.Modules with window and filterbank buffers (persistent=False as torchaudio does for window),
create_dct(norm="ortho"), compute_deltas (replicate pad + grouped conv1d),
mask_along_axis_iid (SpecAugment), _get_sinc_resample_kernel + resample, and a tiny keyword
classifier trained on the features."""
# compare: rtol=1e-4 atol=1e-4
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def _hz_to_mel(freq, mel_scale="htk"):
    if mel_scale == "htk":
        return 2595.0 * math.log10(1.0 + (freq / 700.0))
    f_min, f_sp = 0.0, 200.0 / 3
    mels = (freq - f_min) / f_sp
    min_log_hz = 1000.0
    min_log_mel = (min_log_hz - f_min) / f_sp
    logstep = math.log(6.4) / 27.0
    if freq >= min_log_hz:
        mels = min_log_mel + math.log(freq / min_log_hz) / logstep
    return mels


def _mel_to_hz(mels, mel_scale="htk"):
    if mel_scale == "htk":
        return 700.0 * (10.0 ** (mels / 2595.0) - 1.0)
    f_min, f_sp = 0.0, 200.0 / 3
    freqs = f_min + f_sp * mels
    min_log_hz = 1000.0
    min_log_mel = (min_log_hz - f_min) / f_sp
    logstep = math.log(6.4) / 27.0
    log_t = mels >= min_log_mel
    freqs[log_t] = min_log_hz * torch.exp(logstep * (mels[log_t] - min_log_mel))
    return freqs


def _create_triangular_filterbank(all_freqs, f_pts):
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1)
    zero = torch.zeros(1)
    down_slopes = (-1.0 * slopes[:, :-2]) / f_diff[:-1]
    up_slopes = slopes[:, 2:] / f_diff[1:]
    return torch.max(zero, torch.min(down_slopes, up_slopes))


def melscale_fbanks(n_freqs, f_min, f_max, n_mels, sample_rate, norm=None, mel_scale="htk"):
    if norm is not None and norm != "slaney":
        raise ValueError('norm must be one of None or "slaney"')
    all_freqs = torch.linspace(0, sample_rate // 2, n_freqs)
    m_min = _hz_to_mel(f_min, mel_scale=mel_scale)
    m_max = _hz_to_mel(f_max, mel_scale=mel_scale)
    m_pts = torch.linspace(m_min, m_max, n_mels + 2)
    f_pts = _mel_to_hz(m_pts, mel_scale=mel_scale)
    fb = _create_triangular_filterbank(all_freqs, f_pts)
    if norm is not None and norm == "slaney":
        enorm = 2.0 / (f_pts[2: n_mels + 2] - f_pts[:n_mels])
        fb *= enorm.unsqueeze(0)
    return fb


def create_dct(n_mfcc, n_mels, norm):
    if norm is not None and norm != "ortho":
        raise ValueError('norm must be either "ortho" or None')
    n = torch.arange(float(n_mels))
    k = torch.arange(float(n_mfcc)).unsqueeze(1)
    dct = torch.cos(math.pi / float(n_mels) * (n + 0.5) * k)
    if norm is None:
        dct *= 2.0
    else:
        dct[0] *= 1.0 / math.sqrt(2.0)
        dct *= math.sqrt(2.0 / float(n_mels))
    return dct.t()


class Spectrogram(nn.Module):
    __constants__ = ["n_fft", "win_length", "hop_length", "pad", "power", "normalized"]

    def __init__(self, n_fft=64, win_length=None, hop_length=None, pad=0,
                 window_fn=torch.hann_window, power=2.0, center=True, pad_mode="reflect"):
        super().__init__()
        self.n_fft = n_fft
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 2
        window = window_fn(self.win_length)
        self.register_buffer("window", window, persistent=False)
        self.pad = pad
        self.power = power
        self.center = center
        self.pad_mode = pad_mode

    def forward(self, waveform):
        if self.pad > 0:
            waveform = F.pad(waveform, (self.pad, self.pad), "constant")
        shape = waveform.size()
        waveform = waveform.reshape(-1, shape[-1])
        spec_f = torch.stft(input=waveform, n_fft=self.n_fft, hop_length=self.hop_length,
                            win_length=self.win_length, window=self.window, center=self.center,
                            pad_mode=self.pad_mode, normalized=False, onesided=True,
                            return_complex=True)
        spec_f = spec_f.reshape(shape[:-1] + spec_f.shape[-2:])
        return spec_f.abs().pow(self.power)


class MelScale(nn.Module):
    def __init__(self, n_mels=16, sample_rate=8000, f_min=0.0, f_max=None, n_stft=33,
                 norm=None, mel_scale="htk"):
        super().__init__()
        self.n_mels = n_mels
        self.sample_rate = sample_rate
        self.f_max = f_max if f_max is not None else float(sample_rate // 2)
        self.f_min = f_min
        if f_min > self.f_max:
            raise ValueError("Require f_min: {} <= f_max: {}".format(f_min, self.f_max))
        fb = melscale_fbanks(n_stft, self.f_min, self.f_max, self.n_mels, self.sample_rate, norm,
                             mel_scale)
        self.register_buffer("fb", fb)

    def forward(self, specgram):
        return torch.matmul(specgram.transpose(-1, -2), self.fb).transpose(-1, -2)


class AmplitudeToDB(nn.Module):
    def __init__(self, stype="power", top_db=None):
        super().__init__()
        self.stype = stype
        if top_db is not None and top_db < 0:
            raise ValueError("top_db must be positive value")
        self.top_db = top_db
        self.multiplier = 10.0 if stype == "power" else 20.0
        self.amin = 1e-10
        self.ref_value = 1.0
        self.db_multiplier = math.log10(max(self.amin, self.ref_value))

    def forward(self, x):
        x_db = self.multiplier * torch.log10(torch.clamp(x, min=self.amin))
        x_db -= self.multiplier * self.db_multiplier
        if self.top_db is not None:
            shape = x_db.size()
            packed_channels = shape[-3] if x_db.dim() > 2 else 1
            x_db = x_db.reshape(-1, packed_channels, shape[-2], shape[-1])
            x_db = torch.max(x_db, (x_db.amax(dim=(-3, -2, -1)) - self.top_db).view(-1, 1, 1, 1))
            x_db = x_db.reshape(shape)
        return x_db


class MFCC(nn.Module):
    def __init__(self, sample_rate=8000, n_mfcc=10, n_mels=16, log_mels=False):
        super().__init__()
        self.spectrogram = Spectrogram(n_fft=64, hop_length=16)
        self.mel_scale = MelScale(n_mels=n_mels, sample_rate=sample_rate, n_stft=33,
                                  norm="slaney", mel_scale="slaney")
        self.amplitude_to_DB = AmplitudeToDB("power", top_db=80.0)
        dct_mat = create_dct(n_mfcc, n_mels, "ortho")
        self.register_buffer("dct_mat", dct_mat)
        self.log_mels = log_mels

    def forward(self, waveform):
        mel_specgram = self.mel_scale(self.spectrogram(waveform))
        if self.log_mels:
            mel_specgram = torch.log(mel_specgram + 1e-6)
        else:
            mel_specgram = self.amplitude_to_DB(mel_specgram)
        return torch.matmul(mel_specgram.transpose(-1, -2), self.dct_mat).transpose(-1, -2)


def compute_deltas(specgram, win_length=5, mode="replicate"):
    device = specgram.device
    dtype = specgram.dtype
    shape = specgram.size()
    specgram = specgram.reshape(1, -1, shape[-1])
    if win_length < 3:
        raise ValueError(f"Window length should be greater than or equal to 3. Found win_length {win_length}")  # noqa: E501
    n = (win_length - 1) // 2
    denom = n * (n + 1) * (2 * n + 1) / 3
    specgram = F.pad(specgram, (n, n), mode=mode)
    kernel = torch.arange(-n, n + 1, 1, device=device, dtype=dtype).repeat(specgram.shape[1], 1, 1)
    output = F.conv1d(specgram, kernel, groups=specgram.shape[1]) / denom
    return output.reshape(shape)


def mask_along_axis_iid(specgrams, mask_param, mask_value, axis, p=1.0):
    dim = specgrams.dim()
    if dim < 3:
        raise ValueError(f"Spectrogram must have at least three dimensions ({dim} given).")
    if axis not in [dim - 2, dim - 1]:
        raise ValueError(f"Only Frequency and Time masking are supported (axis {dim-2} and axis {dim-1} supported; {axis} given).")  # noqa: E501
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"The value of p must be between 0.0 and 1.0 ({p} given).")
    value = torch.rand(specgrams.shape[: (dim - 2)], device=specgrams.device,
                       dtype=specgrams.dtype) * mask_param
    min_value = torch.rand(specgrams.shape[: (dim - 2)], device=specgrams.device,
                           dtype=specgrams.dtype) * (specgrams.size(axis) - value)
    mask_start = min_value.long()[..., None, None]
    mask_end = (min_value.long() + value.long())[..., None, None]
    mask = torch.arange(0, specgrams.size(axis), device=specgrams.device, dtype=specgrams.dtype)
    specgrams = specgrams.transpose(axis, -1)
    specgrams = specgrams.masked_fill((mask >= mask_start) & (mask < mask_end), mask_value)
    return specgrams.transpose(axis, -1)


def _get_sinc_resample_kernel(orig_freq, new_freq, gcd, lowpass_filter_width=6, rolloff=0.99,
                              dtype=None):
    orig_freq = int(orig_freq) // gcd
    new_freq = int(new_freq) // gcd
    base_freq = min(orig_freq, new_freq)
    base_freq *= rolloff
    width = math.ceil(lowpass_filter_width * orig_freq / base_freq)
    idx = torch.arange(-width, width + orig_freq, dtype=torch.float64)[None, None] / orig_freq
    t = torch.arange(0, -new_freq, -1, dtype=dtype)[:, None, None] / new_freq + idx
    t *= base_freq
    t = t.clamp_(-lowpass_filter_width, lowpass_filter_width)
    window = torch.cos(t * math.pi / lowpass_filter_width / 2) ** 2
    t *= math.pi
    scale = base_freq / orig_freq
    kernels = torch.where(t == 0, torch.tensor(1.0).to(t), t.sin() / t)
    kernels *= window * scale
    if dtype is None:
        kernels = kernels.to(dtype=torch.float32)
    return kernels, width


def _apply_sinc_resample_kernel(waveform, orig_freq, new_freq, gcd, kernel, width):
    orig_freq = int(orig_freq) // gcd
    new_freq = int(new_freq) // gcd
    shape = waveform.size()
    waveform = waveform.view(-1, shape[-1])
    num_wavs, length = waveform.shape
    waveform = F.pad(waveform, (width, width + orig_freq))
    resampled = F.conv1d(waveform[:, None], kernel, stride=orig_freq)
    resampled = resampled.transpose(1, 2).reshape(num_wavs, -1)
    target_length = torch.ceil(torch.as_tensor(new_freq * length / orig_freq)).long()
    resampled = resampled[..., :target_length]
    return resampled.view(shape[:-1] + resampled.shape[-1:])


torch.manual_seed(0)
fb_htk = melscale_fbanks(9, 0.0, 4000.0, 4, 8000)
fb_sl = melscale_fbanks(9, 0.0, 4000.0, 4, 8000, norm="slaney", mel_scale="slaney")
print("fb htk", fb_htk)
print("fb slaney", fb_sl.sum(0))
print("dct", create_dct(3, 4, "ortho"), create_dct(2, 3, None))
try:
    melscale_fbanks(9, 0.0, 4000.0, 4, 8000, norm="l2")
except ValueError as e:
    print(type(e).__name__, e)

t = torch.arange(800) / 8000.0
waves = torch.stack([torch.sin(2 * math.pi * 440 * t), torch.sin(2 * math.pi * 1200 * t) * 0.5,
                     torch.randn(800) * 0.1, torch.sin(2 * math.pi * 300 * t) * torch.exp(-5 * t)])
mfcc = MFCC()
print(mfcc)
print("buffers", [n for n, _ in mfcc.named_buffers()], list(mfcc.state_dict().keys()))
feats = mfcc(waves)
print("mfcc", feats.shape, feats[0, :3, :4])
print("log mfcc", MFCC(log_mels=True)(waves[:1])[0, :2, :3])
spec = mfcc.spectrogram(waves)
db = AmplitudeToDB(top_db=40.0)(spec.unsqueeze(1))
print("db", db.shape, db.amax().item(), db.amin().item())
deltas = compute_deltas(feats)
print("deltas", deltas.shape, deltas[1, 0, :5])
try:
    compute_deltas(feats, win_length=2)
except ValueError as e:
    print(type(e).__name__, e)
masked = mask_along_axis_iid(spec.unsqueeze(1), 10, 0.0, axis=3)
print("masked frac", (masked == 0).float().mean().item())
masked = mask_along_axis_iid(spec.unsqueeze(1), 8, -1.0, axis=2, p=0.5)
print("masked freq", (masked == -1.0).sum(dim=(1, 2, 3)).tolist())
for bad in (dict(axis=1), dict(axis=3, p=2.0)):
    try:
        mask_along_axis_iid(spec.unsqueeze(1), 10, 0.0, **bad)
    except ValueError as e:
        print(type(e).__name__, e)

gcd = math.gcd(8000, 6000)
kernel, width = _get_sinc_resample_kernel(8000, 6000, gcd)
print("kernel", kernel.shape, width, kernel.dtype, kernel[1, 0, :4])
res = _apply_sinc_resample_kernel(waves, 8000, 6000, gcd, kernel, width)
print("resampled", res.shape, res[0, 100:104])
k64, _ = _get_sinc_resample_kernel(8000, 6000, gcd, dtype=torch.float64)
print("k64", k64.dtype, (k64.float() - kernel).abs().max().item() < 1e-6)

clf = nn.Sequential(nn.Conv1d(10, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool1d(1),
                    nn.Flatten(), nn.Linear(8, 4))
opt = torch.optim.Adam(clf.parameters(), lr=1e-2)
x = (feats - feats.mean(dim=(0, 2), keepdim=True)) / feats.std(dim=(0, 2), keepdim=True)
y = torch.arange(4)
for step in range(5):
    loss = F.cross_entropy(clf(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("clf step", step, round(loss.item(), 5))
