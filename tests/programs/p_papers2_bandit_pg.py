"""Policy gradient (REINFORCE) for a multi-armed bandit with torch.distributions.Categorical, in the
style of the classic "simple RL in PyTorch" bandit posts (softmax policy, baseline, entropy)."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
Categorical = torch.distributions.Categorical


class Bandit:
    def __init__(self, means, gen):
        self.means = means
        self.gen = gen

    def pull(self, arm):
        return self.means[arm] + torch.randn(arm.shape, generator=self.gen)


class Policy(nn.Module):
    def __init__(self, n_arms):
        super(Policy, self).__init__()
        self.logits = nn.Parameter(torch.zeros(n_arms))

    def forward(self):
        return Categorical(logits=self.logits)


class ContextualPolicy(nn.Module):
    def __init__(self, n_ctx, n_arms):
        super().__init__()
        self.fc = nn.Linear(n_ctx, n_arms)

    def forward(self, x):
        return F.softmax(self.fc(x), dim=-1)


torch.manual_seed(0)
env = Bandit(torch.tensor([0.1, 0.5, 1.0, 0.3]), torch.Generator().manual_seed(1))
policy = Policy(4)
optimizer = torch.optim.Adam(policy.parameters(), lr=0.1)
baseline = 0.0
for episode in range(25):
    dist = policy()
    actions = dist.sample((16,))
    rewards = env.pull(actions)
    baseline = 0.9 * baseline + 0.1 * rewards.mean().item()
    log_probs = dist.log_prob(actions)
    loss = -((rewards - baseline) * log_probs).mean() - 0.01 * dist.entropy()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if episode % 5 == 0:
        print(f"episode {episode:3d} reward {rewards.mean().item():.4f} "
              f"loss {loss.item():.4f} probs {dist.probs.detach().numpy().round(3)}")
print(policy().probs)
print(torch.bincount(policy().sample((200,)), minlength=4))

ctx_policy = ContextualPolicy(3, 4)
opt = torch.optim.SGD(ctx_policy.parameters(), lr=0.5)
W = torch.tensor([[1., 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
for step in range(10):
    ctx = torch.eye(3)[torch.randint(0, 3, (32,))]
    probs = ctx_policy(ctx)
    m = Categorical(probs)
    action = m.sample()
    reward = (ctx @ W).gather(1, action.unsqueeze(1)).squeeze(1)
    loss = (-m.log_prob(action) * (reward - reward.mean())).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"{loss.item():.4f}", m.entropy().mean().item())
print(ctx_policy(torch.eye(3)).argmax(1))
print(Categorical(probs=torch.tensor([0.2, 0.3, 0.5])).log_prob(torch.tensor([0, 2])))
print(Categorical(torch.tensor([[0.2, 0.8], [0.5, 0.5]])).batch_shape)
c1 = Categorical(logits=policy.logits.detach())
c2 = Categorical(probs=torch.ones(4) / 4)
print(torch.distributions.kl_divergence(c1, c2), c1.enumerate_support())
oh = torch.distributions.OneHotCategorical(logits=policy.logits.detach())
print(oh.sample((3,)).shape, oh.log_prob(torch.eye(4)), c1.mean if False else c1.param_shape)
print("RESULT:", policy.logits.detach())
