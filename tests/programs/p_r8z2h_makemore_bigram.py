"""Karpathy's makemore part 1 (makemore_part1_bigrams.ipynb), shrunk: the int32 counts matrix N,
sampling the first character with torch.multinomial and a Generator seeded 2147483647,
torch.rand(3, generator=g), P = (N+1).float(); P /= P.sum(1, keepdims=True), sampling names,
the log likelihood / negative log likelihood of the training set, then the one-layer neural
bigram: xs/ys, F.one_hot(xs, num_classes=27).float() @ W with W = torch.randn((27, 27),
generator=g, requires_grad=True), the per-example nll walkthrough, gradient descent with
W.data += -50 * W.grad and sampling from the net. 200 synthetic names instead of names.txt."""
# ruff: noqa: E501  (upstream's own line lengths, kept)
import importlib
import os
import random

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


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
print(words[:10])
print(len(words), min(len(w) for w in words), max(len(w) for w in words))

N = torch.zeros((27, 27), dtype=torch.int32)
chars = sorted(list(set(''.join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi['.'] = 0
itos = {i: s for s, i in stoi.items()}

for w in words:
    chs = ['.'] + list(w) + ['.']
    for ch1, ch2 in zip(chs, chs[1:]):
        ix1 = stoi[ch1]
        ix2 = stoi[ch2]
        N[ix1, ix2] += 1

print(N[0])
print(N.sum(), N.dtype, N[1, :5], N.max())

p = N[0].float()
p = p / p.sum()
print(p)

g = torch.Generator().manual_seed(2147483647)
ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
print(itos[ix])

g = torch.Generator().manual_seed(2147483647)
p = torch.rand(3, generator=g)
p = p / p.sum()
print(p)
print(torch.multinomial(p, num_samples=100, replacement=True, generator=g))

P = (N + 1).float()
P /= P.sum(1, keepdims=True)
print(P.shape, P[0].sum(), P.sum(1)[:5])

g = torch.Generator().manual_seed(2147483647)

for i in range(10):

    out = []
    ix = 0
    while True:
        p = P[ix]
        ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
        out.append(itos[ix])
        if ix == 0:
            break
    print(''.join(out))

log_likelihood = 0.0
n = 0

for w in words:
    chs = ['.'] + list(w) + ['.']
    for ch1, ch2 in zip(chs, chs[1:]):
        ix1 = stoi[ch1]
        ix2 = stoi[ch2]
        prob = P[ix1, ix2]
        logprob = torch.log(prob)
        log_likelihood += logprob
        n += 1

print(f'{log_likelihood=}')
nll = -log_likelihood
print(f'{nll=}')
print(f'{nll/n}')

# create the training set of bigrams (x,y)
xs, ys = [], []

for w in words[:1]:
    chs = ['.'] + list(w) + ['.']
    for ch1, ch2 in zip(chs, chs[1:]):
        ix1 = stoi[ch1]
        ix2 = stoi[ch2]
        xs.append(ix1)
        ys.append(ix2)

xs = torch.tensor(xs)
ys = torch.tensor(ys)
print(xs, ys)

xenc = F.one_hot(xs, num_classes=27).float()
print(xenc.shape, xenc.dtype)

# randomly initialize 27 neurons' weights. each neuron receives 27 inputs
g = torch.Generator().manual_seed(2147483647)
W = torch.randn((27, 27), generator=g)
logits = xenc @ W  # predict log-counts
counts = logits.exp()  # counts, equivalent to N
probs = counts / counts.sum(1, keepdims=True)  # probabilities for next character

nlls = torch.zeros(len(xs))
for i in range(len(xs)):
    # i-th bigram:
    x = xs[i].item()  # input character index
    y = ys[i].item()  # label character index
    print('--------')
    print(f'bigram example {i+1}: {itos[x]}{itos[y]} (indexes {x},{y})')
    print('input to the neural net:', x)
    print('output probabilities from the neural net:', probs[i])
    print('label (actual next character):', y)
    p = probs[i, y]
    print('probability assigned by the net to the the correct character:', p.item())
    logp = torch.log(p)
    print('log likelihood:', logp.item())
    nll = -logp
    print('negative log likelihood:', nll.item())
    nlls[i] = nll

print('=========')
print('average negative log likelihood, i.e. loss =', nlls.mean().item())

# create the dataset
xs, ys = [], []
for w in words:
    chs = ['.'] + list(w) + ['.']
    for ch1, ch2 in zip(chs, chs[1:]):
        ix1 = stoi[ch1]
        ix2 = stoi[ch2]
        xs.append(ix1)
        ys.append(ix2)
xs = torch.tensor(xs)
ys = torch.tensor(ys)
num = xs.nelement()
print('number of examples: ', num)

# initialize the 'network'
g = torch.Generator().manual_seed(2147483647)
W = torch.randn((27, 27), generator=g, requires_grad=True)

# gradient descent
for k in range(20):

    # forward pass
    xenc = F.one_hot(xs, num_classes=27).float()  # input to the network: one-hot encoding
    logits = xenc @ W  # predict log-counts
    counts = logits.exp()  # counts, equivalent to N
    probs = counts / counts.sum(1, keepdims=True)  # probabilities for next character
    loss = -probs[torch.arange(num), ys].log().mean() + 0.01 * (W**2).mean()
    print(loss.item())

    # backward pass
    W.grad = None  # set to zero the gradient
    loss.backward()

    # update
    W.data += -50 * W.grad

print(W.grad.shape, W.grad.abs().max())

# finally, sample from the 'neural net' model
g = torch.Generator().manual_seed(2147483647)

for i in range(5):

    out = []
    ix = 0
    while True:

        xenc = F.one_hot(torch.tensor([ix]), num_classes=27).float()
        logits = xenc @ W  # predict log-counts
        counts = logits.exp()  # counts, equivalent to N
        p = counts / counts.sum(1, keepdims=True)  # probabilities for next character

        ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
        out.append(itos[ix])
        if ix == 0:
            break
    print(''.join(out))
