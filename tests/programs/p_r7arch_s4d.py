"""S4D, shrunk from state-spaces/s4: models/s4/s4d.py (DropoutNd, S4DKernel: view_as_real C
parameter, log_dt / log_A_real / A_imag registered with per-parameter `_optim` hyperparameters,
the complex Vandermonde kernel; S4D: FFT convolution via rfft/irfft at 2L, D skip, GELU,
Conv1d + GLU output) and example.py (S4Model with Dropout1d and post-norm, setup_optimizer's
param groups from `_optim`, CosineAnnealingLR). Synthetic sequences instead of sequential CIFAR,
plus a check that the convolution kernel equals the ZOH recurrence run step by step."""
# ruff: noqa: E501  (upstream's own line lengths and names, kept)
import importlib
import math
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
optim = torch.optim
F = importlib.import_module(LIB + ".nn.functional")


class DropoutNd(nn.Module):
    def __init__(self, p: float = 0.5, tie=True, transposed=True):
        """
        tie: tie dropout mask across sequence lengths (Dropout1d/2d/3d)
        """
        super().__init__()
        if p < 0 or p >= 1:
            raise ValueError("dropout probability has to be in [0, 1), " "but got {}".format(p))
        self.p = p
        self.tie = tie
        self.transposed = transposed
        self.binomial = torch.distributions.binomial.Binomial(probs=1 - self.p)

    def forward(self, X):
        """X: (batch, dim, lengths...)."""
        if self.training:
            if not self.transposed:
                X = X.transpose(1, -1)  # rearrange(X, 'b ... d -> b d ...') for 3-d X
            # binomial = torch.distributions.binomial.Binomial(probs=1-self.p) # This is incredibly slow because of CPU -> GPU copying
            mask_shape = X.shape[:2] + (1,) * (X.ndim - 2) if self.tie else X.shape
            # mask = self.binomial.sample(mask_shape)
            mask = torch.rand(*mask_shape, device=X.device) < 1. - self.p
            X = X * mask * (1.0 / (1 - self.p))
            if not self.transposed:
                X = X.transpose(1, -1)
            return X
        return X


