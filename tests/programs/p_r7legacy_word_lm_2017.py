"""pytorch/examples word_language_model as of 2017 (PyTorch 0.2/0.3), shrunk and run on modern
torch: data.py's Dictionary/Corpus (``torch.LongTensor(tokens)`` filled word by word),
model.py's RNNModel (``init_weights`` via ``.data.uniform_``/``.data.fill_``, ``init_hidden``
with ``Variable(weight.new(nlayers, bsz, nhid).zero_())``, tied weights) and main.py's
``batchify`` (``data.narrow``, ``.view(bsz, -1).t().contiguous()``), ``get_batch(source, i,
evaluation=False)`` with ``Variable(..., volatile=evaluation)``, ``repackage_hidden`` (its 2017
``type(h) == Variable`` test is always False now, so the 0.4 ``isinstance(h, torch.Tensor)``
form follows), ``torch.nn.utils.clip_grad_norm`` (deprecated name), the manual SGD step
``p.data.add_(-lr, p.grad.data)`` (deprecated add_ overload), ``total_loss += loss.data``,
``cur_loss = total_loss[0] / log_interval`` (an IndexError now) and ``math.exp``. A tiny
synthetic corpus in the temp dir instead of Penn Treebank."""
import importlib
import math
import os
import tempfile
import warnings

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
Variable = importlib.import_module(LIB + ".autograd").Variable


def strip(w):
    return "%s: %s" % (w.category.__name__, str(w.message).split(" (Triggered internally")[0])


class Dictionary(object):
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus(object):
    def __init__(self, path):
        self.dictionary = Dictionary()
        self.train = self.tokenize(os.path.join(path, 'train.txt'))
        self.valid = self.tokenize(os.path.join(path, 'valid.txt'))

    def tokenize(self, path):
        """Tokenizes a text file."""
        assert os.path.exists(path)
        with open(path, 'r') as f:
            tokens = 0
            for line in f:
                words = line.split() + ['<eos>']
                tokens += len(words)
                for word in words:
                    self.dictionary.add_word(word)
        with open(path, 'r') as f:
            ids = torch.LongTensor(tokens)
            token = 0
            for line in f:
                words = line.split() + ['<eos>']
                for word in words:
                    ids[token] = self.dictionary.word2idx[word]
                    token += 1
        return ids


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super(RNNModel, self).__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ['LSTM', 'GRU']:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            nonlinearity = {'RNN_TANH': 'tanh', 'RNN_RELU': 'relu'}[rnn_type]
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            if nhid != ninp:
                raise ValueError('When using the tied flag, nhid must be equal to emsize')
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        self.encoder.weight.data.uniform_(-initrange, initrange)
        self.decoder.bias.data.fill_(0)
        self.decoder.weight.data.uniform_(-initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output.view(output.size(0) * output.size(1), output.size(2)))
        return decoded.view(output.size(0), output.size(1), decoded.size(1)), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters()).data
        if self.rnn_type == 'LSTM':
            return (Variable(weight.new(self.nlayers, bsz, self.nhid).zero_()),
                    Variable(weight.new(self.nlayers, bsz, self.nhid).zero_()))
        else:
            return Variable(weight.new(self.nlayers, bsz, self.nhid).zero_())


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    data = data.view(bsz, -1).t().contiguous()
    return data


def get_batch(source, i, evaluation=False):
    seq_len = min(bptt, len(source) - 1 - i)
    data = Variable(source[i:i + seq_len], volatile=evaluation)
    target = Variable(source[i + 1:i + 1 + seq_len].view(-1))
    return data, target


def repackage_hidden_2017(h):
    """Wraps hidden states in new Variables, to detach them from their history."""
    if type(h) == Variable:  # noqa: E721
        return Variable(h.data)
    else:
        return tuple(repackage_hidden_2017(v) for v in h)


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    else:
        return tuple(repackage_hidden(v) for v in h)


