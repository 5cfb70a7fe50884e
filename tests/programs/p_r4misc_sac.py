"""Soft Actor-Critic as in CleanRL's sac_continuous_action.py (tanh-squashed Normal with rsample
and the log-prob correction, twin Q networks, soft target updates, automatic entropy tuning
with log_alpha) plus the TransformedDistribution/TanhTransform actor of SpinningUp-style
implementations; a torch-tensor replay buffer sampled with torch.randint, and a tiny
deterministic point-mass environment written in torch instead of gym."""
# compare: rtol=2e-4 atol=2e-5
import copy
import importlib
import os
import random

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = torch.optim
D = torch.distributions


class PointMassEnv:
    """2-d point mass pushed toward the origin; obs = (pos, vel)."""

    def __init__(self, seed):
        self.g = torch.Generator().manual_seed(seed)
        self.obs_dim, self.act_dim = 4, 2
        self.low, self.high = -torch.ones(2), torch.ones(2)

    def reset(self):
        self.s = torch.rand(4, generator=self.g) * 2 - 1
        self.t = 0
        return self.s.clone()

    def step(self, a):
        a = torch.as_tensor(a, dtype=torch.float32).clamp(-1, 1)
        pos, vel = self.s[:2], self.s[2:]
        vel = 0.9 * vel + 0.1 * a
        pos = pos + 0.1 * vel
        self.s = torch.cat([pos, vel])
        self.t += 1
        reward = -(pos.pow(2).sum() + 0.01 * a.pow(2).sum())
        done = self.t >= 10
        return self.s.clone(), reward.item(), done


class ReplayBuffer:
    def __init__(self, obs_dim, act_dim, size):
        self.obs = torch.zeros(size, obs_dim)
        self.next_obs = torch.zeros(size, obs_dim)
        self.act = torch.zeros(size, act_dim)
        self.rew = torch.zeros(size)
        self.done = torch.zeros(size)
        self.ptr, self.size, self.max_size = 0, 0, size

    def store(self, o, a, r, o2, d):
        self.obs[self.ptr] = o
        self.act[self.ptr] = torch.as_tensor(a)
        self.rew[self.ptr] = r
        self.next_obs[self.ptr] = o2
        self.done[self.ptr] = float(d)
        self.ptr = (self.ptr + 1) % self.max_size
        self.size = min(self.size + 1, self.max_size)

    def sample(self, batch_size):
        idxs = torch.randint(0, self.size, size=(batch_size,))
        return dict(obs=self.obs[idxs], next_obs=self.next_obs[idxs], act=self.act[idxs],
                    rew=self.rew[idxs], done=self.done[idxs])


