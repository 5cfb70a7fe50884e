"""Stochastic Weight Averaging (torch.optim.swa_utils docs and the SWA blog post):
AveragedModel, SWALR, update_bn, and an EMA model via get_ema_multi_avg_fn."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
swa_utils = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".optim.swa_utils")
AveragedModel, SWALR = swa_utils.AveragedModel, swa_utils.SWALR
data = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".utils.data")
CosineAnnealingLR = torch.optim.lr_scheduler.CosineAnnealingLR

torch.manual_seed(0)
X = torch.randn(64, 5)
Y = (X[:, :1] * 2 - X[:, 1:2]).sin() + 0.1 * torch.randn(64, 1)
loader = data.DataLoader(data.TensorDataset(X, Y), batch_size=16, shuffle=False)

model = nn.Sequential(nn.Linear(5, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 1))
loss_fn = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
swa_model = AveragedModel(model)
print(swa_model)
scheduler = CosineAnnealingLR(optimizer, T_max=6)
swa_start = 3
swa_scheduler = SWALR(optimizer, swa_lr=0.02, anneal_epochs=2, anneal_strategy="cos")

for epoch in range(6):
    for input, target in loader:
        optimizer.zero_grad()
        loss_fn(model(input), target).backward()
        optimizer.step()
    if epoch > swa_start:
        swa_model.update_parameters(model)
        swa_scheduler.step()
    else:
        scheduler.step()
    print(epoch, f"{loss_fn(model(X), Y).item():.5f}", optimizer.param_groups[0]["lr"],
          swa_model.n_averaged)

print(swa_model.module[1].running_mean[:4])
swa_utils.update_bn(loader, swa_model)
print(swa_model.module[1].running_mean[:4])
print(swa_model.module[1].running_var[:4])
print(swa_model.module[1].num_batches_tracked)
swa_model.eval()
with torch.no_grad():
    preds = swa_model(X)
print(f"{loss_fn(preds, Y).item():.5f}")
print(list(swa_model.state_dict().keys()))
print(swa_model.n_averaged, swa_model.n_averaged.dtype)

# EMA of the weights (get_ema_multi_avg_fn), buffers averaged too. (No bias before the
# BatchNorm: its gradient is pure rounding noise, which Adam would amplify to +-lr.)
model = nn.Sequential(nn.Linear(5, 8, bias=False), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
ema_model = AveragedModel(model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.9),
                          use_buffers=True)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(3):
    for input, target in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(input), target)
        loss.backward()
        optimizer.step()
        ema_model.update_parameters(model)
    print(epoch, f"{loss.item():.5f}")
print(ema_model.module[0].weight[0])
print(ema_model.module[1].bias)
print(ema_model.module[1].running_mean[:3])
print(ema_model.n_averaged)

# the single-tensor avg_fn form, an exponential moving average written by hand
ema_avg = lambda averaged_model_parameter, model_parameter, num_averaged: (  # noqa: E731
    0.1 * averaged_model_parameter + 0.9 * model_parameter)
ema2 = AveragedModel(model, avg_fn=ema_avg)
ema3 = AveragedModel(model, avg_fn=swa_utils.get_ema_avg_fn(0.5))
swa3 = AveragedModel(model, multi_avg_fn=swa_utils.get_swa_multi_avg_fn())
for _ in range(2):
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(0.9).add_(0.01)
    ema2.update_parameters(model)
    ema3.update_parameters(model)
    swa3.update_parameters(model)
print(ema2.module[3].weight)
print(ema3.module[3].weight)
print(swa3.module[3].weight)
print(ema2.module[3].weight.requires_grad, swa3.n_averaged)

opt = torch.optim.SGD(model.parameters(), lr=0.5)
s = SWALR(opt, swa_lr=[0.05], anneal_epochs=3, anneal_strategy="linear")
for _ in range(4):
    opt.step()
    s.step()
    print(s.get_last_lr())
print(sorted(s.state_dict().keys()))
print("RESULT: ok")
