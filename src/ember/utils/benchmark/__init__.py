"""``torch.utils.benchmark``: ``Timer`` measures a statement, ``Measurement`` summarises the
times, ``Compare`` prints many measurements as a table."""
from .common import Measurement, TaskSpec, ordered_unique, select_unit, set_torch_threads, \
    trim_sigfig, unit_to_english
from .compare import Colorize, Compare
from .timer import Language, Timer

__all__ = ["Timer", "Measurement", "TaskSpec", "Compare", "Colorize", "Language", "select_unit",
           "unit_to_english", "trim_sigfig", "ordered_unique", "set_torch_threads"]
