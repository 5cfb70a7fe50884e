"""``torch.utils.tensorboard``: needs the ``tensorboard`` package, as torch's does (without
it, importing this module raises torch's ``ModuleNotFoundError``)."""
import tensorboard  # noqa: F401  (torch's module starts the same way)

raise ImportError("ember.utils.tensorboard: SummaryWriter is not implemented in ember; log "
                  "scalars with print/CSV, or install torch for TensorBoard logging")
