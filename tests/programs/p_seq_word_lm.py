"""pytorch/examples word_language_model (model.py + main.py), shrunk: RNNModel (LSTM/GRU/RNN_TANH,
tied weights), TransformerModel, repackage_hidden, get_batch, clip_grad_norm_, manual SGD."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ['LSTM', 'GRU']:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            try:
                nonlinearity = {'RNN_TANH': 'tanh', 'RNN_RELU': 'relu'}[rnn_type]
            except KeyError as e:
                raise ValueError("bad rnn_type") from e
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
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == 'LSTM':
            return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid))
        else:
            return weight.new_zeros(self.nlayers, bsz, self.nhid)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=5000):
        super(PositionalEncoding, self).__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer('pe', pe)

    def forward(self, x):
        x = x + self.pe[:x.size(0), :]
        return self.dropout(x)


class TransformerModel(nn.Transformer):
    """Container module with an encoder, a recurrent or transformer module, and a decoder."""

    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
        super(TransformerModel, self).__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid,
                                               num_encoder_layers=nlayers)
        self.model_type = 'Transformer'
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)
        self.init_weights()

    def _generate_square_subsequent_mask(self, sz):
        return torch.log(torch.tril(torch.ones(sz, sz)))

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, src, has_mask=True):
        if has_mask:
            device = src.device
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                mask = self._generate_square_subsequent_mask(len(src)).to(device)
                self.src_mask = mask
        else:
            self.src_mask = None
        src = self.input_emb(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.encoder(src, mask=self.src_mask)
        output = self.decoder(output)
        return F.log_softmax(output, dim=-1)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    data = data.view(bsz, -1).t().contiguous()
    return data


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    else:
        return tuple(repackage_hidden(v) for v in h)


bptt = 5


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].view(-1)
    return data, target


torch.manual_seed(1111)
ntokens = 30
corpus = torch.randint(0, ntokens, (260,))
train_data = batchify(corpus[:200], 4)
val_data = batchify(corpus[200:], 2)
print(train_data.shape, val_data.shape, train_data.dtype)
criterion = nn.NLLLoss()


def evaluate(model, data_source, eval_batch_size):
    model.eval()
    total_loss = 0.
    if model.__class__.__name__ != 'TransformerModel':
        hidden = model.init_hidden(eval_batch_size)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, bptt):
            data, targets = get_batch(data_source, i)
            if model.__class__.__name__ == 'TransformerModel':
                output = model(data)
                output = output.view(-1, ntokens)
            else:
                output, hidden = model(data, hidden)
                hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


def train(model, lr, clip=0.25, log_interval=4):
    model.train()
    total_loss = 0.
    if model.__class__.__name__ != 'TransformerModel':
        hidden = model.init_hidden(4)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        model.zero_grad()
        if model.__class__.__name__ == 'TransformerModel':
            output = model(data)
            output = output.view(-1, ntokens)
        else:
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        total_loss += loss.item()
        if batch % log_interval == 0 and batch > 0:
            cur_loss = total_loss / log_interval
            print('| {:5d}/{:5d} batches | lr {:02.2f} | loss {:5.4f} | ppl {:8.4f} | gnorm {:.4f}'
                  .format(batch, len(train_data) // bptt, lr, cur_loss, math.exp(cur_loss),
                          float(gn)))
            total_loss = 0


for rnn_type, tied in [('LSTM', True), ('GRU', False), ('RNN_TANH', False), ('RNN_RELU', True)]:
    torch.manual_seed(1111)
    model = RNNModel(rnn_type, ntokens, 16, 16, 2, dropout=0.2, tie_weights=tied)
    if rnn_type == 'LSTM':
        print(model)
        print([(k, tuple(v.shape)) for k, v in model.state_dict().items()])
        print(sum(p.numel() for p in model.parameters()))
    train(model, lr=5.0)
    val_loss = evaluate(model, val_data, 2)
    print('| end of epoch {} | valid loss {:5.4f} | valid ppl {:8.4f}'.format(
        rnn_type, val_loss, math.exp(val_loss)))

torch.manual_seed(1111)
model = TransformerModel(ntokens, 16, 2, 32, 2, dropout=0.2)
print(model.pos_encoder)
print(model.encoder.layers[0])
print(model.pe if hasattr(model, 'pe') else model.pos_encoder.pe.shape)
print(model._generate_square_subsequent_mask(4))
train(model, lr=0.5)
val_loss = evaluate(model, val_data, 2)
print('| end of training | valid loss {:5.4f} | valid ppl {:8.4f}'.format(
    val_loss, math.exp(val_loss)))

# generate.py
model.eval()
torch.manual_seed(3)
input = torch.randint(ntokens, (1, 1), dtype=torch.long)
words = []
with torch.no_grad():
    for i in range(6):
        output = model(input, False)
        word_weights = output[-1].squeeze().div(1.0).exp().cpu()
        word_idx = torch.multinomial(word_weights, 1)[0]
        word_tensor = torch.Tensor([[word_idx]]).long()
        input = torch.cat([input, word_tensor], 0)
        words.append(int(word_idx))
print(words)
print("RESULT:", round(val_loss, 4))
