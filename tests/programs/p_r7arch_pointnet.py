"""PointNet, shrunk from fxia22/pointnet.pytorch: pointnet/model.py (STN3d, STNkd, PointNetfeat,
PointNetCls, PointNetDenseCls, feature_transform_regularizer) with utils/train_classification.py's
loop (Adam + StepLR, nll_loss + 0.001 * regularizer, pred.data.max(1)[1] accuracy) and
pointnet/dataset.py's augmentation (normalize to the unit sphere, random y-rotation, jitter).
Widths 64/128/1024/512/256 become 8/16/32/16/8; synthetic point clouds (spheres vs. cubes)."""
# ruff: noqa: E501, E741, F841  (upstream's own line lengths and names, kept)
# compare: rtol=2e-4 atol=2e-5
# (train-mode BatchNorm over 8 clouds amplifies float32 rounding; in float64 both agree to 1e-14)
import importlib
import os

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
Variable = importlib.import_module(LIB + ".autograd").Variable
optim = torch.optim

C1, C2, C3, H1, H2 = 8, 16, 32, 16, 8


class STN3d(nn.Module):
    def __init__(self):
        super(STN3d, self).__init__()
        self.conv1 = torch.nn.Conv1d(3, C1, 1)
        self.conv2 = torch.nn.Conv1d(C1, C2, 1)
        self.conv3 = torch.nn.Conv1d(C2, C3, 1)
        self.fc1 = nn.Linear(C3, H1)
        self.fc2 = nn.Linear(H1, H2)
        self.fc3 = nn.Linear(H2, 9)
        self.relu = nn.ReLU()

        self.bn1 = nn.BatchNorm1d(C1)
        self.bn2 = nn.BatchNorm1d(C2)
        self.bn3 = nn.BatchNorm1d(C3)
        self.bn4 = nn.BatchNorm1d(H1)
        self.bn5 = nn.BatchNorm1d(H2)

    def forward(self, x):
        batchsize = x.size()[0]
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        x = F.relu(self.bn3(self.conv3(x)))
        x = torch.max(x, 2, keepdim=True)[0]
        x = x.view(-1, C3)

        x = F.relu(self.bn4(self.fc1(x)))
        x = F.relu(self.bn5(self.fc2(x)))
        x = self.fc3(x)

        iden = Variable(torch.from_numpy(np.array([1, 0, 0, 0, 1, 0, 0, 0, 1]).astype(np.float32))).view(1, 9).repeat(batchsize, 1)
        if x.is_cuda:
            iden = iden.cuda()
        x = x + iden
        x = x.view(-1, 3, 3)
        return x


class STNkd(nn.Module):
    def __init__(self, k=64):
        super(STNkd, self).__init__()
        self.conv1 = torch.nn.Conv1d(k, C1, 1)
        self.conv2 = torch.nn.Conv1d(C1, C2, 1)
        self.conv3 = torch.nn.Conv1d(C2, C3, 1)
        self.fc1 = nn.Linear(C3, H1)
        self.fc2 = nn.Linear(H1, H2)
        self.fc3 = nn.Linear(H2, k * k)
        self.relu = nn.ReLU()

        self.bn1 = nn.BatchNorm1d(C1)
        self.bn2 = nn.BatchNorm1d(C2)
        self.bn3 = nn.BatchNorm1d(C3)
        self.bn4 = nn.BatchNorm1d(H1)
        self.bn5 = nn.BatchNorm1d(H2)

        self.k = k

    def forward(self, x):
        batchsize = x.size()[0]
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        x = F.relu(self.bn3(self.conv3(x)))
        x = torch.max(x, 2, keepdim=True)[0]
        x = x.view(-1, C3)

        x = F.relu(self.bn4(self.fc1(x)))
        x = F.relu(self.bn5(self.fc2(x)))
        x = self.fc3(x)

        iden = Variable(torch.from_numpy(np.eye(self.k).flatten().astype(np.float32))).view(1, self.k * self.k).repeat(batchsize, 1)
        if x.is_cuda:
            iden = iden.cuda()
        x = x + iden
        x = x.view(-1, self.k, self.k)
        return x


