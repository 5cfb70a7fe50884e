"""Op-database entries of the vision ops fixed by the program runs: affine_grid (its own node,
AffineGridGeneratorBackward0) and interpolate (taps kept through save_for_backward; the
antialiased modes' Upsample*2DAa nodes)."""
from opdb import OpInfo, make

__all__ = ["OPS"]


def _theta(nd):
    def samples(dt):
        return [(make((2, nd, nd + 1), dt),)]
    return samples


def _img(*shape):
    def samples(dt):
        return [(make(shape, dt),)]
    return samples


OPS = [
    OpInfo("affine_grid_2d",
           lambda L, t: L.nn.functional.affine_grid(t, (2, 1, 3, 4), align_corners=False),
           _theta(2)),
    OpInfo("affine_grid_3d_align",
           lambda L, t: L.nn.functional.affine_grid(t, (2, 1, 2, 3, 4), align_corners=True),
           _theta(3)),
    OpInfo("interpolate_bilinear_aa",
           lambda L, x: L.nn.functional.interpolate(x, size=(3, 2), mode="bilinear",
                                                    antialias=True), _img(1, 2, 5, 6)),
    OpInfo("interpolate_bicubic_aa",
           lambda L, x: L.nn.functional.interpolate(x, scale_factor=(0.6, 1.5), mode="bicubic",
                                                    antialias=True), _img(1, 2, 5, 4)),
    OpInfo("interpolate_bilinear",
           lambda L, x: L.nn.functional.interpolate(x, scale_factor=1.5, mode="bilinear"),
           _img(1, 2, 3, 4)),
    OpInfo("interpolate_bicubic_align",
           lambda L, x: L.nn.functional.interpolate(x, size=(4, 3), mode="bicubic",
                                                    align_corners=True), _img(1, 2, 3, 5)),
    OpInfo("interpolate_trilinear",
           lambda L, x: L.nn.functional.interpolate(x, size=(3, 2, 4), mode="trilinear"),
           _img(1, 1, 2, 3, 3)),
    OpInfo("interpolate_nearest_exact",
           lambda L, x: L.nn.functional.interpolate(x, scale_factor=1.7, mode="nearest-exact"),
           _img(1, 2, 4)),
]
