"""ember.optim: optimizers and learning-rate schedulers."""
from . import lr_scheduler  # noqa: F401
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam
from .adamw import AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from .adamax import Adamax
from .nadam import NAdam
from .radam import RAdam
from .adadelta import Adadelta
from .rprop import Rprop
from .asgd import ASGD
from .adafactor import Adafactor
from .sparse_adam import SparseAdam
from .lbfgs import LBFGS
from .muon import Muon
from ._stateless import swap_in_optimizer_params_and_state
from . import swa_utils  # noqa: F401,E402

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam",
           "Adadelta", "Rprop", "ASGD", "Adafactor", "SparseAdam", "LBFGS", "Muon", "lr_scheduler",
           "swa_utils", "swap_in_optimizer_params_and_state"]
