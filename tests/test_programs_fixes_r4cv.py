"""Checks against torch for the idioms the computer-vision programs rely on
(tests/programs/p_r4cv_*.py): segmentation/distillation losses with their options, in-place
ops on a diagonal view, Beta sampling streams, weight-normed heads and ConvTranspose2d sizes."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _np(t):
    return t.detach().numpy()


def _pair(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    y = rng.integers(0, 3, (2, 4, 4))
    y[0, 0, :2] = 255
    return x, y


_LOSSES = {
    "ce_weight_ignore_ls": lambda lib, x, y: lib.nn.CrossEntropyLoss(
        weight=lib.tensor([1., 2., 3.]), ignore_index=255, label_smoothing=0.1)(x, y),
    "ce_weight_ignore_none": lambda lib, x, y: lib.nn.CrossEntropyLoss(
        weight=lib.tensor([1., 2., 3.]), ignore_index=255, reduction="none")(x, y),
    "ce_interp_logits": lambda lib, x, y: lib.nn.functional.cross_entropy(
        lib.nn.functional.interpolate(x[..., :2, :2], size=(4, 4), mode="bilinear",
                                      align_corners=False), y, ignore_index=255),
    "kl_batchmean_T": lambda lib, x, y: lib.nn.KLDivLoss(reduction="batchmean")(
        lib.nn.functional.log_softmax(x / 4.0, dim=1),
        lib.nn.functional.softmax(x.detach().flip(0) / 4.0, dim=1)) * 16.0,
    "kl_log_target": lambda lib, x, y: lib.nn.KLDivLoss(reduction="batchmean", log_target=True)(
        lib.nn.functional.log_softmax(x, 1), lib.nn.functional.log_softmax(x.detach() * 2, 1)),
    "soft_target_ce": lambda lib, x, y: lib.sum(
        -lib.softmax(x.detach().flip(1), 1) * lib.nn.functional.log_softmax(x, dim=1), 1).mean(),
    "bce_pos_weight": lambda lib, x, y: lib.nn.BCEWithLogitsLoss(
        pos_weight=lib.tensor([1., 2., 3.]).view(3, 1, 1))(x, (x.detach() > 0).float()),
    "cosine_embedding": lambda lib, x, y: lib.nn.CosineEmbeddingLoss(margin=0.2)(
        x.flatten(1), x.detach().flip(0).flatten(1), lib.tensor([1, -1])),
    "smooth_l1_beta": lambda lib, x, y: lib.nn.SmoothL1Loss(beta=0.5)(x, lib.zeros_like(x)),
}


@pytest.mark.parametrize("name", sorted(_LOSSES))
def test_cv_losses_match_torch(name):
    xa, ya = _pair()
    outs = []
    for lib in (ember, torch):
        x = lib.tensor(xa, requires_grad=True)
        loss = _LOSSES[name](lib, x, lib.tensor(ya))
        g = np.random.default_rng(1).standard_normal(tuple(loss.shape)).astype(np.float32)
        loss.backward(lib.tensor(g))
        outs.append((_np(loss), _np(x.grad), type(loss.grad_fn).__name__))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-5, atol=1e-6)
    assert outs[0][2] == outs[1][2]


def test_barlow_inplace_diagonal_and_off_diagonal():
    a = np.random.default_rng(2).standard_normal((4, 4)).astype(np.float32)
    res = []
    for lib in (ember, torch):
        c = lib.tensor(a, requires_grad=True)
        y = c * 1
        on = lib.diagonal(y).add_(-1).pow_(2).sum()
        off = y.flatten()[:-1].view(3, 5)[:, 1:].flatten().pow(2).sum()
        (on + 0.1 * off).backward()
        res.append((on.item(), off.item(), type(y.grad_fn).__name__, _np(c.grad)))
    assert res[0][2] == res[1][2] == "CopySlices"
    np.testing.assert_allclose(res[0][3], res[1][3], rtol=1e-6)
    assert res[0][:2] == pytest.approx(res[1][:2], rel=1e-6)


def test_beta_sampling_stream_matches_torch():
    vals = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        b = lib.distributions.Beta(lib.tensor([0.4]), lib.tensor([0.4]))
        s1 = b.sample()
        s2 = lib.distributions.beta.Beta(0.2, 0.2).sample((3,))
        vals.append((_np(s1), _np(s2), str(s2.dtype).split(".")[-1], repr(b)))
    np.testing.assert_allclose(vals[0][0], vals[1][0], rtol=1e-5)
    np.testing.assert_allclose(vals[0][1], vals[1][1], rtol=1e-5, atol=1e-12)
    assert vals[0][2:] == vals[1][2:]


def test_weight_norm_head_frozen_g():
    res = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        layer = lib.nn.utils.weight_norm(lib.nn.Linear(4, 3, bias=False))
        layer.weight_g.data.fill_(1)
        layer.weight_g.requires_grad = False
        out = layer(lib.ones(2, 4)).sum()
        out.backward()
        res.append((list(layer.state_dict()), tuple(layer.weight_g.shape),
                    layer.weight_g.grad is None, _np(layer.weight_v.grad)))
    assert res[0][:3] == res[1][:3]
    np.testing.assert_allclose(res[0][3], res[1][3], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("size", [None, [10, 10], [13, 10]])
def test_conv_transpose_output_size(size):
    res = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        m = lib.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)
        try:
            out = m(lib.ones(1, 4, 5, 5), output_size=size)
            res.append(tuple(out.shape))
        except Exception as e:  # noqa: BLE001 - the error itself is compared
            res.append((type(e).__name__, str(e)))
    assert res[0] == res[1]


class _Foo:
    pass


_BAD_VALUES = {"int": lambda lib: 3, "ndarray": lambda lib: np.ones(2), "obj": lambda lib: _Foo(),
               "long_tensor": lambda lib: lib.ones(1, dtype=lib.int64)}
_MISUSE = {
    "register_buffer": lambda lib, v: lib.nn.Linear(1, 1).register_buffer("b", v),
    "register_parameter": lambda lib, v: lib.nn.Linear(1, 1).register_parameter("p", v),
    "set_child": lambda lib, v: setattr(lib.nn.Sequential(lib.nn.ReLU()), "0", v),
    "set_param": lambda lib, v: setattr(lib.nn.Linear(1, 1), "weight", v),
    "add_module": lambda lib, v: lib.nn.Linear(1, 1).add_module("m", v),
    "buffer_name": lambda lib, v: lib.nn.Linear(1, 1).register_buffer(v, None),
    "param_name": lambda lib, v: lib.nn.Linear(1, 1).register_parameter(v, None),
    "module_name": lambda lib, v: lib.nn.Linear(1, 1).add_module(v, None),
}


def _set_buffer(lib, v):
    m = lib.nn.Linear(1, 1)
    m.register_buffer("b", lib.ones(1))
    m.b = v


_MISUSE["set_buffer"] = _set_buffer


@pytest.mark.parametrize("value", sorted(_BAD_VALUES))
@pytest.mark.parametrize("what", sorted(_MISUSE))
def test_module_assignment_errors_name_type_like_torch(what, value):
    """The messages name the type as torch.typename does ('numpy.ndarray', 'torch.LongTensor')."""
    res = []
    for lib in (ember, torch):
        try:
            _MISUSE[what](lib, _BAD_VALUES[value](lib))
            res.append("ok")
        except Exception as e:  # noqa: BLE001 - the error itself is compared
            res.append((type(e).__name__, str(e)))
    assert res[0] == res[1]