class PointNetfeat(nn.Module):
    def __init__(self, global_feat=True, feature_transform=False):
        super(PointNetfeat, self).__init__()
        self.stn = STN3d()
        self.conv1 = torch.nn.Conv1d(3, C1, 1)
        self.conv2 = torch.nn.Conv1d(C1, C2, 1)
        self.conv3 = torch.nn.Conv1d(C2, C3, 1)
        self.bn1 = nn.BatchNorm1d(C1)
        self.bn2 = nn.BatchNorm1d(C2)
        self.bn3 = nn.BatchNorm1d(C3)
        self.global_feat = global_feat
        self.feature_transform = feature_transform
        if self.feature_transform:
            self.fstn = STNkd(k=C1)

    def forward(self, x):
        n_pts = x.size()[2]
        trans = self.stn(x)
        x = x.transpose(2, 1)
        x = torch.bmm(x, trans)
        x = x.transpose(2, 1)
        x = F.relu(self.bn1(self.conv1(x)))

        if self.feature_transform:
            trans_feat = self.fstn(x)
            x = x.transpose(2, 1)
            x = torch.bmm(x, trans_feat)
            x = x.transpose(2, 1)
        else:
            trans_feat = None

        pointfeat = x
        x = F.relu(self.bn2(self.conv2(x)))
        x = self.bn3(self.conv3(x))
        x = torch.max(x, 2, keepdim=True)[0]
        x = x.view(-1, C3)
        if self.global_feat:
            return x, trans, trans_feat
        else:
            x = x.view(-1, C3, 1).repeat(1, 1, n_pts)
            return torch.cat([x, pointfeat], 1), trans, trans_feat


class PointNetCls(nn.Module):
    def __init__(self, k=2, feature_transform=False):
        super(PointNetCls, self).__init__()
        self.feature_transform = feature_transform
        self.feat = PointNetfeat(global_feat=True, feature_transform=feature_transform)
        self.fc1 = nn.Linear(C3, H1)
        self.fc2 = nn.Linear(H1, H2)
        self.fc3 = nn.Linear(H2, k)
        self.dropout = nn.Dropout(p=0.3)
        self.bn1 = nn.BatchNorm1d(H1)
        self.bn2 = nn.BatchNorm1d(H2)
        self.relu = nn.ReLU()

    def forward(self, x):
        x, trans, trans_feat = self.feat(x)
        x = F.relu(self.bn1(self.fc1(x)))
        x = F.relu(self.bn2(self.dropout(self.fc2(x))))
        x = self.fc3(x)
        return F.log_softmax(x, dim=1), trans, trans_feat


class PointNetDenseCls(nn.Module):
    def __init__(self, k=2, feature_transform=False):
        super(PointNetDenseCls, self).__init__()
        self.k = k
        self.feature_transform = feature_transform
        self.feat = PointNetfeat(global_feat=False, feature_transform=feature_transform)
        self.conv1 = torch.nn.Conv1d(C3 + C1, H1, 1)
        self.conv2 = torch.nn.Conv1d(H1, H2, 1)
        self.conv3 = torch.nn.Conv1d(H2, 8, 1)
        self.conv4 = torch.nn.Conv1d(8, self.k, 1)
        self.bn1 = nn.BatchNorm1d(H1)
        self.bn2 = nn.BatchNorm1d(H2)
        self.bn3 = nn.BatchNorm1d(8)

    def forward(self, x):
        batchsize = x.size()[0]
        n_pts = x.size()[2]
        x, trans, trans_feat = self.feat(x)
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        x = F.relu(self.bn3(self.conv3(x)))
        x = self.conv4(x)
        x = x.transpose(2, 1).contiguous()
        x = F.log_softmax(x.view(-1, self.k), dim=-1)
        x = x.view(batchsize, n_pts, self.k)
        return x, trans, trans_feat


def feature_transform_regularizer(trans):
    d = trans.size()[1]
    batchsize = trans.size()[0]
    I = torch.eye(d)[None, :, :]
    if trans.is_cuda:
        I = I.cuda()
    loss = torch.mean(torch.norm(torch.bmm(trans, trans.transpose(2, 1)) - I, dim=(1, 2)))
    return loss


# --- dataset.py-style synthetic data: spheres (class 0) and cubes (class 1) ---
def make_cloud(label, npoints, rs):
    if label == 0:
        p = rs.normal(size=(npoints, 3))
        p /= np.linalg.norm(p, axis=1, keepdims=True)
    else:
        p = rs.uniform(-1, 1, size=(npoints, 3))
        face = rs.randint(0, 3, size=npoints)
        p[np.arange(npoints), face] = np.sign(p[np.arange(npoints), face])
    return (p * rs.uniform(0.5, 2.0) + rs.normal(scale=0.3, size=3)).astype(np.float32)


