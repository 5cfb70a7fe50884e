"""Reproducibility recipes (PyTorch "Reproducibility" notes, torch.random docs and blog posts):
manual_seed, every in-place sampler, Generator objects, get/set_rng_state, fork_rng, dropout
masks and nn.init on a model, all printed."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(42)
print(torch.initial_seed())
print(torch.rand(5))
print(torch.rand(2, 3, dtype=torch.float64))
print(torch.randn(4))
print(torch.randn(20)[-5:])
print(torch.randn(3, 2, dtype=torch.float64))
print(torch.randint(0, 10, (8,)))
print(torch.randint(-5, 5, (2, 4), dtype=torch.int32))
print(torch.randint(3, 10, (4,)).dtype)
print(torch.randperm(10))
print(torch.randperm(6, dtype=torch.float32))
print(torch.normal(2.0, 3.0, size=(4,)))
print(torch.normal(torch.zeros(3), torch.tensor([1.0, 2.0, 3.0])))
print(torch.normal(torch.arange(1.0, 5.0), 0.5))
print(torch.empty(5).normal_(mean=1.0, std=0.1))
print(torch.empty(5).uniform_(-2, 2))
print(torch.empty(4, dtype=torch.float64).uniform_())
print(torch.bernoulli(torch.tensor([0.1, 0.5, 0.9, 0.3])))
print(torch.empty(6).bernoulli_(0.3))
print(torch.multinomial(torch.tensor([0.1, 0.2, 0.7]), 5, replacement=True))
print(torch.multinomial(torch.tensor([[1.0, 2.0, 3.0, 4.0], [4.0, 3.0, 2.0, 1.0]]), 2))
print(torch.empty(5).exponential_(lambd=2.0))
print(torch.empty(5).geometric_(0.3))
print(torch.empty(4).cauchy_(median=0.0, sigma=1.0))
print(torch.empty(4).log_normal_(mean=0.0, std=0.5))
print(torch.empty(4).random_(0, 100))
print(torch.empty(3, dtype=torch.int64).random_(10))
print(torch.poisson(torch.tensor([1.0, 5.0, 20.0])))
print(torch.rand_like(torch.zeros(2, 2)), torch.randn_like(torch.zeros(3)))
print(torch.randint_like(torch.zeros(4), 5))

# Generator objects
g = torch.Generator().manual_seed(2147483647)
print(g.initial_seed(), torch.rand(3, generator=g))
print(torch.randn(3, generator=g), torch.randint(0, 5, (4,), generator=g))
print(torch.randperm(5, generator=g), torch.multinomial(torch.ones(4), 2, generator=g))
print(torch.empty(3).uniform_(generator=g), torch.empty(3).normal_(generator=g))
g2 = torch.Generator()
g2.set_state(g.get_state())
print(torch.rand(2, generator=g), torch.rand(2, generator=g2))
print(torch.bernoulli(torch.full((5,), 0.5), generator=g))

# get_rng_state / set_rng_state
state = torch.get_rng_state()
print(state.dtype, state.shape)
a = torch.rand(3)
torch.set_rng_state(state)
b = torch.rand(3)
print(a, b, torch.equal(a, b))
torch.random.manual_seed(7)
print(torch.random.initial_seed(), torch.rand(2))

# fork_rng
with torch.random.fork_rng():
    torch.manual_seed(123)
    print("inside", torch.rand(2))
print("outside", torch.rand(2))

# Dropout masks
torch.manual_seed(0)
x = torch.ones(2, 8)
print(F.dropout(x, p=0.5))
print(nn.Dropout(0.25)(x))
print(F.dropout(x, p=0.5, training=False))
print(F.alpha_dropout(torch.randn(2, 4), 0.5, training=True))
print(nn.Dropout2d(0.5)(torch.ones(1, 4, 2, 2)))

# nn.init on a model
torch.manual_seed(1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3)
        self.fc1 = nn.Linear(4, 3)
        self.fc2 = nn.Linear(3, 2)
        self.emb = nn.Embedding(3, 2)
        self.bn = nn.BatchNorm1d(3)


net = Net()
print(net.fc1.weight, net.conv.bias, net.emb.weight)


def init_weights(m):
    if isinstance(m, nn.Linear):
        torch.nn.init.xavier_uniform_(m.weight)
        m.bias.data.fill_(0.01)
    elif isinstance(m, nn.Conv2d):
        nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
        nn.init.zeros_(m.bias)
    elif isinstance(m, nn.Embedding):
        nn.init.normal_(m.weight, std=0.02)


net.apply(init_weights)
for name, p in net.named_parameters():
    print(name, p.data.flatten()[:4])
w = torch.empty(3, 5)
print(nn.init.uniform_(w, -0.1, 0.1))
print(nn.init.xavier_normal_(w, gain=nn.init.calculate_gain('tanh')))
print(nn.init.kaiming_uniform_(w, a=5 ** 0.5))
print(nn.init.trunc_normal_(w, std=0.02))
print(nn.init.orthogonal_(torch.empty(3, 3)))
print(nn.init.sparse_(torch.empty(4, 3), sparsity=0.5))
print(nn.init.eye_(torch.empty(2, 3)), nn.init.constant_(torch.empty(2), 0.3))
print(nn.init.dirac_(torch.empty(2, 2, 3)))
print(torch.seed() >= 0)
torch.manual_seed(5)
print("RESULT:", torch.rand(1))
