"""Homographies and pinhole geometry, shrunk from kornia: kornia/geometry/conversions.py
(convert_points_to/from_homogeneous, normalize_pixel_coordinates), linalg.py (transform_points),
epipolar/normalize_points, homography.py (find_homography_dlt: the normalised DLT with optional
weights solved by torch.linalg.svd), transform/imgwarp.py (get_perspective_transform via an 8x8
solve, normal_transform_pixel, normalize_homography, warp_perspective through create_meshgrid +
grid_sample), camera/perspective.py (project_points, unproject_points), depth.py (depth_to_3d) and a
small PinholeCamera, then the image-registration example (an 8-parameter homography fitted with Adam
through warp_perspective). Tiny synthetic images and correspondences."""
# ruff: noqa: E501  (upstream's own line lengths, kept)
import importlib
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")


def convert_points_to_homogeneous(points):
    if not isinstance(points, torch.Tensor):
        raise TypeError(f"Input type is not a Tensor. Got {type(points)}")
    if len(points.shape) < 2:
        raise ValueError(f"Input must be at least a 2D tensor. Got {points.shape}")
    return F.pad(points, [0, 1], "constant", 1.0)


def convert_points_from_homogeneous(points, eps: float = 1e-8):
    if not isinstance(points, torch.Tensor):
        raise TypeError(f"Input type is not a Tensor. Got {type(points)}")
    if len(points.shape) < 2:
        raise ValueError(f"Input must be at least a 2D tensor. Got {points.shape}")
    # we check for points at max_val
    z_vec = points[..., -1:]
    # set the results of division by zeror/near-zero to 1.0
    # follow the convention of opencv:
    # https://github.com/opencv/opencv/pull/14411/files
    mask = torch.abs(z_vec) > eps
    scale = torch.where(mask, 1.0 / (z_vec + eps), torch.ones_like(z_vec))
    return scale * points[..., :-1]


