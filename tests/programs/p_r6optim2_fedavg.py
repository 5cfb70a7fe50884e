"""Federated averaging, shrunk from shaoxiongji/federated-learning (utils/sampling.py mnist_iid /
mnist_noniid shards, models/Update.py DatasetSplit + LocalUpdate, models/Fed.py FedAvg over
deep-copied state_dicts, models/test.py test_img, main_fed.py's rounds with a client fraction),
plus the per-client splits other FL code uses (torch.utils.data.random_split with a seeded
generator, Subset, a Dirichlet label split) and FedAvg over a model with BatchNorm buffers
(num_batches_tracked divided into a float). Synthetic 12x12 "digits" instead of MNIST."""
import copy
import importlib
import os

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
data_mod = importlib.import_module(LIB + ".utils.data")
DataLoader, Dataset, TensorDataset = data_mod.DataLoader, data_mod.Dataset, data_mod.TensorDataset


def mnist_iid(dataset, num_users):
    num_items = int(len(dataset) / num_users)
    dict_users, all_idxs = {}, [i for i in range(len(dataset))]
    for i in range(num_users):
        dict_users[i] = set(np.random.choice(all_idxs, num_items, replace=False))
        all_idxs = list(set(all_idxs) - dict_users[i])
    return dict_users


def mnist_noniid(dataset, num_users, num_shards=12, num_imgs=20):
    idx_shard = [i for i in range(num_shards)]
    dict_users = {i: np.array([], dtype="int64") for i in range(num_users)}
    idxs = np.arange(num_shards * num_imgs)
    labels = dataset.tensors[1].numpy()
    # sort labels
    idxs_labels = np.vstack((idxs, labels))
    idxs_labels = idxs_labels[:, idxs_labels[1, :].argsort(kind="stable")]
    idxs = idxs_labels[0, :]
    # divide and assign
    for i in range(num_users):
        rand_set = set(np.random.choice(idx_shard, 2, replace=False))
        idx_shard = list(set(idx_shard) - rand_set)
        for rand in sorted(rand_set):
            dict_users[i] = np.concatenate((dict_users[i], idxs[rand * num_imgs:(rand + 1) * num_imgs]), axis=0)
    return dict_users


class DatasetSplit(Dataset):
    def __init__(self, dataset, idxs):
        self.dataset = dataset
        self.idxs = list(idxs)

    def __len__(self):
        return len(self.idxs)

    def __getitem__(self, item):
        image, label = self.dataset[self.idxs[item]]
        return image, label


class Args:
    local_bs, local_ep, lr, momentum, bs = 10, 2, 0.1, 0.5, 64
    num_users, frac, epochs, device = 6, 0.5, 3, torch.device("cpu")


class LocalUpdate(object):
    def __init__(self, args, dataset=None, idxs=None):
        self.args = args
        self.loss_func = nn.CrossEntropyLoss()
        self.ldr_train = DataLoader(DatasetSplit(dataset, idxs), batch_size=self.args.local_bs, shuffle=True)

    def train(self, net):
        net.train()
        optimizer = torch.optim.SGD(net.parameters(), lr=self.args.lr, momentum=self.args.momentum)
        epoch_loss = []
        for iter in range(self.args.local_ep):
            batch_loss = []
            for batch_idx, (images, labels) in enumerate(self.ldr_train):
                images, labels = images.to(self.args.device), labels.to(self.args.device)
                net.zero_grad()
                log_probs = net(images)
                loss = self.loss_func(log_probs, labels)
                loss.backward()
                optimizer.step()
                batch_loss.append(loss.item())
            epoch_loss.append(sum(batch_loss) / len(batch_loss))
        return net.state_dict(), sum(epoch_loss) / len(epoch_loss)


def FedAvg(w):
    w_avg = copy.deepcopy(w[0])
    for k in w_avg.keys():
        for i in range(1, len(w)):
            w_avg[k] += w[i][k]
        w_avg[k] = torch.div(w_avg[k], len(w))
    return w_avg


def test_img(net_g, datatest, args):
    net_g.eval()
    test_loss = 0
    correct = 0
    data_loader = DataLoader(datatest, batch_size=args.bs)
    for idx, (data, target) in enumerate(data_loader):
        log_probs = net_g(data)
        test_loss += F.cross_entropy(log_probs, target, reduction="sum").item()
        y_pred = log_probs.data.max(1, keepdim=True)[1]
        correct += y_pred.eq(target.data.view_as(y_pred)).long().cpu().sum()
    test_loss /= len(data_loader.dataset)
    accuracy = 100.00 * correct / len(data_loader.dataset)
    return accuracy, test_loss


class CNNMnist(nn.Module):
    def __init__(self, num_channels=1, num_classes=4):
        super(CNNMnist, self).__init__()
        self.conv1 = nn.Conv2d(num_channels, 4, kernel_size=3)
        self.conv2 = nn.Conv2d(4, 8, kernel_size=3)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, num_classes)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, x.shape[1] * x.shape[2] * x.shape[3])
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return x