def get_item(point_set, data_augmentation=True):
    point_set = point_set - np.expand_dims(np.mean(point_set, axis=0), 0)  # center
    dist = np.max(np.sqrt(np.sum(point_set ** 2, axis=1)), 0)
    point_set = point_set / dist  # scale
    if data_augmentation:
        theta = np.random.uniform(0, np.pi * 2)
        rotation_matrix = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
        point_set[:, [0, 2]] = point_set[:, [0, 2]].dot(rotation_matrix)  # random rotation
        point_set += np.random.normal(0, 0.02, size=point_set.shape)  # random jitter
    return torch.from_numpy(point_set.astype(np.float32))


torch.manual_seed(0)
np.random.seed(0)
rs = np.random.RandomState(1)
NPTS, NUM = 24, 16
labels = np.array([i % 2 for i in range(NUM)])
clouds = [make_cloud(lab, NPTS, rs) for lab in labels]

# shape checks from model.py's __main__
sim_data = Variable(torch.rand(4, 3, NPTS))
trans = STN3d()(sim_data)
print('stn', trans.size())
print('loss', feature_transform_regularizer(trans).item() > 0)
sim_data_64d = Variable(torch.rand(4, C1, NPTS))
trans = STNkd(k=C1)(sim_data_64d)
print('stn64d', trans.size())
print('loss', round(feature_transform_regularizer(trans).item(), 4))
pointfeat = PointNetfeat(global_feat=True)
out, _, _ = pointfeat(sim_data)
print('global feat', out.size())
pointfeat = PointNetfeat(global_feat=False)
out, _, _ = pointfeat(sim_data)
print('point feat', out.size())
cls = PointNetCls(k=5)
out, _, _ = cls(sim_data)
print('class', out.size(), out.grad_fn.name())
seg = PointNetDenseCls(k=3)
out, _, _ = seg(sim_data)
print('seg', out.size(), out.grad_fn.name())

# train_classification.py
classifier = PointNetCls(k=2, feature_transform=True)
optimizer = optim.Adam(classifier.parameters(), lr=0.001, betas=(0.9, 0.999))
scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
print('params', sum(p.numel() for p in classifier.parameters()))
print('keys', len(classifier.state_dict()), list(classifier.state_dict())[:6])
batchSize = 8
num_batch = NUM // batchSize
for epoch in range(3):
    perm = np.random.permutation(NUM)
    for i in range(num_batch):
        idx = perm[i * batchSize:(i + 1) * batchSize]
        points = torch.stack([get_item(clouds[j]) for j in idx])
        target = torch.from_numpy(labels[idx]).long()
        points = points.transpose(2, 1)
        optimizer.zero_grad()
        classifier = classifier.train()
        pred, trans, trans_feat = classifier(points)
        loss = F.nll_loss(pred, target)
        if classifier.feature_transform:
            loss += feature_transform_regularizer(trans_feat) * 0.001
        loss.backward()
        optimizer.step()
        pred_choice = pred.data.max(1)[1]
        correct = pred_choice.eq(target.data).cpu().sum()
        gn = torch.norm(torch.stack([p.grad.norm() for p in classifier.parameters()]))
        print('[%d: %d/%d] train loss: %f accuracy: %f gnorm %.4f' % (
            epoch, i, num_batch, loss.item(), correct.item() / float(batchSize), gn.item()))
    scheduler.step()
    print('lr', scheduler.get_last_lr())

# Adam turns the float32 noise in the (mathematically zero) gradients of the biases in front of
# BatchNorm into full-size steps, so eval-mode outputs after training are compared coarsely; the
# eval-mode path itself is compared exactly on a fresh model below.
classifier = classifier.eval()
with torch.no_grad():
    points = torch.stack([get_item(c, False) for c in clouds]).transpose(2, 1)
    pred, trans, trans_feat = classifier(points)
    print('eval acc', pred.max(1)[1].eq(torch.from_numpy(labels)).float().mean().item())
    print('bn running_var', classifier.feat.bn1.running_var, classifier.feat.bn1.num_batches_tracked)

torch.manual_seed(1)
fresh = PointNetDenseCls(k=3, feature_transform=True)
fresh(points[:8])
fresh.eval()
with torch.no_grad():
    out, trans, trans_feat = fresh(points[8:])
print('dense eval', out.exp()[0, :4], out.shape)
print('trans', trans[0])
print('bn running', fresh.feat.bn1.running_mean, fresh.feat.stn.bn4.running_var)
print('reg', feature_transform_regularizer(trans_feat).item())
