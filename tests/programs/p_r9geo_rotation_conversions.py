"""Rotation conversions, shrunk from facebookresearch/pytorch3d (pytorch3d/transforms/
rotation_conversions.py): quaternion_to_matrix, _copysign, _sqrt_positive_part, matrix_to_quaternion
(the one_hot/argmax candidate pick), _axis_angle_rotation, euler_angles_to_matrix,
matrix_to_euler_angles with _angle_from_tan/_index_from_letter, random_quaternions/random_rotations,
standardize_quaternion, quaternion_raw_multiply/multiply/invert/apply, axis_angle_to_quaternion and
quaternion_to_axis_angle with the small-angle Taylor branch, rotation_6d_to_matrix and
matrix_to_rotation_6d. Round trips in float32 and float64, and gradients through them."""
# ruff: noqa: E501  (upstream's own line lengths, kept)
import importlib
import os
from typing import Optional

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
F = importlib.import_module(LIB + ".nn.functional")


def quaternion_to_matrix(quaternions):
    """Convert rotations given as quaternions (real part first) to rotation matrices."""
    r, i, j, k = torch.unbind(quaternions, -1)
    two_s = 2.0 / (quaternions * quaternions).sum(-1)

    o = torch.stack(
        (
            1 - two_s * (j * j + k * k),
            two_s * (i * j - k * r),
            two_s * (i * k + j * r),
            two_s * (i * j + k * r),
            1 - two_s * (i * i + k * k),
            two_s * (j * k - i * r),
            two_s * (i * k - j * r),
            two_s * (j * k + i * r),
            1 - two_s * (i * i + j * j),
        ),
        -1,
    )
    return o.reshape(quaternions.shape[:-1] + (3, 3))


def _copysign(a, b):
    """Return a tensor where each element has the absolute value taken from a and the sign from b."""
    signs_differ = (a < 0) != (b < 0)
    return torch.where(signs_differ, -a, a)


def _sqrt_positive_part(x):
    """Returns torch.sqrt(torch.max(0, x)) but with a zero subgradient where x is 0."""
    ret = torch.zeros_like(x)
    positive_mask = x > 0
    if torch.is_grad_enabled():
        ret[positive_mask] = torch.sqrt(x[positive_mask])
    else:
        ret = torch.where(positive_mask, torch.sqrt(x), ret)
    return ret


def matrix_to_quaternion(matrix):
    """Convert rotations given as rotation matrices to quaternions."""
    if matrix.size(-1) != 3 or matrix.size(-2) != 3:
        raise ValueError(f"Invalid rotation matrix shape {matrix.shape}.")

    batch_dim = matrix.shape[:-2]
    m00, m01, m02, m10, m11, m12, m20, m21, m22 = torch.unbind(
        matrix.reshape(batch_dim + (9,)), dim=-1
    )

    q_abs = _sqrt_positive_part(
        torch.stack(
            [
                1.0 + m00 + m11 + m22,
                1.0 + m00 - m11 - m22,
                1.0 - m00 + m11 - m22,
                1.0 - m00 - m11 + m22,
            ],
            dim=-1,
        )
    )

    # we produce the desired quaternion multiplied by each of r, i, j, k
    quat_by_rijk = torch.stack(
        [
            torch.stack([q_abs[..., 0] ** 2, m21 - m12, m02 - m20, m10 - m01], dim=-1),
            torch.stack([m21 - m12, q_abs[..., 1] ** 2, m10 + m01, m02 + m20], dim=-1),
            torch.stack([m02 - m20, m10 + m01, q_abs[..., 2] ** 2, m12 + m21], dim=-1),
            torch.stack([m10 - m01, m20 + m02, m21 + m12, q_abs[..., 3] ** 2], dim=-1),
        ],
        dim=-2,
    )

    # We floor here at 0.1 but the exact level is not important; if q_abs is small,
    # the candidate won't be picked.
    flr = torch.tensor(0.1).to(dtype=q_abs.dtype, device=q_abs.device)
    quat_candidates = quat_by_rijk / (2.0 * q_abs[..., None].max(flr))

    # if not for numerical problems, quat_candidates[i] should be same (up to a sign),
    # forall i; we pick the best-conditioned one (with the largest denominator)
    out = quat_candidates[
        F.one_hot(q_abs.argmax(dim=-1), num_classes=4) > 0.5, :
    ].reshape(batch_dim + (4,))
    return standardize_quaternion(out)


