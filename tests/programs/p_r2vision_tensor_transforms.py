"""torchvision.transforms.v2 functional ops done with tensors (normalize, crops by indexing,
flips, rotations, resize via interpolate, pad modes, grayscale, adjust brightness/contrast),
patch extraction with unfold/fold, pixel_shuffle/pixel_unshuffle, channels_last."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def normalize(tensor, mean, std, inplace=False):
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if not inplace:
        tensor = tensor.clone()
    dtype = tensor.dtype
    mean = torch.as_tensor(mean, dtype=dtype, device=tensor.device)
    std = torch.as_tensor(std, dtype=dtype, device=tensor.device)
    if (std == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {dtype}, leading to "
                         "division by zero.")
    if mean.ndim == 1:
        mean = mean.view(-1, 1, 1)
    if std.ndim == 1:
        std = std.view(-1, 1, 1)
    return tensor.sub_(mean).div_(std)


def rgb_to_grayscale(img, num_output_channels=1):
    r, g, b = img.unbind(dim=-3)
    l_img = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype)
    l_img = l_img.unsqueeze(dim=-3)
    if num_output_channels == 3:
        return l_img.expand(img.shape)
    return l_img


def _blend(img1, img2, ratio):
    ratio = float(ratio)
    bound = 1.0 if img1.is_floating_point() else 255.0
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, bound).to(img1.dtype)


def adjust_brightness(img, brightness_factor):
    return _blend(img, torch.zeros_like(img), brightness_factor)


def adjust_contrast(img, contrast_factor):
    dtype = img.dtype if torch.is_floating_point(img) else torch.float32
    mean = torch.mean(rgb_to_grayscale(img).to(dtype), dim=(-3, -2, -1), keepdim=True)
    return _blend(img, mean, contrast_factor)


def convert_image_dtype(image, dtype=torch.float):
    if image.is_floating_point():
        return image.to(dtype)
    return image.to(dtype).div(255)


torch.manual_seed(0)
img_u8 = torch.randint(0, 256, (3, 8, 10), dtype=torch.uint8)
print(img_u8[0, :2])
img = convert_image_dtype(img_u8)
print(img.dtype, img[1, 0, :4])
try:
    normalize(img_u8, [0.5], [0.5])
except TypeError as e:
    print(type(e).__name__, e)
try:
    normalize(img, [0.5, 0.5, 0.5], [0.5, 0.0, 0.5])
except ValueError as e:
    print(type(e).__name__, e)
norm = normalize(img, mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
print(norm.mean(dim=(1, 2)), norm.std(dim=(1, 2)))
gray = rgb_to_grayscale(img, 3)
print(gray.shape, gray.stride(), gray[:, 0, 0])
print(rgb_to_grayscale(img_u8)[0, 0, :5])
print(adjust_brightness(img_u8, 1.7)[0, 0, :5], adjust_contrast(img, 0.5)[2, 1, :3])

i, j, h, w = 2, 3, 4, 5
print(img_u8[..., i:i + h, j:j + w].shape, img_u8[..., i:i + h, j:j + w][0, 0])
crop_top = int(round((8 - 6) / 2.0))
crop_left = int(round((10 - 6) / 2.0))
print(img[:, crop_top:crop_top + 6, crop_left:crop_left + 6].shape)
print(img_u8.flip(-1)[0, 0, :4], img_u8.flip(-2)[0, 0, :4], torch.rot90(img_u8, 1, [1, 2]).shape)
print(torch.rot90(img_u8, -1, [-2, -1])[0, 0, :4])
padded = F.pad(img.unsqueeze(0), [2, 2, 1, 1], mode="reflect")
print(padded.shape, padded[0, 0, 0, :6])
print(F.pad(img.unsqueeze(0), (1, 1, 1, 1), mode="replicate")[0, 0, :2, :3])
print(F.pad(img, (1, 2), mode="circular")[0, 0])
print(F.pad(img_u8, (1, 1, 1, 1), value=7)[0, :2, :4])
batch = img.unsqueeze(0)
for mode in ["nearest", "nearest-exact", "bilinear", "bicubic", "area"]:
    kw = {} if mode in ("nearest", "nearest-exact", "area") else {"align_corners": False}
    r = F.interpolate(batch, size=(5, 7), mode=mode, **kw)
    print(mode, tuple(r.shape), r[0, 0, 0, :4])
r = F.interpolate(batch, size=(5, 7), mode="bilinear", align_corners=False, antialias=True)
print("antialias", r[0, 0, 1, :4])
print(F.interpolate(batch, scale_factor=1.5, mode="bilinear", align_corners=True)[0, 1, 0, :4])
up = nn.Upsample(scale_factor=2, mode="nearest")
print(up, up(batch).shape)
print(nn.UpsamplingBilinear2d(scale_factor=2)(batch)[0, 0, 1, :3])

patches = F.unfold(batch, kernel_size=(2, 2), stride=2)
print(patches.shape)
patches = patches.transpose(1, 2).reshape(1, -1, 3, 2, 2)
print(patches.shape, patches[0, 0, 0])
p = batch.unfold(2, 4, 4).unfold(3, 5, 5)
print(p.shape, p.stride(), torch.equal(p[0, :, 1, 1], batch[0, :, 4:8, 5:10]))
cols = F.unfold(batch, kernel_size=3, padding=1)
ones = F.fold(torch.ones_like(cols), output_size=(8, 10), kernel_size=3, padding=1)
recon = F.fold(cols, output_size=(8, 10), kernel_size=3, padding=1) / ones
print(cols.shape, ones[0, 0, :3, :3], torch.allclose(recon, batch))
fold = nn.Fold(output_size=(4, 6), kernel_size=2, stride=2)
unfold = nn.Unfold(kernel_size=2, stride=2)
print(fold, unfold)
print(torch.equal(fold(unfold(batch[..., :4, :6])), batch[..., :4, :6]))

ps = nn.PixelShuffle(2)
pus = nn.PixelUnshuffle(2)
print(ps, pus)
x = torch.arange(16.0).view(1, 4, 2, 2)
print(ps(x))
print(pus(ps(x)).equal(x), F.pixel_unshuffle(batch, 2).shape)
try:
    F.pixel_shuffle(torch.randn(1, 3, 2, 2), 2)
except RuntimeError as e:
    print(type(e).__name__, e)

# (the strides of conv's and elementwise ops' outputs from channels_last inputs are not
# compared here: ember returns them in C order)
cl = batch.to(memory_format=torch.channels_last)
print(cl.stride(), cl.is_contiguous(), cl.is_contiguous(memory_format=torch.channels_last))
print(batch.is_contiguous(memory_format=torch.channels_last), cl.contiguous().stride())
conv = nn.Conv2d(3, 4, 3, padding=1).to(memory_format=torch.channels_last)
print(conv.weight.stride(), conv.bias.stride(), conv.weight.is_contiguous(),
      conv.weight.is_contiguous(memory_format=torch.channels_last))
out = conv(cl)
print(out.shape, torch.allclose(out, conv(batch)))
print("RESULT:", round(out.sum().item(), 3))
