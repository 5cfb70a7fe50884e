"""Skip-gram with negative sampling (Adoni/word2vec_pytorch's model.py and trainer loop) on a
tiny synthetic corpus."""
import importlib
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
init = torch.nn.init
optim = torch.optim


class SkipGramModel(nn.Module):

    def __init__(self, emb_size, emb_dimension):
        super(SkipGramModel, self).__init__()
        self.emb_size = emb_size
        self.emb_dimension = emb_dimension
        self.u_embeddings = nn.Embedding(emb_size, emb_dimension)
        self.v_embeddings = nn.Embedding(emb_size, emb_dimension)

        initrange = 1.0 / self.emb_dimension
        init.uniform_(self.u_embeddings.weight.data, -initrange, initrange)
        init.constant_(self.v_embeddings.weight.data, 0)

    def forward(self, pos_u, pos_v, neg_v):
        emb_u = self.u_embeddings(pos_u)
        emb_v = self.v_embeddings(pos_v)
        emb_neg_v = self.v_embeddings(neg_v)

        score = torch.sum(torch.mul(emb_u, emb_v), dim=1)
        score = torch.clamp(score, max=10, min=-10)
        score = -F.logsigmoid(score)

        neg_score = torch.bmm(emb_neg_v, emb_u.unsqueeze(2)).squeeze()
        neg_score = torch.clamp(neg_score, max=10, min=-10)
        neg_score = -torch.sum(F.logsigmoid(-neg_score), dim=1)

        return torch.mean(score + neg_score)

    def save_embedding(self, id2word):
        embedding = self.u_embeddings.weight.cpu().data.numpy()
        lines = ["%d %d" % (len(id2word), self.emb_dimension)]
        for wid, w in id2word.items():
            e = ' '.join(map(lambda x: "%.4f" % x, embedding[wid][:4]))
            lines.append('%s %s' % (w, e))
        return lines


rng = np.random.RandomState(0)
words = ["w%d" % i for i in range(30)]
corpus = [words[i] for i in rng.zipf(1.6, 400) % 30]
word2id = {w: i for i, w in enumerate(sorted(set(corpus)))}
id2word = {i: w for w, i in word2id.items()}
freq = np.bincount([word2id[w] for w in corpus], minlength=len(word2id)).astype(np.float64)
sample_table = freq ** 0.75 / (freq ** 0.75).sum()
print(len(word2id), "words;", len(corpus), "tokens")

window = 2
pairs = []
ids = [word2id[w] for w in corpus]
for i, u in enumerate(ids):
    for j in range(max(0, i - window), min(len(ids), i + window + 1)):
        if j != i:
            pairs.append((u, ids[j]))
print(len(pairs), "pairs")

torch.manual_seed(0)
model = SkipGramModel(len(word2id), 12)
print(model)
optimizer = optim.SGD(model.parameters(), lr=0.2)
batch_size, neg_count = 32, 5
for step in range(20):
    batch = pairs[step * batch_size:(step + 1) * batch_size]
    pos_u = torch.LongTensor([p[0] for p in batch])
    pos_v = torch.LongTensor([p[1] for p in batch])
    neg_v = torch.multinomial(torch.tensor(sample_table), len(batch) * neg_count,
                              replacement=True).view(len(batch), neg_count)
    optimizer.zero_grad()
    loss = model.forward(pos_u, pos_v, neg_v)
    loss.backward()
    optimizer.step()
    if step % 4 == 0:
        print("Loss: %0.8f" % loss.item(), model.u_embeddings.weight.grad.abs().sum().item())

emb = model.u_embeddings.weight.detach()
sims = F.cosine_similarity(emb[0:1], emb, dim=1)
top = torch.topk(sims, 4)
print([id2word[i] for i in top.indices.tolist()], top.values)
for line in model.save_embedding(id2word)[:4]:
    print(line)
print("RESULT:", emb.norm().item())
