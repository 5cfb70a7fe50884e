"""InstanceNorm1d/2d/3d and their Lazy variants."""
import warnings

from .. import functional as F
from .module import Module  # noqa: F401
from .normalization import _NormBase, _lazy_norm

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class _InstanceNorm(_NormBase):
    _nd = 1

    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device=device,
                         dtype=dtype, bias=bias)

    def _check_input_dim(self, input):
        nd = self._nd
        if input.dim() not in (nd + 1, nd + 2):
            raise ValueError("expected %dD or %dD input (got %dD input)"
                             % (nd + 1, nd + 2, input.dim()))

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._nd - 1
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError("expected input's size at dim=%d to match num_features (%d), "
                                 "but got: %d." % (feature_dim, self.num_features,
                                                   input.shape[feature_dim]))
            warnings.warn("input's size at dim=%d does not match num_features. You can silence "
                          "this warning by not passing in num_features, which is not used "
                          "because affine=False" % feature_dim, stacklevel=2)
        unbatched = input.dim() == self._nd + 1
        if unbatched:
            input = input.unsqueeze(0)
        out = F.instance_norm(input, self.running_mean, self.running_var, self.weight,
                              self.bias, self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Normalise each channel of each sample of ``(N, C, L)`` over ``L``."""

    _nd = 1


class InstanceNorm2d(_InstanceNorm):
    """Normalise each channel of each sample of ``(N, C, H, W)`` over ``H, W``."""

    _nd = 2


class InstanceNorm3d(_InstanceNorm):
    """Normalise each channel of each sample of ``(N, C, D, H, W)``."""

    _nd = 3


LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d, "LazyInstanceNorm1d")
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d, "LazyInstanceNorm2d")
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d, "LazyInstanceNorm3d")