def _axis_angle_rotation(axis: str, angle):
    """Return the rotation matrices for one of the rotations about an axis of which Euler angles describe."""
    cos = torch.cos(angle)
    sin = torch.sin(angle)
    one = torch.ones_like(angle)
    zero = torch.zeros_like(angle)

    if axis == "X":
        R_flat = (one, zero, zero, zero, cos, -sin, zero, sin, cos)
    elif axis == "Y":
        R_flat = (cos, zero, sin, zero, one, zero, -sin, zero, cos)
    elif axis == "Z":
        R_flat = (cos, -sin, zero, sin, cos, zero, zero, zero, one)
    else:
        raise ValueError("letter must be either X, Y or Z.")

    return torch.stack(R_flat, -1).reshape(angle.shape + (3, 3))


def euler_angles_to_matrix(euler_angles, convention: str):
    """Convert rotations given as Euler angles in radians to rotation matrices."""
    if euler_angles.dim() == 0 or euler_angles.shape[-1] != 3:
        raise ValueError("Invalid input euler angles.")
    if len(convention) != 3:
        raise ValueError("Convention must have 3 letters.")
    if convention[1] in (convention[0], convention[2]):
        raise ValueError(f"Invalid convention {convention}.")
    for letter in convention:
        if letter not in ("X", "Y", "Z"):
            raise ValueError(f"Invalid letter {letter} in convention string.")
    matrices = [
        _axis_angle_rotation(c, e)
        for c, e in zip(convention, torch.unbind(euler_angles, -1))
    ]
    return torch.matmul(torch.matmul(matrices[0], matrices[1]), matrices[2])


def _angle_from_tan(axis: str, other_axis: str, data, horizontal: bool, tait_bryan: bool):
    """Extract the first or third Euler angle from the two members of the matrix which are positive constant times its sine and cosine."""
    i1, i2 = {"X": (2, 1), "Y": (0, 2), "Z": (1, 0)}[axis]
    if horizontal:
        i2, i1 = i1, i2
    even = (axis + other_axis) in ["XY", "YZ", "ZX"]
    if horizontal == even:
        return torch.atan2(data[..., i1], data[..., i2])
    if tait_bryan:
        return torch.atan2(-data[..., i2], data[..., i1])
    return torch.atan2(data[..., i2], -data[..., i1])


def _index_from_letter(letter: str) -> int:
    if letter == "X":
        return 0
    if letter == "Y":
        return 1
    if letter == "Z":
        return 2
    raise ValueError("letter must be either X, Y or Z.")


def matrix_to_euler_angles(matrix, convention: str):
    """Convert rotations given as rotation matrices to Euler angles in radians."""
    if len(convention) != 3:
        raise ValueError("Convention must have 3 letters.")
    if convention[1] in (convention[0], convention[2]):
        raise ValueError(f"Invalid convention {convention}.")
    for letter in convention:
        if letter not in ("X", "Y", "Z"):
            raise ValueError(f"Invalid letter {letter} in convention string.")
    if matrix.size(-1) != 3 or matrix.size(-2) != 3:
        raise ValueError(f"Invalid rotation matrix shape {matrix.shape}.")
    i0 = _index_from_letter(convention[0])
    i2 = _index_from_letter(convention[2])
    tait_bryan = i0 != i2
    if tait_bryan:
        central_angle = torch.asin(
            matrix[..., i0, i2] * (-1.0 if i0 - i2 in [-1, 2] else 1.0)
        )
    else:
        central_angle = torch.acos(matrix[..., i0, i0])

    o = (
        _angle_from_tan(
            convention[0], convention[1], matrix[..., i2], False, tait_bryan
        ),
        central_angle,
        _angle_from_tan(
            convention[2], convention[1], matrix[..., i0, :], True, tait_bryan
        ),
    )
    return torch.stack(o, -1)


