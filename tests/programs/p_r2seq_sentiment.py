"""bentrevett/pytorch-sentiment-analysis, notebooks 1-4 shrunk: the simple RNN, the upgraded
bidirectional multi-layer LSTM over pack_padded_sequence (enforce_sorted=False) with pretrained-
style embeddings and zeroed <unk>/<pad> rows, FastText (bigrams + F.avg_pool2d) and the CNN
(Conv2d over (fs, emb_dim), F.max_pool1d); BCEWithLogitsLoss, binary_accuracy, count_parameters,
predict_sentiment; synthetic token ids."""
import importlib
import os
import random

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".optim")

SEED = 1234
random.seed(SEED)
torch.manual_seed(SEED)
torch.backends.cudnn.deterministic = True
device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

INPUT_DIM = 30
UNK_IDX, PAD_IDX = 0, 1
BATCH = 4


def make_batch(lengths):
    """[sent len, batch] token ids, label 1 when 'positive' tokens (>= 15) dominate."""
    seqs = [torch.randint(2, INPUT_DIM, (n,)) for n in lengths]
    labels = torch.tensor([float((s >= 15).float().mean() > 0.5) for s in seqs])
    text = nn.utils.rnn.pad_sequence(seqs, padding_value=PAD_IDX)
    return text, torch.tensor(lengths), labels


batches = [make_batch([random.randint(3, 9) for _ in range(BATCH)]) for _ in range(4)]
print(batches[0][0].shape, batches[0][1], batches[0][2])


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def binary_accuracy(preds, y):
    """Returns accuracy per batch, i.e. if you get 8/10 right, this returns 0.8, NOT 8"""
    rounded_preds = torch.round(torch.sigmoid(preds))
    correct = (rounded_preds == y).float()  # convert into float for division
    acc = correct.sum() / len(correct)
    return acc


# 1 - Simple Sentiment Analysis
class RNN(nn.Module):
    def __init__(self, input_dim, embedding_dim, hidden_dim, output_dim):
        super().__init__()
        self.embedding = nn.Embedding(input_dim, embedding_dim)
        self.rnn = nn.RNN(embedding_dim, hidden_dim)
        self.fc = nn.Linear(hidden_dim, output_dim)

    def forward(self, text):
        embedded = self.embedding(text)
        output, hidden = self.rnn(embedded)
        assert torch.equal(output[-1, :, :], hidden.squeeze(0))
        return self.fc(hidden.squeeze(0))


# 2 - Upgraded Sentiment Analysis
class UpgradedRNN(nn.Module):
    def __init__(self, vocab_size, embedding_dim, hidden_dim, output_dim, n_layers,
                 bidirectional, dropout, pad_idx):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_idx)
        self.rnn = nn.LSTM(embedding_dim, hidden_dim, num_layers=n_layers,
                           bidirectional=bidirectional, dropout=dropout)
        self.fc = nn.Linear(hidden_dim * 2, output_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, text, text_lengths):
        embedded = self.dropout(self.embedding(text))
        packed_embedded = nn.utils.rnn.pack_padded_sequence(embedded, text_lengths.to('cpu'),
                                                            enforce_sorted=False)
        packed_output, (hidden, cell) = self.rnn(packed_embedded)
        output, output_lengths = nn.utils.rnn.pad_packed_sequence(packed_output)
        hidden = self.dropout(torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1))
        return self.fc(hidden), output, output_lengths


# 3 - Faster Sentiment Analysis
def generate_bigrams(x):
    n_grams = set(zip(*[x[i:] for i in range(2)]))
    for n_gram in sorted(n_grams):
        x.append(' '.join(n_gram))
    return x


print(generate_bigrams(['This', 'film', 'is', 'terrible']))


class FastText(nn.Module):
    def __init__(self, vocab_size, embedding_dim, output_dim, pad_idx):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_idx)
        self.fc = nn.Linear(embedding_dim, output_dim)

    def forward(self, text):
        embedded = self.embedding(text)
        embedded = embedded.permute(1, 0, 2)
        pooled = F.avg_pool2d(embedded, (embedded.shape[1], 1)).squeeze(1)
        return self.fc(pooled)


# 4 - Convolutional Sentiment Analysis
class CNN(nn.Module):
    def __init__(self, vocab_size, embedding_dim, n_filters, filter_sizes, output_dim, dropout,
                 pad_idx):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_idx)
        self.convs = nn.ModuleList([
            nn.Conv2d(in_channels=1, out_channels=n_filters, kernel_size=(fs, embedding_dim))
            for fs in filter_sizes
        ])
        self.fc = nn.Linear(len(filter_sizes) * n_filters, output_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, text):
        text = text.permute(1, 0)
        embedded = self.embedding(text)
        embedded = embedded.unsqueeze(1)
        conved = [F.relu(conv(embedded)).squeeze(3) for conv in self.convs]
        pooled = [F.max_pool1d(conv, conv.shape[2]).squeeze(2) for conv in conved]
        cat = self.dropout(torch.cat(pooled, dim=1))
        return self.fc(cat)


