"""BYOL (lucidrains/byol-pytorch style): online encoder + projector + predictor, a target
network built with copy.deepcopy and requires_grad_(False), EMA update of the target with
an EMA class (update_average), the normalized-MSE loss_fn with F.normalize, symmetric loss,
singleton caching idiom, torch.no_grad target branch, and simple tensor augmentations."""
import copy
import importlib
import os
from functools import wraps

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def default(val, def_val):
    return def_val if val is None else val


def flatten(t):
    return t.reshape(t.shape[0], -1)


def singleton(cache_key):
    def inner_fn(fn):
        @wraps(fn)
        def wrapper(self, *args, **kwargs):
            instance = getattr(self, cache_key)
            if instance is not None:
                return instance
            instance = fn(self, *args, **kwargs)
            setattr(self, cache_key, instance)
            return instance
        return wrapper
    return inner_fn


def set_requires_grad(model, val):
    for p in model.parameters():
        p.requires_grad = val


def loss_fn(x, y):
    x = F.normalize(x, dim=-1, p=2)
    y = F.normalize(y, dim=-1, p=2)
    return 2 - 2 * (x * y).sum(dim=-1)


class EMA():
    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def update_average(self, old, new):
        if old is None:
            return new
        return old * self.beta + (1 - self.beta) * new


def update_moving_average(ema_updater, ma_model, current_model):
    for current_params, ma_params in zip(current_model.parameters(), ma_model.parameters()):
        old_weight, up_weight = ma_params.data, current_params.data
        ma_params.data = ema_updater.update_average(old_weight, up_weight)
    for current_buffers, ma_buffers in zip(current_model.buffers(), ma_model.buffers()):
        ma_buffers.copy_(current_buffers)


def MLP(dim, projection_size, hidden_size=32):
    return nn.Sequential(
        nn.Linear(dim, hidden_size),
        nn.BatchNorm1d(hidden_size),
        nn.ReLU(inplace=True),
        nn.Linear(hidden_size, projection_size)
    )


class NetWrapper(nn.Module):
    def __init__(self, net, projection_size, projection_hidden_size, layer=-2):
        super().__init__()
        self.net = net
        self.layer = layer
        self.projector = None
        self.projection_size = projection_size
        self.projection_hidden_size = projection_hidden_size
        self.hidden = {}
        self.hook_registered = False

    def _find_layer(self):
        if type(self.layer) == str:  # noqa: E721
            modules = dict([*self.net.named_modules()])
            return modules.get(self.layer, None)
        elif type(self.layer) == int:  # noqa: E721
            children = [*self.net.children()]
            return children[self.layer]
        return None

    def _hook(self, _, input, output):
        device = input[0].device
        self.hidden[device] = flatten(output)

    def _register_hook(self):
        layer = self._find_layer()
        assert layer is not None, f'hidden layer ({self.layer}) not found'
        layer.register_forward_hook(self._hook)
        self.hook_registered = True

    @singleton('projector')
    def _get_projector(self, hidden):
        _, dim = hidden.shape
        projector = MLP(dim, self.projection_size, self.projection_hidden_size)
        return projector.to(hidden)

    def get_representation(self, x):
        if self.layer == -1:
            return self.net(x)
        if not self.hook_registered:
            self._register_hook()
        self.hidden.clear()
        _ = self.net(x)
        hidden = self.hidden[x.device]
        self.hidden.clear()
        assert hidden is not None, f'hidden layer {self.layer} never emitted an output'
        return hidden

    def forward(self, x, return_projection=True):
        representation = self.get_representation(x)
        if not return_projection:
            return representation
        projector = self._get_projector(representation)
        projection = projector(representation)
        return projection, representation


def augment(x):
    # RandomHorizontalFlip + brightness jitter + gaussian noise, written in torch
    flip = torch.rand(x.shape[0]) < 0.5
    x = torch.where(flip[:, None, None, None], x.flip(-1), x)
    x = x * (0.8 + 0.4 * torch.rand(x.shape[0], 1, 1, 1))
    return x + 0.05 * torch.randn_like(x)