def random_quaternions(n: int, dtype: Optional[torch.dtype] = None, device=None):
    """Generate random quaternions representing rotations, i.e. versors with nonnegative real part."""
    if isinstance(device, str):
        device = torch.device(device)
    o = torch.randn((n, 4), dtype=dtype, device=device)
    s = (o * o).sum(1)
    o = o / _copysign(torch.sqrt(s), o[:, 0])[:, None]
    return o


def random_rotations(n: int, dtype: Optional[torch.dtype] = None, device=None):
    """Generate random rotations as 3x3 rotation matrices."""
    quaternions = random_quaternions(n, dtype=dtype, device=device)
    return quaternion_to_matrix(quaternions)


def standardize_quaternion(quaternions):
    """Convert a unit quaternion to a standard form: one in which the real part is non negative."""
    return torch.where(quaternions[..., 0:1] < 0, -quaternions, quaternions)


def quaternion_raw_multiply(a, b):
    """Multiply two quaternions. Usual torch rules for broadcasting apply."""
    aw, ax, ay, az = torch.unbind(a, -1)
    bw, bx, by, bz = torch.unbind(b, -1)
    ow = aw * bw - ax * bx - ay * by - az * bz
    ox = aw * bx + ax * bw + ay * bz - az * by
    oy = aw * by - ax * bz + ay * bw + az * bx
    oz = aw * bz + ax * by - ay * bx + az * bw
    return torch.stack((ow, ox, oy, oz), -1)


def quaternion_multiply(a, b):
    """Multiply two quaternions representing rotations, returning the quaternion representing their composition."""
    ab = quaternion_raw_multiply(a, b)
    return standardize_quaternion(ab)


def quaternion_invert(quaternion):
    """Given a quaternion representing rotation, get the quaternion representing its inverse."""
    scaling = torch.tensor([1, -1, -1, -1], device=quaternion.device)
    return quaternion * scaling


def quaternion_apply(quaternion, point):
    """Apply the rotation given by a quaternion to a 3D point."""
    if point.size(-1) != 3:
        raise ValueError(f"Points are not in 3D, {point.shape}.")
    real_parts = point.new_zeros(point.shape[:-1] + (1,))
    point_as_quaternion = torch.cat((real_parts, point), -1)
    out = quaternion_raw_multiply(
        quaternion_raw_multiply(quaternion, point_as_quaternion),
        quaternion_invert(quaternion),
    )
    return out[..., 1:]


def axis_angle_to_quaternion(axis_angle):
    """Convert rotations given as axis/angle to quaternions."""
    angles = torch.norm(axis_angle, p=2, dim=-1, keepdim=True)
    sin_half_angles_over_angles = 0.5 * torch.sinc(angles * 0.5 / torch.pi)
    return torch.cat(
        [torch.cos(angles * 0.5), axis_angle * sin_half_angles_over_angles], dim=-1
    )


def axis_angle_to_quaternion_taylor(axis_angle):
    """The older pytorch3d version: an explicit small-angle Taylor branch instead of sinc."""
    angles = torch.norm(axis_angle, p=2, dim=-1, keepdim=True)
    half_angles = angles * 0.5
    eps = 1e-6
    small_angles = angles.abs() < eps
    sin_half_angles_over_angles = torch.empty_like(angles)
    sin_half_angles_over_angles[~small_angles] = (
        torch.sin(half_angles[~small_angles]) / angles[~small_angles]
    )
    # for x small, sin(x/2) is about x/2 - (x/2)^3/6
    # so sin(x/2)/x is about 1/2 - (x*x)/48
    sin_half_angles_over_angles[small_angles] = (
        0.5 - (angles[small_angles] * angles[small_angles]) / 48
    )
    quaternions = torch.cat(
        [torch.cos(half_angles), axis_angle * sin_half_angles_over_angles], dim=-1
    )
    return quaternions


