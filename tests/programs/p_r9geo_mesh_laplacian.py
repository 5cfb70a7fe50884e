"""Mesh Laplacians and regularisers, shrunk from facebookresearch/pytorch3d:
pytorch3d/ops/laplacian_matrices.py (laplacian from a sparse COO adjacency with torch.sparse.sum
degrees, cot_laplacian with Heron areas, `L += L.t()` and scatter_add_ inverse areas),
pytorch3d/loss/mesh_laplacian_smoothing.py (uniform / cot / cotcurv), pytorch3d/loss/mesh_edge_loss.py,
Meshes' packed-edge computation (sorted edge hash + torch.unique) and utils/ico_sphere-style
subdivision, then the deform_source_mesh_to_target_mesh tutorial loop (SGD on vertex offsets with
chamfer + edge + Laplacian losses) and explicit Laplacian smoothing through torch.sparse.mm.
An octahedron subdivided once stands in for ico_sphere."""
# ruff: noqa: E501  (upstream's own line lengths, kept)
import importlib
import os
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
warnings.filterwarnings("ignore", message="Sparse invariant checks")


def laplacian(verts, edges):
    """Uniform Laplacian L[i, j] = 1/deg(i) for edges, L[i, i] = -1."""
    V = verts.shape[0]

    e0, e1 = edges.unbind(1)

    idx01 = torch.stack([e0, e1], dim=1)  # (E, 2)
    idx10 = torch.stack([e1, e0], dim=1)  # (E, 2)
    idx = torch.cat([idx01, idx10], dim=0).t()  # (2, 2*E)

    # First, we construct the adjacency matrix,
    # i.e. A[i, j] = 1 if (i,j) is an edge, or
    # A[e0, e1] = 1 &  A[e1, e0] = 1
    ones = torch.ones(idx.shape[1], dtype=torch.float32, device=verts.device)
    A = torch.sparse_coo_tensor(idx, ones, (V, V))

    # the sum of i-th row of A gives the degree of the i-th vertex
    deg = torch.sparse.sum(A, dim=1).to_dense()

    # We construct the Laplacian matrix by adding the non diagonal values
    # i.e. L[i, j] = 1 ./ deg(i) if (i, j) is an edge
    deg0 = deg[e0]
    deg0 = torch.where(deg0 > 0.0, 1.0 / deg0, deg0)
    deg1 = deg[e1]
    deg1 = torch.where(deg1 > 0.0, 1.0 / deg1, deg1)
    val = torch.cat([deg0, deg1])
    L = torch.sparse_coo_tensor(idx, val, (V, V))

    # Then we add the diagonal values L[i, i] = -1.
    idx = torch.arange(V, device=verts.device)
    idx = torch.stack([idx, idx], dim=0)
    ones = torch.ones(idx.shape[1], dtype=torch.float32, device=verts.device)
    L -= torch.sparse_coo_tensor(idx, ones, (V, V))

    return L


def cot_laplacian(verts, faces, eps: float = 1e-12):
    """Cotangent Laplacian and inverse vertex areas."""
    V, F = verts.shape[0], faces.shape[0]

    face_verts = verts[faces]
    v0, v1, v2 = face_verts[:, 0], face_verts[:, 1], face_verts[:, 2]

    # Side lengths of each triangle, of shape (sum(F_n),)
    # A is the side opposite v1, B is opposite v2, and C is opposite v3
    A = (v1 - v2).norm(dim=1)
    B = (v0 - v2).norm(dim=1)
    C = (v0 - v1).norm(dim=1)

    # Area of each triangle (with Heron's formula); shape is (sum(F_n),)
    s = 0.5 * (A + B + C)
    # note that the area can be negative (close to 0) causing nans after sqrt()
    # we clip it to a small positive value
    area = (s * (s - A) * (s - B) * (s - C)).clamp_(min=eps).sqrt()

    # Compute cotangents of angles, of shape (sum(F_n), 3)
    A2, B2, C2 = A * A, B * B, C * C
    cota = (B2 + C2 - A2) / area
    cotb = (A2 + C2 - B2) / area
    cotc = (A2 + B2 - C2) / area
    cot = torch.stack([cota, cotb, cotc], dim=1)
    cot /= 4.0

    # Construct a sparse matrix by basically doing:
    # L[v1, v2] = cota
    # L[v2, v0] = cotb
    # L[v0, v1] = cotc
    ii = faces[:, [1, 2, 0]]
    jj = faces[:, [2, 0, 1]]
    idx = torch.stack([ii, jj], dim=0).view(2, F * 3)
    L = torch.sparse_coo_tensor(idx, cot.view(-1), (V, V))

    # Make it symmetric; this means we are also setting
    # L[v2, v1] = cota
    # L[v0, v2] = cotb
    # L[v1, v0] = cotc
    L += L.t()

    # For each vertex, compute the sum of areas for triangles containing it.
    idx = faces.view(-1)
    inv_areas = torch.zeros(V, dtype=torch.float32, device=verts.device)
    val = torch.stack([area] * 3, dim=1).view(-1)
    inv_areas.scatter_add_(0, idx, val)
    idx = inv_areas > 0
    inv_areas[idx] = 1.0 / inv_areas[idx]
    inv_areas = inv_areas.view(-1, 1)

    return L, inv_areas


