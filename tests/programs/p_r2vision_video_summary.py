"""torchvision's video ResNet R(2+1)D pieces (Conv3d with (1,k,k)/(k,1,1) kernels,
Conv2Plus1D, BasicStem, BatchNorm3d, MaxPool3d/AdaptiveAvgPool3d), a 3D decoder with
ConvTranspose3d/2d output_padding and output_size, and torchsummary-style printing with
forward/backward hooks."""
import importlib
import os
from collections import OrderedDict

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class Conv2Plus1D(nn.Sequential):
    def __init__(self, in_planes, out_planes, midplanes, stride=1, padding=1):
        super().__init__(
            nn.Conv3d(in_planes, midplanes, kernel_size=(1, 3, 3), stride=(1, stride, stride),
                      padding=(0, padding, padding), bias=False),
            nn.BatchNorm3d(midplanes),
            nn.ReLU(inplace=True),
            nn.Conv3d(midplanes, out_planes, kernel_size=(3, 1, 1), stride=(stride, 1, 1),
                      padding=(padding, 0, 0), bias=False),
        )

    @staticmethod
    def get_downsample_stride(stride):
        return stride, stride, stride


class R2Plus1dStem(nn.Sequential):
    def __init__(self):
        super().__init__(
            nn.Conv3d(3, 8, kernel_size=(1, 7, 7), stride=(1, 2, 2), padding=(0, 3, 3),
                      bias=False),
            nn.BatchNorm3d(8),
            nn.ReLU(inplace=True),
            nn.Conv3d(8, 8, kernel_size=(3, 1, 1), stride=(1, 1, 1), padding=(1, 0, 0),
                      bias=False),
            nn.BatchNorm3d(8),
            nn.ReLU(inplace=True),
        )


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, conv_builder, stride=1, downsample=None):
        midplanes = (inplanes * planes * 3 * 3 * 3) // (inplanes * 3 * 3 + 3 * planes)
        super().__init__()
        self.conv1 = nn.Sequential(conv_builder(inplanes, planes, midplanes, stride),
                                   nn.BatchNorm3d(planes), nn.ReLU(inplace=True))
        self.conv2 = nn.Sequential(conv_builder(planes, planes, midplanes),
                                   nn.BatchNorm3d(planes))
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        residual = x
        out = self.conv1(x)
        out = self.conv2(out)
        if self.downsample is not None:
            residual = self.downsample(x)
        out += residual
        out = self.relu(out)
        return out


