"""The usual variable-length batch recipe: pad_sequence, pack_padded_sequence(enforce_sorted=False)
into a bidirectional 2-layer LSTM/GRU, pad_packed_sequence, last hidden states, a classifier."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
rnn_utils = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.utils.rnn")
pack_padded_sequence = rnn_utils.pack_padded_sequence
pad_packed_sequence = rnn_utils.pad_packed_sequence
pad_sequence = rnn_utils.pad_sequence
pack_sequence = rnn_utils.pack_sequence

torch.manual_seed(0)
seqs = [torch.randint(1, 20, (n,)) for n in (4, 7, 2, 5)]
lengths = torch.tensor([len(s) for s in seqs])
padded = pad_sequence(seqs, batch_first=True, padding_value=0)
print(padded)
print(pad_sequence(seqs).shape, pad_sequence(seqs, padding_side="left", batch_first=True)[2])


class BiLSTMClassifier(nn.Module):
    def __init__(self, vocab, emb, hidden, n_layers, n_classes):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb, padding_idx=0)
        self.lstm = nn.LSTM(emb, hidden, num_layers=n_layers, bidirectional=True,
                            batch_first=True, dropout=0.0)
        self.fc = nn.Linear(hidden * 2, n_classes)

    def forward(self, text, text_lengths):
        embedded = self.embedding(text)
        packed_embedded = pack_padded_sequence(embedded, text_lengths.cpu(), batch_first=True,
                                               enforce_sorted=False)
        packed_output, (hidden, cell) = self.lstm(packed_embedded)
        output, output_lengths = pad_packed_sequence(packed_output, batch_first=True)
        hidden = torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1)
        return self.fc(hidden), output, output_lengths


model = BiLSTMClassifier(20, 6, 5, 2, 3)
print(model)
for name, p in model.lstm.named_parameters():
    print(name, tuple(p.shape))
logits, output, out_lengths = model(padded, lengths)
print(logits)
print(output.shape, out_lengths)
print(output[2])

packed = pack_padded_sequence(model.embedding(padded), lengths, batch_first=True,
                              enforce_sorted=False)
print(type(packed).__name__, packed.data.shape, packed.batch_sizes, packed.sorted_indices,
      packed.unsorted_indices)
print(packed.is_cuda, packed.batch_sizes.dtype)

optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
labels = torch.tensor([0, 1, 2, 1])
criterion = nn.CrossEntropyLoss()
for epoch in range(8):
    optimizer.zero_grad()
    logits, _, _ = model(padded, lengths)
    loss = criterion(logits, labels)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    optimizer.step()
    acc = (logits.argmax(1) == labels).float().mean()
    print(f"epoch {epoch} loss {loss.item():.4f} acc {acc:.2f}")
print(model.embedding.weight.grad[0])

# GRU with a packed sequence and an initial state; the sorted path and pack_sequence.
gru = nn.GRU(3, 4, num_layers=2, bidirectional=True)
xs = [torch.randn(n, 3) for n in (5, 3, 1)]
packed = pack_sequence(xs)
print(packed.batch_sizes, packed.sorted_indices)
h0 = torch.randn(4, 3, 4)
out, hn = gru(packed, h0)
unpacked, lens = pad_packed_sequence(out, total_length=6)
print(unpacked.shape, lens)
print(hn)
(unpacked.sum() + hn.pow(2).sum()).backward()
print(gru.weight_hh_l1_reverse.grad.norm(), h0.grad if h0.grad is not None else None)

# Plain RNN, packing unsorted by hand, and the packed sequence's methods.
rnn = nn.RNN(3, 2, batch_first=True, nonlinearity='relu')
x = torch.randn(3, 4, 3)
pk = pack_padded_sequence(x, [2, 4, 3], batch_first=True, enforce_sorted=False)
o, h = rnn(pk)
print(pad_packed_sequence(o, batch_first=True, padding_value=-1.0)[0])
print(h)
print(pk.to(torch.float64).data.dtype, pk.double().data.dtype)
try:
    pack_padded_sequence(x, [2, 4, 3], batch_first=True)
except RuntimeError as e:
    print("RuntimeError:", e)
print(rnn_utils.unpad_sequence(pad_sequence(seqs, batch_first=True), lengths, batch_first=True))
print(rnn_utils.unpack_sequence(pack_sequence(seqs, enforce_sorted=False)))
print("RESULT:", f"{loss.item():.4f}")
