"""CycleGAN / pix2pix networks (junyanz/pytorch-CycleGAN-and-pix2pix, shrunk): get_norm_layer
with functools.partial (BatchNorm2d / InstanceNorm2d), init_weights by classname (normal,
xavier, kaiming, orthogonal), ResnetGenerator (ReflectionPad2d, ConvTranspose2d with
output_padding, Tanh), UnetSkipConnectionBlock, NLayerDiscriminator (PatchGAN), GANLoss with
registered label buffers (vanilla / lsgan / wgangp), ImagePool, LambdaLR linear decay,
set_requires_grad and the cycle/identity losses; prints networks and parameter counts."""
import functools
import importlib
import os
import random

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
init = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.init")
lr_scheduler = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".optim.lr_scheduler")


class Identity(nn.Module):
    def forward(self, x):
        return x


def get_norm_layer(norm_type='instance'):
    if norm_type == 'batch':
        norm_layer = functools.partial(nn.BatchNorm2d, affine=True, track_running_stats=True)
    elif norm_type == 'instance':
        norm_layer = functools.partial(nn.InstanceNorm2d, affine=False, track_running_stats=False)
    elif norm_type == 'none':
        def norm_layer(x):
            return Identity()
    else:
        raise NotImplementedError('normalization layer [%s] is not found' % norm_type)
    return norm_layer


def init_weights(net, init_type='normal', init_gain=0.02):
    def init_func(m):
        classname = m.__class__.__name__
        if hasattr(m, 'weight') and (classname.find('Conv') != -1
                                     or classname.find('Linear') != -1):
            if init_type == 'normal':
                init.normal_(m.weight.data, 0.0, init_gain)
            elif init_type == 'xavier':
                init.xavier_normal_(m.weight.data, gain=init_gain)
            elif init_type == 'kaiming':
                init.kaiming_normal_(m.weight.data, a=0, mode='fan_in')
            elif init_type == 'orthogonal':
                init.orthogonal_(m.weight.data, gain=init_gain)
            else:
                raise NotImplementedError(
                    'initialization method [%s] is not implemented' % init_type)
            if hasattr(m, 'bias') and m.bias is not None:
                init.constant_(m.bias.data, 0.0)
        elif classname.find('BatchNorm2d') != -1:
            init.normal_(m.weight.data, 1.0, init_gain)
            init.constant_(m.bias.data, 0.0)
    print('initialize network with %s' % init_type)
    net.apply(init_func)


class ResnetBlock(nn.Module):
    def __init__(self, dim, padding_type, norm_layer, use_dropout, use_bias):
        super(ResnetBlock, self).__init__()
        self.conv_block = self.build_conv_block(dim, padding_type, norm_layer, use_dropout,
                                                use_bias)

    def build_conv_block(self, dim, padding_type, norm_layer, use_dropout, use_bias):
        conv_block = []
        p = 0
        if padding_type == 'reflect':
            conv_block += [nn.ReflectionPad2d(1)]
        elif padding_type == 'replicate':
            conv_block += [nn.ReplicationPad2d(1)]
        elif padding_type == 'zero':
            p = 1
        conv_block += [nn.Conv2d(dim, dim, kernel_size=3, padding=p, bias=use_bias),
                       norm_layer(dim), nn.ReLU(True)]
        if use_dropout:
            conv_block += [nn.Dropout(0.5)]
        p = 0
        if padding_type == 'reflect':
            conv_block += [nn.ReflectionPad2d(1)]
        elif padding_type == 'replicate':
            conv_block += [nn.ReplicationPad2d(1)]
        elif padding_type == 'zero':
            p = 1
        conv_block += [nn.Conv2d(dim, dim, kernel_size=3, padding=p, bias=use_bias),
                       norm_layer(dim)]
        return nn.Sequential(*conv_block)

    def forward(self, x):
        return x + self.conv_block(x)