class SoftQNetwork(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim + act_dim, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, 1)

    def forward(self, x, a):
        x = torch.cat([x, a], 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


LOG_STD_MAX = 2
LOG_STD_MIN = -5


class Actor(nn.Module):
    def __init__(self, env):
        super().__init__()
        self.fc1 = nn.Linear(env.obs_dim, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc_mean = nn.Linear(32, env.act_dim)
        self.fc_logstd = nn.Linear(32, env.act_dim)
        # action rescaling
        self.register_buffer("action_scale", torch.tensor((env.high - env.low) / 2.0,
                                                          dtype=torch.float32))
        self.register_buffer("action_bias", torch.tensor((env.high + env.low) / 2.0,
                                                         dtype=torch.float32))

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        mean = self.fc_mean(x)
        log_std = self.fc_logstd(x)
        log_std = torch.tanh(log_std)
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1)
        return mean, log_std

    def get_action(self, x):
        mean, log_std = self(x)
        std = log_std.exp()
        normal = torch.distributions.Normal(mean, std)
        x_t = normal.rsample()  # for reparameterization trick (mean + std * N(0,1))
        y_t = torch.tanh(x_t)
        action = y_t * self.action_scale + self.action_bias
        log_prob = normal.log_prob(x_t)
        # Enforcing Action Bound
        log_prob -= torch.log(self.action_scale * (1 - y_t.pow(2)) + 1e-6)
        log_prob = log_prob.sum(1, keepdim=True)
        mean = torch.tanh(mean) * self.action_scale + self.action_bias
        return action, log_prob, mean


random.seed(1)
np.random.seed(1)
torch.manual_seed(1)
torch.backends.cudnn.deterministic = True
device = torch.device("cpu")
env = PointMassEnv(seed=1)

actor = Actor(env).to(device)
qf1 = SoftQNetwork(env.obs_dim, env.act_dim).to(device)
qf2 = SoftQNetwork(env.obs_dim, env.act_dim).to(device)
qf1_target = SoftQNetwork(env.obs_dim, env.act_dim).to(device)
qf2_target = SoftQNetwork(env.obs_dim, env.act_dim).to(device)
qf1_target.load_state_dict(qf1.state_dict())
qf2_target.load_state_dict(qf2.state_dict())
q_optimizer = optim.Adam(list(qf1.parameters()) + list(qf2.parameters()), lr=1e-3)
actor_optimizer = optim.Adam(list(actor.parameters()), lr=3e-4)
print(actor)
print(list(actor.state_dict().keys()))
print(actor.action_scale, actor.action_bias.dtype)

# Automatic entropy tuning
target_entropy = -torch.prod(torch.Tensor([env.act_dim]).to(device)).item()
log_alpha = torch.zeros(1, requires_grad=True, device=device)
alpha = log_alpha.exp().item()
a_optimizer = optim.Adam([log_alpha], lr=1e-3)
print("target_entropy", target_entropy, "alpha", alpha)

rb = ReplayBuffer(env.obs_dim, env.act_dim, 200)
gamma, tau, batch_size, learning_starts, policy_frequency = 0.99, 0.005, 16, 20, 2
obs = env.reset()
episodic_return = 0.0
for global_step in range(50):
    if global_step < learning_starts:
        actions = np.random.uniform(-1, 1, size=(env.act_dim,)).astype(np.float32)
    else:
        actions, _, _ = actor.get_action(torch.Tensor(obs).unsqueeze(0).to(device))
        actions = actions.detach().cpu().numpy()[0]
    next_obs, reward, done = env.step(actions)
    episodic_return += reward
    rb.store(obs, actions, reward, next_obs, done)
    obs = next_obs
    if done:
        print(f"global_step={global_step}, episodic_return={episodic_return:.4f}")
        obs, episodic_return = env.reset(), 0.0

    if global_step > learning_starts:
        data = rb.sample(batch_size)
        with torch.no_grad():
            next_state_actions, next_state_log_pi, _ = actor.get_action(data["next_obs"])
            qf1_next_target = qf1_target(data["next_obs"], next_state_actions)
            qf2_next_target = qf2_target(data["next_obs"], next_state_actions)
            min_qf_next_target = torch.min(qf1_next_target,
                                           qf2_next_target) - alpha * next_state_log_pi
            next_q_value = data["rew"].flatten() + (1 - data["done"].flatten()) * gamma * (
                min_qf_next_target).view(-1)

        qf1_a_values = qf1(data["obs"], data["act"]).view(-1)
        qf2_a_values = qf2(data["obs"], data["act"]).view(-1)
        qf1_loss = F.mse_loss(qf1_a_values, next_q_value)
        qf2_loss = F.mse_loss(qf2_a_values, next_q_value)
        qf_loss = qf1_loss + qf2_loss

        q_optimizer.zero_grad()
        qf_loss.backward()
        q_optimizer.step()

        if global_step % policy_frequency == 0:  # TD 3 Delayed update support
            for _ in range(policy_frequency):
                pi, log_pi, _ = actor.get_action(data["obs"])
                qf1_pi = qf1(data["obs"], pi)
                qf2_pi = qf2(data["obs"], pi)
                min_qf_pi = torch.min(qf1_pi, qf2_pi)
                actor_loss = ((alpha * log_pi) - min_qf_pi).mean()

                actor_optimizer.zero_grad()
                actor_loss.backward()
                actor_optimizer.step()

                with torch.no_grad():
                    _, log_pi, _ = actor.get_action(data["obs"])
                alpha_loss = (-log_alpha.exp() * (log_pi + target_entropy)).mean()

                a_optimizer.zero_grad()
                alpha_loss.backward()
                a_optimizer.step()
                alpha = log_alpha.exp().item()

        # update the target networks
        for param, target_param in zip(qf1.parameters(), qf1_target.parameters()):
            target_param.data.copy_(tau * param.data + (1 - tau) * target_param.data)
        with torch.no_grad():
            for param, target_param in zip(qf2.parameters(), qf2_target.parameters()):
                target_param.mul_(1 - tau)
                target_param.add_(param, alpha=tau)

        if global_step % 8 == 0:
            print(f"step {global_step} qf1_values {qf1_a_values.mean().item():.4f} "
                  f"qf_loss {qf_loss.item() / 2.0:.4f} actor_loss {actor_loss.item():.4f} "
                  f"alpha {alpha:.5f} alpha_loss {alpha_loss.item():.4f}")

print("buffer", rb.size, rb.ptr, rb.obs.shape, rb.rew[:5])
print(qf1_a_values.grad_fn, log_alpha, log_alpha.grad)

# SpinningUp-style squashed policy through TransformedDistribution
torch.manual_seed(3)
mean, log_std = actor(rb.obs[:4])
base = D.Independent(D.Normal(mean, log_std.exp()), 1)
squashed = D.TransformedDistribution(base, [D.transforms.TanhTransform(cache_size=1)])
print(base, squashed.batch_shape, squashed.event_shape)
a = squashed.rsample()
lp_td = squashed.log_prob(a)
x_t = torch.atanh(a.clamp(-0.999999, 0.999999))
lp_manual = base.log_prob(x_t) - (2 * (np.log(2) - x_t - F.softplus(-2 * x_t))).sum(axis=-1)
print(a)
print(lp_td)
print(lp_manual)
print(type(lp_td.grad_fn).__name__, a.requires_grad)
print("entropy", base.entropy())
ent_bonus = -lp_td.mean()
ent_bonus.backward()
print("grad", actor.fc_logstd.bias.grad)

# a target network copy with deepcopy + lerp_ soft update
target_actor = copy.deepcopy(actor)
for p in target_actor.parameters():
    p.requires_grad_(False)
with torch.no_grad():
    for p, tp in zip(actor.parameters(), target_actor.parameters()):
        tp.lerp_(p + 1.0, 0.5)
print(target_actor.fc_mean.bias, target_actor.fc_mean.bias.requires_grad)
print("RESULT: sac", f"{alpha:.5f}", f"{qf_loss.item():.4f}")