class S4DKernel(nn.Module):
    """Generate convolution kernel from diagonal SSM parameters."""

    def __init__(self, d_model, N=64, dt_min=0.001, dt_max=0.1, lr=None):
        super().__init__()
        # Generate dt
        H = d_model
        log_dt = torch.rand(H) * (
            math.log(dt_max) - math.log(dt_min)
        ) + math.log(dt_min)

        C = torch.randn(H, N // 2, dtype=torch.cfloat)
        self.C = nn.Parameter(torch.view_as_real(C))
        self.register("log_dt", log_dt, lr)

        log_A_real = torch.log(0.5 * torch.ones(H, N // 2))
        A_imag = math.pi * torch.arange(N // 2).repeat(H, 1)  # repeat(.., 'n -> h n', h=H)
        self.register("log_A_real", log_A_real, lr)
        self.register("A_imag", A_imag, lr)

    def forward(self, L):
        """
        returns: (..., c, L) where c is number of channels (default 1)
        """

        # Materialize parameters
        dt = torch.exp(self.log_dt)  # (H)
        C = torch.view_as_complex(self.C)  # (H N)
        A = -torch.exp(self.log_A_real) + 1j * self.A_imag  # (H N)

        # Vandermonde multiplication
        dtA = A * dt.unsqueeze(-1)  # (H N)
        K = dtA.unsqueeze(-1) * torch.arange(L, device=A.device)  # (H N L)
        C = C * (torch.exp(dtA) - 1.) / A
        K = 2 * torch.einsum('hn, hnl -> hl', C, torch.exp(K)).real

        return K

    def register(self, name, tensor, lr=None):
        """Register a tensor with a configurable learning rate and 0 weight decay"""

        if lr == 0.0:
            self.register_buffer(name, tensor)
        else:
            self.register_parameter(name, nn.Parameter(tensor))

            optim = {"weight_decay": 0.0}
            if lr is not None:
                optim["lr"] = lr
            setattr(getattr(self, name), "_optim", optim)


class S4D(nn.Module):
    def __init__(self, d_model, d_state=64, dropout=0.0, transposed=True, **kernel_args):
        super().__init__()

        self.h = d_model
        self.n = d_state
        self.d_output = self.h
        self.transposed = transposed

        self.D = nn.Parameter(torch.randn(self.h))

        # SSM Kernel
        self.kernel = S4DKernel(self.h, N=self.n, **kernel_args)

        # Pointwise
        self.activation = nn.GELU()
        # dropout_fn = nn.Dropout2d # NOTE: bugged in PyTorch 1.11
        dropout_fn = DropoutNd
        self.dropout = dropout_fn(dropout) if dropout > 0.0 else nn.Identity()

        # position-wise output transform to mix features
        self.output_linear = nn.Sequential(
            nn.Conv1d(self.h, 2 * self.h, kernel_size=1),
            nn.GLU(dim=-2),
        )

    def forward(self, u, **kwargs):  # absorbs return_output and transformer src mask
        """ Input and output shape (B, H, L) """
        if not self.transposed:
            u = u.transpose(-1, -2)
        L = u.size(-1)

        # Compute SSM Kernel
        k = self.kernel(L=L)  # (H L)

        # Convolution
        k_f = torch.fft.rfft(k, n=2 * L)  # (H L)
        u_f = torch.fft.rfft(u, n=2 * L)  # (B H L)
        y = torch.fft.irfft(u_f * k_f, n=2 * L)[..., :L]  # (B H L)

        # Compute D term in state space equation - essentially a skip connection
        y = y + u * self.D.unsqueeze(-1)

        y = self.dropout(self.activation(y))
        y = self.output_linear(y)
        if not self.transposed:
            y = y.transpose(-1, -2)
        return y, None  # Return a dummy state to satisfy this repo's interface, but this can be modified


dropout_fn = nn.Dropout1d


class S4Model(nn.Module):

    def __init__(self, d_input, d_output=10, d_model=256, n_layers=4, dropout=0.2, prenorm=False, lr=0.001):
        super().__init__()

        self.prenorm = prenorm

        # Linear encoder (d_input = 1 for grayscale and 3 for RGB)
        self.encoder = nn.Linear(d_input, d_model)

        # Stack S4 layers as residual blocks
        self.s4_layers = nn.ModuleList()
        self.norms = nn.ModuleList()
        self.dropouts = nn.ModuleList()
        for _ in range(n_layers):
            self.s4_layers.append(
                S4D(d_model, d_state=8, dropout=dropout, transposed=True, lr=min(0.001, lr))
            )
            self.norms.append(nn.LayerNorm(d_model))
            self.dropouts.append(dropout_fn(dropout))

        # Linear decoder
        self.decoder = nn.Linear(d_model, d_output)

    def forward(self, x):
        """
        Input x is shape (B, L, d_input)
        """
        x = self.encoder(x)  # (B, L, d_input) -> (B, L, d_model)

        x = x.transpose(-1, -2)  # (B, L, d_model) -> (B, d_model, L)
        for layer, norm, dropout in zip(self.s4_layers, self.norms, self.dropouts):
            # Each iteration of this loop will map (B, d_model, L) -> (B, d_model, L)

            z = x
            if self.prenorm:
                # Prenorm
                z = norm(z.transpose(-1, -2)).transpose(-1, -2)

            # Apply S4 block: we ignore the state input and output
            z, _ = layer(z)

            # Dropout on the output of the S4 block
            z = dropout(z)

            # Residual connection
            x = z + x

            if not self.prenorm:
                # Postnorm
                x = norm(x.transpose(-1, -2)).transpose(-1, -2)

        x = x.transpose(-1, -2)

        # Pooling: average pooling over the sequence length
        x = x.mean(dim=1)

        # Decode the outputs
        x = self.decoder(x)  # (B, d_model) -> (B, d_output)

        return x


def setup_optimizer(model, lr, weight_decay, epochs):
    """
    S4 requires a specific optimizer setup.
    """

    # All parameters in the model
    all_parameters = list(model.parameters())

    # General parameters don't contain the special _optim key
    params = [p for p in all_parameters if not hasattr(p, "_optim")]

    # Create an optimizer with the general parameters
    optimizer = optim.AdamW(params, lr=lr, weight_decay=weight_decay)

    # Add parameters with special hyperparameters
    hps = [getattr(p, "_optim") for p in all_parameters if hasattr(p, "_optim")]
    hps = [
        dict(s) for s in sorted(list(dict.fromkeys(frozenset(hp.items()) for hp in hps)))
    ]  # Unique dicts
    for hp in hps:
        params = [p for p in all_parameters if getattr(p, "_optim", None) == hp]
        optimizer.add_param_group(
            {"params": params, **hp}
        )

    # Create a lr scheduler
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, epochs)

    # Print optimizer info
    keys = sorted(set([k for hp in hps for k in hp.keys()]))
    for i, g in enumerate(optimizer.param_groups):
        group_hps = {key: g.get(key, None) for key in keys}
        print(' | '.join([
            f"Optimizer group {i}",
            f"{len(g['params'])} tensors",
        ] + [f"{k} {v}" for k, v in group_hps.items()]))

    return optimizer, scheduler


torch.manual_seed(0)

# the convolution kernel is the diagonal SSM (ZOH-discretised) run as a recurrence
kern = S4DKernel(3, N=8, dt_min=0.01, dt_max=0.5)
L = 6
K = kern(L)
print("kernel", K.shape, K.dtype, K.grad_fn.name())
with torch.no_grad():
    dt = torch.exp(kern.log_dt)
    A = -torch.exp(kern.log_A_real) + 1j * kern.A_imag
    dA = torch.exp(A * dt[:, None])
    dB = (dA - 1.) / A
    C = torch.view_as_complex(kern.C)
    x = torch.zeros(3, 4, dtype=torch.cfloat)
    ys = []
    for t in range(L):
        x = dA * x + dB * (1.0 if t == 0 else 0.0)
        ys.append(2 * (C * x).sum(-1).real)
    K_rec = torch.stack(ys, -1)
print("kernel == recurrence", torch.allclose(K, K_rec, atol=1e-5), K[0])
K.sum().backward()
print("C grad", kern.C.grad.shape, kern.C.grad[0, :2])
print("log_dt grad", kern.log_dt.grad, "A_imag grad", kern.A_imag.grad[0])
print("_optim", kern.log_dt._optim, hasattr(kern.C, "_optim"))
frozen = S4DKernel(2, N=4, lr=0.0)
print("lr=0 buffers", [n for n, _ in frozen.named_buffers()], [n for n, _ in frozen.named_parameters()])

try:
    DropoutNd(1.0)
except ValueError as e:
    print("ValueError", e)
d = DropoutNd(0.5)
print("dropoutnd", d(torch.ones(2, 3, 4))[:, :, 0])

# example.py, shrunk: classify whether a noisy sequence trends up or down
model = S4Model(d_input=1, d_output=2, d_model=8, n_layers=2, dropout=0.1, lr=0.01)
print("params", sum(p.numel() for p in model.parameters()))
print("keys", [k for k in model.state_dict() if k.startswith("s4_layers.0")])
optimizer, scheduler = setup_optimizer(model, lr=0.01, weight_decay=0.01, epochs=4)
criterion = nn.CrossEntropyLoss()

g = torch.Generator().manual_seed(2)
steps = torch.linspace(-1, 1, 16)
for epoch in range(4):
    model.train()
    targets = torch.randint(0, 2, (8,), generator=g)
    inputs = (steps * (2 * targets[:, None] - 1) + 0.5 * torch.randn(8, 16, generator=g))[..., None]
    optimizer.zero_grad()
    outputs = model(inputs)
    loss = criterion(outputs, targets)
    loss.backward()
    optimizer.step()
    _, predicted = outputs.max(1)
    correct = predicted.eq(targets).sum().item()
    print("Epoch %d | Loss: %.5f | Acc: %d/8 | lr %s" % (epoch, loss.item(), correct,
                                                        ["%.6f" % v for v in scheduler.get_last_lr()]))
    scheduler.step()

model.eval()
with torch.no_grad():
    out = model(inputs)
print("eval", out.shape, out[:3])
print("log_dt", model.s4_layers[0].kernel.log_dt)
print("state keys", list(optimizer.state_dict()["state"])[:5], len(optimizer.param_groups))
