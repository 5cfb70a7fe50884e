"""Regression tests for the round-2 vision programs (tests/programs/p_r2vision_*.py), checked
against torch: adaptive pooling's output_size handling, GroupNorm's bias flag and messages,
and the convolution modules' argument messages."""
import importlib

import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(fn, lib):
    try:
        out = fn(lib)
    except Exception as e:    # noqa: BLE001 - the error itself is what is compared
        return ("raise", type(e).__name__, str(e))
    if hasattr(out, "shape"):
        return ("tensor", tuple(out.shape), str(out.dtype).replace("torch.", ""),
                out.detach().double().sum().item())
    return ("value", str(out))


def _sets_sorted(outcome):
    """A message's printed set with its items sorted: a set literal's order comes from the
    hash seed and from the order its .pyc stored it in, which differ between libraries."""
    if outcome[0] != "raise" or "{" not in outcome[2]:
        return outcome
    head, _, rest = outcome[2].partition("{")
    items, _, tail = rest.partition("}")
    return outcome[:2] + (head + "{" + ", ".join(sorted(items.split(", "))) + "}" + tail,)


def _same(fn):
    e, t = _sets_sorted(_outcome(fn, ember)), _sets_sorted(_outcome(fn, torch))
    if e[0] == "tensor" and t[0] == "tensor":
        assert e[1:3] == t[1:3]
        assert e[3] == pytest.approx(t[3], rel=1e-5, abs=1e-6)
    else:
        assert e == t


def _x(L, *shape):
    return L.arange(float(L.tensor(shape).prod().item())).reshape(shape) % 7


ADAPTIVE = [
    ("adaptive_avg_pool2d", (1, 4, 4), (2, 2, 2)),
    ("adaptive_avg_pool2d", (1, 1, 4, 4), (2, 2, 2)),
    ("adaptive_avg_pool2d", (4, 4), (2, 2)),
    ("adaptive_avg_pool2d", (4, 4), (2, None)),
    ("adaptive_avg_pool2d", (1, 4, 4), (None, 2)),
    ("adaptive_avg_pool2d", (1, 4, 4), (3,)),
    ("adaptive_avg_pool2d", (1, 4, 4), ()),
    ("adaptive_avg_pool2d", (1, 4, 4), 3),
    ("adaptive_avg_pool2d", (1, 1, 4, 4), (2, 2.0)),
    ("adaptive_avg_pool2d", (1, 1, 4, 4), [2.0, 2]),
    ("adaptive_avg_pool2d", (1, 1, 4, 4), 2.0),
    ("adaptive_avg_pool2d", (1, 1, 1, 4, 4), (2, 2, 2)),
    ("adaptive_avg_pool2d", (1, 4, 4), (None, None)),
    ("adaptive_avg_pool3d", (2, 4, 4), (2, 2, 2)),
    ("adaptive_avg_pool3d", (1, 2, 4, 4), (2, None, 2)),
    ("adaptive_avg_pool3d", (1, 1, 4, 4, 4), (2, 2)),
    ("adaptive_avg_pool3d", (1, 1, 1, 1, 4, 4), (2, 2, 2, 2)),
    ("adaptive_max_pool2d", (1, 4, 4), (2, 2, 2)),
    ("adaptive_max_pool2d", (4, 4), (2, None)),
    ("adaptive_max_pool2d", (1, 1, 4, 4), (2, 2, 2)),
    ("adaptive_max_pool2d", (1, 4, 4), (2,)),
    ("adaptive_max_pool2d", (1, 1, 1, 4, 4), (2, 2, 2)),
    ("adaptive_max_pool2d", (1, 1, 4, 4), (2, 2.0)),
    ("adaptive_max_pool2d", (1, 5, 6), (None, 4)),
    ("adaptive_max_pool3d", (2, 4, 4), (2, 2, 2)),
    ("adaptive_max_pool3d", (4, 4), (2, None, 1)),
    ("adaptive_max_pool3d", (1, 1, 4, 4, 4), (2, 2)),
    ("adaptive_max_pool3d", (1, 2, 4, 4), (None, 3, 2)),
    ("adaptive_max_pool1d", (4, 4), (2, 2)),
    ("adaptive_max_pool1d", (1, 4, 4), (2,)),
    ("adaptive_avg_pool1d", (4, 4), (2, 2)),
    ("adaptive_avg_pool1d", (1, 4, 4), []),
    ("adaptive_avg_pool1d", (4, 4, 4, 4), (2, 3)),
]


