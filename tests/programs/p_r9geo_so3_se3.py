"""SO(3)/SE(3) exponential and log maps, shrunk from facebookresearch/pytorch3d
(pytorch3d/transforms/so3.py: so3_relative_angle, so3_rotation_angle, so3_exp_map/_so3_exp_map,
so3_log_map with its Taylor phi_factor branch, hat, hat_inv; pytorch3d/transforms/math.py:
acos_linear_extrapolation; pytorch3d/transforms/se3.py: se3_exp_map, se3_log_map, _se3_V_matrix,
_get_se3_V_input), plus the absolute-pose fit of docs/tutorials/bundle_adjustment.ipynb (camera
log-rotations and translations optimised with SGD through so3_exp_map against a relative-angle
loss). Tiny synthetic poses; float64 where the originals' tests use it."""
# ruff: noqa: E501  (upstream's own line lengths, kept)
import importlib
import math
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)

DEFAULT_ACOS_BOUND = 1.0 - 1e-4
HAT_INV_SKEW_SYMMETRIC_TOL = 1e-5


def acos_linear_extrapolation(x, bounds=(-DEFAULT_ACOS_BOUND, DEFAULT_ACOS_BOUND)):
    """arccos(x) inside bounds, a linear Taylor extension of it outside."""
    lower_bound, upper_bound = bounds

    if lower_bound > upper_bound:
        raise ValueError("lower bound has to be smaller or equal to upper bound.")

    if lower_bound <= -1.0 or upper_bound >= 1.0:
        raise ValueError("Both lower bound and upper bound have to be within (-1, 1).")

    # init an empty tensor and define the domain sets
    acos_extrap = torch.empty_like(x)
    x_upper = x >= upper_bound
    x_lower = x <= lower_bound
    x_mid = (~x_upper) & (~x_lower)

    # acos calculation for x_mid
    acos_extrap[x_mid] = torch.acos(x[x_mid])
    # the linear extrapolation for x_upper and x_lower
    acos_extrap[x_upper] = _acos_linear_approximation(x[x_upper], upper_bound)
    acos_extrap[x_lower] = _acos_linear_approximation(x[x_lower], lower_bound)

    return acos_extrap


def _acos_linear_approximation(x, x0: float):
    return (x - x0) * _dacos_dx(x0) + math.acos(x0)


def _dacos_dx(x: float) -> float:
    return (-1.0) / math.sqrt(1.0 - x * x)


def so3_relative_angle(R1, R2, cos_angle: bool = False, cos_bound: float = 1e-4, eps: float = 1e-4):
    R12 = torch.bmm(R1, R2.permute(0, 2, 1))
    return so3_rotation_angle(R12, cos_angle=cos_angle, cos_bound=cos_bound, eps=eps)


def so3_rotation_angle(R, eps: float = 1e-4, cos_angle: bool = False, cos_bound: float = 1e-4):
    N, dim1, dim2 = R.shape
    if dim1 != 3 or dim2 != 3:
        raise ValueError("Input has to be a batch of 3x3 Tensors.")

    rot_trace = R[:, 0, 0] + R[:, 1, 1] + R[:, 2, 2]

    if ((rot_trace < -1.0 - eps) + (rot_trace > 3.0 + eps)).any():
        raise ValueError("A matrix has trace outside valid range [-1-eps,3+eps].")

    # phi ... rotation angle
    phi_cos = (rot_trace - 1.0) * 0.5

    if cos_angle:
        return phi_cos
    else:
        if cos_bound > 0.0:
            bound = 1.0 - cos_bound
            return acos_linear_extrapolation(phi_cos, (-bound, bound))
        else:
            return torch.acos(phi_cos)


def so3_exp_map(log_rot, eps: float = 0.0001):
    return _so3_exp_map(log_rot, eps=eps)[0]


def _so3_exp_map(log_rot, eps: float = 0.0001):
    _, dim = log_rot.shape
    if dim != 3:
        raise ValueError("Input tensor shape has to be Nx3.")

    nrms = (log_rot * log_rot).sum(1)
    # phis ... rotation angles
    rot_angles = torch.clamp(nrms, eps).sqrt()
    skews = hat(log_rot)
    skews_square = torch.bmm(skews, skews)

    rot_angles_inv = 1.0 / rot_angles
    fac1 = rot_angles_inv * rot_angles.sin()
    fac2 = rot_angles_inv * rot_angles_inv * (1.0 - rot_angles.cos())
    R = (
        fac1[:, None, None] * skews
        + fac2[:, None, None] * skews_square
        + torch.eye(3, dtype=log_rot.dtype, device=log_rot.device)[None]
    )

    return R, rot_angles, skews, skews_square


