"""ember's random streams are torch's CPU streams: after ``manual_seed(s)`` every sampling
function, in-place fill, initialiser and sampler gives torch's numbers, value for value, and
leaves the generator where torch leaves it (checked by one more draw after each case)."""
import math

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

# torch and ember both warn that float32 randint bounds beyond 2**24 are inexact
pytestmark = pytest.mark.filterwarnings("ignore:.*is out of bounds:UserWarning")

SIZES = [1, 7, 15, 16, 17, 31, 100, 1000]
FLOATS = ["float32", "float64"]


def _np(t):
    if hasattr(t, "detach"):
        t = t.detach()
    return np.asarray(t.cpu().numpy() if hasattr(t, "cpu") else t.numpy())


def _run(fn, seed=0, generator=False):
    """``fn(lib, gen)`` in ember and torch from the same seed; returns both results and one
    more draw from each (the stream position after the call)."""
    out = []
    for lib in (ember, torch):
        if generator:
            gen = lib.Generator().manual_seed(seed)
            lib.manual_seed(seed + 1)
        else:
            gen = None
            lib.manual_seed(seed)
        res = fn(lib, gen)
        after = lib.rand(3, generator=gen, dtype=lib.float64)
        out.append((res, after))
    return out


def _same(fn, seed=0, generator=False, exact=True, rtol=0, atol=0):
    (e, e_next), (t, t_next) = _run(fn, seed, generator)
    es, ts = (e, t) if isinstance(e, (tuple, list)) else ((e,), (t,))
    for a, b in zip(es, ts):
        if isinstance(a, (int, float)):
            assert a == b
            continue
        a, b = _np(a), _np(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        if exact:
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    np.testing.assert_array_equal(_np(e_next), _np(t_next))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("generator", [False, True])
def test_rand_randn(n, dtype, generator):
    def fn(lib, g):
        d = getattr(lib, dtype)
        return (lib.rand(n, dtype=d, generator=g), lib.randn(n, dtype=d, generator=g),
                lib.randn(n, dtype=d, generator=g), lib.rand(2, 3, dtype=d, generator=g))
    _same(fn, generator=generator)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_fills(n, dtype):
    def fn(lib, g):
        d = getattr(lib, dtype)
        x = lib.empty(n, dtype=d)
        return (x.clone().uniform_(-0.3, 0.7), x.clone().uniform_(2.2, 5.9),
                x.clone().normal_(1.5, 0.7), x.clone().normal_(-2.0, 3.0),
                x.clone().exponential_(2.0), x.clone().cauchy_(0.5, 2.0),
                x.clone().log_normal_(0.2, 0.5), x.clone().geometric_(0.3),
                x.clone().bernoulli_(0.3), x.clone().bernoulli_(lib.full((n,), 0.6, dtype=d)),
                lib.normal(0.5, 2.0, (n,), dtype=d))
    _same(fn)


def test_normal_cache_interleaved():
    # the scalar Box-Muller caches its second value in the generator: odd sizes below 16
    def fn(lib, g):
        outs = []
        for n, d in [(1, lib.float64), (3, lib.float32), (1, lib.float32), (20, lib.float64),
                     (5, lib.float64), (2, lib.float32), (16, lib.float32), (1, lib.float64)]:
            outs.append(lib.randn(n, dtype=d, generator=g))
            outs.append(lib.rand(1, generator=g))
        return outs
    _same(fn)
    _same(fn, generator=True)


def test_normal_tensor_args_and_noncontiguous():
    def fn(lib, g):
        m = lib.arange(20.0).reshape(4, 5)
        s = lib.linspace(0.1, 2.0, 5)
        t = lib.zeros(6, 7).t()                     # filled in memory order
        u = lib.zeros(8, 9, dtype=lib.float64)[:, ::2]
        return (lib.normal(m, s), lib.normal(m, 0.5), lib.normal(1.0, s),
                t.normal_(), u.normal_(1.0, 2.0), lib.zeros(5, 4).t().uniform_(),
                lib.randn_like(m), lib.rand_like(s))
    _same(fn)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8", "float32", "float64"])
def test_randint_random(n, dtype):
    def fn(lib, g):
        d = getattr(lib, dtype)
        hi = 200 if dtype == "uint8" else 1000
        out = [lib.randint(3, hi, (n,), dtype=d), lib.randint(7, (n,), dtype=d),
               lib.empty(n, dtype=d).random_(), lib.empty(n, dtype=d).random_(5),
               lib.empty(n, dtype=d).random_(2, 9), lib.randint_like(lib.zeros(n, dtype=d), 4, 9)]
        if dtype in ("int64", "float32", "float64"):
            out.append(lib.randint(-2 ** 40, 2 ** 41, (n,), dtype=d))     # 64-bit draws
        if dtype == "int64":
            out.append(lib.empty(n, dtype=d).random_(-2 ** 63, None))
            out.append(lib.empty(n, dtype=d).random_(5, None))
        return out
    _same(fn)
    _same(fn, generator=True)


def test_random_bool():
    _same(lambda lib, g: lib.empty(50, dtype=lib.bool).random_())


@pytest.mark.parametrize("n", [0, 1, 2, 7, 16, 17, 100, 1000, 5000])
def test_randperm(n):
    _same(lambda lib, g: (lib.randperm(n, generator=g), lib.randperm(n, generator=g,
                                                                        dtype=lib.float32)))
    _same(lambda lib, g: lib.randperm(n, generator=g), generator=True)


@pytest.mark.parametrize("replacement", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
def test_multinomial(replacement, dtype):
    def fn(lib, g):
        d = getattr(lib, dtype)
        p = lib.tensor([[0.1, 0.2, 0.3, 0.4, 0.0, 1.5], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]], dtype=d)
        return (lib.multinomial(p, 4, replacement, generator=g),
                lib.multinomial(p[0], 1, replacement, generator=g),
                lib.multinomial(p[1], 6 if not replacement else 40, replacement, generator=g))
    _same(fn)
    _same(fn, generator=True)


def test_bernoulli_functional_and_dropout():
    def fn(lib, g):
        p = lib.rand(4, 5, dtype=lib.float64)
        x = lib.ones(37, 3)
        return (lib.bernoulli(p, generator=g), lib.bernoulli(p.float(), generator=g),
                lib.bernoulli(p, 0.25, generator=g), lib.nn.functional.dropout(x, 0.4),
                lib.nn.Dropout(0.2)(x))
    _same(fn)


def test_poisson():
    def fn(lib, g):
        rates = lib.tensor([0.0, 0.5, 3.0, 9.9, 10.0, 25.0, 400.0] * 3, dtype=lib.float64)
        return lib.poisson(rates, generator=g), lib.poisson(rates.float())
    _same(fn)


def test_state_round_trip_and_torch_layout():
    ember.manual_seed(123)
    torch.manual_seed(123)
    ember.randn(3, dtype=ember.float64)            # leaves a cached normal in both
    torch.randn(3, dtype=torch.float64)
    es, ts = ember.get_rng_state(), torch.get_rng_state()
    assert es.dtype is ember.uint8 and tuple(es.shape) == (5056,)
    np.testing.assert_array_equal(_np(es), _np(ts))
    a = ember.randn(5)
    ember.set_rng_state(es)
    np.testing.assert_array_equal(_np(ember.randn(5)), _np(a))
    # a state saved by torch loads in ember (and gives torch's next numbers)
    torch.randn(1000)
    ember.set_rng_state(ember.tensor(_np(torch.get_rng_state())))
    np.testing.assert_array_equal(_np(ember.randn(3, dtype=ember.float64)),
                                  _np(torch.randn(3, dtype=torch.float64)))
    g = ember.Generator().manual_seed(5)
    st = g.get_state()
    x = ember.rand(4, generator=g)
    assert ember.rand(4, generator=g.set_state(st)).tolist() == x.tolist()
    with pytest.raises(RuntimeError, match="of size 5056"):
        g.set_state(ember.zeros(10, dtype=ember.uint8))
    with pytest.raises(TypeError, match="ByteTensor"):
        g.set_state(ember.zeros(5056))
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        g.set_state(ember.zeros(5056, dtype=ember.uint8))


def test_seeds():
    for s in [0, 1, 2 ** 32 + 7, 2 ** 64 - 1, -1, -2 ** 63]:
        assert ember.manual_seed(s).initial_seed() == torch.manual_seed(s).initial_seed()
        assert ember.rand(3).tolist() == torch.rand(3).tolist()
    assert ember.Generator().initial_seed() == torch.Generator().initial_seed()
    for bad in [2 ** 64, -2 ** 63 - 1]:
        with pytest.raises(ValueError, match="Overflow"):
            ember.manual_seed(bad)
    with pytest.raises(RuntimeError, match="expected a long"):
        ember.Generator().manual_seed(1.5)
    g = ember.Generator()
    s = g.seed()
    assert g.initial_seed() == s and 0 <= s < 2 ** 64
    with ember.random.fork_rng():
        ember.rand(5)
    ember.manual_seed(3)
    a = ember.rand(2)
    ember.manual_seed(3)
    with ember.random.fork_rng():
        ember.rand(7)
    assert ember.rand(2).tolist() == a.tolist()


def test_fresh_seed_per_process():
    import subprocess
    import sys
    code = "import ember; print(ember.initial_seed())"
    seeds = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout for _ in range(2)}
    assert len(seeds) == 2