def quaternion_to_axis_angle(quaternions):
    """Convert rotations given as quaternions to axis/angle."""
    norms = torch.norm(quaternions[..., 1:], p=2, dim=-1, keepdim=True)
    half_angles = torch.atan2(norms, quaternions[..., :1])
    sin_half_angles_over_angles = 0.5 * torch.sinc(half_angles / torch.pi)
    # angles/2 are between [-pi/2, pi/2], thus sin_half_angles_over_angles
    # can't be zero
    return quaternions[..., 1:] / sin_half_angles_over_angles


def quaternion_to_axis_angle_taylor(quaternions):
    """The older pytorch3d version with the explicit small-angle branch."""
    norms = torch.norm(quaternions[..., 1:], p=2, dim=-1, keepdim=True)
    half_angles = torch.atan2(norms, quaternions[..., :1])
    angles = 2 * half_angles
    eps = 1e-6
    small_angles = angles.abs() < eps
    sin_half_angles_over_angles = torch.empty_like(angles)
    sin_half_angles_over_angles[~small_angles] = (
        torch.sin(half_angles[~small_angles]) / angles[~small_angles]
    )
    sin_half_angles_over_angles[small_angles] = (
        0.5 - (angles[small_angles] * angles[small_angles]) / 48
    )
    return quaternions[..., 1:] / sin_half_angles_over_angles


def axis_angle_to_matrix(axis_angle):
    return quaternion_to_matrix(axis_angle_to_quaternion(axis_angle))


def matrix_to_axis_angle(matrix):
    return quaternion_to_axis_angle(matrix_to_quaternion(matrix))


def rotation_6d_to_matrix(d6):
    """Converts 6D rotation representation by Zhou et al. to rotation matrix using Gram--Schmidt orthogonalization."""
    a1, a2 = d6[..., :3], d6[..., 3:]
    b1 = F.normalize(a1, dim=-1)
    b2 = a2 - (b1 * a2).sum(-1, keepdim=True) * b1
    b2 = F.normalize(b2, dim=-1)
    b3 = torch.cross(b1, b2, dim=-1)
    return torch.stack((b1, b2, b3), dim=-2)


def matrix_to_rotation_6d(matrix):
    """Converts rotation matrices to 6D rotation representation by Zhou et al. by dropping the last row."""
    batch_dim = matrix.size()[:-2]
    return matrix[..., :2, :].clone().reshape(batch_dim + (6,))


def show(name, t, nd=5):
    print(name, tuple(t.shape), t.dtype, [round(float(v), nd) for v in t.detach().reshape(-1)])


def maxerr(a, b):
    return float((a - b).abs().max())


