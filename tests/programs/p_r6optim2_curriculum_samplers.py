"""Curriculum and re-weighted sampling, shrunk from GuyHacohen/curriculum_learning (difficulty
from a teacher's per-example loss, the exponential / linear pacing functions and the
"take a random batch from the easiest pacing(i) examples" data function, here as a torch
Sampler with set_epoch), self-paced learning's loss threshold (SubsetRandomSampler over the
examples under lambda, lambda grown each epoch) and the imbalanced-classification recipe with
WeightedRandomSampler (inverse class counts, replacement True/False, num_samples, a seeded
generator, inside DataLoader and BatchSampler), training a small classifier under each."""
import importlib
import math
import os

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
data_mod = importlib.import_module(LIB + ".utils.data")
DataLoader, Sampler, TensorDataset = data_mod.DataLoader, data_mod.Sampler, data_mod.TensorDataset


def exponent_data_function_generator(dataset_size, batch_size, starting_percent, increase_amount,
                                     step_length):
    def data_function(batch_index):
        exponent = batch_index // step_length
        percent = min(starting_percent * (increase_amount ** exponent), 1)
        return int(percent * dataset_size)
    return data_function


def linear_pacing(batch_index, dataset_size, starting_percent, step_length, increase):
    percent = min(starting_percent + increase * (batch_index // step_length), 1.0)
    return max(int(percent * dataset_size), 1)


class CurriculumBatchSampler(Sampler):
    """Yields batches drawn from the easiest pacing(i) examples (order = easiest first)."""

    def __init__(self, order, batch_size, num_batches, pacing, generator=None):
        self.order = order
        self.batch_size = batch_size
        self.num_batches = num_batches
        self.pacing = pacing
        self.generator = generator
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __iter__(self):
        for i in range(self.num_batches):
            batch_index = self.epoch * self.num_batches + i
            size = max(self.pacing(batch_index), self.batch_size)
            picks = torch.randint(0, size, (self.batch_size,), generator=self.generator)
            yield self.order[picks].tolist()

    def __len__(self):
        return self.num_batches


def make_model():
    return nn.Sequential(nn.Linear(4, 12), nn.ReLU(), nn.Linear(12, 3))


def train_epoch(model, opt, loader):
    total, n = 0.0, 0
    for xb, yb in loader:
        loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item() * len(yb)
        n += len(yb)
    return total / n


torch.manual_seed(7)
counts = [90, 24, 6]
y = torch.cat([torch.full((c,), k, dtype=torch.long) for k, c in enumerate(counts)])
centers = torch.tensor([[0.0, 0, 0, 0], [1.5, 1.5, 0, 0], [0, 1.5, 1.5, 0]])
X = centers[y] + 0.9 * torch.randn(len(y), 4)
ds = TensorDataset(X, y)
N = len(ds)

# difficulty from a teacher trained briefly on everything
teacher = make_model()
opt = torch.optim.Adam(teacher.parameters(), lr=0.01)
for _ in range(30):
    opt.zero_grad()
    F.cross_entropy(teacher(X), y).backward()
    opt.step()
with torch.no_grad():
    difficulty = F.cross_entropy(teacher(X), y, reduction="none")
order = torch.argsort(difficulty, stable=True)
print("easiest", order[:6].tolist(), "hardest", order[-4:].tolist(),
      "difficulty range %.4f %.4f" % (difficulty.min().item(), difficulty.max().item()))

pacing = exponent_data_function_generator(N, 16, starting_percent=0.2, increase_amount=1.5, step_length=3)
print("pacing", [pacing(i) for i in range(0, 16, 2)])
print("linear", [linear_pacing(i, N, 0.1, 2, 0.15) for i in range(0, 16, 2)])
g = torch.Generator().manual_seed(11)
bs = CurriculumBatchSampler(order, 16, 5, pacing, generator=g)
loader = DataLoader(ds, batch_sampler=bs)
torch.manual_seed(0)
student = make_model()
opt = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9)
for epoch in range(3):
    bs.set_epoch(epoch)
    first = next(iter(bs))
    loss = train_epoch(student, opt, loader)
    print("curriculum epoch %d pool %d first batch %s loss %.5f" % (
        epoch, pacing(epoch * 5), first[:5], loss))

# self-paced learning: train only on examples with loss under lambda, lambda grows
torch.manual_seed(0)
spl = make_model()
opt = torch.optim.SGD(spl.parameters(), lr=0.1)
lam, mu = 0.8, 1.5
for epoch in range(3):
    with torch.no_grad():
        losses = F.cross_entropy(spl(X), y, reduction="none")
    easy = torch.nonzero(losses < lam).flatten().tolist()
    sampler = data_mod.SubsetRandomSampler(easy, generator=torch.Generator().manual_seed(epoch))
    ld = DataLoader(ds, batch_size=10, sampler=sampler)
    loss = train_epoch(spl, opt, ld)
    print("spl epoch %d lambda %.3f selected %d batches %d loss %.5f" % (epoch, lam, len(easy), len(ld), loss))
    lam *= mu

# WeightedRandomSampler for the imbalance
class_sample_count = np.array([len(np.where(y.numpy() == t)[0]) for t in np.unique(y.numpy())])
weight = 1. / class_sample_count
samples_weight = np.array([weight[t] for t in y.numpy()])
samples_weight = torch.from_numpy(samples_weight)
print("class counts", class_sample_count.tolist(), samples_weight.dtype)
sampler = data_mod.WeightedRandomSampler(samples_weight.type("torch.DoubleTensor"), len(samples_weight),
                                         generator=torch.Generator().manual_seed(3))
drawn = torch.tensor(list(sampler))
print("drawn class counts", torch.bincount(y[drawn], minlength=3).tolist(), drawn[:8].tolist())
sampler_nr = data_mod.WeightedRandomSampler(samples_weight, 40, replacement=False,
                                            generator=torch.Generator().manual_seed(3))
drawn_nr = list(sampler_nr)
print("no replacement", len(set(drawn_nr)), torch.bincount(y[drawn_nr], minlength=3).tolist())
torch.manual_seed(5)
balanced = make_model()
opt = torch.optim.Adam(balanced.parameters(), lr=0.01)
wl = DataLoader(ds, batch_size=16, sampler=data_mod.WeightedRandomSampler(
    samples_weight, N, generator=torch.Generator().manual_seed(4)))
for epoch in range(3):
    loss = train_epoch(balanced, opt, wl)
with torch.no_grad():
    pred = balanced(X).argmax(1)
    per_class = [(pred[y == k] == k).float().mean().item() for k in range(3)]
print("balanced loss %.5f per-class recall %s" % (loss, [round(v, 4) for v in per_class]))
bsmp = data_mod.BatchSampler(data_mod.WeightedRandomSampler([0.1, 0.9, 0.4, 0.0], 6,
                             generator=torch.Generator().manual_seed(0)), batch_size=4, drop_last=False)
print("batch sampler", list(bsmp), len(bsmp))
for bad, n, rep in (([[0.1, 0.2]], 3, True), ([-1.0, 1.0], 2, True), ([0.5, 0.5], 3, False),
                   ([0.0, 0.0], 1, True), ([1.0, float("nan")], 1, True), ([1.0, 0.0], 2, False)):
    try:
        s = data_mod.WeightedRandomSampler(bad, n, replacement=rep, generator=torch.Generator().manual_seed(1))
        print(list(s))
    except Exception as e:
        print(type(e).__name__, e)
try:
    data_mod.WeightedRandomSampler([0.5, 0.5], 0)
except Exception as e:
    print(type(e).__name__, e)
try:
    data_mod.WeightedRandomSampler([0.5, 0.5], 2, replacement=1)
except Exception as e:
    print(type(e).__name__, e)
