"""Berkeley CS285 homework 2 (policy gradients), shrunk: infrastructure/pytorch_util.py's
build_mlp / from_numpy / to_numpy, networks/policies.py's MLPPolicy (Categorical over logits for
discrete actions, Normal with a learned logstd for continuous ones) and MLPPolicyPG.update,
networks/critics.py's ValueCritic, agents/pg_agent.py's _discounted_return /
_discounted_reward_to_go, _estimate_advantage with a baseline, GAE and normalisation, and
utils.sample_trajectory. A 5-state chain environment and a 1-d continuous "reach the target"
task in NumPy replace gym."""

import importlib
import os

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
distributions = importlib.import_module(LIB + ".distributions")

torch.manual_seed(0)
np.random.seed(0)
device = torch.device("cpu")

_str_to_activation = {
    "relu": nn.ReLU(),
    "tanh": nn.Tanh(),
    "leaky_relu": nn.LeakyReLU(),
    "sigmoid": nn.Sigmoid(),
    "selu": nn.SELU(),
    "softplus": nn.Softplus(),
    "identity": nn.Identity(),
}


def build_mlp(
    input_size, output_size, n_layers, size, activation="tanh", output_activation="identity"
):
    if isinstance(activation, str):
        activation = _str_to_activation[activation]
    if isinstance(output_activation, str):
        output_activation = _str_to_activation[output_activation]
    layers = []
    in_size = input_size
    for _ in range(n_layers):
        layers.append(nn.Linear(in_size, size))
        layers.append(activation)
        in_size = size
    layers.append(nn.Linear(in_size, output_size))
    layers.append(output_activation)
    mlp = nn.Sequential(*layers)
    mlp.to(device)
    return mlp


def from_numpy(data):
    if isinstance(data, dict):
        return {k: from_numpy(v) for k, v in data.items()}
    data = torch.from_numpy(data)
    if data.dtype == torch.float64:
        data = data.float()
    return data.to(device)


def to_numpy(tensor):
    return tensor.to("cpu").detach().numpy()


class MLPPolicy(nn.Module):
    def __init__(self, ac_dim, ob_dim, discrete, n_layers, layer_size, learning_rate):
        super().__init__()
        if discrete:
            self.logits_net = build_mlp(ob_dim, ac_dim, n_layers, layer_size).to(device)
            parameters = self.logits_net.parameters()
        else:
            self.mean_net = build_mlp(ob_dim, ac_dim, n_layers, layer_size).to(device)
            self.logstd = nn.Parameter(torch.zeros(ac_dim, dtype=torch.float32, device=device))
            parameters = list(self.mean_net.parameters()) + [self.logstd]
        self.optimizer = torch.optim.Adam(parameters, learning_rate)
        self.discrete = discrete

    @torch.no_grad()
    def get_action(self, obs):
        action = self(from_numpy(obs)).sample()
        return to_numpy(action)

    def forward(self, obs):
        if self.discrete:
            return distributions.Categorical(logits=self.logits_net(obs))
        return distributions.Normal(self.mean_net(obs), torch.exp(self.logstd))


class MLPPolicyPG(MLPPolicy):
    def update(self, obs, actions, advantages):
        obs, actions, advantages = from_numpy(obs), from_numpy(actions), from_numpy(advantages)
        log_probs = self(obs).log_prob(actions)
        if not self.discrete:
            log_probs = log_probs.sum(-1)
        loss = -(log_probs * advantages).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"Actor Loss": to_numpy(loss).item()}


class ValueCritic(nn.Module):
    def __init__(self, ob_dim, n_layers, layer_size, learning_rate):
        super().__init__()
        self.network = build_mlp(
            input_size=ob_dim, output_size=1, n_layers=n_layers, size=layer_size
        ).to(device)
        self.optimizer = torch.optim.Adam(self.network.parameters(), learning_rate)

    def forward(self, obs):
        return self.network(obs).squeeze(-1)

    def update(self, obs, q_values):
        obs, q_values = from_numpy(obs), from_numpy(q_values)
        loss = nn.functional.mse_loss(self(obs), q_values)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"Baseline Loss": to_numpy(loss).item()}


def _discounted_return(rewards, gamma):
    total = sum(gamma**i * r for i, r in enumerate(rewards))
    return [total] * len(rewards)


def _discounted_reward_to_go(rewards, gamma):
    out, running = [0.0] * len(rewards), 0.0
    for t in reversed(range(len(rewards))):
        running = rewards[t] + gamma * running
        out[t] = running
    return out


def estimate_advantage(obs, rewards, q_values, terminals, critic, gamma, gae_lambda, normalize):
    if critic is None:
        advantages = q_values.copy()
    else:
        with torch.no_grad():
            values = to_numpy(critic(from_numpy(obs)))
        assert values.shape == q_values.shape
        if gae_lambda is None:
            advantages = q_values - values
        else:
            batch_size = obs.shape[0]
            values = np.append(values, [0])
            advantages = np.zeros(batch_size + 1)
            for i in reversed(range(batch_size)):
                if terminals[i]:
                    delta = rewards[i] - values[i]
                    advantages[i] = delta
                else:
                    delta = rewards[i] + gamma * values[i + 1] - values[i]
                    advantages[i] = delta + gamma * gae_lambda * advantages[i + 1]
            advantages = advantages[:-1]
    if normalize:
        advantages = (advantages - np.mean(advantages)) / (np.std(advantages) + 1e-8)
    return advantages


