"""pytorch/examples reinforcement_learning/reinforce.py, with a toy CartPole-like env."""
import argparse
import importlib
import os
from itertools import count

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = torch.optim
Categorical = importlib.import_module(
    os.environ.get("TORCH_LIB", "torch") + ".distributions").Categorical

parser = argparse.ArgumentParser(description='PyTorch REINFORCE example')
parser.add_argument('--gamma', type=float, default=0.99, metavar='G')
parser.add_argument('--seed', type=int, default=543, metavar='N')
parser.add_argument('--log-interval', type=int, default=2, metavar='N')
args = parser.parse_args([])


class ToyCartPole:
    """A deterministic 4-d state env; episode ends after a few steps or when it drifts."""

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)
        self.spec_reward_threshold = 195.0

    def reset(self):
        self.state = self.rng.uniform(-0.05, 0.05, size=4)
        self.t = 0
        return self.state, {}

    def step(self, action):
        force = 1.0 if action == 1 else -1.0
        x, v, th, w = self.state
        w = w + 0.05 * force + 0.1 * th
        th = th + 0.1 * w
        v = v + 0.02 * force
        x = x + 0.1 * v
        self.state = np.array([x, v, th, w])
        self.t += 1
        done = abs(th) > 0.2 or self.t >= 12
        return self.state, 1.0, done, False, {}


env = ToyCartPole(args.seed)
torch.manual_seed(args.seed)


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 128)
        self.dropout = nn.Dropout(p=0.6)
        self.affine2 = nn.Linear(128, 2)

        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


policy = Policy()
print(policy)
optimizer = optim.Adam(policy.parameters(), lr=1e-2)
eps = np.finfo(np.float32).eps.item()


def select_action(state):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs = policy(state)
    m = Categorical(probs)
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()


def finish_episode():
    R = 0
    policy_loss = []
    returns = []
    for r in policy.rewards[::-1]:
        R = r + args.gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    print(f"  loss {policy_loss.item():.4f} returns[:3] {returns[:3]}")
    del policy.rewards[:]
    del policy.saved_log_probs[:]


def main():
    running_reward = 10
    for i_episode in count(1):
        state, _ = env.reset()
        ep_reward = 0
        actions = []
        for t in range(1, 10000):
            action = select_action(state)
            actions.append(action)
            state, reward, done, _, _ = env.step(action)
            policy.rewards.append(reward)
            ep_reward += reward
            if done:
                break

        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        print("actions", actions, "log_prob", policy.saved_log_probs[0])
        finish_episode()
        if i_episode % args.log_interval == 0:
            print('Episode {}\tLast reward: {:.2f}\tAverage reward: {:.2f}'.format(
                  i_episode, ep_reward, running_reward))
        if running_reward > env.spec_reward_threshold or i_episode >= 6:
            print("Solved! Running reward is now {} and "
                  "the last episode runs to {} time steps!".format(running_reward, t))
            break


main()
print(policy.affine2.weight.grad.shape, policy.affine2.bias)
print("RESULT: done")
