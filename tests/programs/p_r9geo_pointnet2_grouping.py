"""PointNet++ point-cloud ops, shrunk from yanx27/Pointnet_Pointnet2_pytorch
(models/pointnet2_utils.py: square_distance, index_points, farthest_point_sample, query_ball_point,
sample_and_group, sample_and_group_all, PointNetSetAbstraction, PointNetFeaturePropagation; and
models/pointnet2_cls_ssg.py's get_model/get_loss) with a few Adam steps on synthetic clouds.
Widths and point counts are cut down (64 points, 16/4 centroids, channels 8-32)."""
# ruff: noqa: E501  (upstream's own line lengths, kept)
# compare: rtol=2e-4 atol=2e-5
# (train-mode BatchNorm over a handful of grouped points and Adam amplify float32 rounding in the losses;
#  with float64 as the default dtype torch and ember print identical losses)
import importlib
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")


def square_distance(src, dst):
    """Calculate Euclid distance between each two points."""
    B, N, _ = src.shape
    _, M, _ = dst.shape
    dist = -2 * torch.matmul(src, dst.permute(0, 2, 1))
    dist += torch.sum(src ** 2, -1).view(B, N, 1)
    dist += torch.sum(dst ** 2, -1).view(B, 1, M)
    return dist


def index_points(points, idx):
    """points [B, N, C], idx [B, S] or [B, S, K] -> indexed points."""
    device = points.device
    B = points.shape[0]
    view_shape = list(idx.shape)
    view_shape[1:] = [1] * (len(view_shape) - 1)
    repeat_shape = list(idx.shape)
    repeat_shape[0] = 1
    batch_indices = torch.arange(B, dtype=torch.long).to(device).view(view_shape).repeat(repeat_shape)
    new_points = points[batch_indices, idx, :]
    return new_points


def farthest_point_sample(xyz, npoint):
    """Iterative farthest point sampling from a random start."""
    device = xyz.device
    B, N, C = xyz.shape
    centroids = torch.zeros(B, npoint, dtype=torch.long).to(device)
    distance = torch.ones(B, N).to(device) * 1e10
    farthest = torch.randint(0, N, (B,), dtype=torch.long).to(device)
    batch_indices = torch.arange(B, dtype=torch.long).to(device)
    for i in range(npoint):
        centroids[:, i] = farthest
        centroid = xyz[batch_indices, farthest, :].view(B, 1, 3)
        dist = torch.sum((xyz - centroid) ** 2, -1)
        mask = dist < distance
        distance[mask] = dist[mask]
        farthest = torch.max(distance, -1)[1]
    return centroids


def query_ball_point(radius, nsample, xyz, new_xyz):
    """Up to nsample neighbours within radius of each query, padded with the first one."""
    device = xyz.device
    B, N, C = xyz.shape
    _, S, _ = new_xyz.shape
    group_idx = torch.arange(N, dtype=torch.long).to(device).view(1, 1, N).repeat([B, S, 1])
    sqrdists = square_distance(new_xyz, xyz)
    group_idx[sqrdists > radius ** 2] = N
    group_idx = group_idx.sort(dim=-1)[0][:, :, :nsample]
    group_first = group_idx[:, :, 0].view(B, S, 1).repeat([1, 1, nsample])
    mask = group_idx == N
    group_idx[mask] = group_first[mask]
    return group_idx


def sample_and_group(npoint, radius, nsample, xyz, points, returnfps=False):
    B, N, C = xyz.shape
    S = npoint
    fps_idx = farthest_point_sample(xyz, npoint)  # [B, npoint, C]
    new_xyz = index_points(xyz, fps_idx)
    idx = query_ball_point(radius, nsample, xyz, new_xyz)
    grouped_xyz = index_points(xyz, idx)  # [B, npoint, nsample, C]
    grouped_xyz_norm = grouped_xyz - new_xyz.view(B, S, 1, C)

    if points is not None:
        grouped_points = index_points(points, idx)
        new_points = torch.cat([grouped_xyz_norm, grouped_points], dim=-1)  # [B, npoint, nsample, C+D]
    else:
        new_points = grouped_xyz_norm
    if returnfps:
        return new_xyz, new_points, grouped_xyz, fps_idx
    else:
        return new_xyz, new_points


