"""fairseq's data pipeline, shrunk: fairseq/data/data_utils.py (collate_tokens with left_pad,
move_eos_to_beginning and pad_to_multiple, numpy_seed, the pure-Python batch_by_size with
max_tokens / max_sentences / required_batch_size_multiple, filter_by_size), the
LanguagePairDataset.collate of fairseq/data/language_pair_dataset.py (sort by source length
descending, index_select, prev_output_tokens, ntokens), ordered_indices (np.lexsort-free
argsort with kind="mergesort"), and fairseq/data/iterators.py's ShardedIterator /
CountingIterator / GroupedIterator driving a DataLoader with batch_sampler=batches."""
import contextlib
import importlib
import itertools
import math
import os

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
data = importlib.import_module(LIB + ".utils.data")

PAD, EOS, BOS = 1, 2, 0


@contextlib.contextmanager
def numpy_seed(seed, *addl_seeds):
    if seed is None:
        yield
        return
    if len(addl_seeds) > 0:
        seed = int(hash((seed, *addl_seeds)) % 1e6)
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)


def collate_tokens(values, pad_idx, eos_idx=None, left_pad=False, move_eos_to_beginning=False,
                   pad_to_length=None, pad_to_multiple=1, pad_to_bsz=None):
    size = max(v.size(0) for v in values)
    size = size if pad_to_length is None else max(size, pad_to_length)
    if pad_to_multiple != 1 and size % pad_to_multiple != 0:
        size = int(((size - 0.1) // pad_to_multiple + 1) * pad_to_multiple)
    batch_size = len(values) if pad_to_bsz is None else max(len(values), pad_to_bsz)
    res = values[0].new(batch_size, size).fill_(pad_idx)

    def copy_tensor(src, dst):
        assert dst.numel() == src.numel()
        if move_eos_to_beginning:
            if eos_idx is None:
                dst[0] = src[-1]
            else:
                dst[0] = eos_idx
            dst[1:] = src[:-1]
        else:
            dst.copy_(src)

    for i, v in enumerate(values):
        copy_tensor(v, res[i][size - len(v):] if left_pad else res[i][: len(v)])
    return res


def batch_by_size(indices, num_tokens_fn, max_tokens=None, max_sentences=None,
                  required_batch_size_multiple=1):
    """fairseq's old pure-Python batch_by_size (data_utils_fast.pyx before cython)."""
    max_tokens = max_tokens if max_tokens is not None else -1
    max_sentences = max_sentences if max_sentences is not None else -1
    bsz_mult = required_batch_size_multiple
    sample_len, sample_lens, batch, batches = 0, [], [], []

    def is_batch_full(num_tokens):
        if len(batch) == 0:
            return False
        if len(batch) == max_sentences:
            return True
        if num_tokens > max_tokens > 0:
            return True
        return False

    for idx in indices:
        sample_lens.append(num_tokens_fn(idx))
        sample_len = max(sample_len, sample_lens[-1])
        assert max_tokens <= 0 or sample_len <= max_tokens, (
            "sentence at index {} of size {} exceeds max_tokens limit of {}!".format(
                idx, sample_len, max_tokens))
        num_tokens = (len(batch) + 1) * sample_len
        if is_batch_full(num_tokens):
            mod_len = max(bsz_mult * (len(batch) // bsz_mult), len(batch) % bsz_mult)
            batches.append(batch[:mod_len])
            batch = batch[mod_len:]
            sample_lens = sample_lens[mod_len:]
            sample_len = max(sample_lens) if len(sample_lens) > 0 else 0
        batch.append(idx)
    if len(batch) > 0:
        batches.append(batch)
    return batches


class LanguagePairDataset(data.Dataset):
    def __init__(self, src, tgt, shuffle=True, left_pad_source=True, left_pad_target=False,
                 pad_to_multiple=1):
        self.src, self.tgt = src, tgt
        self.src_sizes = np.array([len(s) for s in src])
        self.tgt_sizes = np.array([len(t) for t in tgt])
        self.shuffle = shuffle
        self.left_pad_source, self.left_pad_target = left_pad_source, left_pad_target
        self.pad_to_multiple = pad_to_multiple

    def __getitem__(self, index):
        return {"id": index, "source": self.src[index], "target": self.tgt[index]}

    def __len__(self):
        return len(self.src)

    def num_tokens(self, index):
        return max(self.src_sizes[index], self.tgt_sizes[index])

    def ordered_indices(self):
        if self.shuffle:
            indices = np.random.permutation(len(self)).astype(np.int64)
        else:
            indices = np.arange(len(self), dtype=np.int64)
        indices = indices[np.argsort(self.tgt_sizes[indices], kind="mergesort")]
        return indices[np.argsort(self.src_sizes[indices], kind="mergesort")]

    def filter_indices_by_size(self, indices, max_sizes):
        ignored = indices[(self.src_sizes[indices] > max_sizes[0])
                          | (self.tgt_sizes[indices] > max_sizes[1])].tolist()
        indices = indices[(self.src_sizes[indices] <= max_sizes[0])
                          & (self.tgt_sizes[indices] <= max_sizes[1])]
        return indices, ignored

    def collater(self, samples):
        if len(samples) == 0:
            return {}

        def merge(key, left_pad, move_eos_to_beginning=False):
            return collate_tokens([s[key] for s in samples], PAD, EOS, left_pad,
                                  move_eos_to_beginning, pad_to_multiple=self.pad_to_multiple)

        id = torch.LongTensor([s["id"] for s in samples])
        src_tokens = merge("source", left_pad=self.left_pad_source)
        src_lengths = torch.LongTensor([s["source"].ne(PAD).long().sum() for s in samples])
        src_lengths, sort_order = src_lengths.sort(descending=True)
        id = id.index_select(0, sort_order)
        src_tokens = src_tokens.index_select(0, sort_order)
        target = merge("target", left_pad=self.left_pad_target)
        target = target.index_select(0, sort_order)
        tgt_lengths = torch.LongTensor([s["target"].ne(PAD).long().sum()
                                        for s in samples]).index_select(0, sort_order)
        ntokens = tgt_lengths.sum().item()
        prev_output_tokens = merge("target", left_pad=self.left_pad_target,
                                   move_eos_to_beginning=True).index_select(0, sort_order)
        return {"id": id, "nsentences": len(samples), "ntokens": ntokens,
                "net_input": {"src_tokens": src_tokens, "src_lengths": src_lengths,
                              "prev_output_tokens": prev_output_tokens},
                "target": target}


class CountingIterator:
    def __init__(self, iterable, start=None, total=None):
        self._itr = iter(iterable)
        self.n = start or getattr(iterable, "n", 0)
        self.total = total if total is not None else self.n + len(iterable)

    def __len__(self):
        return self.total

    def __iter__(self):
        return self

    def __next__(self):
        if not self.has_next():
            raise StopIteration
        try:
            x = next(self._itr)
        except StopIteration:
            raise IndexError("Iterator expected to have length {}, but exhausted at position {}."
                             .format(self.total, self.n))
        self.n += 1
        return x

    def has_next(self):
        return self.n < self.total


class ShardedIterator:
    def __init__(self, iterable, num_shards, shard_id, fill_value=None):
        if shard_id < 0 or shard_id >= num_shards:
            raise ValueError("shard_id must be between 0 and num_shards")
        sharded_len = int(math.ceil(len(iterable) / float(num_shards)))
        self.itr = map(lambda x: x[1], itertools.zip_longest(
            range(sharded_len), itertools.islice(iterable, shard_id, len(iterable), num_shards),
            fillvalue=fill_value))
        self.n = sharded_len

    def __len__(self):
        return self.n

    def __iter__(self):
        return self.itr


class GroupedIterator:
    def __init__(self, iterable, chunk_size):
        self.itr = iter(iterable)
        self.chunk_size = chunk_size
        self.n = int(math.ceil(len(iterable) / float(chunk_size)))

    def __len__(self):
        return self.n

    def __iter__(self):
        return self

    def __next__(self):
        chunk = list(itertools.islice(self.itr, self.chunk_size))
        if not chunk:
            raise StopIteration
        return chunk


def main():
    rng = np.random.RandomState(0)
    src = [torch.tensor(rng.randint(4, 50, size=rng.randint(2, 12)).tolist() + [EOS])
           for _ in range(30)]
    tgt = [torch.tensor(rng.randint(4, 50, size=rng.randint(2, 9)).tolist() + [EOS])
           for _ in range(30)]
    ds = LanguagePairDataset(src, tgt, pad_to_multiple=4)

    vals = [torch.tensor([5, 6, EOS]), torch.tensor([7, EOS]), torch.tensor([8, 9, 10, 11, EOS])]
    print("right", collate_tokens(vals, PAD).tolist())
    print("left", collate_tokens(vals, PAD, left_pad=True).tolist())
    print("eos first", collate_tokens(vals, PAD, EOS, move_eos_to_beginning=True).tolist())
    print("eos None", collate_tokens(vals, PAD, None, move_eos_to_beginning=True).tolist())
    print("mult 4 / bsz 4", collate_tokens(vals, PAD, pad_to_multiple=4, pad_to_bsz=4).tolist())
    print("to length", collate_tokens(vals, PAD, left_pad=True, pad_to_length=7).shape)

    with numpy_seed(1):
        indices = ds.ordered_indices()
    print("ordered", indices.tolist())
    indices, ignored = ds.filter_indices_by_size(indices, (10, 8))
    print("ignored", ignored, "kept", len(indices))

    batches = batch_by_size(indices, ds.num_tokens, max_tokens=40, max_sentences=6,
                            required_batch_size_multiple=2)
    print("batches", [[int(i) for i in b] for b in batches])
    print("batch tokens", [int(len(b) * max(ds.num_tokens(i) for i in b)) for b in batches])
    try:
        batch_by_size(indices, ds.num_tokens, max_tokens=5)
    except AssertionError as e:
        print("AssertionError", e)

    with numpy_seed(7, 3):
        np.random.shuffle(batches)
    print("shuffled epoch batches", [int(b[0]) for b in batches])

    loader = data.DataLoader(ds, batch_sampler=batches, collate_fn=ds.collater)
    print("len loader", len(loader))
    for i, sample in enumerate(loader):
        if i < 2:
            ni = sample["net_input"]
            print("sample", sample["id"].tolist(), sample["ntokens"], sample["nsentences"])
            print(" src", ni["src_tokens"].tolist(), ni["src_lengths"].tolist())
            print(" prev", ni["prev_output_tokens"].tolist())
            print(" tgt", sample["target"].tolist())
    print("empty collate", ds.collater([]))

    for shard_id in range(3):
        itr = ShardedIterator(batches, num_shards=3, shard_id=shard_id, fill_value=[])
        print("shard", shard_id, len(itr), [[int(i) for i in b[:2]] for b in itr])
    try:
        ShardedIterator(batches, 2, 2)
    except ValueError as e:
        print("ValueError", e)

    counting = CountingIterator(data.DataLoader(ds, batch_sampler=batches[:5],
                                                collate_fn=ds.collater))
    grouped = GroupedIterator(counting, 2)
    print("grouped len", len(grouped))
    for chunk in grouped:
        print("update_freq chunk", [s["ntokens"] for s in chunk], "n", counting.n,
              counting.has_next())
    bad = CountingIterator([1, 2], total=3)
    print(next(bad), next(bad))
    try:
        next(bad)
    except IndexError as e:
        print("IndexError", e)


main()
