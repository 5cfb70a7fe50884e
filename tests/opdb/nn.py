"""Op-database entries of the nn primitives: pad (ember/ops/padding.py), embedding
(ember/ops/sparse.py), linear (addmm with a transposed weight) and the composed functionals of
ember/nn/_functional_more.py (shrinks, shuffles, 3-D conv/pool, fold/unfold, norms, losses)."""
import numpy as np

from opdb import OpInfo, make

__all__ = ["OPS"]


def _a(*shape):
    def samples(dt):
        return [(make(shape, dt),)]
    return samples


def _pad(name, pad, mode, shape):
    return OpInfo(name, lambda L, x: L.nn.functional.pad(x, pad, mode=mode), _a(*shape))


def _embedding(dt):
    idx = np.array([[1, 0, 4], [4, 4, 2]], dtype=np.int64)
    return [(make((5, 3), dt), idx)]


def _linear(dt):
    return [(make((4, 3), dt), make((2, 3), dt, seed=1), make((2,), dt, seed=2)),
            (make((2, 4, 3), dt), make((2, 3), dt, seed=1), make((2,), dt, seed=2))]


def _f(name, fn, *shapes, **kw):
    """An entry for ``F.<fn>`` (a lambda of (F, *tensors)) over inputs of ``shapes``."""
    def samples(dt):
        return [tuple(make(sh, dt, seed=i) for i, sh in enumerate(shapes))]
    return OpInfo(name, lambda L, *xs: fn(L.nn.functional, *xs), samples, **kw)


def _ctc(dt):
    x = make((6, 2, 4), dt)
    lp = x - np.log(np.exp(x).sum(-1, keepdims=True))
    return [(lp, np.array([[1, 2, 2], [3, 1, 0]], dtype=np.int64))]


OPS = [
    _pad("pad_constant", (1, 2, 0, 1), "constant", (2, 3, 4)),
    _pad("pad_constant_crop", (-1, 2, 1, -1), "constant", (2, 3, 4)),
    _pad("pad_reflect", (2, 1), "reflect", (2, 3, 4)),
    _pad("pad_replicate", (2, 1, 1, 2), "replicate", (1, 2, 3, 4)),
    _pad("pad_circular", (2, 1, 1, 0), "circular", (1, 2, 3, 4)),
    OpInfo("embedding", lambda L, w, idx: L.nn.functional.embedding(idx, w), _embedding),
    # (no finite differences: by design the padding row gets no gradient, as torch's)
    OpInfo("embedding_padding_idx",
           lambda L, w, idx: L.nn.functional.embedding(idx, w, padding_idx=4), _embedding,
           skip_gradcheck=True),
    OpInfo("linear", lambda L, x, w, b: L.nn.functional.linear(x, w, b), _linear),
    _f("F.hardshrink", lambda F, x: F.hardshrink(x, 0.3), (3, 4)),
    _f("softshrink", lambda F, x: F.softshrink(x, 0.3), (3, 4)),
    _f("tanhshrink", lambda F, x: F.tanhshrink(x), (3, 4)),
    _f("glu", lambda F, x: F.glu(x, 1), (2, 4, 3)),
    _f("pixel_shuffle", lambda F, x: F.pixel_shuffle(x, 2), (1, 8, 2, 3)),
    _f("pixel_unshuffle", lambda F, x: F.pixel_unshuffle(x, 2), (1, 2, 4, 2)),
    _f("channel_shuffle", lambda F, x: F.channel_shuffle(x, 2), (2, 4, 2)),
    _f("conv3d", lambda F, x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=1, groups=2),
       (1, 4, 3, 4, 3), (2, 2, 2, 2, 2), (2,), rtol=1e-4, atol=1e-5),
    _f("conv_transpose3d",
       lambda F, x, w: F.conv_transpose3d(x, w, stride=2, padding=1, output_padding=1),
       (1, 2, 2, 3, 2), (2, 3, 2, 2, 2), rtol=1e-4, atol=1e-5),
    _f("max_pool3d", lambda F, x: F.max_pool3d(x, 2, stride=1, padding=1), (1, 2, 3, 3, 3)),
    _f("avg_pool3d", lambda F, x: F.avg_pool3d(x, 2, stride=1, padding=1,
                                               count_include_pad=False), (1, 2, 3, 3, 3)),
    _f("adaptive_avg_pool3d", lambda F, x: F.adaptive_avg_pool3d(x, (2, 1, 3)), (1, 2, 3, 4, 5)),
    _f("adaptive_max_pool3d", lambda F, x: F.adaptive_max_pool3d(x, 2), (1, 2, 3, 4, 5)),
    _f("F.unfold", lambda F, x: F.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=2),
       (2, 2, 5, 6)),
    _f("fold", lambda F, x: F.fold(x, (4, 5), 2, padding=1), (2, 8, 30)),
    _f("instance_norm", lambda F, x, w, b: F.instance_norm(x, weight=w, bias=b),
       (2, 3, 5), (3,), (3,), rtol=1e-4, atol=1e-5),
    _f("rms_norm", lambda F, x, w: F.rms_norm(x, (4,), w), (3, 4), (4,), rtol=1e-4, atol=1e-5),
    _f("local_response_norm", lambda F, x: F.local_response_norm(x, 3, alpha=0.1),
       (2, 5, 3), rtol=1e-4, atol=1e-5),
    _f("grid_sample", lambda F, x, g: F.grid_sample(x, g, align_corners=False),
       (1, 2, 3, 4), (1, 2, 3, 2), grad_inputs=(0,)),
    _f("poisson_nll_loss", lambda F, x, t: F.poisson_nll_loss(x, t), (3, 4), (3, 4)),
    _f("soft_margin_loss", lambda F, x, t: F.soft_margin_loss(x, t), (3, 4), (3, 4),
       grad_inputs=(0,)),
    _f("multilabel_soft_margin_loss", lambda F, x, t: F.multilabel_soft_margin_loss(x, t),
       (3, 4), (3, 4)),
    _f("gaussian_nll_loss", lambda F, x, t, v: F.gaussian_nll_loss(x, t, v.abs() + 0.5),
       (3, 4), (3, 4), (3, 4)),
    _f("conv_tbc", lambda F, x, w, b: F.conv_tbc(x, w, b, 1), (5, 2, 3), (3, 3, 4), (4,),
       rtol=1e-4, atol=1e-5),
    OpInfo("ctc_loss", lambda L, lp, t: L.nn.functional.ctc_loss(lp, t, [6, 5], [3, 2]), _ctc,
           grad_inputs=(0,), double_backward=False, skip_gradcheck=True),
]
