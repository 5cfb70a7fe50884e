"""Session-based / sequential recommendation, shrunk: GRU4Rec (Hidasi et al.; the
hungthanhpham94 GRU4REC-pytorch port: one-hot-free embedding input, session-parallel
mini-batches, hidden reset with a mask, TOP1 / BPR-max losses over in-batch negatives) and
SASRec (kang205 / pmixer's SASRec.pytorch: padded item histories, positional embeddings,
causal attention mask, log-sigmoid pos/neg logits via BCEWithLogitsLoss, HR@10/NDCG@10)."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

torch.manual_seed(3)
N_ITEMS, HID, BATCH = 25, 12, 6


class GRU4REC(nn.Module):
    def __init__(self, input_size, hidden_size, output_size, num_layers=1, dropout_hidden=0.5,
                 dropout_input=0, batch_size=50, embedding_dim=-1):
        super(GRU4REC, self).__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.output_size = output_size
        self.num_layers = num_layers
        self.dropout_hidden = dropout_hidden
        self.dropout_input = dropout_input
        self.embedding_dim = embedding_dim
        self.batch_size = batch_size
        self.onehot_buffer = self.init_emb()
        self.h2o = nn.Linear(hidden_size, output_size)
        self.final_activation = nn.Tanh()
        if self.embedding_dim != -1:
            self.look_up = nn.Embedding(input_size, self.embedding_dim)
            self.gru = nn.GRU(self.embedding_dim, self.hidden_size, self.num_layers,
                              dropout=self.dropout_hidden)
        else:
            self.gru = nn.GRU(self.input_size, self.hidden_size, self.num_layers,
                              dropout=self.dropout_hidden)

    def forward(self, input, hidden):
        if self.embedding_dim == -1:
            embedded = self.onehot_encode(input)
            if self.training and self.dropout_input > 0:
                embedded = self.embedding_dropout(embedded)
            embedded = embedded.unsqueeze(0)
        else:
            embedded = input.unsqueeze(0)
            embedded = self.look_up(embedded)
        output, hidden = self.gru(embedded, hidden)
        output = output.view(-1, output.size(-1))
        logit = self.final_activation(self.h2o(output))
        return logit, hidden

    def init_emb(self):
        return torch.FloatTensor(self.batch_size, self.output_size)

    def onehot_encode(self, input):
        self.onehot_buffer.zero_()
        index = input.view(-1, 1)
        one_hot = self.onehot_buffer.scatter_(1, index, 1)
        return one_hot

    def embedding_dropout(self, input):
        p_drop = torch.Tensor(input.size(0), 1).fill_(1 - self.dropout_input)
        mask_ = torch.bernoulli(p_drop).expand_as(input) / (1 - self.dropout_input)
        return input * mask_

    def init_hidden(self):
        return torch.zeros(self.num_layers, self.batch_size, self.hidden_size)


class TOP1Loss(nn.Module):
    def forward(self, logit):
        diff = -(logit.diag().view(-1, 1).expand_as(logit) - logit)
        loss = torch.sigmoid(diff).mean() + torch.sigmoid(logit ** 2).mean()
        return loss


class BPR_max(nn.Module):
    def forward(self, logit):
        logit_softmax = F.softmax(logit, dim=1)
        diff = logit.diag().view(-1, 1).expand_as(logit) - logit
        loss = -torch.log(torch.mean(logit_softmax * torch.sigmoid(diff)))
        return loss


# session-parallel mini-batches over synthetic sessions
lengths = torch.randint(2, 6, (10,))
sessions = [torch.randint(0, N_ITEMS, (int(n),)) for n in lengths]
print("session lengths:", lengths.tolist())
for emb_dim, loss_fn in ((-1, TOP1Loss()), (8, BPR_max())):
    torch.manual_seed(4)
    model = GRU4REC(N_ITEMS, HID, N_ITEMS, num_layers=2, dropout_hidden=0.25,
                    dropout_input=0.2 if emb_dim == -1 else 0, batch_size=BATCH,
                    embedding_dim=emb_dim)
    print(model)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05, eps=1e-6)
    hidden = model.init_hidden()
    iters = list(range(BATCH))
    pos = [0] * BATCH
    nxt = BATCH
    for step in range(8):
        inp = torch.stack([sessions[i][pos[k]] for k, i in enumerate(iters)])
        tgt = torch.stack([sessions[i][pos[k] + 1] for k, i in enumerate(iters)])
        hidden = hidden.detach()
        logit, hidden = model(inp, hidden)
        logit_sampled = logit[:, tgt.view(-1)]
        loss = loss_fn(logit_sampled)
        opt.zero_grad()
        loss.backward()
        opt.step()
        mask = []
        for k in range(BATCH):
            pos[k] += 1
            if pos[k] + 1 >= len(sessions[iters[k]]):
                iters[k] = nxt % len(sessions)
                nxt += 1
                pos[k] = 0
                mask.append(k)
        if len(mask) != 0:
            hidden[:, mask, :] = 0
        print(f"{type(loss_fn).__name__} step {step} loss {loss.item():.5f} reset {mask}")
    model.eval()
    with torch.no_grad():
        logit, _ = model(inp, model.init_hidden())
        _, indices = torch.topk(logit, 5, -1)
        hits = (tgt.view(-1, 1).expand_as(indices) == indices).nonzero()
        ranks = (hits[:, -1] + 1).float()
        mrr = torch.sum(torch.reciprocal(ranks)).item() / BATCH
        print("recall@5", len(hits) / BATCH, "mrr@5", f"{mrr:.4f}")


class PointWiseFeedForward(nn.Module):
    def __init__(self, hidden_units, dropout_rate):
        super(PointWiseFeedForward, self).__init__()
        self.conv1 = nn.Conv1d(hidden_units, hidden_units, kernel_size=1)
        self.dropout1 = nn.Dropout(p=dropout_rate)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv1d(hidden_units, hidden_units, kernel_size=1)
        self.dropout2 = nn.Dropout(p=dropout_rate)

    def forward(self, inputs):
        outputs = self.dropout2(self.conv2(self.relu(self.dropout1(
            self.conv1(inputs.transpose(-1, -2))))))
        outputs = outputs.transpose(-1, -2)
        return outputs


class SASRec(nn.Module):
    def __init__(self, item_num, hidden_units=16, maxlen=8, num_blocks=2, num_heads=2,
                 dropout_rate=0.2):
        super(SASRec, self).__init__()
        self.item_num = item_num
        self.item_emb = nn.Embedding(self.item_num + 1, hidden_units, padding_idx=0)
        self.pos_emb = nn.Embedding(maxlen + 1, hidden_units, padding_idx=0)
        self.emb_dropout = nn.Dropout(p=dropout_rate)
        self.attention_layernorms = nn.ModuleList()
        self.attention_layers = nn.ModuleList()
        self.forward_layernorms = nn.ModuleList()
        self.forward_layers = nn.ModuleList()
        self.last_layernorm = nn.LayerNorm(hidden_units, eps=1e-8)
        for _ in range(num_blocks):
            self.attention_layernorms.append(nn.LayerNorm(hidden_units, eps=1e-8))
            self.attention_layers.append(nn.MultiheadAttention(hidden_units, num_heads,
                                                               dropout_rate))
            self.forward_layernorms.append(nn.LayerNorm(hidden_units, eps=1e-8))
            self.forward_layers.append(PointWiseFeedForward(hidden_units, dropout_rate))

    def log2feats(self, log_seqs):
        seqs = self.item_emb(log_seqs)
        seqs *= self.item_emb.embedding_dim ** 0.5
        poss = torch.arange(1, log_seqs.shape[1] + 1).unsqueeze(0).repeat(log_seqs.shape[0], 1)
        poss *= (log_seqs != 0)
        seqs += self.pos_emb(poss)
        seqs = self.emb_dropout(seqs)
        tl = seqs.shape[1]
        attention_mask = ~torch.tril(torch.ones((tl, tl), dtype=torch.bool))
        for i in range(len(self.attention_layers)):
            seqs = torch.transpose(seqs, 0, 1)
            Q = self.attention_layernorms[i](seqs)
            mha_outputs, _ = self.attention_layers[i](Q, seqs, seqs, attn_mask=attention_mask)
            seqs = Q + mha_outputs
            seqs = torch.transpose(seqs, 0, 1)
            seqs = self.forward_layernorms[i](seqs)
            seqs = self.forward_layers[i](seqs)
        return self.last_layernorm(seqs)

    def forward(self, user_ids, log_seqs, pos_seqs, neg_seqs):
        log_feats = self.log2feats(log_seqs)
        pos_embs = self.item_emb(pos_seqs)
        neg_embs = self.item_emb(neg_seqs)
        pos_logits = (log_feats * pos_embs).sum(dim=-1)
        neg_logits = (log_feats * neg_embs).sum(dim=-1)
        return pos_logits, neg_logits

    def predict(self, user_ids, log_seqs, item_indices):
        log_feats = self.log2feats(log_seqs)
        final_feat = log_feats[:, -1, :]
        item_embs = self.item_emb(item_indices)
        logits = item_embs.matmul(final_feat.unsqueeze(-1)).squeeze(-1)
        return logits


torch.manual_seed(9)
MAXLEN, B = 8, 5
seq = torch.randint(1, N_ITEMS + 1, (B, MAXLEN + 1))
seq[:2, :3] = 0                     # left padding for short histories
log_seqs, pos = seq[:, :-1], seq[:, 1:]
neg = torch.randint(1, N_ITEMS + 1, pos.shape)
model = SASRec(N_ITEMS, maxlen=MAXLEN)
for name, param in model.named_parameters():
    try:
        nn.init.xavier_normal_(param.data)
    except Exception:
        pass
model.pos_emb.weight.data[0, :] = 0
model.item_emb.weight.data[0, :] = 0
print(model.attention_layers[0], model.forward_layers[0])
print(sum(p.numel() for p in model.parameters()))
bce = nn.BCEWithLogitsLoss()
adam = torch.optim.Adam(model.parameters(), lr=0.005, betas=(0.9, 0.98))
model.train()
for step in range(6):
    pos_logits, neg_logits = model(None, log_seqs, pos, neg)
    pos_labels = torch.ones(pos_logits.shape)
    neg_labels = torch.zeros(neg_logits.shape)
    adam.zero_grad()
    indices = torch.where(pos != 0)
    loss = bce(pos_logits[indices], pos_labels[indices])
    loss += bce(neg_logits[indices], neg_labels[indices])
    for param in model.item_emb.parameters():
        loss += 0.001 * torch.norm(param)
    loss.backward()
    adam.step()
    print(f"sasrec step {step} loss {loss.item():.5f}")
model.eval()
with torch.no_grad():
    item_idx = torch.cat([pos[:, -1:], torch.randint(1, N_ITEMS + 1, (B, 9))], dim=1)
    predictions = -model.predict(None, log_seqs, item_idx)
    rank = predictions.argsort(dim=1).argsort(dim=1)[:, 0]
print(predictions.shape, rank.tolist())
ndcg = torch.where(rank < 10, 1 / torch.log2(rank.float() + 2), torch.zeros(()))
print("NDCG@10", f"{ndcg.mean().item():.4f}", "HT@10", (rank < 10).float().mean().item())
print(model.item_emb.weight[0].abs().sum().item(), math.isfinite(loss.item()))
print("RESULT:", f"{loss.item():.5f}")
