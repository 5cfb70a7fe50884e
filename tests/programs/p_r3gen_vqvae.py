"""VQ-VAE (zalandoresearch/pytorch-vq-vae and rosinality/vq-vae-2-pytorch): VectorQuantizer with
distances by expansion and by torch.cdist, argmin, scatter_ one-hot encodings, commitment loss,
straight-through estimator (inputs + (quantized - inputs).detach()), perplexity, the EMA codebook
update, residual stacks and ConvTranspose2d decoder, on synthetic 8x8 images."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class VectorQuantizer(nn.Module):
    def __init__(self, num_embeddings, embedding_dim, commitment_cost):
        super(VectorQuantizer, self).__init__()
        self._embedding_dim = embedding_dim
        self._num_embeddings = num_embeddings
        self._embedding = nn.Embedding(self._num_embeddings, self._embedding_dim)
        self._embedding.weight.data.uniform_(-1 / self._num_embeddings, 1 / self._num_embeddings)
        self._commitment_cost = commitment_cost

    def forward(self, inputs):
        inputs = inputs.permute(0, 2, 3, 1).contiguous()
        input_shape = inputs.shape
        flat_input = inputs.view(-1, self._embedding_dim)
        distances = (torch.sum(flat_input**2, dim=1, keepdim=True)
                     + torch.sum(self._embedding.weight**2, dim=1)
                     - 2 * torch.matmul(flat_input, self._embedding.weight.t()))
        encoding_indices = torch.argmin(distances, dim=1).unsqueeze(1)
        encodings = torch.zeros(encoding_indices.shape[0], self._num_embeddings,
                                device=inputs.device)
        encodings.scatter_(1, encoding_indices, 1)
        quantized = torch.matmul(encodings, self._embedding.weight).view(input_shape)
        e_latent_loss = F.mse_loss(quantized.detach(), inputs)
        q_latent_loss = F.mse_loss(quantized, inputs.detach())
        loss = q_latent_loss + self._commitment_cost * e_latent_loss
        quantized = inputs + (quantized - inputs).detach()
        avg_probs = torch.mean(encodings, dim=0)
        perplexity = torch.exp(-torch.sum(avg_probs * torch.log(avg_probs + 1e-10)))
        return loss, quantized.permute(0, 3, 1, 2).contiguous(), perplexity, encodings


class VectorQuantizerEMA(nn.Module):
    def __init__(self, num_embeddings, embedding_dim, commitment_cost, decay, epsilon=1e-5):
        super(VectorQuantizerEMA, self).__init__()
        self._embedding_dim = embedding_dim
        self._num_embeddings = num_embeddings
        self._embedding = nn.Embedding(self._num_embeddings, self._embedding_dim)
        self._embedding.weight.data.normal_()
        self._commitment_cost = commitment_cost
        self.register_buffer('_ema_cluster_size', torch.zeros(num_embeddings))
        self._ema_w = nn.Parameter(torch.Tensor(num_embeddings, self._embedding_dim))
        self._ema_w.data.normal_()
        self._decay = decay
        self._epsilon = epsilon

    def forward(self, inputs):
        inputs = inputs.permute(0, 2, 3, 1).contiguous()
        input_shape = inputs.shape
        flat_input = inputs.view(-1, self._embedding_dim)
        distances = torch.cdist(flat_input, self._embedding.weight) ** 2
        encoding_indices = torch.argmin(distances, dim=1).unsqueeze(1)
        encodings = torch.zeros(encoding_indices.shape[0], self._num_embeddings,
                                device=inputs.device)
        encodings.scatter_(1, encoding_indices, 1)
        quantized = torch.matmul(encodings, self._embedding.weight).view(input_shape)
        if self.training:
            self._ema_cluster_size = self._ema_cluster_size * self._decay + \
                (1 - self._decay) * torch.sum(encodings, 0)
            n = torch.sum(self._ema_cluster_size.data)
            self._ema_cluster_size = (
                (self._ema_cluster_size + self._epsilon)
                / (n + self._num_embeddings * self._epsilon) * n)
            dw = torch.matmul(encodings.t(), flat_input)
            self._ema_w = nn.Parameter(self._ema_w * self._decay + (1 - self._decay) * dw)
            self._embedding.weight = nn.Parameter(self._ema_w / self._ema_cluster_size.unsqueeze(1))
        e_latent_loss = F.mse_loss(quantized.detach(), inputs)
        loss = self._commitment_cost * e_latent_loss
        quantized = inputs + (quantized - inputs).detach()
        avg_probs = torch.mean(encodings, dim=0)
        perplexity = torch.exp(-torch.sum(avg_probs * torch.log(avg_probs + 1e-10)))
        return loss, quantized.permute(0, 3, 1, 2).contiguous(), perplexity, encodings


class Residual(nn.Module):
    def __init__(self, in_channels, num_hiddens, num_residual_hiddens):
        super(Residual, self).__init__()
        self._block = nn.Sequential(
            nn.ReLU(True),
            nn.Conv2d(in_channels=in_channels, out_channels=num_residual_hiddens,
                      kernel_size=3, stride=1, padding=1, bias=False),
            nn.ReLU(True),
            nn.Conv2d(in_channels=num_residual_hiddens, out_channels=num_hiddens,
                      kernel_size=1, stride=1, bias=False))

    def forward(self, x):
        return x + self._block(x)


class ResidualStack(nn.Module):
    def __init__(self, in_channels, num_hiddens, num_residual_layers, num_residual_hiddens):
        super(ResidualStack, self).__init__()
        self._num_residual_layers = num_residual_layers
        self._layers = nn.ModuleList([Residual(in_channels, num_hiddens, num_residual_hiddens)
                                      for _ in range(self._num_residual_layers)])

    def forward(self, x):
        for i in range(self._num_residual_layers):
            x = self._layers[i](x)
        return F.relu(x)


class Model(nn.Module):
    def __init__(self, num_hiddens, num_residual_layers, num_residual_hiddens, num_embeddings,
                 embedding_dim, commitment_cost, decay=0):
        super(Model, self).__init__()
        self._encoder = nn.Sequential(
            nn.Conv2d(3, num_hiddens // 2, 4, 2, 1), nn.ReLU(),
            nn.Conv2d(num_hiddens // 2, num_hiddens, 3, 1, 1),
            ResidualStack(num_hiddens, num_hiddens, num_residual_layers, num_residual_hiddens))
        self._pre_vq_conv = nn.Conv2d(in_channels=num_hiddens, out_channels=embedding_dim,
                                      kernel_size=1, stride=1)
        if decay > 0.0:
            self._vq_vae = VectorQuantizerEMA(num_embeddings, embedding_dim, commitment_cost, decay)
        else:
            self._vq_vae = VectorQuantizer(num_embeddings, embedding_dim, commitment_cost)
        self._decoder = nn.Sequential(
            nn.Conv2d(embedding_dim, num_hiddens, 3, 1, 1),
            ResidualStack(num_hiddens, num_hiddens, num_residual_layers, num_residual_hiddens),
            nn.ConvTranspose2d(num_hiddens, 3, kernel_size=4, stride=2, padding=1))

    def forward(self, x):
        z = self._encoder(x)
        z = self._pre_vq_conv(z)
        loss, quantized, perplexity, _ = self._vq_vae(z)
        x_recon = self._decoder(quantized)
        return loss, x_recon, perplexity


torch.manual_seed(0)
data = torch.rand(8, 3, 8, 8) - 0.5
data_variance = data.var()
print(f"data_variance {data_variance.item():.6f}")
for decay in [0.0, 0.99]:
    torch.manual_seed(1)
    model = Model(16, 2, 8, 12, 4, 0.25, decay=decay)
    if decay == 0.0:
        print(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, amsgrad=False)
    model.train()
    for i in range(6):
        data_b = data[(i % 2) * 4:(i % 2) * 4 + 4]
        optimizer.zero_grad()
        vq_loss, data_recon, perplexity = model(data_b)
        recon_error = F.mse_loss(data_recon, data_b) / data_variance
        loss = recon_error + vq_loss
        loss.backward()
        optimizer.step()
        print('%d recon_error: %.4f perplexity: %.3f vq %.5f' % (
            i, recon_error.item(), perplexity.item(), vq_loss.item()))
    print(sorted(model.state_dict().keys())[-4:])

model.eval()
with torch.no_grad():
    z = model._pre_vq_conv(model._encoder(data[:2]))
    _, q, perp, enc = model._vq_vae(z)
print(z.shape, q.shape, enc.shape, enc.sum(0))
print(enc.argmax(1).view(2, 4, 4))

# straight-through gradient: d quantized / d inputs is the identity
inputs = torch.randn(2, 4, 3, 3, requires_grad=True)
vq = VectorQuantizer(5, 4, 0.25)
loss, quantized, perplexity, encodings = vq(inputs)
(quantized * torch.arange(4.0).view(1, 4, 1, 1)).sum().backward()
print(inputs.grad[0, :, 0, 0], quantized.grad_fn.__class__.__name__)
print(vq._embedding.weight.grad)
loss.backward()
print(vq._embedding.weight.grad.abs().sum() > 0, f"{perplexity.item():.4f}")
# rosinality-style: embed_code via F.embedding and codebook from cdist argmin over a 1d view
embed = torch.randn(4, 5)
flatten = torch.randn(6, 4)
dist = (flatten.pow(2).sum(1, keepdim=True) - 2 * flatten @ embed
        + embed.pow(2).sum(0, keepdim=True))
_, embed_ind = (-dist).max(1)
embed_onehot = F.one_hot(embed_ind, 5).type(flatten.dtype)
print(embed_ind, embed_onehot.dtype, F.embedding(embed_ind, embed.transpose(0, 1)).shape)
print(torch.equal(embed_ind, torch.cdist(flatten, embed.t()).argmin(1)))
print("RESULT:", f"{loss.item():.5f}")
