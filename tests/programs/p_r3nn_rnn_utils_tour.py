"""torch.nn.utils.rnn, every function as the docs examples use it: pad_sequence
(batch_first, padding_value, padding_side="left"), pack_sequence / unpack_sequence,
pack_padded_sequence with enforce_sorted True/False, PackedSequence fields, indexing,
.to()/.double()/is_cuda, pad_packed_sequence with total_length, unpad_sequence, invert
permutation, and a GRU sequence tagger with masked loss trained a few steps."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
rnn_utils = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.utils.rnn")
pad_sequence = rnn_utils.pad_sequence
pack_sequence = rnn_utils.pack_sequence
pack_padded_sequence = rnn_utils.pack_padded_sequence
pad_packed_sequence = rnn_utils.pad_packed_sequence
unpad_sequence = rnn_utils.unpad_sequence
unpack_sequence = rnn_utils.unpack_sequence
PackedSequence = rnn_utils.PackedSequence

torch.manual_seed(0)
a = torch.ones(25, 300)
b = torch.ones(22, 300)
c = torch.ones(15, 300)
print(pad_sequence([a, b, c]).size())
print(pad_sequence([a, b, c], batch_first=True).size())
x = torch.tensor([1, 2, 3])
y = torch.tensor([4, 5])
z = torch.tensor([6])
print(pad_sequence([x, y, z], batch_first=True, padding_value=-1))
print(pad_sequence([x, y, z], batch_first=True, padding_side="left"))
print(pad_sequence([x, y, z], padding_side="left", padding_value=9))
try:
    pad_sequence([x, y], padding_side="middle")
except Exception as e:
    print(type(e).__name__, e)
packed = pack_sequence([x, y, z])
print(packed)
print(type(packed).__name__, isinstance(packed, tuple), packed._fields)
print(packed.data, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)
print(unpack_sequence(packed))
p2 = pack_sequence([y, x, z], enforce_sorted=False)
print(p2)
print(unpack_sequence(p2))
try:
    pack_sequence([y, x, z])
except Exception as e:
    print(type(e).__name__, e)
seq = torch.tensor([[1, 2, 0], [3, 0, 0], [4, 5, 6]])
lens = [2, 1, 3]
packed = pack_padded_sequence(seq, lens, batch_first=True, enforce_sorted=False)
print(packed)
seq_unpacked, lens_unpacked = pad_packed_sequence(packed, batch_first=True)
print(seq_unpacked)
print(lens_unpacked, lens_unpacked.dtype)
print(pad_packed_sequence(packed, batch_first=False, padding_value=-7, total_length=5))
try:
    pad_packed_sequence(packed, total_length=2)
except Exception as e:
    print(type(e).__name__, e)
try:
    pack_padded_sequence(seq, [2, 0, 3], batch_first=True, enforce_sorted=False)
except Exception as e:
    print(type(e).__name__, e)
fl = packed.float()
print(fl.data.dtype, packed.double().data.dtype, packed.is_cuda, packed.to("cpu") is packed)
print(packed.is_pinned())
print(len(packed), packed[0].dtype, packed[1])
padded = pad_sequence([a[:3, :2], b[:2, :2], c[:1, :2]], batch_first=True)
lengths = torch.as_tensor([3, 2, 1])
sequences = unpad_sequence(padded, lengths, batch_first=True)
print([s.shape for s in sequences])
print(rnn_utils.invert_permutation(torch.tensor([2, 0, 1])))

VOCAB, TAGS = 12, 4


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 6, padding_idx=0)
        self.gru = nn.GRU(6, 5, batch_first=True, bidirectional=True)
        self.out = nn.Linear(10, TAGS)

    def forward(self, tokens, lengths):
        e = self.emb(tokens)
        packed = pack_padded_sequence(e, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, h = self.gru(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=tokens.size(1))
        return self.out(out), h


sents = [torch.randint(1, VOCAB, (int(n),)) for n in [5, 3, 4, 2]]
tags = [torch.randint(0, TAGS, (len(s),)) for s in sents]
lengths = torch.tensor([len(s) for s in sents])
tokens = pad_sequence(sents, batch_first=True)
tag_pad = pad_sequence(tags, batch_first=True, padding_value=-100)
print(tokens)
print(tag_pad)
model = Tagger()
print(model)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
loss_fn = nn.CrossEntropyLoss(ignore_index=-100)
for step in range(6):
    opt.zero_grad()
    logits, h = model(tokens, lengths)
    loss = loss_fn(logits.reshape(-1, TAGS), tag_pad.reshape(-1))
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
print(h.shape, logits.shape)
print(logits[1, 3:].abs().sum().item() == logits[1, 3:].abs().sum().item())
print("RESULT:", f"{loss.item():.4f}")