@pytest.mark.parametrize("op,shape,size", ADAPTIVE)
def test_adaptive_pool_output_size(op, shape, size):
    """F's 2-d/3-d adaptive pools fill None from the input and check the input's rank first
    (``_list_with_default``); the kernels then check the number of sizes."""
    _same(lambda L: getattr(L.nn.functional, op)(_x(L, *shape), size))


@pytest.mark.parametrize("cls,shape,size", [("AdaptiveAvgPool2d", (1, 4, 4), (2, 2, 2)),
                                            ("AdaptiveMaxPool2d", (4, 4), (2, None)),
                                            ("AdaptiveAvgPool3d", (1, 4, 4), (1, 1, 1)),
                                            ("AdaptiveMaxPool2d", (2, 3, 5), (None, 2))])
def test_adaptive_pool_modules(cls, shape, size):
    _same(lambda L: getattr(L.nn, cls)(size)(_x(L, *shape)))


def test_adaptive_pool_none_grad():
    def fn(L):
        x = _x(L, 1, 2, 5, 6).requires_grad_(True)
        L.nn.functional.adaptive_max_pool2d(x, (None, 4)).sum().backward()
        return x.grad
    _same(fn)


@pytest.mark.parametrize("args,kw", [((3, 4), {}), ((0, 4), {}), ((2, 4), {"bias": False}),
                                     ((2, 4), {"affine": False, "bias": False}),
                                     ((2, 4), {"affine": False}), ((1, 6), {"eps": 1e-3})])
def test_group_norm_module(args, kw):
    _same(lambda L: repr(L.nn.GroupNorm(*args, **kw)))
    _same(lambda L: sorted(L.nn.GroupNorm(*args, **kw).state_dict().keys()))


def test_group_norm_no_bias_forward_backward():
    def fn(L):
        L.manual_seed(0)
        m = L.nn.GroupNorm(2, 4, bias=False)
        m.weight.data.mul_(1.5)
        x = _x(L, 2, 4, 3).requires_grad_(True)
        (m(x) * _x(L, 2, 4, 3)).sum().backward()
        return L.cat([x.grad.flatten(), m.weight.grad])
    _same(fn)
    _same(lambda L: L.nn.GroupNorm(2, 4, bias=False).bias)


@pytest.mark.parametrize("kw", [{"padding_mode": "zero"}, {"padding_mode": 3},
                                {"padding": "full"}, {"padding": "same", "stride": 2},
                                {"padding_mode": "circular", "padding": "same"}])
@pytest.mark.parametrize("cls", ["Conv1d", "Conv2d", "Conv3d"])
def test_conv_argument_messages(cls, kw):
    """Messages that print a set print it as torch does (the interpreter's set order)."""
    _same(lambda L: repr(getattr(L.nn, cls)(4, 6, 3, **kw)))


def _t(L, *shape, dtype="float32"):
    return L.ones(shape, dtype=getattr(L, dtype))


