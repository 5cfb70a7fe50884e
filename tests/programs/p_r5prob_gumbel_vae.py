"""Categorical VAE with Gumbel-Softmax (Jang et al. 2016; the YongfeiYan/Gumbel_Softmax_VAE
PyTorch port): F.gumbel_softmax with hard=True straight-through and soft, temperature annealing,
KL to a uniform categorical prior, and the same latent via RelaxedOneHotCategorical.rsample /
RelaxedBernoulli / OneHotCategorical sampling, on random binary "images" instead of MNIST."""
# compare: rtol=2e-4 atol=1e-5
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
D = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".distributions")

torch.manual_seed(0)
latent_dim, categorical_dim = 6, 4
data = (torch.rand(64, 36) > 0.5).float()


def sample_gumbel(shape, eps=1e-20):
    U = torch.rand(shape)
    return -torch.log(-torch.log(U + eps) + eps)


def gumbel_softmax_sample(logits, temperature):
    y = logits + sample_gumbel(logits.size())
    return F.softmax(y / temperature, dim=-1)


def gumbel_softmax(logits, temperature, hard=False):
    y = gumbel_softmax_sample(logits, temperature)
    if not hard:
        return y.view(-1, latent_dim * categorical_dim)
    shape = y.size()
    _, ind = y.max(dim=-1)
    y_hard = torch.zeros_like(y).view(-1, shape[-1])
    y_hard.scatter_(1, ind.view(-1, 1), 1)
    y_hard = y_hard.view(*shape)
    y_hard = (y_hard - y).detach() + y
    return y_hard.view(-1, latent_dim * categorical_dim)


class VAE_gumbel(nn.Module):
    def __init__(self, temp):
        super().__init__()
        self.fc1 = nn.Linear(36, 32)
        self.fc2 = nn.Linear(32, 16)
        self.fc3 = nn.Linear(16, latent_dim * categorical_dim)
        self.fc4 = nn.Linear(latent_dim * categorical_dim, 16)
        self.fc5 = nn.Linear(16, 32)
        self.fc6 = nn.Linear(32, 36)
        self.relu = nn.ReLU()
        self.sigmoid = nn.Sigmoid()

    def encode(self, x):
        h1 = self.relu(self.fc1(x))
        h2 = self.relu(self.fc2(h1))
        return self.relu(self.fc3(h2))

    def decode(self, z):
        h4 = self.relu(self.fc4(z))
        h5 = self.relu(self.fc5(h4))
        return self.sigmoid(self.fc6(h5))

    def forward(self, x, temp, hard):
        q = self.encode(x.view(-1, 36))
        q_y = q.view(q.size(0), latent_dim, categorical_dim)
        z = gumbel_softmax(q_y, temp, hard)
        return self.decode(z), F.softmax(q_y, dim=-1).reshape(*q.size())


def loss_function(recon_x, x, qy):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 36), reduction="sum") / x.shape[0]
    log_ratio = torch.log(qy * categorical_dim + 1e-20)
    KLD = torch.sum(qy * log_ratio, dim=-1).mean()
    return BCE + KLD


model = VAE_gumbel(1.0)
print(model)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
temp, temp_min, ANNEAL_RATE = 1.0, 0.5, 0.00003 * 1000
for epoch in range(1, 4):
    model.train()
    train_loss = 0
    for batch_idx in range(4):
        x = data[batch_idx * 16:(batch_idx + 1) * 16]
        optimizer.zero_grad()
        recon_batch, qy = model(x, temp, hard=epoch % 2 == 0)
        loss = loss_function(recon_batch, x, qy)
        loss.backward()
        train_loss += loss.item() * len(x)
        optimizer.step()
        if batch_idx % 2 == 1:
            temp = max(temp * torch.exp(torch.tensor(-ANNEAL_RATE * batch_idx)).item(), temp_min)
    print("====> Epoch: {} Average loss: {:.4f} temp {:.4f}".format(epoch, train_loss / 64, temp))

model.eval()
with torch.no_grad():
    ind = torch.zeros(latent_dim, 1).long()
    ind[:, 0] = torch.tensor([0, 1, 2, 3, 0, 1])
    z = F.one_hot(ind.view(-1), categorical_dim).float().view(1, -1)
    print("decoded prior sample", model.decode(z)[0, :8])

# the library versions of the same relaxations
torch.manual_seed(1)
logits = torch.randn(3, categorical_dim, requires_grad=True)
y_soft = F.gumbel_softmax(logits, tau=0.5)
y_hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
print("F.gumbel_softmax", y_soft, y_hard, y_hard.grad_fn.name())
(y_hard * torch.arange(4.0)).sum().backward()
print("straight-through grad", logits.grad)
rel = D.RelaxedOneHotCategorical(torch.tensor(0.5), logits=logits.detach())
s = rel.rsample((2,))
print("relaxed", s, rel.log_prob(s), rel.temperature, rel.logits, rel.probs)
print("  batch", rel.batch_shape, "event", rel.event_shape, "support", rel.support)
rb = D.RelaxedBernoulli(torch.tensor([0.3]), logits=torch.tensor([-1.0, 0.0, 2.0]))
s = rb.rsample((2,))
print("relaxed bernoulli", s, rb.log_prob(s), rb.support)
oh = D.OneHotCategorical(logits=logits.detach())
s = oh.sample((2,))
print("onehot", s, oh.log_prob(s), oh.entropy(), oh.enumerate_support().shape)
print("onehot st", D.OneHotCategoricalStraightThrough(logits=logits.detach()).rsample().shape)
t = torch.tensor(1.0, requires_grad=True)
rel = D.RelaxedOneHotCategorical(t, probs=torch.tensor([0.1, 0.2, 0.7]))
val = rel.rsample()
(val[2]).backward()
print("temperature grad", val, t.grad)
print("RESULT: done")
