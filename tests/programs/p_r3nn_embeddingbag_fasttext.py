"""fastText-style bag-of-n-grams text classifier (the "Bag of Tricks" / torchtext-style
EmbeddingBag recipes): nn.EmbeddingBag with offsets in sum/mean/max modes, per_sample_weights
(tf-idf weighting), include_last_offset, padding_idx, 2-D input without offsets,
from_pretrained, F.embedding_bag, and the errors shown for misuse; a few SGD steps."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(0)
VOCAB, EMB, NCLASS = 30, 8, 3

bag = nn.EmbeddingBag(10, 3, mode="sum")
print(bag)
print(bag.weight.shape, bag.mode)
inp = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
offsets = torch.tensor([0, 4])
out = bag(inp, offsets)
print(out)
print(out.grad_fn is not None, type(out.grad_fn).__name__)
for mode in ["sum", "mean", "max"]:
    b = nn.EmbeddingBag(10, 3, mode=mode)
    with torch.no_grad():
        b.weight.copy_(torch.arange(30, dtype=torch.float32).reshape(10, 3) / 10)
    print(mode, b(inp, offsets))
    print(mode, "2d", b(inp.view(2, 4)))
# padding_idx is excluded from the bag
bp = nn.EmbeddingBag(10, 3, mode="mean", padding_idx=2)
print(bp)
print(bp.weight[2])
print(bp(torch.tensor([[2, 2, 1], [2, 2, 2]])))
# per_sample_weights (only with mode="sum")
w = torch.tensor([0.5, 1.0, 2.0, 0.25, 1.0, 1.0, 0.1, 3.0])
print(bag(inp, offsets, per_sample_weights=w))
try:
    nn.EmbeddingBag(10, 3, mode="mean")(inp, offsets, per_sample_weights=w)
except Exception as e:
    print(type(e).__name__, e)
# include_last_offset
bl = nn.EmbeddingBag(10, 3, mode="sum", include_last_offset=True)
print(bl)
print(bl(inp, torch.tensor([0, 3, 8])).shape)
# empty bag gives zeros
print(bag(inp, torch.tensor([0, 4, 4])))
# from_pretrained
pre = torch.FloatTensor([[1, 2.3, 3], [4, 5.1, 6.3]])
eb = nn.EmbeddingBag.from_pretrained(pre, mode="max")
print(eb)
print(eb(torch.tensor([[1, 0]])))
print(eb.weight.requires_grad)
# functional form
print(F.embedding_bag(inp, bag.weight, offsets, mode="mean").shape)
try:
    bag(inp.view(2, 4), offsets)
except Exception as e:
    print(type(e).__name__, e)


class FastText(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
        self.fc = nn.Linear(embed_dim, num_class)
        self.init_weights()

    def init_weights(self):
        initrange = 0.5
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.fc.weight.data.uniform_(-initrange, initrange)
        self.fc.bias.data.zero_()

    def forward(self, text, offsets, weights=None):
        embedded = self.embedding(text, offsets, per_sample_weights=weights)
        return self.fc(embedded)


def bigrams(ids):
    return ids + [(a * 7 + b) % VOCAB for a, b in zip(ids[:-1], ids[1:])]


model = FastText(VOCAB, EMB, NCLASS)
model.embedding.mode = "sum"
print(model)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=2.0)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.9)
docs = [torch.randint(0, VOCAB, (int(n),)).tolist() for n in torch.randint(3, 8, (12,))]
labels = torch.randint(0, NCLASS, (12,))


def collate(batch):
    text_list, offs, wts = [], [0], []
    for ids in batch:
        t = torch.tensor(bigrams(ids), dtype=torch.int64)
        text_list.append(t)
        wts.append(torch.full((len(t),), 1.0 / len(t)))
        offs.append(t.size(0))
    offs = torch.tensor(offs[:-1]).cumsum(dim=0)
    return torch.cat(text_list), offs, torch.cat(wts)


for epoch in range(4):
    total = 0.0
    for i in range(0, 12, 4):
        text, offs, wts = collate(docs[i:i + 4])
        optimizer.zero_grad()
        predicted = model(text, offs, wts)
        loss = criterion(predicted, labels[i:i + 4])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        total += loss.item()
    scheduler.step()
    print(f"epoch {epoch} loss {total / 3:.4f} lr {scheduler.get_last_lr()[0]:.4f}")
print(model.embedding.weight.grad.shape, model.embedding.weight.grad.abs().sum().item() > 0)
with torch.no_grad():
    text, offs, wts = collate(docs)
    acc = (model(text, offs, wts).argmax(1) == labels).sum().item()
print("RESULT: acc", acc, "of", len(docs))
