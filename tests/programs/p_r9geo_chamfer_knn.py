"""Chamfer distance, shrunk from facebookresearch/pytorch3d (pytorch3d/loss/chamfer.py:
_validate_chamfer_reduction_inputs, _handle_pointcloud_input, _chamfer_distance_single_direction,
_apply_batch_reduction, chamfer_distance with lengths masks, normals, weights, norm 1/2,
point_reduction mean/sum/max/None and single_directional) on a pure-PyTorch knn_points
(the per-cloud cdist + topk of tests/test_knn.py's naive reference, instead of the CUDA kernel) and
pytorch3d/ops/knn.py's knn_gather. Then a point-cloud fit driven by the chamfer loss with Adam, as in
the deform_source_mesh_to_target_mesh tutorial. Tiny random clouds."""
# ruff: noqa: E501  (upstream's own line lengths, kept)
import importlib
import os
from collections import namedtuple
from typing import Union

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
F = importlib.import_module(LIB + ".nn.functional")

_KNN = namedtuple("KNN", "dists idx knn")


def knn_points(p1, p2, lengths1=None, lengths2=None, norm: int = 2, K: int = 1, return_nn: bool = False):
    """K nearest neighbours of each p1 point in p2 (squared distances for norm=2), per cloud."""
    if p1.shape[0] != p2.shape[0]:
        raise ValueError("pts1 and pts2 must have the same batch dimension.")
    if p1.shape[2] != p2.shape[2]:
        raise ValueError("pts1 and pts2 must have the same point dimension.")
    N, P1, D = p1.shape
    P2 = p2.shape[1]
    if lengths1 is None:
        lengths1 = torch.full((N,), P1, dtype=torch.int64, device=p1.device)
    if lengths2 is None:
        lengths2 = torch.full((N,), P2, dtype=torch.int64, device=p1.device)
    dists = p1.new_zeros((N, P1, K))
    idx = torch.zeros((N, P1, K), dtype=torch.int64, device=p1.device)
    for n in range(N):
        num1 = int(lengths1[n].item())
        num2 = int(lengths2[n].item())
        d = torch.cdist(p1[n, :num1], p2[n, :num2], p=float(norm))
        if norm == 2:
            d = d * d
        num = min(K, num2)
        dists_sorted, idx_sorted = d.topk(num, dim=1, largest=False)
        dists[n, :num1, :num] = dists_sorted
        idx[n, :num1, :num] = idx_sorted
    p2_nn = knn_gather(p2, idx, lengths2) if return_nn else None
    return _KNN(dists=dists, idx=idx, knn=p2_nn)


def knn_gather(x, idx, lengths=None):
    """Gather the features of the K nearest neighbours."""
    N, M, U = x.shape
    _N, L, K = idx.shape

    if N != _N:
        raise ValueError("x and idx must have same batch dimension.")

    if lengths is None:
        lengths = torch.full((x.shape[0],), M, dtype=torch.int64, device=x.device)

    idx_expanded = idx[:, :, :, None].expand(-1, -1, -1, U)
    # idx_expanded has shape [N, L, K, U]

    x_out = x[:, :, None].expand(-1, -1, K, -1).gather(1, idx_expanded)
    # p2_nn has shape [N, L, K, U]

    needs_mask = lengths.min() < K
    if needs_mask:
        # mask has shape [N, K], true where idx is irrelevant because
        # there is less number of points in p2 than K
        mask = lengths[:, None] <= torch.arange(K, device=x.device)[None]

        # expand mask to shape [N, L, K]
        mask = mask[:, None].expand(-1, L, -1)

        # expand mask to shape [N, L, K, U]
        mask = mask[:, :, :, None].expand(-1, -1, -1, U)

        x_out[mask] = 0.0

    return x_out


def _validate_chamfer_reduction_inputs(batch_reduction: Union[str, None], point_reduction: Union[str, None]) -> None:
    if batch_reduction is not None and batch_reduction not in ["mean", "sum"]:
        raise ValueError('batch_reduction must be one of ["mean", "sum"] or None')
    if point_reduction is not None and point_reduction not in ["mean", "sum", "max"]:
        raise ValueError('point_reduction must be one of ["mean", "sum", "max"] or None')
    if point_reduction is None and batch_reduction is not None:
        raise ValueError("Batch_reduction must be None if point_reduction is None")


def _handle_pointcloud_input(points, lengths, normals):
    if torch.is_tensor(points):
        if points.ndim != 3:
            raise ValueError("Expected points to be of shape (N, P, D)")
        X = points
        if lengths is not None:
            if lengths.ndim != 1 or lengths.shape[0] != X.shape[0]:
                raise ValueError("Expected lengths to be of shape (N,)")
            if lengths.max() > X.shape[1]:
                raise ValueError("A length value was too long")
        if lengths is None:
            lengths = torch.full((X.shape[0],), X.shape[1], dtype=torch.int64, device=points.device)
        if normals is not None and normals.ndim != 3:
            raise ValueError("Expected normals to be of shape (N, P, 3")
    else:
        raise ValueError("The input pointclouds should be either Pointclouds objects or torch.Tensor of shape (minibatch, num_points, 3).")
    return X, lengths, normals


