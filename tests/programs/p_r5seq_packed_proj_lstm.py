"""Packed sequences end to end as the PyTorch FAQ ("pack sequence -> recurrent network -> unpack
sequence" with total_length for DataParallel) and AllenNLP's sort_batch_by_length /
PytorchSeq2SeqWrapper do it: pack_padded_sequence(enforce_sorted=False), a 2-layer bidirectional
LSTM with proj_size and dropout, pad_packed_sequence(total_length=...), restoring order with
sorted_indices / unsorted_indices, PackedSequence.to(dtype), h0/c0 shapes and their errors,
and a masked tagging loss trained a few steps.
(torch skips the hx shape checks for a PackedSequence input, failing in C++ later or crashing:
those are checked on the padded path only.)"""

import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
rnn_utils = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.utils.rnn")
pack_padded_sequence = rnn_utils.pack_padded_sequence
pad_packed_sequence = rnn_utils.pad_packed_sequence


def sort_batch_by_length(tensor, sequence_lengths):
    """AllenNLP's allennlp.nn.util.sort_batch_by_length."""
    sorted_sequence_lengths, permutation_index = sequence_lengths.sort(0, descending=True)
    sorted_tensor = tensor.index_select(0, permutation_index)
    index_range = torch.arange(0, len(sequence_lengths), device=sequence_lengths.device)
    _, reverse_mapping = permutation_index.sort(0, descending=False)
    restoration_indices = index_range.index_select(0, reverse_mapping)
    return sorted_tensor, sorted_sequence_lengths, restoration_indices, permutation_index


class Tagger(nn.Module):
    def __init__(self, vocab, emb, hidden, proj, tags):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb, padding_idx=0)
        self.lstm = nn.LSTM(
            emb,
            hidden,
            num_layers=2,
            bidirectional=True,
            batch_first=True,
            dropout=0.25,
            proj_size=proj,
        )
        self.out = nn.Linear(2 * (proj or hidden), tags)

    def forward(self, padded_input, input_lengths, hx=None):
        total_length = padded_input.size(1)
        packed = pack_padded_sequence(
            self.emb(padded_input), input_lengths, batch_first=True, enforce_sorted=False
        )
        packed_output, (h, c) = self.lstm(packed, hx)
        output, lengths = pad_packed_sequence(
            packed_output, batch_first=True, total_length=total_length
        )
        return self.out(output), lengths, packed_output, (h, c)


torch.manual_seed(0)
B, L, VOC, TAGS = 5, 9, 20, 4
lengths = torch.tensor([4, 9, 2, 7, 5])
tokens = torch.randint(1, VOC, (B, L))
tokens[torch.arange(L).unsqueeze(0) >= lengths.unsqueeze(1)] = 0
tags = torch.randint(0, TAGS, (B, L)).masked_fill(tokens == 0, -100)

s_tokens, s_lengths, restore, perm = sort_batch_by_length(tokens, lengths)
print("sorted", s_lengths.tolist(), "restore", restore.tolist(), "perm", perm.tolist())

for proj in (0, 3):
    torch.manual_seed(1)
    model = Tagger(VOC, 6, 5, proj, TAGS)
    print([(n, tuple(p.shape)) for n, p in model.lstm.named_parameters()][:4])
    opt = torch.optim.Adam(model.parameters(), lr=2e-2)
    for step in range(4):
        model.train()
        logits, out_lens, packed, (h, c) = model(tokens, lengths)
        loss = F.cross_entropy(logits.reshape(-1, TAGS), tags.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(
            "proj",
            proj,
            "step",
            step,
            "loss %.5f" % loss.item(),
            tuple(logits.shape),
            out_lens.tolist(),
            tuple(h.shape),
            tuple(c.shape),
        )
    print(
        "batch_sizes",
        packed.batch_sizes.tolist(),
        "sorted",
        packed.sorted_indices.tolist(),
        "unsorted",
        packed.unsorted_indices.tolist(),
    )
    # final hidden states come back in the caller's order (unsorted_indices applied)
    model.eval()
    with torch.no_grad():
        logits, _, packed, (h, c) = model(tokens, lengths)
        last_fwd = h[-2]
        hd = proj or 5
        padded, _ = pad_packed_sequence(packed, batch_first=True)
        gathered = padded[torch.arange(B), lengths - 1, :hd]
        print(
            "last state match",
            torch.allclose(last_fwd, gathered, atol=1e-6),
            padded.shape,
            logits[2, 2:].abs().sum().item() == 0,
        )
        print("h", h.sum(-1).numpy().round(5).tolist())
        p64 = packed.to(torch.float64)
        print(
            type(p64).__name__,
            p64.data.dtype,
            p64.batch_sizes.dtype,
            p64.sorted_indices.tolist(),
            packed.to("cpu") is packed,
        )
        h0 = torch.randn(4, B, hd)
        c0 = torch.randn(4, B, 5)
        lg2, _, _, (h2, c2) = model(tokens, lengths, (h0, c0))
        print("with h0", lg2.sum().item(), h2.shape)
        for hx in (
            (torch.randn(4, B, 5), c0),
            (h0, torch.randn(4, B, hd + 1)),
            (torch.randn(2, B, hd), c0),
            (torch.randn(4, B, hd),),
        ):
            try:  # the padded path: torch's LSTM checks hx only there
                model.lstm(model.emb(tokens), hx)
                print("accepted", [tuple(t.shape) for t in hx])
            except Exception as e:
                print(type(e).__name__, e)

try:
    pad_packed_sequence(packed, batch_first=True, total_length=5)
except Exception as e:
    print(type(e).__name__, e)
try:
    pack_padded_sequence(tokens, lengths, batch_first=True)
except Exception as e:
    print(type(e).__name__, str(e)[:60])
try:
    pack_padded_sequence(
        tokens, torch.tensor([4, 9, 0, 7, 5]), batch_first=True, enforce_sorted=False
    )
except Exception as e:
    print(type(e).__name__, e)
packed = pack_padded_sequence(s_tokens, s_lengths, batch_first=True)
print("sorted pack", packed.sorted_indices, packed.unsorted_indices, packed.data[:6].tolist())
