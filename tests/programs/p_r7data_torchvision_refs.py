"""torchvision's reference training scripts' data code, shrunk: references/detection/
group_by_aspect_ratio.py (GroupedBatchSampler that tops up unfinished groups with
_repeat_to_at_least, _quantize with bisect, create_aspect_ratio_groups with 2**linspace bins),
references/detection/utils.py's collate_fn (tuple(zip(*batch))), references/classification/
sampler.py's RASampler (repeated augmentation; the 256 in num_selected_samples shrunk to 8),
and torchvision/datasets/folder.py's find_classes / make_dataset / DatasetFolder over a temp
directory of .npy "images" (with a numpy loader, transform and target_transform), loaded
through DataLoader(sampler=RASampler(...), pin_memory=False)."""
import bisect
import copy
import importlib
import math
import os
import tempfile
from collections import defaultdict
from itertools import chain, repeat

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
data = importlib.import_module(LIB + ".utils.data")
BatchSampler, Sampler = data.BatchSampler, data.Sampler


def _repeat_to_at_least(iterable, n):
    repeat_times = math.ceil(n / len(iterable))
    repeated = chain.from_iterable(repeat(iterable, repeat_times))
    return list(repeated)


class GroupedBatchSampler(BatchSampler):
    def __init__(self, sampler, group_ids, batch_size):
        if not isinstance(sampler, Sampler):
            raise ValueError(f"sampler should be an instance of torch.utils.data.Sampler, "
                             f"but got sampler={type(sampler).__name__}")
        self.sampler = sampler
        self.group_ids = group_ids
        self.batch_size = batch_size

    def __iter__(self):
        buffer_per_group = defaultdict(list)
        samples_per_group = defaultdict(list)
        num_batches = 0
        for idx in self.sampler:
            group_id = self.group_ids[idx]
            buffer_per_group[group_id].append(idx)
            samples_per_group[group_id].append(idx)
            if len(buffer_per_group[group_id]) == self.batch_size:
                yield buffer_per_group[group_id]
                num_batches += 1
                del buffer_per_group[group_id]
            assert len(buffer_per_group[group_id]) < self.batch_size
        expected_num_batches = len(self)
        num_remaining = expected_num_batches - num_batches
        if num_remaining > 0:
            for group_id, _ in sorted(buffer_per_group.items(), key=lambda x: len(x[1]),
                                      reverse=True):
                remaining = self.batch_size - len(buffer_per_group[group_id])
                samples_from_group_id = _repeat_to_at_least(samples_per_group[group_id],
                                                            remaining)
                buffer_per_group[group_id].extend(samples_from_group_id[:remaining])
                assert len(buffer_per_group[group_id]) == self.batch_size
                yield buffer_per_group[group_id]
                num_remaining -= 1
                if num_remaining == 0:
                    break
        assert num_remaining == 0

    def __len__(self):
        return len(self.sampler) // self.batch_size


def _quantize(x, bins):
    bins = copy.deepcopy(bins)
    bins = sorted(bins)
    return list(map(lambda y: bisect.bisect_right(bins, y), x))


def create_aspect_ratio_groups(aspect_ratios, k=0):
    bins = (2 ** np.linspace(-1, 1, 2 * k + 1)).tolist() if k > 0 else [1.0]
    groups = _quantize(aspect_ratios, bins)
    counts = np.unique(groups, return_counts=True)[1]
    fbins = [0] + bins + [np.inf]
    print(f"Using {[round(b, 4) for b in fbins]} as bins for aspect ratio quantization")
    print(f"Count of instances per bin: {counts.tolist()}")
    return groups


def collate_fn(batch):
    return tuple(zip(*batch))


class RASampler(Sampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 repetitions=3):
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch = 0
        self.num_samples = int(math.ceil(len(self.dataset) * float(repetitions)
                                         / self.num_replicas))
        self.total_size = self.num_samples * self.num_replicas
        self.num_selected_samples = int(math.floor(len(self.dataset) // 8 * 8
                                                   / self.num_replicas))
        self.shuffle, self.seed, self.repetitions = shuffle, seed, repetitions

    def __iter__(self):
        if self.shuffle:
            g = torch.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = torch.randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        indices = [ele for ele in indices for i in range(self.repetitions)]
        indices += indices[: (self.total_size - len(indices))]
        assert len(indices) == self.total_size
        indices = indices[self.rank: self.total_size: self.num_replicas]
        assert len(indices) == self.num_samples
        return iter(indices[: self.num_selected_samples])

    def __len__(self):
        return self.num_selected_samples

    def set_epoch(self, epoch):
        self.epoch = epoch


IMG_EXTENSIONS = (".npy",)


def find_classes(directory):
    classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
    if not classes:
        raise FileNotFoundError(f"Couldn't find any class folder in {directory}.")
    class_to_idx = {cls_name: i for i, cls_name in enumerate(classes)}
    return classes, class_to_idx