def _chamfer_distance_single_direction(x, y, x_lengths, y_lengths, x_normals, y_normals, weights,
                                       point_reduction: Union[str, None], norm: int, abs_cosine: bool):
    return_normals = x_normals is not None and y_normals is not None

    N, P1, D = x.shape

    # Check if inputs are heterogeneous and create a lengths mask.
    is_x_heterogeneous = (x_lengths != P1).any()
    x_mask = torch.arange(P1, device=x.device)[None] >= x_lengths[:, None]  # shape [N, P1]
    if y.shape[0] != N or y.shape[2] != D:
        raise ValueError("y does not have the correct shape.")
    if weights is not None:
        if weights.size(0) != N:
            raise ValueError("weights must be of shape (N,).")
        if not (weights >= 0).all():
            raise ValueError("weights cannot be negative.")
        if weights.sum() == 0.0:
            weights = weights.view(N, 1)
            if point_reduction in ["mean", "sum"]:
                return ((x.sum((1, 2)) * weights) * 0.0, (x.sum((1, 2)) * weights) * 0.0)
            return ((x.sum(2) * weights) * 0.0, (x.sum(2) * weights) * 0.0)

    cham_norm_x = x.new_zeros(())

    x_nn = knn_points(x, y, lengths1=x_lengths, lengths2=y_lengths, norm=norm, K=1)
    cham_x = x_nn.dists[..., 0]  # (N, P1)

    if is_x_heterogeneous:
        cham_x[x_mask] = 0.0

    if weights is not None:
        cham_x *= weights.view(N, 1)

    if return_normals:
        # Gather the normals using the indices and keep only value for k=0
        x_normals_near = knn_gather(y_normals, x_nn.idx, y_lengths)[..., 0, :]

        cosine_sim = F.cosine_similarity(x_normals, x_normals_near, dim=2, eps=1e-6)
        # If abs_cosine, ignore orientation and take the absolute value of the cosine sim.
        cham_norm_x = 1 - (torch.abs(cosine_sim) if abs_cosine else cosine_sim)

        if is_x_heterogeneous:
            cham_norm_x[x_mask] = 0.0

        if weights is not None:
            cham_norm_x *= weights.view(N, 1)

    if point_reduction == "max":
        assert not return_normals
        cham_x = cham_x.max(1).values  # (N,)
    elif point_reduction is not None:
        # Apply point reduction
        cham_x = cham_x.sum(1)  # (N,)
        if return_normals:
            cham_norm_x = cham_norm_x.sum(1)  # (N,)
        if point_reduction == "mean":
            x_lengths_clamped = x_lengths.clamp(min=1)
            cham_x /= x_lengths_clamped
            if return_normals:
                cham_norm_x /= x_lengths_clamped

    cham_dist = cham_x
    cham_normals = cham_norm_x if return_normals else None
    return cham_dist, cham_normals


def _apply_batch_reduction(cham_x, cham_norm_x, weights, batch_reduction: Union[str, None]):
    if batch_reduction is None:
        return (cham_x, cham_norm_x)
    # batch_reduction == "sum"
    N = cham_x.shape[0]
    cham_x = cham_x.sum()
    if cham_norm_x is not None:
        cham_norm_x = cham_norm_x.sum()
    if batch_reduction == "mean":
        if weights is None:
            div = max(N, 1)
        elif weights.sum() == 0.0:
            div = 1
        else:
            div = weights.sum()
        cham_x /= div
        if cham_norm_x is not None:
            cham_norm_x /= div
    return (cham_x, cham_norm_x)


def chamfer_distance(x, y, x_lengths=None, y_lengths=None, x_normals=None, y_normals=None, weights=None,
                     batch_reduction: Union[str, None] = "mean", point_reduction: Union[str, None] = "mean",
                     norm: int = 2, single_directional: bool = False, abs_cosine: bool = True):
    """Chamfer distance between two pointclouds x and y."""
    _validate_chamfer_reduction_inputs(batch_reduction, point_reduction)

    if not ((norm == 1) or (norm == 2)):
        raise ValueError("Support for 1 or 2 norm.")

    x, x_lengths, x_normals = _handle_pointcloud_input(x, x_lengths, x_normals)
    y, y_lengths, y_normals = _handle_pointcloud_input(y, y_lengths, y_normals)

    cham_x, cham_norm_x = _chamfer_distance_single_direction(
        x, y, x_lengths, y_lengths, x_normals, y_normals, weights, point_reduction, norm, abs_cosine)
    if single_directional:
        loss = cham_x
        loss_normals = cham_norm_x
    else:
        cham_y, cham_norm_y = _chamfer_distance_single_direction(
            y, x, y_lengths, x_lengths, y_normals, x_normals, weights, point_reduction, norm, abs_cosine)
        if point_reduction == "max":
            loss = torch.maximum(cham_x, cham_y)
            loss_normals = None
        elif point_reduction is not None:
            loss = cham_x + cham_y
            if cham_norm_x is not None:
                loss_normals = cham_norm_x + cham_norm_y
            else:
                loss_normals = None
        else:
            loss = (cham_x, cham_y)
            if cham_norm_x is not None:
                loss_normals = (cham_norm_x, cham_norm_y)
            else:
                loss_normals = None
    return _apply_batch_reduction(loss, loss_normals, weights, batch_reduction)


