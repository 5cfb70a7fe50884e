"""Graph parity with torch: ``grad_fn`` and ``next_functions``, node for node.

For every layer of ``ember.nn`` that takes a tensor, every ``nn.*Loss`` and every op-database
sample, the graph is built in ember and in torch from the same inputs and walked breadth first
from the outputs' ``grad_fn`` (nodes deduplicated by identity). Each node must have torch's
class name and torch's edges: as many ``next_functions`` entries, with ``None``,
``AccumulateGrad`` and inner nodes in the same places.

Known differences are marked xfail (strict) with the reason; a fix makes its case xpass, which
fails until the mark is removed.
"""
import numpy as np
import pytest

import ember
from opdb import all_ops, grad_mask

torch = pytest.importorskip("torch")


def graph_signature(outs):
    """``[(node class name, edges)]`` in BFS order; an edge is None, "Acc" or a node index."""
    order, seen, sig = [], {}, []

    def visit(node):
        if id(node) not in seen:
            seen[id(node)] = len(order)
            order.append(node)
        return seen[id(node)]

    for o in outs:
        if getattr(o, "grad_fn", None) is not None:
            visit(o.grad_fn)
    i = 0
    while i < len(order):
        node = order[i]
        i += 1
        edges = []
        for nxt, _ in node.next_functions:
            if nxt is None:
                edges.append(None)
            elif type(nxt).__name__ == "AccumulateGrad":
                edges.append("Acc")
            else:
                edges.append(visit(nxt))
        sig.append((type(node).__name__, edges))
    return sig


def _flat(out):
    stack, flat = [out], []
    while stack:
        o = stack.pop(0)
        if isinstance(o, (tuple, list)):
            stack = list(o) + stack
        elif hasattr(o, "grad_fn"):
            flat.append(o)
    return flat


def _tensors(lib, arrays, mask=None):
    out = []
    for i, a in enumerate(arrays):
        if not isinstance(a, np.ndarray):
            out.append(a)
            continue
        t = lib.tensor(a.copy())
        if a.dtype.kind == "f" and (mask is None or mask[i]):
            t.requires_grad_(True)
        out.append(t)
    return out


def _compare(fn, arrays, mask=None):
    sigs = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        sigs.append(graph_signature(_flat(fn(lib, *_tensors(lib, arrays, mask)))))
    e, t = sigs
    assert e == t, "\nember: %s\ntorch: %s" % (e, t)


def r(*shape, seed=0):
    return np.random.default_rng(seed + len(shape)).standard_normal(shape)


def _idx(*vals):
    return np.array(vals, dtype=np.int64)


