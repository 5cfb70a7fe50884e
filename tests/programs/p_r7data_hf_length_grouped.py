"""Hugging Face transformers' batching code, shrunk: trainer_pt_utils.py's
get_length_grouped_indices (seeded randperm, megabatches sorted by length, the longest
megabatch's head swapped to the front), LengthGroupedSampler and
DistributedLengthGroupedSampler (padding to a multiple of num_replicas, rank slicing), and
data/data_collator.py's DataCollatorWithPadding (pad_to_multiple_of, left/right padding_side),
DataCollatorForSeq2Seq (labels padded with -100) and DataCollatorForLanguageModeling's
torch_mask_tokens (bernoulli 80/10/10 masking with special-token mask). A toy tokenizer
stands in for a real one."""
import importlib
import math
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
data = importlib.import_module(LIB + ".utils.data")
rnn = importlib.import_module(LIB + ".nn.utils.rnn")
Sampler, Dataset, DataLoader = data.Sampler, data.Dataset, data.DataLoader


def get_length_grouped_indices(lengths, batch_size, mega_batch_mult=None, generator=None):
    if mega_batch_mult is None:
        mega_batch_mult = min(len(lengths) // (batch_size * 4), 50)
        if mega_batch_mult == 0:
            mega_batch_mult = 1
    indices = torch.randperm(len(lengths), generator=generator)
    megabatch_size = mega_batch_mult * batch_size
    megabatches = [indices[i: i + megabatch_size].tolist()
                   for i in range(0, len(lengths), megabatch_size)]
    megabatches = [sorted(megabatch, key=lambda i: lengths[i], reverse=True)
                   for megabatch in megabatches]
    megabatch_maximums = [lengths[megabatch[0]] for megabatch in megabatches]
    max_idx = torch.argmax(torch.tensor(megabatch_maximums)).item()
    megabatches[0][0], megabatches[max_idx][0] = megabatches[max_idx][0], megabatches[0][0]
    return [i for megabatch in megabatches for i in megabatch]


class LengthGroupedSampler(Sampler):
    def __init__(self, batch_size, dataset=None, lengths=None, model_input_name=None,
                 generator=None):
        if dataset is None and lengths is None:
            raise ValueError("One of dataset and lengths must be provided.")
        self.batch_size = batch_size
        if lengths is None:
            model_input_name = model_input_name if model_input_name is not None else "input_ids"
            lengths = [len(feature[model_input_name]) for feature in dataset]
        elif isinstance(lengths, torch.Tensor):
            lengths = lengths.tolist()
        self.lengths = lengths
        self.generator = generator

    def __len__(self):
        return len(self.lengths)

    def __iter__(self):
        return iter(get_length_grouped_indices(self.lengths, self.batch_size,
                                               generator=self.generator))


class DistributedLengthGroupedSampler(Sampler):
    def __init__(self, batch_size, dataset=None, num_replicas=None, rank=None, seed=0,
                 drop_last=False, lengths=None, model_input_name=None):
        self.batch_size, self.num_replicas, self.rank = batch_size, num_replicas, rank
        self.epoch, self.drop_last = 0, drop_last
        if lengths is None:
            lengths = [len(feature[model_input_name or "input_ids"]) for feature in dataset]
        self.lengths = lengths
        if self.drop_last and len(self.lengths) % self.num_replicas != 0:
            self.num_samples = math.ceil((len(self.lengths) - self.num_replicas)
                                         / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.lengths) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.seed = seed

    def __iter__(self):
        g = torch.Generator()
        g.manual_seed(self.seed + self.epoch)
        indices = get_length_grouped_indices(self.lengths, self.batch_size, generator=g)
        if not self.drop_last:
            indices += indices[: (self.total_size - len(indices))]
        else:
            indices = indices[: self.total_size]
        assert len(indices) == self.total_size
        indices = indices[self.rank: self.total_size: self.num_replicas]
        assert len(indices) == self.num_samples
        return iter(indices)

    def __len__(self):
        return self.num_samples


class ToyTokenizer:
    pad_token_id, cls_token_id, sep_token_id, mask_token_id = 0, 1, 2, 3
    vocab_size = 30

    def __init__(self, padding_side="right"):
        self.padding_side = padding_side

    def __len__(self):
        return self.vocab_size

    def get_special_tokens_mask(self, ids, already_has_special_tokens=True):
        return [1 if t in (self.cls_token_id, self.sep_token_id, self.pad_token_id) else 0
                for t in ids]

    def pad(self, features, pad_to_multiple_of=None, return_tensors="pt"):
        max_len = max(len(f["input_ids"]) for f in features)
        if pad_to_multiple_of is not None and max_len % pad_to_multiple_of != 0:
            max_len = ((max_len // pad_to_multiple_of) + 1) * pad_to_multiple_of
        batch = {"input_ids": [], "attention_mask": []}
        for f in features:
            diff = max_len - len(f["input_ids"])
            ids, mask = list(f["input_ids"]), [1] * len(f["input_ids"])
            if self.padding_side == "right":
                ids, mask = ids + [self.pad_token_id] * diff, mask + [0] * diff
            else:
                ids, mask = [self.pad_token_id] * diff + ids, [0] * diff + mask
            batch["input_ids"].append(ids)
            batch["attention_mask"].append(mask)
        for k in features[0]:
            if k not in batch:
                batch[k] = [f[k] for f in features]
        return {k: torch.tensor(v) for k, v in batch.items()}


class DataCollatorWithPadding:
    def __init__(self, tokenizer, pad_to_multiple_of=None):
        self.tokenizer, self.pad_to_multiple_of = tokenizer, pad_to_multiple_of

    def __call__(self, features):
        batch = self.tokenizer.pad(features, pad_to_multiple_of=self.pad_to_multiple_of)
        if "label" in batch:
            batch["labels"] = batch["label"]
            del batch["label"]
        return batch


class DataCollatorForSeq2Seq:
    def __init__(self, tokenizer, label_pad_token_id=-100, pad_to_multiple_of=None):
        self.tokenizer, self.label_pad_token_id = tokenizer, label_pad_token_id
        self.pad_to_multiple_of = pad_to_multiple_of

    def __call__(self, features):
        labels = [f.pop("labels") for f in features]
        # labels padded with pad_sequence (newer HF pads with tokenizer-side padding)
        labels = rnn.pad_sequence([torch.tensor(x) for x in labels], batch_first=True,
                                  padding_value=self.label_pad_token_id,
                                  padding_side=self.tokenizer.padding_side)
        batch = self.tokenizer.pad(features, pad_to_multiple_of=self.pad_to_multiple_of)
        batch["labels"] = labels
        batch["decoder_input_ids"] = shift_tokens_right(labels, 0, 1)
        return batch


def shift_tokens_right(input_ids, pad_token_id, decoder_start_token_id):
    shifted = input_ids.new_zeros(input_ids.shape)
    shifted[:, 1:] = input_ids[:, :-1].clone()
    shifted[:, 0] = decoder_start_token_id
    shifted.masked_fill_(shifted == -100, pad_token_id)
    return shifted


class DataCollatorForLanguageModeling:
    def __init__(self, tokenizer, mlm_probability=0.15):
        self.tokenizer, self.mlm_probability = tokenizer, mlm_probability

    def __call__(self, examples):
        batch = self.tokenizer.pad(examples)
        special_tokens_mask = batch.pop("special_tokens_mask", None)
        batch["input_ids"], batch["labels"] = self.torch_mask_tokens(batch["input_ids"],
                                                                     special_tokens_mask)
        return batch

    def torch_mask_tokens(self, inputs, special_tokens_mask=None):
        labels = inputs.clone()
        probability_matrix = torch.full(labels.shape, self.mlm_probability)
        if special_tokens_mask is None:
            special_tokens_mask = [self.tokenizer.get_special_tokens_mask(val)
                                   for val in labels.tolist()]
            special_tokens_mask = torch.tensor(special_tokens_mask, dtype=torch.bool)
        else:
            special_tokens_mask = special_tokens_mask.bool()
        probability_matrix.masked_fill_(special_tokens_mask, value=0.0)
        masked_indices = torch.bernoulli(probability_matrix).bool()
        labels[~masked_indices] = -100
        indices_replaced = torch.bernoulli(torch.full(labels.shape, 0.8)).bool() & masked_indices
        inputs[indices_replaced] = self.tokenizer.mask_token_id
        indices_random = (torch.bernoulli(torch.full(labels.shape, 0.5)).bool() & masked_indices
                          & ~indices_replaced)
        random_words = torch.randint(len(self.tokenizer), labels.shape, dtype=torch.long)
        inputs[indices_random] = random_words[indices_random]
        return inputs, labels


class ToyTextDataset(Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        lens = torch.randint(2, 11, (n,), generator=g).tolist()
        self.items = []
        for i, n_tok in enumerate(lens):
            body = torch.randint(4, 30, (n_tok,), generator=g).tolist()
            self.items.append({"input_ids": [1] + body + [2], "label": i % 3})

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return dict(self.items[i])


def main():
    torch.manual_seed(0)
    ds = ToyTextDataset(40, seed=3)
    lengths = [len(f["input_ids"]) for f in ds]
    print("lengths", lengths)

    g = torch.Generator().manual_seed(42)
    order = get_length_grouped_indices(lengths, batch_size=4, generator=g)
    print("grouped", order)
    print("mega lengths", [lengths[i] for i in order[:16]])
    print("mult=2", get_length_grouped_indices(lengths, 4, mega_batch_mult=2,
                                               generator=torch.Generator().manual_seed(1))[:12])
    print("first is longest", lengths[order[0]] == max(lengths))

    sampler = LengthGroupedSampler(4, dataset=ds, generator=torch.Generator().manual_seed(7))
    print("sampler len", len(sampler), "epoch0", list(sampler)[:10], "epoch1", list(sampler)[:10])
    s2 = LengthGroupedSampler(4, lengths=torch.tensor(lengths))
    print("from tensor lengths", type(s2.lengths).__name__, len(s2))
    try:
        LengthGroupedSampler(4)
    except ValueError as e:
        print("ValueError", e)

    for drop_last in (False, True):
        for rank in range(3):
            ds_sampler = DistributedLengthGroupedSampler(4, dataset=ds, num_replicas=3, rank=rank,
                                                         seed=5, drop_last=drop_last)
            ds_sampler.epoch = 1
            idx = list(ds_sampler)
            print("dist drop_last", drop_last, "rank", rank, len(ds_sampler), idx[:8])

    tok = ToyTokenizer()
    loader = DataLoader(ds, batch_size=4, sampler=sampler,
                        collate_fn=DataCollatorWithPadding(tok, pad_to_multiple_of=8))
    for step, batch in enumerate(loader):
        if step < 3:
            print("padded", step, {k: tuple(v.shape) for k, v in batch.items()},
                  batch["input_ids"][0].tolist(), batch["attention_mask"].sum(1).tolist(),
                  batch["labels"].tolist())
    print("steps", step + 1, "pad tokens", sum(
        int((b["attention_mask"] == 0).sum()) for b in loader))

    left = ToyTokenizer(padding_side="left")
    feats = [{"input_ids": ds[i]["input_ids"], "labels": ds[i]["input_ids"][1:4 + i]}
             for i in range(3)]
    for tk in (tok, left):
        b = DataCollatorForSeq2Seq(tk)([dict(f) for f in feats])
        print("seq2seq", tk.padding_side, b["input_ids"].tolist()[0], b["labels"].tolist(),
              b["decoder_input_ids"].tolist())

    torch.manual_seed(123)
    mlm = DataCollatorForLanguageModeling(tok, mlm_probability=0.3)
    mlm_loader = DataLoader(ds, batch_size=5, shuffle=True,
                            generator=torch.Generator().manual_seed(9),
                            collate_fn=lambda fs: mlm([{"input_ids": f["input_ids"]} for f in fs]))
    for step, batch in enumerate(mlm_loader):
        if step < 2:
            print("mlm inputs", batch["input_ids"].tolist())
            print("mlm labels", batch["labels"].tolist())
    n_masked = sum(int((b["labels"] != -100).sum()) for b in mlm_loader)
    print("mlm masked total", n_masked)
    torch.manual_seed(4)
    feats = [{"input_ids": [1, 5, 6, 7, 8, 2], "special_tokens_mask": [1, 0, 0, 0, 0, 1]},
             {"input_ids": [1, 9, 9, 9, 9, 2], "special_tokens_mask": [1, 0, 1, 0, 1, 1]}]
    b = DataCollatorForLanguageModeling(tok, mlm_probability=0.9)(feats)
    print("explicit special mask", b["input_ids"].tolist(), b["labels"].tolist())

main()
