"""torch.func's rearrange, replace_all_batch_norm_modules_ and debug_unwrap against torch."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

X = np.random.default_rng(0).standard_normal((2, 6, 4)).astype(np.float32)

PATTERNS = [
    ("b (h w) c -> b h w c", dict(h=2)),
    ("b (h w) c -> b (w h) c", dict(w=3)),
    ("b (h1 h) c -> (b h1) h c", dict(h1=3)),
    ("b h c -> c (h b)", {}),
    ("b h c -> (b h c)", {}),
    ("b h c -> b h c 1", {}),
    ("b h c -> b h () c", {}),
    ("b h c -> b (h 1 c)", {}),
    ("... c -> c ...", {}),
    ("b ... -> ... b", {}),
    ("... -> ...", {}),
    ("a b c ... -> ... (a b) c", {}),
    ("b () c -> b c", {}),          # torch sums the anonymous axis away, whatever its size
    ("b 1 c -> c b", {}),
    # errors: functorch.dim's binding, the parser and the validator
    ("b (h w) c -> b h w c", {}),
    ("b (h w) c -> b h w c", dict(h=4)),
    ("b (h w) c -> b h w c", dict(h=2, w=2)),
    ("b h c -> b h c", dict(h=5)),
    ("a b -> a b", {}),
    ("a b c d ... -> a b c d ...", {}),
    ("b h c d e -> b h c d e", {}),
    ("b h c -> b c", {}),
    ("b h 3 -> b h", {}),
    ("b h c -> b h c", dict(q=2)),
    ("b h c -> b h c ...", {}),
    ("b (h ...) c -> b h c", {}),
    ("b h.c -> b h c", {}),
    ("b .... -> b", {}),
    ("b (h (w)) c -> b h c", {}),
    ("b h) c -> b h c", {}),
    ("b (h c -> b h c", {}),
    ("b h h -> b h", {}),
    ("b h c -> b h c -> x", {}),
    ("b h c", {}),
    ("_b h c -> b h c", {}),
    ("b h$ c -> b h c", {}),
    ("b h 0 -> b h", {}),
]


def _run(lib, fn):
    try:
        r = fn()
    except Exception as e:     # noqa: BLE001
        return type(e).__name__, str(e), None
    return "ok", tuple(r.shape), r.detach().numpy()


@pytest.mark.parametrize("pattern,lengths", PATTERNS)
def test_rearrange_matches_torch(pattern, lengths):
    t = _run(torch, lambda: torch.func.rearrange(torch.tensor(X), pattern, **lengths))
    e = _run(ember, lambda: ember.func.rearrange(ember.tensor(X), pattern, **lengths))
    assert e[:2] == t[:2]
    if t[2] is not None:
        np.testing.assert_allclose(e[2], t[2], rtol=1e-6, atol=1e-6)


def test_rearrange_bad_length_type():
    for lib in (torch, ember):
        with pytest.raises(TypeError, match="rearrange axis lengths must be integers, got: "
                                            "<class 'float'>"):
            lib.func.rearrange(lib.zeros(2, 6), "a (b c) -> a b c", b=2.5)


def test_rearrange_list_grad_and_dtype():
    rng = np.random.default_rng(1)
    parts = [rng.standard_normal((3, 4)) for _ in range(2)]
    up = rng.standard_normal((4, 6))
    out = []
    for lib in (torch, ember):
        ts = [lib.tensor(p, requires_grad=True) for p in parts]
        r = lib.func.rearrange(ts, "n a b -> b (n a)")
        (r * lib.tensor(up)).sum().backward()
        out.append((r.dtype == lib.float64, r.detach().numpy(), [t.grad.numpy() for t in ts]))
    assert out[0][0] and out[1][0]
    np.testing.assert_allclose(out[1][1], out[0][1])
    for a, b in zip(out[0][2], out[1][2]):
        np.testing.assert_allclose(b, a)
    ints = np.arange(12, dtype=np.int32).reshape(2, 3, 2)
    t = torch.func.rearrange(torch.tensor(ints), "a () b -> b a")
    e = ember.func.rearrange(ember.tensor(ints), "a () b -> b a")
    assert str(e.dtype) == str(t.dtype)
    np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_replace_all_batch_norm_modules_():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 3, 5, 5)).astype(np.float32)
    res = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        inner = lib.nn.Sequential(lib.nn.BatchNorm2d(3), lib.nn.BatchNorm2d(3,
                                                                              affine=False))
        root = lib.nn.Sequential(lib.nn.Identity(), inner,
                                 lib.nn.BatchNorm2d(3, track_running_stats=False))
        r = lib.func.replace_all_batch_norm_modules_(root)
        bn = inner[0]
        root.eval()
        y = root(lib.tensor(x))
        res.append((r is root, list(root.state_dict()), bn.running_mean, bn.running_var,
                    bn.num_batches_tracked, bn.track_running_stats, repr(root),
                    [n for n, _ in root.named_buffers()], y.detach().numpy()))
        lone = lib.nn.BatchNorm1d(2)
        assert lib.func.replace_all_batch_norm_modules_(lone) is lone
        assert lone.running_mean is None and not lone.track_running_stats
    t, e = res
    assert e[:8] == t[:8]
    np.testing.assert_allclose(e[8], t[8], rtol=1e-5, atol=1e-5)


def test_debug_unwrap():
    shapes = {}
    for lib in (torch, ember):
        seen = []

        def f(x):
            seen.append(lib.func.debug_unwrap(x))
            seen.append(lib.func.debug_unwrap(x, recurse=False))
            return x * 2
        x = lib.arange(12.0).reshape(3, 4)
        lib.func.vmap(f, in_dims=1)(x)
        lib.func.vmap(lib.func.vmap(f))(lib.arange(24.0).reshape(2, 3, 4))
        assert lib.func.debug_unwrap(x) is x
        shapes[lib.__name__] = ([tuple(s.shape) for s in seen], seen[0].numpy().tolist())
    assert shapes["ember"] == shapes["torch"]


def test_exports():
    for name in ("rearrange", "replace_all_batch_norm_modules_", "debug_unwrap"):
        assert name in ember.func.__all__
    assert set(torch.func.__all__) <= set(ember.func.__all__)
