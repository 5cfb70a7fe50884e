"""The "Parametrizations Tutorial": register_parametrization with Symmetric / MatrixExponential /
Skew, caching, right_inverse, several parametrizations on one tensor, remove_parametrizations,
plus the orthogonal, weight_norm and spectral_norm parametrizations."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
parametrize = importlib.import_module(os.environ.get("TORCH_LIB", "torch") +
                                      ".nn.utils.parametrize")
parametrizations = importlib.import_module(os.environ.get("TORCH_LIB", "torch") +
                                           ".nn.utils.parametrizations")


def symmetric(X):
    return X.triu() + X.triu(1).transpose(-1, -2)


torch.manual_seed(0)
X = torch.rand(3, 3)
A = symmetric(X)
assert torch.allclose(A, A.T)
print(A)


class LinearSymmetric(nn.Module):
    def __init__(self, n_features):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(n_features, n_features))

    def forward(self, x):
        A = symmetric(self.weight)
        return x @ A


layer = LinearSymmetric(3)
out = layer(torch.rand(2, 3))
print(out)


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Symmetric())
A = layer.weight
assert torch.allclose(A, A.T)
print(A)


class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.transpose(-1, -2)


cnn = nn.Conv2d(in_channels=2, out_channels=4, kernel_size=3)
parametrize.register_parametrization(cnn, "weight", Skew())
print(cnn.weight[0, 1])
print(cnn.weight[2, 0])

layer = nn.Linear(3, 3)
print(f"Unparametrized:\n{layer}")
parametrize.register_parametrization(layer, "weight", Symmetric())
print(f"\nParametrized:\n{layer}")
print(layer.parametrizations)
print(layer.parametrizations.weight)
print(layer.parametrizations.weight[0])
print(dict(layer.named_parameters()).keys())
print(layer.parametrizations.weight.original)
print(torch.dist(layer.weight, layer.parametrizations.weight.original.triu()))
print(type(layer).__name__, parametrize.is_parametrized(layer),
      parametrize.is_parametrized(layer, "bias"))


class NoisyParametrization(nn.Module):
    def forward(self, X):
        print("Computing the Parametrization")
        return X


layer = nn.Linear(2, 2)
parametrize.register_parametrization(layer, "weight", NoisyParametrization())
print("Here, layer.weight is recomputed every time we call it")
foo = layer.weight + layer.weight.T
bar = layer.weight.sum()
with parametrize.cached():
    print("Here, it is computed just the first time layer.weight is called")
    foo = layer.weight + layer.weight.T
    bar = layer.weight.sum()


class CayleyMap(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("Id", torch.eye(n))

    def forward(self, X):
        return torch.linalg.solve(self.Id - X, self.Id + X)


layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Skew())
parametrize.register_parametrization(layer, "weight", CayleyMap(3))
X = layer.weight
# (these distances are float32 round-off, ~1e-7..1e-5, different in every library: rounded)
print(round(torch.dist(X.T @ X, torch.eye(3)).item(), 4))


class MatrixExponential(nn.Module):
    def forward(self, X):
        return torch.matrix_exp(X)


layer_orthogonal = nn.Linear(3, 3)
parametrize.register_parametrization(layer_orthogonal, "weight", Skew())
parametrize.register_parametrization(layer_orthogonal, "weight", MatrixExponential())
X = layer_orthogonal.weight
print(round(torch.dist(X.T @ X, torch.eye(3)).item(), 4))

layer_spd = nn.Linear(3, 3)
parametrize.register_parametrization(layer_spd, "weight", Symmetric())
parametrize.register_parametrization(layer_spd, "weight", MatrixExponential())
X = layer_spd.weight
print(round(torch.dist(X, X.T).item(), 4))
print((torch.linalg.eigvalsh(X) > 0.).all())


class Symmetric2(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)

    def right_inverse(self, A):
        return A.triu()


layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Symmetric2())
X = torch.rand(3, 3)
X = X + X.T
print(torch.dist(layer.weight, X))
layer.weight = X
print(torch.dist(layer.weight, X))


class NoisyParametrization2(nn.Module):
    def forward(self, X):
        return X

    def right_inverse(self, A):
        return A


layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", NoisyParametrization2())
print(layer.parametrizations.weight.original.shape)
class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.transpose(-1, -2)

    def right_inverse(self, A):
        # We assume that A is skew-symmetric
        # We take the upper-triangular elements, as these are those used in the forward
        return A.triu(1)


layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Skew())
X = torch.rand(3, 3)
X = X - X.T
print(torch.dist(layer.weight, X))
layer.weight = X
print(torch.dist(layer.weight, X))

layer = nn.Linear(3, 3)
print("Before:")
print(layer)
print(layer.weight)
parametrize.register_parametrization(layer, "weight", Skew())
print("\nParametrized:")
print(layer)
print(layer.weight)
parametrize.remove_parametrizations(layer, "weight")
print("\nAfter. Weight has skew-symmetric values but it is unconstrained:")
print(layer)
print(layer.weight)

layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Skew())
parametrize.remove_parametrizations(layer, "weight", leave_parametrized=False)
print(layer.weight)

# training through a parametrization
layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Symmetric())
opt = torch.optim.SGD(layer.parameters(), lr=0.1)
x = torch.randn(5, 3)
for _ in range(3):
    opt.zero_grad()
    loss = layer(x).pow(2).mean()
    loss.backward()
    opt.step()
    print(f"{loss.item():.6f}")
print(layer.parametrizations.weight.original.grad)
print(list(layer.state_dict().keys()))

# the built-in parametrizations
lin = nn.Linear(4, 4)
wn = parametrizations.weight_norm(lin, name="weight", dim=0)
print(wn)
print(wn.parametrizations.weight.original0.shape, wn.parametrizations.weight.original1.shape)
print(wn.weight)
sn = parametrizations.spectral_norm(nn.Linear(5, 4))
print(sn)
# (sigma is 1 up to float32 round-off in the power iteration: printed with 4 decimals)
print(f"{torch.linalg.matrix_norm(sn.weight, 2).item():.4f}")
print(list(sn.state_dict().keys()))
orth = parametrizations.orthogonal(nn.Linear(4, 3))
Q = orth.weight
print(torch.dist(Q @ Q.T, torch.eye(3)) < 1e-5, Q.shape)
print(orth)
print("RESULT: ok")
