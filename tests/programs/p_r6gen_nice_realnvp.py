"""NICE and RealNVP masks: DakshIdnani/pytorch-nice (additive coupling with alternating even/odd
masks, diagonal scaling layer, a logistic prior as a Distribution subclass, dequantised training
and inversion) and chrischute/real-nvp (checkerboard and channel-wise masked affine couplings with
a weight-normalised Rescale, weight-norm conv s/t nets, the plain and alt_order 2x2 squeeze by a
permutation convolution, logit pre-processing with its log-det, RealNVPLoss and bits/dim); shrunk
to 6x6 / 4x4 synthetic images (SGD for the RealNVP part, see main)."""
import importlib
import os
from enum import IntEnum

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = torch.optim
Distribution = torch.distributions.Distribution
Uniform = torch.distributions.Uniform


class CouplingLayerNICE(nn.Module):
    def __init__(self, data_dim, hidden_dim, mask, num_layers=4):
        super().__init__()
        assert data_dim % 2 == 0
        self.mask = mask
        modules = [nn.Linear(data_dim, hidden_dim), nn.LeakyReLU(0.2)]
        for i in range(num_layers - 2):
            modules.append(nn.Linear(hidden_dim, hidden_dim))
            modules.append(nn.LeakyReLU(0.2))
        modules.append(nn.Linear(hidden_dim, data_dim))
        self.m = nn.Sequential(*modules)

    def forward(self, x, logdet, invert=False):
        if not invert:
            x1, x2 = self.mask * x, (1. - self.mask) * x
            y1, y2 = x1, x2 + (self.m(x1) * (1. - self.mask))
            return y1 + y2, logdet
        y1, y2 = self.mask * x, (1. - self.mask) * x
        x1, x2 = y1, y2 - (self.m(y1) * (1. - self.mask))
        return x1 + x2, logdet


class ScalingLayer(nn.Module):
    def __init__(self, data_dim):
        super().__init__()
        self.log_scale_vector = nn.Parameter(torch.randn(1, data_dim, requires_grad=True))

    def forward(self, x, logdet, invert=False):
        log_det_jacobian = torch.sum(self.log_scale_vector)
        if invert:
            return torch.exp(- self.log_scale_vector) * x, logdet - log_det_jacobian
        return torch.exp(self.log_scale_vector) * x, logdet + log_det_jacobian


class LogisticDistribution(Distribution):
    def __init__(self):
        super().__init__(validate_args=False)

    def log_prob(self, x):
        return -(F.softplus(x) + F.softplus(-x))

    def sample(self, size):
        z = Uniform(torch.FloatTensor([0.]), torch.FloatTensor([1.])).sample(size)
        return torch.log(z) - torch.log(1. - z)


class NICE(nn.Module):
    def __init__(self, data_dim, num_coupling_layers=3, hidden=32, layers=4):
        super().__init__()
        self.data_dim = data_dim
        masks = [self._get_mask(data_dim, orientation=(i % 2 == 0))
                 for i in range(num_coupling_layers)]
        self.coupling_layers = nn.ModuleList([
            CouplingLayerNICE(data_dim=data_dim, hidden_dim=hidden, mask=masks[i],
                              num_layers=layers) for i in range(num_coupling_layers)])
        self.scaling_layer = ScalingLayer(data_dim=data_dim)
        self.prior = LogisticDistribution()

    def forward(self, x, invert=False):
        if not invert:
            z, log_det_jacobian = self.f(x)
            log_likelihood = torch.sum(self.prior.log_prob(z), dim=1) + log_det_jacobian
            return z, log_likelihood
        return self.f_inverse(x)

    def f(self, x):
        z = x
        log_det_jacobian = 0
        for i, coupling_layer in enumerate(self.coupling_layers):
            z, log_det_jacobian = coupling_layer(z, log_det_jacobian)
        z, log_det_jacobian = self.scaling_layer(z, log_det_jacobian)
        return z, log_det_jacobian

    def f_inverse(self, z):
        x = z
        x, _ = self.scaling_layer(x, 0, invert=True)
        for i, coupling_layer in reversed(list(enumerate(self.coupling_layers))):
            x, _ = coupling_layer(x, 0, invert=True)
        return x

    def sample(self, num_samples):
        z = self.prior.sample([num_samples, self.data_dim]).view(num_samples, self.data_dim)
        return self.f_inverse(z)

    def _get_mask(self, dim, orientation=True):
        mask = np.zeros(dim)
        mask[::2] = 1.
        if orientation:
            mask = 1. - mask
        mask = torch.tensor(mask)
        return mask.float()


class MaskType(IntEnum):
    CHECKERBOARD = 0
    CHANNEL_WISE = 1


