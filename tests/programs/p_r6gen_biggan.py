"""BigGAN pieces from ajbrock/BigGAN-PyTorch (layers.py, BigGAN.py, utils.py, losses.py): the SN
mixin with Gram-Schmidt power iteration and stored singular values, SNConv2d/SNLinear/SNEmbedding,
class-conditional BN (ccbn) in its 'bn' and 'in' styles, SAGAN self-attention, GBlock/DBlock,
the shared class embedding with hierarchical z chunks, projection discriminator, hinge losses and
the off-diagonal orthogonal regularisation (utils.ortho), compared with torch.nn.utils's
spectral_norm and parametrizations.spectral_norm/orthogonal; shrunk to 8x8 images, ch=16."""
import functools
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
P = nn.Parameter
optim = torch.optim


def proj(x, y):
    return torch.mm(y, x.t()) * y / torch.mm(y, y.t())


def gram_schmidt(x, ys):
    for y in ys:
        x = x - proj(x, y)
    return x


def power_iteration(W, u_, update=True, eps=1e-12):
    us, vs, svs = [], [], []
    for i, u in enumerate(u_):
        with torch.no_grad():
            v = torch.matmul(u, W)
            v = F.normalize(gram_schmidt(v, vs), eps=eps)
            vs += [v]
            u = torch.matmul(v, W.t())
            u = F.normalize(gram_schmidt(u, us), eps=eps)
            us += [u]
            if update:
                u_[i][:] = u
        svs += [torch.squeeze(torch.matmul(torch.matmul(v, W.t()), u.t()))]
    return svs, us, vs


class SN(object):
    def __init__(self, num_svs, num_itrs, num_outputs, transpose=False, eps=1e-12):
        self.num_itrs = num_itrs
        self.num_svs = num_svs
        self.transpose = transpose
        self.eps = eps
        for i in range(self.num_svs):
            self.register_buffer('u%d' % i, torch.randn(1, num_outputs))
            self.register_buffer('sv%d' % i, torch.ones(1))

    @property
    def u(self):
        return [getattr(self, 'u%d' % i) for i in range(self.num_svs)]

    @property
    def sv(self):
        return [getattr(self, 'sv%d' % i) for i in range(self.num_svs)]

    def W_(self):
        W_mat = self.weight.view(self.weight.size(0), -1)
        if self.transpose:
            W_mat = W_mat.t()
        for _ in range(self.num_itrs):
            svs, us, vs = power_iteration(W_mat, self.u, update=self.training, eps=self.eps)
        if self.training:
            with torch.no_grad():
                for i, sv in enumerate(svs):
                    self.sv[i][:] = sv
        return self.weight / svs[0]


class SNConv2d(nn.Conv2d, SN):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, num_svs=1, num_itrs=1, eps=1e-12):
        nn.Conv2d.__init__(self, in_channels, out_channels, kernel_size, stride, padding,
                           dilation, groups, bias)
        SN.__init__(self, num_svs, num_itrs, out_channels, eps=eps)

    def forward(self, x):
        return F.conv2d(x, self.W_(), self.bias, self.stride, self.padding, self.dilation,
                        self.groups)


class SNLinear(nn.Linear, SN):
    def __init__(self, in_features, out_features, bias=True, num_svs=1, num_itrs=1, eps=1e-12):
        nn.Linear.__init__(self, in_features, out_features, bias)
        SN.__init__(self, num_svs, num_itrs, out_features, eps=eps)

    def forward(self, x):
        return F.linear(x, self.W_(), self.bias)


class SNEmbedding(nn.Embedding, SN):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2, scale_grad_by_freq=False, sparse=False, _weight=None,
                 num_svs=1, num_itrs=1, eps=1e-12):
        nn.Embedding.__init__(self, num_embeddings, embedding_dim, padding_idx, max_norm,
                              norm_type, scale_grad_by_freq, sparse, _weight)
        SN.__init__(self, num_svs, num_itrs, num_embeddings, eps=eps)

    def forward(self, x):
        return F.embedding(x, self.W_())