def transform_points(trans_01, points_1):
    """Apply a batch of projective transforms to a batch of point sets."""
    shape_inp = list(points_1.shape)
    points_1 = points_1.reshape(-1, points_1.shape[-2], points_1.shape[-1])
    trans_01 = trans_01.reshape(-1, trans_01.shape[-2], trans_01.shape[-1])
    # We expand trans_01 to match the dimensions needed for bmm
    trans_01 = torch.repeat_interleave(trans_01, repeats=points_1.shape[0] // trans_01.shape[0], dim=0)
    # to homogeneous
    points_1_h = convert_points_to_homogeneous(points_1)  # BxNxD+1
    # transform coordinates
    points_0_h = torch.bmm(points_1_h, trans_01.permute(0, 2, 1))
    points_0_h = torch.squeeze(points_0_h, dim=-1)
    # to euclidean
    points_0 = convert_points_from_homogeneous(points_0_h)  # BxNxD
    # reshape to the input shape
    shape_inp[-2] = points_0.shape[-2]
    shape_inp[-1] = points_0.shape[-1]
    points_0 = points_0.reshape(shape_inp)
    return points_0


def normalize_points(points, eps: float = 1e-8):
    """Hartley normalisation: zero mean, mean distance sqrt(2)."""
    if not (len(points.shape) == 3 and points.shape[-1] == 2):
        raise AssertionError(points.shape)

    x_mean = torch.mean(points, dim=1, keepdim=True)  # Bx1x2
    scale = (points - x_mean).norm(dim=-1, p=2).mean(dim=-1)  # B
    scale = torch.sqrt(torch.tensor(2.0)) / (scale + eps)  # B

    ones, zeros = torch.ones_like(scale), torch.zeros_like(scale)

    transform = torch.stack(
        [scale, zeros, -scale * x_mean[..., 0, 0], zeros, scale, -scale * x_mean[..., 0, 1], zeros, zeros, ones], dim=-1
    )  # Bx9

    transform = transform.view(-1, 3, 3)  # Bx3x3
    points_norm = transform_points(transform, points)  # BxNx2

    return (points_norm, transform)


def _torch_svd_cast(input):
    """Helper function to make torch.svd work with other than fp32/64."""
    dtype = input.dtype
    if dtype not in (torch.float32, torch.float64):
        dtype = torch.float32
    out1, out2, out3H = torch.linalg.svd(input.to(dtype))
    out3 = out3H.transpose(-1, -2)
    return (out1.to(input.dtype), out2.to(input.dtype), out3.to(input.dtype))


def find_homography_dlt(points1, points2, weights=None):
    """Compute the homography matrix using the DLT formulation."""
    if points1.shape != points2.shape:
        raise AssertionError(points1.shape)
    if points1.shape[1] < 4:
        raise AssertionError(points1.shape)

    eps: float = 1e-8
    points1_norm, transform1 = normalize_points(points1)
    points2_norm, transform2 = normalize_points(points2)

    x1, y1 = torch.chunk(points1_norm, dim=-1, chunks=2)  # BxNx1
    x2, y2 = torch.chunk(points2_norm, dim=-1, chunks=2)  # BxNx1
    ones, zeros = torch.ones_like(x1), torch.zeros_like(x1)

    # DIAPO 11: https://www.uio.no/studier/emner/matnat/its/nedlagte-emner/UNIK4690/v16/forelesninger/lecture_4_3-estimating-homographies-from-feature-correspondences.pdf
    ax = torch.cat([zeros, zeros, zeros, -x1, -y1, -ones, y2 * x1, y2 * y1, y2], dim=-1)
    ay = torch.cat([x1, y1, ones, zeros, zeros, zeros, -x2 * x1, -x2 * y1, -x2], dim=-1)
    A = torch.cat((ax, ay), dim=-1).reshape(ax.shape[0], -1, ax.shape[-1])

    if weights is None:
        # All points are equally important
        A = A.transpose(-2, -1) @ A
    else:
        # We should use provided weights
        if not (len(weights.shape) == 2 and weights.shape == points1.shape[:2]):
            raise AssertionError(weights.shape)
        w_diag = torch.diag_embed(weights.unsqueeze(dim=-1).repeat(1, 1, 2).reshape(weights.shape[0], -1))
        A = A.transpose(-2, -1) @ w_diag @ A

    _, _, V = _torch_svd_cast(A)
    H = V[..., -1].view(-1, 3, 3)
    H = transform2.inverse() @ (H @ transform1)
    H_norm = H / (H[..., -1:, -1:] + eps)
    return H_norm


def _build_perspective_param(p, q, axis: str):
    ones = torch.ones_like(p)[..., 0:1]
    zeros = torch.zeros_like(p)[..., 0:1]
    if axis == "x":
        return torch.cat([p[:, 0:1], p[:, 1:2], ones, zeros, zeros, zeros, -p[:, 0:1] * q[:, 0:1], -p[:, 1:2] * q[:, 0:1]], dim=1)
    if axis == "y":
        return torch.cat([zeros, zeros, zeros, p[:, 0:1], p[:, 1:2], ones, -p[:, 0:1] * q[:, 1:2], -p[:, 1:2] * q[:, 1:2]], dim=1)
    raise NotImplementedError(f"perspective params for axis `{axis}` is not implemented.")


def get_perspective_transform(src, dst):
    """Perspective transform from four pairs of corresponding points (Bx4x2)."""
    if not src.shape[-2:] == (4, 2):
        raise ValueError(f"Inputs must be a Bx4x2 tensor. Got {src.shape}")
    # we build matrix A by using only 4 point correspondence. The linear
    # system is solved with the least square method, so here
    # we could even pass more correspondence
    p = []
    for i in [0, 1, 2, 3]:
        p.append(_build_perspective_param(src[:, i], dst[:, i], "x"))
        p.append(_build_perspective_param(src[:, i], dst[:, i], "y"))

    # A is Bx8x8
    A = torch.stack(p, dim=1)

    # b is a Bx8x1
    b = torch.stack(
        [dst[:, 0:1, 0], dst[:, 0:1, 1], dst[:, 1:2, 0], dst[:, 1:2, 1], dst[:, 2:3, 0], dst[:, 2:3, 1], dst[:, 3:4, 0], dst[:, 3:4, 1]],
        dim=1,
    )

    # solve the system Ax = b
    X = torch.linalg.solve(A, b)

    # create variable to return
    batch_size = src.shape[0]
    M = torch.ones(batch_size, 9, device=src.device, dtype=src.dtype)
    M[..., :8] = torch.squeeze(X, dim=-1)

    return M.view(-1, 3, 3)  # Bx3x3


def create_meshgrid(height: int, width: int, normalized_coordinates: bool = True, device=None, dtype=None):
    xs = torch.linspace(0, width - 1, width, device=device, dtype=dtype)
    ys = torch.linspace(0, height - 1, height, device=device, dtype=dtype)
    # Fix TracerWarning
    # Note: normalize_pixel_coordinates still gots TracerWarning since new width and height
    #       tensors will be generated.
    # Below is the code using normalize_pixel_coordinates:
    # base_grid: torch.Tensor = torch.stack(torch.meshgrid([xs, ys]), dim=2)
    # if normalized_coordinates:
    #     base_grid = K.geometry.normalize_pixel_coordinates(base_grid, height, width)
    # return torch.unsqueeze(base_grid.transpose(0, 1), dim=0)
    if normalized_coordinates:
        xs = (xs / (width - 1) - 0.5) * 2
        ys = (ys / (height - 1) - 0.5) * 2
    # generate grid by stacking coordinates
    base_grid = torch.stack(torch.meshgrid([xs, ys], indexing="ij"), dim=-1)  # WxHx2
    return base_grid.permute(1, 0, 2).unsqueeze(0)  # 1xHxWx2


def normal_transform_pixel(height: int, width: int, eps: float = 1e-14, device=None, dtype=None):
    tr_mat = torch.tensor([[1.0, 0.0, -1.0], [0.0, 1.0, -1.0], [0.0, 0.0, 1.0]], device=device, dtype=dtype)  # 3x3

    # prevent divide by zero bugs
    width_denom: float = eps if width == 1 else width - 1.0
    height_denom: float = eps if height == 1 else height - 1.0

    tr_mat[0, 0] = tr_mat[0, 0] * 2.0 / width_denom
    tr_mat[1, 1] = tr_mat[1, 1] * 2.0 / height_denom

    return tr_mat.unsqueeze(0)  # 1x3x3


def normalize_homography(dst_pix_trans_src_pix, dsize_src, dsize_dst):
    # source and destination sizes
    src_h, src_w = dsize_src
    dst_h, dst_w = dsize_dst

    # compute the transformation pixel/norm for src/dst
    src_norm_trans_src_pix = normal_transform_pixel(src_h, src_w).to(dst_pix_trans_src_pix)

    src_pix_trans_src_norm = torch.inverse(src_norm_trans_src_pix)
    dst_norm_trans_dst_pix = normal_transform_pixel(dst_h, dst_w).to(dst_pix_trans_src_pix)

    # compute chain transformations
    dst_norm_trans_src_norm = dst_norm_trans_dst_pix @ (dst_pix_trans_src_pix @ src_pix_trans_src_norm)
    return dst_norm_trans_src_norm


def warp_perspective(src, M, dsize, mode: str = "bilinear", padding_mode: str = "zeros", align_corners: bool = True):
    """Apply a perspective transformation to an image."""
    if not len(src.shape) == 4:
        raise ValueError(f"Input src must be a BxCxHxW tensor. Got {src.shape}")
    if not (len(M.shape) == 3 and M.shape[-2:] == (3, 3)):
        raise ValueError(f"Input M must be a Bx3x3 tensor. Got {M.shape}")

    B, _, H, W = src.size()
    h_out, w_out = dsize

    # we normalize the 3x3 transformation matrix and convert to 3x4
    dst_norm_trans_src_norm = normalize_homography(M, (H, W), (h_out, w_out))  # Bx3x3

    src_norm_trans_dst_norm = torch.inverse(dst_norm_trans_src_norm)  # Bx3x3

    # this piece of code substitutes F.affine_grid since it does not support 3x3
    grid = create_meshgrid(h_out, w_out, normalized_coordinates=True, device=src.device).to(src.dtype).repeat(B, 1, 1, 1)
    grid = transform_points(src_norm_trans_dst_norm[:, None, None], grid)

    return F.grid_sample(src, grid, align_corners=align_corners, mode=mode, padding_mode=padding_mode)


def project_points(point_3d, camera_matrix):
    # projection eq. [u, v, w]' = K * [x y z 1]'
    # u = fx * X / Z + cx
    # v = fy * Y / Z + cy
    # project back using depth dividing in a safe way
    xy_coords = convert_points_from_homogeneous(point_3d)
    x_coord = xy_coords[..., 0]
    y_coord = xy_coords[..., 1]

    # unpack intrinsics
    fx = camera_matrix[..., 0, 0]
    fy = camera_matrix[..., 1, 1]
    cx = camera_matrix[..., 0, 2]
    cy = camera_matrix[..., 1, 2]

    # apply intrinsics ans return
    u_coord = x_coord * fx + cx
    v_coord = y_coord * fy + cy

    return torch.stack([u_coord, v_coord], dim=-1)


def unproject_points(point_2d, depth, camera_matrix, normalize: bool = False):
    # projection eq. K_inv * [u v 1]'
    # x = (u - cx) * Z / fx
    # y = (v - cy) * Z / fy
    u_coord = point_2d[..., 0]
    v_coord = point_2d[..., 1]

    # unpack intrinsics
    fx = camera_matrix[..., 0, 0]
    fy = camera_matrix[..., 1, 1]
    cx = camera_matrix[..., 0, 2]
    cy = camera_matrix[..., 1, 2]

    # projective
    x_coord = (u_coord - cx) / fx
    y_coord = (v_coord - cy) / fy

    xyz = torch.stack([x_coord, y_coord], dim=-1)
    xyz = convert_points_to_homogeneous(xyz)

    if normalize:
        xyz = F.normalize(xyz, dim=-1, p=2.0)

    return xyz * depth


def depth_to_3d(depth, camera_matrix, normalize_points: bool = False):
    """Compute a 3d point per pixel given its depth value and the camera intrinsics."""
    if not len(depth.shape) == 4 and depth.shape[-3] == 1:
        raise ValueError(f"Input depth musth have a shape (B, 1, H, W). Got: {depth.shape}")
    if not len(camera_matrix.shape) == 3 and camera_matrix.shape[-2:] == (3, 3):
        raise ValueError(f"Input camera_matrix must have a shape (B, 3, 3). Got: {camera_matrix.shape}.")

    # create base coordinates grid
    _, _, height, width = depth.shape
    points_2d = create_meshgrid(height, width, normalized_coordinates=False)  # 1xHxWx2
    points_2d = points_2d.to(depth.device).to(depth.dtype)

    # depth should come in Bx1xHxW
    points_depth = depth.permute(0, 2, 3, 1)  # 1xHxWx1

    # project pixels to camera frame
    camera_matrix_tmp = camera_matrix[:, None, None]  # Bx1x1x3x3

    points_3d = unproject_points(points_2d, points_depth, camera_matrix_tmp, normalize=normalize_points)  # BxHxWx3

    return points_3d.permute(0, 3, 1, 2)  # Bx3xHxW


class PinholeCamera:
    """Intrinsics (Bx4x4) and extrinsics (Bx4x4) of a batch of pinhole cameras."""

    def __init__(self, intrinsics, extrinsics, height, width):
        self._intrinsics = intrinsics
        self._extrinsics = extrinsics
        self.height = height
        self.width = width

    @property
    def fx(self):
        return self._intrinsics[..., 0, 0]

    @property
    def rt_matrix(self):
        return self._extrinsics[..., :3, :4]

    def intrinsics_inverse(self):
        return self._intrinsics.inverse()

    def project(self, point_3d):
        P = self._intrinsics @ self._extrinsics
        return convert_points_from_homogeneous(transform_points(P, point_3d))

    def unproject(self, point_2d, depth):
        P = self._intrinsics @ self._extrinsics
        P_inv = torch.inverse(P)
        return transform_points(P_inv, torch.cat([point_2d, torch.ones_like(depth)], -1) * depth)


def r(t, nd=4):
    return [round(float(v), nd) for v in t.detach().reshape(-1)]


torch.manual_seed(0)
# ground-truth homography and correspondences (float64 as kornia's tests use for DLT)
H_gt = torch.tensor([[[1.1, 0.05, 3.0], [-0.08, 0.95, -2.0], [0.001, -0.002, 1.0]]], dtype=torch.float64)
pts1 = torch.rand(1, 8, 2, dtype=torch.float64) * 30
pts2 = transform_points(H_gt, pts1)
print("pts2", r(pts2[0, :3]))
pn, T = normalize_points(pts1)
print("normalized mean", r(pn.mean(1), 6), "mean dist", round(pn.norm(dim=-1).mean().item(), 6))
H = find_homography_dlt(pts1, pts2)
print("dlt H", r(H, 6), "err", float((H - H_gt).abs().max()) < 1e-6)
w = torch.ones(1, 8, dtype=torch.float64)
w[0, 0] = 0.0
noisy2 = pts2.clone()
noisy2[0, 0] += 5.0  # outlier with zero weight
Hw = find_homography_dlt(pts1, noisy2, weights=w)
print("weighted dlt ignores outlier", float((Hw - H_gt).abs().max()) < 1e-6)
print("unweighted dlt with outlier", r(find_homography_dlt(pts1, noisy2), 3))

# gradient of the reprojection through the DLT w.r.t. target points
p2 = pts2.clone().requires_grad_()
Hg = find_homography_dlt(pts1, p2)
transform_points(Hg, torch.tensor([[[10.0, 20.0]]], dtype=torch.float64)).sum().backward()
print("dlt grad", r(p2.grad[0], 6))

# four-point perspective transform, float32
src = torch.tensor([[[0.0, 0.0], [15.0, 0.0], [15.0, 11.0], [0.0, 11.0]]])
dst = torch.tensor([[[1.0, 2.0], [14.0, 0.5], [13.0, 10.0], [2.0, 11.5]]])
M = get_perspective_transform(src, dst)
print("perspective M", r(M, 5))
print("maps corners", r(transform_points(M, src), 3))

# warp_perspective of a small image (bilinear / nearest, zeros / border)
img = torch.arange(2 * 12 * 16, dtype=torch.float32).reshape(1, 2, 12, 16) / 100.0
img = torch.sin(img * 3.0)
for mode, pad in (("bilinear", "zeros"), ("nearest", "border")):
    out = warp_perspective(img, M, (10, 12), mode=mode, padding_mode=pad)
    print("warp", mode, pad, tuple(out.shape), round(out.sum().item(), 3), r(out[0, 1, 4, :6], 4))
print("identity warp exact-ish", float((warp_perspective(img, torch.eye(3)[None], (12, 16)) - img).abs().max()) < 1e-5)
print("meshgrid", r(create_meshgrid(2, 3)), r(create_meshgrid(2, 3, False)))

# depth to 3-D and back through the intrinsics
K = torch.tensor([[[20.0, 0.0, 7.5], [0.0, 22.0, 5.5], [0.0, 0.0, 1.0]]])
depth = 1.0 + torch.rand(1, 1, 6, 8)
xyz = depth_to_3d(depth, K)
print("depth_to_3d", tuple(xyz.shape), r(xyz[0, :, 2, 3]), r(depth_to_3d(depth, K, normalize_points=True)[0, :, 0, 0]))
uv = project_points(xyz.permute(0, 2, 3, 1), K[:, None, None])
print("reprojected == pixel grid", float((uv - create_meshgrid(6, 8, False)).abs().max()) < 1e-4)

# PinholeCamera project / unproject
intr = torch.eye(4)[None].clone()
intr[0, :3, :3] = K[0]
extr = torch.eye(4)[None].clone()
extr[0, :3, 3] = torch.tensor([0.1, -0.2, 0.5])
cam = PinholeCamera(intr, extr, torch.tensor([6]), torch.tensor([8]))
P3 = torch.tensor([[[0.2, 0.1, 2.0], [-0.3, 0.4, 3.0]]], requires_grad=True)
uvc = cam.project(P3)
print("camera project", r(uvc), "fx", r(cam.fx), "rt", tuple(cam.rt_matrix.shape))
uvc.sum().backward()
print("project grad", r(P3.grad))
d = (P3 + extr[0, :3, 3])[..., 2:].detach()
print("unproject", r(cam.unproject(uvc.detach(), d)))

# image registration: fit a homography with Adam through warp_perspective
target = warp_perspective(img, M, (12, 16))
params = nn.Parameter(torch.zeros(1, 8))
opt = torch.optim.Adam([params], lr=0.01)
for it in range(25):
    opt.zero_grad()
    Hp = torch.cat([params, torch.zeros(1, 1)], dim=1).view(1, 3, 3) + torch.eye(3)
    pred = warp_perspective(img, Hp, (12, 16))
    loss = F.mse_loss(pred, target)
    loss.backward()
    opt.step()
    if it % 8 == 0 or it == 24:
        print("reg it %2d loss %.6f" % (it, loss.item()))
print("params", r(params, 3))

for bad in (lambda: warp_perspective(img[0], M, (4, 4)), lambda: warp_perspective(img, M[0], (4, 4)),
            lambda: get_perspective_transform(src[:, :3], dst[:, :3]), lambda: convert_points_to_homogeneous(torch.ones(3))):
    try:
        bad()
    except ValueError as e:
        print("ValueError", e)
try:
    find_homography_dlt(pts1[:, :3], pts2[:, :3])
except AssertionError as e:
    print("AssertionError", e)
