"""A2C with GAE computed backwards (ikostrikov/pytorch-a2c-ppo-acktr-gail's storage.py
compute_returns and a2c_acktr.py update, MultiCategorical/DiagGaussian heads of its
distributions.py with FixedCategorical/FixedNormal), entropy bonus and grad clipping,
on a vectorised toy environment written in torch; plus the distribution misuse errors the
torch.distributions docs show."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = torch.optim
D = torch.distributions


class FixedCategorical(torch.distributions.Categorical):
    def sample(self):
        return super().sample().unsqueeze(-1)

    def log_probs(self, actions):
        return (
            super()
            .log_prob(actions.squeeze(-1))
            .view(actions.size(0), -1)
            .sum(-1)
            .unsqueeze(-1)
        )

    def mode(self):
        return self.probs.argmax(dim=-1, keepdim=True)


class FixedNormal(torch.distributions.Normal):
    def log_probs(self, actions):
        return super().log_prob(actions).sum(-1, keepdim=True)

    def entropy(self):
        return super().entropy().sum(-1)

    def mode(self):
        return self.mean


def init(module, weight_init, bias_init, gain=1):
    weight_init(module.weight.data, gain=gain)
    bias_init(module.bias.data)
    return module


class AddBias(nn.Module):
    def __init__(self, bias):
        super(AddBias, self).__init__()
        self._bias = nn.Parameter(bias.unsqueeze(1))

    def forward(self, x):
        if x.dim() == 2:
            bias = self._bias.t().view(1, -1)
        else:
            bias = self._bias.t().view(1, -1, 1, 1)
        return x + bias


class Categorical(nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super(Categorical, self).__init__()
        init_ = lambda m: init(m, nn.init.orthogonal_, lambda x: nn.init.constant_(x, 0),  # noqa: E731
                               gain=0.01)
        self.linear = init_(nn.Linear(num_inputs, num_outputs))

    def forward(self, x):
        x = self.linear(x)
        return FixedCategorical(logits=x)


class DiagGaussian(nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super(DiagGaussian, self).__init__()
        init_ = lambda m: init(m, nn.init.orthogonal_,  # noqa: E731
                               lambda x: nn.init.constant_(x, 0))
        self.fc_mean = init_(nn.Linear(num_inputs, num_outputs))
        self.logstd = AddBias(torch.zeros(num_outputs))

    def forward(self, x):
        action_mean = self.fc_mean(x)
        zeros = torch.zeros(action_mean.size())
        action_logstd = self.logstd(zeros)
        return FixedNormal(action_mean, action_logstd.exp())


class MLPBase(nn.Module):
    def __init__(self, num_inputs, hidden_size=32):
        super(MLPBase, self).__init__()
        init_ = lambda m: init(m, nn.init.orthogonal_,  # noqa: E731
                               lambda x: nn.init.constant_(x, 0), gain=2 ** 0.5)
        self.actor = nn.Sequential(init_(nn.Linear(num_inputs, hidden_size)), nn.Tanh(),
                                   init_(nn.Linear(hidden_size, hidden_size)), nn.Tanh())
        self.critic = nn.Sequential(init_(nn.Linear(num_inputs, hidden_size)), nn.Tanh(),
                                    init_(nn.Linear(hidden_size, hidden_size)), nn.Tanh())
        self.critic_linear = init_(nn.Linear(hidden_size, 1))
        self.train()

    def forward(self, inputs):
        return self.critic_linear(self.critic(inputs)), self.actor(inputs)


class Policy(nn.Module):
    def __init__(self, obs_dim, num_actions):
        super(Policy, self).__init__()
        self.base = MLPBase(obs_dim)
        self.dist = Categorical(32, num_actions)

    def act(self, inputs, deterministic=False):
        value, actor_features = self.base(inputs)
        dist = self.dist(actor_features)
        action = dist.mode() if deterministic else dist.sample()
        action_log_probs = dist.log_probs(action)
        return value, action, action_log_probs

    def get_value(self, inputs):
        return self.base(inputs)[0]

    def evaluate_actions(self, inputs, action):
        value, actor_features = self.base(inputs)
        dist = self.dist(actor_features)
        action_log_probs = dist.log_probs(action)
        dist_entropy = dist.entropy().mean()
        return value, action_log_probs, dist_entropy


class RolloutStorage(object):
    def __init__(self, num_steps, num_processes, obs_dim):
        self.obs = torch.zeros(num_steps + 1, num_processes, obs_dim)
        self.rewards = torch.zeros(num_steps, num_processes, 1)
        self.value_preds = torch.zeros(num_steps + 1, num_processes, 1)
        self.returns = torch.zeros(num_steps + 1, num_processes, 1)
        self.action_log_probs = torch.zeros(num_steps, num_processes, 1)
        self.actions = torch.zeros(num_steps, num_processes, 1).long()
        self.masks = torch.ones(num_steps + 1, num_processes, 1)
        self.bad_masks = torch.ones(num_steps + 1, num_processes, 1)
        self.num_steps = num_steps
        self.step = 0

    def insert(self, obs, actions, action_log_probs, value_preds, rewards, masks, bad_masks):
        self.obs[self.step + 1].copy_(obs)
        self.actions[self.step].copy_(actions)
        self.action_log_probs[self.step].copy_(action_log_probs)
        self.value_preds[self.step].copy_(value_preds)
        self.rewards[self.step].copy_(rewards)
        self.masks[self.step + 1].copy_(masks)
        self.bad_masks[self.step + 1].copy_(bad_masks)
        self.step = (self.step + 1) % self.num_steps

    def after_update(self):
        self.obs[0].copy_(self.obs[-1])
        self.masks[0].copy_(self.masks[-1])
        self.bad_masks[0].copy_(self.bad_masks[-1])

    def compute_returns(self, next_value, use_gae, gamma, gae_lambda):
        if use_gae:
            self.value_preds[-1] = next_value
            gae = 0
            for step in reversed(range(self.rewards.size(0))):
                delta = self.rewards[step] + gamma * self.value_preds[
                    step + 1] * self.masks[step + 1] - self.value_preds[step]
                gae = delta + gamma * gae_lambda * self.masks[step + 1] * gae
                gae = gae * self.bad_masks[step + 1]
                self.returns[step] = gae + self.value_preds[step]
        else:
            self.returns[-1] = next_value
            for step in reversed(range(self.rewards.size(0))):
                self.returns[step] = self.returns[step + 1] * \
                    gamma * self.masks[step + 1] + self.rewards[step]


class A2C_ACKTR():
    def __init__(self, actor_critic, value_loss_coef, entropy_coef, lr=None, eps=None,
                 alpha=None, max_grad_norm=None):
        self.actor_critic = actor_critic
        self.value_loss_coef = value_loss_coef
        self.entropy_coef = entropy_coef
        self.max_grad_norm = max_grad_norm
        self.optimizer = optim.RMSprop(actor_critic.parameters(), lr, eps=eps, alpha=alpha)

    def update(self, rollouts):
        obs_shape = rollouts.obs.size()[2:]
        action_shape = rollouts.actions.size()[-1]
        num_steps, num_processes, _ = rollouts.rewards.size()

        values, action_log_probs, dist_entropy = self.actor_critic.evaluate_actions(
            rollouts.obs[:-1].view(-1, *obs_shape),
            rollouts.actions.view(-1, action_shape))

        values = values.view(num_steps, num_processes, 1)
        action_log_probs = action_log_probs.view(num_steps, num_processes, 1)

        advantages = rollouts.returns[:-1] - values
        value_loss = advantages.pow(2).mean()

        action_loss = -(advantages.detach() * action_log_probs).mean()

        self.optimizer.zero_grad()
        (value_loss * self.value_loss_coef + action_loss -
         dist_entropy * self.entropy_coef).backward()

        total_norm = nn.utils.clip_grad_norm_(self.actor_critic.parameters(), self.max_grad_norm)

        self.optimizer.step()

        return value_loss.item(), action_loss.item(), dist_entropy.item(), total_norm


class ChainEnvs:
    """num_processes copies of a 5-state chain; action 1 moves right, 0 left; reward at end."""

    def __init__(self, n, length=5):
        self.n, self.length = n, length
        self.pos = torch.zeros(n, dtype=torch.long)
        self.t = torch.zeros(n, dtype=torch.long)

    def obs(self):
        return F.one_hot(self.pos, self.length).float()

    def reset(self):
        self.pos.zero_()
        self.t.zero_()
        return self.obs()

    def step(self, action):
        move = action.squeeze(-1) * 2 - 1
        self.pos = (self.pos + move).clamp(0, self.length - 1)
        self.t += 1
        reward = (self.pos == self.length - 1).float() - 0.01
        done = (self.pos == self.length - 1) | (self.t >= 12)
        self.pos = torch.where(done, torch.zeros_like(self.pos), self.pos)
        self.t = torch.where(done, torch.zeros_like(self.t), self.t)
        return self.obs(), reward.unsqueeze(1), done


torch.manual_seed(1)
num_processes, num_steps = 4, 5
envs = ChainEnvs(num_processes)
actor_critic = Policy(5, 2)
print(actor_critic)
agent = A2C_ACKTR(actor_critic, value_loss_coef=0.5, entropy_coef=0.01, lr=7e-4, eps=1e-5,
                  alpha=0.99, max_grad_norm=0.5)
rollouts = RolloutStorage(num_steps, num_processes, 5)
obs = envs.reset()
rollouts.obs[0].copy_(obs)
for j in range(12):
    for step in range(num_steps):
        with torch.no_grad():
            value, action, action_log_prob = actor_critic.act(rollouts.obs[step])
        obs, reward, done = envs.step(action)
        masks = torch.FloatTensor([[0.0] if done_ else [1.0] for done_ in done])
        bad_masks = torch.FloatTensor([[1.0] for _ in done])
        rollouts.insert(obs, action, action_log_prob, value, reward, masks, bad_masks)
    with torch.no_grad():
        next_value = actor_critic.get_value(rollouts.obs[-1]).detach()
    rollouts.compute_returns(next_value, j % 2 == 0, 0.99, 0.95)
    value_loss, action_loss, dist_entropy, total_norm = agent.update(rollouts)
    rollouts.after_update()
    if j % 3 == 0:
        print(f"Updates {j}, value_loss {value_loss:.5f}, action_loss {action_loss:.5f}, "
              f"dist_entropy {dist_entropy:.5f}, grad_norm {total_norm:.5f}")
print(rollouts.returns[:, 0, 0])
print(rollouts.actions.dtype, rollouts.actions[:, :, 0].T)
_, act_det, lp_det = actor_critic.act(rollouts.obs[0], deterministic=True)
print(act_det.view(-1), lp_det.view(-1))

# DiagGaussian head and distribution API checks
torch.manual_seed(2)
head = DiagGaussian(32, 3)
feat = torch.randn(4, 32)
dist = head(feat)
a = dist.sample()
print(dist, dist.mode().shape, dist.log_probs(a).shape, dist.entropy())
print(dist.stddev, dist.variance.shape, dist.batch_shape, dist.event_shape)
cat = FixedCategorical(probs=torch.tensor([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]))
print(cat, cat.logits, cat.param_shape, cat.sample().shape)
print(cat.enumerate_support(), cat.enumerate_support(expand=False).shape)
print(cat.log_probs(torch.tensor([[2], [0]])), cat.mode().view(-1))
c2 = D.Categorical(logits=torch.tensor([0.0, 1.0, 2.0]))
print(D.kl_divergence(cat, c2), c2.entropy(), c2.perplexity() if hasattr(c2, "perplexity")
      else "")
ind = D.Independent(D.Normal(torch.zeros(2, 3), torch.ones(2, 3)), 1)
print(ind.log_prob(torch.ones(2, 3)), ind.entropy(), D.kl_divergence(ind, ind))
expanded = D.Normal(torch.tensor(0.0), torch.tensor(1.0)).expand([2, 2])
print(expanded, expanded.sample().shape, expanded.cdf(torch.tensor(0.5)))
for bad in [lambda: D.Categorical(probs=torch.tensor([0.5, -0.5])),
            lambda: D.Normal(torch.zeros(2), torch.tensor([1.0, -1.0])),
            lambda: D.Categorical(torch.tensor([0.2, 0.8]), logits=torch.zeros(2)),
            lambda: D.Categorical(logits=torch.zeros(3)).log_prob(torch.tensor(4)),
            lambda: D.Normal(0.0, 1.0).log_prob(torch.tensor([float("nan")])),
            lambda: D.Independent(D.Normal(torch.zeros(2), torch.ones(2)), 2)]:
    try:
        bad()
        print("no error")
    except Exception as e:
        print(type(e).__name__, str(e).split("\n")[0][:160])
print("RESULT: a2c", f"{value_loss:.5f}")