class MLPBN(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer_input = nn.Linear(144, 16)
        self.bn = nn.BatchNorm1d(16)
        self.layer_hidden = nn.Linear(16, 4)

    def forward(self, x):
        x = x.view(-1, x.shape[1] * x.shape[-2] * x.shape[-1])
        return self.layer_hidden(F.relu(self.bn(self.layer_input(x))))


torch.manual_seed(1)
np.random.seed(1)
protos = torch.randn(4, 1, 12, 12)
labels = torch.arange(240) % 4
images = protos[labels] + 0.8 * torch.randn(240, 1, 12, 12)
dataset_train = TensorDataset(images, labels)
test_labels = torch.arange(80) % 4
dataset_test = TensorDataset(protos[test_labels] + 0.8 * torch.randn(80, 1, 12, 12), test_labels)
args = Args()

for split_name, dict_users in (("iid", mnist_iid(dataset_train, args.num_users)),
                               ("noniid", mnist_noniid(dataset_train, args.num_users))):
    print(split_name, [len(dict_users[i]) for i in range(args.num_users)],
          [sorted(set(labels[list(dict_users[i])].tolist())) for i in range(3)])
    torch.manual_seed(2)
    net_glob = CNNMnist()
    net_glob.train()
    w_glob = net_glob.state_dict()
    for iter in range(args.epochs):
        loss_locals = []
        w_locals = []
        m = max(int(args.frac * args.num_users), 1)
        idxs_users = np.random.choice(range(args.num_users), m, replace=False)
        for idx in idxs_users:
            local = LocalUpdate(args=args, dataset=dataset_train, idxs=sorted(dict_users[idx]))
            w, loss = local.train(net=copy.deepcopy(net_glob).to(args.device))
            w_locals.append(copy.deepcopy(w))
            loss_locals.append(copy.deepcopy(loss))
        w_glob = FedAvg(w_locals)
        net_glob.load_state_dict(w_glob)
        loss_avg = sum(loss_locals) / len(loss_locals)
        print("Round {:3d}, clients {}, Average loss {:.3f}".format(iter, idxs_users.tolist(), loss_avg))
    acc_train, loss_train = test_img(net_glob, dataset_train, args)
    acc_test, loss_test = test_img(net_glob, dataset_test, args)
    print("Training accuracy: {:.2f}".format(acc_train), "Testing accuracy: {:.2f}".format(acc_test),
          "loss {:.4f}".format(loss_test), acc_test.dtype)

# random_split / Subset per client, FedAvg with BatchNorm buffers
gen = torch.Generator().manual_seed(42)
client_sets = data_mod.random_split(dataset_train, [0.4, 0.35, 0.25], generator=gen)
print([len(s) for s in client_sets], type(client_sets[0]).__name__, client_sets[2].indices[:5])
alpha = 0.5
proportions = np.random.dirichlet(np.repeat(alpha, 3), size=4)
by_class = [torch.nonzero(labels == c).flatten().tolist() for c in range(4)]
dir_idx = [[] for _ in range(3)]
for c in range(4):
    cuts = (np.cumsum(proportions[c]) * len(by_class[c])).astype(int)[:-1]
    for k, part in enumerate(np.split(np.array(by_class[c]), cuts)):
        dir_idx[k] += part.tolist()
print("dirichlet sizes", [len(ix) for ix in dir_idx])
torch.manual_seed(3)
glob = MLPBN()
for rnd in range(2):
    states, sizes = [], []
    for k, sub in enumerate(list(client_sets) + [data_mod.Subset(dataset_train, dir_idx[0])]):
        net = copy.deepcopy(glob)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for xb, yb in DataLoader(sub, batch_size=16, shuffle=True, drop_last=True):
            opt.zero_grad()
            F.cross_entropy(net(xb), yb).backward()
            opt.step()
        states.append(net.state_dict())
        sizes.append(len(sub))
    w_avg = FedAvg(states)
    print("round", rnd, "nbt", w_avg["bn.num_batches_tracked"], w_avg["bn.num_batches_tracked"].dtype,
          "rm %.5f" % w_avg["bn.running_mean"].sum().item())
    # sample-size weighted average (the FedAvg paper's n_k / n), float buffers only
    total = sum(sizes)
    weighted = {k: sum(s[k] * (n / total) for s, n in zip(states, sizes)) if s0.is_floating_point() else s0
                for k, s0 in states[0].items()}
    glob.load_state_dict(w_avg)
    print("  loaded nbt", glob.bn.num_batches_tracked, glob.bn.num_batches_tracked.dtype,
          "weighted vs plain %.5f" % (weighted["layer_input.weight"] - w_avg["layer_input.weight"]).abs().max().item())
glob.eval()
with torch.no_grad():
    out = glob(dataset_test.tensors[0])
    print("bn model test acc %.4f" % (out.argmax(1) == test_labels).float().mean().item())
try:
    data_mod.random_split(dataset_train, [100, 100])
except Exception as e:
    print(type(e).__name__, e)
try:
    data_mod.random_split(dataset_train, [0.5, 0.6])
except Exception as e:
    print(type(e).__name__, e)
try:
    glob.load_state_dict({k: v for k, v in w_avg.items() if "bn" not in k})
except Exception as e:
    print(type(e).__name__, e)
