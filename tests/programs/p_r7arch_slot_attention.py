"""Slot Attention, shrunk: lucidrains/slot-attention slot_attention/slot_attention.py
(SlotAttention: Gaussian slot init with a xavier-initialised log-sigma, softmax over slots + eps,
weighted mean, GRUCell update, residual MLP) inside evelinehong/slot-attention-pytorch model.py's
SlotAttentionAutoEncoder (build_grid, SoftPositionEmbed, CNN Encoder, spatial-broadcast
ConvTranspose2d Decoder, a LayerNorm built inside forward, softmax masks over slots) and train.py's
loop (Adam, manual lr warmup + exponential decay in param_groups, MSE). 8x8 images, hid_dim 8."""
# ruff: noqa: E501, F841  (upstream's own line lengths and names, kept)
import importlib
import os

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
init = nn.init
F = importlib.import_module(LIB + ".nn.functional")
device = torch.device("cpu")


class SlotAttention(nn.Module):
    def __init__(self, num_slots, dim, iters=3, eps=1e-8, hidden_dim=128):
        super().__init__()
        self.num_slots = num_slots
        self.iters = iters
        self.eps = eps
        self.scale = dim ** -0.5

        self.slots_mu = nn.Parameter(torch.randn(1, 1, dim))

        self.slots_logsigma = nn.Parameter(torch.zeros(1, 1, dim))
        init.xavier_uniform_(self.slots_logsigma)

        self.to_q = nn.Linear(dim, dim)
        self.to_k = nn.Linear(dim, dim)
        self.to_v = nn.Linear(dim, dim)

        self.gru = nn.GRUCell(dim, dim)

        hidden_dim = max(dim, hidden_dim)

        self.mlp = nn.Sequential(
            nn.Linear(dim, hidden_dim),
            nn.ReLU(inplace=True),
            nn.Linear(hidden_dim, dim)
        )

        self.norm_input = nn.LayerNorm(dim)
        self.norm_slots = nn.LayerNorm(dim)
        self.norm_pre_ff = nn.LayerNorm(dim)

    def forward(self, inputs, num_slots=None):
        b, n, d, device, dtype = *inputs.shape, inputs.device, inputs.dtype
        n_s = num_slots if num_slots is not None else self.num_slots

        mu = self.slots_mu.expand(b, n_s, -1)
        sigma = self.slots_logsigma.exp().expand(b, n_s, -1)

        slots = mu + sigma * torch.randn(mu.shape, device=device, dtype=dtype)

        inputs = self.norm_input(inputs)
        k, v = self.to_k(inputs), self.to_v(inputs)

        for _ in range(self.iters):
            slots_prev = slots

            slots = self.norm_slots(slots)
            q = self.to_q(slots)

            dots = torch.einsum('bid,bjd->bij', q, k) * self.scale
            attn = dots.softmax(dim=1) + self.eps

            attn = attn / attn.sum(dim=-1, keepdim=True)

            updates = torch.einsum('bjd,bij->bid', v, attn)

            slots = self.gru(
                updates.reshape(-1, d),
                slots_prev.reshape(-1, d)
            )

            slots = slots.reshape(b, -1, d)
            slots = slots + self.mlp(self.norm_pre_ff(slots))

        return slots


def build_grid(resolution):
    ranges = [np.linspace(0., 1., num=res) for res in resolution]
    grid = np.meshgrid(*ranges, sparse=False, indexing="ij")
    grid = np.stack(grid, axis=-1)
    grid = np.reshape(grid, [resolution[0], resolution[1], -1])
    grid = np.expand_dims(grid, axis=0)
    grid = grid.astype(np.float32)
    return torch.from_numpy(np.concatenate([grid, 1.0 - grid], axis=-1)).to(device)


class SoftPositionEmbed(nn.Module):
    def __init__(self, hidden_size, resolution):
        super().__init__()
        self.embedding = nn.Linear(4, hidden_size, bias=True)
        self.grid = build_grid(resolution)

    def forward(self, inputs):
        grid = self.embedding(self.grid)
        return inputs + grid


class Encoder(nn.Module):
    def __init__(self, resolution, hid_dim):
        super().__init__()
        self.conv1 = nn.Conv2d(3, hid_dim, 5, padding=2)
        self.conv2 = nn.Conv2d(hid_dim, hid_dim, 5, padding=2)
        self.encoder_pos = SoftPositionEmbed(hid_dim, resolution)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = x.permute(0, 2, 3, 1)
        x = self.encoder_pos(x)
        x = torch.flatten(x, 1, 2)
        return x


