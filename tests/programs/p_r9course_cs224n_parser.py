"""Stanford CS224n assignments 2 and 3, shrunk. a2 word2vec (softmax, naiveSoftmaxLossAndGradient,
getNegativeSamples, negSamplingLossAndGradient, skipgram, word2vec_sgd_wrapper, the dummy-dataset
sanity checks and utils/gradcheck.py's gradcheck_naive) written with float64 torch tensors
instead of NumPy, its hand-derived gradients also compared with autograd; a3 neural dependency
parser: PartialParse / minibatch_parse (parser_transitions.py), ParserModel with an nn.Embedding
lookup, nn.init.xavier_uniform_, dropout (parser_model.py), run.py's train_for_epoch with
minibatches, AverageMeter and the dev UAS, and parser_utils' legal-label masking at prediction.
A tiny synthetic treebank from a static arc-standard oracle stands in for the Penn Treebank."""

import importlib
import itertools
import math
import os
import random

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
optim = torch.optim

torch.manual_seed(0)
random.seed(31415)
np.random.seed(9265)


# ======================= a2: word2vec =======================
def gradcheck_naive(f, x, gradientText):
    rndstate = random.getstate()
    random.setstate(rndstate)
    fx, grad = f(x)  # Evaluate function value at original point
    h = 1e-4  # Do not change this!
    for ix in itertools.product(*[range(n) for n in x.shape]):
        x[ix] += h  # increment by h
        random.setstate(rndstate)
        fxh, _ = f(x)  # evalute f(x + h)
        x[ix] -= 2 * h  # restore to previous value (very important!)
        random.setstate(rndstate)
        fxnh, _ = f(x)
        x[ix] += h
        numgrad = (fxh - fxnh) / 2 / h
        reldiff = abs(numgrad - grad[ix]) / max(1, abs(numgrad), abs(grad[ix]))
        if reldiff > 1e-5:
            print("Gradient check failed for %s." % gradientText)
            print("First gradient error found at index %s in the vector of gradients" % str(ix))
            print("Your gradient: %f \t Numerical gradient: %f" % (grad[ix], numgrad))
            return
    print("Gradient check passed!. Read the docs/gradcheck.md for more info")


def softmax(x):
    orig_shape = x.shape
    if len(x.shape) > 1:
        x = x - torch.max(x, dim=1, keepdim=True).values
        x = torch.exp(x)
        x = x / x.sum(dim=1, keepdim=True)
    else:
        x = x - x.max()
        x = torch.exp(x) / torch.exp(x).sum()
    assert x.shape == orig_shape
    return x


def sigmoid(x):
    return 1 / (1 + torch.exp(-x))


def naiveSoftmaxLossAndGradient(centerWordVec, outsideWordIdx, outsideVectors, dataset):
    y_hat = softmax(outsideVectors @ centerWordVec)
    loss = -torch.log(y_hat[outsideWordIdx])
    delta = y_hat.clone()
    delta[outsideWordIdx] -= 1
    gradCenterVec = outsideVectors.t() @ delta
    gradOutsideVecs = torch.outer(delta, centerWordVec)
    return loss, gradCenterVec, gradOutsideVecs


def getNegativeSamples(outsideWordIdx, dataset, K):
    negSampleWordIndices = [None] * K
    for k in range(K):
        newidx = dataset.sampleTokenIdx()
        while newidx == outsideWordIdx:
            newidx = dataset.sampleTokenIdx()
        negSampleWordIndices[k] = newidx
    return negSampleWordIndices


def negSamplingLossAndGradient(centerWordVec, outsideWordIdx, outsideVectors, dataset, K=10):
    negSampleWordIndices = getNegativeSamples(outsideWordIdx, dataset, K)
    indices = [outsideWordIdx] + negSampleWordIndices
    u_o = outsideVectors[outsideWordIdx]
    u_k = outsideVectors[negSampleWordIndices]  # (K, d)
    s_o = sigmoid(u_o @ centerWordVec)
    s_k = sigmoid(-(u_k @ centerWordVec))
    loss = -torch.log(s_o) - torch.log(s_k).sum()
    gradCenterVec = (s_o - 1) * u_o + ((1 - s_k).unsqueeze(1) * u_k).sum(0)
    gradOutsideVecs = torch.zeros_like(outsideVectors)
    gradOutsideVecs[outsideWordIdx] += (s_o - 1) * centerWordVec
    for k, idx in enumerate(negSampleWordIndices):
        gradOutsideVecs[idx] += (1 - s_k[k]) * centerWordVec
    assert len(indices) == K + 1
    return loss, gradCenterVec, gradOutsideVecs


