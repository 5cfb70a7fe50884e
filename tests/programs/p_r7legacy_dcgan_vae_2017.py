"""pytorch/examples dcgan/main.py and vae/main.py as of 2017 (PyTorch 0.2/0.3), shrunk and run on
modern torch. DCGAN: ``weights_init`` (``classname.find('Conv')``, ``m.weight.data.normal_``),
the pre-allocated ``input = torch.FloatTensor(bs, nc, size, size)``, ``noise =
torch.FloatTensor(bs, nz, 1, 1)``, ``fixed_noise = torch.FloatTensor(...).normal_(0, 1)``,
``label = torch.FloatTensor(bs)`` refilled with ``resize_``/``fill_`` and wrapped as
``Variable(label)``, ``input.resize_as_(real_cpu).copy_(real_cpu)``, ``output.data.mean()``,
``errD.data[0]`` (an IndexError now, so the log uses ``.item()``), ``netD(fake.detach())``.
VAE: ``reparameterize`` with ``logvar.mul(0.5).exp_()`` and ``eps =
Variable(std.data.new(std.size()).normal_())`` (and the older ``torch.FloatTensor(std.size())
.normal_()``), ``F.sigmoid``, ``F.binary_cross_entropy(..., size_average=False)``, ``volatile``
test batches and ``torch.cat([data[:n], recon_batch.view(...)[:n]])``. Synthetic 16x16 images
instead of LSUN/MNIST; nets shrunk."""
import importlib
import os
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
optim = importlib.import_module(LIB + ".optim")
Variable = importlib.import_module(LIB + ".autograd").Variable
data_mod = importlib.import_module(LIB + ".utils.data")
warnings.simplefilter("ignore", UserWarning)   # (the programs' own noise is printed once below)

torch.manual_seed(999)
ngpu, nz, ngf, ndf, nc, imageSize, batchSize = 0, 8, 8, 8, 1, 16, 8
cuda = torch.cuda.is_available()
images = torch.rand(32, nc, imageSize, imageSize).mul(2).sub(1)
dataloader = data_mod.DataLoader(data_mod.TensorDataset(images, torch.zeros(32)),
                                 batch_size=batchSize, shuffle=True)


# custom weights initialization called on netG and netD
def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Conv') != -1:
        m.weight.data.normal_(0.0, 0.02)
    elif classname.find('BatchNorm') != -1:
        m.weight.data.normal_(1.0, 0.02)
        m.bias.data.fill_(0)


class _netG(nn.Module):
    def __init__(self, ngpu):
        super(_netG, self).__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
            nn.Tanh()
        )

    def forward(self, input):
        if isinstance(input.data, torch.cuda.FloatTensor) and self.ngpu > 1:
            output = nn.parallel.data_parallel(self.main, input, range(self.ngpu))
        else:
            output = self.main(input)
        return output


class _netD(nn.Module):
    def __init__(self, ngpu):
        super(_netD, self).__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid()
        )

    def forward(self, input):
        output = self.main(input)
        return output.view(-1, 1).squeeze(1)


netG = _netG(ngpu)
netG.apply(weights_init)
netD = _netD(ngpu)
netD.apply(weights_init)
print(netG)
criterion = nn.BCELoss()

input = torch.FloatTensor(batchSize, 3, imageSize, imageSize)
noise = torch.FloatTensor(batchSize, nz, 1, 1)
fixed_noise = torch.FloatTensor(batchSize, nz, 1, 1).normal_(0, 1)
label = torch.FloatTensor(batchSize)
real_label = 1
fake_label = 0
print("buffers:", input.type(), tuple(input.shape), label.type(), fixed_noise.is_leaf)

fixed_noise = Variable(fixed_noise)
optimizerD = optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))