class Decoder(nn.Module):
    def __init__(self, hid_dim, resolution):
        super().__init__()
        self.conv1 = nn.ConvTranspose2d(hid_dim, hid_dim, 5, stride=(2, 2), padding=2, output_padding=1).to(device)
        self.conv2 = nn.ConvTranspose2d(hid_dim, hid_dim, 5, stride=(2, 2), padding=2, output_padding=1).to(device)
        self.conv5 = nn.ConvTranspose2d(hid_dim, hid_dim, 5, stride=(1, 1), padding=2).to(device)
        self.conv6 = nn.ConvTranspose2d(hid_dim, 4, 3, stride=(1, 1), padding=1)
        self.decoder_initial_size = (2, 2)
        self.decoder_pos = SoftPositionEmbed(hid_dim, self.decoder_initial_size)
        self.resolution = resolution

    def forward(self, x):
        x = self.decoder_pos(x)
        x = x.permute(0, 3, 1, 2)
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = self.conv5(x)
        x = F.relu(x)
        x = self.conv6(x)
        x = x[:, :, :self.resolution[0], :self.resolution[1]]
        x = x.permute(0, 2, 3, 1)
        return x


class SlotAttentionAutoEncoder(nn.Module):
    def __init__(self, resolution, num_slots, num_iterations, hid_dim):
        super().__init__()
        self.hid_dim = hid_dim
        self.resolution = resolution
        self.num_slots = num_slots
        self.num_iterations = num_iterations

        self.encoder_cnn = Encoder(self.resolution, self.hid_dim)
        self.decoder_cnn = Decoder(self.hid_dim, self.resolution)

        self.fc1 = nn.Linear(hid_dim, hid_dim)
        self.fc2 = nn.Linear(hid_dim, hid_dim)

        self.slot_attention = SlotAttention(
            num_slots=self.num_slots,
            dim=hid_dim,
            iters=self.num_iterations,
            eps=1e-8,
            hidden_dim=16)

    def forward(self, image):
        x = self.encoder_cnn(image)  # CNN Backbone.
        x = nn.LayerNorm(x.shape[1:]).to(device)(x)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)  # Feedforward network on set.

        slots = self.slot_attention(x)
        slots = slots.reshape((-1, slots.shape[-1])).unsqueeze(1).unsqueeze(2)
        slots = slots.repeat((1, 2, 2, 1))

        x = self.decoder_cnn(slots)
        recons, masks = x.reshape(image.shape[0], -1, x.shape[1], x.shape[2], x.shape[3]).split([3, 1], dim=-1)
        masks = nn.Softmax(dim=1)(masks)
        recon_combined = torch.sum(recons * masks, dim=1)
        recon_combined = recon_combined.permute(0, 3, 1, 2)
        return recon_combined, recons, masks, slots


torch.manual_seed(0)

# lucidrains README usage
slot_attn = SlotAttention(num_slots=5, dim=16, iters=3)
inputs = torch.randn(2, 12, 16)
slots = slot_attn(inputs)
print("slots", slots.shape, slots.grad_fn.name())
print("slots[0,0]", slots[0, 0])
slots.pow(2).mean().backward()
print("mu grad", "%.6f" % slot_attn.slots_mu.grad.norm().item(),
      "logsigma grad", "%.6f" % slot_attn.slots_logsigma.grad.norm().item(),
      "gru grad", "%.6f" % slot_attn.gru.weight_hh.grad.norm().item())
print("num_slots override", slot_attn(inputs, num_slots=3).shape)
print("keys", list(slot_attn.state_dict().keys()))

# train.py (shrunk): synthetic "CLEVR" = coloured squares on a dark background
resolution = (8, 8)
model = SlotAttentionAutoEncoder(resolution, num_slots=3, num_iterations=2, hid_dim=8).to(device)
print("params", sum(p.numel() for p in model.parameters()))
criterion = nn.MSELoss()
params = [{'params': model.parameters()}]
learning_rate, warmup_steps, decay_rate, decay_steps = 4e-3, 3, 0.5, 10
optimizer = torch.optim.Adam(params, lr=learning_rate)

g = torch.Generator().manual_seed(1)
images = torch.zeros(4, 3, 8, 8)
for i in range(4):
    for _ in range(2):
        r, c = torch.randint(0, 6, (2,), generator=g).tolist()
        images[i, :, r:r + 3, c:c + 3] = torch.rand(3, 1, 1, generator=g)

i = 0
for epoch in range(6):
    model.train()
    i += 1
    if i < warmup_steps:
        learning_rate = 4e-3 * (i / warmup_steps)
    else:
        learning_rate = 4e-3
    learning_rate = learning_rate * (decay_rate ** (i / decay_steps))
    optimizer.param_groups[0]['lr'] = learning_rate

    recon_combined, recons, masks, slots = model(images)
    loss = criterion(recon_combined, images)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("Epoch: {}, Loss: {:.6f}, lr {:.6f}".format(epoch, loss.item(), learning_rate))

print("recons", recons.shape, "masks", masks.shape, "slots", slots.shape)
print("mask sums", masks.sum(dim=1).mean().item())
print("mask[0,:,0,0]", masks[0, :, 0, 0, 0])
print("grad_fns", recon_combined.grad_fn.name(), masks.grad_fn.name())
print("decoder conv1 grad", "%.6f" % model.decoder_cnn.conv1.weight.grad.norm().item())
print("sd", [k for k in model.state_dict() if "embedding" in k])