def skipgram(
    currentCenterWord,
    windowSize,
    outsideWords,
    word2Ind,
    centerWordVectors,
    outsideVectors,
    dataset,
    word2vecLossAndGradient=naiveSoftmaxLossAndGradient,
):
    loss = 0.0
    gradCenterVecs = torch.zeros(centerWordVectors.shape, dtype=torch.float64)
    gradOutsideVectors = torch.zeros(outsideVectors.shape, dtype=torch.float64)
    c = word2Ind[currentCenterWord]
    for w in outsideWords:
        l, gc, go = word2vecLossAndGradient(  # noqa: E741
            centerWordVectors[c], word2Ind[w], outsideVectors, dataset
        )
        loss += l
        gradCenterVecs[c] += gc
        gradOutsideVectors += go
    return loss, gradCenterVecs, gradOutsideVectors


def word2vec_sgd_wrapper(
    word2vecModel,
    word2Ind,
    wordVectors,
    dataset,
    windowSize,
    word2vecLossAndGradient=naiveSoftmaxLossAndGradient,
):
    batchsize = 8  # 50 in the assignment
    loss = 0.0
    grad = torch.zeros(wordVectors.shape, dtype=torch.float64)
    N = wordVectors.shape[0]
    centerWordVectors = wordVectors[: int(N / 2), :]
    outsideVectors = wordVectors[int(N / 2) :, :]
    for i in range(batchsize):
        windowSize1 = random.randint(1, windowSize)
        centerWord, context = dataset.getRandomContext(windowSize1)
        c, gin, gout = word2vecModel(
            centerWord,
            windowSize1,
            context,
            word2Ind,
            centerWordVectors,
            outsideVectors,
            dataset,
            word2vecLossAndGradient,
        )
        loss += c / batchsize
        grad[: int(N / 2), :] += gin / batchsize
        grad[int(N / 2) :, :] += gout / batchsize
    return loss, grad


class DummyDataset:
    def sampleTokenIdx(self):
        return random.randint(0, 4)

    def getRandomContext(self, C):
        tokens = ["a", "b", "c", "d", "e"]
        return tokens[random.randint(0, 4)], [tokens[random.randint(0, 4)] for i in range(2 * C)]


def normalizeRows(x):
    return x / torch.linalg.norm(x, dim=1, keepdim=True)


print("==== softmax sanity ====")
print(softmax(torch.tensor([1001.0, 1002.0], dtype=torch.float64)))
print(softmax(torch.tensor([[-1001.0, -1002.0]], dtype=torch.float64)))
print(sigmoid(torch.tensor([[1, 2], [-1, -2]], dtype=torch.float64)))

dataset = DummyDataset()
dummy_vectors = normalizeRows(torch.randn(10, 3, dtype=torch.float64))
dummy_tokens = dict([("a", 0), ("b", 1), ("c", 2), ("d", 3), ("e", 4)])

print("==== Gradient check for naiveSoftmaxLossAndGradient ====")
centerVec, outsideVecs = torch.randn(3, dtype=torch.float64), torch.randn(5, 3, dtype=torch.float64)
gradcheck_naive(
    lambda vec: naiveSoftmaxLossAndGradient(vec, 1, outsideVecs, dataset)[:2],
    centerVec,
    "naiveSoftmaxLossAndGradient gradCenterVec",
)
gradcheck_naive(
    lambda vec: naiveSoftmaxLossAndGradient(centerVec, 1, vec, dataset)[::2],
    outsideVecs,
    "naiveSoftmaxLossAndGradient gradOutsideVecs",
)

print("==== Gradient check for negSamplingLossAndGradient ====")
gradcheck_naive(
    lambda vec: negSamplingLossAndGradient(vec, 1, outsideVecs, dataset)[:2],
    centerVec,
    "negSamplingLossAndGradient gradCenterVec",
)
gradcheck_naive(
    lambda vec: negSamplingLossAndGradient(centerVec, 1, vec, dataset)[::2],
    outsideVecs,
    "negSamplingLossAndGradient gradOutsideVecs",
)

