"""Spiking networks with surrogate gradients, shrunk from jeshraghian/snntorch: snntorch/surrogate.py
(ATan and FastSigmoid as torch.autograd.Function: Heaviside forward, smooth backward),
snntorch/_neurons/leaky.py (Leaky: beta-clamped membrane decay, detached reset by subtraction or
to zero, threshold), snntorch/spikegen.py (rate coding with torch.bernoulli), functional/loss.py
(ce_rate_loss, ce_count_loss) and tutorials 5/6 (fully connected and convolutional SNNs over
num_steps, membrane-potential CE loss summed over time, Adam, spike-count accuracy).
Synthetic 8x8 bars instead of MNIST."""
# ruff: noqa: E501  (upstream's own line lengths and names, kept)
import importlib
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
dtype = torch.float
device = torch.device("cpu")


# ---- surrogate.py ----
class ATan(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input_, alpha=2.0):
        ctx.save_for_backward(input_)
        ctx.alpha = alpha
        out = (input_ > 0).float()
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (input_,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad = (
            ctx.alpha
            / 2
            / (1 + (torch.pi / 2 * ctx.alpha * input_).pow_(2))
            * grad_input
        )
        return grad, None


def atan(alpha=2.0):
    alpha = alpha

    def inner(x):
        return ATan.apply(x, alpha)

    return inner


class FastSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input_, slope=25):
        ctx.save_for_backward(input_)
        ctx.slope = slope
        out = (input_ > 0).float()
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (input_,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad = grad_input / (ctx.slope * torch.abs(input_) + 1.0) ** 2
        return grad, None


def fast_sigmoid(slope=25):
    slope = slope

    def inner(x):
        return FastSigmoid.apply(x, slope)

    return inner


# ---- _neurons/leaky.py (condensed) ----
class Leaky(nn.Module):
    def __init__(self, beta, threshold=1.0, spike_grad=None, learn_beta=False,
                 reset_mechanism="subtract", graded_spikes_factor=1.0):
        super().__init__()
        if not isinstance(beta, torch.Tensor):
            beta = torch.as_tensor(beta)
        if learn_beta:
            self.beta = nn.Parameter(beta)
        else:
            self.register_buffer("beta", beta)
        self.register_buffer("threshold", torch.as_tensor(threshold))
        self.spike_grad = atan() if spike_grad is None else spike_grad
        if reset_mechanism not in ("subtract", "zero", "none"):
            raise ValueError("reset_mechanism must be set to either 'subtract', 'zero', or 'none'.")
        self.reset_mechanism = reset_mechanism
        self.graded_spikes_factor = graded_spikes_factor

    def init_leaky(self):
        return torch.zeros(1)

    def fire(self, mem):
        mem_shift = mem - self.threshold
        spk = self.spike_grad(mem_shift)
        spk = spk * self.graded_spikes_factor
        return spk

    def mem_reset(self, mem):
        mem_shift = mem - self.threshold
        reset = self.spike_grad(mem_shift).clone().detach()
        return reset

    def _base_state_function(self, input_, mem):
        base_fn = self.beta.clamp(0, 1) * mem + input_
        return base_fn

    def forward(self, input_, mem):
        reset = self.mem_reset(mem)
        if self.reset_mechanism == "subtract":
            mem = self._base_state_function(input_, mem) - reset * self.threshold
        elif self.reset_mechanism == "zero":
            mem = self._base_state_function(input_, mem) - reset * self._base_state_function(input_, mem)
        else:
            mem = self._base_state_function(input_, mem)
        spk = self.fire(mem)
        return spk, mem


# ---- spikegen.py / functional/loss.py ----
def rate(data, num_steps=False, gain=1, offset=0):
    def rate_conv(data):
        clipped_data = torch.clamp(data, 0, 1)
        spike_data = torch.bernoulli(clipped_data)
        return spike_data
    time_data = data.repeat(tuple([num_steps] + torch.ones(len(data.size()), dtype=int).tolist())) * gain + offset
    return rate_conv(time_data)


def ce_rate_loss(spk_out, targets):
    num_steps = spk_out.size(0)
    log_softmax_fn = nn.LogSoftmax(dim=-1)
    loss_fn = nn.NLLLoss()
    log_p_y = log_softmax_fn(spk_out)
    loss = torch.zeros((1), dtype=dtype, device=device)
    for step in range(num_steps):
        loss += loss_fn(log_p_y[step], targets)
    return loss / num_steps


def ce_count_loss(spk_out, targets):
    spike_count = torch.sum(spk_out, 0)  # B x C
    log_softmax_fn = nn.LogSoftmax(dim=-1)
    loss_fn = nn.NLLLoss()
    log_p_y = log_softmax_fn(spike_count)
    return loss_fn(log_p_y, targets)


# ---- tutorial 5: fully connected SNN ----
num_inputs, num_hidden, num_outputs = 64, 32, 3
num_steps = 10
beta = 0.95


class Net(nn.Module):
    def __init__(self):
        super().__init__()

        # Initialize layers
        self.fc1 = nn.Linear(num_inputs, num_hidden)
        self.lif1 = Leaky(beta=beta)
        self.fc2 = nn.Linear(num_hidden, num_outputs)
        self.lif2 = Leaky(beta=beta)

    def forward(self, x):

        # Initialize hidden states at t=0
        mem1 = self.lif1.init_leaky()
        mem2 = self.lif2.init_leaky()

        # Record the final layer
        spk2_rec = []
        mem2_rec = []

        for step in range(num_steps):
            cur1 = self.fc1(x)
            spk1, mem1 = self.lif1(cur1, mem1)
            cur2 = self.fc2(spk1)
            spk2, mem2 = self.lif2(cur2, mem2)
            spk2_rec.append(spk2)
            mem2_rec.append(mem2)

        return torch.stack(spk2_rec, dim=0), torch.stack(mem2_rec, dim=0)


# ---- tutorial 6: convolutional SNN ----
class ConvNet(nn.Module):
    def __init__(self, spike_grad):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3)
        self.lif1 = Leaky(beta=0.5, spike_grad=spike_grad)
        self.conv2 = nn.Conv2d(4, 8, 3)
        self.lif2 = Leaky(beta=0.5, spike_grad=spike_grad, learn_beta=True)
        self.fc1 = nn.Linear(8 * 1 * 1, 3)
        self.lif3 = Leaky(beta=0.5, spike_grad=spike_grad, reset_mechanism="zero")

    def forward(self, data):
        mem1 = self.lif1.init_leaky()
        mem2 = self.lif2.init_leaky()
        mem3 = self.lif3.init_leaky()
        spk_rec, mem_rec = [], []
        for step in range(data.size(0)):
            cur1 = F.max_pool2d(self.conv1(data[step]), 2)
            spk1, mem1 = self.lif1(cur1, mem1)
            cur2 = F.max_pool2d(self.conv2(spk1), 1)
            spk2, mem2 = self.lif2(cur2, mem2)
            cur3 = self.fc1(spk2.view(data.size(1), -1))
            spk3, mem3 = self.lif3(cur3, mem3)
            spk_rec.append(spk3)
            mem_rec.append(mem3)
        return torch.stack(spk_rec), torch.stack(mem_rec)


