"""spro/practical-pytorch char-rnn-generation: a GRU character model (Embedding -> n-layer GRU ->
Linear) trained on random chunks with Adam, then sampled with temperature via
output.data.view(-1).div(temperature).exp() and torch.multinomial; plus min-char-rnn style
top-k sampling with F.softmax / torch.topk. Synthetic text, a few steps."""
import importlib
import os
import random
import string

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
Variable = torch.autograd.Variable

all_characters = string.printable
n_characters = len(all_characters)
file = ("the quick brown fox jumps over the lazy dog. " * 4
        + "pack my box with five dozen liquor jugs! " * 4)
file_len = len(file)
print('file_len =', file_len, 'n_characters =', n_characters)

chunk_len = 20
random.seed(0)


def random_chunk():
    start_index = random.randint(0, file_len - chunk_len)
    end_index = start_index + chunk_len + 1
    return file[start_index:end_index]


print(random_chunk())


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


# Turn string into list of longs
def char_tensor(string):
    tensor = torch.zeros(len(string)).long()
    for c in range(len(string)):
        tensor[c] = all_characters.index(string[c])
    return Variable(tensor)


print(char_tensor('abcDEF'))


def random_training_set():
    chunk = random_chunk()
    inp = char_tensor(chunk[:-1])
    target = char_tensor(chunk[1:])
    return inp, target


def evaluate(prime_str='A', predict_len=100, temperature=0.8):
    hidden = decoder.init_hidden()
    prime_input = char_tensor(prime_str)
    predicted = prime_str

    # Use priming string to "build up" hidden state
    for p in range(len(prime_str) - 1):
        _, hidden = decoder(prime_input[p], hidden)
    inp = prime_input[-1]

    for p in range(predict_len):
        output, hidden = decoder(inp, hidden)

        # Sample from the network as a multinomial distribution
        output_dist = output.data.view(-1).div(temperature).exp()
        top_i = torch.multinomial(output_dist, 1)[0]

        # Add predicted character to string and use as next input
        predicted_char = all_characters[top_i]
        predicted += predicted_char
        inp = char_tensor(predicted_char)

    return predicted


def train(inp, target):
    hidden = decoder.init_hidden()
    decoder.zero_grad()
    loss = 0

    for c in range(chunk_len):
        output, hidden = decoder(inp[c], hidden)
        loss += criterion(output, target[c].unsqueeze(0))

    loss.backward()
    decoder_optimizer.step()

    return loss.data.item() / chunk_len


n_epochs = 6
print_every = 2
hidden_size = 24
n_layers = 2
lr = 0.005

torch.manual_seed(0)
decoder = RNN(n_characters, hidden_size, n_characters, n_layers)
decoder_optimizer = torch.optim.Adam(decoder.parameters(), lr=lr)
criterion = nn.CrossEntropyLoss()
print(decoder)
print(list(decoder.state_dict().keys()))

all_losses = []
loss_avg = 0
for epoch in range(1, n_epochs + 1):
    loss = train(*random_training_set())
    loss_avg += loss

    if epoch % print_every == 0:
        print('[(%d %d%%) %.4f]' % (epoch, epoch / n_epochs * 100, loss))
        print(evaluate('Wh', 30), '\n')
        all_losses.append(loss_avg / print_every)
        loss_avg = 0
print(all_losses)

for t in (0.2, 0.5, 1.0, 1.5):
    torch.manual_seed(42)
    print(t, repr(evaluate('th', 25, temperature=t)))


# min-char-rnn / nanoGPT style: softmax over temperature-scaled logits, optional top-k.
@torch.no_grad()
def sample(prime, steps, temperature=1.0, top_k=None, greedy=False):
    hidden = decoder.init_hidden()
    idx = char_tensor(prime)
    out = list(prime)
    for p in range(len(prime)):
        logits, hidden = decoder(idx[p], hidden)
    for _ in range(steps):
        logits = logits / temperature
        if top_k is not None:
            v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
            logits[logits < v[:, [-1]]] = -float('Inf')
        probs = F.softmax(logits, dim=-1)
        if greedy:
            _, nxt = torch.topk(probs, k=1, dim=-1)
        else:
            nxt = torch.multinomial(probs, num_samples=1)
        ch = all_characters[nxt.item()]
        out.append(ch)
        logits, hidden = decoder(nxt.view(-1)[0], hidden)
    return ''.join(out)


torch.manual_seed(7)
print(repr(sample('the ', 20, temperature=0.9, top_k=5)))
print(repr(sample('the ', 20, greedy=True)))
g = torch.Generator().manual_seed(3)
probs = F.softmax(torch.randn(4, 10, generator=g), dim=-1)
print(torch.multinomial(probs, 3, generator=g))
print(torch.multinomial(probs, 12, replacement=True, generator=g))
print(torch.multinomial(torch.tensor([0., 1., 0., 3.]), 2))
try:
    torch.multinomial(torch.tensor([0., 1.]), 3)
except Exception as e:
    print(type(e).__name__, e)
print("RESULT:", [f"{v:.4f}" for v in all_losses])
