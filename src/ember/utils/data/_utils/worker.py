"""torch.utils.data._utils.worker: ``get_worker_info`` and ``WorkerInfo``."""
from .._worker import WorkerInfo, get_worker_info  # noqa: F401