def so3_log_map(R, eps: float = 0.0001, cos_bound: float = 1e-4):
    N, dim1, dim2 = R.shape
    if dim1 != 3 or dim2 != 3:
        raise ValueError("Input has to be a batch of 3x3 Tensors.")

    phi = so3_rotation_angle(R, cos_bound=cos_bound, eps=eps)

    phi_sin = torch.sin(phi)

    # We want to avoid a tiny denominator of phi_factor = phi / (2.0 * phi_sin).
    # Hence, for phi_sin.abs() <= 0.5 * eps, we approximate phi_factor with
    # 2nd order Taylor expansion: phi_factor = 0.5 + (1.0 / 12) * phi**2
    phi_factor = torch.empty_like(phi)
    ok_denom = phi_sin.abs() > (0.5 * eps)
    phi_factor[~ok_denom] = 0.5 + (phi[~ok_denom] ** 2) * (1.0 / 12)
    phi_factor[ok_denom] = phi[ok_denom] / (2.0 * phi_sin[ok_denom])

    log_rot_hat = phi_factor[:, None, None] * (R - R.permute(0, 2, 1))

    log_rot = hat_inv(log_rot_hat)

    return log_rot


def hat_inv(h):
    N, dim1, dim2 = h.shape
    if dim1 != 3 or dim2 != 3:
        raise ValueError("Input has to be a batch of 3x3 Tensors.")

    ss_diff = torch.abs(h + h.permute(0, 2, 1)).max()
    if float(ss_diff) > HAT_INV_SKEW_SYMMETRIC_TOL:
        raise ValueError("One of input matrices is not skew-symmetric.")

    x = h[:, 2, 1]
    y = h[:, 0, 2]
    z = h[:, 1, 0]

    v = torch.stack((x, y, z), dim=1)

    return v


def hat(v):
    N, dim = v.shape
    if dim != 3:
        raise ValueError("Input vectors have to be 3-dimensional.")

    h = torch.zeros((N, 3, 3), dtype=v.dtype, device=v.device)

    x, y, z = v.unbind(1)

    h[:, 0, 1] = -z
    h[:, 0, 2] = y
    h[:, 1, 0] = z
    h[:, 1, 2] = -x
    h[:, 2, 0] = -y
    h[:, 2, 1] = x

    return h


def se3_exp_map(log_transform, eps: float = 1e-4):
    if log_transform.ndim != 2 or log_transform.shape[1] != 6:
        raise ValueError("Expected input to be of shape (N, 6).")

    N, _ = log_transform.shape

    log_translation = log_transform[..., :3]
    log_rotation = log_transform[..., 3:]

    # rotation is an exponential map of log_rotation
    (R, rotation_angles, log_rotation_hat, log_rotation_hat_square) = _so3_exp_map(log_rotation, eps=eps)

    # translation is V @ T
    V = _se3_V_matrix(log_rotation, log_rotation_hat, log_rotation_hat_square, rotation_angles, eps=eps)
    T = torch.bmm(V, log_translation[:, :, None])[:, :, 0]

    transform = torch.zeros(N, 4, 4, dtype=log_transform.dtype, device=log_transform.device)

    transform[:, :3, :3] = R
    transform[:, :3, 3] = T
    transform[:, 3, 3] = 1.0

    return transform.permute(0, 2, 1)


def se3_log_map(transform, eps: float = 1e-4, cos_bound: float = 1e-4):
    if transform.ndim != 3:
        raise ValueError("Input tensor shape has to be (N, 4, 4).")

    N, dim1, dim2 = transform.shape
    if dim1 != 4 or dim2 != 4:
        raise ValueError("Input tensor shape has to be (N, 4, 4).")

    if not torch.allclose(transform[:, :3, 3], torch.zeros_like(transform[:, :3, 3])):
        raise ValueError("All elements of `transform[:, :3, 3]` should be 0.")

    # log_rot is just so3_log_map of the upper left 3x3 block
    R = transform[:, :3, :3].permute(0, 2, 1)
    log_rotation = so3_log_map(R, eps=eps, cos_bound=cos_bound)

    # log_translation is V^-1 @ T
    T = transform[:, 3, :3]
    V = _se3_V_matrix(*_get_se3_V_input(log_rotation), eps=eps)
    log_translation = torch.linalg.solve(V, T[:, :, None])[:, :, 0]

    return torch.cat((log_translation, log_rotation), dim=1)


def _se3_V_matrix(log_rotation, log_rotation_hat, log_rotation_hat_square, rotation_angles, eps: float = 1e-4):
    V = (
        torch.eye(3, dtype=log_rotation.dtype, device=log_rotation.device)[None]
        + log_rotation_hat
        * ((1 - torch.cos(rotation_angles)) / (rotation_angles**2))[:, None, None]
        + (
            log_rotation_hat_square
            * ((rotation_angles - torch.sin(rotation_angles)) / (rotation_angles**3))[:, None, None]
        )
    )

    return V


def _get_se3_V_input(log_rotation, eps: float = 1e-4):
    nrms = (log_rotation**2).sum(-1)
    rotation_angles = torch.clamp(nrms, eps).sqrt()
    log_rotation_hat = hat(log_rotation)
    log_rotation_hat_square = torch.bmm(log_rotation_hat, log_rotation_hat)
    return log_rotation, log_rotation_hat, log_rotation_hat_square, rotation_angles