niter = 2
for epoch in range(niter):
    for i, data in enumerate(dataloader, 0):
        ############################
        # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
        ###########################
        # train with real
        netD.zero_grad()
        real_cpu, _ = data
        batch_size = real_cpu.size(0)
        if cuda:
            real_cpu = real_cpu.cuda()
        input.resize_as_(real_cpu).copy_(real_cpu)
        label.resize_(batch_size).fill_(real_label)
        inputv = Variable(input)
        labelv = Variable(label)

        output = netD(inputv)
        errD_real = criterion(output, labelv)
        errD_real.backward()
        D_x = output.data.mean()

        # train with fake
        noise.resize_(batch_size, nz, 1, 1).normal_(0, 1)
        noisev = Variable(noise)
        fake = netG(noisev)
        labelv = Variable(label.fill_(fake_label))
        output = netD(fake.detach())
        errD_fake = criterion(output, labelv)
        errD_fake.backward()
        D_G_z1 = output.data.mean()
        errD = errD_real + errD_fake
        optimizerD.step()

        ############################
        # (2) Update G network: maximize log(D(G(z)))
        ###########################
        netG.zero_grad()
        labelv = Variable(label.fill_(real_label))  # fake labels are real for generator cost
        output = netD(fake)
        errG = criterion(output, labelv)
        errG.backward()
        D_G_z2 = output.data.mean()
        optimizerG.step()

        try:
            values = (errD.data[0], errG.data[0])
        except IndexError as e:
            if epoch == 0 and i == 0:
                print("errD.data[0] ->", type(e).__name__, e)
            values = (errD.item(), errG.item())
        print('[%d/%d][%d/%d] Loss_D: %.4f Loss_G: %.4f D(x): %.4f D(G(z)): %.4f / %.4f'
              % (epoch, niter, i, len(dataloader), values[0], values[1], D_x, D_G_z1, D_G_z2))
    fake = netG(fixed_noise)
    print("fixed-noise fake:", tuple(fake.data.shape), "%.4f %.4f" % (fake.data.mean(),
                                                                       fake.data.std()))
print("D_x is", type(D_x).__name__, D_x.dim(), "label after loop:", label[:3].tolist())


# ---- vae/main.py (2017) ------------------------------------------------------------------
class VAE(nn.Module):
    def __init__(self, old_eps=False):
        super(VAE, self).__init__()
        self.fc1 = nn.Linear(256, 32)
        self.fc21 = nn.Linear(32, 4)
        self.fc22 = nn.Linear(32, 4)
        self.fc3 = nn.Linear(4, 32)
        self.fc4 = nn.Linear(32, 256)
        self.relu = nn.ReLU()
        self.old_eps = old_eps

    def encode(self, x):
        h1 = self.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        if self.training:
            std = logvar.mul(0.5).exp_()
            if self.old_eps:
                eps = torch.FloatTensor(std.size()).normal_()
                if cuda:
                    eps = torch.cuda.FloatTensor(std.size()).normal_()
                eps = Variable(eps)
            else:
                eps = Variable(std.data.new(std.size()).normal_())
            return eps.mul(std).add_(mu)
        else:
            return mu

    def decode(self, z):
        h3 = self.relu(self.fc3(z))
        return F.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 256))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 256), size_average=False)
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


vae_data = images.add(1).div(2)
train_loader = data_mod.DataLoader(data_mod.TensorDataset(vae_data[:24], torch.zeros(24)),
                                   batch_size=8, shuffle=True)
test_loader = data_mod.DataLoader(data_mod.TensorDataset(vae_data[24:], torch.zeros(8)),
                                  batch_size=8, shuffle=False)
with warnings.catch_warnings(record=True) as ws:
    warnings.simplefilter("always")
    F.binary_cross_entropy(vae_data[:1].view(1, -1), vae_data[:1].view(1, -1), size_average=False)
    Variable(vae_data, volatile=True)
for w in ws:
    print("warning:", w.category.__name__, str(w.message).split(" (Triggered internally")[0])

for old_eps in (False, True):
    torch.manual_seed(1)
    model = VAE(old_eps)
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(1, 4):
        model.train()
        train_loss = 0
        for batch_idx, (data, _) in enumerate(train_loader):
            data = Variable(data)
            optimizer.zero_grad()
            recon_batch, mu, logvar = model(data)
            loss = loss_function(recon_batch, data, mu, logvar)
            loss.backward()
            train_loss += loss.data
            optimizer.step()
        print('====> Epoch: {} Average loss: {:.4f}'.format(
            epoch, float(train_loss) / len(train_loader.dataset)))
        model.eval()
        test_loss = 0
        for i, (data, _) in enumerate(test_loader):
            data = Variable(data, volatile=True)
            recon_batch, mu, logvar = model(data)
            test_loss += loss_function(recon_batch, data, mu, logvar).data
            if i == 0:
                n = min(data.size(0), 4)
                comparison = torch.cat([data[:n], recon_batch.view(8, 1, 16, 16)[:n]])
        test_loss /= len(test_loader.dataset)
        print('====> Test set loss: {:.4f} comparison {} grad {}'.format(
            float(test_loss), tuple(comparison.shape), comparison.requires_grad))
    sample = Variable(torch.randn(4, 4))
    sample = model.decode(sample).cpu()
    print("sample:", tuple(sample.data.view(4, 1, 16, 16).shape), "%.4f" % sample.data.mean())
