"""Rainbow pieces from Kaixhin/Rainbow (model.py's NoisyLinear with factorised Gaussian noise and
the dueling distributional DQN, agent.py's C51 projection with index_add_ and n-step targets,
memory.py's importance-sampling weights), on a toy chain environment instead of Atari."""
# compare: rtol=2e-4 atol=2e-5
import importlib
import math
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = torch.optim


# Factorised NoisyLinear layer with bias
class NoisyLinear(nn.Module):
    def __init__(self, in_features, out_features, std_init=0.5):
        super(NoisyLinear, self).__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.std_init = std_init
        self.weight_mu = nn.Parameter(torch.empty(out_features, in_features))
        self.weight_sigma = nn.Parameter(torch.empty(out_features, in_features))
        self.register_buffer('weight_epsilon', torch.empty(out_features, in_features))
        self.bias_mu = nn.Parameter(torch.empty(out_features))
        self.bias_sigma = nn.Parameter(torch.empty(out_features))
        self.register_buffer('bias_epsilon', torch.empty(out_features))
        self.reset_parameters()
        self.reset_noise()

    def reset_parameters(self):
        mu_range = 1 / math.sqrt(self.in_features)
        self.weight_mu.data.uniform_(-mu_range, mu_range)
        self.weight_sigma.data.fill_(self.std_init / math.sqrt(self.in_features))
        self.bias_mu.data.uniform_(-mu_range, mu_range)
        self.bias_sigma.data.fill_(self.std_init / math.sqrt(self.out_features))

    def _scale_noise(self, size):
        x = torch.randn(size, device=self.weight_mu.device)
        return x.sign().mul_(x.abs().sqrt_())

    def reset_noise(self):
        epsilon_in = self._scale_noise(self.in_features)
        epsilon_out = self._scale_noise(self.out_features)
        self.weight_epsilon.copy_(epsilon_out.ger(epsilon_in))
        self.bias_epsilon.copy_(epsilon_out)

    def forward(self, input):
        if self.training:
            return F.linear(input, self.weight_mu + self.weight_sigma * self.weight_epsilon,
                            self.bias_mu + self.bias_sigma * self.bias_epsilon)
        else:
            return F.linear(input, self.weight_mu, self.bias_mu)

    def extra_repr(self):
        return 'in_features={}, out_features={}, std_init={}'.format(
            self.in_features, self.out_features, self.std_init)


class DQN(nn.Module):
    def __init__(self, state_dim, action_space, atoms=11, hidden_size=32, noisy_std=0.1):
        super(DQN, self).__init__()
        self.atoms = atoms
        self.action_space = action_space
        self.convs = nn.Sequential(nn.Linear(state_dim, hidden_size), nn.ReLU())
        self.conv_output_size = hidden_size
        self.fc_h_v = NoisyLinear(self.conv_output_size, hidden_size, std_init=noisy_std)
        self.fc_h_a = NoisyLinear(self.conv_output_size, hidden_size, std_init=noisy_std)
        self.fc_z_v = NoisyLinear(hidden_size, self.atoms, std_init=noisy_std)
        self.fc_z_a = NoisyLinear(hidden_size, action_space * self.atoms, std_init=noisy_std)

    def forward(self, x, log=False):
        x = self.convs(x)
        x = x.view(-1, self.conv_output_size)
        v = self.fc_z_v(F.relu(self.fc_h_v(x)))  # Value stream
        a = self.fc_z_a(F.relu(self.fc_h_a(x)))  # Advantage stream
        v, a = v.view(-1, 1, self.atoms), a.view(-1, self.action_space, self.atoms)
        q = v + a - a.mean(1, keepdim=True)  # Combine streams
        if log:  # Use log softmax for numerical stability
            q = F.log_softmax(q, dim=2)  # Log probabilities with action over second dimension
        else:
            q = F.softmax(q, dim=2)  # Probabilities with action over second dimension
        return q

    def reset_noise(self):
        for name, module in self.named_children():
            if 'fc' in name:
                module.reset_noise()


