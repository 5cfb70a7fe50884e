"""Karpathy's makemore part 2 (makemore_part2_mlp.ipynb, Bengio et al. 2003 MLP), shrunk: the
block_size=3 context dataset, the embedding lookup C[X] (and its one-hot equivalent), torch.cat /
torch.unbind / view tricks, tanh hidden layer, the manual softmax loss vs F.cross_entropy,
build_dataset with a shuffled 80/10/10 split, Generator-seeded parameters, the learning-rate
search over 10**torch.linspace(-3, 0, 1000), minibatches from torch.randint (global and
generator), train/dev losses and sampling with torch.multinomial(generator=g).
200 synthetic names instead of names.txt; a few steps only."""
# ruff: noqa: E501  (upstream's own line lengths, kept)
# compare: rtol=5e-4 atol=1e-5
# (the unscaled init saturates tanh, so 1-ulp differences of tanh grow over training)
import importlib
import os
import random

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(42)


def make_names(n=200, seed=0):
    """Pronounceable lowercase names covering all of a-z (stands in for names.txt)."""
    rng = random.Random(seed)
    onsets = ['b', 'c', 'd', 'f', 'g', 'h', 'j', 'k', 'l', 'm', 'n', 'p', 'qu', 'r', 's', 't', 'v',
              'w', 'x', 'y', 'z', 'ch', 'sh', 'br', 'tr', '', '']
    vowels = ['a', 'e', 'i', 'o', 'u', 'y', 'ae', 'ia', 'ou', 'a', 'e']
    codas = ['', '', '', 'n', 'l', 'r', 's', 'x', 'th', 'h']
    return [''.join(rng.choice(onsets) + rng.choice(vowels) for _ in range(rng.choice([1, 2, 2, 3])))
            + rng.choice(codas) for _ in range(n)]


words = make_names()
print(len(words), words[:8])