@pytest.mark.parametrize("init", ["uniform_", "normal_", "kaiming_uniform_", "kaiming_normal_",
                                  "xavier_uniform_", "xavier_normal_", "trunc_normal_",
                                  "trunc_normal_narrow", "orthogonal_", "sparse_"])
@pytest.mark.parametrize("shape", [(3, 5), (16, 8), (7, 4, 3, 3)])
def test_nn_init(init, shape):
    args = {"sparse_": (0.3,), "trunc_normal_": (0.1, 0.5, -0.4, 1.0),
            "trunc_normal_narrow": (0.0, 1.0, 1.5, 2.5)}.get(init, ())
    name = init.replace("narrow", "")
    if init == "sparse_" and len(shape) != 2:
        return

    def fn(lib, g):
        w = lib.empty(*shape)
        getattr(lib.nn.init, name)(w, *args, **({} if init == "sparse_" else {"generator": g}))
        return w
    # orthogonal_ takes a QR decomposition of the (exact) normal sample: LAPACK is MKL in
    # torch and OpenBLAS in NumPy, so the two agree to rounding only.
    exact = init != "orthogonal_"
    _same(fn, exact=exact, rtol=1e-5, atol=1e-6)
    _same(fn, generator=True, exact=exact, rtol=1e-5, atol=1e-6)


