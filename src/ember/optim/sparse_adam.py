"""SparseAdam: Adam for sparse gradients (ember's gradients are dense, so it refuses them)."""
from .adam import _check_adam_args
from .optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam. ember produces dense gradients only, so ``step`` raises torch's error for
    dense gradients; construction checks match ``torch.optim.SparseAdam``."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        _check_adam_args(lr, betas, eps, 0)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        complex_params = []
        for index, group in enumerate(self.param_groups):
            for d_index, d_param in enumerate(group["params"]):
                if d_param.is_complex():
                    complex_params.append([index, d_index])
        if complex_params:
            raise ValueError("Complex params at indices %s: SparseAdam does not support "
                             "complex parameters" % complex_params)

    def _update(self, p, group, state):
        raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam "
                           "instead")
