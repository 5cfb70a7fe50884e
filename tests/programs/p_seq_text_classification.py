"""Text classification with the torchtext library (AG_NEWS tutorial): TextClassificationModel with
nn.EmbeddingBag + offsets, collate_batch, SGD + StepLR, clip_grad_norm_, shrunk with synthetic
token ids."""
import importlib
import os
import time

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
data_utils = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".utils.data")
DataLoader, random_split = data_utils.DataLoader, data_utils.random_split
to_map_style_dataset = list

device = torch.device("cpu")
torch.manual_seed(0)
vocab_size = 40
num_class = 4
train_iter = []
for i in range(48):
    label = int(torch.randint(1, num_class + 1, (1,)))
    length = int(torch.randint(3, 9, (1,)))
    tokens = (torch.randint(0, 10, (length,)) + 10 * (label - 1)).tolist()
    train_iter.append((label, tokens))

text_pipeline = lambda x: x  # noqa: E731
label_pipeline = lambda x: int(x) - 1  # noqa: E731


def collate_batch(batch):
    label_list, text_list, offsets = [], [], [0]
    for _label, _text in batch:
        label_list.append(label_pipeline(_label))
        processed_text = torch.tensor(text_pipeline(_text), dtype=torch.int64)
        text_list.append(processed_text)
        offsets.append(processed_text.size(0))
    label_list = torch.tensor(label_list, dtype=torch.int64)
    offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
    text_list = torch.cat(text_list)
    return label_list.to(device), text_list.to(device), offsets.to(device)


dataloader = DataLoader(train_iter, batch_size=8, shuffle=False, collate_fn=collate_batch)
label, text, offsets = next(iter(dataloader))
print(label, text.shape, offsets)


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super(TextClassificationModel, self).__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
        self.fc = nn.Linear(embed_dim, num_class)
        self.init_weights()

    def init_weights(self):
        initrange = 0.5
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.fc.weight.data.uniform_(-initrange, initrange)
        self.fc.bias.data.zero_()

    def forward(self, text, offsets):
        embedded = self.embedding(text, offsets)
        return self.fc(embedded)


emsize = 16
model = TextClassificationModel(vocab_size, emsize, num_class).to(device)
print(model)


def train(dataloader):
    model.train()
    total_acc, total_count = 0, 0
    log_interval = 2
    for idx, (label, text, offsets) in enumerate(dataloader):
        optimizer.zero_grad()
        predicted_label = model(text, offsets)
        loss = criterion(predicted_label, label)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        total_acc += (predicted_label.argmax(1) == label).sum().item()
        total_count += label.size(0)
        if idx % log_interval == 0 and idx > 0:
            print('| epoch {:3d} | {:5d}/{:5d} batches | accuracy {:8.3f} | loss {:.4f}'.format(
                epoch, idx, len(dataloader), total_acc / total_count, loss.item()))
            total_acc, total_count = 0, 0


def evaluate(dataloader):
    model.eval()
    total_acc, total_count = 0, 0
    with torch.no_grad():
        for idx, (label, text, offsets) in enumerate(dataloader):
            predicted_label = model(text, offsets)
            loss = criterion(predicted_label, label)
            total_acc += (predicted_label.argmax(1) == label).sum().item()
            total_count += label.size(0)
    return total_acc / total_count, loss.item()


EPOCHS = 3
LR = 5
BATCH_SIZE = 8
criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=LR)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)
total_accu = None
train_dataset = to_map_style_dataset(train_iter[:40])
test_dataset = to_map_style_dataset(train_iter[40:])
num_train = int(len(train_dataset) * 0.8)
split_train_, split_valid_ = random_split(train_dataset,
                                          [num_train, len(train_dataset) - num_train])
print(len(split_train_), len(split_valid_), split_train_.indices[:5])
train_dataloader = DataLoader(split_train_, batch_size=BATCH_SIZE, shuffle=True,
                              collate_fn=collate_batch)
valid_dataloader = DataLoader(split_valid_, batch_size=BATCH_SIZE, shuffle=True,
                              collate_fn=collate_batch)
test_dataloader = DataLoader(test_dataset, batch_size=BATCH_SIZE, shuffle=True,
                             collate_fn=collate_batch)
for epoch in range(1, EPOCHS + 1):
    epoch_start_time = time.time()
    train(train_dataloader)
    accu_val, vloss = evaluate(valid_dataloader)
    if total_accu is not None and total_accu > accu_val:
        scheduler.step()
    else:
        total_accu = accu_val
    print('-' * 59)
    print('| end of epoch {:3d} | valid accuracy {:8.3f} | loss {:.4f} | lr {}'.format(
        epoch, accu_val, vloss, scheduler.get_last_lr()))
    print('-' * 59)

accu_test, _ = evaluate(test_dataloader)
print('test accuracy {:8.3f}'.format(accu_test))

ag_news_label = {1: "World", 2: "Sports", 3: "Business", 4: "Sci/Tec"}


def predict(text, text_pipeline):
    with torch.no_grad():
        text = torch.tensor(text_pipeline(text))
        output = model(text, torch.tensor([0]))
        return output.argmax(1).item() + 1


print("This is a %s news" % ag_news_label[predict([21, 22, 25, 28], text_pipeline)])

# The other EmbeddingBag modes and per_sample_weights, padding_idx, from_pretrained.
bag = nn.EmbeddingBag(10, 3, mode='max')
inp = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
offs = torch.tensor([0, 4])
print(bag(inp, offs))
bag = nn.EmbeddingBag(10, 3, mode='sum', padding_idx=2)
w = torch.rand(8)
out = bag(inp, offs, per_sample_weights=w)
out.sum().backward()
print(out, bag.weight.grad[2], bag.weight.grad.sum(0))
print(bag)
pre = nn.EmbeddingBag.from_pretrained(torch.arange(12.).view(4, 3), mode='mean')
print(pre(torch.tensor([[0, 1], [2, 3]])), pre.weight.requires_grad)
print(nn.functional.embedding_bag(torch.tensor([0, 2, 3, 1]), torch.arange(12.).view(4, 3),
                                  torch.tensor([0, 1, 4]), mode='sum', include_last_offset=True))
emb = nn.Embedding(10, 3, padding_idx=0, max_norm=1.0)
print(emb, emb(torch.tensor([[0, 2], [4, 2]])).norm(dim=-1))
print("RESULT:", f"{accu_test:.3f}")
