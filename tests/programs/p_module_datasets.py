"""The "Datasets & DataLoaders" tutorial: a custom Dataset with transforms, DataLoader batching,
shuffling with a seeded generator, TensorDataset/ConcatDataset/Subset and an IterableDataset."""
import importlib
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
data = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".utils.data")
Dataset, DataLoader = data.Dataset, data.DataLoader

labels_map = {0: "T-Shirt", 1: "Trouser", 2: "Pullover", 3: "Dress"}


class CustomImageDataset(Dataset):
    def __init__(self, n, transform=None, target_transform=None):
        rs = np.random.RandomState(0)
        self.img_labels = rs.randint(0, 4, size=n)
        self.images = rs.randint(0, 256, size=(n, 6, 6)).astype(np.uint8)
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self):
        return len(self.img_labels)

    def __getitem__(self, idx):
        image = torch.from_numpy(self.images[idx]).unsqueeze(0)
        label = int(self.img_labels[idx])
        if self.transform:
            image = self.transform(image)
        if self.target_transform:
            label = self.target_transform(label)
        return image, label


def to_float(img):
    return img.float() / 255.0


def one_hot(y):
    return torch.zeros(4, dtype=torch.float).scatter_(0, torch.tensor(y), value=1)


training_data = CustomImageDataset(20, transform=to_float)
print(len(training_data))
img, label = training_data[3]
print(img.shape, img.dtype, label, labels_map[label])
print(img[0, :2])

train_dataloader = DataLoader(training_data, batch_size=8, shuffle=False)
train_features, train_labels = next(iter(train_dataloader))
print(f"Feature batch shape: {train_features.size()}")
print(f"Labels batch shape: {train_labels.size()}")
print(train_labels, train_labels.dtype)
print(len(train_dataloader))
for i, (X, y) in enumerate(train_dataloader):
    print(i, X.shape, y.tolist(), f"{X.mean().item():.5f}")

g = torch.Generator()
g.manual_seed(42)
loader = DataLoader(training_data, batch_size=6, shuffle=True, generator=g, drop_last=True)
print(len(loader))
for X, y in loader:
    print(y.tolist())

torch.manual_seed(1)
loader = DataLoader(training_data, batch_size=5, shuffle=True)
for X, y in loader:
    print(y.tolist())

ds2 = CustomImageDataset(6, transform=to_float, target_transform=one_hot)
x, y = ds2[0]
print(y)
xb, yb = next(iter(DataLoader(ds2, batch_size=3)))
print(yb)

# TensorDataset / ConcatDataset / Subset
torch.manual_seed(0)
tds = data.TensorDataset(torch.arange(10).float().view(5, 2), torch.arange(5))
print(tds[2])
print(len(tds), tds.tensors[0].shape)
cat = data.ConcatDataset([tds, data.TensorDataset(torch.ones(3, 2), torch.zeros(3).long())])
print(len(cat), cat[6], cat.cumulative_sizes)
sub = data.Subset(cat, [0, 7, 3])
print(len(sub), [sub[i][1].item() for i in range(len(sub))])
for xb, yb in DataLoader(cat, batch_size=3):
    print(xb.tolist(), yb.tolist())


class RangeStream(data.IterableDataset):
    def __init__(self, start, end):
        super().__init__()
        self.start, self.end = start, end

    def __iter__(self):
        info = data.get_worker_info()
        if info is None:
            lo, hi = self.start, self.end
        else:
            per = int(np.ceil((self.end - self.start) / float(info.num_workers)))
            lo = self.start + info.id * per
            hi = min(lo + per, self.end)
        return iter(range(lo, hi))


stream = RangeStream(3, 10)
print(list(DataLoader(stream, batch_size=None)))
print([b.tolist() for b in DataLoader(stream, batch_size=3)])
print(sorted(int(v) for v in DataLoader(stream, num_workers=2)))


def worker_init_fn(worker_id):
    info = data.get_worker_info()
    ds = info.dataset
    total = ds.end - ds.start
    per = int(np.ceil(total / float(info.num_workers)))
    ds.start = ds.start + worker_id * per
    ds.end = min(ds.start + per, ds.end)


class PlainRange(data.IterableDataset):
    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        return iter(range(self.start, self.end))


out = DataLoader(PlainRange(3, 7), num_workers=2, worker_init_fn=worker_init_fn)
print(sorted(int(v) for v in out))
mp = DataLoader(training_data, batch_size=4, num_workers=2)
print([y.tolist() for _, y in mp])
print("RESULT: ok")