def r(t, nd=5):
    if t is None:
        return None
    if isinstance(t, tuple):
        return tuple(r(u, nd) for u in t)
    return [round(float(v), nd) for v in t.detach().reshape(-1)]


torch.manual_seed(0)
N, P1, P2 = 3, 12, 9
x = torch.rand(N, P1, 3, requires_grad=True)
y = torch.rand(N, P2, 3)
xn = F.normalize(torch.randn(N, P1, 3), dim=-1)
yn = F.normalize(torch.randn(N, P2, 3), dim=-1)
xl = torch.tensor([12, 7, 10])
yl = torch.tensor([9, 9, 4])

nn_ = knn_points(x, y, xl, yl, K=3, return_nn=True)
print("knn idx[1,:3]", nn_.idx[1, :3].tolist(), "dists", r(nn_.dists[1, :3], 4), "knn", tuple(nn_.knn.shape))
nn5 = knn_points(x, y, xl, yl, K=5, return_nn=True)
print("knn K>len2 masked", r(nn5.knn[2, 0], 4), "dists", r(nn5.dists[2, 0], 4))
print("knn L1", nn_.idx[0, :4, 0].tolist(), r(knn_points(x, y, norm=1).dists[0, :4, 0], 4))

loss, loss_n = chamfer_distance(x, y)
print("chamfer", round(loss.item(), 6), loss_n, loss.grad_fn is not None)
loss.backward()
print("grad x[0,:3]", r(x.grad[0, :3], 6))
x.grad = None

loss, loss_n = chamfer_distance(x, y, x_lengths=xl, y_lengths=yl, x_normals=xn, y_normals=yn)
print("heterogeneous + normals", round(loss.item(), 6), round(loss_n.item(), 6))
(loss + 0.1 * loss_n).backward()
print("grad rows past length are zero", float(x.grad[1, 7:].abs().max()), "grad x[1,:2]", r(x.grad[1, :2], 6))
x.grad = None

for pr, br in (("sum", "sum"), ("mean", None), ("max", "mean"), (None, None)):
    out = chamfer_distance(x, y, x_lengths=xl, y_lengths=yl, batch_reduction=br, point_reduction=pr)
    print("reduction", pr, br, r(out[0], 5) if isinstance(out[0], tuple) else r(out[0].reshape(-1), 5))
print("norm=1", r(chamfer_distance(x, y, norm=1)[0]))
print("single_directional", r(chamfer_distance(x, y, single_directional=True)[0]))
print("signed cosine", r(chamfer_distance(x, y, x_normals=xn, y_normals=yn, abs_cosine=False)[1]))
w = torch.tensor([0.5, 0.0, 2.0])
lw, lwn = chamfer_distance(x, y, weights=w, x_normals=xn, y_normals=yn)
print("weighted", round(lw.item(), 6), round(lwn.item(), 6))
print("zero weights", r(chamfer_distance(x, y, weights=torch.zeros(3))[0]))

# float64 and a gradcheck of the loss w.r.t. both clouds
xd = torch.rand(2, 6, 3, dtype=torch.float64, requires_grad=True)
yd = torch.rand(2, 5, 3, dtype=torch.float64, requires_grad=True)
ld, _ = chamfer_distance(xd, yd)
ld.backward()
print("float64 chamfer", round(ld.item(), 10), "grad y", r(yd.grad[0], 8))
print("gradcheck", torch.autograd.gradcheck(lambda a, b: chamfer_distance(a, b)[0], (xd, yd)))

# fit a cloud to a target with Adam (deform tutorial's chamfer term)
torch.manual_seed(1)
target = torch.randn(1, 20, 3)
target = target / target.norm(dim=-1, keepdim=True)  # points on a unit sphere
src = (torch.rand(1, 20, 3) - 0.5).requires_grad_()
opt = torch.optim.Adam([src], lr=0.05)
for it in range(30):
    opt.zero_grad()
    loss_chamfer, _ = chamfer_distance(src, target)
    loss_chamfer.backward()
    opt.step()
    if it % 10 == 0 or it == 29:
        print("it %2d chamfer %.5f" % (it, loss_chamfer.item()))
print("mean radius", round(src.detach().norm(dim=-1).mean().item(), 4))

for kwargs in (dict(batch_reduction="max"), dict(point_reduction="min"), dict(point_reduction=None), dict(norm=3)):
    try:
        chamfer_distance(x, y, **kwargs)
    except ValueError as e:
        print("ValueError", e)
for args in ((x[0], y), (x, y[:2]), (x, y, torch.tensor([13, 1, 1]))):
    try:
        chamfer_distance(*args)
    except ValueError as e:
        print("ValueError", e)
try:
    chamfer_distance(x, y, x_normals=xn, y_normals=yn, point_reduction="max")
except AssertionError:
    print("AssertionError max with normals")
