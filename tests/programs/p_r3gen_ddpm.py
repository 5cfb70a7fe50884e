"""DDPM from scratch (Ho et al. 2020; the "diffusion models from scratch" notebook / lucidrains'
denoising-diffusion-pytorch): beta schedules, extract/gather of per-timestep coefficients,
sinusoidal time embeddings, a tiny UNet (GroupNorm, SiLU, Conv, ConvTranspose2d, interpolate),
q_sample, the training loss and the ancestral sampling loop, on synthetic 8x8 images."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def linear_beta_schedule(timesteps):
    scale = 1000 / timesteps
    beta_start = scale * 0.0001
    beta_end = scale * 0.02
    return torch.linspace(beta_start, beta_end, timesteps, dtype=torch.float64)


def cosine_beta_schedule(timesteps, s=0.008):
    steps = timesteps + 1
    t = torch.linspace(0, timesteps, steps, dtype=torch.float64) / timesteps
    alphas_cumprod = torch.cos((t + s) / (1 + s) * math.pi * 0.5) ** 2
    alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
    betas = 1 - (alphas_cumprod[1:] / alphas_cumprod[:-1])
    return torch.clip(betas, 0, 0.999)


def extract(a, t, x_shape):
    b, *_ = t.shape
    out = a.gather(-1, t)
    return out.reshape(b, *((1,) * (len(x_shape) - 1)))


class SinusoidalPosEmb(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        half_dim = self.dim // 2
        emb = math.log(10000) / (half_dim - 1)
        emb = torch.exp(torch.arange(half_dim, device=x.device) * -emb)
        emb = x[:, None] * emb[None, :]
        emb = torch.cat((emb.sin(), emb.cos()), dim=-1)
        return emb


class Block(nn.Module):
    def __init__(self, dim, dim_out, groups=4):
        super().__init__()
        self.proj = nn.Conv2d(dim, dim_out, 3, padding=1)
        self.norm = nn.GroupNorm(groups, dim_out)
        self.act = nn.SiLU()

    def forward(self, x, scale_shift=None):
        x = self.proj(x)
        x = self.norm(x)
        if scale_shift is not None:
            scale, shift = scale_shift
            x = x * (scale + 1) + shift
        return self.act(x)


class ResnetBlock(nn.Module):
    def __init__(self, dim, dim_out, *, time_emb_dim=None, groups=4):
        super().__init__()
        self.mlp = nn.Sequential(nn.SiLU(), nn.Linear(time_emb_dim, dim_out * 2))
        self.block1 = Block(dim, dim_out, groups=groups)
        self.block2 = Block(dim_out, dim_out, groups=groups)
        self.res_conv = nn.Conv2d(dim, dim_out, 1) if dim != dim_out else nn.Identity()

    def forward(self, x, time_emb=None):
        time_emb = self.mlp(time_emb)
        time_emb = time_emb[:, :, None, None]
        scale_shift = time_emb.chunk(2, dim=1)
        h = self.block1(x, scale_shift=scale_shift)
        h = self.block2(h)
        return h + self.res_conv(x)


class Unet(nn.Module):
    def __init__(self, dim=8, channels=1):
        super().__init__()
        time_dim = dim * 4
        self.time_mlp = nn.Sequential(
            SinusoidalPosEmb(dim), nn.Linear(dim, time_dim), nn.GELU(),
            nn.Linear(time_dim, time_dim))
        self.init_conv = nn.Conv2d(channels, dim, 7, padding=3)
        self.down1 = ResnetBlock(dim, dim, time_emb_dim=time_dim)
        self.downsample = nn.Conv2d(dim, dim * 2, 4, 2, 1)
        self.mid = ResnetBlock(dim * 2, dim * 2, time_emb_dim=time_dim)
        self.upsample = nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"),
                                      nn.Conv2d(dim * 2, dim, 3, padding=1))
        self.up_t = nn.ConvTranspose2d(dim * 2, dim, 4, 2, 1)
        self.up1 = ResnetBlock(dim * 3, dim, time_emb_dim=time_dim)
        self.final_conv = nn.Conv2d(dim, channels, 1)

    def forward(self, x, time):
        x = self.init_conv(x)
        t = self.time_mlp(time)
        h = self.down1(x, t)
        x = self.downsample(h)
        x = self.mid(x, t)
        up = self.upsample(x) + self.up_t(x)
        x = torch.cat((up, h, F.interpolate(x, size=h.shape[-2:], mode="bilinear",
                                            align_corners=False)[:, :h.shape[1]]), dim=1)
        x = self.up1(x, t)
        return self.final_conv(x)


timesteps = 50
for name, fn in [("linear", linear_beta_schedule), ("cosine", cosine_beta_schedule)]:
    b = fn(timesteps)
    print(name, b.dtype, b.shape, f"{b[0].item():.6f} {b[-1].item():.6f} {b.sum().item():.6f}")

betas = linear_beta_schedule(timesteps)
alphas = 1.0 - betas
alphas_cumprod = torch.cumprod(alphas, axis=0)
alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.0)
sqrt_recip_alphas = torch.sqrt(1.0 / alphas)
sqrt_alphas_cumprod = torch.sqrt(alphas_cumprod)
sqrt_one_minus_alphas_cumprod = torch.sqrt(1.0 - alphas_cumprod)
posterior_variance = betas * (1.0 - alphas_cumprod_prev) / (1.0 - alphas_cumprod)
print(alphas_cumprod[:4])
print(alphas_cumprod_prev[:3], posterior_variance[:3])
buffers = {}
for k, v in [("betas", betas), ("alphas_cumprod", alphas_cumprod),
             ("posterior_variance", posterior_variance)]:
    buffers[k] = v.to(torch.float32)
print({k: (v.dtype, tuple(v.shape)) for k, v in buffers.items()})

torch.manual_seed(0)
x_start = torch.randn(4, 1, 8, 8).clamp(-1, 1)
t = torch.tensor([0, 10, 25, 49])
print(extract(sqrt_alphas_cumprod, t, x_start.shape).flatten())


def q_sample(x_start, t, noise=None):
    if noise is None:
        noise = torch.randn_like(x_start)
    sqrt_alphas_cumprod_t = extract(sqrt_alphas_cumprod, t, x_start.shape)
    sqrt_one_minus_alphas_cumprod_t = extract(sqrt_one_minus_alphas_cumprod, t, x_start.shape)
    return sqrt_alphas_cumprod_t * x_start + sqrt_one_minus_alphas_cumprod_t * noise


xt = q_sample(x_start, t)
print(xt.dtype, xt.shape, f"{xt.std().item():.4f}")

model = Unet(dim=8, channels=1)
print(model.time_mlp)
print(model.down1)
print(sum(p.numel() for p in model.parameters()), len(model.state_dict()))
print([k for k in model.state_dict().keys()][:8])
emb = SinusoidalPosEmb(8)(torch.tensor([0.0, 1.0, 49.0]))
print(emb)


def p_losses(denoise_model, x_start, t, noise=None, loss_type="l1"):
    if noise is None:
        noise = torch.randn_like(x_start)
    x_noisy = q_sample(x_start=x_start, t=t, noise=noise).float()
    predicted_noise = denoise_model(x_noisy, t.float())
    if loss_type == "l1":
        loss = F.l1_loss(noise, predicted_noise)
    elif loss_type == "l2":
        loss = F.mse_loss(noise, predicted_noise)
    elif loss_type == "huber":
        loss = F.smooth_l1_loss(noise, predicted_noise)
    else:
        raise NotImplementedError()
    return loss


optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
data = torch.randn(16, 1, 8, 8).tanh()
for step in range(8):
    optimizer.zero_grad()
    batch = data[(step * 4) % 16:(step * 4) % 16 + 4]
    t = torch.randint(0, timesteps, (batch.shape[0],), device="cpu").long()
    loss = p_losses(model, batch, t, loss_type=["l1", "l2", "huber"][step % 3])
    if step % 2 == 0:
        print(f"step {step} Loss: {loss.item():.4f} {loss.grad_fn.__class__.__name__}")
    loss.backward()
    optimizer.step()


@torch.no_grad()
def p_sample(model, x, t, t_index):
    betas_t = extract(betas, t, x.shape).float()
    sqrt_one_minus_alphas_cumprod_t = extract(sqrt_one_minus_alphas_cumprod, t, x.shape).float()
    sqrt_recip_alphas_t = extract(sqrt_recip_alphas, t, x.shape).float()
    model_mean = sqrt_recip_alphas_t * (
        x - betas_t * model(x, t.float()) / sqrt_one_minus_alphas_cumprod_t)
    if t_index == 0:
        return model_mean
    posterior_variance_t = extract(posterior_variance, t, x.shape).float()
    noise = torch.randn_like(x)
    return model_mean + torch.sqrt(posterior_variance_t) * noise


@torch.no_grad()
def p_sample_loop(model, shape):
    b = shape[0]
    img = torch.randn(shape, device="cpu")
    imgs = []
    for i in reversed(range(0, timesteps)):
        img = p_sample(model, img, torch.full((b,), i, device="cpu", dtype=torch.long), i)
        if i % 10 == 0:
            imgs.append(img.cpu().numpy())
    return imgs


model.eval()
samples = p_sample_loop(model, shape=(2, 1, 8, 8))
print(len(samples), samples[-1].shape, samples[-1].dtype)
print(f"{float(samples[-1].mean()):.4f} {float(samples[-1].std()):.4f}")
final = torch.from_numpy(samples[-1])
print(((final.clamp(-1, 1) + 1) / 2).mul(255).round().to(torch.uint8)[0, 0, :2])
print("RESULT:", f"{loss.item():.4f}")
