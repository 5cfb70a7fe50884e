"""Optical-flow warping as RAFT (princeton-vl/RAFT core/utils/utils.py: coords_grid, bilinear_sampler,
upflow8; core/raft.py upsample_flow convex combination with F.unfold) and PWC-Net (NVlabs/PWC-Net
models/PWCNet.py warp with its validity mask) write it, plus a grid_sample sweep over every mode,
padding_mode and align_corners with gradients to input and grid (as flow losses need), shrunk."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def coords_grid(batch, ht, wd):
    coords = torch.meshgrid(torch.arange(ht), torch.arange(wd), indexing="ij")
    coords = torch.stack(coords[::-1], dim=0).float()
    return coords[None].repeat(batch, 1, 1, 1)


def bilinear_sampler(img, coords, mode='bilinear', mask=False):
    H, W = img.shape[-2:]
    xgrid, ygrid = coords.split([1, 1], dim=-1)
    xgrid = 2 * xgrid / (W - 1) - 1
    ygrid = 2 * ygrid / (H - 1) - 1
    grid = torch.cat([xgrid, ygrid], dim=-1)
    img = F.grid_sample(img, grid, align_corners=True)
    if mask:
        mask = (xgrid > -1) & (ygrid > -1) & (xgrid < 1) & (ygrid < 1)
        return img, mask.float()
    return img


def upflow8(flow, mode='bilinear'):
    new_size = (8 * flow.shape[2], 8 * flow.shape[3])
    return 8 * F.interpolate(flow, size=new_size, mode=mode, align_corners=True)


def upsample_flow(flow, mask):
    N, _, H, W = flow.shape
    mask = mask.view(N, 1, 9, 8, 8, H, W)
    mask = torch.softmax(mask, dim=2)
    up_flow = F.unfold(8 * flow, [3, 3], padding=1)
    up_flow = up_flow.view(N, 2, 9, 1, 1, H, W)
    up_flow = torch.sum(mask * up_flow, dim=2)
    up_flow = up_flow.permute(0, 1, 4, 2, 5, 3)
    return up_flow.reshape(N, 2, 8 * H, 8 * W)


def pwc_warp(x, flo):
    B, C, H, W = x.size()
    xx = torch.arange(0, W).view(1, -1).repeat(H, 1)
    yy = torch.arange(0, H).view(-1, 1).repeat(1, W)
    xx = xx.view(1, 1, H, W).repeat(B, 1, 1, 1)
    yy = yy.view(1, 1, H, W).repeat(B, 1, 1, 1)
    grid = torch.cat((xx, yy), 1).float()
    vgrid = grid + flo
    vgrid[:, 0, :, :] = 2.0 * vgrid[:, 0, :, :].clone() / max(W - 1, 1) - 1.0
    vgrid[:, 1, :, :] = 2.0 * vgrid[:, 1, :, :].clone() / max(H - 1, 1) - 1.0
    vgrid = vgrid.permute(0, 2, 3, 1)
    output = F.grid_sample(x, vgrid, align_corners=True)
    mask = torch.ones(x.size())
    mask = F.grid_sample(mask, vgrid, align_corners=True)
    mask[mask < 0.9999] = 0
    mask[mask > 0] = 1
    return output * mask, mask


torch.manual_seed(0)
B, C, H, W = 2, 3, 5, 6
img = torch.randn(B, C, H, W, requires_grad=True)
flow = (torch.randn(B, 2, H, W) * 1.5).requires_grad_()
coords = coords_grid(B, H, W)
print(coords.shape, coords[0, :, 1, 2])
warped, valid = bilinear_sampler(img, (coords + flow).permute(0, 2, 3, 1), mask=True)
print(warped.shape, "%.5f" % warped.sum().item(), valid.sum().item())
loss = (warped * valid.permute(0, 3, 1, 2)).abs().mean()
loss.backward()
print("%.6f %.6f" % (img.grad.abs().sum().item(), flow.grad.abs().sum().item()))
out, mask = pwc_warp(img.detach(), flow.detach())
print("pwc", "%.5f" % out.sum().item(), mask.sum().item(), mask.stride())
up = upflow8(flow.detach())
print("upflow8", up.shape, "%.4f" % up.abs().mean().item())
m = torch.randn(B, 64 * 9, H, W, requires_grad=True)
uf = upsample_flow(flow, m)
uf.square().mean().backward()
print("convex", uf.shape, "%.5f" % uf.mean().item(), "%.6f" % m.grad.abs().sum().item())

torch.manual_seed(1)
inp = torch.randn(1, 2, 4, 5, dtype=torch.float64)
grid = torch.rand(1, 3, 4, 2, dtype=torch.float64) * 2.6 - 1.3
for mode in ("bilinear", "nearest", "bicubic"):
    for padding_mode in ("zeros", "border", "reflection"):
        for ac in (False, True):
            i = inp.clone().requires_grad_()
            g = grid.clone().requires_grad_()
            o = F.grid_sample(i, g, mode=mode, padding_mode=padding_mode, align_corners=ac)
            o.backward(torch.linspace(-1, 1, o.numel(), dtype=torch.float64).view_as(o))
            gg = "-" if mode == "nearest" else "%.8f" % g.grad.abs().sum().item()
            print(mode, padding_mode, ac, "%.8f" % o.sum().item(), "%.8f" % i.grad.abs().sum().item(), gg)
v = torch.randn(1, 2, 3, 4, 5)
g5 = torch.rand(1, 2, 3, 2, 3) * 2 - 1
for mode in ("bilinear", "nearest"):
    print("3d", mode, "%.5f" % F.grid_sample(v, g5, mode=mode, padding_mode="border", align_corners=False).sum().item())
theta = torch.tensor([[[0.9, -0.2, 0.1], [0.2, 0.9, -0.1]]])
for ac in (False, True):
    grid = F.affine_grid(theta, (1, 1, 3, 4), align_corners=ac)
    print("affine", ac, grid[0, 0].tolist())
for bad in [lambda: F.grid_sample(inp, grid.double(), mode="bicubic", padding_mode="zeros", align_corners=False)[0, 0, 0, 0].item(),
            lambda: F.grid_sample(inp, torch.zeros(1, 3, 4, 3, dtype=torch.float64), align_corners=False),
            lambda: F.grid_sample(inp, torch.zeros(2, 3, 4, 2, dtype=torch.float64), align_corners=False),
            lambda: F.grid_sample(inp, torch.zeros(1, 3, 4, 2, dtype=torch.float64), mode="area", align_corners=False),
            lambda: F.grid_sample(inp, torch.zeros(1, 3, 4, 2, dtype=torch.float64), padding_mode="wrap", align_corners=False),
            lambda: F.grid_sample(v, g5, mode="bicubic", align_corners=False),
            lambda: F.grid_sample(inp, torch.zeros(1, 3, 4, 2), align_corners=False)]:
    try:
        print(bad())
    except Exception as e:
        print(type(e).__name__, e)
