"""A conditional GAN (eriklindernoren/PyTorch-GAN cgan.py idioms) on 1-D data: each class is a
Gaussian with its own mean; label Embedding + torch.cat, BCEWithLogitsLoss, Adam(0.5, 0.999)."""
import importlib
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

n_classes, latent_dim, data_dim, batch_size = 3, 4, 8, 16
cuda = True if torch.cuda.is_available() else False
torch.manual_seed(0)
np.random.seed(0)
class_means = torch.tensor([-2.0, 0.0, 2.0])


def sample_real(n):
    labels = torch.randint(0, n_classes, (n,))
    x = class_means[labels].unsqueeze(1) + 0.5 * torch.randn(n, data_dim)
    return x, labels


class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()
        self.label_emb = nn.Embedding(n_classes, n_classes)

        def block(in_feat, out_feat, normalize=True):
            layers = [nn.Linear(in_feat, out_feat)]
            if normalize:
                layers.append(nn.BatchNorm1d(out_feat, 0.8))
            layers.append(nn.LeakyReLU(0.2, inplace=True))
            return layers

        self.model = nn.Sequential(
            *block(latent_dim + n_classes, 32, normalize=False),
            *block(32, 64),
            nn.Linear(64, data_dim),
        )

    def forward(self, noise, labels):
        gen_input = torch.cat((self.label_emb(labels), noise), -1)
        return self.model(gen_input)


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.label_embedding = nn.Embedding(n_classes, n_classes)
        self.model = nn.Sequential(
            nn.Linear(n_classes + data_dim, 64),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(64, 64),
            nn.Dropout(0.4),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(64, 1),
        )

    def forward(self, x, labels):
        d_in = torch.cat((x.view(x.size(0), -1), self.label_embedding(labels)), -1)
        return self.model(d_in)


adversarial_loss = torch.nn.BCEWithLogitsLoss()
generator = Generator()
discriminator = Discriminator()
print(generator)
print(discriminator)
optimizer_G = torch.optim.Adam(generator.parameters(), lr=0.0002, betas=(0.5, 0.999))
optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=0.0002, betas=(0.5, 0.999))
FloatTensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
LongTensor = torch.cuda.LongTensor if cuda else torch.LongTensor

for i in range(12):
    real_x, labels = sample_real(batch_size)
    valid = FloatTensor(batch_size, 1).fill_(1.0)
    fake = FloatTensor(batch_size, 1).fill_(0.0)
    real_x = real_x.type(FloatTensor)
    labels = labels.type(LongTensor)

    optimizer_G.zero_grad()
    z = FloatTensor(np.random.normal(0, 1, (batch_size, latent_dim)))
    gen_labels = LongTensor(np.random.randint(0, n_classes, batch_size))
    gen_x = generator(z, gen_labels)
    validity = discriminator(gen_x, gen_labels)
    g_loss = adversarial_loss(validity, valid)
    g_loss.backward()
    optimizer_G.step()

    optimizer_D.zero_grad()
    validity_real = discriminator(real_x, labels)
    d_real_loss = adversarial_loss(validity_real, valid)
    validity_fake = discriminator(gen_x.detach(), gen_labels)
    d_fake_loss = adversarial_loss(validity_fake, fake)
    d_loss = (d_real_loss + d_fake_loss) / 2
    d_loss.backward()
    optimizer_D.step()
    print("[Batch %d/%d] [D loss: %f] [G loss: %f]" % (i, 12, d_loss.item(), g_loss.item()))

generator.eval()
with torch.no_grad():
    z = torch.randn(n_classes * 2, latent_dim)
    labels = torch.arange(n_classes).repeat_interleave(2)
    samples = generator(z, labels)
print(labels)
print(samples.mean(dim=1))
print(torch.sigmoid(discriminator(samples, labels)).squeeze(1))
print(z.dtype, gen_labels.dtype, valid.dtype, type(valid).__name__)
print(f"RESULT: {d_loss.item():.5f} {g_loss.item():.5f}")