def packed_edges(verts, faces):
    """Meshes._compute_packed's unique undirected edges (sorted by their hash)."""
    v0, v1, v2 = faces.chunk(3, dim=1)
    e01 = torch.cat([v0, v1], dim=1)  # (sum(F_n), 2)
    e12 = torch.cat([v1, v2], dim=1)  # (sum(F_n), 2)
    e20 = torch.cat([v2, v0], dim=1)  # (sum(F_n), 2)

    # All edges including duplicates.
    edges = torch.cat([e12, e20, e01], dim=0)  # (sum(F_n)*3, 2)

    # Sort the edges in increasing vertex order to remove duplicates as
    # the same edge may appear in different orientations in different faces.
    edges, _ = edges.sort(dim=1)

    # Remove duplicate edges: convert each edge (v0, v1) into an
    # integer hash = V * v0 + v1; this allows us to use the scalar version of
    # unique which is much faster than edges.unique(dim=1) which is very slow.
    V = verts.shape[0]
    edges_hash = V * edges[:, 0] + edges[:, 1]
    u, inverse_idxs = torch.unique(edges_hash, return_inverse=True)
    edges_packed = torch.stack([u // V, u % V], dim=1)
    faces_packed_to_edges = inverse_idxs.reshape(3, -1).t()
    return edges_packed, faces_packed_to_edges


def mesh_laplacian_smoothing(verts_packed, faces_packed, edges_packed, method: str = "uniform"):
    """Laplacian smoothing objective for a single mesh (weights 1/V, N = 1)."""
    N = 1
    num_verts = verts_packed.shape[0]
    weights = torch.full((num_verts,), 1.0 / num_verts)

    # We don't want to backprop through the computation of the Laplacian;
    # just treat it as a magic constant matrix that is used to transform
    # verts into normals
    with torch.no_grad():
        if method == "uniform":
            L = laplacian(verts_packed, edges_packed)
        elif method in ["cot", "cotcurv"]:
            L, inv_areas = cot_laplacian(verts_packed, faces_packed)
            if method == "cot":
                norm_w = torch.sparse.sum(L, dim=1).to_dense().view(-1, 1)
                idx = norm_w > 0
                norm_w[idx] = 1.0 / norm_w[idx]
            else:
                L_sum = torch.sparse.sum(L, dim=1).to_dense().view(-1, 1)
                norm_w = 0.25 * inv_areas
        else:
            raise ValueError("Method should be one of {uniform, cot, cotcurv}")

    if method == "uniform":
        loss = L.mm(verts_packed)
    elif method == "cot":
        loss = L.mm(verts_packed) * norm_w - verts_packed
    elif method == "cotcurv":
        loss = (L.mm(verts_packed) - L_sum * verts_packed) * norm_w
    loss = loss.norm(dim=1)

    loss = loss * weights
    return loss.sum() * N


def mesh_edge_loss(verts_packed, edges_packed, target_length: float = 0.0):
    """Penalise edge lengths away from target_length (weights 1/E, one mesh)."""
    N = 1
    num_edges = edges_packed.shape[0]
    weights = torch.full((num_edges,), 1.0 / num_edges)
    verts_edges = verts_packed[edges_packed]
    v0, v1 = verts_edges.unbind(1)
    loss = ((v0 - v1).norm(dim=1, p=2) - target_length) ** 2.0
    loss = loss * weights
    return loss.sum() / N


def subdivide(verts, faces):
    """SubdivideMeshes: a new vertex at each edge midpoint, four faces per face; back onto the sphere."""
    edges, f2e = packed_edges(verts, faces)
    new_verts = torch.cat([verts, verts[edges].mean(dim=1)], dim=0)
    V = verts.shape[0]
    e = f2e + V  # faces' edges in (e12, e20, e01) order
    f0 = torch.stack([faces[:, 0], e[:, 2], e[:, 1]], dim=1)
    f1 = torch.stack([faces[:, 1], e[:, 0], e[:, 2]], dim=1)
    f2 = torch.stack([faces[:, 2], e[:, 1], e[:, 0]], dim=1)
    f3 = torch.stack([e[:, 0], e[:, 1], e[:, 2]], dim=1)
    new_faces = torch.cat([f0, f1, f2, f3], dim=0)
    return new_verts / new_verts.norm(dim=1, keepdim=True), new_faces


def r(t, nd=5):
    return [round(float(v), nd) for v in t.detach().reshape(-1)]


verts = torch.tensor([[1.0, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]])
faces = torch.tensor([[0, 2, 4], [2, 1, 4], [1, 3, 4], [3, 0, 4], [2, 0, 5], [1, 2, 5], [3, 1, 5], [0, 3, 5]])
edges, _ = packed_edges(verts, faces)
print("octahedron edges", edges.tolist())
L = laplacian(verts, edges)
print("L nnz", L._nnz(), "row sums", r(torch.sparse.sum(L, dim=1).to_dense()))
print("L dense[0]", r(L.to_dense()[0]))
print("uniform L @ verts (-v: neighbours average to 0)", r(L.mm(verts)))

verts, faces = subdivide(verts, faces)
edges, _ = packed_edges(verts, faces)
print("subdivided", tuple(verts.shape), tuple(faces.shape), tuple(edges.shape))
Lc, inv_areas = cot_laplacian(verts, faces)
print("cot L row sums", r(torch.sparse.sum(Lc, dim=1).to_dense()[:6], 5))
print("inv areas", r(inv_areas[:6, 0], 5))
torch.manual_seed(0)
noisy = verts + 0.1 * torch.randn(verts.shape)
for method in ("uniform", "cot", "cotcurv"):
    print(method, round(mesh_laplacian_smoothing(noisy, faces, edges, method).item(), 6))
print("edge loss", round(mesh_edge_loss(noisy, edges).item(), 6), round(mesh_edge_loss(noisy, edges, 0.5).item(), 6))

# explicit Laplacian smoothing: v <- v + lam * L v
Lu = laplacian(noisy, edges)
v = noisy.clone()
for _ in range(5):
    v = v + 0.5 * torch.sparse.mm(Lu, v)
print("smoothed spread", round(float((v.norm(dim=1) - v.norm(dim=1).mean()).abs().mean()), 5))

# deform tutorial: offsets on the sphere toward a squashed target, SGD
target = noisy * torch.tensor([1.5, 0.7, 1.0])
deform_verts = torch.zeros(verts.shape, requires_grad=True)
optimizer = torch.optim.SGD([deform_verts], lr=1.0, momentum=0.9)
w_chamfer, w_edge, w_laplacian = 1.0, 1.0, 0.1
for i in range(20):
    optimizer.zero_grad()
    new_verts = verts + deform_verts
    d = torch.cdist(new_verts, target) ** 2
    loss_chamfer = d.min(1).values.mean() + d.min(0).values.mean()
    loss_edge = mesh_edge_loss(new_verts, edges)
    loss_laplacian = mesh_laplacian_smoothing(new_verts, faces, edges, method="uniform")
    loss = loss_chamfer * w_chamfer + loss_edge * w_edge + loss_laplacian * w_laplacian
    loss.backward()
    optimizer.step()
    if i % 5 == 0 or i == 19:
        print("it %2d total %.5f chamfer %.5f edge %.5f laplacian %.5f" % (i, loss.item(), loss_chamfer.item(), loss_edge.item(), loss_laplacian.item()))
print("grad of laplacian term", r(torch.autograd.grad(mesh_laplacian_smoothing(verts + deform_verts, faces, edges), deform_verts)[0][:2], 6))
try:
    mesh_laplacian_smoothing(verts, faces, edges, "bad")
except ValueError as e:
    print("ValueError", e)