def show(name, t, nd=5):
    print(name, tuple(t.shape), t.dtype, [round(float(v), nd) for v in t.detach().reshape(-1)])


torch.manual_seed(42)
# test_so3.py-style: random log rotations, including a tiny one and one near pi
log_rot = torch.randn(5, 3, dtype=torch.float64)
log_rot[1] *= 1e-6
log_rot[2] = log_rot[2] / log_rot[2].norm() * (math.pi - 1e-3)
R = so3_exp_map(log_rot)
show("R[0]", R[0])
print("orthonormal", float((R @ R.transpose(1, 2) - torch.eye(3, dtype=torch.float64)).abs().max()) < 1e-10)
show("angles", so3_rotation_angle(R))
show("cos angles", so3_rotation_angle(R, cos_angle=True))
log_back = so3_log_map(R)
show("log back", log_back, nd=6)
print("log round trip err < 1e-6 (away from pi)", float((log_back[[0, 1, 3, 4]] - log_rot[[0, 1, 3, 4]]).abs().max()) < 1e-6)
show("hat", hat(log_rot[:1]))
print("hat_inv(hat) exact", torch.equal(hat_inv(hat(log_rot)), log_rot))
show("relative angle", so3_relative_angle(R, R.flip(0)))
show("acos extrap", acos_linear_extrapolation(torch.tensor([-1.0, -0.9999, -0.5, 0.0, 0.99995, 1.0]), (-0.999, 0.999)))

# float32 exp map (the tutorial's dtype)
lr32 = torch.tensor([[0.1, -0.2, 0.3], [0.0, 0.0, 0.0], [1.0, 2.0, -0.5]])
show("exp32", so3_exp_map(lr32))

# gradients of so3_log_map and so3_exp_map
Rg = so3_exp_map(torch.tensor([[0.3, 0.2, -0.4], [1.2, -0.7, 0.1], [1e-7, 0.0, 0.0]], dtype=torch.float64)).requires_grad_()
lg = so3_log_map(Rg)
(lg * torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)).sum().backward()
show("log grad R[0]", Rg.grad[0], nd=6)
show("log grad R[2]", Rg.grad[2], nd=6)
print("log grad_fn", type(lg.grad_fn).__name__)

v = torch.tensor([[0.5, -0.3, 0.8], [2.0, 0.1, 0.0]], dtype=torch.float64, requires_grad=True)
so3_rotation_angle(so3_exp_map(v)).sum().backward()
show("angle grad", v.grad, nd=6)

# se3
torch.manual_seed(3)
log_T = torch.randn(4, 6, dtype=torch.float64)
T = se3_exp_map(log_T)
show("T[0]", T[0])
print("bottom-right", T[:, 3, 3].tolist(), "zeros column", T[:, :3, 3].abs().max().item())
log_T_back = se3_log_map(T)
show("se3 log back", log_T_back, nd=6)
print("se3 round trip", float((log_T_back - log_T).abs().max()) < 1e-8)
lt = log_T.clone().requires_grad_()
se3_exp_map(lt)[:, 3, :3].pow(2).sum().backward()
show("se3 grad", lt.grad[:2], nd=6)

# bundle_adjustment.ipynb-style: fit absolute camera rotations from relative ones
torch.manual_seed(7)
N = 5
R_gt = so3_exp_map(torch.randn(N, 3) * 0.8)
R_gt = torch.bmm(R_gt[:1].transpose(1, 2).expand(N, 3, 3), R_gt)  # first camera is the identity
i, j = torch.triu_indices(N, N, 1)
R_rel_gt = torch.bmm(R_gt[i].transpose(1, 2), R_gt[j])
log_R_absolute_init = torch.randn(N, 3) * 0.1
log_R_absolute = log_R_absolute_init.clone().detach()
log_R_absolute.requires_grad = True
camera_mask = torch.ones(N, 1)
camera_mask[0] = 0.0
optimizer = torch.optim.SGD([log_R_absolute], lr=0.1, momentum=0.9)
for it in range(40):
    optimizer.zero_grad()
    R_abs = so3_exp_map(log_R_absolute * camera_mask)
    R_rel = torch.bmm(R_abs[i].transpose(1, 2), R_abs[j])
    camera_distance = so3_relative_angle(R_rel, R_rel_gt)
    loss = camera_distance.mean()
    loss.backward()
    optimizer.step()
    if it % 10 == 0 or it == 39:
        print("iteration %2d; camera_distance %1.4f" % (it, loss.item()))
R_abs = so3_exp_map(log_R_absolute * camera_mask)
print("final abs angle error", [round(v, 3) for v in so3_relative_angle(R_abs, R_gt).tolist()])

for bad, fn in ((torch.zeros(2, 4), so3_exp_map), (torch.zeros(2, 3, 2), so3_log_map), (torch.ones(1, 3, 3), hat_inv), (torch.zeros(2, 5), se3_exp_map)):
    try:
        fn(bad)
    except ValueError as e:
        print("ValueError", e)
try:
    so3_rotation_angle(torch.eye(3)[None] * 3)
except ValueError as e:
    print("ValueError", e)