CONV_CASES = [
    lambda L: L.nn.functional.conv1d(_t(L, 2, 3, 6), _t(L, 4, 3, 3, 3)),
    lambda L: L.nn.functional.conv2d(_t(L, 2, 3, 6, 6), _t(L, 4, 3, 3)),
    lambda L: L.nn.functional.conv2d(_t(L, 2, 3, 6, 6), _t(L, 4, 3, 3, 3, 3)),
    lambda L: L.nn.functional.conv3d(_t(L, 2, 3, 4, 4, 4), _t(L, 4, 3, 3, 3)),
    lambda L: L.nn.functional.conv2d(_t(L, 2, 3, 6, 6), _t(L, 4, 3, 3), stride=(1,)),
    lambda L: L.nn.functional.conv2d(_t(L, 2, 3, 6, 6), _t(L, 4, 3, 3), padding="same"),
    lambda L: L.nn.functional.conv2d(_t(L, 3, 6, 6), _t(L, 4, 3, 3), padding="same"),
    lambda L: L.nn.functional.conv2d(_t(L, 2, 3, 6, 6), _t(L, 4, 3, 3), padding="valid"),
    lambda L: L.nn.functional.conv2d(_t(L, 2, 3, 6, 6), _t(L, 4, 3), padding=1),
    lambda L: L.nn.functional.conv3d(_t(L, 2, 3, 6, 6, 6), _t(L, 4, 3, 3, 3), padding=(1,),
                                     dilation=(2,)),
    lambda L: L.nn.functional.conv_transpose2d(_t(L, 2, 3, 6, 6), _t(L, 3, 2, 3)),
    lambda L: L.nn.functional.conv_transpose2d(_t(L, 2, 3, 6, 6), _t(L, 3, 2, 3), stride=(2,),
                                               padding=(1,), output_padding=(1, 1)),
    lambda L: L.nn.functional.conv_transpose2d(_t(L, 2, 3, 6, 6), _t(L, 3, 2, 3), stride=(2,),
                                               padding=(1,), output_padding=(1,)),
    lambda L: L.nn.functional.conv_transpose1d(_t(L, 2, 3, 6), _t(L, 3, 2, 3, 3)),
    lambda L: L.nn.functional.conv2d(_t(L, 2, 3, 6, 6), _t(L, 4, 3, 3, 3), bias=_t(L, 3)),
    lambda L: L.nn.functional.conv2d(_t(L, 2, 3, 6, 6), _t(L, 4, 3, 3, 3), bias=_t(L, 4, 1)),
    lambda L: L.nn.functional.conv2d(_t(L, 2, 3, 6, 6), _t(L, 4, 3, 3, 3), bias=_t(L)),
    lambda L: L.nn.functional.conv2d(_t(L, 2, 3, 6, 6), _t(L, 4, 3, 7, 7), bias=_t(L, 3)),
    lambda L: L.nn.functional.conv2d(_t(L, 2, 3, 6, 6), _t(L, 4, 2, 3, 3), bias=_t(L, 3)),
    lambda L: L.nn.functional.conv2d(_t(L, 2, 3, 6, 6), _t(L, 4, 3, 3, 3), bias=_t(L, 3),
                                     padding="same"),
    lambda L: L.nn.functional.conv2d(_t(L, 3, 6, 6), _t(L, 4, 3, 3, 3), bias=_t(L, 3)),
    lambda L: L.nn.functional.conv2d(_t(L, 0, 3, 6, 6), _t(L, 4, 3, 3, 3), bias=_t(L, 3)),
    lambda L: L.nn.functional.conv2d(_t(L, 6, 6), _t(L, 4, 3, 3, 3),
                                     bias=_t(L, 3, dtype="float64")),
    lambda L: L.nn.functional.conv2d(_t(L, 3, 6, 6, dtype="int64"), _t(L, 4, 3, 3, 3),
                                     bias=_t(L, 4)),
    lambda L: L.nn.functional.conv1d(_t(L, 2, 3, 6), _t(L, 4, 3, 3), bias=_t(L, 5)),
    lambda L: L.nn.functional.conv3d(_t(L, 2, 3, 4, 4, 4), _t(L, 4, 3, 3, 3, 3), bias=_t(L, 5)),
    lambda L: L.nn.functional.conv_transpose2d(_t(L, 2, 3, 6, 6), _t(L, 3, 2, 3, 3),
                                               bias=_t(L, 3)),
    lambda L: L.nn.functional.conv_transpose2d(_t(L, 2, 3, 6, 6), _t(L, 3, 2, 3, 3),
                                               bias=_t(L, 2, 2)),
    lambda L: L.nn.functional.conv_transpose2d(_t(L, 2, 3, 6, 6), _t(L, 3, 2, 3, 3),
                                               bias=_t(L, 4), groups=3),
    lambda L: L.nn.functional.conv_transpose1d(_t(L, 2, 3, 6), _t(L, 3, 2, 3), bias=_t(L, 3)),
    lambda L: L.nn.functional.conv_transpose3d(_t(L, 2, 3, 4, 4, 4), _t(L, 3, 2, 3, 3, 3),
                                               bias=_t(L, 3)),
    lambda L: L.convolution(_t(L, 2, 3, 6, 6), _t(L, 4, 3, 3, 3), _t(L, 3), [1, 1], [0, 0],
                            [1, 1], False, [0, 0], 1),
    lambda L: L.convolution(_t(L, 2, 3, 6, 6, dtype="float64"), _t(L, 4, 3, 3, 3,
                                                                   dtype="float64"),
                            _t(L, 4), [1, 1], [0, 0], [1, 1], False, [0, 0], 1),
    lambda L: L.convolution(_t(L, 1, 1, 3, 3), _t(L, 1, 1, 2, 2), _t(L, 1, dtype="float64"),
                            [1, 1], [0, 0], [1, 1], False, [0, 0], 1),
    lambda L: L.convolution(_t(L, 1, 1, 3), _t(L, 1, 1, 2), _t(L, 1, dtype="float64"), [1],
                            [0], [1], False, [0], 1),
    lambda L: (L.manual_seed(0), L.nn.Conv2d(3, 4, 3)(_t(L, 2, 3, 6, 6)))[1],
]


