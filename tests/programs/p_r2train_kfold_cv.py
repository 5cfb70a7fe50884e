"""K-fold cross-validation with PyTorch (the well-known MachineCurve/Kaggle recipe): the train
and test sets joined with ConcatDataset, folds of indices, SubsetRandomSampler per fold, a small
ConvNet re-initialised per fold with model.apply(reset_weights), per-fold accuracy, a results
dict and the average; plus the Subset/random_split variant and stratified folds by hand."""
import importlib
import os

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
data = importlib.import_module(LIB + ".utils.data")
ConcatDataset = data.ConcatDataset
SubsetRandomSampler = data.SubsetRandomSampler


def reset_weights(m):
    """Try resetting model weights to avoid weight leakage."""
    for layer in m.children():
        if hasattr(layer, "reset_parameters"):
            print(f"Reset trainable parameters of layer = {layer}")
            layer.reset_parameters()


class SimpleConvNet(nn.Module):
    """Simple Convolutional Neural Network."""

    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Conv2d(1, 4, kernel_size=3),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(6 * 6 * 4, 16),
            nn.ReLU(),
            nn.Linear(16, 3),
        )

    def forward(self, x):
        """Forward pass."""
        return self.layers(x)


def kfold_split(n, k_folds, shuffle=True, random_state=42):
    """Like sklearn.model_selection.KFold(n_splits=k_folds, shuffle=True).split."""
    indices = np.arange(n)
    if shuffle:
        np.random.RandomState(random_state).shuffle(indices)
    fold_sizes = np.full(k_folds, n // k_folds, dtype=int)
    fold_sizes[: n % k_folds] += 1
    current = 0
    for fold_size in fold_sizes:
        test_ids = indices[current:current + fold_size]
        train_ids = np.concatenate([indices[:current], indices[current + fold_size:]])
        yield train_ids, test_ids
        current += fold_size


if __name__ == "__main__":
    k_folds = 3
    num_epochs = 2
    loss_function = nn.CrossEntropyLoss()
    results = {}
    torch.manual_seed(42)

    images = torch.randn(60, 1, 8, 8)
    labels = (images.mean(dim=(1, 2, 3)) * 6).round().clamp(-1, 1).long() + 1
    dataset_train_part = data.TensorDataset(images[:45], labels[:45])
    dataset_test_part = data.TensorDataset(images[45:], labels[45:])
    dataset = ConcatDataset([dataset_train_part, dataset_test_part])
    print(len(dataset), dataset.cumulative_sizes, torch.bincount(labels).tolist())

    print("--------------------------------")
    for fold, (train_ids, test_ids) in enumerate(kfold_split(len(dataset), k_folds)):
        print(f"FOLD {fold}")
        print("--------------------------------")
        train_subsampler = SubsetRandomSampler(train_ids)
        test_subsampler = SubsetRandomSampler(test_ids)
        trainloader = data.DataLoader(dataset, batch_size=10, sampler=train_subsampler)
        testloader = data.DataLoader(dataset, batch_size=10, sampler=test_subsampler)
        print(len(train_subsampler), len(test_subsampler), len(trainloader), len(testloader))

        network = SimpleConvNet()
        network.apply(reset_weights)
        optimizer = torch.optim.Adam(network.parameters(), lr=1e-3)
        for epoch in range(0, num_epochs):
            print(f"Starting epoch {epoch+1}")
            current_loss = 0.0
            for i, batch in enumerate(trainloader, 0):
                inputs, targets = batch
                optimizer.zero_grad()
                outputs = network(inputs)
                loss = loss_function(outputs, targets)
                loss.backward()
                optimizer.step()
                current_loss += loss.item()
                if i % 2 == 1:
                    print("Loss after mini-batch %5d: %.3f" % (i + 1, current_loss / 2))
                    current_loss = 0.0
        print("Training process has finished. Saving trained model.")
        print("Starting testing")
        save_path = f"./model-fold-{fold}.pth"
        state = network.state_dict()
        print(save_path, list(state.keys()))
        correct, total = 0, 0
        with torch.no_grad():
            for i, batch in enumerate(testloader, 0):
                inputs, targets = batch
                outputs = network(inputs)
                _, predicted = torch.max(outputs.data, 1)
                total += targets.size(0)
                correct += (predicted == targets).sum().item()
        print("Accuracy for fold %d: %d %%" % (fold, 100.0 * correct / total))
        print("--------------------------------")
        results[fold] = 100.0 * (correct / total)

    print(f"K-FOLD CROSS VALIDATION RESULTS FOR {k_folds} FOLDS")
    print("--------------------------------")
    total = 0.0
    for key, value in results.items():
        print(f"Fold {key}: {value} %")
        total += value
    print(f"Average: {total/len(results.items())} %")

    # the Subset variant: each fold as Subset objects, the validation part via random_split
    gen = torch.Generator().manual_seed(0)
    perm = torch.randperm(len(dataset), generator=gen)
    folds = torch.chunk(perm, k_folds)
    print([f.tolist()[:4] for f in folds], [len(f) for f in folds])
    val_losses = []
    for k in range(k_folds):
        train_idx = torch.cat([folds[j] for j in range(k_folds) if j != k])
        train_set = data.Subset(dataset, train_idx.tolist())
        val_set = data.Subset(dataset, folds[k].tolist())
        fit_set, early_set = data.random_split(train_set, [30, 10], generator=gen)
        print(k, len(train_set), len(val_set), len(fit_set), len(early_set),
              type(fit_set.dataset).__name__, fit_set.indices[:3])
        torch.manual_seed(k)
        net = SimpleConvNet()
        opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
        for xb, yb in data.DataLoader(fit_set, batch_size=10, shuffle=True, generator=gen):
            opt.zero_grad()
            loss_function(net(xb), yb).backward()
            opt.step()
        x_val, y_val = next(iter(data.DataLoader(val_set, batch_size=len(val_set))))
        with torch.no_grad():
            val_losses.append(loss_function(net(x_val), y_val).item())
    vl = torch.tensor(val_losses)
    print([f"{v:.4f}" for v in val_losses], f"{vl.mean():.4f} +- {vl.std():.4f}")

    # stratified folds: each class split evenly across folds
    y_all = torch.stack([dataset[i][1] for i in range(len(dataset))])
    strat = [[] for _ in range(k_folds)]
    for c in torch.unique(y_all):
        idx = torch.nonzero(y_all == c, as_tuple=True)[0]
        for j, part in enumerate(torch.tensor_split(idx, k_folds)):
            strat[j].extend(part.tolist())
    print([torch.bincount(y_all[torch.tensor(s)], minlength=3).tolist() for s in strat])
    print("RESULT:", results, f"{vl.mean():.4f}")
