"""beta-VAE and FactorVAE as in 1Konny/Beta-VAE (model.py BetaVAE_H, solver.py with objectives
'H' and 'B' capacity annealing, legacy size_average=False losses, init.kaiming_normal) and
1Konny/FactorVAE (FactorVAE1 with 4-D stats, the total-correlation Discriminator, permute_dims,
the VAE/D update order: the original order's in-place error, then the usual fix); shrunk to
16x16 single-channel blobs, z_dim 4."""
import importlib
import os
import warnings

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
init = nn.init
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = torch.optim
warnings.simplefilter("ignore")


def reparametrize(mu, logvar):
    std = logvar.div(2).exp()
    eps = std.data.new(std.size()).normal_()
    return mu + std * eps


class View(nn.Module):
    def __init__(self, size):
        super(View, self).__init__()
        self.size = size

    def forward(self, tensor):
        return tensor.view(self.size)


def kaiming_init(m):
    if isinstance(m, (nn.Linear, nn.Conv2d)):
        init.kaiming_normal(m.weight)
        if m.bias is not None:
            m.bias.data.fill_(0)
    elif isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
        m.weight.data.fill_(1)
        if m.bias is not None:
            m.bias.data.fill_(0)


def normal_init(m):
    if isinstance(m, (nn.Linear, nn.Conv2d)):
        init.normal_(m.weight, 0, 0.02)
        if m.bias is not None:
            m.bias.data.fill_(0)
    elif isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
        m.weight.data.fill_(1)
        if m.bias is not None:
            m.bias.data.fill_(0)


class BetaVAE_H(nn.Module):
    def __init__(self, z_dim=4, nc=1):
        super(BetaVAE_H, self).__init__()
        self.z_dim = z_dim
        self.nc = nc
        self.encoder = nn.Sequential(
            nn.Conv2d(nc, 8, 4, 2, 1),          # B,  8, 8, 8
            nn.ReLU(True),
            nn.Conv2d(8, 16, 4, 2, 1),          # B, 16, 4, 4
            nn.ReLU(True),
            nn.Conv2d(16, 32, 4, 1),            # B, 32, 1, 1
            nn.ReLU(True),
            View((-1, 32 * 1 * 1)),             # B, 32
            nn.Linear(32, z_dim * 2),           # B, z_dim*2
        )
        self.decoder = nn.Sequential(
            nn.Linear(z_dim, 32),               # B, 32
            View((-1, 32, 1, 1)),               # B, 32,  1,  1
            nn.ReLU(True),
            nn.ConvTranspose2d(32, 16, 4),      # B, 16,  4,  4
            nn.ReLU(True),
            nn.ConvTranspose2d(16, 8, 4, 2, 1),  # B,  8,  8,  8
            nn.ReLU(True),
            nn.ConvTranspose2d(8, nc, 4, 2, 1),  # B, nc, 16, 16
        )
        self.weight_init()

    def weight_init(self):
        for block in self._modules:
            for m in self._modules[block]:
                kaiming_init(m)

    def forward(self, x):
        distributions = self._encode(x)
        mu = distributions[:, :self.z_dim]
        logvar = distributions[:, self.z_dim:]
        z = reparametrize(mu, logvar)
        x_recon = self._decode(z)
        return x_recon, mu, logvar

    def _encode(self, x):
        return self.encoder(x)

    def _decode(self, z):
        return self.decoder(z)


def reconstruction_loss(x, x_recon, distribution):
    batch_size = x.size(0)
    assert batch_size != 0
    if distribution == 'bernoulli':
        recon_loss = F.binary_cross_entropy_with_logits(
            x_recon, x, size_average=False).div(batch_size)
    elif distribution == 'gaussian':
        x_recon = F.sigmoid(x_recon)
        recon_loss = F.mse_loss(x_recon, x, size_average=False).div(batch_size)
    else:
        recon_loss = None
    return recon_loss


def kl_divergence(mu, logvar):
    batch_size = mu.size(0)
    assert batch_size != 0
    if mu.data.ndimension() == 4:
        mu = mu.view(mu.size(0), mu.size(1))
    if logvar.data.ndimension() == 4:
        logvar = logvar.view(logvar.size(0), logvar.size(1))
    klds = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp())
    total_kld = klds.sum(1).mean(0, True)
    dimension_wise_kld = klds.mean(0)
    mean_kld = klds.mean(1).mean(0, True)
    return total_kld, dimension_wise_kld, mean_kld