@pytest.mark.parametrize("i", range(len(CONV_CASES)))
def test_conv_weight_rank_and_bias_shape(i):
    """A weight of another rank and a bias of the wrong shape raise torch's errors (the bias
    was broadcast, or refused by NumPy, before)."""
    _same(CONV_CASES[i])


def test_convolution_bias_cast_grad():
    def fn(L):
        b = _t(L, 1, dtype="float64").requires_grad_(True)
        w = _t(L, 1, 1, 2, 2).requires_grad_(True)
        out = L.convolution(_t(L, 1, 1, 3, 3), w, b, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
        out.sum().backward()
        return (out.dtype, b.grad.dtype, b.grad.item(), type(out.grad_fn).__name__)
    _same(fn)


@pytest.mark.parametrize("size", [(9, 9), [9, 9], (2, 3, 9, 9), [2, 3, 6, 6], (1, 6, 6),
                                  (7,), (2, 3, 7, 7), "size9"])
def test_max_unpool2d_output_size(size):
    """torch drops two leading sizes only from a 4-long output_size, and prints it as given."""
    def fn(L):
        x = L.arange(2 * 3 * 6 * 6, dtype=L.float32).reshape(2, 3, 6, 6) % 5
        y, i = L.nn.functional.max_pool2d(x, 2, return_indices=True)
        s = L.Size([2, 3, 9, 7]) if size == "size9" else size
        return L.nn.functional.max_unpool2d(y, i, 2, output_size=s)
    _same(fn)


@pytest.mark.parametrize("size", [(7,), [6], (3, 3, 7), (9,), [3, 9], (3, 6, 6, 6)])
def test_max_unpool1d_output_size(size):
    def fn(L):
        x = L.arange(3 * 6 * 6, dtype=L.float32).reshape(3, 6, 6) % 5
        y, i = L.nn.functional.max_pool1d(x, 2, return_indices=True)
        return L.nn.functional.max_unpool1d(y, i, 2, output_size=size)
    _same(fn)


def test_same_padding_even_kernel_warns_once():
    import ember.ops.conv as conv_ops
    conv_ops._WARNED_SAME[0] = False
    with pytest.warns(UserWarning, match="padding='same' with even kernel lengths"):
        ember.nn.Conv2d(3, 2, 4, padding="same")(ember.ones(1, 3, 5, 5))


def _fusion(L):
    return importlib.import_module(L.__name__ + ".nn.utils.fusion")


@pytest.mark.parametrize("case", ["linear_features", "conv_no_stats", "linear_no_stats"])
def test_fusion_messages(case):
    def fn(L):
        fusion = _fusion(L)
        if case == "linear_features":
            return fusion.fuse_linear_bn_eval(L.nn.Linear(3, 5).eval(), L.nn.BatchNorm1d(4).eval())
        if case == "conv_no_stats":
            return fusion.fuse_conv_bn_eval(L.nn.Conv2d(2, 2, 1).eval(), L.nn.BatchNorm2d(
                2, track_running_stats=False).eval())
        return fusion.fuse_linear_bn_eval(L.nn.Linear(2, 2).eval(), L.nn.BatchNorm1d(
            2, track_running_stats=False).eval())
    _same(fn)


def test_conv_forward_with_a_transformed_weight():
    """timm's StdConv2d idiom: ``self._conv_forward(x, weight, self.bias)``."""
    def fn(L):
        class StdConv2d(L.nn.Conv2d):
            def forward(self, x):
                w = self.weight
                w = (w - w.mean(dim=(1, 2, 3), keepdim=True)) / (
                    w.var(dim=(1, 2, 3), keepdim=True, unbiased=False) + 1e-6).sqrt()
                return self._conv_forward(x, w, self.bias)
        L.manual_seed(0)
        outs = []
        for mode in ("zeros", "reflect", "circular"):
            m = StdConv2d(3, 4, 3, padding=1, padding_mode=mode).double()
            x = _x(L, 2, 3, 5, 5).double().requires_grad_(True)
            out = m(x)
            out.sum().backward()
            outs += [out.flatten(), x.grad.flatten(), m.weight.grad.flatten()]
        m1 = L.nn.Conv1d(2, 2, 3, padding=1, padding_mode="replicate")
        outs.append(m1._conv_forward(_x(L, 1, 2, 4), m1.weight * 2, None).flatten())
        return L.cat(outs)
    _same(fn)


@pytest.mark.parametrize("size", [None, [9, 9], (1, 3, 10, 10), [8]])
def test_conv_transpose_output_padding_method(size):
    def fn(L):
        L.manual_seed(0)
        m = L.nn.ConvTranspose2d(3, 4, 3, stride=2)
        x = L.ones(1, 3, 4, 4)
        return m._output_padding(x, size, m.stride, m.padding, m.kernel_size, 2, m.dilation)
    _same(fn)


@pytest.mark.parametrize("name", ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
                                  "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
                                  "AvgPool1d", "AvgPool2d", "AvgPool3d", "MaxPool2d", "LPPool2d",
                                  "Conv2d", "ConvTranspose3d", "BatchNorm2d", "InstanceNorm1d",
                                  "GroupNorm", "LayerNorm", "LocalResponseNorm", "RMSNorm"])
def test_class_tree_and_constants(name):
    """isinstance checks against torch's private bases (``_AvgPoolNd``...) behave alike."""
    def fn(L):
        cls = getattr(L.nn, name)
        return ([b.__name__ for b in cls.__mro__[1:-1]], getattr(cls, "__constants__", None))
    _same(fn)
    assert not isinstance(ember.nn.AdaptiveAvgPool2d(2), ember.nn.AdaptiveAvgPool1d)
    assert isinstance(ember.nn.AvgPool2d(2), ember.nn.modules.pooling._AvgPoolNd)


@pytest.mark.parametrize("name,args", [("AdaptiveAvgPool2d", ((2, None),)),
                                       ("AdaptiveMaxPool1d", (3, True)),
                                       ("AvgPool1d", (3, 2, 1)), ("AvgPool3d", (2,))])
def test_pool_module_repr_attrs(name, args):
    def fn(L):
        m = getattr(L.nn, name)(*args)
        return (repr(m), sorted(k for k in vars(m) if not k.startswith("_")))
    _same(fn)
