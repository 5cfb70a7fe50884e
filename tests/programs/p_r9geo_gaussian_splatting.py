"""3-D Gaussian splatting pieces, shrunk from graphdeco-inria/gaussian-splatting: utils/general_utils.py
(inverse_sigmoid, build_rotation, build_scaling_rotation, strip_lowerdiag/strip_symmetric,
get_expon_lr_func), scene/gaussian_model.py's activations and build_covariance_from_scaling_rotation,
utils/sh_utils.py (eval_sh up to degree 3, RGB2SH, SH2RGB) and gaussian_renderer's Python SH path
(convert_SHs_python), plus the EWA projection of the 3-D covariance to screen space and front-to-back
alpha compositing that the CUDA rasteriser does, written in plain torch as gsplat's reference does.
A handful of Gaussians rendered to an 8x8 image and fitted for a few Adam steps."""
# ruff: noqa: E501  (upstream's own line lengths, kept)
import importlib
import math
import os

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")

C0 = 0.28209479177387814
C1 = 0.4886025119029199
C2 = [1.0925484305920792, -1.0925484305920792, 0.31539156525252005, -1.0925484305920792, 0.5462742152960396]
C3 = [-0.5900435899266435, 2.890611442640554, -0.4570457994644658, 0.3731763325901154, -0.4570457994644658, 1.445305721320277, -0.5900435899266435]


def eval_sh(deg, sh, dirs):
    """Evaluate spherical harmonics at unit directions using hardcoded SH polynomials."""
    assert deg <= 4 and deg >= 0
    coeff = (deg + 1) ** 2
    assert sh.shape[-1] >= coeff

    result = C0 * sh[..., 0]
    if deg > 0:
        x, y, z = dirs[..., 0:1], dirs[..., 1:2], dirs[..., 2:3]
        result = (result - C1 * y * sh[..., 1] + C1 * z * sh[..., 2] - C1 * x * sh[..., 3])

        if deg > 1:
            xx, yy, zz = x * x, y * y, z * z
            xy, yz, xz = x * y, y * z, x * z
            result = (result
                      + C2[0] * xy * sh[..., 4]
                      + C2[1] * yz * sh[..., 5]
                      + C2[2] * (2.0 * zz - xx - yy) * sh[..., 6]
                      + C2[3] * xz * sh[..., 7]
                      + C2[4] * (xx - yy) * sh[..., 8])

            if deg > 2:
                result = (result
                          + C3[0] * y * (3 * xx - yy) * sh[..., 9]
                          + C3[1] * xy * z * sh[..., 10]
                          + C3[2] * y * (4 * zz - xx - yy) * sh[..., 11]
                          + C3[3] * z * (2 * zz - 3 * xx - 3 * yy) * sh[..., 12]
                          + C3[4] * x * (4 * zz - xx - yy) * sh[..., 13]
                          + C3[5] * z * (xx - yy) * sh[..., 14]
                          + C3[6] * x * (xx - 3 * yy) * sh[..., 15])
    return result


def RGB2SH(rgb):
    return (rgb - 0.5) / C0


def SH2RGB(sh):
    return sh * C0 + 0.5


def inverse_sigmoid(x):
    return torch.log(x / (1 - x))


def get_expon_lr_func(lr_init, lr_final, lr_delay_steps=0, lr_delay_mult=1.0, max_steps=1000000):
    def helper(step):
        if step < 0 or (lr_init == 0.0 and lr_final == 0.0):
            # Disable this parameter
            return 0.0
        if lr_delay_steps > 0:
            # A kind of reverse cosine decay.
            delay_rate = lr_delay_mult + (1 - lr_delay_mult) * np.sin(0.5 * np.pi * np.clip(step / lr_delay_steps, 0, 1))
        else:
            delay_rate = 1.0
        t = np.clip(step / max_steps, 0, 1)
        log_lerp = np.exp(np.log(lr_init) * (1 - t) + np.log(lr_final) * t)
        return delay_rate * log_lerp

    return helper