class FactorVAE1(nn.Module):
    def __init__(self, z_dim=4):
        super(FactorVAE1, self).__init__()
        self.z_dim = z_dim
        self.encode = nn.Sequential(
            nn.Conv2d(1, 8, 4, 2, 1), nn.ReLU(True),
            nn.Conv2d(8, 16, 4, 2, 1), nn.ReLU(True),
            nn.Conv2d(16, 32, 4, 1), nn.ReLU(True),
            nn.Conv2d(32, 2 * z_dim, 1),
        )
        self.decode = nn.Sequential(
            nn.Conv2d(z_dim, 32, 1), nn.ReLU(True),
            nn.ConvTranspose2d(32, 16, 4), nn.ReLU(True),
            nn.ConvTranspose2d(16, 8, 4, 2, 1), nn.ReLU(True),
            nn.ConvTranspose2d(8, 1, 4, 2, 1),
        )
        self.weight_init()

    def weight_init(self, mode='normal'):
        if mode == 'kaiming':
            initializer = kaiming_init
        elif mode == 'normal':
            initializer = normal_init
        for block in self._modules:
            for m in self._modules[block]:
                initializer(m)

    def reparametrize(self, mu, logvar):
        std = logvar.mul(0.5).exp()
        eps = std.data.new(std.size()).normal_()
        return eps.mul(std).add_(mu)

    def forward(self, x, no_dec=False):
        stats = self.encode(x)
        mu = stats[:, :self.z_dim]
        logvar = stats[:, self.z_dim:]
        z = self.reparametrize(mu, logvar)
        if no_dec:
            return z.squeeze()
        else:
            x_recon = self.decode(z).view(x.size())
            return x_recon, mu, logvar, z.squeeze()


class Discriminator(nn.Module):
    def __init__(self, z_dim):
        super(Discriminator, self).__init__()
        self.z_dim = z_dim
        self.net = nn.Sequential(
            nn.Linear(z_dim, 32), nn.LeakyReLU(0.2, True),
            nn.Linear(32, 32), nn.LeakyReLU(0.2, True),
            nn.Linear(32, 2),
        )
        self.weight_init()

    def weight_init(self, mode='normal'):
        if mode == 'kaiming':
            initializer = kaiming_init
        elif mode == 'normal':
            initializer = normal_init
        for block in self._modules:
            for m in self._modules[block]:
                initializer(m)

    def forward(self, z):
        return self.net(z).squeeze()


def recon_loss(x, x_recon):
    n = x.size(0)
    loss = F.binary_cross_entropy_with_logits(x_recon, x, size_average=False).div(n)
    return loss


def kl_div_factor(mu, logvar):
    kld = -0.5 * (1 + logvar - mu ** 2 - logvar.exp()).sum(1).mean()
    return kld


def permute_dims(z):
    assert z.dim() == 2
    B, _ = z.size()
    perm_z = []
    for z_j in z.split(1, 1):
        perm = torch.randperm(B).to(z.device)
        perm_z_j = z_j[perm]
        perm_z.append(perm_z_j)
    return torch.cat(perm_z, 1)


def blobs(n):
    yy, xx = torch.meshgrid(torch.arange(16.), torch.arange(16.), indexing="ij")
    c = torch.rand(n, 2, 1, 1) * 10 + 3
    r = torch.rand(n, 1, 1) * 2 + 2
    img = ((yy - c[:, 0]) ** 2 + (xx - c[:, 1]) ** 2 < r ** 2).float()
    return img.unsqueeze(1)


