"""TD3 from sfujim/TD3 (TD3.py and utils.ReplayBuffer, main.py's loop): twin critics with Q1(),
target policy smoothing with clamp, delayed actor updates, soft target updates over zip(params),
save/load of state_dicts; a tiny deterministic torch environment instead of MuJoCo."""
# compare: rtol=2e-4 atol=2e-5
import copy
import importlib
import io
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class ReplayBuffer(object):
    def __init__(self, state_dim, action_dim, max_size=int(1e6)):
        self.max_size = max_size
        self.ptr = 0
        self.size = 0

        self.state = np.zeros((max_size, state_dim))
        self.action = np.zeros((max_size, action_dim))
        self.next_state = np.zeros((max_size, state_dim))
        self.reward = np.zeros((max_size, 1))
        self.not_done = np.zeros((max_size, 1))

        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    def add(self, state, action, next_state, reward, done):
        self.state[self.ptr] = state
        self.action[self.ptr] = action
        self.next_state[self.ptr] = next_state
        self.reward[self.ptr] = reward
        self.not_done[self.ptr] = 1. - done

        self.ptr = (self.ptr + 1) % self.max_size
        self.size = min(self.size + 1, self.max_size)

    def sample(self, batch_size):
        ind = np.random.randint(0, self.size, size=batch_size)

        return (
            torch.FloatTensor(self.state[ind]).to(self.device),
            torch.FloatTensor(self.action[ind]).to(self.device),
            torch.FloatTensor(self.next_state[ind]).to(self.device),
            torch.FloatTensor(self.reward[ind]).to(self.device),
            torch.FloatTensor(self.not_done[ind]).to(self.device)
        )


class Actor(nn.Module):
    def __init__(self, state_dim, action_dim, max_action):
        super(Actor, self).__init__()

        self.l1 = nn.Linear(state_dim, 32)
        self.l2 = nn.Linear(32, 32)
        self.l3 = nn.Linear(32, action_dim)

        self.max_action = max_action

    def forward(self, state):
        a = F.relu(self.l1(state))
        a = F.relu(self.l2(a))
        return self.max_action * torch.tanh(self.l3(a))


class Critic(nn.Module):
    def __init__(self, state_dim, action_dim):
        super(Critic, self).__init__()

        # Q1 architecture
        self.l1 = nn.Linear(state_dim + action_dim, 32)
        self.l2 = nn.Linear(32, 32)
        self.l3 = nn.Linear(32, 1)

        # Q2 architecture
        self.l4 = nn.Linear(state_dim + action_dim, 32)
        self.l5 = nn.Linear(32, 32)
        self.l6 = nn.Linear(32, 1)

    def forward(self, state, action):
        sa = torch.cat([state, action], 1)

        q1 = F.relu(self.l1(sa))
        q1 = F.relu(self.l2(q1))
        q1 = self.l3(q1)

        q2 = F.relu(self.l4(sa))
        q2 = F.relu(self.l5(q2))
        q2 = self.l6(q2)
        return q1, q2

    def Q1(self, state, action):
        sa = torch.cat([state, action], 1)

        q1 = F.relu(self.l1(sa))
        q1 = F.relu(self.l2(q1))
        q1 = self.l3(q1)
        return q1


class TD3(object):
    def __init__(self, state_dim, action_dim, max_action, discount=0.99, tau=0.005,
                 policy_noise=0.2, noise_clip=0.5, policy_freq=2):
        self.actor = Actor(state_dim, action_dim, max_action).to(device)
        self.actor_target = copy.deepcopy(self.actor)
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=3e-4)

        self.critic = Critic(state_dim, action_dim).to(device)
        self.critic_target = copy.deepcopy(self.critic)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=3e-4)

        self.max_action = max_action
        self.discount = discount
        self.tau = tau
        self.policy_noise = policy_noise
        self.noise_clip = noise_clip
        self.policy_freq = policy_freq

        self.total_it = 0

    def select_action(self, state):
        state = torch.FloatTensor(state.reshape(1, -1)).to(device)
        return self.actor(state).cpu().data.numpy().flatten()

    def train(self, replay_buffer, batch_size=256):
        self.total_it += 1

        # Sample replay buffer
        state, action, next_state, reward, not_done = replay_buffer.sample(batch_size)

        with torch.no_grad():
            # Select action according to policy and add clipped noise
            noise = (
                torch.randn_like(action) * self.policy_noise
            ).clamp(-self.noise_clip, self.noise_clip)

            next_action = (
                self.actor_target(next_state) + noise
            ).clamp(-self.max_action, self.max_action)

            # Compute the target Q value
            target_Q1, target_Q2 = self.critic_target(next_state, next_action)
            target_Q = torch.min(target_Q1, target_Q2)
            target_Q = reward + not_done * self.discount * target_Q

        # Get current Q estimates
        current_Q1, current_Q2 = self.critic(state, action)

        # Compute critic loss
        critic_loss = F.mse_loss(current_Q1, target_Q) + F.mse_loss(current_Q2, target_Q)

        # Optimize the critic
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()
        self.last = (critic_loss.item(), None)

        # Delayed policy updates
        if self.total_it % self.policy_freq == 0:

            # Compute actor losse
            actor_loss = -self.critic.Q1(state, self.actor(state)).mean()

            # Optimize the actor
            self.actor_optimizer.zero_grad()
            actor_loss.backward()
            self.actor_optimizer.step()

            # Update the frozen target models
            for param, target_param in zip(self.critic.parameters(),
                                           self.critic_target.parameters()):
                target_param.data.copy_(self.tau * param.data + (1 - self.tau) * target_param.data)

            for param, target_param in zip(self.actor.parameters(),
                                           self.actor_target.parameters()):
                target_param.data.copy_(self.tau * param.data + (1 - self.tau) * target_param.data)
            self.last = (critic_loss.item(), actor_loss.item())

    def save(self, buf):
        torch.save({"critic": self.critic.state_dict(),
                    "critic_optimizer": self.critic_optimizer.state_dict(),
                    "actor": self.actor.state_dict(),
                    "actor_optimizer": self.actor_optimizer.state_dict()}, buf)

    def load(self, buf):
        ckpt = torch.load(buf)
        self.critic.load_state_dict(ckpt["critic"])
        self.critic_optimizer.load_state_dict(ckpt["critic_optimizer"])
        self.critic_target = copy.deepcopy(self.critic)

        self.actor.load_state_dict(ckpt["actor"])
        self.actor_optimizer.load_state_dict(ckpt["actor_optimizer"])
        self.actor_target = copy.deepcopy(self.actor)


