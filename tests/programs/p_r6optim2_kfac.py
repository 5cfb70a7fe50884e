"""K-FAC, shrunk from alecwangcq/KFAC-Pytorch (optimizers/kfac.py, utils/kfac_utils.py,
main.py): forward-pre hooks collecting activations and full backward hooks collecting output
grads of Linear/Conv2d layers (patches from F.pad + unfold for convs), running covariance
statistics, eigendecompositions of the Kronecker factors (torch.linalg.eigh in place of the
removed torch.symeig), the preconditioned gradient with damping, KL clipping and the SGD
momentum step; Fisher statistics from labels sampled with torch.multinomial, as main.py does."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = torch.optim


def try_contiguous(x):
    if not x.is_contiguous():
        x = x.contiguous()
    return x


def _extract_patches(x, kernel_size, stride, padding):
    if padding[0] + padding[1] > 0:
        x = F.pad(x, (padding[1], padding[1], padding[0], padding[0])).data
    x = x.unfold(2, kernel_size[0], stride[0])
    x = x.unfold(3, kernel_size[1], stride[1])
    x = x.transpose_(1, 2).transpose_(2, 3).contiguous()
    x = x.view(x.size(0), x.size(1), x.size(2), x.size(3) * x.size(4) * x.size(5))
    return x


def update_running_stat(aa, m_aa, stat_decay):
    # using inplace operation to save memory!
    m_aa *= stat_decay / (1 - stat_decay)
    m_aa += aa
    m_aa *= (1 - stat_decay)


class ComputeCovA:
    @classmethod
    def compute_cov_a(cls, a, layer):
        return cls.__call__(a, layer)

    @classmethod
    def __call__(cls, a, layer):
        if isinstance(layer, nn.Linear):
            cov_a = cls.linear(a, layer)
        elif isinstance(layer, nn.Conv2d):
            cov_a = cls.conv2d(a, layer)
        else:
            cov_a = None
        return cov_a

    @staticmethod
    def conv2d(a, layer):
        batch_size = a.size(0)
        a = _extract_patches(a, layer.kernel_size, layer.stride, layer.padding)
        spatial_size = a.size(1) * a.size(2)
        a = a.view(-1, a.size(-1))
        if layer.bias is not None:
            a = torch.cat([a, a.new(a.size(0), 1).fill_(1)], 1)
        a = a / spatial_size
        return a.t() @ (a / batch_size)

    @staticmethod
    def linear(a, layer):
        batch_size = a.size(0)
        if layer.bias is not None:
            a = torch.cat([a, a.new(a.size(0), 1).fill_(1)], 1)
        return a.t() @ (a / batch_size)


class ComputeCovG:
    @classmethod
    def compute_cov_g(cls, g, layer, batch_averaged=False):
        return cls.__call__(g, layer, batch_averaged)

    @classmethod
    def __call__(cls, g, layer, batch_averaged):
        if isinstance(layer, nn.Conv2d):
            cov_g = cls.conv2d(g, layer, batch_averaged)
        elif isinstance(layer, nn.Linear):
            cov_g = cls.linear(g, layer, batch_averaged)
        else:
            cov_g = None
        return cov_g

    @staticmethod
    def conv2d(g, layer, batch_averaged):
        spatial_size = g.size(2) * g.size(3)
        batch_size = g.shape[0]
        g = g.transpose(1, 2).transpose(2, 3)
        g = try_contiguous(g)
        g = g.view(-1, g.size(-1))
        if batch_averaged:
            g = g * batch_size
        g = g * spatial_size
        cov_g = g.t() @ (g / g.size(0))
        return cov_g

    @staticmethod
    def linear(g, layer, batch_averaged):
        batch_size = g.size(0)
        if batch_averaged:
            cov_g = g.t() @ (g * batch_size)
        else:
            cov_g = g.t() @ (g / batch_size)
        return cov_g


class KFACOptimizer(optim.Optimizer):
    def __init__(self, model, lr=0.001, momentum=0.9, stat_decay=0.95, damping=0.001,
                 kl_clip=0.001, weight_decay=0, TCov=10, TInv=100, batch_averaged=True):
        if lr < 0.0:
            raise ValueError("Invalid learning rate: {}".format(lr))
        defaults = dict(lr=lr, momentum=momentum, damping=damping, weight_decay=weight_decay)
        super(KFACOptimizer, self).__init__(model.parameters(), defaults)
        self.CovAHandler = ComputeCovA()
        self.CovGHandler = ComputeCovG()
        self.batch_averaged = batch_averaged
        self.known_modules = {"Linear", "Conv2d"}
        self.modules = []
        self.grad_outputs = {}
        self.model = model
        self._prepare_model()
        self.steps = 0
        self.m_aa, self.m_gg = {}, {}
        self.Q_a, self.Q_g = {}, {}
        self.d_a, self.d_g = {}, {}
        self.stat_decay = stat_decay
        self.kl_clip = kl_clip
        self.TCov = TCov
        self.TInv = TInv
        self.acc_stats = False

    def _save_input(self, module, input):
        if torch.is_grad_enabled() and self.steps % self.TCov == 0:
            aa = self.CovAHandler(input[0].data, module)
            if self.steps == 0:
                self.m_aa[module] = torch.diag(aa.new(aa.size(0)).fill_(1))
            update_running_stat(aa, self.m_aa[module], self.stat_decay)

    def _save_grad_output(self, module, grad_input, grad_output):
        if self.acc_stats and self.steps % self.TCov == 0:
            gg = self.CovGHandler(grad_output[0].data, module, self.batch_averaged)
            if self.steps == 0:
                self.m_gg[module] = torch.diag(gg.new(gg.size(0)).fill_(1))
            update_running_stat(gg, self.m_gg[module], self.stat_decay)

    def _prepare_model(self):
        count = 0
        print("=> We keep following layers in KFAC. ")
        for module in self.model.modules():
            classname = module.__class__.__name__
            if classname in self.known_modules:
                self.modules.append(module)
                module.register_forward_pre_hook(self._save_input)
                module.register_full_backward_hook(self._save_grad_output)
                print("(%s): %s" % (count, module))
                count += 1

    def _update_inv(self, m):
        eps = 1e-10
        self.d_a[m], self.Q_a[m] = torch.linalg.eigh(self.m_aa[m])
        self.d_g[m], self.Q_g[m] = torch.linalg.eigh(self.m_gg[m])
        self.d_a[m].mul_((self.d_a[m] > eps).float())
        self.d_g[m].mul_((self.d_g[m] > eps).float())

    @staticmethod
    def _get_matrix_form_grad(m, classname):
        if classname == "Conv2d":
            p_grad_mat = m.weight.grad.data.view(m.weight.grad.data.size(0), -1)
        else:
            p_grad_mat = m.weight.grad.data
        if m.bias is not None:
            p_grad_mat = torch.cat([p_grad_mat, m.bias.grad.data.view(-1, 1)], 1)
        return p_grad_mat

    def _get_natural_grad(self, m, p_grad_mat, damping):
        v1 = self.Q_g[m].t() @ p_grad_mat @ self.Q_a[m]
        v2 = v1 / (self.d_g[m].unsqueeze(1) * self.d_a[m].unsqueeze(0) + damping)
        v = self.Q_g[m] @ v2 @ self.Q_a[m].t()
        if m.bias is not None:
            v = [v[:, :-1], v[:, -1:]]
            v[0] = v[0].view(m.weight.grad.data.size())
            v[1] = v[1].view(m.bias.grad.data.size())
        else:
            v = [v.view(m.weight.grad.data.size())]
        return v

    def _kl_clip_and_update_grad(self, updates, lr):
        vg_sum = 0
        for m in self.modules:
            v = updates[m]
            vg_sum += (v[0] * m.weight.grad.data * lr ** 2).sum().item()
            if m.bias is not None:
                vg_sum += (v[1] * m.bias.grad.data * lr ** 2).sum().item()
        nu = min(1.0, math.sqrt(self.kl_clip / vg_sum))
        for m in self.modules:
            v = updates[m]
            m.weight.grad.data.copy_(v[0])
            m.weight.grad.data.mul_(nu)
            if m.bias is not None:
                m.bias.grad.data.copy_(v[1])
                m.bias.grad.data.mul_(nu)
        return nu

    def _step(self, closure):
        for group in self.param_groups:
            weight_decay = group["weight_decay"]
            momentum = group["momentum"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                d_p = p.grad.data
                if weight_decay != 0 and self.steps >= 20 * self.TCov:
                    d_p.add_(p.data, alpha=weight_decay)
                if momentum != 0:
                    param_state = self.state[p]
                    if "momentum_buffer" not in param_state:
                        buf = param_state["momentum_buffer"] = torch.zeros_like(p.data)
                        buf.mul_(momentum).add_(d_p)
                    else:
                        buf = param_state["momentum_buffer"]
                        buf.mul_(momentum).add_(d_p, alpha=1)
                    d_p = buf
                p.data.add_(d_p, alpha=-group["lr"])

    def step(self, closure=None):
        group = self.param_groups[0]
        lr = group["lr"]
        damping = group["damping"]
        updates = {}
        for m in self.modules:
            classname = m.__class__.__name__
            if self.steps % self.TInv == 0:
                self._update_inv(m)
            p_grad_mat = self._get_matrix_form_grad(m, classname)
            v = self._get_natural_grad(m, p_grad_mat, damping)
            updates[m] = v
        nu = self._kl_clip_and_update_grad(updates, lr)
        self._step(closure)
        self.steps += 1
        return nu


class SmallNet(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(4, 6, kernel_size=3, stride=2, padding=1, bias=False)
        self.fc = nn.Linear(6 * 4 * 4, num_classes)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        return self.fc(x.flatten(1))


torch.manual_seed(0)
N = 96
protos = torch.randn(4, 1, 8, 8)
labels = torch.arange(N) % 4
data = protos[labels] + 0.7 * torch.randn(N, 1, 8, 8)

# the patch extraction alone, against conv2d as unfold + matmul
conv = nn.Conv2d(1, 4, 3, padding=1)
patches = _extract_patches(data[:2], conv.kernel_size, conv.stride, conv.padding)
print("patches", tuple(patches.shape), round(patches.sum().item(), 4))
out = patches.reshape(-1, 9) @ conv.weight.view(4, -1).t() + conv.bias
print("conv via patches", torch.allclose(out.view(2, 8, 8, 4).permute(0, 3, 1, 2), conv(data[:2]), atol=1e-5))

model = SmallNet()
optimizer = KFACOptimizer(model, lr=0.05, momentum=0.9, stat_decay=0.95, damping=0.003,
                          kl_clip=0.001, weight_decay=3e-4, TCov=2, TInv=4)
print(optimizer)
criterion = nn.CrossEntropyLoss()
bs = 24
for epoch in range(3):
    perm = torch.randperm(N)
    train_loss, correct = 0.0, 0
    for i in range(0, N, bs):
        idx = perm[i:i + bs]
        inputs, targets = data[idx], labels[idx]
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, targets)
        if optimizer.steps % optimizer.TCov == 0:
            # compute true fisher
            optimizer.acc_stats = True
            with torch.no_grad():
                sampled_y = torch.multinomial(F.softmax(outputs.cpu().data, dim=1), 1).squeeze()
            loss_sample = criterion(outputs, sampled_y)
            loss_sample.backward(retain_graph=True)
            optimizer.acc_stats = False
            optimizer.zero_grad()  # clear the gradient for computing true-fisher.
            print("  sampled", sampled_y[:8].tolist())
        loss.backward()
        nu = optimizer.step()
        train_loss += loss.item()
        correct += outputs.argmax(1).eq(targets).sum().item()
        print("  step %d loss %.5f nu %.5f" % (optimizer.steps, loss.item(), nu))
    print("epoch %d loss %.5f acc %d/%d" % (epoch, train_loss / (N // bs), correct, N))

for m in optimizer.modules:
    print(m.__class__.__name__, tuple(optimizer.m_aa[m].shape), tuple(optimizer.m_gg[m].shape))
    print("  trace A %.5f G %.5f" % (optimizer.m_aa[m].trace().item(), optimizer.m_gg[m].trace().item()))
    d_a = optimizer.d_a[m]
    print("  d_a max %.5f min %.6f sum %.5f" % (d_a.max().item(), d_a.min().item(), d_a.sum().item()))
    recon = optimizer.Q_a[m] @ torch.diag(optimizer.d_a[m]) @ optimizer.Q_a[m].t()
    print("  Q_a orthogonal", torch.allclose(optimizer.Q_a[m].t() @ optimizer.Q_a[m],
                                               torch.eye(d_a.numel()), atol=1e-4))
    print("  inverse sqrt of G: %.5f" % (optimizer.Q_g[m] @ torch.diag((optimizer.d_g[m] + 0.01).rsqrt())
                                         @ optimizer.Q_g[m].t()).sum().item())
sd = optimizer.state_dict()
print(sorted(sd["state"].keys()), sd["param_groups"][0]["params"], sd["param_groups"][0]["damping"])
print("momentum norm %.5f" % sum(s["momentum_buffer"].norm().item() for s in optimizer.state.values()))
with torch.no_grad():
    print("final loss %.5f" % criterion(model(data), labels).item())
try:
    KFACOptimizer(model, lr=-1)
except Exception as e:
    print(type(e).__name__, e)