EMBEDDING_DIM, HIDDEN_DIM, OUTPUT_DIM = 8, 6, 1
models = [
    ("rnn", RNN(INPUT_DIM, EMBEDDING_DIM, HIDDEN_DIM, OUTPUT_DIM)),
    ("lstm", UpgradedRNN(INPUT_DIM, EMBEDDING_DIM, HIDDEN_DIM, OUTPUT_DIM, 2, True, 0.5, PAD_IDX)),
    ("fasttext", FastText(INPUT_DIM, EMBEDDING_DIM, OUTPUT_DIM, PAD_IDX)),
    ("cnn", CNN(INPUT_DIM, EMBEDDING_DIM, 3, [2, 3], OUTPUT_DIM, 0.5, PAD_IDX)),
]
pretrained_embeddings = torch.randn(INPUT_DIM, EMBEDDING_DIM)
for name, model in models:
    print(model)
    print(f'The model has {count_parameters(model):,} trainable parameters')
    if name != "rnn":
        model.embedding.weight.data.copy_(pretrained_embeddings)
        model.embedding.weight.data[UNK_IDX] = torch.zeros(EMBEDDING_DIM)
        model.embedding.weight.data[PAD_IDX] = torch.zeros(EMBEDDING_DIM)
        print(model.embedding.weight.data[:3])


def run(name, model, batch):
    text, lengths, _ = batch
    if name == "lstm":
        return model(text, lengths)[0].squeeze(1)
    return model(text).squeeze(1)


def train(name, model, iterator, optimizer, criterion):
    epoch_loss = 0
    epoch_acc = 0
    model.train()
    for batch in iterator:
        optimizer.zero_grad()
        predictions = run(name, model, batch)
        loss = criterion(predictions, batch[2])
        acc = binary_accuracy(predictions, batch[2])
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item()
        epoch_acc += acc.item()
    return epoch_loss / len(iterator), epoch_acc / len(iterator)


def evaluate(name, model, iterator, criterion):
    epoch_loss = 0
    epoch_acc = 0
    model.eval()
    with torch.no_grad():
        for batch in iterator:
            predictions = run(name, model, batch)
            loss = criterion(predictions, batch[2])
            acc = binary_accuracy(predictions, batch[2])
            epoch_loss += loss.item()
            epoch_acc += acc.item()
    return epoch_loss / len(iterator), epoch_acc / len(iterator)


criterion = nn.BCEWithLogitsLoss()
criterion = criterion.to(device)
for name, model in models:
    torch.manual_seed(0)
    optimizer = optim.SGD(model.parameters(), lr=1e-3) if name == "rnn" else \
        optim.Adam(model.parameters())
    model = model.to(device)
    for epoch in range(2):
        train_loss, train_acc = train(name, model, batches[:3], optimizer, criterion)
        valid_loss, valid_acc = evaluate(name, model, batches[3:], criterion)
        print(f'{name} Epoch: {epoch+1:02}')
        print(f'\tTrain Loss: {train_loss:.3f} | Train Acc: {train_acc*100:.2f}%')
        print(f'\t Val. Loss: {valid_loss:.3f} |  Val. Acc: {valid_acc*100:.2f}%')

lstm = models[1][1]
text, lengths, _ = batches[0]
_, output, output_lengths = lstm(text, lengths)
print(output.shape, output_lengths, output[:, 0].abs().sum(1))
print(lstm.embedding.weight[PAD_IDX], lstm.embedding.weight.grad[PAD_IDX])


def predict_sentiment(model, tokens, min_len=3):
    model.eval()
    if len(tokens) < min_len:
        tokens += [PAD_IDX] * (min_len - len(tokens))
    tensor = torch.LongTensor(tokens).to(device)
    tensor = tensor.unsqueeze(1)
    length = torch.LongTensor([len(tokens)])
    if isinstance(model, UpgradedRNN):
        prediction = torch.sigmoid(model(tensor, length)[0])
    else:
        prediction = torch.sigmoid(model(tensor))
    return prediction.item()


for name, model in models:
    print(name, f"{predict_sentiment(model, [20, 21, 25, 28]):.4f}",
          f"{predict_sentiment(model, [3, 4]):.4f}")
print("RESULT:", f"{valid_loss:.4f}")