def make_dataset(directory, class_to_idx, extensions=None, allow_empty=False):
    directory = os.path.expanduser(directory)
    instances, available_classes = [], set()
    for target_class in sorted(class_to_idx.keys()):
        class_index = class_to_idx[target_class]
        target_dir = os.path.join(directory, target_class)
        if not os.path.isdir(target_dir):
            continue
        for root, _, fnames in sorted(os.walk(target_dir, followlinks=True)):
            for fname in sorted(fnames):
                path = os.path.join(root, fname)
                if path.lower().endswith(extensions):
                    instances.append((path, class_index))
                    if target_class not in available_classes:
                        available_classes.add(target_class)
    empty_classes = set(class_to_idx.keys()) - available_classes
    if empty_classes and not allow_empty:
        msg = f"Found no valid file for the classes {', '.join(sorted(empty_classes))}. "
        msg += f"Supported extensions are: {', '.join(extensions)}"
        raise FileNotFoundError(msg)
    return instances


class DatasetFolder(data.Dataset):
    def __init__(self, root, loader, extensions=None, transform=None, target_transform=None,
                 allow_empty=False):
        self.root, self.transform, self.target_transform = root, transform, target_transform
        classes, class_to_idx = find_classes(self.root)
        samples = make_dataset(self.root, class_to_idx, extensions, allow_empty)
        self.loader, self.extensions = loader, extensions
        self.classes, self.class_to_idx = classes, class_to_idx
        self.samples = samples
        self.targets = [s[1] for s in samples]

    def __getitem__(self, index):
        path, target = self.samples[index]
        sample = self.loader(path)
        if self.transform is not None:
            sample = self.transform(sample)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return sample, target

    def __len__(self):
        return len(self.samples)


def to_tensor_normalized(arr):
    t = torch.from_numpy(arr).permute(2, 0, 1).float().div(255)
    mean = torch.tensor([0.5, 0.4, 0.3]).view(-1, 1, 1)
    return (t - mean) / 0.25


def main():
    rng = np.random.RandomState(0)
    ratios = (rng.uniform(0.3, 3.0, size=24)).tolist()
    for k in (0, 1, 3):
        groups = create_aspect_ratio_groups(ratios, k=k)
        print("k", k, groups)
    print("quantize", _quantize([0.5, 1.0, 1.5, 7.0], [2.0, 1.0, 0.5]))
    print("repeat", _repeat_to_at_least([4, 5], 5), _repeat_to_at_least([1, 2, 3], 2))

    groups = create_aspect_ratio_groups(ratios, k=1)
    sampler = data.RandomSampler(range(24), generator=torch.Generator().manual_seed(3))
    gbs = GroupedBatchSampler(sampler, groups, batch_size=5)
    batches = list(gbs)
    print("len", len(gbs), "batches", batches)
    print("groups per batch", [sorted({groups[i] for i in b}) for b in batches])
    try:
        GroupedBatchSampler(range(24), groups, 5)
    except ValueError as e:
        print("ValueError", e)

    boxes = [{"boxes": torch.tensor([[0.0, 0.0, r, 1.0]]), "labels": torch.tensor([i % 3])}
             for i, r in enumerate(ratios)]
    images = [torch.full((3, 2, 2), float(i)) for i in range(24)]
    det = data.StackDataset(images, boxes)
    loader = data.DataLoader(det, batch_sampler=gbs, collate_fn=collate_fn)
    for imgs, targets in itertools_first(loader, 2):
        print("det batch", type(imgs).__name__, len(imgs), [float(im[0, 0, 0]) for im in imgs],
              [t["labels"].item() for t in targets], round(float(targets[0]["boxes"][0, 2]), 4))

    with tempfile.TemporaryDirectory() as root:
        for c, n in (("cat", 5), ("dog", 4), ("eel", 3)):
            os.makedirs(os.path.join(root, c))
            for i in range(n):
                img = rng.randint(0, 256, size=(4, 4, 3)).astype(np.uint8)
                np.save(os.path.join(root, c, f"{i:03d}.npy"), img)
        open(os.path.join(root, "cat", "notes.txt"), "w").close()
        os.makedirs(os.path.join(root, "empty"))
        try:
            DatasetFolder(root, np.load, IMG_EXTENSIONS)
        except FileNotFoundError as e:
            print("FileNotFoundError", str(e).replace(root, "ROOT"))
        ds = DatasetFolder(root, np.load, IMG_EXTENSIONS, transform=to_tensor_normalized,
                           target_transform=lambda t: t * 10, allow_empty=True)
        print("classes", ds.classes, ds.class_to_idx, len(ds), ds.targets)
        print("sample paths", [os.path.relpath(p, root) for p, _ in ds.samples[:3]])
        x, y = ds[6]
        print("item", tuple(x.shape), x.dtype, y, [round(v, 4) for v in x[:, 0, 0].tolist()])

        for rank in range(2):
            ra = RASampler(ds, num_replicas=2, rank=rank, seed=1, repetitions=3)
            for epoch in range(2):
                ra.set_epoch(epoch)
                print("RA rank", rank, "epoch", epoch, len(ra), list(ra))
        print("RA no shuffle", list(RASampler(ds, 1, 0, shuffle=False, repetitions=2)))

        ra = RASampler(ds, num_replicas=2, rank=0, seed=1)
        loader = data.DataLoader(ds, batch_size=4, sampler=ra, pin_memory=False, drop_last=True)
        print("loader len", len(loader))
        for x, y in loader:
            print("batch", tuple(x.shape), y.tolist(), round(float(x.mean()), 4),
                  round(float(x.std()), 4))


def itertools_first(it, n):
    out = []
    for i, v in enumerate(it):
        if i == n:
            break
        out.append(v)
    return out


main()
