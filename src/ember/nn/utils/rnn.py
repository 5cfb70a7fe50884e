"""Variable-length sequences: PackedSequence and the pack/pad helpers of ``nn.utils.rnn``."""
from collections.abc import Iterable
from typing import NamedTuple, Optional

import numpy as np

from ... import ops
from ...ops.creation import arange, as_tensor, empty_like
from ...ops.rnn import PackPadded as _PackPadded
from ...tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Optional[Tensor]
    unsorted_indices: Optional[Tensor]


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """The time-major rows of a batch of sequences, sorted by decreasing length.

    ``data`` holds step 0 of every sequence, then step 1 of those that have one, ...;
    ``batch_sizes[t]`` is how many sequences have a step ``t``. ``sorted_indices`` (and its
    inverse ``unsorted_indices``) map the sorted batch back to the original order.
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        return super().__new__(cls, *_packed_sequence_init_args(
            data, batch_sizes, sorted_indices, unsorted_indices))

    def pin_memory(self):
        return type(self)(self.data.pin_memory(), self.batch_sizes,
                          _bind(self.sorted_indices, lambda t: t.pin_memory()),
                          _bind(self.unsorted_indices, lambda t: t.pin_memory()))

    def to(self, *args, **kwargs):
        """``data.to(*args, **kwargs)``; the indices follow the data's device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self

        def call_to(t):
            return t.to(data.device)
        return type(self)(data, self.batch_sizes, _bind(self.sorted_indices, call_to),
                          _bind(self.unsorted_indices, call_to))

    def cuda(self, *args, **kwargs):
        kwargs.setdefault("device", "cuda")
        return self.to(*args, **kwargs)

    def cpu(self, *args, **kwargs):
        kwargs["device"] = "cpu"
        return self.to(*args, **kwargs)

    def double(self):
        return self.to(dtype=np.float64)

    def float(self):
        return self.to(dtype=np.float32)

    def half(self):
        return self.to(dtype=np.float16)

    def long(self):
        return self.to(dtype=np.int64)

    def int(self):
        return self.to(dtype=np.int32)

    def short(self):
        return self.to(dtype=np.int16)

    def char(self):
        return self.to(dtype=np.int8)

    def byte(self):
        return self.to(dtype=np.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()


def _packed_sequence_init_args(data, batch_sizes=None, sorted_indices=None,
                               unsorted_indices=None):
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        if batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never "
                "be created manually. They should be instantiated by functions like "
                "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return data, batch_sizes, sorted_indices, unsorted_indices
    if not (isinstance(data, (list, tuple)) and len(data) == 2):
        raise AssertionError("Expected data to be a list or tuple of length 2")
    return data[0], data[1], sorted_indices, unsorted_indices


def invert_permutation(permutation):
    """The inverse of the permutation ``permutation`` (None stays None)."""
    if permutation is None:
        return None
    output = empty_like(permutation)
    output.scatter_(0, permutation, arange(0, permutation.numel(), device=permutation.device))
    return output


def _lengths_list(lengths):
    if isinstance(lengths, Tensor):
        return [int(v) for v in lengths.to(dtype=np.int64).tolist()]
    return [int(v) for v in as_tensor(lengths, dtype=np.int64).tolist()]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded ``(T, B, *)`` batch (``(B, T, *)`` with ``batch_first``) of sequences of
    ``lengths``; with ``enforce_sorted`` the lengths must already be decreasing."""
    if isinstance(lengths, Tensor):
        lengths = lengths.to(dtype=np.int64)
    else:
        lengths = as_tensor(lengths, dtype=np.int64, device="cpu")
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = ops.sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    lens = _lengths_list(lengths)
    if input.dim() < 2:
        raise RuntimeError("pack_padded_sequence: Expected input to have at least 2 dims")
    if batch_first:
        input = input.transpose(0, 1)
    steps, batch = input.shape[0], input.shape[1]
    if len(lens) != batch:
        raise RuntimeError("Expected `len(lengths)` to be equal to batch_size, but got %d "
                           "(batch_size=%d)" % (len(lens), batch))
    if lens and lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if any(a < b for a, b in zip(lens, lens[1:])):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
            "to sidestep this requirement if you do not need ONNX exportability.")
    if lens and lens[0] > steps:
        raise RuntimeError("pack_padded_sequence: a length (%d) exceeds the padded length %d"
                           % (lens[0], steps))
    sizes = [sum(1 for n in lens if n > t) for t in range(lens[0] if lens else 0)]
    idx = [t * batch + b for t, bs in enumerate(sizes) for b in range(bs)]
    flat = input.reshape((steps * batch,) + tuple(input.shape[2:]))
    data = _PackPadded.apply(flat, as_tensor(idx, dtype=np.int64, device=input.device))
    return PackedSequence(data, as_tensor(sizes, dtype=np.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo ``pack_padded_sequence``: ``(padded, lengths)`` in the original batch order."""
    sizes = [int(v) for v in sequence.batch_sizes.tolist()]
    max_seq_length = len(sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             "sequence in input, but got total_length=%d and max sequence "
                             "length being %d" % (total_length, max_seq_length))
        max_seq_length = total_length
    data = sequence.data
    batch = sizes[0] if sizes else 0
    steps = []
    off = 0
    trail = tuple(data.shape[1:])
    for t in range(max_seq_length):
        bs = sizes[t] if t < len(sizes) else 0
        step = data[off:off + bs]
        off += bs
        if bs < batch:
            fill = ops.full((batch - bs,) + trail, padding_value, dtype=data.dtype,
                            device=data.device)
            step = ops.cat([step, fill], 0)
        steps.append(step)
    padded = ops.stack(steps, 1 if batch_first else 0)
    lens = [sum(1 for s in sizes if s > b) for b in range(batch)]
    lengths = as_tensor(lens, dtype=np.int64)
    if sequence.unsorted_indices is not None:
        return (padded.index_select(0 if batch_first else 1, sequence.unsorted_indices),
                lengths[sequence.unsorted_indices.cpu()])
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of different lengths into ``(T, B, *)`` (``(B, T, *)`` with
    ``batch_first``), filling with ``padding_value`` on ``padding_side``."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           "of type: %s" % type(sequences))
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError("Expected padding_side to be one of left or right, but got %s."
                           % padding_side)
    first = sequences[0]
    if first.dim() == 0:
        raise RuntimeError("ArrayRef: invalid slice, N = 1; size = 0")
    for seq in sequences:
        if seq.dim() == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    max_len = max(s.size(0) for s in sequences)
    n = len(sequences)
    out_dims = ((n, max_len) if batch_first else (max_len, n)) + tuple(first.shape[1:])
    # NOTE: as torch, each sequence is copied (broadcast, cast to the first one's dtype) into a
    # slice of a filled tensor, so the result's node is CopySlices.
    out = ops.full(out_dims, padding_value, dtype=first.dtype, device=first.device)
    for i, seq in enumerate(sequences):
        length = seq.size(0)
        start = max_len - length if padding_side == "left" else 0
        if batch_first:
            out.select(0, i).narrow(0, start, length).copy_(seq)
        else:
            out.narrow(0, start, length).select(1, i).copy_(seq)
    return out


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch back into its sequences (a list of tensors).

    As torch, a time-major ``padded_sequences`` is transposed in place.
    """
    unpadded_sequences = []
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    max_length = padded_sequences.shape[1]
    idx = arange(max_length, device=lengths.device)
    for seq, length in zip(padded_sequences, lengths):
        mask = idx < length
        unpadded_sequences.append(seq[mask])
    return unpadded_sequences


def pack_sequence(sequences, enforce_sorted=True):
    """``pack_padded_sequence(pad_sequence(sequences), lengths)``."""
    lengths = as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences a PackedSequence holds, in the original order."""
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