class Agent():
    def __init__(self, state_dim, action_space, atoms=11, V_min=-2.0, V_max=2.0, n=3,
                 discount=0.9, lr=1e-3):
        self.action_space = action_space
        self.atoms = atoms
        self.Vmin = V_min
        self.Vmax = V_max
        self.support = torch.linspace(V_min, V_max, self.atoms)  # Support (range) of z
        self.delta_z = (V_max - V_min) / (self.atoms - 1)
        self.batch_size = 8
        self.n = n
        self.discount = discount
        self.norm_clip = 10

        self.online_net = DQN(state_dim, action_space, atoms)
        self.online_net.train()
        self.target_net = DQN(state_dim, action_space, atoms)
        self.update_target_net()
        self.target_net.train()
        for param in self.target_net.parameters():
            param.requires_grad = False
        self.optimiser = optim.Adam(self.online_net.parameters(), lr=lr, eps=1.5e-4)

    # Resets noisy weights in all linear layers (of online net only)
    def reset_noise(self):
        self.online_net.reset_noise()

    # Acts based on single state (no batch)
    def act(self, state):
        with torch.no_grad():
            return (self.online_net(state.unsqueeze(0)) * self.support).sum(2).argmax(1).item()

    # Acts with an ε-greedy policy (used for evaluation only)
    def act_e_greedy(self, state, epsilon=0.001):
        return np.random.randint(0, self.action_space) if np.random.random() < epsilon \
            else self.act(state)

    def learn(self, states, actions, returns, next_states, nonterminals, weights):
        # Calculate current state probabilities (online network noise already sampled)
        log_ps = self.online_net(states, log=True)  # Log probabilities log p(s_t, ·; θonline)
        log_ps_a = log_ps[range(self.batch_size), actions]  # log p(s_t, a_t; θonline)

        with torch.no_grad():
            # Calculate nth next state probabilities
            pns = self.online_net(next_states)  # Probabilities p(s_t+n, ·; θonline)
            # Distribution d_t+n = (z, p(s_t+n, ·; θonline))
            dns = self.support.expand_as(pns) * pns
            # Perform argmax action selection using online network:
            # argmax_a[(z, p(s_t+n, a; θonline))]
            argmax_indices_ns = dns.sum(2).argmax(1)
            self.target_net.reset_noise()  # Sample new target net noise
            pns = self.target_net(next_states)  # Probabilities p(s_t+n, ·; θtarget)
            # Double-Q probabilities p(s_t+n, argmax_a[(z, p(s_t+n, a; θonline))]; θtarget)
            pns_a = pns[range(self.batch_size), argmax_indices_ns]

            # Compute Tz (Bellman operator T applied to z)
            # Tz = R^n + (γ^n)z (accounting for terminal states)
            Tz = returns.unsqueeze(1) + nonterminals * (self.discount ** self.n) * \
                self.support.unsqueeze(0)
            Tz = Tz.clamp(min=self.Vmin, max=self.Vmax)  # Clamp between supported values
            # Compute L2 projection of Tz onto fixed support z
            b = (Tz - self.Vmin) / self.delta_z  # b = (Tz - Vmin) / Δz
            l, u = b.floor().to(torch.int64), b.ceil().to(torch.int64)  # noqa: E741
            # Fix disappearing probability mass when l = b = u (b is int)
            l[(u > 0) * (l == u)] -= 1
            u[(l < (self.atoms - 1)) * (l == u)] += 1

            # Distribute probability of Tz
            m = states.new_zeros(self.batch_size, self.atoms)
            offset = torch.linspace(0, ((self.batch_size - 1) * self.atoms), self.batch_size)\
                .unsqueeze(1).expand(self.batch_size, self.atoms).to(actions)
            # m_l = m_l + p(s_t+n, a*)(u - b)
            m.view(-1).index_add_(0, (l + offset).view(-1), (pns_a * (u.float() - b)).view(-1))
            # m_u = m_u + p(s_t+n, a*)(b - l)
            m.view(-1).index_add_(0, (u + offset).view(-1), (pns_a * (b - l.float())).view(-1))

        # Cross-entropy loss (minimises DKL(m||p(s_t, a_t)))
        loss = -torch.sum(m * log_ps_a, 1)
        self.online_net.zero_grad()
        # Backpropagate importance-weighted minibatch loss
        (weights * loss).mean().backward()
        # Clip gradients by L2 norm
        nn.utils.clip_grad_norm_(self.online_net.parameters(), self.norm_clip)
        self.optimiser.step()

        # Update priorities of sampled transitions
        return loss.detach().cpu().numpy(), m

    def update_target_net(self):
        self.target_net.load_state_dict(self.online_net.state_dict())

    def evaluate_q(self, state):
        with torch.no_grad():
            return (self.online_net(state.unsqueeze(0)) * self.support).sum(2).max(1)[0].item()

    def train(self):
        self.online_net.train()

    def eval(self):
        self.online_net.eval()


