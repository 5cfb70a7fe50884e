"""ember.nn: Modules, Parameters, layers, losses and initialisation."""
import importlib as _importlib

from .modules import *  # noqa: F401,F403
from . import attention, common_types, functional, init, parallel  # noqa: F401
from .modules.module import Module  # noqa: F401
from .parameter import Buffer, Parameter, UninitializedParameter  # noqa: F401
from .parallel import DataParallel  # noqa: F401

# (by path: the star import above also brings nn.modules.utils under this name)
utils = _importlib.import_module(".utils", __name__)
