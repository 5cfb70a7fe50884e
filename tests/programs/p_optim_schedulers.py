"""Every lr_scheduler in the usual epoch loop, printing get_last_lr() and the group lr,
plus state_dict round trips (the torch.optim.lr_scheduler docs' examples)."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
lr_scheduler = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".optim.lr_scheduler")

torch.manual_seed(0)
model = nn.Linear(4, 2)
x = torch.randn(8, 4)
y = torch.randn(8, 2)


def make(lr=0.1, opt="SGD", **kw):
    m = nn.Linear(4, 2)
    if opt == "SGD":
        return torch.optim.SGD(m.parameters(), lr=lr, momentum=0.9, **kw), m
    return torch.optim.Adam(m.parameters(), lr=lr, **kw), m


def train(optimizer, m):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(m(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def run(name, build, epochs=8, metric=False):
    optimizer, m = make()
    scheduler = build(optimizer)
    print(name, type(scheduler).__name__)
    for epoch in range(epochs):
        loss = train(optimizer, m)
        if metric:
            scheduler.step(loss)
            print(epoch, f"{loss:.4f}", optimizer.param_groups[0]['lr'])
        else:
            scheduler.step()
            print(epoch, scheduler.get_last_lr(), optimizer.param_groups[0]['lr'])
    return optimizer, scheduler


run("step", lambda o: lr_scheduler.StepLR(o, step_size=3, gamma=0.5))
run("multistep", lambda o: lr_scheduler.MultiStepLR(o, milestones=[2, 5], gamma=0.1))
run("exp", lambda o: lr_scheduler.ExponentialLR(o, gamma=0.9))
run("cos", lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=5, eta_min=0.001))
run("warm", lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01))
run("onecycle", lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.5, total_steps=10))
run("onecycle_lin", lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.5, steps_per_epoch=4, epochs=3,
                                                      anneal_strategy="linear",
                                                      three_phase=True))
run("cyclic", lambda o: lr_scheduler.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2))
run("cyclic2", lambda o: lr_scheduler.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2,
                                               mode="exp_range", gamma=0.9))
run("plateau", lambda o: lr_scheduler.ReduceLROnPlateau(o, mode="min", factor=0.5, patience=0,
                                                        threshold=0.5), metric=True, epochs=6)
run("lambda", lambda o: lr_scheduler.LambdaLR(o, lr_lambda=lambda epoch: 0.95 ** epoch))
run("mult", lambda o: lr_scheduler.MultiplicativeLR(o, lr_lambda=lambda epoch: 0.9))
run("linear", lambda o: lr_scheduler.LinearLR(o, start_factor=0.25, total_iters=4))
run("const", lambda o: lr_scheduler.ConstantLR(o, factor=0.5, total_iters=3))
run("poly", lambda o: lr_scheduler.PolynomialLR(o, total_iters=6, power=2.0))
run("seq", lambda o: lr_scheduler.SequentialLR(
    o, schedulers=[lr_scheduler.ConstantLR(o, factor=0.1, total_iters=2),
                   lr_scheduler.ExponentialLR(o, gamma=0.9)], milestones=[2]))
run("chain", lambda o: lr_scheduler.ChainedScheduler(
    [lr_scheduler.ConstantLR(o, factor=0.1, total_iters=2),
     lr_scheduler.ExponentialLR(o, gamma=0.9)]))

# the docs' warmup idiom: two schedulers stepped one after the other
optimizer, m = make()
scheduler1 = lr_scheduler.ExponentialLR(optimizer, gamma=0.9)
scheduler2 = lr_scheduler.MultiStepLR(optimizer, milestones=[3, 6], gamma=0.1)
for epoch in range(8):
    train(optimizer, m)
    scheduler1.step()
    scheduler2.step()
    print(epoch, scheduler2.get_last_lr())

# state_dict round trips
optimizer, m = make()
scheduler = lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
for _ in range(3):
    train(optimizer, m)
    scheduler.step()
sd = scheduler.state_dict()
print(sorted(sd.keys()))
print({k: v for k, v in sorted(sd.items()) if k != "_get_lr_called_within_step"})
opt2, m2 = make()
s2 = lr_scheduler.StepLR(opt2, step_size=2, gamma=0.5)
s2.load_state_dict(sd)
print(s2.last_epoch, s2.get_last_lr(), s2.base_lrs)

optimizer, m = make()
scheduler = lr_scheduler.ReduceLROnPlateau(optimizer, patience=1)
for v in [1.0, 0.9, 0.95, 0.97, 0.99]:
    scheduler.step(v)
sd = scheduler.state_dict()
print(sorted(sd.keys()))
print(sd["best"], sd["num_bad_epochs"], sd["last_epoch"], sd["_last_lr"], sd["cooldown_counter"])
opt2, m2 = make()
s2 = lr_scheduler.ReduceLROnPlateau(opt2)
s2.load_state_dict(sd)
print(s2.patience, s2.best, s2.get_last_lr())

optimizer, m = make(opt="Adam")
scheduler = lr_scheduler.OneCycleLR(optimizer, max_lr=0.01, total_steps=6)
print(optimizer.param_groups[0]["betas"], optimizer.param_groups[0]["lr"])
for _ in range(4):
    train(optimizer, m)
    scheduler.step()
    print(optimizer.param_groups[0]["betas"], f"{optimizer.param_groups[0]['lr']:.6f}")
print(sorted(optimizer.param_groups[0].keys()))

optimizer, m = make()
scheduler = lr_scheduler.LambdaLR(optimizer, lr_lambda=[lambda e: 0.5 ** e])
train(optimizer, m)
scheduler.step()
print(sorted(scheduler.state_dict().keys()), scheduler.state_dict()["lr_lambdas"])
print(optimizer.param_groups[0]["initial_lr"])
print("RESULT: ok")