LAYERS = [
    ("Linear", (5, 3)), ("Linear", (17, 9, False)), ("Bilinear", (3, 4, 5)),
    ("Conv1d", (2, 4, 3)), ("Conv2d", (3, 8, 3)), ("Conv3d", (2, 3, 2)),
    ("ConvTranspose2d", (3, 5, 3)), ("ConvTranspose1d", (4, 2, 5)),
    ("Embedding", (10, 6)), ("Embedding", (5, 3, 1)), ("EmbeddingBag", (10, 6)),
    ("RNN", (4, 6)), ("LSTM", (5, 7, 2)), ("GRU", (3, 4)),
    ("LSTM", (3, 5, 1, True, False, 0.0, True)), ("RNNCell", (3, 4)), ("LSTMCell", (3, 4)),
    ("GRUCell", (4, 2)), ("BatchNorm2d", (4,)), ("LayerNorm", (6,)), ("PReLU", ()),
    ("MultiheadAttention", (8, 2)), ("TransformerEncoderLayer", (8, 2, 16)),
]


@pytest.mark.parametrize("name,args", LAYERS, ids=[n + str(i) for i, (n, _) in
                                                   enumerate(LAYERS)])
def test_layer_init(name, args):
    if not hasattr(ember.nn, name):
        pytest.skip("ember has no nn.%s" % name)
    built = []
    for lib in (ember, torch):
        lib.manual_seed(7)
        m = getattr(lib.nn, name)(*args)
        built.append((dict(m.named_parameters()), lib.rand(2).tolist()))
    (ep, e_next), (tp, t_next) = built
    assert list(ep) == list(tp)
    for k in tp:
        np.testing.assert_array_equal(_np(ep[k]), _np(tp[k]), err_msg=k)
    assert e_next == t_next