print("==== hand-derived gradients vs autograd ====")
cv = centerVec.clone().requires_grad_()
ov = outsideVecs.clone().requires_grad_()
loss, gc, go = naiveSoftmaxLossAndGradient(cv.detach(), 3, ov.detach(), dataset)
F.cross_entropy((ov @ cv).unsqueeze(0), torch.tensor([3])).backward()
print(
    "naive loss %.8f" % loss.item(),
    "center",
    torch.allclose(cv.grad, gc),
    "outside",
    torch.allclose(ov.grad, go),
)
state = random.getstate()
loss, gc, go = negSamplingLossAndGradient(cv.detach(), 3, ov.detach(), dataset, K=4)
random.setstate(state)
negs = getNegativeSamples(3, dataset, 4)
cv.grad, ov.grad = None, None
auto = -F.logsigmoid(ov[3] @ cv) - F.logsigmoid(-(ov[negs] @ cv)).sum()
auto.backward()
print(
    "neg loss %.8f auto %.8f" % (loss.item(), auto.item()),
    "negs",
    negs,
    "center",
    torch.allclose(cv.grad, gc),
    "outside",
    torch.allclose(ov.grad, go),
)

print("==== Gradient check for skip-gram with naiveSoftmaxLossAndGradient ====")
gradcheck_naive(
    lambda vec: word2vec_sgd_wrapper(
        skipgram, dummy_tokens, vec, dataset, 2, naiveSoftmaxLossAndGradient
    ),
    dummy_vectors,
    "naiveSoftmaxLossAndGradient Gradient",
)
print("==== Gradient check for skip-gram with negSamplingLossAndGradient ====")
gradcheck_naive(
    lambda vec: word2vec_sgd_wrapper(
        skipgram, dummy_tokens, vec, dataset, 2, negSamplingLossAndGradient
    ),
    dummy_vectors,
    "negSamplingLossAndGradient Gradient",
)
random.seed(31415)
loss, gin, gout = skipgram(
    "c",
    3,
    ["a", "b", "e", "d", "b", "c"],
    dummy_tokens,
    dummy_vectors[:5, :],
    dummy_vectors[5:, :],
    dataset,
)
print("skipgram loss %.6f" % loss.item())
print(gin.round(decimals=6))
print(gout.round(decimals=6))
bad_grad = lambda vec: (vec.pow(2).sum(), 3 * vec)  # noqa: E731
gradcheck_naive(bad_grad, torch.randn(2, 2, dtype=torch.float64), "wrong on purpose")


# ======================= a3: dependency parser =======================
class PartialParse(object):
    def __init__(self, sentence):
        self.sentence = sentence
        self.stack = ["ROOT"]
        self.buffer = sentence[:]
        self.dependencies = []

    def parse_step(self, transition):
        if transition == "S":
            self.stack.append(self.buffer.pop(0))
        elif transition == "LA":
            dependent = self.stack.pop(-2)
            self.dependencies.append((self.stack[-1], dependent))
        elif transition == "RA":
            dependent = self.stack.pop()
            self.dependencies.append((self.stack[-1], dependent))

    def parse(self, transitions):
        for transition in transitions:
            self.parse_step(transition)
        return self.dependencies


def minibatch_parse(sentences, model, batch_size):
    partial_parses = [PartialParse(sentence) for sentence in sentences]
    unfinished_parses = partial_parses[:]
    while unfinished_parses:
        minibatch = unfinished_parses[:batch_size]
        transitions = model.predict(minibatch)
        for pp, t in zip(minibatch, transitions):
            pp.parse_step(t)
        unfinished_parses = [pp for pp in unfinished_parses if len(pp.stack) > 1 or pp.buffer]
    dependencies = [pp.dependencies for pp in partial_parses]
    return dependencies


def test_step(name, transition, stack, buf, deps, ex_stack, ex_buf, ex_deps):
    pp = PartialParse([])
    pp.stack, pp.buffer, pp.dependencies = stack, buf, deps
    pp.parse_step(transition)
    stack, buf, deps = (tuple(pp.stack), tuple(pp.buffer), tuple(sorted(pp.dependencies)))
    assert stack == ex_stack and buf == ex_buf and deps == ex_deps
    print("{:} test passed!".format(name))


test_step("SHIFT", "S", ["ROOT", "the"], ["cat", "sat"], [], ("ROOT", "the", "cat"), ("sat",), ())
test_step(
    "LEFT-ARC",
    "LA",
    ["ROOT", "the", "cat"],
    ["sat"],
    [],
    (
        "ROOT",
        "cat",
    ),
    ("sat",),
    (("cat", "the"),),
)
test_step(
    "RIGHT-ARC",
    "RA",
    ["ROOT", "run", "fast"],
    [],
    [],
    (
        "ROOT",
        "run",
    ),
    (),
    (("run", "fast"),),
)
deps = PartialParse(["parse", "this", "sentence"]).parse(["S", "S", "S", "LA", "RA", "RA"])
print("parse test:", tuple(sorted(deps)))


