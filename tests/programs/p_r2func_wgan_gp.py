"""WGAN-GP (Gulrajani et al., "Improved Training of Wasserstein GANs"; the widely copied
pytorch-wgan / wgan-gp repos), shrunk to 2-D toy data: calc_gradient_penalty with
torch.autograd.grad(create_graph=True, grad_outputs=ones), RMSprop/Adam critics, n_critic loop."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
autograd = torch.autograd
optim = torch.optim

torch.manual_seed(1)
DIM = 16
LAMBDA = 0.1
BATCH_SIZE = 32
CRITIC_ITERS = 3
ITERS = 4


class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()
        main = nn.Sequential(
            nn.Linear(2, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, 2),
        )
        self.main = main

    def forward(self, noise, real_data):
        output = self.main(noise)
        return output


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        main = nn.Sequential(
            nn.Linear(2, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, 1),
        )
        self.main = main

    def forward(self, inputs):
        output = self.main(inputs)
        return output.view(-1)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Linear') != -1:
        m.weight.data.normal_(0.0, 0.02)
        m.bias.data.fill_(0)
    elif classname.find('BatchNorm') != -1:
        m.weight.data.normal_(1.0, 0.02)
        m.bias.data.fill_(0)


def inf_train_gen():
    centers = torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]]) * 2
    while True:
        idx = torch.randint(0, 4, (BATCH_SIZE,))
        point = torch.randn(BATCH_SIZE, 2) * 0.02
        dataset = centers[idx] + point
        dataset /= 1.414
        yield dataset


def calc_gradient_penalty(netD, real_data, fake_data):
    alpha = torch.rand(BATCH_SIZE, 1)
    alpha = alpha.expand(real_data.size())
    interpolates = alpha * real_data + ((1 - alpha) * fake_data)
    interpolates = autograd.Variable(interpolates, requires_grad=True)
    disc_interpolates = netD(interpolates)
    gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                              grad_outputs=torch.ones(disc_interpolates.size()),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]
    gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean() * LAMBDA
    return gradient_penalty


netG = Generator()
netD = Discriminator()
netD.apply(weights_init)
netG.apply(weights_init)
print(netG)
print(netD)

optimizerD = optim.Adam(netD.parameters(), lr=1e-4, betas=(0.5, 0.9))
optimizerG = optim.Adam(netG.parameters(), lr=1e-4, betas=(0.5, 0.9))
one = torch.tensor(1, dtype=torch.float)
mone = one * -1
data = inf_train_gen()

for iteration in range(ITERS):
    for p in netD.parameters():
        p.requires_grad = True
    for iter_d in range(CRITIC_ITERS):
        _data = next(data)
        real_data_v = autograd.Variable(_data)
        netD.zero_grad()
        D_real = netD(real_data_v)
        D_real = D_real.mean()
        D_real.backward(mone)
        noise = torch.randn(BATCH_SIZE, 2)
        with torch.no_grad():
            noisev = autograd.Variable(noise)
        fake = autograd.Variable(netG(noisev, real_data_v).data)
        inputv = fake
        D_fake = netD(inputv)
        D_fake = D_fake.mean()
        D_fake.backward(one)
        gradient_penalty = calc_gradient_penalty(netD, real_data_v.data, fake.data)
        gradient_penalty.backward()
        D_cost = D_fake - D_real + gradient_penalty
        Wasserstein_D = D_real - D_fake
        optimizerD.step()
    for p in netD.parameters():
        p.requires_grad = False
    netG.zero_grad()
    _data = next(data)
    real_data_v = autograd.Variable(_data)
    noise = torch.randn(BATCH_SIZE, 2)
    noisev = autograd.Variable(noise)
    fake = netG(noisev, real_data_v)
    G = netD(fake)
    G = G.mean()
    G.backward(mone)
    G_cost = -G
    optimizerG.step()
    print(f"iter {iteration} D_cost {D_cost.item():.6f} G_cost {G_cost.item():.6f} "
          f"W_D {Wasserstein_D.item():.6f} gp {gradient_penalty.item():.6f}")
    print(D_cost.grad_fn.name(), type(gradient_penalty.grad_fn).__name__, G_cost.requires_grad)

# the gradient penalty's own graph: second-order terms reach the critic weights
for p in netD.parameters():
    p.requires_grad = True
netD.zero_grad()
gp = calc_gradient_penalty(netD, next(data), netG(torch.randn(BATCH_SIZE, 2), None).detach())
gp.backward()
print({n: None if p.grad is None else f"{p.grad.norm().item():.6e}"
       for n, p in netD.named_parameters()})
print(netD.main[0].weight.grad[:2])
print("RESULT:", f"{gp.item():.6f}")