def checkerboard_mask(height, width, reverse=False, dtype=torch.float32,
                      device=None, requires_grad=False):
    checkerboard = [[((i % 2) + j) % 2 for j in range(width)] for i in range(height)]
    mask = torch.tensor(checkerboard, dtype=dtype, device=device, requires_grad=requires_grad)
    if reverse:
        mask = 1 - mask
    mask = mask.view(1, 1, height, width)
    return mask


def squeeze_2x2(x, reverse=False, alt_order=False):
    block_size = 2
    if alt_order:
        n, c, h, w = x.size()
        if reverse:
            if c % 4 != 0:
                raise ValueError('Number of channels must be divisible by 4, got {}.'.format(c))
            c //= 4
        else:
            if h % 2 != 0:
                raise ValueError('Height must be divisible by 2, got {}.'.format(h))
            if w % 2 != 0:
                raise ValueError('Width must be divisible by 4, got {}.'.format(w))
        squeeze_matrix = torch.tensor([[[[1., 0.], [0., 0.]]],
                                       [[[0., 0.], [0., 1.]]],
                                       [[[0., 1.], [0., 0.]]],
                                       [[[0., 0.], [1., 0.]]]],
                                      dtype=x.dtype, device=x.device)
        perm_weight = torch.zeros((4 * c, c, 2, 2), dtype=x.dtype, device=x.device)
        for c_idx in range(c):
            slice_0 = slice(c_idx * 4, (c_idx + 1) * 4)
            slice_1 = slice(c_idx, c_idx + 1)
            perm_weight[slice_0, slice_1, :, :] = squeeze_matrix
        shuffle_channels = torch.tensor([c_idx * 4 for c_idx in range(c)]
                                        + [c_idx * 4 + 1 for c_idx in range(c)]
                                        + [c_idx * 4 + 2 for c_idx in range(c)]
                                        + [c_idx * 4 + 3 for c_idx in range(c)])
        perm_weight = perm_weight[shuffle_channels, :, :, :]
        if reverse:
            x = F.conv_transpose2d(x, perm_weight, stride=2)
        else:
            x = F.conv2d(x, perm_weight, stride=2)
    else:
        b, c, h, w = x.size()
        x = x.permute(0, 2, 3, 1)
        if reverse:
            if c % 4 != 0:
                raise ValueError('Number of channels {} is not divisible by 4'.format(c))
            x = x.view(b, h, w, c // 4, 2, 2)
            x = x.permute(0, 1, 4, 2, 5, 3)
            x = x.contiguous().view(b, 2 * h, 2 * w, c // 4)
        else:
            if h % 2 != 0 or w % 2 != 0:
                raise ValueError('Expected even spatial dims HxW, got {}x{}'.format(h, w))
            x = x.view(b, h // 2, 2, w // 2, 2, c)
            x = x.permute(0, 1, 3, 5, 2, 4)
            x = x.contiguous().view(b, h // 2, w // 2, c * 4)
        x = x.permute(0, 3, 1, 2)
    return x


class WNConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding, bias=True):
        super(WNConv2d, self).__init__()
        self.conv = nn.utils.weight_norm(
            nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, bias=bias))

    def forward(self, x):
        x = self.conv(x)
        return x


class ResidualBlock(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(ResidualBlock, self).__init__()
        self.in_norm = nn.BatchNorm2d(in_channels)
        self.in_conv = WNConv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=False)
        self.out_norm = nn.BatchNorm2d(out_channels)
        self.out_conv = WNConv2d(out_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        skip = x
        x = self.in_norm(x)
        x = F.relu(x)
        x = self.in_conv(x)
        x = self.out_norm(x)
        x = F.relu(x)
        x = self.out_conv(x)
        x = x + skip
        return x


class ResNet(nn.Module):
    def __init__(self, in_channels, mid_channels, out_channels, num_blocks, kernel_size,
                 padding, double_after_norm):
        super(ResNet, self).__init__()
        self.in_norm = nn.BatchNorm2d(in_channels)
        self.double_after_norm = double_after_norm
        self.in_conv = WNConv2d(2 * in_channels, mid_channels, kernel_size, padding, bias=True)
        self.in_skip = WNConv2d(mid_channels, mid_channels, kernel_size=1, padding=0, bias=True)
        self.blocks = nn.ModuleList([ResidualBlock(mid_channels, mid_channels)
                                     for _ in range(num_blocks)])
        self.skips = nn.ModuleList([WNConv2d(mid_channels, mid_channels, kernel_size=1,
                                             padding=0, bias=True) for _ in range(num_blocks)])
        self.out_norm = nn.BatchNorm2d(mid_channels)
        self.out_conv = WNConv2d(mid_channels, out_channels, kernel_size=1, padding=0, bias=True)

    def forward(self, x):
        x = self.in_norm(x)
        if self.double_after_norm:
            x *= 2.
        x = torch.cat((x, -x), dim=1)
        x = F.relu(x)
        x = self.in_conv(x)
        x_skip = self.in_skip(x)
        for block, skip in zip(self.blocks, self.skips):
            x = block(x)
            x_skip += skip(x)
        x = self.out_norm(x_skip)
        x = F.relu(x)
        x = self.out_conv(x)
        return x


class Rescale(nn.Module):
    def __init__(self, num_channels):
        super(Rescale, self).__init__()
        self.weight = nn.Parameter(torch.ones(num_channels, 1, 1))

    def forward(self, x):
        x = self.weight * x
        return x


class CouplingLayer(nn.Module):
    def __init__(self, in_channels, mid_channels, num_blocks, mask_type, reverse_mask):
        super(CouplingLayer, self).__init__()
        self.mask_type = mask_type
        self.reverse_mask = reverse_mask
        if self.mask_type == MaskType.CHANNEL_WISE:
            in_channels //= 2
        self.st_net = ResNet(in_channels, mid_channels, 2 * in_channels,
                             num_blocks=num_blocks, kernel_size=3, padding=1,
                             double_after_norm=(self.mask_type == MaskType.CHECKERBOARD))
        self.rescale = nn.utils.weight_norm(Rescale(in_channels))

    def forward(self, x, sldj=None, reverse=True):
        if self.mask_type == MaskType.CHECKERBOARD:
            b = checkerboard_mask(x.size(2), x.size(3), self.reverse_mask, device=x.device)
            x_b = x * b
            st = self.st_net(x_b)
            s, t = st.chunk(2, dim=1)
            s = self.rescale(torch.tanh(s))
            s = s * (1 - b)
            t = t * (1 - b)
            if reverse:
                inv_exp_s = s.mul(-1).exp()
                if torch.isnan(inv_exp_s).any():
                    raise RuntimeError('Scale factor has NaN entries')
                x = x * inv_exp_s - t
            else:
                exp_s = s.exp()
                if torch.isnan(exp_s).any():
                    raise RuntimeError('Scale factor has NaN entries')
                x = (x + t) * exp_s
                sldj += s.reshape(s.size(0), -1).sum(-1)
        else:
            if self.reverse_mask:
                x_id, x_change = x.chunk(2, dim=1)
            else:
                x_change, x_id = x.chunk(2, dim=1)
            st = self.st_net(x_id)
            s, t = st.chunk(2, dim=1)
            s = self.rescale(torch.tanh(s))
            if reverse:
                inv_exp_s = s.mul(-1).exp()
                x_change = x_change * inv_exp_s - t
            else:
                exp_s = s.exp()
                x_change = (x_change + t) * exp_s
                sldj += s.reshape(s.size(0), -1).sum(-1)
            if self.reverse_mask:
                x = torch.cat((x_id, x_change), dim=1)
            else:
                x = torch.cat((x_change, x_id), dim=1)
        return x, sldj


class RealNVPLoss(nn.Module):
    def __init__(self, k=256):
        super(RealNVPLoss, self).__init__()
        self.k = k

    def forward(self, z, sldj):
        prior_ll = -0.5 * (z ** 2 + np.log(2 * np.pi))
        prior_ll = prior_ll.reshape(z.size(0), -1).sum(-1) \
            - np.log(self.k) * np.prod(z.size()[1:])
        ll = prior_ll + sldj
        nll = -ll.mean()
        return nll


def bits_per_dim(x, nll):
    dim = np.prod(x.size()[1:])
    bpd = nll / (np.log(2) * dim)
    return bpd


class TinyRealNVP(nn.Module):
    """One scale of chrischute's _RealNVP: 3 checkerboard couplings, squeeze, 3 channel-wise."""

    def __init__(self, in_channels=2, mid_channels=8, num_blocks=1):
        super().__init__()
        self.register_buffer('data_constraint', torch.tensor([0.9], dtype=torch.float32))
        self.in_couplings = nn.ModuleList([
            CouplingLayer(in_channels, mid_channels, num_blocks, MaskType.CHECKERBOARD, False),
            CouplingLayer(in_channels, mid_channels, num_blocks, MaskType.CHECKERBOARD, True),
            CouplingLayer(in_channels, mid_channels, num_blocks, MaskType.CHECKERBOARD, False)])
        self.out_couplings = nn.ModuleList([
            CouplingLayer(4 * in_channels, mid_channels, num_blocks, MaskType.CHANNEL_WISE, False),
            CouplingLayer(4 * in_channels, mid_channels, num_blocks, MaskType.CHANNEL_WISE, True)])

    def _pre_process(self, x):
        y = (x * 255. + torch.rand_like(x)) / 256.
        y = (2 * y - 1) * self.data_constraint
        y = (y + 1) / 2
        y = y.log() - (1. - y).log()
        ldj = F.softplus(y) + F.softplus(-y) \
            - F.softplus((1. - self.data_constraint).log() - self.data_constraint.log())
        sldj = ldj.view(ldj.size(0), -1).sum(-1)
        return y, sldj

    def forward(self, x, reverse=False):
        sldj = None
        if not reverse:
            x, sldj = self._pre_process(x)
            for coupling in self.in_couplings:
                x, sldj = coupling(x, sldj, reverse)
            x = squeeze_2x2(x, reverse=False)
            for coupling in self.out_couplings:
                x, sldj = coupling(x, sldj, reverse)
            x = squeeze_2x2(x, reverse=True)
        else:
            x = squeeze_2x2(x, reverse=False)
            for coupling in reversed(self.out_couplings):
                x, sldj = coupling(x, sldj, reverse)
            x = squeeze_2x2(x, reverse=True)
            for coupling in reversed(self.in_couplings):
                x, sldj = coupling(x, sldj, reverse)
            x = torch.sigmoid(x)
        return x, sldj


def main():
    torch.manual_seed(0)
    np.random.seed(0)
    model = NICE(data_dim=36, num_coupling_layers=4)
    print([m.tolist()[:4] for m in [c.mask for c in model.coupling_layers]])
    opt = optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.01), eps=1e-4)
    data = (torch.rand(64, 36) > 0.6).float() * 0.8 + 0.1
    for step in range(8):
        x = data[(step % 4) * 16:(step % 4 + 1) * 16]
        x = (x * 255. + torch.rand_like(x)) / 256.
        z, ll = model(x)
        loss = -torch.mean(ll)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("nice step %d loss %.4f" % (step, loss.item()))
    with torch.no_grad():
        z, ll = model(data[:4])
        print("nice invert err < 1e-4", (model(z, invert=True) - data[:4]).abs().max().item() < 1e-4)
        s = model.sample(3)
        print("nice sample", tuple(s.shape), s.abs().mean().item())
        print("logistic log_prob", model.prior.log_prob(torch.tensor([-2., 0., 3.])))

    torch.manual_seed(1)
    x = torch.arange(32.).view(1, 2, 4, 4)
    for alt in (False, True):
        y = squeeze_2x2(x, alt_order=alt)
        print("squeeze alt=%s" % alt, tuple(y.shape), y[0, :, 0, 0].tolist(),
              torch.equal(squeeze_2x2(y, reverse=True, alt_order=alt), x))
    try:
        squeeze_2x2(torch.zeros(1, 3, 2, 2), reverse=True)
    except ValueError as e:
        print(type(e).__name__, e)
    print(checkerboard_mask(3, 4, reverse=True).squeeze().tolist())

    flow = TinyRealNVP()
    print("weight_norm params", sorted(n for n, _ in flow.in_couplings[0].rescale.named_parameters()))
    loss_fn = RealNVPLoss()
    # SGD, not the repo's Adam: conv biases feeding a training-mode BatchNorm have zero true
    # gradients, and Adam turns their rounding noise into lr-sized steps.
    opt = optim.SGD(flow.parameters(), lr=1e-3, momentum=0.9)
    imgs = torch.rand(12, 2, 4, 4)
    for step in range(5):
        x = imgs[(step % 3) * 4:(step % 3 + 1) * 4]
        z, sldj = flow(x, reverse=False)
        loss = loss_fn(z, sldj)
        opt.zero_grad()
        loss.backward()
        gn = nn.utils.clip_grad_norm_(flow.parameters(), 100.)
        opt.step()
        print("realnvp step %d nll %.4f bpd %.4f gnorm %.4f" % (
            step, loss.item(), bits_per_dim(x, loss).item(), gn.item()))
    sq = squeeze_2x2(flow._pre_process(imgs[:2])[0])
    st = flow.out_couplings[0].st_net(sq.chunk(2, dim=1)[1])
    print("st layout", sq.stride(), st.stride(), st.chunk(2, dim=1)[0].is_contiguous())
    try:
        st.chunk(2, dim=1)[0].view(2, -1)
    except RuntimeError as e:
        print(type(e).__name__, e)
    print("rescale g grad", flow.in_couplings[1].rescale.weight_g.grad.flatten())
    flow.eval()
    with torch.no_grad():
        zs = torch.randn(2, 2, 4, 4)
        xs, _ = flow(zs, reverse=True)
        print("realnvp sample", tuple(xs.shape), xs.mean().item(), xs.min().item() > 0)


if __name__ == "__main__":
    main()
