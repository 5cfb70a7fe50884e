"""Classic image processing in plain torch (kornia-style tutorials and the "image filtering with
conv2d" blog posts): Sobel / Scharr / Laplacian edge filters, separable Gaussian blur, unsharp
mask, F.pad reflect/replicate/circular/constant, box filter via avg_pool2d with
count_include_pad, F.interpolate modes (nearest, nearest-exact, bilinear, bicubic, area) with
align_corners and antialias, affine_grid + grid_sample augmentation (rotation, zoom, flips),
and pixel_shuffle/unshuffle; with grads and grad_fn names and the error messages of misuse."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)
img = torch.rand(2, 3, 9, 11)
gray = (0.299 * img[:, 0:1] + 0.587 * img[:, 1:2] + 0.114 * img[:, 2:3])
print(gray.shape, f"{gray.mean().item():.5f}")

sobel_x = torch.tensor([[-1., 0., 1.], [-2., 0., 2.], [-1., 0., 1.]])
sobel_y = sobel_x.t()
kernel = torch.stack([sobel_x, sobel_y]).unsqueeze(1)
print(kernel.shape, kernel.is_contiguous())
g = F.conv2d(F.pad(gray, (1, 1, 1, 1), mode="replicate"), kernel)
mag = torch.sqrt(g[:, 0] ** 2 + g[:, 1] ** 2 + 1e-6)
angle = torch.atan2(g[:, 1], g[:, 0])
print(mag.shape, f"{mag.max().item():.4f}", f"{angle.mean().item():.4f}")
print(mag[0, :2, :4])
# depthwise per-channel filters via groups
lap = torch.tensor([[0., 1., 0.], [1., -4., 1.], [0., 1., 0.]]).expand(3, 1, 3, 3)
edges = F.conv2d(F.pad(img, (1, 1, 1, 1), mode="reflect"), lap, groups=3)
print(edges.shape, f"{edges.abs().sum().item():.4f}")


def gaussian_kernel1d(ksize, sigma):
    x = torch.arange(ksize, dtype=torch.float32) - (ksize - 1) / 2
    k = torch.exp(-x.pow(2) / (2 * sigma ** 2))
    return k / k.sum()


def gaussian_blur(x, ksize=5, sigma=1.0, border="reflect"):
    c = x.shape[1]
    k = gaussian_kernel1d(ksize, sigma)
    kx = k.view(1, 1, 1, ksize).repeat(c, 1, 1, 1)
    ky = k.view(1, 1, ksize, 1).repeat(c, 1, 1, 1)
    p = ksize // 2
    x = F.pad(x, (p, p, p, p), mode=border)
    x = F.conv2d(x, kx, groups=c)
    return F.conv2d(x, ky, groups=c)


print(gaussian_kernel1d(5, 1.0))
for border in ["reflect", "replicate", "circular", "constant"]:
    b = gaussian_blur(img, 5, 1.5, border)
    print(border, b.shape, f"{b.sum().item():.4f}", f"{b[0, 0, 0, 0].item():.6f}")
sharp = img + 1.5 * (img - gaussian_blur(img))
print("unsharp", f"{sharp.clamp(0, 1).mean().item():.5f}")
print(F.pad(torch.arange(6.).view(1, 1, 2, 3), (2, 1, 1, 0), mode="reflect"))
print(F.pad(torch.arange(6.).view(1, 2, 3), (2, 2), mode="circular"))
print(F.pad(torch.arange(6.).view(1, 1, 2, 3), (1, 1, 1, 1), value=-1.0))
print(F.pad(torch.arange(4.).view(2, 2), (1, -1)))
for pad in [nn.ReflectionPad2d(1), nn.ReplicationPad2d((1, 0, 2, 0)), nn.ZeroPad2d(1),
            nn.ConstantPad2d(1, 3.5), nn.CircularPad2d(1), nn.ReflectionPad1d(2)]:
    print(pad, pad(torch.arange(6.).view(1, 2, 3)).shape)
try:
    F.pad(torch.arange(6.).view(1, 1, 2, 3), (3, 3, 0, 0), mode="reflect")
except Exception as e:
    print(type(e).__name__, e)

box = F.avg_pool2d(img, 3, stride=1, padding=1, count_include_pad=False)
box2 = F.avg_pool2d(img, 3, stride=1, padding=1)
print("box", f"{box[0, 0, 0, 0].item():.6f}", f"{box2[0, 0, 0, 0].item():.6f}")
print(nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False))

small = torch.arange(16.).view(1, 1, 4, 4)
for mode, ac in [("nearest", None), ("nearest-exact", None), ("bilinear", False),
                 ("bilinear", True), ("bicubic", False), ("bicubic", True), ("area", None)]:
    out = F.interpolate(small, size=(6, 5), mode=mode, align_corners=ac)
    print(mode, ac, out[0, 0, 1])
for mode in ["bilinear", "bicubic"]:
    down = F.interpolate(img, scale_factor=0.5, mode=mode, antialias=True, align_corners=False)
    down0 = F.interpolate(img, scale_factor=0.5, mode=mode, antialias=False)
    print(mode, "antialias", down.shape, f"{down.sum().item():.4f} {down0.sum().item():.4f}")
up = nn.Upsample(scale_factor=2.5, mode="bilinear", align_corners=True)
print(up, up(small).shape)
print(nn.UpsamplingNearest2d(scale_factor=2), nn.UpsamplingBilinear2d(size=(3, 3))(small)[0, 0])
print(F.interpolate(torch.arange(5.).view(1, 1, 5), scale_factor=1.5, mode="linear"))
print(F.interpolate(small, scale_factor=1.5, mode="nearest", recompute_scale_factor=True).shape)
try:
    F.interpolate(small, size=(2, 2), mode="bilinear", antialias=True, align_corners=True)
    F.interpolate(small[0], size=(2, 2), mode="bilinear")
except Exception as e:
    print(type(e).__name__, e)
try:
    F.interpolate(small, size=3, mode="nearest", align_corners=True)
except Exception as e:
    print(type(e).__name__, e)

# random affine augmentation with affine_grid + grid_sample
angles = torch.tensor([0.0, math.pi / 6])
scale = torch.tensor([1.0, 0.8])
cos, sin = torch.cos(angles) * scale, torch.sin(angles) * scale
theta = torch.stack([torch.stack([cos, -sin, torch.tensor([0.1, 0.0])], 1),
                     torch.stack([sin, cos, torch.tensor([0.0, -0.2])], 1)], 1)
print(theta.shape)
for ac in [False, True]:
    grid = F.affine_grid(theta, img.size(), align_corners=ac)
    print("grid", grid.shape, grid[1, 0, :2])
    for mode, pm in [("bilinear", "zeros"), ("nearest", "border"), ("bicubic", "reflection"),
                     ("bilinear", "reflection")]:
        out = F.grid_sample(img, grid, mode=mode, padding_mode=pm, align_corners=ac)
        print(mode, pm, ac, f"{out.sum().item():.4f}")
hflip = torch.tensor([[[-1.0, 0, 0], [0, 1.0, 0]]])
flipped = F.grid_sample(small, F.affine_grid(hflip, small.shape, align_corners=True),
                        align_corners=True)
print(torch.equal(flipped, small.flip(-1)), flipped[0, 0, 0])
try:
    F.affine_grid(theta[:, :1], img.size(), align_corners=False)
except Exception as e:
    print(type(e).__name__, e)

# gradients through the pipeline
x = img.clone().requires_grad_(True)
th = theta.clone().requires_grad_(True)
y = F.grid_sample(gaussian_blur(x), F.affine_grid(th, x.shape, align_corners=False),
                  align_corners=False)
z = F.interpolate(y, scale_factor=2, mode="bilinear", align_corners=False)
z = F.pixel_unshuffle(z[..., :18, :22], 2)
print(y.grad_fn.name(), z.grad_fn, z.shape)
z.pow(2).mean().backward()
print(f"{x.grad.abs().sum().item():.6f}", th.grad)
ps = nn.PixelShuffle(2)
print(ps, ps(torch.arange(16.).view(1, 4, 2, 2)))
print(nn.PixelUnshuffle(2)(torch.arange(16.).view(1, 1, 4, 4)).view(4, 4))
print("RESULT:", f"{x.grad.sum().item():.6f}")