class ReacherEnv:
    """1-d reacher: state (x, v, target), action force in [-max_action, max_action]."""

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)

    def reset(self):
        self.s = np.array([self.rng.uniform(-1, 1), 0.0, self.rng.uniform(-1, 1)])
        self.t = 0
        return self.s.copy()

    def step(self, a):
        x, v, tgt = self.s
        v = 0.8 * v + 0.2 * float(a[0])
        x = x + 0.1 * v
        self.s = np.array([x, v, tgt])
        self.t += 1
        return self.s.copy(), -abs(x - tgt), float(self.t >= 8)


def eval_policy(policy, seed, eval_episodes=2):
    eval_env = ReacherEnv(seed + 100)
    avg_reward = 0.
    for _ in range(eval_episodes):
        state, done = eval_env.reset(), False
        while not done:
            action = policy.select_action(np.array(state))
            state, reward, done = eval_env.step(action)
            avg_reward += reward
    avg_reward /= eval_episodes
    print("---------------------------------------")
    print(f"Evaluation over {eval_episodes} episodes: {avg_reward:.3f}")
    print("---------------------------------------")
    return avg_reward


seed = 0
env = ReacherEnv(seed)
torch.manual_seed(seed)
np.random.seed(seed)
state_dim, action_dim, max_action = 3, 1, 2.0
kwargs = {"state_dim": state_dim, "action_dim": action_dim, "max_action": max_action,
          "discount": 0.99, "tau": 0.005}
kwargs["policy_noise"] = 0.2 * max_action
kwargs["noise_clip"] = 0.5 * max_action
kwargs["policy_freq"] = 2
policy = TD3(**kwargs)
print(policy.actor)
print(policy.critic)
print([k for k in policy.critic.state_dict()][:4], len(policy.critic.state_dict()))
replay_buffer = ReplayBuffer(state_dim, action_dim, max_size=500)
evaluations = [eval_policy(policy, seed)]

state, done = env.reset(), False
episode_reward, episode_timesteps, episode_num = 0, 0, 0
start_timesteps, expl_noise = 16, 0.1
for t in range(40):
    episode_timesteps += 1
    if t < start_timesteps:
        action = np.random.uniform(-max_action, max_action, size=(action_dim,))
    else:
        action = (
            policy.select_action(np.array(state))
            + np.random.normal(0, max_action * expl_noise, size=action_dim)
        ).clip(-max_action, max_action)
    next_state, reward, done = env.step(action)
    done_bool = float(done) if episode_timesteps < 8 else 0
    replay_buffer.add(state, action, next_state, reward, done_bool)
    state = next_state
    episode_reward += reward
    if t >= start_timesteps:
        policy.train(replay_buffer, 16)
        if t % 4 == 0:
            c, a = policy.last
            print(f"it {policy.total_it} critic {c:.4f} actor "
                  f"{'None' if a is None else format(a, '.4f')}")
    if done:
        print(f"Total T: {t+1} Episode Num: {episode_num+1} Episode T: {episode_timesteps} "
              f"Reward: {episode_reward:.3f}")
        state, done = env.reset(), False
        episode_reward, episode_timesteps = 0, 0
        episode_num += 1
evaluations.append(eval_policy(policy, seed))
print(np.round(np.array(evaluations), 3))

buf = io.BytesIO()
policy.save(buf)
buf.seek(0)
policy2 = TD3(**kwargs)
policy2.load(buf)
probe = np.array([0.3, -0.1, 0.5])
print(policy.select_action(probe), policy2.select_action(probe))
sd = policy2.actor_optimizer.state_dict()
print(sorted(sd.keys()), sd["param_groups"][0]["lr"], sd["state"][0]["step"])
print(policy2.critic_target.l6.bias, policy2.actor_target.l3.weight.requires_grad)
print("RESULT: td3", np.round(evaluations[-1], 3))