def test_model_init():
    def make(lib):
        nn = lib.nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(1, 4, 3)
                self.bn = nn.BatchNorm2d(4)
                self.lstm = nn.LSTM(4, 8, batch_first=True)
                self.emb = nn.Embedding(20, 4)
                self.fc = nn.Linear(8, 3)
        lib.manual_seed(0)
        return {k: _np(v) for k, v in Net().state_dict().items()}
    e, t = make(ember), make(torch)
    assert list(e) == list(t)
    for k in t:
        np.testing.assert_array_equal(e[k], t[k], err_msg=k)


def _loader_orders(lib, **kw):
    ds = list(range(23))
    loader = lib.utils.data.DataLoader(ds, batch_size=5, **kw)
    return [[b.tolist() for b in loader] for _ in range(2)]


def test_dataloader_shuffle_and_samplers():
    for kw in [dict(shuffle=True), dict(shuffle=True, drop_last=True)]:
        ember.manual_seed(3)
        torch.manual_seed(3)
        assert _loader_orders(ember, **kw) == _loader_orders(torch, **kw)
        assert ember.rand(2).tolist() == torch.rand(2).tolist()
    e = _loader_orders(ember, shuffle=True, generator=ember.Generator().manual_seed(9))
    t = _loader_orders(torch, shuffle=True, generator=torch.Generator().manual_seed(9))
    assert e == t

    def samplers(lib, g):
        U = lib.utils.data
        ds = list(range(40))
        return [list(U.RandomSampler(ds, generator=g)),
                list(U.RandomSampler(ds, replacement=True, num_samples=75, generator=g)),
                list(U.RandomSampler(ds, num_samples=95, generator=g)),
                list(U.RandomSampler(ds)),
                list(U.RandomSampler(ds, replacement=True, num_samples=33)),
                list(U.SubsetRandomSampler([4, 8, 15, 16, 23, 42], generator=g)),
                list(U.WeightedRandomSampler([0.1, 0.9, 0.4, 0.0, 2.0], 12, generator=g)),
                list(U.WeightedRandomSampler([0.1, 0.9, 0.4, 0.0, 2.0], 3, replacement=False,
                                             generator=g))]
    for gen in (False, True):
        (e, e_next), (t, t_next) = _run(samplers, seed=11, generator=gen)
        assert e == t
        assert _np(e_next).tolist() == _np(t_next).tolist()


def test_random_sampler_is_lazy():
    ds = list(range(1000))
    for lib in (ember, torch):
        lib.manual_seed(0)
    it_e = iter(ember.utils.data.RandomSampler(ds, replacement=True, num_samples=int(1e10)))
    it_t = iter(torch.utils.data.RandomSampler(ds, replacement=True, num_samples=int(1e10)))
    assert [next(it_e) for _ in range(100)] == [next(it_t) for _ in range(100)]


def test_float32_box_muller_large():
    # the vectorised float32 normal_ (torch's AVX2 kernel, also used on AVX512 machines)
    if torch.backends.cpu.get_cpu_capability() not in ("AVX2", "AVX512"):
        pytest.skip("torch's float32 normal_ takes its scalar std::log/sin/cos path here")
    _same(lambda lib, g: (lib.randn(100003), lib.empty(4099).normal_(0.3, 1.7)))
    _same(lambda lib, g: lib.randn(50001, dtype=lib.float64))


def test_uniform_bounds_exact():
    # torch computes x * (to - from) + from with a fused multiply-add
    _same(lambda lib, g: [lib.empty(5000, dtype=d).uniform_(lo, hi)
                          for d in (lib.float32, lib.float64)
                          for lo, hi in [(-1 / 3, 1 / 3), (1e-3, math.pi), (-7.5, -2.25)]])


def test_random_split_draws_torchs_permutation():
    torch = pytest.importorskip("torch")
    for seed, lengths in ((42, [3, 7]), (0, [0.3, 0.7]), (5, [1, 1, 8])):
        got = [list(s) for s in ember.utils.data.random_split(
            range(10), lengths, generator=ember.Generator().manual_seed(seed))]
        want = [list(s) for s in torch.utils.data.random_split(
            range(10), lengths, generator=torch.Generator().manual_seed(seed))]
        assert got == want