class BYOL(nn.Module):
    def __init__(self, net, image_size, hidden_layer=-2, projection_size=16,
                 projection_hidden_size=32, moving_average_decay=0.99,
                 use_momentum=True):
        super().__init__()
        self.net = net
        self.augment1 = augment
        self.augment2 = augment
        self.online_encoder = NetWrapper(net, projection_size, projection_hidden_size,
                                         layer=hidden_layer)
        self.use_momentum = use_momentum
        self.target_encoder = None
        self.target_ema_updater = EMA(moving_average_decay)
        self.online_predictor = MLP(projection_size, projection_size, projection_hidden_size)
        self.forward(torch.randn(2, 3, image_size, image_size))

    @singleton('target_encoder')
    def _get_target_encoder(self):
        target_encoder = copy.deepcopy(self.online_encoder)
        set_requires_grad(target_encoder, False)
        return target_encoder

    def reset_moving_average(self):
        del self.target_encoder
        self.target_encoder = None

    def update_moving_average(self):
        assert self.use_momentum, 'you do not need to update the moving average'
        assert self.target_encoder is not None, 'target encoder has not been created yet'
        update_moving_average(self.target_ema_updater, self.target_encoder, self.online_encoder)

    def forward(self, x, return_embedding=False, return_projection=True):
        assert not (self.training and x.shape[0] == 1), 'batch size must be > 1'
        if return_embedding:
            return self.online_encoder(x, return_projection=return_projection)
        image_one, image_two = self.augment1(x), self.augment2(x)
        images = torch.cat((image_one, image_two), dim=0)
        online_projections, _ = self.online_encoder(images)
        online_predictions = self.online_predictor(online_projections)
        online_pred_one, online_pred_two = online_predictions.chunk(2, dim=0)
        with torch.no_grad():
            target_encoder = (self._get_target_encoder() if self.use_momentum
                              else self.online_encoder)
            target_projections, _ = target_encoder(images)
            target_projections = target_projections.detach()
            target_proj_one, target_proj_two = target_projections.chunk(2, dim=0)
        loss_one = loss_fn(online_pred_one, target_proj_two.detach())
        loss_two = loss_fn(online_pred_two, target_proj_one.detach())
        loss = loss_one + loss_two
        return loss.mean()


torch.manual_seed(0)
resnet = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
    nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
    nn.Sequential(nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten()),
    nn.Linear(16, 10),
)
# the hook reads the avgpool output: children()[-2]
learner = BYOL(resnet, image_size=8, hidden_layer=-2)
print(learner.online_encoder.projector)
print(learner.target_encoder is None)
print(sum(p.numel() for p in learner.parameters()))
print([n for n, _ in learner.named_children()])
# byol-pytorch's README uses Adam(lr=3e-4); Adam turns the float-noise gradients of the
# Linear biases in front of BatchNorm1d (exactly zero in real arithmetic) into full-size
# steps of random sign, so use SGD with momentum (the paper's LARS is SGD-like) instead.
opt = torch.optim.SGD(learner.parameters(), lr=0.05, momentum=0.9)
images = torch.randn(6, 3, 8, 8)
for step in range(6):
    loss = learner(images)
    opt.zero_grad()
    loss.backward()
    opt.step()
    learner.update_moving_average()
    print(f"step {step} loss {loss.item():.5f}")

tgt = learner.target_encoder
print(type(tgt).__name__, all(not p.requires_grad for p in tgt.parameters()))
print(tgt.net[1].running_mean)
online_w = learner.online_encoder.projector[0].weight
target_w = tgt.projector[0].weight
print(f"{(online_w - target_w).abs().max().item():.6f}")
print(online_w.grad is not None, target_w.grad)
print(loss.grad_fn.name() if hasattr(loss.grad_fn, "name") else type(loss.grad_fn).__name__)
print(loss_fn(torch.ones(2, 3), torch.ones(2, 3)))
learner.eval()
projection, embedding = learner(images, return_embedding=True)
print(projection.shape, embedding.shape)
emb = learner(images, return_embedding=True, return_projection=False)
print(emb.shape, torch.allclose(emb, embedding))
print(f"{embedding.sum().item():.4f} {projection.std().item():.4f}")
learner.reset_moving_average()
print(learner.target_encoder)
print("RESULT: byol", f"{loss.item():.4f}")