def strip_lowerdiag(L):
    uncertainty = torch.zeros((L.shape[0], 6), dtype=torch.float)

    uncertainty[:, 0] = L[:, 0, 0]
    uncertainty[:, 1] = L[:, 0, 1]
    uncertainty[:, 2] = L[:, 0, 2]
    uncertainty[:, 3] = L[:, 1, 1]
    uncertainty[:, 4] = L[:, 1, 2]
    uncertainty[:, 5] = L[:, 2, 2]
    return uncertainty


def strip_symmetric(sym):
    return strip_lowerdiag(sym)


def build_rotation(r):
    norm = torch.sqrt(r[:, 0] * r[:, 0] + r[:, 1] * r[:, 1] + r[:, 2] * r[:, 2] + r[:, 3] * r[:, 3])

    q = r / norm[:, None]

    R = torch.zeros((q.size(0), 3, 3))

    r = q[:, 0]
    x = q[:, 1]
    y = q[:, 2]
    z = q[:, 3]

    R[:, 0, 0] = 1 - 2 * (y * y + z * z)
    R[:, 0, 1] = 2 * (x * y - r * z)
    R[:, 0, 2] = 2 * (x * z + r * y)
    R[:, 1, 0] = 2 * (x * y + r * z)
    R[:, 1, 1] = 1 - 2 * (x * x + z * z)
    R[:, 1, 2] = 2 * (y * z - r * x)
    R[:, 2, 0] = 2 * (x * z - r * y)
    R[:, 2, 1] = 2 * (y * z + r * x)
    R[:, 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def build_scaling_rotation(s, r):
    L = torch.zeros((s.shape[0], 3, 3), dtype=torch.float)
    R = build_rotation(r)

    L[:, 0, 0] = s[:, 0]
    L[:, 1, 1] = s[:, 1]
    L[:, 2, 2] = s[:, 2]

    L = R @ L
    return L


def build_covariance_from_scaling_rotation(scaling, scaling_modifier, rotation):
    L = build_scaling_rotation(scaling_modifier * scaling, rotation)
    actual_covariance = L @ L.transpose(1, 2)
    symm = strip_symmetric(actual_covariance)
    return symm


class GaussianModel:
    def setup_functions(self):
        self.scaling_activation = torch.exp
        self.scaling_inverse_activation = torch.log
        self.covariance_activation = build_covariance_from_scaling_rotation
        self.opacity_activation = torch.sigmoid
        self.inverse_opacity_activation = inverse_sigmoid
        self.rotation_activation = F.normalize

    def __init__(self, sh_degree):
        self.active_sh_degree = 0
        self.max_sh_degree = sh_degree
        self.setup_functions()

    def create_from_pcd(self, points, colors):
        fused_point_cloud = points
        fused_color = RGB2SH(colors)
        features = torch.zeros((fused_color.shape[0], 3, (self.max_sh_degree + 1) ** 2)).float()
        features[:, :3, 0] = fused_color
        features[:, 3:, 1:] = 0.0
        # distCUDA2: mean squared distance to the 3 nearest neighbours
        d2 = torch.cdist(points, points).pow(2) + torch.eye(points.shape[0]) * 1e10
        dist2 = torch.clamp_min(d2.topk(3, dim=1, largest=False).values.mean(1), 0.0000001)
        scales = torch.log(torch.sqrt(dist2))[..., None].repeat(1, 3)
        rots = torch.zeros((fused_point_cloud.shape[0], 4))
        rots[:, 0] = 1
        opacities = self.inverse_opacity_activation(0.1 * torch.ones((fused_point_cloud.shape[0], 1), dtype=torch.float))
        self._xyz = nn.Parameter(fused_point_cloud.requires_grad_(True))
        self._features_dc = nn.Parameter(features[:, :, 0:1].transpose(1, 2).contiguous().requires_grad_(True))
        self._features_rest = nn.Parameter(features[:, :, 1:].transpose(1, 2).contiguous().requires_grad_(True))
        self._scaling = nn.Parameter(scales.requires_grad_(True))
        self._rotation = nn.Parameter(rots.requires_grad_(True))
        self._opacity = nn.Parameter(opacities.requires_grad_(True))

    @property
    def get_scaling(self):
        return self.scaling_activation(self._scaling)

    @property
    def get_rotation(self):
        return self.rotation_activation(self._rotation)

    @property
    def get_xyz(self):
        return self._xyz

    @property
    def get_features(self):
        features_dc = self._features_dc
        features_rest = self._features_rest
        return torch.cat((features_dc, features_rest), dim=1)

    @property
    def get_opacity(self):
        return self.opacity_activation(self._opacity)

    def get_covariance(self, scaling_modifier=1):
        return self.covariance_activation(self.get_scaling, scaling_modifier, self._rotation)

    def oneupSHdegree(self):
        if self.active_sh_degree < self.max_sh_degree:
            self.active_sh_degree += 1


def render(pc, camera_center, W2C, fx, fy, H, W, bg):
    """Python SH colours, EWA-projected 2-D covariances, depth-sorted alpha compositing."""
    shs_view = pc.get_features.transpose(1, 2).view(-1, 3, (pc.max_sh_degree + 1) ** 2)
    dir_pp = pc.get_xyz - camera_center.repeat(pc.get_features.shape[0], 1)
    dir_pp_normalized = dir_pp / dir_pp.norm(dim=1, keepdim=True)
    sh2rgb = eval_sh(pc.active_sh_degree, shs_view, dir_pp_normalized)
    colors_precomp = torch.clamp_min(sh2rgb + 0.5, 0.0)

    # computeCov2D: J W Sigma W^T J^T with the 0.3 low-pass
    cov6 = pc.get_covariance()
    idx = torch.tensor([[0, 1, 2], [1, 3, 4], [2, 4, 5]])
    Sigma = cov6[:, idx]
    t = pc.get_xyz @ W2C[:3, :3].T + W2C[:3, 3]
    tx, ty, tz = t.unbind(-1)
    zeros = torch.zeros_like(tz)
    J = torch.stack([fx / tz, zeros, -fx * tx / tz**2, zeros, fy / tz, -fy * ty / tz**2], dim=-1).view(-1, 2, 3)
    T = J @ W2C[:3, :3]
    cov2d = T @ Sigma @ T.transpose(1, 2) + 0.3 * torch.eye(2)
    det = cov2d[:, 0, 0] * cov2d[:, 1, 1] - cov2d[:, 0, 1] ** 2
    conic = torch.stack([cov2d[:, 1, 1], -cov2d[:, 0, 1], cov2d[:, 0, 0]], dim=-1) / det[:, None]
    means2d = torch.stack([fx * tx / tz + W / 2, fy * ty / tz + H / 2], dim=-1)

    order = torch.argsort(tz)
    ys, xs = torch.meshgrid(torch.arange(H, dtype=torch.float32), torch.arange(W, dtype=torch.float32), indexing="ij")
    pix = torch.stack([xs, ys], dim=-1).view(-1, 1, 2) + 0.5
    d = pix - means2d[order][None]
    a, b, c = conic[order].unbind(-1)
    power = -0.5 * (a * d[..., 0] ** 2 + c * d[..., 1] ** 2) - b * d[..., 0] * d[..., 1]
    alpha = torch.clamp_max(pc.get_opacity[order, 0] * torch.exp(power), 0.99)
    alpha = torch.where(alpha < 1.0 / 255.0, torch.zeros_like(alpha), alpha)
    T_acc = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1 - alpha[:, :-1]], dim=1), dim=1)
    weights = alpha * T_acc
    img = weights @ colors_precomp[order] + (1 - weights.sum(1, keepdim=True)) * bg
    return img.view(H, W, 3).permute(2, 0, 1), means2d, cov2d