def main():
    torch.manual_seed(0)
    data = blobs(32)
    print("data", tuple(data.shape), data.mean().item())
    for objective in ('H', 'B'):
        net = BetaVAE_H(z_dim=4, nc=1)
        opt = optim.Adam(net.parameters(), lr=1e-3, betas=(0.9, 0.999))
        beta, gamma, C_max, C_stop_iter = 4, 100, torch.FloatTensor([2.0]), 10
        for global_iter in range(1, 6):
            x = data[(global_iter % 4) * 8:(global_iter % 4 + 1) * 8]
            x_recon, mu, logvar = net(x)
            rl = reconstruction_loss(x, x_recon, 'bernoulli')
            total_kld, dim_wise_kld, mean_kld = kl_divergence(mu, logvar)
            if objective == 'H':
                beta_vae_loss = rl + beta * total_kld
            elif objective == 'B':
                C = torch.clamp(C_max / C_stop_iter * global_iter, 0, C_max.data[0])
                beta_vae_loss = rl + gamma * (total_kld - C).abs()
            opt.zero_grad()
            beta_vae_loss.backward()
            opt.step()
            print("%s iter %d recon %.4f kld %.4f loss %.4f" % (
                objective, global_iter, rl.item(), total_kld.item(), beta_vae_loss.item()))
        print("dim kld", dim_wise_kld.detach(), mean_kld.shape)
        print("gaussian recon", reconstruction_loss(x, x_recon, 'gaussian').item())
        with torch.no_grad():
            z = torch.zeros(3, 4)
            z[:, 0] = torch.tensor([-2., 0., 2.])
            trav = F.sigmoid(net._decode(z))
            print("traverse", tuple(trav.shape), trav.mean(dim=(1, 2, 3)).tolist())

    torch.manual_seed(1)
    VAE, D = FactorVAE1(4), Discriminator(4)
    optim_VAE = optim.Adam(VAE.parameters(), lr=1e-4, betas=(0.9, 0.999))
    optim_D = optim.Adam(D.parameters(), lr=1e-4, betas=(0.5, 0.9))
    ones = torch.ones(8, dtype=torch.long)
    zeros = torch.zeros(8, dtype=torch.long)
    z = torch.arange(12.).view(4, 3)
    print("permute_dims", permute_dims(z).tolist())
    for it in range(4):
        x_true1 = data[it * 8:(it + 1) * 8]
        x_true2 = data[((it + 1) % 4) * 8:((it + 1) % 4 + 1) * 8]
        x_recon, mu, logvar, z = VAE(x_true1)
        vae_recon_loss = recon_loss(x_true1, x_recon)
        vae_kld = kl_div_factor(mu, logvar)
        D_z = D(z)
        vae_tc_loss = (D_z[:, :1] - D_z[:, 1:]).mean()
        vae_loss = vae_recon_loss + vae_kld + 6.4 * vae_tc_loss
        optim_VAE.zero_grad()
        vae_loss.backward(retain_graph=True)
        if it == 0:
            # the repo's order: VAE step, then D's backward through the old graph
            optim_VAE.step()
            z_prime = VAE(x_true2, no_dec=True)
            z_pperm = permute_dims(z_prime).detach()
            D_z_pperm = D(z_pperm)
            D_tc_loss = 0.5 * (F.cross_entropy(D_z, zeros) + F.cross_entropy(D_z_pperm, ones))
            optim_D.zero_grad()
            try:
                D_tc_loss.backward()
            except RuntimeError as e:
                print(type(e).__name__, str(e).split(". Hint")[0])
            continue
        z_prime = VAE(x_true2, no_dec=True)
        z_pperm = permute_dims(z_prime).detach()
        D_z_pperm = D(z_pperm)
        D_tc_loss = 0.5 * (F.cross_entropy(D_z.detach(), zeros)
                           + F.cross_entropy(D_z_pperm, ones))
        D_tc_loss = D_tc_loss + 0.5 * F.cross_entropy(D(z.detach()), zeros)
        optim_D.zero_grad()
        D_tc_loss.backward()
        optim_VAE.step()
        optim_D.step()
        soft_D_z = F.softmax(D_z, 1)[:, :1].detach()
        soft_D_z_pperm = F.softmax(D_z_pperm, 1)[:, :1].detach()
        D_acc = ((soft_D_z >= 0.5).sum() + (soft_D_z_pperm < 0.5).sum()).float()
        D_acc /= 2 * 8
        print("factor it %d recon %.4f kld %.4f tc %.4f D_tc %.4f acc %.3f" % (
            it, vae_recon_loss.item(), vae_kld.item(), vae_tc_loss.item(),
            D_tc_loss.item(), D_acc.item()))


if __name__ == "__main__":
    main()
