"""Per-parameter options (torch.optim docs), add_param_group, gradient accumulation,
clip_grad_norm_/clip_grad_value_, optimizer.state_dict() inspection and a checkpoint resume
("Saving and loading a general checkpoint")."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
optim = torch.optim
clip = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.utils")

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.base = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 8))
        self.classifier = nn.Linear(8, 3)

    def forward(self, x):
        return self.classifier(torch.relu(self.base(x)))


model = Net()
x = torch.randn(32, 6)
y = torch.randint(0, 3, (32,))
loss_fn = nn.CrossEntropyLoss()

optimizer = optim.SGD([
    {'params': model.base.parameters()},
    {'params': model.classifier.parameters(), 'lr': 1e-3}
], lr=1e-2, momentum=0.9)
print(optimizer)
print(len(optimizer.param_groups), [g['lr'] for g in optimizer.param_groups])

# weight decay only on weights (the usual "no decay for bias" recipe)
decay, no_decay = [], []
for name, p in model.named_parameters():
    (no_decay if name.endswith("bias") else decay).append(p)
adamw = optim.AdamW([{"params": decay, "weight_decay": 0.05},
                     {"params": no_decay, "weight_decay": 0.0}], lr=3e-3, betas=(0.9, 0.95))
print(adamw)
for step in range(5):
    adamw.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    adamw.step()
    print(step, f"{loss.item():.6f}")
print([len(g["params"]) for g in adamw.param_groups])

# gradient accumulation over micro-batches, clipping before the step
accumulation_steps = 4
optimizer.zero_grad()
for i, (xb, yb) in enumerate(zip(x.split(8), y.split(8))):
    loss = loss_fn(model(xb), yb) / accumulation_steps
    loss.backward()
    if (i + 1) % accumulation_steps == 0:
        total_norm = clip.clip_grad_norm_(model.parameters(), max_norm=0.5)
        print("total_norm", total_norm)
        optimizer.step()
        optimizer.zero_grad()
for i in range(3):
    loss = loss_fn(model(x), y)
    loss.backward()
    n2 = nn.utils.clip_grad_norm_(model.parameters(), 1.0, norm_type=2.0)
    ninf = nn.utils.clip_grad_norm_(model.parameters(), 0.1, norm_type="inf")
    r = nn.utils.clip_grad_value_(model.parameters(), clip_value=0.01)
    print(i, n2, ninf, r, f"{loss.item():.6f}")
    print(model.classifier.bias.grad)
    optimizer.step()
    optimizer.zero_grad()
g = [p.grad for p in model.parameters()]
print(g)
print(nn.utils.get_total_norm([torch.ones(3), torch.ones(4)]))
print(nn.utils.parameters_to_vector(model.classifier.parameters()).shape)

# add_param_group: unfreeze a new head later in training
head = nn.Linear(3, 2)
optimizer.add_param_group({'params': head.parameters(), 'lr': 0.05, 'momentum': 0.5})
print(len(optimizer.param_groups), optimizer.param_groups[2]['lr'],
      optimizer.param_groups[2]['momentum'], sorted(optimizer.param_groups[2].keys()))
y2 = torch.randn(32, 2)
for i in range(3):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(head(model(x)), y2)
    loss.backward()
    optimizer.step()
    print(i, f"{loss.item():.6f}")

# optimizer.state_dict() inspection
sd = optimizer.state_dict()
print(sd.keys())
print(sorted(sd['state'].keys()))
print(sd['state'][0].keys(), sd['state'][0]['momentum_buffer'].shape)
for group in sd['param_groups']:
    print({k: v for k, v in group.items()})
ad = adamw.state_dict()
print(sorted(ad['state'][0].keys()), ad['state'][0]['step'], ad['state'][0]['exp_avg_sq'].dtype)
print(ad['param_groups'][1])

# checkpoint and resume: the resumed run prints the same losses
PATH = "/tmp/_p_optim_param_groups.pt"
model = Net()
optimizer = optim.Adam(model.parameters(), lr=0.01)
for epoch in range(3):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
torch.save({
    'epoch': epoch,
    'model_state_dict': model.state_dict(),
    'optimizer_state_dict': optimizer.state_dict(),
    'loss': loss,
}, PATH)
ref = []
for epoch in range(3, 6):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    ref.append(f"{loss.item():.6f}")
print(ref)

model = Net()
optimizer = optim.Adam(model.parameters(), lr=0.01)
checkpoint = torch.load(PATH, weights_only=True)
model.load_state_dict(checkpoint['model_state_dict'])
optimizer.load_state_dict(checkpoint['optimizer_state_dict'])
epoch = checkpoint['epoch']
loss = checkpoint['loss']
print(epoch, loss)
model.train()
res = []
for epoch in range(3, 6):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    res.append(f"{loss.item():.6f}")
print(res, res == ref)
print(optimizer.state_dict()['state'][0]['step'])
print("RESULT: ok")
