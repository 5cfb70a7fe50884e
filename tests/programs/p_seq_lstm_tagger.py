"""Sequence Models and Long Short-Term Memory Networks tutorial: the LSTM part of speech tagger,
shrunk (same calls and prints)."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".optim")

torch.manual_seed(1)

lstm = nn.LSTM(3, 3)  # Input dim is 3, output dim is 3
inputs = [torch.randn(1, 3) for _ in range(5)]  # make a sequence of length 5

hidden = (torch.randn(1, 1, 3),
          torch.randn(1, 1, 3))
for i in inputs:
    out, hidden = lstm(i.view(1, 1, -1), hidden)

inputs = torch.cat(inputs).view(len(inputs), 1, -1)
hidden = (torch.randn(1, 1, 3), torch.randn(1, 1, 3))  # clean out hidden state
out, hidden = lstm(inputs, hidden)
print(out)
print(hidden)


def prepare_sequence(seq, to_ix):
    idxs = [to_ix[w] for w in seq]
    return torch.tensor(idxs, dtype=torch.long)


training_data = [
    ("The dog ate the apple".split(), ["DET", "NN", "V", "DET", "NN"]),
    ("Everybody read that book".split(), ["NN", "V", "DET", "NN"])
]
word_to_ix = {}
for sent, tags in training_data:
    for word in sent:
        if word not in word_to_ix:
            word_to_ix[word] = len(word_to_ix)
print(word_to_ix)
tag_to_ix = {"DET": 0, "NN": 1, "V": 2}

EMBEDDING_DIM = 6
HIDDEN_DIM = 6


class LSTMTagger(nn.Module):

    def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
        super(LSTMTagger, self).__init__()
        self.hidden_dim = hidden_dim
        self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim)
        self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

    def forward(self, sentence):
        embeds = self.word_embeddings(sentence)
        lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
        tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
        tag_scores = F.log_softmax(tag_space, dim=1)
        return tag_scores


model = LSTMTagger(EMBEDDING_DIM, HIDDEN_DIM, len(word_to_ix), len(tag_to_ix))
print(model)
loss_function = nn.NLLLoss()
optimizer = optim.SGD(model.parameters(), lr=0.1)

with torch.no_grad():
    inputs = prepare_sequence(training_data[0][0], word_to_ix)
    tag_scores = model(inputs)
    print(tag_scores)

for epoch in range(30):
    for sentence, tags in training_data:
        model.zero_grad()
        sentence_in = prepare_sequence(sentence, word_to_ix)
        targets = prepare_sequence(tags, tag_to_ix)
        tag_scores = model(sentence_in)
        loss = loss_function(tag_scores, targets)
        loss.backward()
        optimizer.step()
    if epoch % 10 == 9:
        print(f"epoch {epoch} loss {loss.item():.4f}")

with torch.no_grad():
    inputs = prepare_sequence(training_data[0][0], word_to_ix)
    tag_scores = model(inputs)
    print(tag_scores)
    print(tag_scores.argmax(dim=1))


# The exercise: augment with character-level features (a char LSTM per word).
class CharLSTMTagger(nn.Module):
    def __init__(self, embedding_dim, char_dim, char_hidden, hidden_dim, vocab_size, n_chars,
                 tagset_size):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)
        self.char_embeddings = nn.Embedding(n_chars, char_dim)
        self.char_lstm = nn.LSTM(char_dim, char_hidden, batch_first=True)
        self.lstm = nn.LSTM(embedding_dim + char_hidden, hidden_dim, num_layers=2)
        self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

    def forward(self, sentence, words):
        embeds = self.word_embeddings(sentence)
        char_reps = []
        for w in words:
            _, (h, c) = self.char_lstm(self.char_embeddings(w).unsqueeze(0))
            char_reps.append(h[-1])
        char_reps = torch.cat(char_reps, dim=0)
        x = torch.cat([embeds, char_reps], dim=1)
        lstm_out, (hn, cn) = self.lstm(x.unsqueeze(1))
        tag_space = self.hidden2tag(lstm_out.squeeze(1))
        return F.log_softmax(tag_space, dim=1)


chars = sorted({c for s, _ in training_data for w in s for c in w})
char_to_ix = {c: i for i, c in enumerate(chars)}
model = CharLSTMTagger(6, 3, 4, 6, len(word_to_ix), len(chars), len(tag_to_ix))
print(model)
optimizer = optim.Adam(model.parameters(), lr=0.01)
for epoch in range(8):
    for sentence, tags in training_data:
        optimizer.zero_grad()
        words = [prepare_sequence(list(w), char_to_ix) for w in sentence]
        tag_scores = model(prepare_sequence(sentence, word_to_ix), words)
        loss = loss_function(tag_scores, prepare_sequence(tags, tag_to_ix))
        loss.backward()
        optimizer.step()
    print(f"char epoch {epoch} loss {loss.item():.5f}")
print("RESULT:", f"{loss.item():.4f}")
