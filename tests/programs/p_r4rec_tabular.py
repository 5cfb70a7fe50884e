"""Tabular deep learning without pandas (the "Deep learning for tabular data with categorical
embeddings" posts / fastai TabularModel in plain torch): NumPy columns -> torch.from_numpy /
torch.as_tensor, label-encoding with torch.unique(return_inverse=True), embedding sizes by
the fastai rule, BatchNorm1d on continuous features, TensorDataset/random_split/DataLoader,
ReduceLROnPlateau and early stopping on validation loss with a saved best state_dict."""
import copy
import importlib
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
data = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".utils.data")

rng = np.random.RandomState(0)
N = 160
cities = np.array(["paris", "lyon", "nice", "lille"])[rng.randint(0, 4, N)]
jobs = rng.randint(100, 107, N)                      # sparse integer codes
age = rng.uniform(18, 70, N).astype(np.float32)
income = rng.lognormal(10, 0.5, N)                   # float64 column
y_np = ((age > 40) ^ (jobs % 2 == 0)).astype(np.int64)

# label-encode categoricals with torch.unique(return_inverse=True)
city_codes = np.unique(cities, return_inverse=True)[1]
job_t = torch.from_numpy(jobs)
print(job_t.dtype, job_t.shape, job_t[:5])
job_vocab, job_codes = torch.unique(job_t, return_inverse=True)
print("vocab:", job_vocab, job_codes.dtype)
vals, counts = torch.unique(job_t, sorted=True, return_counts=True)
print("counts:", counts.tolist())
cat = torch.stack([torch.as_tensor(city_codes), job_codes], dim=1)
print(cat.dtype, cat.shape, cat[:3])

cont_np = np.stack([age, np.log(income)], axis=1)
cont = torch.from_numpy(cont_np).float()
print(torch.from_numpy(cont_np).dtype, cont.dtype, cont.is_contiguous())
y = torch.as_tensor(y_np)
print("label balance:", y.float().mean().item())

cat_szs = [int(cat[:, i].max()) + 1 for i in range(cat.shape[1])]
emb_szs = [(c, min(50, (c + 1) // 2)) for c in cat_szs]
print("emb_szs:", emb_szs)


class TabularModel(nn.Module):
    def __init__(self, emb_szs, n_cont, out_sz, layers, p=0.5):
        super().__init__()
        self.embeds = nn.ModuleList([nn.Embedding(ni, nf) for ni, nf in emb_szs])
        self.emb_drop = nn.Dropout(p)
        self.bn_cont = nn.BatchNorm1d(n_cont)
        layerlist = []
        n_emb = sum((nf for ni, nf in emb_szs))
        n_in = n_emb + n_cont
        for i in layers:
            layerlist.append(nn.Linear(n_in, i))
            layerlist.append(nn.ReLU(inplace=True))
            layerlist.append(nn.BatchNorm1d(i))
            layerlist.append(nn.Dropout(p))
            n_in = i
        layerlist.append(nn.Linear(layers[-1], out_sz))
        self.layers = nn.Sequential(*layerlist)

    def forward(self, x_cat, x_cont):
        embeddings = []
        for i, e in enumerate(self.embeds):
            embeddings.append(e(x_cat[:, i]))
        x = torch.cat(embeddings, 1)
        x = self.emb_drop(x)
        x_cont = self.bn_cont(x_cont)
        x = torch.cat([x, x_cont], 1)
        x = self.layers(x)
        return x


torch.manual_seed(33)
model = TabularModel(emb_szs, cont.shape[1], 2, [16, 8], p=0.1)
print(model)
print(sum(p.numel() for p in model.parameters()), "parameters")
print([k for k in model.state_dict() if "bn" in k or "layers.2" in k])

ds = data.TensorDataset(cat, cont, y)
train_ds, val_ds = data.random_split(ds, [120, 40], generator=torch.Generator().manual_seed(1))
print(len(train_ds), len(val_ds), type(train_ds).__name__)
train_dl = data.DataLoader(train_ds, batch_size=30, shuffle=True, drop_last=True,
                           generator=torch.Generator().manual_seed(2))
val_dl = data.DataLoader(val_ds, batch_size=40)
xb = next(iter(val_dl))
print([t.shape for t in xb], [t.dtype for t in xb])

criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5,
                                                       patience=1, min_lr=1e-4)
best_loss, best_state, patience, bad_epochs = float("inf"), None, 3, 0
for epoch in range(8):
    model.train()
    for xc, xn, yb in train_dl:
        y_pred = model(xc, xn)
        loss = criterion(y_pred, yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        vl, correct = 0.0, 0
        for xc, xn, yb in val_dl:
            out = model(xc, xn)
            vl += criterion(out, yb).item() * len(yb)
            correct += (out.argmax(1) == yb).sum().item()
        vl /= len(val_ds)
    scheduler.step(vl)
    print(f"epoch {epoch:2d} train {loss.item():.4f} val {vl:.4f} acc {correct / len(val_ds):.3f}"
          f" lr {optimizer.param_groups[0]['lr']:.5f}")
    if vl < best_loss - 1e-4:
        best_loss, best_state, bad_epochs = vl, copy.deepcopy(model.state_dict()), 0
    else:
        bad_epochs += 1
        if bad_epochs >= patience:
            print("early stopping at epoch", epoch)
            break
print("best val:", f"{best_loss:.4f}", scheduler.state_dict()["num_bad_epochs"],
      scheduler.get_last_lr())
model.load_state_dict(best_state)
print(model.bn_cont.running_mean, model.bn_cont.num_batches_tracked)
with torch.no_grad():
    probs = F.softmax(model(cat[:5], cont[:5]), dim=1)
print(probs)
print(probs.numpy().dtype, probs.argmax(dim=1).numpy())
# predict a single new row built from python lists
new_cat = torch.tensor([[1, int((job_vocab == 103).nonzero().item())]], dtype=torch.int64)
new_cont = torch.tensor([[45.0, 10.2]])
with torch.no_grad():
    print(model(new_cat, new_cont).argmax().item())
try:
    model(new_cat.float(), new_cont)
except Exception as e:
    print(type(e).__name__, e)
print("RESULT:", f"{best_loss:.4f}")
