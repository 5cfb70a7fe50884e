"""A denoising convolutional autoencoder (the classic MNIST blog/course version), shrunk:
synthetic 16x16 images, Gaussian noise, Conv2d/MaxPool2d encoder, ConvTranspose2d decoder."""
import importlib
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(42)
np.random.seed(42)
images = torch.rand(40, 1, 16, 16)
train_data = torch.utils.data.TensorDataset(images, torch.zeros(40, dtype=torch.long))
train_loader = torch.utils.data.DataLoader(train_data, batch_size=10, shuffle=True,
                                           num_workers=0)


class ConvDenoiser(nn.Module):
    def __init__(self):
        super(ConvDenoiser, self).__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 8, 3, padding=1)
        self.conv3 = nn.Conv2d(8, 4, 3, padding=1)
        self.pool = nn.MaxPool2d(2, 2)
        self.t_conv1 = nn.ConvTranspose2d(4, 4, 2, stride=2)
        self.t_conv2 = nn.ConvTranspose2d(4, 8, 2, stride=2)
        self.t_conv3 = nn.ConvTranspose2d(8, 16, 2, stride=2)
        self.conv_out = nn.Conv2d(16, 1, 3, padding=1)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = self.pool(x)
        x = F.relu(self.conv2(x))
        x = self.pool(x)
        x = F.relu(self.conv3(x))
        x = self.pool(x)
        x = F.relu(self.t_conv1(x))
        x = F.relu(self.t_conv2(x))
        x = F.relu(self.t_conv3(x))
        x = F.sigmoid(self.conv_out(x))
        return x


model = ConvDenoiser()
print(model)
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
noise_factor = 0.5
n_epochs = 3
for epoch in range(1, n_epochs + 1):
    train_loss = 0.0
    for data in train_loader:
        images, _ = data
        noisy_imgs = images + noise_factor * torch.randn(*images.shape)
        noisy_imgs = np.clip(noisy_imgs, 0., 1.)
        optimizer.zero_grad()
        outputs = model(noisy_imgs)
        loss = criterion(outputs, images)
        loss.backward()
        optimizer.step()
        train_loss += loss.item() * images.size(0)
    train_loss = train_loss / len(train_loader)
    print('Epoch: {} \tTraining Loss: {:.6f}'.format(epoch, train_loss))

dataiter = iter(train_loader)
images, labels = next(dataiter)
noisy_imgs = images + noise_factor * torch.randn(*images.shape)
noisy_imgs = torch.clamp(noisy_imgs, 0., 1.)
output = model(noisy_imgs)
noisy_imgs = noisy_imgs.numpy()
output = output.view(10, 1, 16, 16)
output = output.detach().numpy()
print(noisy_imgs.shape, noisy_imgs.dtype, output.shape, output.dtype)
print(np.round(output[0, 0, :3, :3], 4))


# the linear variant with nn.Sequential encoder/decoder and dropout-noise corruption
class DAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Flatten(), nn.Linear(256, 64), nn.ReLU(True),
                                     nn.Linear(64, 16))
        self.decoder = nn.Sequential(nn.Linear(16, 64), nn.ReLU(True), nn.Linear(64, 256),
                                     nn.Tanh(), nn.Unflatten(1, (1, 16, 16)))

    def forward(self, x):
        return self.decoder(self.encoder(x))


dae = DAE()
print(dae)
opt = torch.optim.Adam(dae.parameters(), lr=1e-3, weight_decay=1e-5)
corrupt = nn.Dropout(0.25)
for step in range(5):
    img = images * 2 - 1
    out = dae(corrupt(img))
    loss = nn.functional.mse_loss(out, img)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step [{step + 1}/5], loss:{loss.item():.4f}")
dae.eval()
print(dae.encoder(img[:2]))

# the ConvTranspose2d docstring's idiom: undo a strided conv exactly with output_size
downsample = nn.Conv2d(1, 4, 3, stride=2, padding=1)
upsample = nn.ConvTranspose2d(4, 1, 3, stride=2, padding=1)
h = downsample(images)
print(h.size())
output = upsample(h, output_size=images.size())
print(output.size(), f"{F.mse_loss(output, images).item():.5f}")
try:
    upsample(h, output_size=[20, 20])
except ValueError as err:
    print("ValueError:", err)
print(f"RESULT: {train_loss:.6f}")