class ResnetGenerator(nn.Module):
    def __init__(self, input_nc, output_nc, ngf=8, norm_layer=nn.BatchNorm2d, use_dropout=False,
                 n_blocks=2, padding_type='reflect'):
        assert (n_blocks >= 0)
        super(ResnetGenerator, self).__init__()
        if type(norm_layer) == functools.partial:  # noqa: E721
            use_bias = norm_layer.func == nn.InstanceNorm2d
        else:
            use_bias = norm_layer == nn.InstanceNorm2d
        model = [nn.ReflectionPad2d(3),
                 nn.Conv2d(input_nc, ngf, kernel_size=7, padding=0, bias=use_bias),
                 norm_layer(ngf), nn.ReLU(True)]
        n_downsampling = 2
        for i in range(n_downsampling):
            mult = 2 ** i
            model += [nn.Conv2d(ngf * mult, ngf * mult * 2, kernel_size=3, stride=2, padding=1,
                                bias=use_bias), norm_layer(ngf * mult * 2), nn.ReLU(True)]
        mult = 2 ** n_downsampling
        for i in range(n_blocks):
            model += [ResnetBlock(ngf * mult, padding_type=padding_type, norm_layer=norm_layer,
                                  use_dropout=use_dropout, use_bias=use_bias)]
        for i in range(n_downsampling):
            mult = 2 ** (n_downsampling - i)
            model += [nn.ConvTranspose2d(ngf * mult, int(ngf * mult / 2), kernel_size=3, stride=2,
                                         padding=1, output_padding=1, bias=use_bias),
                      norm_layer(int(ngf * mult / 2)), nn.ReLU(True)]
        model += [nn.ReflectionPad2d(3)]
        model += [nn.Conv2d(ngf, output_nc, kernel_size=7, padding=0)]
        model += [nn.Tanh()]
        self.model = nn.Sequential(*model)

    def forward(self, input):
        return self.model(input)


class UnetSkipConnectionBlock(nn.Module):
    def __init__(self, outer_nc, inner_nc, input_nc=None, submodule=None, outermost=False,
                 innermost=False, norm_layer=nn.BatchNorm2d, use_dropout=False):
        super(UnetSkipConnectionBlock, self).__init__()
        self.outermost = outermost
        if type(norm_layer) == functools.partial:  # noqa: E721
            use_bias = norm_layer.func == nn.InstanceNorm2d
        else:
            use_bias = norm_layer == nn.InstanceNorm2d
        if input_nc is None:
            input_nc = outer_nc
        downconv = nn.Conv2d(input_nc, inner_nc, kernel_size=4, stride=2, padding=1, bias=use_bias)
        downrelu = nn.LeakyReLU(0.2, True)
        downnorm = norm_layer(inner_nc)
        uprelu = nn.ReLU(True)
        upnorm = norm_layer(outer_nc)
        if outermost:
            upconv = nn.ConvTranspose2d(inner_nc * 2, outer_nc, kernel_size=4, stride=2, padding=1)
            down = [downconv]
            up = [uprelu, upconv, nn.Tanh()]
            model = down + [submodule] + up
        elif innermost:
            upconv = nn.ConvTranspose2d(inner_nc, outer_nc, kernel_size=4, stride=2, padding=1,
                                        bias=use_bias)
            down = [downrelu, downconv]
            up = [uprelu, upconv, upnorm]
            model = down + up
        else:
            upconv = nn.ConvTranspose2d(inner_nc * 2, outer_nc, kernel_size=4, stride=2,
                                        padding=1, bias=use_bias)
            down = [downrelu, downconv, downnorm]
            up = [uprelu, upconv, upnorm]
            if use_dropout:
                model = down + [submodule] + up + [nn.Dropout(0.5)]
            else:
                model = down + [submodule] + up
        self.model = nn.Sequential(*model)

    def forward(self, x):
        if self.outermost:
            return self.model(x)
        else:
            return torch.cat([x, self.model(x)], 1)


class NLayerDiscriminator(nn.Module):
    def __init__(self, input_nc, ndf=8, n_layers=2, norm_layer=nn.BatchNorm2d):
        super(NLayerDiscriminator, self).__init__()
        if type(norm_layer) == functools.partial:  # noqa: E721
            use_bias = norm_layer.func == nn.InstanceNorm2d
        else:
            use_bias = norm_layer == nn.InstanceNorm2d
        kw = 4
        padw = 1
        sequence = [nn.Conv2d(input_nc, ndf, kernel_size=kw, stride=2, padding=padw),
                    nn.LeakyReLU(0.2, True)]
        nf_mult = 1
        for n in range(1, n_layers):
            nf_mult_prev = nf_mult
            nf_mult = min(2 ** n, 8)
            sequence += [nn.Conv2d(ndf * nf_mult_prev, ndf * nf_mult, kernel_size=kw, stride=2,
                                   padding=padw, bias=use_bias),
                         norm_layer(ndf * nf_mult), nn.LeakyReLU(0.2, True)]
        nf_mult_prev = nf_mult
        nf_mult = min(2 ** n_layers, 8)
        sequence += [nn.Conv2d(ndf * nf_mult_prev, ndf * nf_mult, kernel_size=kw, stride=1,
                               padding=padw, bias=use_bias),
                     norm_layer(ndf * nf_mult), nn.LeakyReLU(0.2, True)]
        sequence += [nn.Conv2d(ndf * nf_mult, 1, kernel_size=kw, stride=1, padding=padw)]
        self.model = nn.Sequential(*sequence)

    def forward(self, input):
        return self.model(input)