def sample_and_group_all(xyz, points):
    device = xyz.device
    B, N, C = xyz.shape
    new_xyz = torch.zeros(B, 1, C).to(device)
    grouped_xyz = xyz.view(B, 1, N, C)
    if points is not None:
        new_points = torch.cat([grouped_xyz, points.view(B, 1, N, -1)], dim=-1)
    else:
        new_points = grouped_xyz
    return new_xyz, new_points


class PointNetSetAbstraction(nn.Module):
    def __init__(self, npoint, radius, nsample, in_channel, mlp, group_all):
        super(PointNetSetAbstraction, self).__init__()
        self.npoint = npoint
        self.radius = radius
        self.nsample = nsample
        self.mlp_convs = nn.ModuleList()
        self.mlp_bns = nn.ModuleList()
        last_channel = in_channel
        for out_channel in mlp:
            self.mlp_convs.append(nn.Conv2d(last_channel, out_channel, 1))
            self.mlp_bns.append(nn.BatchNorm2d(out_channel))
            last_channel = out_channel
        self.group_all = group_all

    def forward(self, xyz, points):
        xyz = xyz.permute(0, 2, 1)
        if points is not None:
            points = points.permute(0, 2, 1)

        if self.group_all:
            new_xyz, new_points = sample_and_group_all(xyz, points)
        else:
            new_xyz, new_points = sample_and_group(self.npoint, self.radius, self.nsample, xyz, points)
        # new_xyz: sampled points position data, [B, npoint, C]
        # new_points: sampled points data, [B, npoint, nsample, C+D]
        new_points = new_points.permute(0, 3, 2, 1)  # [B, C+D, nsample,npoint]
        for i, conv in enumerate(self.mlp_convs):
            bn = self.mlp_bns[i]
            new_points = F.relu(bn(conv(new_points)))

        new_points = torch.max(new_points, 2)[0]
        new_xyz = new_xyz.permute(0, 2, 1)
        return new_xyz, new_points


class PointNetFeaturePropagation(nn.Module):
    def __init__(self, in_channel, mlp):
        super(PointNetFeaturePropagation, self).__init__()
        self.mlp_convs = nn.ModuleList()
        self.mlp_bns = nn.ModuleList()
        last_channel = in_channel
        for out_channel in mlp:
            self.mlp_convs.append(nn.Conv1d(last_channel, out_channel, 1))
            self.mlp_bns.append(nn.BatchNorm1d(out_channel))
            last_channel = out_channel

    def forward(self, xyz1, xyz2, points1, points2):
        xyz1 = xyz1.permute(0, 2, 1)
        xyz2 = xyz2.permute(0, 2, 1)

        points2 = points2.permute(0, 2, 1)
        B, N, C = xyz1.shape
        _, S, _ = xyz2.shape

        if S == 1:
            interpolated_points = points2.repeat(1, N, 1)
        else:
            dists = square_distance(xyz1, xyz2)
            dists, idx = dists.sort(dim=-1)
            dists, idx = dists[:, :, :3], idx[:, :, :3]  # [B, N, 3]

            dist_recip = 1.0 / (dists + 1e-8)
            norm = torch.sum(dist_recip, dim=2, keepdim=True)
            weight = dist_recip / norm
            interpolated_points = torch.sum(index_points(points2, idx) * weight.view(B, N, 3, 1), dim=2)

        if points1 is not None:
            points1 = points1.permute(0, 2, 1)
            new_points = torch.cat([points1, interpolated_points], dim=-1)
        else:
            new_points = interpolated_points

        new_points = new_points.permute(0, 2, 1)
        for i, conv in enumerate(self.mlp_convs):
            bn = self.mlp_bns[i]
            new_points = F.relu(bn(conv(new_points)))
        return new_points