# name -> (ctor(nn), inputs, call(module, *inputs) or None, train mode)
LAYERS = {
    "Linear": (lambda nn: nn.Linear(4, 3), [r(5, 4)]),
    "Linear_3d_nobias": (lambda nn: nn.Linear(4, 3, bias=False), [r(2, 5, 4)]),
    "Linear_3d": (lambda nn: nn.Linear(4, 3), [r(2, 5, 4)]),
    "Linear_1d": (lambda nn: nn.Linear(4, 3), [r(4)]),
    "Bilinear": (lambda nn: nn.Bilinear(2, 3, 4), [r(5, 2), r(5, 3)]),
    "Identity": (lambda nn: nn.Identity(), [r(4, 6)]),
    "Flatten": (lambda nn: nn.Flatten(), [r(2, 3, 4)]),
    "Unflatten": (lambda nn: nn.Unflatten(1, (2, 3)), [r(4, 6)]),
    "Conv1d": (lambda nn: nn.Conv1d(2, 4, 3, stride=2, padding=1), [r(2, 2, 9)]),
    "Conv2d": (lambda nn: nn.Conv2d(2, 3, 3), [r(2, 2, 6, 5)]),
    "Conv2d_nobias_groups": (lambda nn: nn.Conv2d(4, 6, 3, groups=2, bias=False),
                             [r(2, 4, 5, 5)]),
    "Conv2d_unbatched": (lambda nn: nn.Conv2d(2, 3, 1), [r(2, 4, 4)]),
    "Conv2d_reflect": (lambda nn: nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"),
                       [r(2, 2, 6, 5)]),
    "Conv3d": (lambda nn: nn.Conv3d(2, 3, 2), [r(1, 2, 3, 3, 3)]),
    "ConvTranspose1d": (lambda nn: nn.ConvTranspose1d(2, 3, 3, stride=2), [r(2, 2, 5)]),
    "ConvTranspose2d": (lambda nn: nn.ConvTranspose2d(4, 2, 3, stride=2, groups=2),
                        [r(2, 4, 3, 4)]),
    "ConvTranspose3d": (lambda nn: nn.ConvTranspose3d(2, 2, 2), [r(1, 2, 2, 2, 2)]),
    "MaxPool1d": (lambda nn: nn.MaxPool1d(2), [r(2, 3, 7)]),
    "MaxPool2d": (lambda nn: nn.MaxPool2d(3, 2, 1), [r(2, 3, 7, 6)]),
    "MaxPool2d_indices": (lambda nn: nn.MaxPool2d(2, return_indices=True), [r(1, 2, 4, 4)]),
    "MaxPool3d": (lambda nn: nn.MaxPool3d(2), [r(1, 2, 4, 4, 4)]),
    "AvgPool1d": (lambda nn: nn.AvgPool1d(3), [r(2, 3, 7)]),
    "AvgPool2d": (lambda nn: nn.AvgPool2d(3, 2, 1), [r(2, 3, 7, 6)]),
    "AvgPool3d": (lambda nn: nn.AvgPool3d(2), [r(1, 2, 4, 4, 4)]),
    "AdaptiveAvgPool1d": (lambda nn: nn.AdaptiveAvgPool1d(3), [r(2, 3, 7)]),
    "AdaptiveAvgPool2d": (lambda nn: nn.AdaptiveAvgPool2d((2, 3)), [r(2, 3, 5, 7)]),
    "AdaptiveAvgPool2d_1": (lambda nn: nn.AdaptiveAvgPool2d(1), [r(2, 3, 5, 7)]),
    "AdaptiveAvgPool3d": (lambda nn: nn.AdaptiveAvgPool3d(2), [r(1, 2, 4, 4, 4)]),
    "AdaptiveMaxPool1d": (lambda nn: nn.AdaptiveMaxPool1d(3), [r(2, 3, 7)]),
    "AdaptiveMaxPool2d": (lambda nn: nn.AdaptiveMaxPool2d((3, 2)), [r(2, 3, 5, 7)]),
    "AdaptiveMaxPool3d": (lambda nn: nn.AdaptiveMaxPool3d(2), [r(1, 2, 4, 4, 4)]),
    "LPPool1d": (lambda nn: nn.LPPool1d(2, 3, stride=2), [r(2, 3, 7)]),
    "LPPool2d": (lambda nn: nn.LPPool2d(3, 2), [r(2, 3, 4, 6)]),
    "FractionalMaxPool2d": (lambda nn: nn.FractionalMaxPool2d(2, output_size=(3, 3)),
                            [r(1, 2, 6, 6)]),
    "MaxUnpool2d": (lambda nn: nn.MaxUnpool2d(2), [r(1, 2, 2, 2), _idx(0, 3, 9, 10)],
                    lambda m, x, i: m(x, i.reshape(1, 1, 2, 2).expand(1, 2, 2, 2))),
    "BatchNorm1d": (lambda nn: nn.BatchNorm1d(3), [r(6, 3)]),
    "BatchNorm1d_3d": (lambda nn: nn.BatchNorm1d(3), [r(4, 3, 5)]),
    "BatchNorm2d": (lambda nn: nn.BatchNorm2d(3), [r(4, 3, 2, 3)]),
    "BatchNorm2d_eval": (lambda nn: nn.BatchNorm2d(3).eval(), [r(4, 3, 2, 3)]),
    "BatchNorm2d_noaffine": (lambda nn: nn.BatchNorm2d(3, affine=False,
                                                       track_running_stats=False),
                             [r(4, 3, 2, 3)]),
    "BatchNorm3d": (lambda nn: nn.BatchNorm3d(2), [r(2, 2, 2, 3, 2)]),
    "LayerNorm": (lambda nn: nn.LayerNorm(5), [r(3, 4, 5)]),
    "LayerNorm_noaffine": (lambda nn: nn.LayerNorm((4, 5), elementwise_affine=False),
                           [r(3, 4, 5)]),
    "GroupNorm": (lambda nn: nn.GroupNorm(2, 4), [r(3, 4, 5)]),
    "InstanceNorm1d": (lambda nn: nn.InstanceNorm1d(3), [r(2, 3, 5)]),
    "InstanceNorm2d_affine": (lambda nn: nn.InstanceNorm2d(3, affine=True), [r(2, 3, 4, 3)]),
    "RMSNorm": (lambda nn: nn.RMSNorm([3, 4]), [r(2, 3, 4)]),
    "LocalResponseNorm": (lambda nn: nn.LocalResponseNorm(3), [r(2, 5, 4)]),
    "Dropout": (lambda nn: nn.Dropout(0.5), [r(4, 6)]),
    "Dropout_eval": (lambda nn: nn.Dropout(0.5).eval(), [r(4, 6)]),
    "Dropout1d": (lambda nn: nn.Dropout1d(0.5), [r(2, 3, 4)]),
    "Dropout2d": (lambda nn: nn.Dropout2d(0.5), [r(2, 3, 4, 4)]),
    "Dropout3d": (lambda nn: nn.Dropout3d(0.5), [r(2, 3, 2, 2, 2)]),
    "AlphaDropout": (lambda nn: nn.AlphaDropout(0.5), [r(4, 6)]),
    "FeatureAlphaDropout": (lambda nn: nn.FeatureAlphaDropout(0.5), [r(2, 3, 4, 4)]),
    "Embedding": (lambda nn: nn.Embedding(5, 3), [_idx(1, 0, 4)]),
    "EmbeddingBag": (lambda nn: nn.EmbeddingBag(5, 3), [_idx(1, 0, 4, 2), _idx(0, 2)]),
    "ReLU": (lambda nn: nn.ReLU(), [r(3, 4)]),
    "ReLU6": (lambda nn: nn.ReLU6(), [r(3, 4)]),
    "LeakyReLU": (lambda nn: nn.LeakyReLU(0.1), [r(3, 4)]),
    "PReLU": (lambda nn: nn.PReLU(), [r(3, 4)]),
    "RReLU": (lambda nn: nn.RReLU(), [r(3, 4)]),
    "ELU": (lambda nn: nn.ELU(), [r(3, 4)]),
    "CELU": (lambda nn: nn.CELU(), [r(3, 4)]),
    "SELU": (lambda nn: nn.SELU(), [r(3, 4)]),
    "GELU": (lambda nn: nn.GELU(), [r(3, 4)]),
    "GELU_tanh": (lambda nn: nn.GELU("tanh"), [r(3, 4)]),
    "SiLU": (lambda nn: nn.SiLU(), [r(3, 4)]),
    "Mish": (lambda nn: nn.Mish(), [r(3, 4)]),
    "Sigmoid": (lambda nn: nn.Sigmoid(), [r(3, 4)]),
    "Tanh": (lambda nn: nn.Tanh(), [r(3, 4)]),
    "Hardtanh": (lambda nn: nn.Hardtanh(), [r(3, 4)]),
    "Hardsigmoid": (lambda nn: nn.Hardsigmoid(), [r(3, 4)]),
    "Hardswish": (lambda nn: nn.Hardswish(), [r(3, 4)]),
    "Hardshrink": (lambda nn: nn.Hardshrink(), [r(3, 4)]),
    "Softshrink": (lambda nn: nn.Softshrink(), [r(3, 4)]),
    "Tanhshrink": (lambda nn: nn.Tanhshrink(), [r(3, 4)]),
    "Softplus": (lambda nn: nn.Softplus(), [r(3, 4)]),
    "Softsign": (lambda nn: nn.Softsign(), [r(3, 4)]),
    "LogSigmoid": (lambda nn: nn.LogSigmoid(), [r(3, 4)]),
    "Threshold": (lambda nn: nn.Threshold(0.1, 20.0), [r(3, 4)]),
    "GLU": (lambda nn: nn.GLU(), [r(3, 4)]),
    "Softmax": (lambda nn: nn.Softmax(dim=1), [r(3, 4)]),
    "Softmin": (lambda nn: nn.Softmin(dim=1), [r(3, 4)]),
    "LogSoftmax": (lambda nn: nn.LogSoftmax(dim=1), [r(3, 4)]),
    "Softmax2d": (lambda nn: nn.Softmax2d(), [r(2, 3, 2, 2)]),
    "CosineSimilarity": (lambda nn: nn.CosineSimilarity(), [r(3, 4), r(3, 4)]),
    "PairwiseDistance": (lambda nn: nn.PairwiseDistance(), [r(3, 4), r(3, 4)]),
    "PixelShuffle": (lambda nn: nn.PixelShuffle(2), [r(1, 8, 2, 3)]),
    "PixelUnshuffle": (lambda nn: nn.PixelUnshuffle(2), [r(1, 2, 4, 6)]),
    "ChannelShuffle": (lambda nn: nn.ChannelShuffle(2), [r(1, 4, 3, 3)]),
    "Upsample_nearest": (lambda nn: nn.Upsample(scale_factor=2), [r(1, 2, 3, 3)]),
    "Upsample_bilinear": (lambda nn: nn.Upsample(scale_factor=2, mode="bilinear"),
                          [r(1, 2, 3, 3)]),
    "Unfold": (lambda nn: nn.Unfold(2), [r(1, 2, 4, 4)]),
    "Fold": (lambda nn: nn.Fold((3, 3), 2), [r(1, 8, 4)]),
    "ZeroPad2d": (lambda nn: nn.ZeroPad2d(1), [r(1, 2, 3, 3)]),
    "ConstantPad1d": (lambda nn: nn.ConstantPad1d(1, 2.0), [r(1, 2, 3)]),
    "ReflectionPad2d": (lambda nn: nn.ReflectionPad2d(1), [r(1, 2, 3, 3)]),
    "ReplicationPad2d": (lambda nn: nn.ReplicationPad2d(1), [r(1, 2, 3, 3)]),
    "CircularPad1d": (lambda nn: nn.CircularPad1d(1), [r(1, 2, 3)]),
    "RNN": (lambda nn: nn.RNN(3, 4), [r(2, 1, 3)]),
    "LSTM": (lambda nn: nn.LSTM(3, 4), [r(2, 1, 3)]),
    "GRU": (lambda nn: nn.GRU(3, 4), [r(2, 1, 3)]),
    "RNNCell": (lambda nn: nn.RNNCell(3, 4), [r(2, 3)]),
    "LSTMCell": (lambda nn: nn.LSTMCell(3, 4), [r(2, 3)]),
    "GRUCell": (lambda nn: nn.GRUCell(3, 4), [r(2, 3)]),
    "MultiheadAttention": (lambda nn: nn.MultiheadAttention(4, 2),
                           [r(2, 1, 4), r(2, 1, 4), r(2, 1, 4)]),
    "TransformerEncoderLayer": (lambda nn: nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0),
                                [r(2, 1, 4)]),
}


