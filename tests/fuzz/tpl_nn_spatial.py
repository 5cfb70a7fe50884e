"""Fuzz templates for convolution, pooling, vision and attention ops (merged into ``ops.py``).

Sizes stay small so that every case runs in milliseconds; most draws are valid (values and
gradients get compared), a few are not (so errors get compared).
"""
from .ops import Gen  # noqa: F401  (the templates take a Gen)


def _batch(g):
    return g.pick([1, 2, 2, 0]) if not g.probe else 2


def _sp_conv3d(g):
    n, c, o = _batch(g), g.pick([1, 2]) if not g.probe else 2, g.pick([1, 2, 3])
    k = g.pick([1, 2]) if not g.probe else 2
    groups = 1
    if not g.probe and c == 2 and g.chance(0.2):
        groups = 2
        o = 2
    x = g.tensor((n, c, 3, 3, g.pick([3, 4])))
    w = g.tensor((o, c // groups, k, k, g.pick([k, 1])), dtype=x[2] if g.r.random() < 0.9 else None)
    args = [x, w]
    if g.chance(0.4):
        args.append(g.tensor((o,), dtype=x[2]))
    kw = {}
    if g.chance(0.5):
        kw = {"stride": g.pick([1, 2, (1, 2, 1)]), "padding": g.pick([0, 1, (1, 0, 1)])}
    if g.chance(0.2):
        kw["dilation"] = g.pick([1, 2])
    if groups != 1:
        kw["groups"] = groups
    return args, kw


def _sp_convt3d(g):
    n, c, o = _batch(g), g.pick([1, 2]) if not g.probe else 2, g.pick([1, 2])
    k = g.pick([1, 2]) if not g.probe else 2
    x = g.tensor((n, c, 2, 3, g.pick([2, 3])))
    w = g.tensor((c, o, k, k, g.pick([k, 1])), dtype=x[2] if g.r.random() < 0.9 else None)
    args = [x, w]
    if g.chance(0.3):
        args.append(g.tensor((o,), dtype=x[2]))
    kw = {}
    if g.chance(0.5):
        kw = {"stride": g.pick([1, 2]), "padding": g.pick([0, 1])}
        if kw["stride"] == 2 and g.chance(0.5):
            kw["output_padding"] = g.pick([1, 0, 2])
    return args, kw


def _sp_convolution(g):
    """torch.convolution(input, weight, bias, stride, padding, dilation, transposed,
    output_padding, groups), 1-d to 3-d."""
    nd = 2 if g.probe else g.pick([1, 2, 3])
    n, c, o = _batch(g), g.pick([1, 2]) if not g.probe else 2, g.pick([1, 2])
    k = g.pick([1, 2]) if not g.probe else 2
    transposed = bool(g.chance(0.4))
    x = g.tensor((n, c) + (3,) * nd)
    w = g.tensor(((c, o) if transposed else (o, c)) + (k,) * nd, dtype=x[2])
    bias = g.tensor((o,), dtype=x[2]) if g.chance(0.4) else None
    stride = [g.pick([1, 2])] * nd
    padding = [g.pick([0, 1])] * nd
    dilation = [1] * nd
    out_pad = [1 if transposed and stride[0] == 2 and g.chance(0.3) else 0] * nd
    return [x, w, bias, stride, padding, dilation, transposed, out_pad, 1], {}


def _sp_conv_tbc(g):
    t, b, c, o = (5, 2, 3, 4) if g.probe else (g.pick([5, 3, 1]), g.pick([2, 1, 0]),
                                               g.pick([3, 1]), g.pick([4, 2]))
    k = 3 if g.probe else g.pick([1, 2, 3])
    x = g.tensor((t, b, c))
    w = g.tensor((k, c if not g.chance(0.05) else c + 1, o), dtype=x[2])
    bias = g.tensor((o,), dtype=x[2])
    return [x, w, bias, g.pick([1, 0, 2])], {}


def _sp_shuffle(g):
    x = g.tensor((2, 4, 2, 3) if g.probe else g.pick([(2, 4, 2, 3), (1, 6, 2), (2, 4),
                                                      (0, 4, 3), (1, 2, 2, 2, 2)]))
    return [x, g.pick([2, 1, 4, 3, 0])], {}


def _sp_pixel_shuffle(g):
    x = g.tensor((1, 8, 2, 3) if g.probe else g.pick([(1, 8, 2, 3), (2, 4, 3, 2), (4, 1, 2),
                                                      (0, 4, 1, 1), (1, 9, 2, 2), (3, 2)]))
    return [x, g.pick([2, 1, 3])], {}


def _sp_pixel_unshuffle(g):
    x = g.tensor((1, 2, 4, 6) if g.probe else g.pick([(1, 2, 4, 6), (2, 1, 2, 2), (3, 4, 4),
                                                      (0, 1, 2, 2), (1, 1, 3, 3), (4,)]))
    return [x, g.pick([2, 1, 3])], {}


def _grid(g, n, spatial, nd, reflection=False):
    """A sampling grid; no inf/NaN with reflection padding (torch's reflection of an infinite
    coordinate indexes out of bounds and crashes the process)."""
    dt = g.dtype()
    if not dt.startswith("float"):
        dt = "float64" if g.r.random() < 0.8 else dt
    tame, g.tame = g.tame, g.tame or reflection
    grid = g.tensor((n,) + spatial + (nd,), dtype=dt)
    g.tame = tame
    return grid


def _sp_grid_sample(g):
    """F.grid_sample: 4-d input with a 2-d grid or 5-d with a 3-d one."""
    nd = 2 if g.probe else g.pick([2, 2, 3])
    n = 1 if g.probe else g.pick([1, 2])
    x = g.tensor((n, 2) + ((3, 4) if nd == 2 else (2, 3, 2)))
    modes = ["bilinear", "nearest"] + (["bicubic"] if nd == 2 else [])
    kw = {"align_corners": bool(g.chance(0.5))}
    if g.chance(0.6):
        kw["mode"] = g.pick(modes)
    if g.chance(0.5):
        kw["padding_mode"] = g.pick(["zeros", "border", "reflection"])
    grid = _grid(g, n, (2, 3) if nd == 2 else (2, 2, 1), nd,
                 kw.get("padding_mode") == "reflection")
    return [x, grid], kw


def _sp_grid_sampler(g):
    """torch.grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)."""
    nd = 2 if g.probe else g.pick([2, 2, 3])
    n = 1 if g.probe else g.pick([1, 2])
    x = g.tensor((n, 2) + ((3, 4) if nd == 2 else (2, 3, 2)))
    mode, pad = g.pick([0, 1] + ([2] if nd == 2 else [])), g.pick([0, 1, 2])
    grid = _grid(g, n, (2, 3) if nd == 2 else (2, 2, 1), nd, pad == 2)
    return [x, grid, mode, pad, bool(g.chance(0.5))], {}


def _sp_grid_sampler_2d(g):
    n = 1 if g.probe else g.pick([1, 2])
    x = g.tensor((n, 2, 3, 4))
    mode, pad = g.pick([0, 1, 2]), g.pick([0, 1, 2])
    return [x, _grid(g, n, (2, 3), 2, pad == 2), mode, pad, bool(g.chance(0.5))], {}


def _sp_grid_sampler_3d(g):
    n = 1 if g.probe else g.pick([1, 2])
    x = g.tensor((n, 2, 2, 3, 2))
    mode, pad = g.pick([0, 1]), g.pick([0, 1, 2])
    return [x, _grid(g, n, (2, 2, 1), 3, pad == 2), mode, pad, bool(g.chance(0.5))], {}


def _sp_affine_grid(g):
    nd = 2 if g.probe else g.pick([2, 2, 3])
    n = 2 if g.probe else g.pick([2, 1, 0])
    dt = g.dtype()
    if not dt.startswith("float") and g.r.random() < 0.8:
        dt = "float64"
    theta = g.tensor((n, nd, nd + 1), dtype=dt)
    size = [n, 3] + ([4, 5] if nd == 2 else [2, 3, 4])
    if g.chance(0.05):
        size = size[:-1]
    return [theta, size], {"align_corners": bool(g.chance(0.5))}


def _sp_affine_grid_generator(g):
    (theta, size), kw = _sp_affine_grid(g)
    return [theta, size, kw["align_corners"]], {}


def _sp_max_pool3d(g):
    x = g.tensor((1, 2, 4, 4, 3) if g.probe else g.pick([(1, 2, 4, 4, 3), (2, 3, 3, 3),
                                                         (0, 1, 2, 2, 2), (1, 1, 3, 2, 4)]))
    kw = {}
    if g.chance(0.5):
        kw["stride"] = g.pick([1, 2, (1, 2, 1)])
    if g.chance(0.3):
        kw["padding"] = g.pick([1, 0])
    if g.chance(0.2):
        kw["dilation"] = g.pick([2, 1])
    if g.chance(0.3):
        kw["ceil_mode"] = True
    return [x, g.pick([2, 1, (2, 1, 2), 3])], kw


def _sp_fold(g):
    """F.fold: (N, C * kh * kw, L) blocks back into (N, C, H, W)."""
    k = (2, 2) if g.probe else g.pick([(2, 2), (1, 2), (2, 1)])
    out = (3, 4) if g.probe else g.pick([(3, 4), (3, 3), (2, 2)])
    c = 1 if g.probe else g.pick([1, 2])
    stride, pad, dil = (1 if g.probe else g.pick([1, 1, 2]), 0 if g.probe else g.pick([0, 0, 1]),
                        1 if g.probe else g.pick([1, 1, 2]))
    blocks = 1
    for a in range(2):
        blocks *= (out[a] + 2 * pad - dil * (k[a] - 1) - 1) // stride + 1
    blocks = max(blocks, 0)
    if g.chance(0.05):
        blocks += 1
    lead = () if g.chance(0.15) else (g.pick([1, 2, 0]) if not g.probe else 1,)
    x = g.tensor(lead + (c * k[0] * k[1], blocks))
    kw = {}
    if stride != 1:
        kw["stride"] = stride
    if pad:
        kw["padding"] = pad
    if dil != 1:
        kw["dilation"] = dil
    return [x, out, k], kw


def _sp_fractional2d(g):
    x = g.tensor((1, 2, 5, 6) if g.probe else g.pick([(1, 2, 5, 6), (2, 5, 5), (1, 1, 4, 4),
                                                      (0, 2, 5, 5)]))
    kw = {"output_size": g.pick([(2, 3), 2, (3, 3)])} if g.probe or g.chance(0.6) else \
        {"output_ratio": g.pick([0.5, (0.5, 0.7)])}
    if g.chance(0.3):
        kw["_random_samples"] = g.tensor((x[1][0] if len(x[1]) == 4 else 1, x[1][-3], 2),
                                         "prob", dtype=x[2], grad=False)
    return [x, g.pick([2, (2, 1), 3])], kw


def _sp_fractional3d(g):
    x = g.tensor((1, 2, 4, 5, 4) if g.probe else g.pick([(1, 2, 4, 5, 4), (2, 4, 4, 4),
                                                         (1, 1, 3, 3, 3)]))
    kw = {"output_size": g.pick([(2, 3, 2), 2])} if g.probe or g.chance(0.6) else \
        {"output_ratio": g.pick([0.5, (0.5, 0.7, 0.6)])}
    return [x, g.pick([2, (2, 1, 2)])], kw


def _sp_lp_pool2d(g):
    x = g.tensor((1, 2, 4, 5) if g.probe else g.pick([(1, 2, 4, 5), (2, 4, 4), (1, 1, 3, 3)]),
                 "pos")
    kw = {"stride": g.pick([1, 2])} if g.chance(0.4) else {}
    if g.chance(0.2):
        kw["ceil_mode"] = True
    return [x, g.pick([2, 1, 3.0, 1.5]), g.pick([2, (2, 1), 3])], kw


def _sp_lp_pool3d(g):
    x = g.tensor((1, 2, 3, 4, 4) if g.probe else g.pick([(1, 2, 3, 4, 4), (2, 3, 3, 3)]), "pos")
    kw = {"stride": g.pick([1, 2])} if g.chance(0.4) else {}
    return [x, g.pick([2, 1, 3.0]), g.pick([2, (2, 1, 2)])], kw


def _unpool(g, nd):
    k = 2
    spatial = (2,) * nd if g.probe else tuple(g.pick([1, 2]) for _ in range(nd))
    n, c = (1, 2) if g.probe else (g.pick([1, 2, 0]), g.pick([1, 2]))
    lead = (n, c) if g.probe or g.r.random() < 0.8 else (c,)
    x = g.tensor(lead + spatial)
    plane = 1
    for s in spatial:
        plane *= s * k
    kw = {}
    if g.chance(0.3):
        kw["output_size"] = [s * k + 1 for s in spatial] if g.chance(0.5) else \
            [s * k for s in spatial]
        plane = 1
        for s in kw["output_size"]:
            plane *= s
    idx = g.idx(x[1], plane + (1 if g.chance(0.05) else 0))
    return [x, idx, k], kw


def _sp_unpool1d(g):
    return _unpool(g, 1)


def _sp_unpool2d(g):
    return _unpool(g, 2)


def _sp_unpool3d(g):
    return _unpool(g, 3)


def _sp_mha(g):
    """F.multi_head_attention_forward with packed in-projection, no dropout. No inf/NaN: with
    ``need_weights=False`` torch runs its fused attention kernel, whose online softmax drops a
    NaN score that the plain formula (and torch's own ``need_weights=True`` path) keeps."""
    g.tame = True
    e, h = (4, 2) if g.probe else (4, g.pick([2, 1, 4]))
    L, S, n = (3, 2, 2) if g.probe else (g.pick([3, 1]), g.pick([2, 3]), g.pick([2, 1]))
    dt = "float64" if g.probe else g.pick(["float64", "float64", "float32"])
    batched = g.probe or g.r.random() < 0.85
    q = g.tensor((L, n, e) if batched else (L, e), dtype=dt)
    k = g.tensor((S, n, e) if batched else (S, e), dtype=dt)
    v = g.tensor((S, n, e) if batched else (S, e), dtype=dt)
    args = [q, k, v, e, h, g.tensor((3 * e, e), dtype=dt), g.tensor((3 * e,), dtype=dt),
            None, None, False, 0.0, g.tensor((e, e), dtype=dt), g.tensor((e,), dtype=dt)]
    kw = {}
    if g.chance(0.4):
        kw["need_weights"] = False
    if g.chance(0.3):
        kw["average_attn_weights"] = False
    if g.chance(0.3):
        kw["attn_mask"] = g.tensor((L, S), dtype=g.pick(["bool", dt]), grad=False)
    if g.chance(0.2) and batched:
        kw["key_padding_mask"] = g.tensor((n, S), dtype="bool", grad=False)
    if g.chance(0.2):
        kw["training"] = False
    return args, kw


TEMPLATES = {
    "sp_conv3d": _sp_conv3d, "sp_convt3d": _sp_convt3d, "sp_convolution": _sp_convolution,
    "sp_conv_tbc": _sp_conv_tbc, "sp_shuffle": _sp_shuffle, "sp_pixel_shuffle": _sp_pixel_shuffle,
    "sp_pixel_unshuffle": _sp_pixel_unshuffle, "sp_grid_sample": _sp_grid_sample,
    "sp_grid_sampler": _sp_grid_sampler, "sp_grid_sampler_2d": _sp_grid_sampler_2d,
    "sp_grid_sampler_3d": _sp_grid_sampler_3d, "sp_affine_grid": _sp_affine_grid,
    "sp_affine_grid_generator": _sp_affine_grid_generator, "sp_max_pool3d": _sp_max_pool3d,
    "sp_fold": _sp_fold, "sp_fractional2d": _sp_fractional2d, "sp_fractional3d": _sp_fractional3d,
    "sp_lp_pool2d": _sp_lp_pool2d, "sp_lp_pool3d": _sp_lp_pool3d, "sp_unpool1d": _sp_unpool1d,
    "sp_unpool2d": _sp_unpool2d, "sp_unpool3d": _sp_unpool3d, "sp_mha": _sp_mha,
}

HAND = {
    ("torch", "affine_grid_generator"): ["sp_affine_grid_generator"],
    ("torch", "conv3d"): ["sp_conv3d"], ("F", "conv3d"): ["sp_conv3d"],
    ("torch", "conv_tbc"): ["sp_conv_tbc"], ("F", "conv_tbc"): ["sp_conv_tbc"],
    ("torch", "conv_transpose3d"): ["sp_convt3d"], ("F", "conv_transpose3d"): ["sp_convt3d"],
    ("torch", "convolution"): ["sp_convolution"],
    ("torch", "channel_shuffle"): ["sp_shuffle"], ("F", "channel_shuffle"): ["sp_shuffle"],
    ("torch", "native_channel_shuffle"): ["sp_shuffle"],
    ("F", "native_channel_shuffle"): ["sp_shuffle"],
    ("torch", "grid_sampler"): ["sp_grid_sampler"],
    ("torch", "grid_sampler_2d"): ["sp_grid_sampler_2d"],
    ("torch", "grid_sampler_3d"): ["sp_grid_sampler_3d"],
    ("torch", "max_pool3d"): ["sp_max_pool3d"], ("F", "max_pool3d"): ["sp_max_pool3d"],
    ("torch", "pixel_shuffle"): ["sp_pixel_shuffle"], ("F", "pixel_shuffle"): ["sp_pixel_shuffle"],
    ("torch", "pixel_unshuffle"): ["sp_pixel_unshuffle"],
    ("F", "pixel_unshuffle"): ["sp_pixel_unshuffle"],
    ("F", "affine_grid"): ["sp_affine_grid"], ("F", "grid_sample"): ["sp_grid_sample"],
    ("F", "fold"): ["sp_fold"],
    ("F", "fractional_max_pool2d"): ["sp_fractional2d"],
    ("F", "fractional_max_pool2d_with_indices"): ["sp_fractional2d"],
    ("F", "fractional_max_pool3d"): ["sp_fractional3d"],
    ("F", "fractional_max_pool3d_with_indices"): ["sp_fractional3d"],
    ("F", "lp_pool2d"): ["sp_lp_pool2d"], ("F", "lp_pool3d"): ["sp_lp_pool3d"],
    ("F", "max_unpool1d"): ["sp_unpool1d"], ("F", "max_unpool2d"): ["sp_unpool2d"],
    ("F", "max_unpool3d"): ["sp_unpool3d"],
    ("F", "multi_head_attention_forward"): ["sp_mha"],
}