class GANLoss(nn.Module):
    def __init__(self, gan_mode, target_real_label=1.0, target_fake_label=0.0):
        super(GANLoss, self).__init__()
        self.register_buffer('real_label', torch.tensor(target_real_label))
        self.register_buffer('fake_label', torch.tensor(target_fake_label))
        self.gan_mode = gan_mode
        if gan_mode == 'lsgan':
            self.loss = nn.MSELoss()
        elif gan_mode == 'vanilla':
            self.loss = nn.BCEWithLogitsLoss()
        elif gan_mode in ['wgangp']:
            self.loss = None
        else:
            raise NotImplementedError('gan mode %s not implemented' % gan_mode)

    def get_target_tensor(self, prediction, target_is_real):
        if target_is_real:
            target_tensor = self.real_label
        else:
            target_tensor = self.fake_label
        return target_tensor.expand_as(prediction)

    def __call__(self, prediction, target_is_real):
        if self.gan_mode in ['lsgan', 'vanilla']:
            target_tensor = self.get_target_tensor(prediction, target_is_real)
            loss = self.loss(prediction, target_tensor)
        elif self.gan_mode == 'wgangp':
            if target_is_real:
                loss = -prediction.mean()
            else:
                loss = prediction.mean()
        return loss


class ImagePool():
    def __init__(self, pool_size):
        self.pool_size = pool_size
        if self.pool_size > 0:
            self.num_imgs = 0
            self.images = []

    def query(self, images):
        if self.pool_size == 0:
            return images
        return_images = []
        for image in images:
            image = torch.unsqueeze(image.data, 0)
            if self.num_imgs < self.pool_size:
                self.num_imgs = self.num_imgs + 1
                self.images.append(image)
                return_images.append(image)
            else:
                p = random.uniform(0, 1)
                if p > 0.5:
                    random_id = random.randint(0, self.pool_size - 1)
                    tmp = self.images[random_id].clone()
                    self.images[random_id] = image
                    return_images.append(tmp)
                else:
                    return_images.append(image)
        return_images = torch.cat(return_images, 0)
        return return_images


def set_requires_grad(nets, requires_grad=False):
    if not isinstance(nets, list):
        nets = [nets]
    for net in nets:
        if net is not None:
            for param in net.parameters():
                param.requires_grad = requires_grad


def print_network(net, name):
    num_params = 0
    for param in net.parameters():
        num_params += param.numel()
    print('[Network %s] Total number of parameters : %.3f M' % (name, num_params / 1e6))


random.seed(0)
torch.manual_seed(0)
norm_layer = get_norm_layer('instance')
print(norm_layer.func.__name__, norm_layer.keywords, norm_layer(4))
try:
    get_norm_layer('group')
except NotImplementedError as e:
    print(type(e).__name__, e)
netG_A = ResnetGenerator(3, 3, 8, norm_layer=norm_layer, use_dropout=False, n_blocks=1)
netG_B = ResnetGenerator(3, 3, 8, norm_layer=get_norm_layer('batch'), n_blocks=1,
                         padding_type='replicate')
netD_A = NLayerDiscriminator(3, 8, n_layers=2, norm_layer=norm_layer)
netD_B = NLayerDiscriminator(3, 8, n_layers=2, norm_layer=get_norm_layer('batch'))
for net, it in [(netG_A, 'normal'), (netG_B, 'xavier'), (netD_A, 'kaiming'),
                (netD_B, 'orthogonal')]:
    init_weights(net, it, init_gain=0.02)
print(netG_A)
print(netD_B)
for net, name in [(netG_A, 'G_A'), (netG_B, 'G_B'), (netD_A, 'D_A'), (netD_B, 'D_B')]:
    print_network(net, name)
unet_block = UnetSkipConnectionBlock(16, 16, input_nc=None, submodule=None, norm_layer=norm_layer,
                                     innermost=True)
unet_block = UnetSkipConnectionBlock(8, 16, input_nc=None, submodule=unet_block,
                                     norm_layer=norm_layer, use_dropout=True)
unet = UnetSkipConnectionBlock(3, 8, input_nc=3, submodule=unet_block, outermost=True,
                               norm_layer=norm_layer)
init_weights(unet, 'normal')
print(unet.model[1])
print(unet(torch.rand(1, 3, 16, 16)).shape)

