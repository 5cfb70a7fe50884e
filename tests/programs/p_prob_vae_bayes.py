"""pytorch/examples vae/main.py (shrunk, synthetic "MNIST"), then the torch.distributions idioms of
Bayesian-regression / mixture-density posts: Independent, kl_divergence, MultivariateNormal with
scale_tril, Bernoulli(logits), MixtureSameFamily and TransformedDistribution."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = torch.optim
D = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".distributions")
T = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".distributions.transforms")

torch.manual_seed(1)
device = torch.device("cpu")


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()

        self.fc1 = nn.Linear(64, 32)
        self.fc21 = nn.Linear(32, 4)
        self.fc22 = nn.Linear(32, 4)
        self.fc3 = nn.Linear(4, 32)
        self.fc4 = nn.Linear(32, 64)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5*logvar)
        eps = torch.randn_like(std)
        return mu + eps*std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 64))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


model = VAE().to(device)
print(model)
optimizer = optim.Adam(model.parameters(), lr=1e-3)


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 64), reduction='sum')
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


data = (torch.rand(40, 1, 8, 8) > 0.5).float()
train_loader = [data[i:i + 10] for i in range(0, 40, 10)]


def train(epoch):
    model.train()
    train_loss = 0
    for batch_idx, data in enumerate(train_loader):
        data = data.to(device)
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
        print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
            epoch, batch_idx * len(data), 40,
            100. * batch_idx / len(train_loader),
            loss.item() / len(data)))
    print('====> Epoch: {} Average loss: {:.4f}'.format(epoch, train_loss / 40))


for epoch in range(1, 3):
    train(epoch)
    with torch.no_grad():
        sample = torch.randn(3, 4).to(device)
        sample = model.decode(sample).cpu()
        print(sample.view(3, 1, 8, 8)[0, 0, :2])

# The same ELBO with torch.distributions
x = train_loader[0].view(-1, 64)
mu, logvar = model.encode(x)
q = D.Independent(D.Normal(mu, torch.exp(0.5 * logvar)), 1)
p = D.Independent(D.Normal(torch.zeros_like(mu), torch.ones_like(mu)), 1)
z = q.rsample()
px = D.Independent(D.Bernoulli(logits=model.fc4(F.relu(model.fc3(z)))), 1)
elbo = (px.log_prob(x) - D.kl_divergence(q, p)).mean()
print(q, q.batch_shape, q.event_shape)
print("elbo", f"{elbo.item():.4f}", D.kl_divergence(q, p)[:3])
(-elbo).backward()
print("grad", model.fc21.bias.grad)

# Bayesian linear regression: a Gaussian posterior over weights
torch.manual_seed(0)
X = torch.randn(20, 2)
w_true = torch.tensor([1.5, -0.7])
y = X @ w_true + 0.1 * torch.randn(20)
prior = D.MultivariateNormal(torch.zeros(2), scale_tril=torch.eye(2))
noise = 0.1
precision = torch.eye(2) + X.T @ X / noise ** 2
cov = torch.linalg.inv(precision)
mean = cov @ X.T @ y / noise ** 2
L = torch.linalg.cholesky(cov)
post = D.MultivariateNormal(mean, scale_tril=L)
print("posterior mean", post.mean, "\nscale_tril", post.scale_tril)
print("covariance", post.covariance_matrix, "\nprecision", post.precision_matrix)
print("kl(post||prior)", D.kl_divergence(post, prior))
ws = post.sample((4,))
print("samples", ws, post.log_prob(ws), post.entropy())
print("prior lp", prior.log_prob(ws))

# Bayesian logistic regression log joint with Bernoulli(logits)
w = torch.zeros(2, requires_grad=True)
opt = optim.SGD([w], lr=0.05)
labels = (y > 0).float()
for step in range(5):
    opt.zero_grad()
    log_joint = D.Bernoulli(logits=X @ w).log_prob(labels).sum() + prior.log_prob(w)
    (-log_joint).backward()
    opt.step()
    print(f"step {step} log joint {log_joint.item():.4f} w {w.detach()}")

# A mixture of Gaussians (MixtureSameFamily), as in mixture-density-network posts
mix = D.Categorical(torch.ones(3,))
comp = D.Normal(torch.tensor([-2.0, 0.0, 3.0]), torch.tensor([0.5, 1.0, 0.8]))
gmm = D.MixtureSameFamily(mix, comp)
s = gmm.sample((5,))
print(gmm)
print("gmm", s, gmm.log_prob(s), gmm.mean, gmm.variance, gmm.cdf(torch.tensor([0.0])))
mix2 = D.Categorical(logits=torch.randn(2, 3))
comp2 = D.Independent(D.Normal(torch.randn(2, 3, 2), torch.rand(2, 3, 2) + 0.5), 1)
gmm2 = D.MixtureSameFamily(mix2, comp2)
s2 = gmm2.sample((2,))
print("gmm2", s2.shape, gmm2.log_prob(s2), gmm2.batch_shape, gmm2.event_shape)

# TransformedDistribution
base = D.Normal(torch.zeros(3), torch.ones(3))
lognorm = D.TransformedDistribution(base, [T.ExpTransform()])
v = lognorm.sample()
print("lognormal", v, lognorm.log_prob(v), D.LogNormal(0.0, 1.0).log_prob(v))
affine = D.TransformedDistribution(base, [T.AffineTransform(loc=1.0, scale=2.0),
                                          T.SigmoidTransform()])
v = affine.rsample((2,))
print("affine+sigmoid", v, affine.log_prob(v))
logistic = D.TransformedDistribution(D.Uniform(0.0, 1.0), [T.SigmoidTransform().inv,
                                                          T.AffineTransform(loc=0.5, scale=2.0)])
v = logistic.sample((4,))
print("logistic", v, logistic.log_prob(v))
ct = T.ComposeTransform([T.ExpTransform(), T.PowerTransform(torch.tensor(2.0))])
print(ct, ct(torch.tensor([0.5])), ct.inv(torch.tensor([4.0])),
      ct.log_abs_det_jacobian(torch.tensor([0.5]), ct(torch.tensor([0.5]))))
sb = T.StickBreakingTransform()
print("stickbreaking", sb(torch.tensor([0.1, -0.3])), D.transform_to(D.constraints.simplex))
print(D.biject_to(D.constraints.positive)(torch.tensor([-1.0, 0.0, 2.0])))
print("RESULT:", f"{elbo.item():.4f}")