class ParserModel(nn.Module):
    def __init__(self, embeddings, n_features=36, hidden_size=200, n_classes=3, dropout_prob=0.5):
        super(ParserModel, self).__init__()
        self.n_features = n_features
        self.n_classes = n_classes
        self.dropout_prob = dropout_prob
        self.embed_size = embeddings.shape[1]
        self.hidden_size = hidden_size
        self.pretrained_embeddings = nn.Embedding(embeddings.shape[0], self.embed_size)
        self.pretrained_embeddings.weight = nn.Parameter(torch.tensor(embeddings))

        self.embed_to_hidden = nn.Linear(self.n_features * self.embed_size, self.hidden_size)
        nn.init.xavier_uniform_(self.embed_to_hidden.weight, gain=1)
        self.dropout = nn.Dropout(p=self.dropout_prob)
        self.hidden_to_logits = nn.Linear(self.hidden_size, self.n_classes)
        nn.init.xavier_uniform_(self.hidden_to_logits.weight, gain=1)

    def embedding_lookup(self, t):
        x = self.pretrained_embeddings(t)
        x = x.view(x.size()[0], -1)
        return x

    def forward(self, t):
        embeddings = self.embedding_lookup(t)
        hidden = F.relu(self.embed_to_hidden(embeddings))
        logits = self.hidden_to_logits(self.dropout(hidden))
        return logits


# synthetic treebank: words are ids 2.. (0 = NULL, 1 = ROOT); heads from a projective tree
N_WORDS = 12
TRANS = ["S", "LA", "RA"]


def make_sentence(rng):
    n = int(rng.integers(3, 7))
    words = [int(w) for w in rng.integers(2, N_WORDS, size=n)]
    # head of each token (1-based, 0 = ROOT): a random projective tree, built right to left
    root = int(rng.integers(1, n + 1))
    heads = [0] * (n + 1)

    def attach(lo, hi, h):
        if lo > hi:
            return
        m = int(rng.integers(lo, hi + 1))
        heads[m] = h
        attach(lo, m - 1, m)
        attach(m + 1, hi, m)

    heads[root] = 0
    attach(1, root - 1, root)
    attach(root + 1, n, root)
    return {"word": words, "head": heads[1:]}


def features(stack, buf, ex):
    """ids of the top 3 stack and first 3 buffer tokens (positions: 0 = ROOT, i = token i)."""

    def wid(i):
        return 1 if i == 0 else ex["word"][i - 1]

    s = [wid(i) for i in stack[-3:]]
    b = [wid(i) for i in buf[:3]]
    return [0] * (3 - len(s)) + s + b + [0] * (3 - len(b))


def legal_labels(stack, buf):
    return [1 if len(buf) > 0 else 0, 1 if len(stack) > 2 else 0, 1 if len(stack) >= 2 else 0]


def oracle(ex):
    heads = [None] + ex["head"]
    n = len(ex["word"])
    stack, buf, arcs, out = [0], list(range(1, n + 1)), [], []
    while buf or len(stack) > 1:
        t = "S"
        if len(stack) > 2 and heads[stack[-2]] == stack[-1]:
            t = "LA"
        elif (
            len(stack) >= 2
            and heads[stack[-1]] == stack[-2]
            and all(heads[k] != stack[-1] or (stack[-1], k) in arcs for k in range(1, n + 1))
        ):
            t = "RA"
        out.append((features(stack, buf, ex), legal_labels(stack, buf), TRANS.index(t)))
        if t == "S":
            stack.append(buf.pop(0))
        elif t == "LA":
            arcs.append((stack[-1], stack.pop(-2)))
        else:
            d = stack.pop()
            arcs.append((stack[-1], d))
    return out


rng = np.random.default_rng(0)
train_set = [make_sentence(rng) for _ in range(60)]
dev_set = [make_sentence(rng) for _ in range(15)]
train_data = [inst for ex in train_set for inst in oracle(ex)]
print("train instances", len(train_data), "dev sentences", len(dev_set))


