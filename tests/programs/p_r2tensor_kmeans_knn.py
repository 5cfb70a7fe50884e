"""k-means and k-nearest-neighbours written with tensor ops only (the "K-means clustering in
PyTorch" blog/kmeans_pytorch package and the kNN-from-scratch notebooks): cdist, argmin,
scatter/index_add for centroid updates, bincount, k-means++ seeding with multinomial, topk,
mode voting, gather, confusion matrix with bincount."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)
n_per, k, d = 30, 3, 2
centers_true = torch.tensor([[0.0, 0.0], [4.0, 4.0], [-4.0, 3.0]])
X = torch.cat([c + torch.randn(n_per, d) * 0.7 for c in centers_true])
y = torch.arange(k).repeat_interleave(n_per)
print(X.shape, y.shape, y.bincount())


def pairwise_distance(data1, data2):
    A = data1.unsqueeze(dim=1)
    B = data2.unsqueeze(dim=0)
    dis = (A - B) ** 2.0
    return dis.sum(dim=-1).squeeze()


def pairwise_cosine(data1, data2):
    A_normalized = data1.unsqueeze(dim=1) / data1.unsqueeze(dim=1).norm(dim=-1, keepdim=True)
    B_normalized = data2.unsqueeze(dim=0) / data2.unsqueeze(dim=0).norm(dim=-1, keepdim=True)
    return 1 - (A_normalized * B_normalized).sum(dim=-1).squeeze()


def kmeans_pp_init(X, k, generator):
    idx = torch.randint(0, X.shape[0], (1,), generator=generator)
    centers = X[idx]
    for _ in range(1, k):
        d2 = torch.cdist(X, centers).pow(2).min(dim=1).values
        probs = d2 / d2.sum()
        nxt = torch.multinomial(probs, 1, generator=generator)
        centers = torch.cat([centers, X[nxt]], dim=0)
    return centers


def kmeans(X, num_clusters, distance="euclidean", tol=1e-4, iters=20, seed=0):
    g = torch.Generator().manual_seed(seed)
    pairwise = pairwise_distance if distance == "euclidean" else pairwise_cosine
    initial_state = kmeans_pp_init(X, num_clusters, g)
    for iteration in range(iters):
        dis = pairwise(X, initial_state)
        choice_cluster = torch.argmin(dis, dim=1)
        initial_state_pre = initial_state.clone()
        for index in range(num_clusters):
            selected = torch.nonzero(choice_cluster == index).squeeze().to(X.device)
            selected = torch.index_select(X, 0, selected)
            initial_state[index] = selected.mean(dim=0)
        center_shift = torch.sum(torch.sqrt(torch.sum((initial_state - initial_state_pre) ** 2,
                                                      dim=1)))
        print(f"iteration={iteration}, center_shift={center_shift ** 2:0.6f}, tol={tol:0.4f}")
        if center_shift ** 2 < tol:
            break
    return choice_cluster, initial_state


cluster_ids, cluster_centers = kmeans(X, k)
print(cluster_ids, cluster_centers)
order = cluster_centers[:, 0].argsort()
print(order, cluster_centers[order])

# vectorised Lloyd step with scatter_add_ / index_add_ / one_hot
C = X[torch.tensor([0, n_per, 2 * n_per])].clone()
for step in range(5):
    assign = torch.cdist(X, C).argmin(dim=1)
    sums = torch.zeros_like(C).scatter_add_(0, assign.unsqueeze(1).expand(-1, d), X)
    counts = torch.bincount(assign, minlength=k).clamp_min(1).unsqueeze(1)
    sums2 = torch.zeros_like(C).index_add_(0, assign, X)
    onehot = F.one_hot(assign, k).float()
    sums3 = onehot.T @ X
    C_new = sums / counts
    inertia = ((X - C[assign]) ** 2).sum()
    print(step, f"{inertia.item():.4f}", torch.allclose(sums, sums2), torch.allclose(sums, sums3),
          counts.flatten().tolist())
    C = C_new
print(C)
cos_ids, cos_centers = kmeans(X, k, distance="cosine", iters=3, seed=1)
print(cos_ids.bincount(minlength=k), cos_centers.shape)

# kNN classifier
perm = torch.randperm(X.shape[0])
train_idx, test_idx = perm[:60], perm[60:]
Xtr, ytr, Xte, yte = X[train_idx], y[train_idx], X[test_idx], y[test_idx]


def knn_predict(Xtr, ytr, Xte, k=5):
    dist = torch.cdist(Xte, Xtr, p=2)
    knn_dist, knn_idx = dist.topk(k, dim=1, largest=False)
    knn_labels = ytr[knn_idx]
    pred = torch.mode(knn_labels, dim=1).values
    votes = F.one_hot(knn_labels, num_classes=3).sum(dim=1)
    w = 1.0 / (knn_dist + 1e-8)
    weighted = torch.zeros(Xte.shape[0], 3).scatter_add_(1, knn_labels, w)
    return pred, votes, weighted.argmax(dim=1), knn_dist


pred, votes, wpred, kd = knn_predict(Xtr, ytr, Xte)
print(pred, votes[:5], wpred.eq(pred).all(), kd[:3])
acc = (pred == yte).float().mean()
print(f"kNN accuracy: {acc.item():.4f}")
conf = torch.bincount(yte * 3 + pred, minlength=9).reshape(3, 3)
print(conf, conf.diag().sum() / conf.sum(), conf.sum(0), conf.sum(1))
for p in [1.0, 2.0, float("inf")]:
    print(p, torch.cdist(Xte[:2], Xtr[:3], p=p))
print(F.pairwise_distance(Xte[:3], Xtr[:3]), F.cosine_similarity(Xte[:3], Xtr[:3]))
print(torch.nn.PairwiseDistance(p=1)(Xte[:2], Xtr[:2]), torch.nn.CosineSimilarity(dim=1, eps=1e-6)(
    Xte[:2], Xtr[:2]))
sq = (Xte ** 2).sum(1, keepdim=True) - 2 * Xte @ Xtr.T + (Xtr ** 2).sum(1)
print(torch.allclose(sq.clamp_min(0).sqrt(), torch.cdist(Xte, Xtr), atol=1e-4))
print("RESULT:", acc.item(), conf.tolist())