class ChainEnv:
    """5 states in a row; action 1 moves right (+1 at the end), action 0 left (small -0.1)."""

    def reset(self):
        self.s = 0
        return np.eye(5)[self.s]

    def step(self, a):
        self.s = min(4, self.s + 1) if a == 1 else max(0, self.s - 1)
        done = self.s == 4
        return np.eye(5)[self.s], (1.0 if done else -0.1), done


class ReachEnv:
    """1-d continuous: reward -(x + a - 1)^2, one step per episode from a random x."""

    def reset(self):
        self.x = np.random.uniform(-1, 1, size=(1,))
        return self.x.copy()

    def step(self, a):
        return self.x.copy(), float(-((self.x + a - 1.0) ** 2).sum()), True


def sample_trajectory(env, policy, max_length):
    ob = env.reset()
    obs, acs, rewards, terminals = [], [], [], []
    for steps in range(1, max_length + 1):
        ac = policy.get_action(ob)
        next_ob, rew, done = env.step(ac if not policy.discrete else int(ac))
        rollout_done = done or steps == max_length
        obs.append(ob)
        acs.append(ac)
        rewards.append(rew)
        terminals.append(rollout_done)
        ob = next_ob
        if rollout_done:
            break
    return {
        "observation": np.array(obs, dtype=np.float32),
        "action": np.array(acs),
        "reward": np.array(rewards, dtype=np.float32),
        "terminal": np.array(terminals),
    }


print("discounted_return", [round(v, 4) for v in _discounted_return([1.0, 0.0, 2.0], 0.9)])
print("reward_to_go", [round(v, 4) for v in _discounted_reward_to_go([1.0, 0.0, 2.0], 0.9)])
print(build_mlp(5, 2, 2, 8))

for use_baseline, gae in [(False, None), (True, None), (True, 0.95)]:
    torch.manual_seed(1)
    np.random.seed(1)
    env = ChainEnv()
    policy = MLPPolicyPG(2, 5, True, 2, 16, 0.01)
    critic = ValueCritic(5, 2, 16, 0.01) if use_baseline else None
    for itr in range(12):
        trajs = [sample_trajectory(env, policy, 12) for _ in range(4)]
        q_values = [
            np.array(_discounted_reward_to_go(t["reward"].tolist(), 0.95), dtype=np.float32)
            for t in trajs
        ]
        obs = np.concatenate([t["observation"] for t in trajs])
        acs = np.concatenate([t["action"] for t in trajs])
        rews = np.concatenate([t["reward"] for t in trajs])
        terms = np.concatenate([t["terminal"] for t in trajs])
        qv = np.concatenate(q_values)
        adv = estimate_advantage(obs, rews, qv, terms, critic, 0.95, gae, True).astype(np.float32)
        info = policy.update(obs, acs, adv)
        if critic is not None:
            info.update(critic.update(obs, qv))
        if itr % 4 == 3:
            print(
                "baseline=%s gae=%s itr %d avg return %.4f ep len %.2f %s"
                % (
                    use_baseline,
                    gae,
                    itr,
                    np.mean([t["reward"].sum() for t in trajs]),
                    np.mean([len(t["reward"]) for t in trajs]),
                    {k: round(v, 4) for k, v in info.items()},
                )
            )
    with torch.no_grad():
        probs = policy(from_numpy(np.eye(5, dtype=np.float32))).probs
    print("  P(right) per state", [round(p, 4) for p in probs[:, 1].tolist()])

torch.manual_seed(2)
np.random.seed(2)
env = ReachEnv()
policy = MLPPolicyPG(1, 1, False, 1, 16, 0.02)
for itr in range(30):
    trajs = [sample_trajectory(env, policy, 1) for _ in range(16)]
    obs = np.concatenate([t["observation"] for t in trajs])
    acs = np.concatenate([t["action"] for t in trajs]).astype(np.float32)
    qv = np.concatenate([t["reward"] for t in trajs])
    adv = estimate_advantage(obs, qv, qv, None, None, 0.99, None, True).astype(np.float32)
    info = policy.update(obs, acs, adv)
    if itr % 10 == 9:
        print(
            "continuous itr %d avg reward %.4f logstd %.4f %s"
            % (itr, qv.mean(), policy.logstd.item(), info)
        )
dist = policy(from_numpy(np.array([[0.0], [0.5]], dtype=np.float32)))
print(
    "Normal batch_shape",
    tuple(dist.batch_shape),
    "mean",
    [round(m, 4) for m in dist.mean[:, 0].tolist()],
)