tmp = tempfile.mkdtemp()
words = "the cat sat on a mat while the dog ran to a red ball and the bird sang".split()
gen = torch.Generator().manual_seed(11)
for name, nlines in (("train.txt", 40), ("valid.txt", 10)):
    with open(os.path.join(tmp, name), "w") as f:
        for _ in range(nlines):
            start = int(torch.randint(0, len(words) - 6, (1,), generator=gen))
            f.write(" ".join(words[start:start + 6]) + "\n")

torch.manual_seed(1111)
corpus = Corpus(tmp)
print("vocab:", len(corpus.dictionary), "train tokens:", corpus.train.size(0),
      corpus.train.type(), corpus.train[:8].tolist())
eval_batch_size = 4
batch_size, bptt, lr, clip, log_interval = 6, 7, 5.0, 0.25, 5
train_data = batchify(corpus.train, batch_size)
val_data = batchify(corpus.valid, eval_batch_size)
print("batchified:", tuple(train_data.shape), tuple(val_data.shape), train_data.is_contiguous())

ntokens = len(corpus.dictionary)
for rnn_type in ("LSTM", "GRU"):
    torch.manual_seed(1111)
    model = RNNModel(rnn_type, ntokens, 16, 16, 2, dropout=0.2, tie_weights=True)
    criterion = nn.CrossEntropyLoss()
    hidden = model.init_hidden(batch_size)
    print(rnn_type, "hidden:", type(hidden).__name__, type(hidden) == Variable)  # noqa: E721
    try:
        repackage_hidden_2017(hidden)     # recurses into the tensors until a 0-d one
    except TypeError as e:
        print("  repackage_hidden_2017 ->", type(e).__name__, e)

    def evaluate(data_source):
        model.eval()
        total_loss = 0
        hidden = model.init_hidden(eval_batch_size)
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            for i in range(0, data_source.size(0) - 1, bptt):
                data, targets = get_batch(data_source, i, evaluation=True)
                output, hidden = model(data, hidden)
                output_flat = output.view(-1, ntokens)
                total_loss += len(data) * criterion(output_flat, targets).data
                hidden = repackage_hidden(hidden)
        print("  eval warnings:", sorted(set(strip(w) for w in ws)))
        return total_loss / len(data_source)

    for epoch in range(1, 3):
        model.train()
        total_loss = 0
        hidden = model.init_hidden(batch_size)
        seen = set()
        for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
            data, targets = get_batch(train_data, i)
            hidden = repackage_hidden(hidden)
            model.zero_grad()
            output, hidden = model(data, hidden)
            loss = criterion(output.view(-1, ntokens), targets)
            loss.backward()
            with warnings.catch_warnings(record=True) as ws:
                warnings.simplefilter("always")
                norm = torch.nn.utils.clip_grad_norm(model.parameters(), clip)
                for p in model.parameters():
                    p.data.add_(-lr, p.grad.data)
            for w in ws:
                if strip(w) not in seen:
                    seen.add(strip(w))
                    print("  warning:", strip(w).replace("\n", " | "))
            total_loss += loss.data
            if batch % log_interval == 0 and batch > 0:
                try:
                    cur_loss = total_loss[0] / log_interval
                except IndexError as e:
                    print("  total_loss[0]:", type(e).__name__, str(e)[:40])
                    cur_loss = total_loss.item() / log_interval
                print('| epoch {:3d} | {:5d}/{:5d} batches | lr {:02.2f} | loss {:5.2f} | '
                      'ppl {:8.2f} | norm {:.4f}'.format(epoch, batch, len(train_data) // bptt,
                                                          lr, cur_loss, math.exp(cur_loss),
                                                          float(norm)))
                total_loss = 0
        val_loss = evaluate(val_data)
        print('| end of epoch {:3d} | valid loss {:5.2f} | valid ppl {:8.2f}'.format(
            epoch, float(val_loss), math.exp(val_loss)))
        lr /= 4.0
    lr = 5.0
    print("tied:", model.decoder.weight is model.encoder.weight,
          "params:", sum(p.numel() for p in model.parameters()))