def _bce_target(*shape):
    return np.random.default_rng(7).random(shape)


# name -> (ctor(nn), inputs, indices of inputs that require grad)
LOSSES = {
    "MSELoss": (lambda nn: nn.MSELoss(), [r(3, 4), r(3, 4, seed=1)], (0, 1)),
    "MSELoss_sum": (lambda nn: nn.MSELoss(reduction="sum"), [r(3, 4), r(3, 4, seed=1)], (0,)),
    "MSELoss_none": (lambda nn: nn.MSELoss(reduction="none"), [r(3, 4), r(3, 4, seed=1)],
                     (0,)),
    "L1Loss": (lambda nn: nn.L1Loss(), [r(3, 4), r(3, 4, seed=1)], (0, 1)),
    "SmoothL1Loss": (lambda nn: nn.SmoothL1Loss(), [r(3, 4), r(3, 4, seed=1)], (0,)),
    "HuberLoss": (lambda nn: nn.HuberLoss(), [r(3, 4), r(3, 4, seed=1)], (0,)),
    "CrossEntropyLoss": (lambda nn: nn.CrossEntropyLoss(), [r(3, 4), _idx(1, 0, 3)], (0,)),
    "CrossEntropyLoss_probs": (lambda nn: nn.CrossEntropyLoss(),
                               [r(3, 4), _bce_target(3, 4)], (0,)),
    "CrossEntropyLoss_smoothing": (lambda nn: nn.CrossEntropyLoss(label_smoothing=0.1),
                                   [r(3, 4), _idx(1, 0, 3)], (0,)),
    "NLLLoss": (lambda nn: nn.NLLLoss(), [r(3, 4), _idx(1, 0, 3)], (0,)),
    "BCELoss": (lambda nn: nn.BCELoss(), [_bce_target(3, 4) * 0.8 + 0.1,
                                          _bce_target(3, 4)], (0,)),
    "BCEWithLogitsLoss": (lambda nn: nn.BCEWithLogitsLoss(), [r(3, 4), _bce_target(3, 4)],
                          (0,)),
    "BCEWithLogitsLoss_posw": (lambda nn: nn.BCEWithLogitsLoss(
        weight=nn.Linear(1, 4).bias.detach().new_ones(4) * 0.5,
        pos_weight=nn.Linear(1, 4).bias.detach().new_ones(4) * 2),
        [r(3, 4), _bce_target(3, 4)], (0, 1)),
    "KLDivLoss": (lambda nn: nn.KLDivLoss(reduction="batchmean"),
                  [r(3, 4), _bce_target(3, 4)], (0,)),
    "KLDivLoss_logtarget": (lambda nn: nn.KLDivLoss(log_target=True), [r(3, 4), r(3, 4)],
                            (0,)),
    "PoissonNLLLoss": (lambda nn: nn.PoissonNLLLoss(), [r(3, 4), np.abs(r(3, 4))], (0,)),
    "GaussianNLLLoss": (lambda nn: nn.GaussianNLLLoss(),
                        [r(3, 4), r(3, 4), np.abs(r(3, 4)) + 0.1], (0,)),
    "HingeEmbeddingLoss": (lambda nn: nn.HingeEmbeddingLoss(), [r(3, 4), np.sign(r(3, 4))],
                           (0,)),
    "SoftMarginLoss": (lambda nn: nn.SoftMarginLoss(), [r(3, 4), np.sign(r(3, 4))], (0,)),
    "MultiLabelSoftMarginLoss": (lambda nn: nn.MultiLabelSoftMarginLoss(),
                                 [r(3, 4), (r(3, 4) > 0).astype(np.float64)], (0,)),
    "MultiMarginLoss": (lambda nn: nn.MultiMarginLoss(), [r(3, 4), _idx(0, 3, 2)], (0,)),
    "MultiLabelMarginLoss": (lambda nn: nn.MultiLabelMarginLoss(),
                             [r(2, 4), np.array([[3, 0, -1, 1], [1, 2, -1, 0]])], (0,)),
    "MarginRankingLoss": (lambda nn: nn.MarginRankingLoss(), [r(5), r(5, seed=1),
                                                             np.sign(r(5))], (0, 1)),
    "CosineEmbeddingLoss": (lambda nn: nn.CosineEmbeddingLoss(),
                            [r(3, 4), r(3, 4, seed=1), np.sign(r(3))], (0, 1)),
    "TripletMarginLoss": (lambda nn: nn.TripletMarginLoss(),
                          [r(3, 4), r(3, 4, seed=1), r(3, 4, seed=2)], (0, 1, 2)),
    "TripletMarginWithDistanceLoss": (lambda nn: nn.TripletMarginWithDistanceLoss(),
                                      [r(3, 4), r(3, 4, seed=1), r(3, 4, seed=2)], (0,)),
}