torch.manual_seed(123)
np.random.seed(123)
nl = NoisyLinear(4, 3)
print(nl)
print(nl.weight_epsilon, nl.bias_epsilon)
print(sorted(nl.state_dict().keys()))
print([name for name, _ in nl.named_buffers()], len(list(nl.parameters())))

L = 5
agent = Agent(L, 2)
print(agent.online_net)
print(agent.support, agent.delta_z)


def one_hot(s):
    return F.one_hot(torch.tensor(s), L).float()


# collect transitions on a chain, n-step returns, then learn with IS weights
transitions = []
s = 0
for t in range(40):
    if t % 4 == 0:
        agent.reset_noise()
    a = agent.act(one_hot(s)) if t % 3 else int(np.random.randint(0, 2))
    s2 = min(max(s + (1 if a == 1 else -1), 0), L - 1)
    r = 1.0 if s2 == L - 1 else 0.0
    transitions.append((s, a, r, s2))
    s = 0 if s2 == L - 1 else s2
print("actions", [tr[1] for tr in transitions[:20]])

priorities = np.ones(len(transitions) - agent.n)
priority_exponent, priority_weight = 0.5, 0.4
for step in range(6):
    probs = priorities ** priority_exponent
    probs = probs / probs.sum()
    idxs = np.random.choice(len(probs), agent.batch_size, p=probs)
    states = torch.stack([one_hot(transitions[i][0]) for i in idxs])
    actions = torch.tensor([transitions[i][1] for i in idxs], dtype=torch.int64)
    returns = torch.tensor([sum(agent.discount ** k * transitions[i + k][2]
                                for k in range(agent.n)) for i in idxs], dtype=torch.float32)
    next_states = torch.stack([one_hot(transitions[i + agent.n - 1][3]) for i in idxs])
    nonterminals = torch.tensor([[1.0] for _ in idxs])
    weights = (len(probs) * probs[idxs]) ** -priority_weight
    weights = torch.tensor(weights / weights.max(), dtype=torch.float32)
    loss, m = agent.learn(states, actions, returns, next_states, nonterminals, weights)
    priorities[idxs] = loss
    if step % 2 == 0:
        agent.update_target_net()
    print(f"step {step} loss {np.round(loss.mean(), 4)} m_sum {m.sum(1).min().item():.4f} "
          f"{m.sum(1).max().item():.4f} weights {weights[:3]}")
print(m[0])
print(agent.online_net.fc_z_a.weight_sigma.grad.abs().sum() > 0,
      agent.target_net.fc_h_v.weight_mu.requires_grad)
agent.eval()
print("Q", [round(agent.evaluate_q(one_hot(i)), 4) for i in range(L)])
print(agent.act_e_greedy(one_hot(2), epsilon=0.0))
print("RESULT: rainbow", np.round(float(loss.mean()), 4))