class Attention(nn.Module):
    def __init__(self, ch, which_conv=SNConv2d, name='attention'):
        super(Attention, self).__init__()
        self.ch = ch
        self.which_conv = which_conv
        self.theta = self.which_conv(self.ch, self.ch // 8, kernel_size=1, padding=0, bias=False)
        self.phi = self.which_conv(self.ch, self.ch // 8, kernel_size=1, padding=0, bias=False)
        self.g = self.which_conv(self.ch, self.ch // 2, kernel_size=1, padding=0, bias=False)
        self.o = self.which_conv(self.ch // 2, self.ch, kernel_size=1, padding=0, bias=False)
        self.gamma = P(torch.tensor(0.), requires_grad=True)

    def forward(self, x, y=None):
        theta = self.theta(x)
        phi = F.max_pool2d(self.phi(x), [2, 2])
        g = F.max_pool2d(self.g(x), [2, 2])
        theta = theta.view(-1, self.ch // 8, x.shape[2] * x.shape[3])
        phi = phi.view(-1, self.ch // 8, x.shape[2] * x.shape[3] // 4)
        g = g.view(-1, self.ch // 2, x.shape[2] * x.shape[3] // 4)
        beta = F.softmax(torch.bmm(theta.transpose(1, 2), phi), -1)
        o = self.o(torch.bmm(g, beta.transpose(1, 2)).view(-1, self.ch // 2, x.shape[2],
                                                            x.shape[3]))
        return self.gamma * o + x


class ccbn(nn.Module):
    def __init__(self, output_size, input_size, which_linear, eps=1e-5, momentum=0.1,
                 norm_style='bn'):
        super(ccbn, self).__init__()
        self.output_size, self.input_size = output_size, input_size
        self.gain = which_linear(input_size, output_size)
        self.bias = which_linear(input_size, output_size)
        self.eps = eps
        self.momentum = momentum
        self.norm_style = norm_style
        self.register_buffer('stored_mean', torch.zeros(output_size))
        self.register_buffer('stored_var', torch.ones(output_size))

    def forward(self, x, y):
        gain = (1 + self.gain(y)).view(y.size(0), -1, 1, 1)
        bias = self.bias(y).view(y.size(0), -1, 1, 1)
        if self.norm_style == 'bn':
            out = F.batch_norm(x, self.stored_mean, self.stored_var, None, None,
                               self.training, 0.1, self.eps)
        elif self.norm_style == 'in':
            out = F.instance_norm(x, self.stored_mean, self.stored_var, None, None,
                                  self.training, 0.1, self.eps)
        return out * gain + bias

    def extra_repr(self):
        s = 'out: {output_size}, in: {input_size},'
        return s.format(**self.__dict__)


class bn(nn.Module):
    def __init__(self, output_size, eps=1e-5, momentum=0.1):
        super(bn, self).__init__()
        self.output_size = output_size
        self.gain = P(torch.ones(output_size), requires_grad=True)
        self.bias = P(torch.zeros(output_size), requires_grad=True)
        self.eps = eps
        self.momentum = momentum
        self.register_buffer('stored_mean', torch.zeros(output_size))
        self.register_buffer('stored_var', torch.ones(output_size))

    def forward(self, x, y=None):
        return F.batch_norm(x, self.stored_mean, self.stored_var, self.gain, self.bias,
                            self.training, self.momentum, self.eps)


class GBlock(nn.Module):
    def __init__(self, in_channels, out_channels, which_conv=nn.Conv2d, which_bn=bn,
                 activation=None, upsample=None):
        super(GBlock, self).__init__()
        self.in_channels, self.out_channels = in_channels, out_channels
        self.which_conv, self.which_bn = which_conv, which_bn
        self.activation = activation
        self.upsample = upsample
        self.conv1 = self.which_conv(self.in_channels, self.out_channels)
        self.conv2 = self.which_conv(self.out_channels, self.out_channels)
        self.learnable_sc = in_channels != out_channels or upsample
        if self.learnable_sc:
            self.conv_sc = self.which_conv(in_channels, out_channels, kernel_size=1, padding=0)
        self.bn1 = self.which_bn(in_channels)
        self.bn2 = self.which_bn(out_channels)

    def forward(self, x, y):
        h = self.activation(self.bn1(x, y))
        if self.upsample:
            h = self.upsample(h)
            x = self.upsample(x)
        h = self.conv1(h)
        h = self.activation(self.bn2(h, y))
        h = self.conv2(h)
        if self.learnable_sc:
            x = self.conv_sc(x)
        return h + x


class DBlock(nn.Module):
    def __init__(self, in_channels, out_channels, which_conv=SNConv2d, wide=True,
                 preactivation=False, activation=None, downsample=None):
        super(DBlock, self).__init__()
        self.in_channels, self.out_channels = in_channels, out_channels
        self.hidden_channels = self.out_channels if wide else self.in_channels
        self.which_conv = which_conv
        self.preactivation = preactivation
        self.activation = activation
        self.downsample = downsample
        self.conv1 = self.which_conv(self.in_channels, self.hidden_channels)
        self.conv2 = self.which_conv(self.hidden_channels, self.out_channels)
        self.learnable_sc = True if (in_channels != out_channels) or downsample else False
        if self.learnable_sc:
            self.conv_sc = self.which_conv(in_channels, out_channels, kernel_size=1, padding=0)

    def shortcut(self, x):
        if self.preactivation:
            if self.learnable_sc:
                x = self.conv_sc(x)
            if self.downsample:
                x = self.downsample(x)
        else:
            if self.downsample:
                x = self.downsample(x)
            if self.learnable_sc:
                x = self.conv_sc(x)
        return x

    def forward(self, x):
        if self.preactivation:
            h = F.relu(x)
        else:
            h = x
        h = self.conv1(h)
        h = self.conv2(self.activation(h))
        if self.downsample:
            h = self.downsample(h)
        return h + self.shortcut(x)


class Generator(nn.Module):
    def __init__(self, ch=16, dim_z=12, n_classes=5, shared_dim=8, norm_style='bn'):
        super().__init__()
        self.ch, self.dim_z, self.bottom_width = ch, dim_z, 2
        self.num_slots = 3
        self.z_chunk_size = dim_z // self.num_slots
        self.dim_z = self.z_chunk_size * self.num_slots
        self.which_conv = functools.partial(SNConv2d, kernel_size=3, padding=1)
        self.which_linear = functools.partial(SNLinear)
        bn_linear = functools.partial(self.which_linear, bias=False)
        self.which_bn = functools.partial(ccbn, which_linear=bn_linear,
                                          input_size=shared_dim + self.z_chunk_size,
                                          norm_style=norm_style)
        self.shared = nn.Embedding(n_classes, shared_dim)
        self.linear = self.which_linear(self.z_chunk_size, ch * 2 * self.bottom_width ** 2)
        self.blocks = nn.ModuleList([
            nn.ModuleList([GBlock(ch * 2, ch, which_conv=self.which_conv,
                                  which_bn=self.which_bn, activation=nn.ReLU(inplace=False),
                                  upsample=functools.partial(F.interpolate, scale_factor=2))]),
            nn.ModuleList([GBlock(ch, ch, which_conv=self.which_conv, which_bn=self.which_bn,
                                  activation=nn.ReLU(inplace=False),
                                  upsample=functools.partial(F.interpolate, scale_factor=2))]),
        ])
        self.blocks[1] += [Attention(ch, self.which_conv)]
        self.output_layer = nn.Sequential(bn(ch), nn.ReLU(inplace=False),
                                          self.which_conv(ch, 3))

    def forward(self, z, y):
        zs = torch.split(z, self.z_chunk_size, 1)
        z = zs[0]
        ys = [torch.cat([y, item], 1) for item in zs[1:]]
        h = self.linear(z)
        h = h.view(h.size(0), -1, self.bottom_width, self.bottom_width)
        for index, blocklist in enumerate(self.blocks):
            for block in blocklist:
                h = block(h, ys[index])
        return torch.tanh(self.output_layer(h))


class Discriminator(nn.Module):
    def __init__(self, ch=16, n_classes=5):
        super().__init__()
        self.which_conv = functools.partial(SNConv2d, kernel_size=3, padding=1)
        self.blocks = nn.ModuleList([
            nn.ModuleList([DBlock(3, ch, which_conv=self.which_conv, preactivation=False,
                                  activation=nn.ReLU(inplace=False),
                                  downsample=nn.AvgPool2d(2))]),
            nn.ModuleList([DBlock(ch, ch * 2, which_conv=self.which_conv, preactivation=True,
                                  activation=nn.ReLU(inplace=False),
                                  downsample=nn.AvgPool2d(2))]),
        ])
        self.blocks[0] += [Attention(ch, self.which_conv)]
        self.linear = SNLinear(ch * 2, 1)
        self.embed = SNEmbedding(n_classes, ch * 2)

    def forward(self, x, y=None):
        h = x
        for index, blocklist in enumerate(self.blocks):
            for block in blocklist:
                h = block(h)
        h = torch.sum(F.relu(h), [2, 3])
        out = self.linear(h)
        out = out + torch.sum(self.embed(y) * h, 1, keepdim=True)
        return out


def loss_hinge_dis(dis_fake, dis_real):
    loss_real = torch.mean(F.relu(1. - dis_real))
    loss_fake = torch.mean(F.relu(1. + dis_fake))
    return loss_real, loss_fake


def loss_hinge_gen(dis_fake):
    loss = -torch.mean(dis_fake)
    return loss


def ortho(model, strength=1e-4, blacklist=[]):
    with torch.no_grad():
        for param in model.parameters():
            if len(param.shape) < 2 or any([param is item for item in blacklist]):
                continue
            w = param.view(param.shape[0], -1)
            grad = (2 * torch.mm(torch.mm(w, w.t())
                    * (1. - torch.eye(w.shape[0], device=w.device)), w))
            param.grad.data += strength * grad.view(param.shape)


def toggle_grad(model, on_or_off):
    for param in model.parameters():
        param.requires_grad = on_or_off


def main():
    torch.manual_seed(0)
    G, D = Generator(), Discriminator()
    G.gamma_bias = None
    print("G params", sum(p.numel() for p in G.parameters()),
          "D params", sum(p.numel() for p in D.parameters()))
    print(G.blocks[0][0].bn1)
    print(sorted(k for k in D.state_dict() if k.startswith("blocks.0.1.")))
    G_optim = optim.Adam(G.parameters(), lr=5e-4, betas=(0.0, 0.999), eps=1e-6)
    D_optim = optim.Adam(D.parameters(), lr=2e-4, betas=(0.0, 0.999), eps=1e-6)
    real = torch.tanh(torch.randn(8, 3, 8, 8))
    real_y = torch.arange(8) % 5
    for it in range(3):
        toggle_grad(D, True)
        toggle_grad(G, False)
        D_optim.zero_grad()
        z = torch.randn(8, 12)
        y = torch.randint(0, 5, (8,))
        with torch.no_grad():
            fake = G(z, G.shared(y))
        D_fake, D_real = D(fake, y), D(real, real_y)
        D_loss_real, D_loss_fake = loss_hinge_dis(D_fake, D_real)
        D_loss = D_loss_real + D_loss_fake
        D_loss.backward()
        D_optim.step()
        toggle_grad(D, False)
        toggle_grad(G, True)
        G_optim.zero_grad()
        z = torch.randn(8, 12)
        y = torch.randint(0, 5, (8,))
        D_fake = D(G(z, G.shared(y)), y)
        G_loss = loss_hinge_gen(D_fake)
        G_loss.backward()
        ortho(G, 1e-4, blacklist=[param for param in G.shared.parameters()])
        G_optim.step()
        print("it %d D_real %.5f D_fake %.5f G %.5f" % (it, D_loss_real.item(),
                                                         D_loss_fake.item(), G_loss.item()))
    print("sv", [round(D.blocks[0][0].conv1.sv0.item(), 4), round(G.linear.sv0.item(), 4),
                 round(D.embed.sv0.item(), 4)])
    print("gamma", G.blocks[1][1].gamma.item(), D.blocks[0][1].gamma.item())
    print("ccbn stored", G.blocks[0][0].bn1.stored_mean[:4], G.blocks[0][0].bn2.stored_var[:3])
    G.eval()
    with torch.no_grad():
        s = G(torch.randn(2, 12), G.shared(torch.tensor([1, 3])))
        print("eval sample", tuple(s.shape), s.mean().item(), s.std().item())

    # multi-sv power iteration with Gram-Schmidt against SVD
    torch.manual_seed(1)
    lin = SNLinear(6, 5, num_svs=3, num_itrs=1)
    for _ in range(30):
        lin.W_()
    print("svs", [round(s.item(), 3) for s in lin.sv],
          [round(s, 3) for s in torch.linalg.svdvals(lin.weight.detach())[:3].tolist()])

    # instance-norm style ccbn with running stats
    cc = ccbn(4, 6, functools.partial(nn.Linear, bias=False), norm_style='in')
    x = torch.randn(3, 4, 5, 5) * 2 + 1
    out = cc(x, torch.randn(3, 6))
    print("ccbn in", out.mean().item(), cc.stored_mean.tolist(), cc.stored_var[:2].tolist())

    # torch.nn.utils spectral norm variants on the same weight
    torch.manual_seed(2)
    conv = nn.utils.spectral_norm(nn.Conv2d(4, 6, 3), n_power_iterations=3)
    print(sorted(k for k, _ in conv.named_buffers()), sorted(k for k, _ in conv.named_parameters()))
    x = torch.randn(2, 4, 5, 5)
    for _ in range(3):
        y = conv(x)
    w_mat = conv.weight_orig.detach().view(6, -1)
    print("sn ratio", (torch.linalg.matrix_norm(w_mat, 2) / torch.linalg.matrix_norm(
        conv.weight.detach().view(6, -1), 2)).item(), y.sum().item())
    y.sum().backward()
    print("weight_orig grad", conv.weight_orig.grad.abs().sum().item())
    nn.utils.remove_spectral_norm(conv)
    print("removed", sorted(k for k, _ in conv.named_parameters()))
    lin = nn.utils.parametrizations.spectral_norm(nn.Linear(5, 7))
    lin(torch.randn(3, 5))
    print("param sn", torch.linalg.matrix_norm(lin.weight.detach(), 2).item(),
          type(lin.parametrizations.weight[0]).__name__)
    orth = nn.utils.parametrizations.orthogonal(nn.Linear(4, 6))
    W = orth.weight
    print("orthogonal", tuple(W.shape), (W.t() @ W - torch.eye(4)).abs().max().item() < 1e-5)
    G_w = G.blocks[0][0].conv1.weight.detach()
    w = G_w.view(G_w.shape[0], -1)
    print("ortho penalty", ((w @ w.t()) * (1 - torch.eye(w.shape[0]))).pow(2).sum().item())


if __name__ == "__main__":
    main()