# Known differences (case id -> where the graphs first differ, a strict xfail): none left.
KNOWN = {
}


def _param(kind, name, *args):
    case = "%s-%s" % (kind, name)
    marks = ()
    if case in KNOWN:
        marks = pytest.mark.xfail(strict=True, reason=KNOWN[case])
    return pytest.param(name, *args, id=case, marks=marks)


@pytest.mark.parametrize("name", [_param("layer", n) for n in LAYERS])
def test_layer_graph(name):
    ctor, arrays, *call = LAYERS[name]
    mods = {}

    def run(lib, *xs):
        m = ctor(lib.nn).double()
        mods[lib.__name__] = m
        return call[0](m, *xs) if call else m(*xs)
    _compare(run, arrays)


@pytest.mark.parametrize("name", [_param("loss", n) for n in LOSSES])
def test_loss_graph(name):
    ctor, arrays, grads = LOSSES[name]
    mask = [i in grads for i in range(len(arrays))]
    _compare(lambda lib, *xs: ctor(lib.nn)(*xs), arrays, mask)


def _opdb_cases():
    params, seen = [], set()
    for op in all_ops():
        if not op.differentiable:
            continue
        name = op.name + ("_2" if op.name in seen else "")    # (two families share a name)
        seen.add(op.name)
        for k, sample in enumerate(op.samples(np.dtype(np.float64))):
            params.append(_param("op", "%s-%d" % (name, k), op, tuple(sample)))
    return params


@pytest.mark.parametrize("name, op, sample", _opdb_cases())
def test_op_graph(name, op, sample):
    _compare(op.fn, sample, grad_mask(op, sample))
