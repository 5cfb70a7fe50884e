"""Regressions found by the misc-area programs (tests/programs/p_r4misc_*.py), against torch."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("body", ["randn", "rand_like", "dropout", "randint", "bernoulli"])
def test_vmap_randomness_error_leaves_generator_untouched(body):
    # vmap's 'error' mode noticed the draw after it happened, so the global stream had moved
    def make(lib):
        return {"randn": lambda a: a + lib.randn(2),
                "rand_like": lambda a: a * lib.rand_like(a),
                "dropout": lambda a: lib.nn.functional.dropout(a, 0.5),
                "randint": lambda a: a + lib.randint(0, 5, (2,)),
                "bernoulli": lambda a: lib.bernoulli(a * 0.5)}[body]
    out = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        lib.randn(3)        # leave a cached Box-Muller value behind on both
        with pytest.raises(RuntimeError, match="randomness error mode"):
            lib.func.vmap(make(lib))(lib.ones(3, 2))
        out.append(lib.randn(5).numpy())
    np.testing.assert_array_equal(*out)


def test_vmap_randomness_error_then_same_mode():
    out = []
    for lib in (ember, torch):
        lib.manual_seed(1)
        try:
            lib.func.vmap(lambda a: a + lib.randn(2))(lib.ones(3, 2))
        except RuntimeError:
            pass
        out.append(lib.func.vmap(lambda a: a + lib.randn(2), randomness="same")(
            lib.ones(3, 2)).numpy())
    np.testing.assert_array_equal(*out)


def _sparse(lib, coalesce):
    s = lib.sparse_coo_tensor(lib.tensor([[1, 0, 1], [2, 0, 2]]),
                              lib.tensor([[1., 2.], [3., 4.], [5., 6.]]), (2, 3, 2))
    return s.coalesce() if coalesce else s


@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("coalesce", [True, False])
@pytest.mark.parametrize("direction", ["ember->torch", "torch->ember", "ember->ember"])
def test_save_load_sparse_coo_keeps_layout(direction, coalesce, weights_only):
    # torch.save of a sparse COO tensor wrote it dense; torch's checkpoints failed to load
    import io
    import warnings
    src, dst = {"ember->torch": (ember, torch), "torch->ember": (torch, ember),
                "ember->ember": (ember, ember)}[direction]
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        src.save({"adj": _sparse(src, coalesce), "w": src.ones(2)}, buf)
    buf.seek(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # (torch's "sparse invariant checks" notice)
        got = dst.load(buf, weights_only=weights_only)["adj"]
        want = _sparse(torch, coalesce)
    assert str(got.layout) == "torch.sparse_coo"
    assert got.is_coalesced() == want.is_coalesced() and got._nnz() == want._nnz()
    assert tuple(got.shape) == tuple(want.shape) and str(got.dtype) == str(want.dtype)
    np.testing.assert_array_equal(got._indices().numpy(), want._indices().numpy())
    np.testing.assert_array_equal(got._values().numpy(), want._values().numpy())