def r(t, nd=5):
    return [round(float(v), nd) for v in t.detach().reshape(-1)]


torch.manual_seed(0)
q = torch.randn(4, 4)
R = build_rotation(q)
print("R orthonormal", float((R @ R.transpose(1, 2) - torch.eye(3)).abs().max()) < 1e-5, "R[0]", r(R[0], 4))
s = torch.rand(4, 3) + 0.1
cov = build_covariance_from_scaling_rotation(s, 1.0, q)
print("cov6", r(cov[:2], 5))
full = build_scaling_rotation(s, q)
print("eigvals == s^2", float((torch.linalg.eigvalsh(full @ full.transpose(1, 2)) - (s**2).sort(-1).values).abs().max()) < 1e-5)
print("inverse_sigmoid", r(inverse_sigmoid(torch.tensor([0.1, 0.5, 0.9])), 5))
lr = get_expon_lr_func(1.6e-4, 1.6e-6, lr_delay_mult=0.01, max_steps=30000)
lr2 = get_expon_lr_func(1e-3, 1e-5, lr_delay_steps=100, lr_delay_mult=0.1, max_steps=1000)
print("lr schedule", [float("%.6g" % lr(i)) for i in (0, 15000, 30000)], [float("%.6g" % lr2(i)) for i in (0, 50, 500)])