class VideoNet(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.stem = R2Plus1dStem()
        self.layer1 = BasicBlock(8, 8, Conv2Plus1D)
        ds = nn.Sequential(nn.Conv3d(8, 16, kernel_size=1, stride=2, bias=False),
                           nn.BatchNorm3d(16))
        self.layer2 = BasicBlock(8, 16, Conv2Plus1D, stride=2, downsample=ds)
        self.avgpool = nn.AdaptiveAvgPool3d((1, 1, 1))
        self.fc = nn.Linear(16, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv3d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm3d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.stem(x)
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.avgpool(x)
        x = x.flatten(1)
        x = self.fc(x)
        return x


def summary(model, input_size, batch_size=-1):
    def register_hook(module):
        def hook(module, input, output):
            class_name = str(module.__class__).split(".")[-1].split("'")[0]
            module_idx = len(summary)
            m_key = "%s-%i" % (class_name, module_idx + 1)
            summary[m_key] = OrderedDict()
            summary[m_key]["input_shape"] = list(input[0].size())
            summary[m_key]["input_shape"][0] = batch_size
            if isinstance(output, (list, tuple)):
                summary[m_key]["output_shape"] = [[-1] + list(o.size())[1:] for o in output]
            else:
                summary[m_key]["output_shape"] = list(output.size())
                summary[m_key]["output_shape"][0] = batch_size
            params = 0
            if hasattr(module, "weight") and hasattr(module.weight, "size"):
                params += torch.prod(torch.LongTensor(list(module.weight.size())))
                summary[m_key]["trainable"] = module.weight.requires_grad
            if hasattr(module, "bias") and hasattr(module.bias, "size"):
                params += torch.prod(torch.LongTensor(list(module.bias.size())))
            summary[m_key]["nb_params"] = params

        if not isinstance(module, nn.Sequential) and not isinstance(module, nn.ModuleList) \
                and not (module == model):
            hooks.append(module.register_forward_hook(hook))

    x = torch.rand(2, *input_size).type(torch.FloatTensor)
    summary = OrderedDict()
    hooks = []
    model.apply(register_hook)
    model(x)
    for h in hooks:
        h.remove()
    print("----------------------------------------------------------------")
    line_new = "{:>20}  {:>25} {:>15}".format("Layer (type)", "Output Shape", "Param #")
    print(line_new)
    print("================================================================")
    total_params = 0
    total_output = 0
    trainable_params = 0
    for layer in summary:
        line_new = "{:>20}  {:>25} {:>15}".format(
            layer, str(summary[layer]["output_shape"]),
            "{0:,}".format(int(summary[layer]["nb_params"])))
        total_params += summary[layer]["nb_params"]
        total_output += torch.prod(torch.tensor(summary[layer]["output_shape"])).abs().item()
        if "trainable" in summary[layer]:
            if summary[layer]["trainable"]:
                trainable_params += summary[layer]["nb_params"]
        print(line_new)
    print("================================================================")
    print("Total params: {0:,}".format(int(total_params)))
    print("Trainable params: {0:,}".format(int(trainable_params)))
    print("Non-trainable params: {0:,}".format(int(total_params - trainable_params)))
    print("Output elements: {0:,}".format(total_output), type(total_params).__name__,
          total_params.dtype)


torch.manual_seed(0)
model = VideoNet()
print(model.layer2)
print(model.layer1.conv1[0][0].weight.shape, model.layer1.conv1[0][0])
summary(model, (3, 4, 16, 16))
model.layer2.requires_grad_(False)
print(sum(p.numel() for p in model.parameters() if p.requires_grad))
model.layer2.requires_grad_(True)

clip = torch.randn(2, 3, 4, 16, 16)
activations = {}
grads = {}


def save_act(name):
    def hook(module, inp, out):
        activations[name] = out.detach()
    return hook


def save_grad(name):
    def hook(module, grad_input, grad_output):
        grads[name] = (grad_output[0].shape, None if grad_input[0] is None
                       else tuple(grad_input[0].shape))
    return hook


def pre(module, args):
    print("pre-hook", type(module).__name__, tuple(args[0].shape))
    return None


h1 = model.layer1.register_forward_hook(save_act("layer1"))
h2 = model.fc.register_full_backward_hook(save_grad("fc"))
h3 = model.avgpool.register_forward_pre_hook(pre)
out = model(clip)
out.sum().backward()
print(activations["layer1"].shape, activations["layer1"].mean())
print(grads)
for h in (h1, h2, h3):
    h.remove()
print(model.stem[0].weight.grad.abs().sum())
print(out)

mp = nn.MaxPool3d(kernel_size=(1, 2, 2), stride=(1, 2, 2))
ap = nn.AvgPool3d((2, 2, 2), stride=1, padding=(1, 0, 0), count_include_pad=False)
print(mp, ap)
print(mp(clip).shape, ap(clip).shape, ap(clip)[0, 0, 0, 0, :3])
y, idx = F.max_pool3d(clip[:, :1], 2, return_indices=True)
print(y.shape, idx[0, 0, 0, 0], F.max_unpool3d(y, idx, 2).shape)

dec = nn.Sequential(
    nn.ConvTranspose3d(3, 4, kernel_size=3, stride=2, padding=1, output_padding=1),
    nn.ReLU(),
    nn.ConvTranspose3d(4, 2, kernel_size=(1, 4, 4), stride=(1, 2, 2), padding=(0, 1, 1),
                       bias=False),
)
print(dec)
small = torch.randn(1, 3, 2, 3, 3)
print(dec(small).shape)
up = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)
z = torch.randn(1, 4, 5, 5)
print(up(z).shape, up(z, output_size=[10, 10]).shape, up(z, output_size=(1, 2, 9, 10)).shape)
try:
    up(z, output_size=(12, 12))
except ValueError as e:
    print(type(e).__name__, e)
try:
    nn.ConvTranspose2d(4, 2, 3, stride=2, output_padding=2)(z)
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    nn.Conv3d(3, 4, 3)(torch.randn(3, 4, 4))
except RuntimeError as e:
    print(type(e).__name__, e)
print(F.conv_transpose2d(z, up.weight, up.bias, stride=2, padding=1, output_padding=1).shape)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    opt.zero_grad()
    loss = F.cross_entropy(model(clip), torch.tensor([1, 3]))
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
print("RESULT:", round(loss.item(), 4))
