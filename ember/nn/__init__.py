"""ember.nn: Modules, Parameters, layers, losses and initialisation."""
from . import functional, init, utils  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules.module import Module  # noqa: F401
from .parameter import Buffer, Parameter, UninitializedParameter  # noqa: F401
from . import parallel  # noqa: F401
