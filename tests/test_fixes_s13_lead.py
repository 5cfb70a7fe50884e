"""Session 13 fixes in the machinery, each checked against torch."""
import pytest

import ember


def _offsets(lib):
    x = lib.arange(10.0)
    y = x[3:]
    return [y.storage_offset(), y.detach().storage_offset(), y.data.storage_offset(),
            y.clone().storage_offset(), x[2:][1:].storage_offset(),
            y.detach()[2:].storage_offset(), y.detach().detach().storage_offset(),
            x.narrow(0, 2, 3).data.detach().storage_offset(), x.detach().storage_offset()]


def test_detached_views_keep_their_storage_offset(torch):
    assert _offsets(ember) == _offsets(torch)


def test_detached_view_writes_reach_the_base(torch):
    for lib in (ember, torch):
        x = lib.zeros(5)
        x[1:].detach()[1:].fill_(2.0)
        assert x.tolist() == [0.0, 0.0, 2.0, 2.0, 2.0]
