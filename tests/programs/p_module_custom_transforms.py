"""The "Writing Custom Datasets, DataLoaders and Transforms" tutorial (face landmarks): a Dataset
returning dict samples of NumPy arrays, callable transform classes (Rescale, RandomCrop,
ToTensor) chained by a Compose, and a DataLoader collating the dicts."""
import importlib
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
data = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".utils.data")
Dataset, DataLoader = data.Dataset, data.DataLoader

rs = np.random.RandomState(0)
N_IMAGES, N_LANDMARKS = 6, 4
IMAGES = [rs.randint(0, 256, size=(14 + i, 16 - i, 3)).astype(np.uint8) for i in range(N_IMAGES)]
LANDMARKS = [rs.uniform(0, 9, size=(N_LANDMARKS, 2)).astype("float") for _ in range(N_IMAGES)]
NAMES = ["person-%d.jpg" % i for i in range(N_IMAGES)]


class FaceLandmarksDataset(Dataset):
    """Face Landmarks dataset."""

    def __init__(self, transform=None):
        self.transform = transform

    def __len__(self):
        return len(NAMES)

    def __getitem__(self, idx):
        if torch.is_tensor(idx):
            idx = idx.tolist()
        image = IMAGES[idx]
        landmarks = np.array([LANDMARKS[idx]], dtype=float).reshape(-1, 2)
        sample = {"image": image, "landmarks": landmarks}
        if self.transform:
            sample = self.transform(sample)
        return sample


face_dataset = FaceLandmarksDataset()
for i, sample in enumerate(face_dataset):
    print(i, sample["image"].shape, sample["landmarks"].shape)
    if i == 3:
        break


class Rescale(object):
    """Rescale the image in a sample to a given size (nearest neighbour)."""

    def __init__(self, output_size):
        assert isinstance(output_size, (int, tuple))
        self.output_size = output_size

    def __call__(self, sample):
        image, landmarks = sample["image"], sample["landmarks"]
        h, w = image.shape[:2]
        if isinstance(self.output_size, int):
            if h > w:
                new_h, new_w = self.output_size * h / w, self.output_size
            else:
                new_h, new_w = self.output_size, self.output_size * w / h
        else:
            new_h, new_w = self.output_size
        new_h, new_w = int(new_h), int(new_w)
        rows = (np.arange(new_h) * h // new_h)
        cols = (np.arange(new_w) * w // new_w)
        img = image[rows][:, cols]
        landmarks = landmarks * [new_w / w, new_h / h]
        return {"image": img, "landmarks": landmarks}


class RandomCrop(object):
    """Crop randomly the image in a sample."""

    def __init__(self, output_size):
        assert isinstance(output_size, (int, tuple))
        if isinstance(output_size, int):
            self.output_size = (output_size, output_size)
        else:
            assert len(output_size) == 2
            self.output_size = output_size

    def __call__(self, sample):
        image, landmarks = sample["image"], sample["landmarks"]
        h, w = image.shape[:2]
        new_h, new_w = self.output_size
        top = np.random.randint(0, h - new_h + 1)
        left = np.random.randint(0, w - new_w + 1)
        image = image[top: top + new_h, left: left + new_w]
        landmarks = landmarks - [left, top]
        return {"image": image, "landmarks": landmarks}


class ToTensor(object):
    """Convert ndarrays in sample to Tensors."""

    def __call__(self, sample):
        image, landmarks = sample["image"], sample["landmarks"]
        image = image.transpose((2, 0, 1))
        return {"image": torch.from_numpy(image),
                "landmarks": torch.from_numpy(landmarks)}


class Compose(object):
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, sample):
        for t in self.transforms:
            sample = t(sample)
        return sample


np.random.seed(0)
scale = Rescale(12)
crop = RandomCrop(8)
composed = Compose([Rescale(12), RandomCrop(10)])
sample = face_dataset[5]
for tsfrm in [scale, crop, composed]:
    transformed_sample = tsfrm(sample)
    print(type(tsfrm).__name__, transformed_sample["image"].shape,
          transformed_sample["landmarks"].round(3).tolist())

transformed_dataset = FaceLandmarksDataset(transform=Compose([Rescale(10), RandomCrop(8),
                                                              ToTensor()]))
for i, sample in enumerate(transformed_dataset):
    print(i, sample["image"].size(), sample["landmarks"].size(), sample["landmarks"].dtype)
    if i == 2:
        break

np.random.seed(1)
torch.manual_seed(0)
dataloader = DataLoader(transformed_dataset, batch_size=4, shuffle=True, num_workers=0)
for i_batch, sample_batched in enumerate(dataloader):
    print(i_batch, sample_batched["image"].size(), sample_batched["landmarks"].size())
    print(sample_batched["image"].dtype, sample_batched["landmarks"].dtype)
    images_batch, landmarks_batch = sample_batched["image"], sample_batched["landmarks"]
    print(images_batch.float().mean(dim=(1, 2, 3)))
    print(landmarks_batch[:, 0])
    grid_border_size = 2
    print(images_batch.size(2) + grid_border_size)
print(len(dataloader), dataloader.batch_size, dataloader.drop_last)
print(type(dataloader.sampler).__name__, type(dataloader.batch_sampler).__name__)
print(type(dataloader.dataset).__name__, dataloader.num_workers)
print("RESULT: ok")
