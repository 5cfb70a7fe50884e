"""A Siamese network with ContrastiveLoss (the well-known harveyslash/Facial-Similarity-with-
Siamese-Networks-in-Pytorch notebook), shrunk: synthetic 1x20x20 'faces', pairs sampled like
SiameseNetworkDataset."""
# Training amplifies last-bit differences of float32 matrix products (torch's MKL on an
# Intel CPU rounds skinny GEMMs differently from NumPy's OpenBLAS):
# compare: rtol=1e-3 atol=5e-4
import importlib
import os
import random

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = torch.optim
Dataset = torch.utils.data.Dataset
DataLoader = torch.utils.data.DataLoader

random.seed(0)
torch.manual_seed(0)
n_people, per_person = 4, 3
protos = torch.rand(n_people, 1, 20, 20)
faces = [(protos[p] + 0.1 * torch.randn(1, 20, 20), p)
         for p in range(n_people) for _ in range(per_person)]


class SiameseNetworkDataset(Dataset):
    def __init__(self, imageFolderDataset, transform=None):
        self.imageFolderDataset = imageFolderDataset
        self.transform = transform

    def __getitem__(self, index):
        img0_tuple = random.choice(self.imageFolderDataset)
        should_get_same_class = random.randint(0, 1)
        if should_get_same_class:
            while True:
                img1_tuple = random.choice(self.imageFolderDataset)
                if img0_tuple[1] == img1_tuple[1]:
                    break
        else:
            while True:
                img1_tuple = random.choice(self.imageFolderDataset)
                if img0_tuple[1] != img1_tuple[1]:
                    break
        img0, img1 = img0_tuple[0], img1_tuple[0]
        if self.transform is not None:
            img0 = self.transform(img0)
            img1 = self.transform(img1)
        return img0, img1, torch.from_numpy(
            np.array([int(img1_tuple[1] != img0_tuple[1])], dtype=np.float32))

    def __len__(self):
        return len(self.imageFolderDataset)


class SiameseNetwork(nn.Module):
    def __init__(self):
        super(SiameseNetwork, self).__init__()
        self.cnn1 = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=5, stride=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2, stride=2),
            nn.Conv2d(8, 12, kernel_size=3, stride=1),
            nn.ReLU(inplace=True),
            nn.ReflectionPad2d(1),
            nn.BatchNorm2d(12),
            nn.Dropout2d(p=0.2),
        )
        self.fc1 = nn.Sequential(
            nn.Linear(12 * 4 * 4, 64),
            nn.ReLU(inplace=True),
            nn.Linear(64, 32),
            nn.ReLU(inplace=True),
            nn.Linear(32, 2),
        )

    def forward_once(self, x):
        output = self.cnn1(x)
        output = output.view(output.size()[0], -1)
        output = self.fc1(output)
        return output

    def forward(self, input1, input2):
        output1 = self.forward_once(input1)
        output2 = self.forward_once(input2)
        return output1, output2


class ContrastiveLoss(torch.nn.Module):
    def __init__(self, margin=2.0):
        super(ContrastiveLoss, self).__init__()
        self.margin = margin

    def forward(self, output1, output2, label):
        euclidean_distance = F.pairwise_distance(output1, output2, keepdim=True)
        loss_contrastive = torch.mean((1 - label) * torch.pow(euclidean_distance, 2) +
                                      (label) * torch.pow(torch.clamp(
                                          self.margin - euclidean_distance, min=0.0), 2))
        return loss_contrastive


siamese_dataset = SiameseNetworkDataset(imageFolderDataset=faces)
train_dataloader = DataLoader(siamese_dataset, shuffle=True, num_workers=0, batch_size=6)
vis_dataloader = DataLoader(siamese_dataset, shuffle=True, num_workers=0, batch_size=4)
example_batch = next(iter(vis_dataloader))
concatenated = torch.cat((example_batch[0], example_batch[1]), 0)
print(concatenated.shape)
print(example_batch[2].numpy().reshape(-1))

net = SiameseNetwork()
print(net)
criterion = ContrastiveLoss()
optimizer = optim.Adam(net.parameters(), lr=0.0005)
counter = []
loss_history = []
iteration_number = 0
for epoch in range(3):
    for i, (img0, img1, label) in enumerate(train_dataloader, 0):
        optimizer.zero_grad()
        output1, output2 = net(img0, img1)
        loss_contrastive = criterion(output1, output2, label)
        loss_contrastive.backward()
        optimizer.step()
        if i % 1 == 0:
            print(f"Epoch number {epoch}\n Current loss {loss_contrastive.item()}\n")
            iteration_number += 1
            counter.append(iteration_number)
            loss_history.append(loss_contrastive.item())

test_dataloader = DataLoader(siamese_dataset, num_workers=0, batch_size=1, shuffle=True)
net.eval()
dataiter = iter(test_dataloader)
x0, _, _ = next(dataiter)
for i in range(4):
    _, x1, label2 = next(dataiter)
    concatenated = torch.cat((x0, x1), 0)
    output1, output2 = net(x0, x1)
    euclidean_distance = F.pairwise_distance(output1, output2)
    print(f"Dissimilarity: {euclidean_distance.item():.2f}", label2)
print(F.pairwise_distance(output1, output2, p=1.0, eps=1e-6), F.cosine_similarity(output1, output2))
emb = nn.CosineEmbeddingLoss(margin=0.1)(output1, output2, torch.tensor([-1.0]))
print(emb, nn.TripletMarginLoss(margin=1.0, p=2)(output1, output2, output1 * 0.5))
triplet = nn.TripletMarginWithDistanceLoss(margin=0.5, swap=True)
print(triplet)
print(triplet(output1, output2, -output1), nn.TripletMarginWithDistanceLoss(
    distance_function=lambda a, b: 1.0 - F.cosine_similarity(a, b))(output1, output2, -output2))
print(f"RESULT: {loss_history[-1]:.5f}")