def make_bars(n, generator):
    targets = torch.randint(0, 3, (n,), generator=generator)
    imgs = 0.1 * torch.rand(n, 1, 8, 8, generator=generator)
    for i, t in enumerate(targets.tolist()):
        if t == 0:
            imgs[i, 0, 3:5, :] = 0.9   # horizontal bar
        elif t == 1:
            imgs[i, 0, :, 3:5] = 0.9   # vertical bar
        else:
            imgs[i, 0].fill_diagonal_(0.9)
    return imgs, targets


torch.manual_seed(0)
g = torch.Generator().manual_seed(1)

# surrogate gradients
x = torch.linspace(-1, 1, 5, requires_grad=True)
for name, fn in [("atan", atan()), ("fast_sigmoid", fast_sigmoid(slope=5))]:
    y = fn(x)
    y.sum().backward()
    print(name, y, y.grad_fn.name(), x.grad)
    x.grad = None

# a single neuron driven by a step current
lif = Leaky(beta=0.8, threshold=0.5)
mem = lif.init_leaky()
spks, mems = [], []
for t in range(8):
    spk, mem = lif(torch.tensor([0.3]), mem)
    spks.append(int(spk.item()))
    mems.append(round(mem.item(), 4))
print("spikes", spks)
print("mems", mems)
try:
    Leaky(beta=0.5, reset_mechanism="bogus")
except ValueError as e:
    print("ValueError", e)

net = Net().to(device)
print("params", sum(p.numel() for p in net.parameters()), "buffers", list(dict(net.named_buffers())))
loss = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(net.parameters(), lr=5e-3, betas=(0.9, 0.999))
for it in range(6):
    data, targets = make_bars(12, g)
    net.train()
    spk_rec, mem_rec = net(data.view(12, -1))
    # initialize the loss & sum over time
    loss_val = torch.zeros((1), dtype=dtype, device=device)
    for step in range(num_steps):
        loss_val += loss(mem_rec[step], targets)
    optimizer.zero_grad()
    loss_val.backward()
    optimizer.step()
    _, idx = spk_rec.sum(dim=0).max(1)
    acc = (targets == idx).float().mean().item()
    print("Iteration %d, Train Loss: %.5f, acc %.4f, spikes %d, fc1 grad %.6f" % (
        it, loss_val.item(), acc, int(spk_rec.sum().item()), net.fc1.weight.grad.norm().item()))
print("loss grad_fn", loss_val.grad_fn.name(), "spk grad_fn", spk_rec.grad_fn.name())

# rate-coded inputs into the conv SNN, trained with the spike-rate losses
conv = ConvNet(spike_grad=fast_sigmoid(slope=25))
print("conv keys", list(conv.state_dict()))
opt = torch.optim.Adam(conv.parameters(), lr=1e-2)
for it in range(4):
    data, targets = make_bars(8, g)
    spike_data = rate(data, num_steps=6)
    if it == 0:
        print("spike_data", spike_data.shape, spike_data.mean().item(), spike_data[0, 0, 0, 3])
    spk_rec, mem_rec = conv(spike_data)
    loss_val = ce_rate_loss(mem_rec, targets) + 0.1 * ce_count_loss(spk_rec, targets)
    opt.zero_grad()
    loss_val.backward()
    opt.step()
    print("conv it %d loss %.5f beta %.5f conv1 grad %.6f" % (
        it, loss_val.item(), conv.lif2.beta.item(), conv.conv1.weight.grad.norm().item()))
