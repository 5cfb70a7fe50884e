"""DistributedSampler against torch's: exact index lists without shuffle; with shuffle, the
partition and padding properties (ember's random stream is not torch's)."""
import pytest

from ember.utils.data.distributed import DistributedSampler

SIZES = [1, 5, 10, 11, 17, 100]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("replicas", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("drop_last", [False, True])
def test_order_matches_torch_without_shuffle(torch, n, replicas, drop_last):
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    data = list(range(n))
    for rank in range(replicas):
        if drop_last and n < replicas:
            continue
        ours = DistributedSampler(data, replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = TorchSampler(data, replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs)
        assert len(ours) == len(theirs) and ours.total_size == theirs.total_size


@pytest.mark.parametrize("n", [10, 11, 17, 100])
@pytest.mark.parametrize("replicas", [2, 3, 4])
def test_shuffle_partitions_one_permutation(n, replicas):
    parts = [list(DistributedSampler(range(n), replicas, r, seed=3)) for r in range(replicas)]
    assert len({len(p) for p in parts}) == 1
    merged = [parts[i % replicas][i // replicas] for i in range(sum(map(len, parts)))]
    assert sorted(merged[:n]) == list(range(n))                 # one permutation...
    assert merged[n:] == merged[:len(merged) - n]               # ...padded with its start
    again = [list(DistributedSampler(range(n), replicas, r, seed=3)) for r in range(replicas)]
    assert again == parts                                       # same seed, same epoch
    s = DistributedSampler(range(n), replicas, 0, seed=3)
    s.set_epoch(1)
    assert list(s) != parts[0] or n < 4


def test_drop_last_and_errors_match_torch(torch):
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    for rank in range(3):
        parts = list(DistributedSampler(range(11), 3, rank, drop_last=True))
        assert len(parts) == len(TorchSampler(range(11), 3, rank, drop_last=True)) == 3
    with pytest.raises(ValueError) as want:
        TorchSampler(range(4), 2, 2)
    with pytest.raises(ValueError) as got:
        DistributedSampler(range(4), 2, 2)
    assert str(got.value) == str(want.value)