dirs = F.normalize(torch.randn(5, 3), dim=-1)
sh = torch.randn(5, 3, 16)
for deg in range(4):
    print("eval_sh deg", deg, r(eval_sh(deg, sh, dirs)[0], 5))
shg = sh.clone().requires_grad_()
dg = dirs.clone().requires_grad_()
eval_sh(3, shg, dg).sum().backward()
print("sh grad", r(shg.grad[0, 0], 5), "dir grad", r(dg.grad[0], 5))
print("RGB2SH/SH2RGB", r(SH2RGB(RGB2SH(torch.tensor([0.2, 0.5, 0.9]))), 6))

# scene: 6 Gaussians in front of a camera looking down +z
pts = torch.tensor([[0.0, 0.0, 4.0], [0.5, 0.2, 5.0], [-0.4, -0.3, 3.5], [0.3, -0.5, 4.5], [-0.5, 0.4, 6.0], [0.1, 0.1, 3.0]])
cols = torch.tensor([[0.9, 0.1, 0.1], [0.1, 0.9, 0.1], [0.1, 0.1, 0.9], [0.8, 0.8, 0.1], [0.1, 0.8, 0.8], [0.5, 0.5, 0.5]])
pc = GaussianModel(sh_degree=1)
pc.create_from_pcd(pts.clone(), cols)
print("init scales", r(pc.get_scaling[:, 0], 4), "opacity", r(pc.get_opacity[:2, 0], 4))
W2C = torch.eye(4)
cam_center = torch.zeros(1, 3)
H = W = 8
bg = torch.tensor([0.0, 0.0, 0.0])
img, m2d, c2d = render(pc, cam_center, W2C, 6.0, 6.0, H, W, bg)
print("render", tuple(img.shape), round(img.sum().item(), 5), r(img[:, 4, 4], 5))
print("means2d", r(m2d[:3], 4), "cov2d[0]", r(c2d[0], 5))

target = torch.zeros(3, H, W)
target[0, :4] = 0.8
target[2, 4:] = 0.6
params = [pc._xyz, pc._features_dc, pc._features_rest, pc._scaling, pc._rotation, pc._opacity]
opt = torch.optim.Adam([{"params": [p], "lr": lr_p} for p, lr_p in zip(params, (0.01, 0.05, 0.0025, 0.05, 0.01, 0.05))], lr=0.0, eps=1e-15)
for it in range(1, 13):
    if it % 6 == 0:
        pc.oneupSHdegree()
    for g in opt.param_groups[:1]:
        g["lr"] = lr(it) * 50
    img, _, _ = render(pc, cam_center, W2C, 6.0, 6.0, H, W, bg)
    Ll1 = torch.abs(img - target).mean()
    Ll1.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    if it % 4 == 0:
        print("it %2d l1 %.5f sh %d" % (it, Ll1.item(), pc.active_sh_degree))
print("fitted opacity", r(pc.get_opacity[:, 0], 4))
print("fitted rot norm", r(pc.get_rotation.norm(dim=1), 5))
try:
    eval_sh(2, sh[..., :4], dirs)
except AssertionError:
    print("AssertionError: not enough SH coefficients")
print("pi check", round(math.pi * C0 * C0 * 4, 6))
