"""Library code that reaches layers through their module paths: isinstance checks against
torch.nn.modules.* base classes (_ConvNd, _BatchNorm, _NormBase, _Loss, _DropoutNd, RNNBase,
_MaxPoolNd), weight-init by type, freezing BatchNorm, nn.modules.utils._pair, and
MultiheadAttention from torch.nn.modules.activation."""
import importlib
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = importlib.import_module(LIB + ".nn")
init = importlib.import_module(LIB + ".nn.init")
M = LIB + ".nn.modules."
conv = importlib.import_module(M + "conv")
batchnorm = importlib.import_module(M + "batchnorm")
loss_mod = importlib.import_module(M + "loss")
dropout = importlib.import_module(M + "dropout")
rnn = importlib.import_module(M + "rnn")
pooling = importlib.import_module(M + "pooling")
activation = importlib.import_module(M + "activation")
linear = importlib.import_module(M + "linear")
module = importlib.import_module(M + "module")
container = importlib.import_module(M + "container")
normalization = importlib.import_module(M + "normalization")
instancenorm = importlib.import_module(M + "instancenorm")
transformer = importlib.import_module(M + "transformer")
sparse = importlib.import_module(M + "sparse")
utils = importlib.import_module(M + "utils")
parameter = importlib.import_module(LIB + ".nn.parameter")

print(utils._pair(3), utils._triple(2), utils._single((4,)), utils._ntuple(4)(1))


class Block(module.Module):
    def __init__(self):
        super().__init__()
        self.conv = conv.Conv2d(3, 6, kernel_size=utils._pair(3), padding=1, bias=False)
        self.bn = batchnorm.BatchNorm2d(6)
        self.inorm = instancenorm.InstanceNorm2d(6, affine=True)
        self.pool = pooling.MaxPool2d(2)
        self.drop = dropout.Dropout2d(0.0)
        self.act = activation.ReLU(inplace=True)
        self.fc = linear.Linear(6 * 4 * 4, 8)
        self.ln = normalization.LayerNorm(8)
        self.gru = rnn.GRU(8, 8, batch_first=True)
        self.attn = activation.MultiheadAttention(8, 2, batch_first=True)
        self.emb = sparse.Embedding(10, 8)
        self.seq = container.Sequential(linear.Linear(8, 8), activation.GELU())

    def forward(self, x, tokens):
        h = self.drop(self.pool(self.act(self.inorm(self.bn(self.conv(x))))))
        h = self.ln(self.fc(torch.flatten(h, 1)))
        seq = self.emb(tokens) + h[:, None, :]
        seq, _ = self.gru(seq)
        out, w = self.attn(seq, seq, seq)
        return self.seq(out), w


def init_weights(m):
    if isinstance(m, conv._ConvNd):
        init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
    elif isinstance(m, (batchnorm._BatchNorm, nn.GroupNorm)):
        init.constant_(m.weight, 1)
        init.constant_(m.bias, 0)
    elif isinstance(m, linear.Linear):
        init.normal_(m.weight, 0, 0.01)
        if m.bias is not None:
            init.zeros_(m.bias)


def freeze_bn(model):
    for m in model.modules():
        if isinstance(m, batchnorm._NormBase) and not isinstance(m, instancenorm._InstanceNorm):
            m.eval()
            for p in m.parameters():
                p.requires_grad_(False)


torch.manual_seed(0)
model = Block()
model.apply(init_weights)
freeze_bn(model)
print(model)
kinds = {}
for name, m in model.named_modules():
    for base in (conv._ConvNd, batchnorm._BatchNorm, batchnorm._NormBase, dropout._DropoutNd,
                 rnn.RNNBase, pooling._MaxPoolNd, instancenorm._InstanceNorm,
                 linear.Linear, container.Sequential):
        if isinstance(m, base):
            kinds.setdefault(base.__name__, []).append(name)
print(kinds)
print("NonDynamicallyQuantizableLinear", type(model.attn.out_proj).__name__,
      isinstance(model.attn.out_proj, linear.NonDynamicallyQuantizableLinear))
print("Parameter", isinstance(model.fc.weight, parameter.Parameter),
      parameter.Parameter is nn.Parameter)
print("TransformerEncoderLayer path", transformer.TransformerEncoderLayer is
      nn.TransformerEncoderLayer)

crit = loss_mod.CrossEntropyLoss(label_smoothing=0.1)
print("loss base", isinstance(crit, loss_mod._WeightedLoss), isinstance(crit, loss_mod._Loss),
      crit.reduction)
x = torch.randn(2, 3, 8, 8)
tokens = torch.randint(0, 10, (2, 5))
out, w = model(x, tokens)
target = torch.randint(0, 8, (2, 5))
loss = crit(out.reshape(-1, 8), target.reshape(-1))
loss.backward()
print("loss %.5f" % loss.item(), out.shape, w.shape)
print("bn frozen", model.bn.weight.grad is None, model.bn.training,
      model.bn.running_mean.abs().sum().item())
print("grads", model.conv.weight.grad.norm(), model.attn.in_proj_weight.grad.norm())
print("trainable", sum(p.numel() for p in model.parameters() if p.requires_grad))
print("RESULT:", out.sum())
