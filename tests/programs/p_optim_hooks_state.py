"""Optimizer internals users touch: step hooks and state_dict hooks, zero_grad(set_to_none),
load_state_dict errors and casting, param_groups edits (manual lr decay), schedulers resumed
from a checkpoint with last_epoch, and the errors typical mistakes produce."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
optim = torch.optim
lr_scheduler = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".optim.lr_scheduler")

torch.manual_seed(0)
model = nn.Linear(3, 2)
x = torch.randn(6, 3)
y = torch.randn(6, 2)
opt = optim.Adam(model.parameters(), lr=0.01)


def pre_hook(optimizer, args, kwargs):
    print("pre", type(optimizer).__name__, args, kwargs)


def post_hook(optimizer, args, kwargs):
    print("post", len(optimizer.state))


h1 = opt.register_step_pre_hook(pre_hook)
h2 = opt.register_step_post_hook(post_hook)
for i in range(2):
    opt.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    opt.step()
h1.remove()
h2.remove()
opt.zero_grad()
print(model.weight.grad)
nn.functional.mse_loss(model(x), y).backward()
opt.zero_grad(set_to_none=False)
print(model.weight.grad)

# manual lr decay through param_groups, as older tutorials do
def adjust_learning_rate(optimizer, epoch, lr0=0.1):
    lr = lr0 * (0.1 ** (epoch // 2))
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr


sgd = optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
for epoch in range(5):
    adjust_learning_rate(sgd, epoch)
    sgd.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    sgd.step()
    print(epoch, sgd.param_groups[0]['lr'], f"{loss.item():.6f}")

# state_dict hooks
def sd_pre(optimizer):
    print("state_dict pre", type(optimizer).__name__)


def sd_post(optimizer, state_dict):
    state_dict["extra"] = 1
    return state_dict


opt.register_state_dict_pre_hook(sd_pre)
opt.register_state_dict_post_hook(sd_post)
sd = opt.state_dict()
print(sorted(sd.keys()))
del sd["extra"]


def load_pre(optimizer, state_dict):
    print("load pre", sorted(state_dict.keys()))


def load_post(optimizer):
    print("load post", optimizer.param_groups[0]["lr"])


opt2 = optim.Adam(model.parameters(), lr=0.5)
opt2.register_load_state_dict_pre_hook(load_pre)
opt2.register_load_state_dict_post_hook(load_post)
opt2.load_state_dict(sd)
print(opt2.state_dict()["state"][0]["step"], opt2.state[model.weight]["exp_avg"].dtype)

# mistakes and their errors
for bad in [lambda: optim.SGD(model.parameters(), lr=-1),
            lambda: optim.Adam(model.parameters(), betas=(1.0, 0.9)),
            lambda: optim.Adam(model.parameters(), eps=-1.0),
            lambda: optim.SGD([], lr=0.1),
            lambda: optim.SGD(model.parameters(), lr=0.1, nesterov=True),
            lambda: optim.SGD(model.weight, lr=0.1),
            lambda: opt2.load_state_dict({"state": {}, "param_groups": []}),
            lambda: sgd.add_param_group({"params": model.weight}),
            lambda: lr_scheduler.StepLR(sgd, step_size=2, last_epoch=3),
            lambda: lr_scheduler.StepLR(model, step_size=2),
            lambda: optim.Adam(model.parameters(), weight_decay=-1e-2),
            lambda: optim.RMSprop(model.parameters(), alpha=-0.1)]:
    try:
        bad()
        print("no error")
    except Exception as e:
        print(type(e).__name__, e)

# resuming a scheduler: the optimizer's param_groups carry initial_lr
opt = optim.SGD(model.parameters(), lr=0.1)
sched = lr_scheduler.MultiStepLR(opt, milestones=[2, 4], gamma=0.5)
for _ in range(3):
    opt.step()
    sched.step()
ckpt = {"opt": opt.state_dict(), "sched": sched.state_dict()}
print(ckpt["opt"]["param_groups"][0]["initial_lr"], ckpt["sched"]["milestones"])
opt_r = optim.SGD(model.parameters(), lr=0.1)
opt_r.load_state_dict(ckpt["opt"])
sched_r = lr_scheduler.MultiStepLR(opt_r, milestones=[2, 4], gamma=0.5, last_epoch=2)
sched_r.load_state_dict(ckpt["sched"])
for _ in range(3):
    opt_r.step()
    sched_r.step()
    print(sched_r.last_epoch, sched_r.get_last_lr())
print("RESULT: ok")