class get_model(nn.Module):
    def __init__(self, num_class, normal_channel=False):
        super(get_model, self).__init__()
        in_channel = 6 if normal_channel else 3
        self.normal_channel = normal_channel
        self.sa1 = PointNetSetAbstraction(npoint=16, radius=0.4, nsample=8, in_channel=in_channel, mlp=[8, 8, 16], group_all=False)
        self.sa2 = PointNetSetAbstraction(npoint=4, radius=0.8, nsample=8, in_channel=16 + 3, mlp=[16, 16, 32], group_all=False)
        self.sa3 = PointNetSetAbstraction(npoint=None, radius=None, nsample=None, in_channel=32 + 3, mlp=[32, 32], group_all=True)
        self.fc1 = nn.Linear(32, 16)
        self.bn1 = nn.BatchNorm1d(16)
        self.drop1 = nn.Dropout(0.4)
        self.fc3 = nn.Linear(16, num_class)

    def forward(self, xyz):
        B, _, _ = xyz.shape
        if self.normal_channel:
            norm = xyz[:, 3:, :]
            xyz = xyz[:, :3, :]
        else:
            norm = None
        l1_xyz, l1_points = self.sa1(xyz, norm)
        l2_xyz, l2_points = self.sa2(l1_xyz, l1_points)
        l3_xyz, l3_points = self.sa3(l2_xyz, l2_points)
        x = l3_points.view(B, 32)
        x = self.drop1(F.relu(self.bn1(self.fc1(x))))
        x = self.fc3(x)
        x = F.log_softmax(x, -1)
        return x, l3_points


class get_loss(nn.Module):
    def __init__(self):
        super(get_loss, self).__init__()

    def forward(self, pred, target, trans_feat):
        total_loss = F.nll_loss(pred, target)
        return total_loss


def r(t, nd=4):
    return [round(float(v), nd) for v in t.detach().reshape(-1)]


torch.manual_seed(0)
B, N = 4, 64
xyz = torch.rand(B, N, 3) * 2 - 1
print("square_distance == cdist^2", float((square_distance(xyz, xyz[:, :5]) - torch.cdist(xyz, xyz[:, :5]) ** 2).abs().max()) < 1e-5)
fps = farthest_point_sample(xyz, 8)
print("fps", fps.tolist())
centers = index_points(xyz, fps)
print("centers[0]", r(centers[0, :3]))
gi = query_ball_point(0.5, 6, xyz, centers)
print("ball query", tuple(gi.shape), gi[0, :3].tolist())
print("grouped within radius", bool(((index_points(xyz, gi) - centers[:, :, None]).norm(dim=-1) <= 0.5 + 1e-6).all()))
feats = torch.randn(B, N, 5)
new_xyz, new_points, grouped_xyz, fps_idx = sample_and_group(8, 0.5, 6, xyz, feats, returnfps=True)
print("sample_and_group", tuple(new_xyz.shape), tuple(new_points.shape), tuple(grouped_xyz.shape), r(new_points[1, 2, :2], 4))
print("group_all", [tuple(t.shape) for t in sample_and_group_all(xyz, feats)])

# gradient of grouped features through index_points (scatter-add into repeated indices)
f = feats.clone().requires_grad_()
index_points(f, gi).pow(2).sum().backward()
print("index_points grad nonzero rows", int((f.grad.abs().sum(-1) > 0).sum()), "grad[0,:2]", r(f.grad[0, :2]))

fp = PointNetFeaturePropagation(in_channel=5 + 4, mlp=[8, 6])
out = fp(xyz.permute(0, 2, 1), centers.permute(0, 2, 1), feats.permute(0, 2, 1), torch.randn(B, 4, 8))
print("feature propagation", tuple(out.shape), round(out.sum().item(), 3))


# synthetic classification: spheres (0) vs. cubes' surfaces (1)
def make_cloud(label, n):
    p = torch.randn(n, 3)
    if label == 0:
        p = p / p.norm(dim=1, keepdim=True)
    else:
        p = p / p.abs().max(dim=1, keepdim=True)[0] * 0.8
    return p


labels = torch.tensor([0, 1, 0, 1, 1, 0])
clouds = torch.stack([make_cloud(int(lab), N) for lab in labels]).permute(0, 2, 1)  # [B, 3, N]
model = get_model(2)
criterion = get_loss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-08, weight_decay=1e-4)
for epoch in range(4):
    model.train()
    optimizer.zero_grad()
    pred, trans_feat = model(clouds)
    loss = criterion(pred, labels.long(), trans_feat)
    loss.backward()
    optimizer.step()
    pred_choice = pred.data.max(1)[1]
    correct = pred_choice.eq(labels.long().data).cpu().sum()
    print("epoch %d loss %.4f acc %.3f" % (epoch, loss.item(), correct.item() / float(B + 2)))
model.eval()
with torch.no_grad():
    pred, l3 = model(clouds)
print("eval", tuple(pred.shape), tuple(l3.shape), pred.argmax(1).tolist())
