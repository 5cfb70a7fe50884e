"""Neural Collaborative Filtering (He et al. 2017; the guoyang9/NCF PyTorch code): GMF and
MLP towers fused in NeuMF, BCEWithLogitsLoss on sampled negatives, leave-one-out evaluation
with hit-rate@k / NDCG@k via topk, and loading pretrained GMF/MLP weights into NeuMF."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
data = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".utils.data")

torch.manual_seed(0)
USER_NUM, ITEM_NUM, FACTOR, NUM_LAYERS, TOP_K = 16, 30, 8, 3, 5


class NCF(nn.Module):
    def __init__(self, user_num, item_num, factor_num, num_layers, dropout, model,
                 GMF_model=None, MLP_model=None):
        super(NCF, self).__init__()
        self.dropout = dropout
        self.model = model
        self.GMF_model = GMF_model
        self.MLP_model = MLP_model
        self.embed_user_GMF = nn.Embedding(user_num, factor_num)
        self.embed_item_GMF = nn.Embedding(item_num, factor_num)
        self.embed_user_MLP = nn.Embedding(user_num, factor_num * (2 ** (num_layers - 1)))
        self.embed_item_MLP = nn.Embedding(item_num, factor_num * (2 ** (num_layers - 1)))
        MLP_modules = []
        for i in range(num_layers):
            input_size = factor_num * (2 ** (num_layers - i))
            MLP_modules.append(nn.Dropout(p=self.dropout))
            MLP_modules.append(nn.Linear(input_size, input_size // 2))
            MLP_modules.append(nn.ReLU())
        self.MLP_layers = nn.Sequential(*MLP_modules)
        if self.model in ["MLP", "GMF"]:
            predict_size = factor_num
        else:
            predict_size = factor_num * 2
        self.predict_layer = nn.Linear(predict_size, 1)
        self._init_weight_()

    def _init_weight_(self):
        if not self.model == "NeuMF-pre":
            nn.init.normal_(self.embed_user_GMF.weight, std=0.01)
            nn.init.normal_(self.embed_user_MLP.weight, std=0.01)
            nn.init.normal_(self.embed_item_GMF.weight, std=0.01)
            nn.init.normal_(self.embed_item_MLP.weight, std=0.01)
            for m in self.MLP_layers:
                if isinstance(m, nn.Linear):
                    nn.init.xavier_uniform_(m.weight)
            nn.init.kaiming_uniform_(self.predict_layer.weight, a=1, nonlinearity="sigmoid")
            for m in self.modules():
                if isinstance(m, nn.Linear) and m.bias is not None:
                    m.bias.data.zero_()
        else:
            self.embed_user_GMF.weight.data.copy_(self.GMF_model.embed_user_GMF.weight)
            self.embed_item_GMF.weight.data.copy_(self.GMF_model.embed_item_GMF.weight)
            self.embed_user_MLP.weight.data.copy_(self.MLP_model.embed_user_MLP.weight)
            self.embed_item_MLP.weight.data.copy_(self.MLP_model.embed_item_MLP.weight)
            for (m1, m2) in zip(self.MLP_layers, self.MLP_model.MLP_layers):
                if isinstance(m1, nn.Linear) and isinstance(m2, nn.Linear):
                    m1.weight.data.copy_(m2.weight)
                    m1.bias.data.copy_(m2.bias)
            predict_weight = torch.cat([self.GMF_model.predict_layer.weight,
                                        self.MLP_model.predict_layer.weight], dim=1)
            precit_bias = self.GMF_model.predict_layer.bias + self.MLP_model.predict_layer.bias
            self.predict_layer.weight.data.copy_(0.5 * predict_weight)
            self.predict_layer.bias.data.copy_(0.5 * precit_bias)

    def forward(self, user, item):
        if not self.model == "MLP":
            embed_user_GMF = self.embed_user_GMF(user)
            embed_item_GMF = self.embed_item_GMF(item)
            output_GMF = embed_user_GMF * embed_item_GMF
        if not self.model == "GMF":
            embed_user_MLP = self.embed_user_MLP(user)
            embed_item_MLP = self.embed_item_MLP(item)
            interaction = torch.cat((embed_user_MLP, embed_item_MLP), -1)
            output_MLP = self.MLP_layers(interaction)
        if self.model == "GMF":
            concat = output_GMF
        elif self.model == "MLP":
            concat = output_MLP
        else:
            concat = torch.cat((output_GMF, output_MLP), -1)
        prediction = self.predict_layer(concat)
        return prediction.view(-1)


class NCFData(data.Dataset):
    def __init__(self, features, num_item, train_mat, num_ng=0, is_training=None):
        super(NCFData, self).__init__()
        self.features_ps = features
        self.num_item = num_item
        self.train_mat = train_mat
        self.num_ng = num_ng
        self.is_training = is_training
        self.labels = [0 for _ in range(len(features))]

    def ng_sample(self):
        self.features_ng = []
        for x in self.features_ps:
            u = x[0]
            for t in range(self.num_ng):
                j = int(torch.randint(ITEM_NUM, ()).item())
                while (u, j) in self.train_mat:
                    j = int(torch.randint(ITEM_NUM, ()).item())
                self.features_ng.append([u, j])
        labels_ps = [1 for _ in range(len(self.features_ps))]
        labels_ng = [0 for _ in range(len(self.features_ng))]
        self.features_fill = self.features_ps + self.features_ng
        self.labels_fill = labels_ps + labels_ng

    def __len__(self):
        return (self.num_ng + 1) * len(self.labels)

    def __getitem__(self, idx):
        features = self.features_fill if self.is_training else self.features_ps
        labels = self.labels_fill if self.is_training else self.labels
        user = features[idx][0]
        item = features[idx][1]
        label = labels[idx]
        return user, item, label


def hit(gt_item, pred_items):
    return 1 if gt_item in pred_items else 0


def ndcg(gt_item, pred_items):
    if gt_item in pred_items:
        index = pred_items.index(gt_item)
        return 1.0 / math.log2(index + 2)
    return 0


# synthetic implicit data: each user interacts with a few items; last one held out
inter = (torch.rand(USER_NUM, ITEM_NUM) < 0.25)
train_data, test_pos, train_mat = [], {}, set()
for u in range(USER_NUM):
    its = inter[u].nonzero().flatten().tolist()
    if len(its) < 2:
        its = [u % ITEM_NUM, (u + 7) % ITEM_NUM]
    test_pos[u] = its[-1]
    for i in its[:-1]:
        train_data.append([u, i])
        train_mat.add((u, i))
print("train interactions:", len(train_data))

train_dataset = NCFData(train_data, ITEM_NUM, train_mat, 2, True)
train_loader = data.DataLoader(train_dataset, batch_size=32, shuffle=True, num_workers=0)


def evaluate(model, top_k):
    HR, NDCG = [], []
    model.eval()
    with torch.no_grad():
        for u in range(USER_NUM):
            user = torch.full((ITEM_NUM,), u, dtype=torch.long)
            item = torch.arange(ITEM_NUM)
            predictions = model(user, item)
            _, indices = torch.topk(predictions, top_k)
            recommends = torch.take(item, indices).cpu().numpy().tolist()
            gt_item = test_pos[u]
            HR.append(hit(gt_item, recommends))
            NDCG.append(ndcg(gt_item, recommends))
    return sum(HR) / len(HR), sum(NDCG) / len(NDCG)


def train(model_name, epochs, lr, GMF_model=None, MLP_model=None):
    model = NCF(USER_NUM, ITEM_NUM, FACTOR, NUM_LAYERS, 0.0, model_name, GMF_model, MLP_model)
    loss_function = nn.BCEWithLogitsLoss()
    if model_name == "NeuMF-pre":
        optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for epoch in range(epochs):
        model.train()
        train_loader.dataset.ng_sample()
        for user, item, label in train_loader:
            label = label.float()
            model.zero_grad()
            prediction = model(user, item)
            loss = loss_function(prediction, label)
            loss.backward()
            optimizer.step()
        HR, NDCG = evaluate(model, TOP_K)
        print(f"{model_name} epoch {epoch:03d} loss {loss.item():.4f} "
              f"HR: {HR:.3f}\tNDCG: {NDCG:.3f}")
    return model


gmf = train("GMF", 2, 0.01)
mlp = train("MLP", 2, 0.01)
print(mlp)
print(mlp.MLP_layers[1].weight.shape, mlp.embed_user_MLP.weight.shape)
neumf = train("NeuMF-pre", 2, 0.01, gmf, mlp)
print(neumf.predict_layer)
print([n for n, _ in neumf.named_parameters()])
u, i, lbl = next(iter(train_loader))
print(u.dtype, i.dtype, lbl.dtype, u.shape)
out = neumf(u, i)
print(type(out.grad_fn).__name__, out.shape)
print(torch.sigmoid(out[:4]))
print("RESULT:", f"{out.sum().item():.4f}")