# build the vocabulary of characters and mappings to/from integers
chars = sorted(list(set(''.join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi['.'] = 0
itos = {i: s for s, i in stoi.items()}
print(itos)

# build the dataset
block_size = 3  # context length: how many characters do we take to predict the next one?
X, Y = [], []
for w in words[:5]:

    print(w)
    context = [0] * block_size
    for ch in w + '.':
        ix = stoi[ch]
        X.append(context)
        Y.append(ix)
        print(''.join(itos[i] for i in context), '--->', itos[ix])
        context = context[1:] + [ix]  # crop and append

X = torch.tensor(X)
Y = torch.tensor(Y)
print(X.shape, X.dtype, Y.shape, Y.dtype)

C = torch.randn((27, 2))
print(C[5], F.one_hot(torch.tensor(5), num_classes=27).float() @ C)
print(C[[5, 6, 7, 7, 7]], C[torch.tensor([5, 6, 7, 7, 7])].shape)
emb = C[X]
print(emb.shape, C[X][13, 2], C[1], X[13, 2])

W1 = torch.randn((6, 100))
b1 = torch.randn(100)
print(torch.cat([emb[:, 0, :], emb[:, 1, :], emb[:, 2, :]], 1).shape)
print(torch.cat(torch.unbind(emb, 1), 1).shape)
a = torch.arange(18)
print(a.shape, a.view(2, 9), a.view(9, 2).shape, a.view(3, 3, 2))
print(emb.view(-1, 6).shape, (emb.view(-1, 6) == torch.cat(torch.unbind(emb, 1), 1)).all())
h = torch.tanh(emb.view(-1, 6) @ W1 + b1)
print(h.shape, h[0, :6])

W2 = torch.randn((100, 27))
b2 = torch.randn(27)
logits = h @ W2 + b2
counts = logits.exp()
prob = counts / counts.sum(1, keepdims=True)
print(prob.shape, prob[0].sum())
loss = -prob[torch.arange(X.shape[0]), Y].log().mean()
print(loss, F.cross_entropy(logits, Y))


# build the dataset
def build_dataset(words):
    X, Y = [], []
    for w in words:

        # print(w)
        context = [0] * block_size
        for ch in w + '.':
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            # print(''.join(itos[i] for i in context), '--->', itos[ix])
            context = context[1:] + [ix]  # crop and append

    X = torch.tensor(X)
    Y = torch.tensor(Y)
    print(X.shape, Y.shape)
    return X, Y


random.seed(42)
random.shuffle(words)
n1 = int(0.8 * len(words))
n2 = int(0.9 * len(words))

Xtr, Ytr = build_dataset(words[:n1])
Xdev, Ydev = build_dataset(words[n1:n2])
Xte, Yte = build_dataset(words[n2:])

g = torch.Generator().manual_seed(2147483647)  # for reproducibility
C = torch.randn((27, 10), generator=g)
W1 = torch.randn((30, 200), generator=g)
b1 = torch.randn(200, generator=g)
W2 = torch.randn((200, 27), generator=g)
b2 = torch.randn(27, generator=g)
parameters = [C, W1, b1, W2, b2]
print(sum(p.nelement() for p in parameters))  # number of parameters in total
for p in parameters:
    p.requires_grad = True

lre = torch.linspace(-3, 0, 1000)
lrs = 10**lre
print(lre[:3], lrs[-3:], lrs[500])

lri = []
lossi = []
stepi = []

# learning-rate search: walk lrs, one minibatch step each (every 50th lr here)
for i in range(0, 1000, 50):

    # minibatch construct
    ix = torch.randint(0, Xtr.shape[0], (32,))

    # forward pass
    emb = C[Xtr[ix]]  # (32, 3, 10)
    h = torch.tanh(emb.view(-1, 30) @ W1 + b1)  # (32, 200)
    logits = h @ W2 + b2  # (32, 27)
    loss = F.cross_entropy(logits, Ytr[ix])

    # backward pass
    for p in parameters:
        p.grad = None
    loss.backward()

    # update
    lr = lrs[i]
    for p in parameters:
        p.data += -lr * p.grad

    # track stats
    lri.append(lre[i])
    stepi.append(i)
    lossi.append(loss.log10().item())

print(torch.stack(lri)[:4], [round(v, 4) for v in lossi[:6]])
print('best lre', lri[torch.tensor(lossi).argmin().item()].item())

# (re-run the init cell, then train with the learning rate found)
g = torch.Generator().manual_seed(2147483647)  # for reproducibility
C = torch.randn((27, 10), generator=g)
W1 = torch.randn((30, 200), generator=g)
b1 = torch.randn(200, generator=g)
W2 = torch.randn((200, 27), generator=g)
b2 = torch.randn(27, generator=g)
parameters = [C, W1, b1, W2, b2]
for p in parameters:
    p.requires_grad = True

for i in range(40):

    # minibatch construct
    ix = torch.randint(0, Xtr.shape[0], (32,), generator=g)

    # forward pass
    emb = C[Xtr[ix]]  # (32, 3, 10)
    h = torch.tanh(emb.view(-1, 30) @ W1 + b1)  # (32, 200)
    logits = h @ W2 + b2  # (32, 27)
    loss = F.cross_entropy(logits, Ytr[ix])

    # backward pass
    for p in parameters:
        p.grad = None
    loss.backward()

    # update
    lr = 0.1 if i < 20 else 0.01
    for p in parameters:
        p.data += -lr * p.grad

    # track stats
    stepi.append(i)
    lossi.append(loss.log10().item())
    if i % 5 == 0:
        print(i, loss.item())

emb = C[Xtr]  # (32, 3, 2)
h = torch.tanh(emb.view(-1, 30) @ W1 + b1)  # (32, 100)
logits = h @ W2 + b2  # (32, 27)
loss = F.cross_entropy(logits, Ytr)
print('train', loss)

emb = C[Xdev]  # (32, 3, 2)
h = torch.tanh(emb.view(-1, 30) @ W1 + b1)  # (32, 100)
logits = h @ W2 + b2  # (32, 27)
loss = F.cross_entropy(logits, Ydev)
print('dev', loss)

# visualize dimensions 0 and 1 of the embedding matrix C for all characters
print(C[:, 0].data[:5], C[:, 1].data[:5])

# sample from the model
g = torch.Generator().manual_seed(2147483647 + 10)

for _ in range(10):

    out = []
    context = [0] * block_size  # initialize with all ...
    while True:
        emb = C[torch.tensor([context])]  # (1,block_size,d)
        h = torch.tanh(emb.view(1, -1) @ W1 + b1)
        logits = h @ W2 + b2
        probs = F.softmax(logits, dim=1)
        ix = torch.multinomial(probs, num_samples=1, generator=g).item()
        context = context[1:] + [ix]
        out.append(ix)
        if ix == 0:
            break

    print(''.join(itos[i] for i in out))
