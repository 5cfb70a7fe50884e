"""torch.utils.data._utils: the collate registry and worker helpers, at torch's paths."""
from . import collate, worker  # noqa: F401
