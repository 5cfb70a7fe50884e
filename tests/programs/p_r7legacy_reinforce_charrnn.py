"""Two 2017-era recurrent/RL scripts run on modern torch. pytorch/examples
reinforcement_learning/reinforce.py as of 2017: ``Policy`` ending in ``F.softmax(action_scores)``
without ``dim`` (implicit-dim warning; dim 1 for the 2-D batch), ``select_action`` with
``Variable(torch.from_numpy(state).float().unsqueeze(0))``, the 0.2 ``action =
probs.multinomial(); action.reinforce(r)`` API (gone: errors naming the new form)
replaced by the 0.3 ``Categorical`` form, ``finish_episode`` with ``rewards =
torch.Tensor(rewards)``, ``np.finfo(np.float32).eps`` and ``torch.cat(policy_loss).sum()``
(``torch.stack`` if the losses were 0-d). spro/practical-pytorch char-rnn-generation:
``CharRNN`` with ``init_hidden`` returning ``Variable(torch.zeros(n_layers, 1, hidden_size))``,
``char_tensor`` filling ``torch.zeros(len(string)).long()``, a per-character loss with
``target[c]`` (0-d now: CrossEntropyLoss's batch error, so ``target[c].unsqueeze(0)`` /
``.view(1)``), ``loss.data[0] / chunk_len`` and greedy ``evaluate`` via
``output.data.view(-1).div(temperature).exp()`` and ``topk``. A deterministic corridor
environment instead of gym's CartPole; a short text instead of Shakespeare."""
import importlib
import os
import string
import warnings

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
optim = importlib.import_module(LIB + ".optim")
Variable = importlib.import_module(LIB + ".autograd").Variable
Categorical = importlib.import_module(LIB + ".distributions").Categorical


def show(ws):
    for w in ws:
        print("  warning:", w.category.__name__, str(w.message).split(" (Triggered internally")[0])


class Corridor:
    """Walk left/right on 0..6 from 3; +1 per step, episode ends at either end or after 12."""

    def reset(self):
        self.pos, self.t = 3, 0
        return self.obs()

    def obs(self):
        return np.array([self.pos / 6.0, 1.0 - self.pos / 6.0, self.t / 12.0, 1.0])

    def step(self, action):
        self.pos += 1 if action == 1 else -1
        self.t += 1
        done = self.pos in (0, 6) or self.t >= 12
        return self.obs(), 1.0, done, {}


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 16)
        self.affine2 = nn.Linear(16, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        action_scores = self.affine2(x)
        return F.softmax(action_scores)


torch.manual_seed(543)
np.random.seed(543)
env = Corridor()
policy = Policy()
optimizer = optim.Adam(policy.parameters(), lr=1e-2)
gamma = 0.99

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    probs = policy(Variable(torch.from_numpy(env.reset()).float().unsqueeze(0)))
try:
    action = probs.multinomial()
except TypeError as e:
    print("probs.multinomial() ->", type(e).__name__)
    action = probs.multinomial(1)
try:
    action.reinforce(1.0)
except RuntimeError as e:
    print("0.2 reinforce API ->", type(e).__name__, e)


def select_action(state):
    state = torch.from_numpy(state).float().unsqueeze(0)
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        probs = policy(Variable(state))
    if not hasattr(select_action, "shown"):
        select_action.shown = True
        show(ws)
        print("  probs row sums:", probs.sum(1).tolist())
    m = Categorical(probs)
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    return action.data[0]


def finish_episode():
    R = 0
    policy_loss = []
    rewards = []
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        rewards.insert(0, R)
    rewards = torch.Tensor(rewards)
    rewards = (rewards - rewards.mean()) / (rewards.std() + np.finfo(np.float32).eps)
    for log_prob, reward in zip(policy.saved_log_probs, rewards):
        policy_loss.append(-log_prob * reward)
    optimizer.zero_grad()
    try:
        policy_loss = torch.cat(policy_loss).sum()
    except RuntimeError as e:
        if not hasattr(finish_episode, "shown"):
            finish_episode.shown = True
            print("  torch.cat(policy_loss) ->", type(e).__name__, e)
        policy_loss = torch.stack(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
    return policy_loss


running_reward = 10
for i_episode in range(1, 31):
    state = env.reset()
    for t in range(100):
        action = select_action(state)
        state, reward, done, _ = env.step(int(action))
        policy.rewards.append(reward)
        if done:
            break
    running_reward = running_reward * 0.99 + t * 0.01
    loss = finish_episode()
    if i_episode == 1:
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            float(loss)
        show(ws)
    if i_episode % 5 == 0:
        print('Episode {}\tLast length: {:5d}\tAverage length: {:.2f}\tloss {:.4f}'.format(
            i_episode, t, running_reward, float(loss)))
print("action type:", type(action).__name__, action.dim(), action.dtype)

# ---- practical-pytorch char-rnn-generation -----------------------------------------------
all_characters = string.printable
n_characters = len(all_characters)
text = ("the quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat " * 3)
chunk_len = 20


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size, n_layers=1):
        super(RNN, self).__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.output_size = output_size
        self.n_layers = n_layers
        self.encoder = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, n_layers)
        self.decoder = nn.Linear(hidden_size, output_size)

    def forward(self, input, hidden):
        input = self.encoder(input.view(1, -1))
        output, hidden = self.gru(input.view(1, 1, -1), hidden)
        output = self.decoder(output.view(1, -1))
        return output, hidden

    def init_hidden(self):
        return Variable(torch.zeros(self.n_layers, 1, self.hidden_size))


