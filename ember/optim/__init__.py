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
from .lbfgs import LBFGS

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "LBFGS",
           "lr_scheduler"]