criterionGAN = GANLoss('lsgan')
criterionCycle = torch.nn.L1Loss()
criterionIdt = torch.nn.L1Loss()
print(criterionGAN, dict(criterionGAN.named_buffers()))
optimizer_G = torch.optim.Adam(list(netG_A.parameters()) + list(netG_B.parameters()), lr=0.0002,
                               betas=(0.5, 0.999))
optimizer_D = torch.optim.Adam(list(netD_A.parameters()) + list(netD_B.parameters()),
                               lr=0.0002, betas=(0.5, 0.999))


def lambda_rule(epoch):
    return 1.0 - max(0, epoch + 1 - 2) / float(3 + 1)


schedulers = [lr_scheduler.LambdaLR(o, lr_lambda=lambda_rule) for o in [optimizer_G, optimizer_D]]
fake_A_pool, fake_B_pool = ImagePool(2), ImagePool(2)
real_A, real_B = torch.rand(2, 3, 16, 16) * 2 - 1, torch.rand(2, 3, 16, 16) * 2 - 1
lambda_A, lambda_B, lambda_idt = 10.0, 10.0, 0.5


def backward_D_basic(netD, real, fake):
    pred_real = netD(real)
    loss_D_real = criterionGAN(pred_real, True)
    pred_fake = netD(fake.detach())
    loss_D_fake = criterionGAN(pred_fake, False)
    loss_D = (loss_D_real + loss_D_fake) * 0.5
    loss_D.backward()
    return loss_D


for epoch in range(4):
    fake_B = netG_A(real_A)
    rec_A = netG_B(fake_B)
    fake_A = netG_B(real_B)
    rec_B = netG_A(fake_A)
    set_requires_grad([netD_A, netD_B], False)
    optimizer_G.zero_grad()
    idt_A = netG_A(real_B)
    loss_idt_A = criterionIdt(idt_A, real_B) * lambda_B * lambda_idt
    idt_B = netG_B(real_A)
    loss_idt_B = criterionIdt(idt_B, real_A) * lambda_A * lambda_idt
    loss_G_A = criterionGAN(netD_A(fake_B), True)
    loss_G_B = criterionGAN(netD_B(fake_A), True)
    loss_cycle_A = criterionCycle(rec_A, real_A) * lambda_A
    loss_cycle_B = criterionCycle(rec_B, real_B) * lambda_B
    loss_G = loss_G_A + loss_G_B + loss_cycle_A + loss_cycle_B + loss_idt_A + loss_idt_B
    loss_G.backward()
    optimizer_G.step()
    set_requires_grad([netD_A, netD_B], True)
    optimizer_D.zero_grad()
    loss_D_A = backward_D_basic(netD_A, real_B, fake_B_pool.query(fake_B))
    loss_D_B = backward_D_basic(netD_B, real_A, fake_A_pool.query(fake_A))
    optimizer_D.step()
    old_lr = optimizer_G.param_groups[0]['lr']
    for scheduler in schedulers:
        scheduler.step()
    lr = optimizer_G.param_groups[0]['lr']
    print('learning rate %.7f -> %.7f' % (old_lr, lr))
    losses = {'D_A': loss_D_A, 'G_A': loss_G_A, 'cycle_A': loss_cycle_A, 'idt_A': loss_idt_A,
              'D_B': loss_D_B, 'G_B': loss_G_B, 'cycle_B': loss_cycle_B, 'idt_B': loss_idt_B}
    message = '(epoch: %d) ' % epoch
    for k, v in losses.items():
        message += '%s: %.3f ' % (k, float(v))
    print(message)
print(netD_A(real_A).shape, netD_B.model[3].running_mean[:4], netD_B.model[3].num_batches_tracked)
for gm in ['vanilla', 'wgangp']:
    crit = GANLoss(gm)
    print(gm, f"{crit(netD_A(real_A), True).item():.5f}",
          f"{crit(netD_A(real_A), False).item():.5f}")


def tensor2im(input_image, imtype=__import__("numpy").uint8):
    image_tensor = input_image.data
    image_numpy = image_tensor[0].cpu().float().numpy()
    if image_numpy.shape[0] == 1:
        image_numpy = __import__("numpy").tile(image_numpy, (3, 1, 1))
    image_numpy = (__import__("numpy").transpose(image_numpy, (1, 2, 0)) + 1) / 2.0 * 255.0
    return image_numpy.astype(imtype)


im = tensor2im(fake_B)
print(im.shape, im.dtype, im[0, :3])
print("RESULT:", f"{loss_G.item():.4f}")