def char_tensor(string):
    tensor = torch.zeros(len(string)).long()
    for c in range(len(string)):
        tensor[c] = all_characters.index(string[c])
    return Variable(tensor)


def random_training_set(gen):
    start_index = int(torch.randint(0, len(text) - chunk_len, (1,), generator=gen))
    chunk = text[start_index:start_index + chunk_len + 1]
    return char_tensor(chunk[:-1]), char_tensor(chunk[1:])


def train(inp, target, first=False):
    hidden = decoder.init_hidden()
    decoder.zero_grad()
    loss = 0
    for c in range(chunk_len):
        output, hidden = decoder(inp[c], hidden)
        if first and c == 0:
            try:
                criterion(output, target[c])
            except ValueError as e:
                print("criterion(output, target[c]) ->", type(e).__name__, e,
                      "| target[c].shape:", tuple(target[c].shape))
        loss += criterion(output, target[c].unsqueeze(0))
    loss.backward()
    decoder_optimizer.step()
    try:
        return loss.data[0] / chunk_len
    except IndexError:
        return loss.item() / chunk_len


def evaluate(prime_str='th', predict_len=30, temperature=0.8):
    hidden = decoder.init_hidden()
    prime_input = char_tensor(prime_str)
    predicted = prime_str
    for p in range(len(prime_str) - 1):
        _, hidden = decoder(prime_input[p], hidden)
    inp = prime_input[-1]
    for p in range(predict_len):
        output, hidden = decoder(inp, hidden)
        output_dist = output.data.view(-1).div(temperature).exp()
        top_i = output_dist.topk(1)[1][0]
        predicted_char = all_characters[top_i]
        predicted += predicted_char
        inp = char_tensor(predicted_char)
    return predicted


torch.manual_seed(0)
gen = torch.Generator().manual_seed(5)
decoder = RNN(n_characters, 24, n_characters, 1)
decoder_optimizer = torch.optim.Adam(decoder.parameters(), lr=0.01)
criterion = nn.CrossEntropyLoss()
loss_avg = 0
for epoch in range(1, 61):
    loss = train(*random_training_set(gen), first=epoch == 1)
    loss_avg += loss
    if epoch % 20 == 0:
        print('[epoch %d (%d%%) %.4f]' % (epoch, epoch / 60 * 100, loss))
        print(repr(evaluate('th', 30)))
print("loss type:", type(loss).__name__, "avg %.4f" % (loss_avg / 60))
