"""``DataParallel``: the module run on one process's device(s), as torch's wrapper."""
import warnings

from ..modules.module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """Wraps ``module`` (its parameters appear under ``module.``). Without CUDA it calls the
    module as it is, as torch does; with CUDA it runs on ``device_ids[0]``. Splitting a batch
    over several GPUs is not done: ``DistributedDataParallel`` spreads work over processes."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        from ... import cuda
        self.module = module
        self.dim = dim
        if not cuda.is_available():
            self.device_ids = []
            self.output_device = None
            self.src_device_obj = None
            return
        if device_ids is None:
            device_ids = list(range(cuda.device_count()))
        device_ids = [d if isinstance(d, int) else d.index for d in device_ids]
        if len(device_ids) > 1:
            warnings.warn("ember's DataParallel runs the module on one GPU (cuda:%d); use "
                          "DistributedDataParallel to spread the batch over several"
                          % device_ids[0], UserWarning, stacklevel=2)
        self.device_ids = device_ids
        self.output_device = device_ids[0] if output_device is None else output_device
        from ...backend import device
        self.src_device_obj = device("cuda:%d" % device_ids[0])
        self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        dev = self.src_device_obj
        inputs = tuple(x.to(dev) if hasattr(x, "to") else x for x in inputs)
        kwargs = {k: (v.to(dev) if hasattr(v, "to") else v) for k, v in kwargs.items()}
        return self.module(*inputs, **kwargs)