class Parser:
    def __init__(self, model):
        self.model = model

    def parse(self, dataset, eval_batch_size=5):
        sentences = [list(range(1, len(ex["word"]) + 1)) for ex in dataset]
        sentence_id_to_idx = {id(s): i for i, s in enumerate(sentences)}
        model = ModelWrapper(self, dataset, sentence_id_to_idx)
        dependencies = minibatch_parse(sentences, model, eval_batch_size)
        UAS = all_tokens = 0.0
        for i, ex in enumerate(dataset):
            head = [-1] * len(ex["word"])
            for h, t in dependencies[i]:
                head[t - 1] = 0 if h == "ROOT" else h
            for pred_h, gold_h in zip(head, ex["head"]):
                UAS += 1 if pred_h == gold_h else 0
                all_tokens += 1
        UAS /= all_tokens
        return UAS, dependencies


class ModelWrapper(object):
    def __init__(self, parser, dataset, sentence_id_to_idx):
        self.parser = parser
        self.dataset = dataset
        self.sentence_id_to_idx = sentence_id_to_idx

    def predict(self, partial_parses):
        mb_x, mb_l = [], []
        for p in partial_parses:
            ex = self.dataset[self.sentence_id_to_idx[id(p.sentence)]]
            stack = [0 if s == "ROOT" else s for s in p.stack]
            mb_x.append(features(stack, p.buffer, ex))
            mb_l.append(legal_labels(stack, p.buffer))
        mb_x = torch.from_numpy(np.array(mb_x).astype("int32")).long()
        pred = self.parser.model(mb_x)
        pred = pred.detach().numpy()
        pred = np.argmax(pred + 10000 * np.array(mb_l).astype("float32"), 1)
        pred = ["S" if p == 0 else ("LA" if p == 1 else "RA") for p in pred]
        return pred


def minibatches(data, minibatch_size):
    x = np.array([d[0] for d in data])
    one_hot = np.zeros((len(data), 3))
    one_hot[np.arange(len(data)), [d[2] for d in data]] = 1
    indices = np.arange(len(data))
    np.random.shuffle(indices)
    for start in range(0, len(data), minibatch_size):
        idx = indices[start : start + minibatch_size]
        yield x[idx], one_hot[idx]


class AverageMeter(object):
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = self.avg = self.sum = self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def train_for_epoch(parser, train_data, dev_data, optimizer, loss_func, batch_size):
    parser.model.train()  # Places model in "train" mode, i.e. apply dropout layer
    n_minibatches = math.ceil(len(train_data) / batch_size)
    loss_meter = AverageMeter()
    for i, (train_x, train_y) in enumerate(minibatches(train_data, batch_size)):
        optimizer.zero_grad()  # remove any baggage in the optimizer
        loss = 0.0  # store loss for this batch here
        train_x = torch.from_numpy(train_x).long()
        train_y = torch.from_numpy(train_y.nonzero()[1]).long()
        logits = parser.model(train_x)
        loss = loss_func(logits, train_y)
        loss.backward()
        optimizer.step()
        loss_meter.update(loss.item())
    print("Average Train Loss: {:.6f} over {} minibatches".format(loss_meter.avg, n_minibatches))
    print(
        "Evaluating on dev set",
    )
    parser.model.eval()  # Places model in "eval" mode, i.e. don't apply dropout layer
    dev_UAS, _ = parser.parse(dev_data)
    print("- dev UAS: {:.2f}".format(dev_UAS * 100.0))
    return dev_UAS


embeddings = np.asarray(np.random.normal(0, 0.9, (N_WORDS, 8)), dtype="float32")
model = ParserModel(embeddings, n_features=6, hidden_size=32)
print(model)
t = torch.randint(0, N_WORDS, (4, 6), dtype=torch.long)
print(
    "embedding_lookup",
    tuple(model.embedding_lookup(t).shape),
    "lookup ok",
    torch.equal(model.embedding_lookup(t)[1, 8:16], model.pretrained_embeddings.weight[t[1, 1]]),
)
print("forward", tuple(model(t).shape))
parser = Parser(model)
optimizer = optim.Adam(parser.model.parameters(), lr=0.005)
loss_func = nn.CrossEntropyLoss()
best_dev_UAS = 0
for epoch in range(4):
    print("Epoch {:} out of {:}".format(epoch + 1, 4))
    dev_UAS = train_for_epoch(parser, train_data, dev_set, optimizer, loss_func, 32)
    if dev_UAS > best_dev_UAS:
        best_dev_UAS = dev_UAS
        print("New best dev UAS!")
_, deps = parser.parse(dev_set[:2])
print("dev[0] gold heads", dev_set[0]["head"], "arcs", sorted(deps[0], key=str))