torch.manual_seed(0)
for dtype in (torch.float32, torch.float64):
    print("== dtype", dtype)
    q = random_quaternions(5, dtype=dtype)
    show("q", q)
    R = quaternion_to_matrix(q)
    show("R[0]", R[0])
    eye = torch.eye(3, dtype=dtype).expand(5, 3, 3)
    print("orthonormal", maxerr(R @ R.transpose(-1, -2), eye) < 1e-5, "det", [round(float(d), 5) for d in torch.det(R)])
    q2 = matrix_to_quaternion(R)
    print("quat round trip ok", maxerr(q2, q) < 1e-5)
    show("q2", q2)

    # special matrices: identity and 180 degree turns pick different candidates
    special = torch.stack([
        torch.eye(3, dtype=dtype),
        torch.diag(torch.tensor([1.0, -1.0, -1.0], dtype=dtype)),
        torch.diag(torch.tensor([-1.0, 1.0, -1.0], dtype=dtype)),
        torch.diag(torch.tensor([-1.0, -1.0, 1.0], dtype=dtype)),
    ])
    show("special q", matrix_to_quaternion(special))

    for conv in ("XYZ", "ZYX", "ZXZ", "YXY"):
        ang = matrix_to_euler_angles(R, conv)
        R_back = euler_angles_to_matrix(ang, conv)
        print(conv, "euler", [round(float(v), 4) for v in ang[0]], "back ok", maxerr(R_back, R) < 1e-5)

    aa = torch.randn(4, 3, dtype=dtype)
    aa[1] = aa[1] * 1e-8  # tiny angle: Taylor branch
    aa[2] = 0.0
    qa = axis_angle_to_quaternion(aa)
    qt = axis_angle_to_quaternion_taylor(aa)
    show("aa->q", qa)
    print("sinc vs taylor", maxerr(qa, qt) < 1e-6)
    back = quaternion_to_axis_angle(qa)
    back_t = quaternion_to_axis_angle_taylor(qa)
    print("axis-angle round trip", maxerr(back, aa) < 1e-5, maxerr(back_t, aa) < 1e-5)
    show("tiny back", back[1], nd=12)
    Ra = axis_angle_to_matrix(aa)
    print("matrix->axis-angle", maxerr(matrix_to_axis_angle(Ra), aa) < 1e-4)

    pts = torch.randn(5, 3, dtype=dtype)
    p1 = quaternion_apply(q, pts)
    p2 = (R @ pts[..., None])[..., 0]
    show("rotated pts", p1)
    print("apply == matmul", maxerr(p1, p2) < 1e-5)
    qm = quaternion_multiply(q[:-1], q[1:])
    print("multiply == matmul", maxerr(quaternion_to_matrix(qm), R[:-1] @ R[1:]) < 1e-5)
    print("invert", maxerr(quaternion_multiply(q, quaternion_invert(q)), torch.tensor([1.0, 0, 0, 0], dtype=dtype)) < 1e-6)

    d6 = matrix_to_rotation_6d(R)
    show("6d", d6[:2])
    print("6d round trip", maxerr(rotation_6d_to_matrix(d6), R) < 1e-5)
    rr = random_rotations(2, dtype=dtype)
    show("random_rotations", rr)

# gradients
torch.manual_seed(1)
d6 = torch.randn(3, 6, dtype=torch.float64, requires_grad=True)
target = random_rotations(3, dtype=torch.float64)
Rp = rotation_6d_to_matrix(d6)
loss = ((Rp - target) ** 2).sum()
loss.backward()
print("6d loss", round(loss.item(), 8))
show("6d grad", d6.grad, nd=7)

ang = torch.tensor([[0.3, -0.2, 1.1], [2.0, 0.5, -0.7]], requires_grad=True)
Re = euler_angles_to_matrix(ang, "XYZ")
qe = matrix_to_quaternion(Re)
qe.sum().backward()
print("euler->quat grad_fn", type(qe.grad_fn).__name__)
show("euler grad", ang.grad, nd=4)

aa = torch.tensor([[0.4, -0.1, 0.25], [1e-9, 0.0, 0.0]], dtype=torch.float64, requires_grad=True)
qa = axis_angle_to_quaternion_taylor(aa)
qa.pow(2).mul(torch.arange(4.0, dtype=torch.float64)).sum().backward()
show("taylor grad", aa.grad, nd=8)

Rm = random_rotations(4, dtype=torch.float64).requires_grad_()
qq = matrix_to_quaternion(Rm)
(qq * torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)).sum().backward()
show("m2q grad", Rm.grad[0], nd=6)

with torch.no_grad():
    show("no_grad m2q", matrix_to_quaternion(Rm[:2]))

try:
    matrix_to_quaternion(torch.zeros(2, 3, 4))
except ValueError as e:
    print("ValueError", e)
try:
    euler_angles_to_matrix(torch.zeros(2, 3), "XXY")
except ValueError as e:
    print("ValueError", e)
