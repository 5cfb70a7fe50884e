"""CapsNet (gram-ai/capsule-networks style): squash, dynamic routing with softmax over a dim,
matmul broadcasting of the routing weights; plus the einsum formulation. Shrunk: 16x16 inputs."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

BATCH_SIZE = 4
NUM_CLASSES = 5
NUM_ROUTING_ITERATIONS = 3


def softmax(input, dim=1):
    transposed_input = input.transpose(dim, len(input.size()) - 1)
    softmaxed_output = F.softmax(transposed_input.contiguous().view(-1, transposed_input.size(-1)),
                                 dim=-1)
    return softmaxed_output.view(*transposed_input.size()).transpose(dim, len(input.size()) - 1)


class CapsuleLayer(nn.Module):
    def __init__(self, num_capsules, num_route_nodes, in_channels, out_channels, kernel_size=None,
                 stride=None, num_iterations=NUM_ROUTING_ITERATIONS):
        super(CapsuleLayer, self).__init__()
        self.num_route_nodes = num_route_nodes
        self.num_iterations = num_iterations
        self.num_capsules = num_capsules
        if num_route_nodes != -1:
            self.route_weights = nn.Parameter(
                torch.randn(num_capsules, num_route_nodes, in_channels, out_channels))
        else:
            self.capsules = nn.ModuleList(
                [nn.Conv2d(in_channels, out_channels, kernel_size=kernel_size, stride=stride,
                           padding=0) for _ in range(num_capsules)])

    def squash(self, tensor, dim=-1):
        squared_norm = (tensor ** 2).sum(dim=dim, keepdim=True)
        scale = squared_norm / (1 + squared_norm)
        return scale * tensor / torch.sqrt(squared_norm)

    def forward(self, x):
        if self.num_route_nodes != -1:
            priors = x[None, :, :, None, :] @ self.route_weights[:, None, :, :, :]
            logits = torch.zeros(*priors.size())
            for i in range(self.num_iterations):
                probs = softmax(logits, dim=2)
                outputs = self.squash((probs * priors).sum(dim=2, keepdim=True))
                if i != self.num_iterations - 1:
                    delta_logits = (priors * outputs).sum(dim=-1, keepdim=True)
                    logits = logits + delta_logits
        else:
            outputs = [capsule(x).view(x.size(0), -1, 1) for capsule in self.capsules]
            outputs = torch.cat(outputs, dim=-1)
            outputs = self.squash(outputs)
        return outputs


class CapsuleNet(nn.Module):
    def __init__(self):
        super(CapsuleNet, self).__init__()
        self.conv1 = nn.Conv2d(in_channels=1, out_channels=16, kernel_size=5, stride=1)
        self.primary_capsules = CapsuleLayer(num_capsules=4, num_route_nodes=-1, in_channels=16,
                                             out_channels=8, kernel_size=5, stride=2)
        self.digit_capsules = CapsuleLayer(num_capsules=NUM_CLASSES, num_route_nodes=8 * 4 * 4,
                                           in_channels=4, out_channels=6)
        self.decoder = nn.Sequential(
            nn.Linear(6 * NUM_CLASSES, 32),
            nn.ReLU(inplace=True),
            nn.Linear(32, 256),
            nn.Sigmoid(),
        )

    def forward(self, x, y=None):
        x = F.relu(self.conv1(x), inplace=True)
        x = self.primary_capsules(x)
        x = self.digit_capsules(x).squeeze().transpose(0, 1)
        classes = (x ** 2).sum(dim=-1) ** 0.5
        classes = F.softmax(classes, dim=-1)
        if y is None:
            _, max_length_indices = classes.max(dim=1)
            y = torch.eye(NUM_CLASSES).index_select(dim=0, index=max_length_indices.data)
        reconstructions = self.decoder((x * y[:, :, None]).reshape(x.size(0), -1))
        return classes, reconstructions


class CapsuleLoss(nn.Module):
    def __init__(self):
        super(CapsuleLoss, self).__init__()
        self.reconstruction_loss = nn.MSELoss(reduction="sum")

    def forward(self, images, labels, classes, reconstructions):
        left = F.relu(0.9 - classes, inplace=True) ** 2
        right = F.relu(classes - 0.1, inplace=True) ** 2
        margin_loss = labels * left + 0.5 * (1. - labels) * right
        margin_loss = margin_loss.sum()
        assert torch.numel(images) == torch.numel(reconstructions)
        images = images.view(reconstructions.size()[0], -1)
        reconstruction_loss = self.reconstruction_loss(reconstructions, images)
        return (margin_loss + 0.0005 * reconstruction_loss) / images.size(0)


torch.manual_seed(0)
model = CapsuleNet()
print(model)
print("# parameters:", sum(param.numel() for param in model.parameters()))
optimizer = torch.optim.Adam(model.parameters())
capsule_loss = CapsuleLoss()
images = torch.rand(BATCH_SIZE, 1, 16, 16)
targets = torch.randint(0, NUM_CLASSES, (BATCH_SIZE,))
labels = torch.eye(NUM_CLASSES).index_select(dim=0, index=targets)
print(labels)
for step in range(4):
    model.train()
    optimizer.zero_grad()
    classes, reconstructions = model(images, labels)
    loss = capsule_loss(images, labels, classes, reconstructions)
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.6f}")
model.eval()
with torch.no_grad():
    classes, reconstructions = model(images)
print(classes)
print(classes.max(dim=1)[1], reconstructions.shape)


def squash(s, dim=-1, eps=1e-8):
    squared_norm = torch.sum(s ** 2, dim=dim, keepdim=True)
    return squared_norm / (1 + squared_norm) * s / (torch.sqrt(squared_norm) + eps)


def dynamic_routing(u_hat, num_iters=3):
    b = torch.zeros(u_hat.shape[:3], device=u_hat.device)
    for it in range(num_iters):
        c = F.softmax(b, dim=1)
        s = torch.einsum("bij,bijk->bjk", c, u_hat)
        v = squash(s)
        if it < num_iters - 1:
            b = b + torch.einsum("bijk,bjk->bij", u_hat, v)
    return v, c


W = nn.Parameter(0.1 * torch.randn(1, 12, 3, 6, 4))
u = torch.randn(2, 12, 1, 4, 1)
u_hat = torch.matmul(W, u).squeeze(-1)
v, c = dynamic_routing(u_hat)
print(u_hat.shape, v.shape, c.sum(dim=1))
print(v.norm(dim=-1))
v.norm(dim=-1).sum().backward()
print(f"{W.grad.abs().sum().item():.6f}")
print(f"RESULT: {loss.item():.6f}")
