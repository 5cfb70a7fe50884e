"""The layer classes of ``ember.nn``."""
from .module import Module  # noqa: F401
from .linear import Bilinear, Identity, LazyLinear, Linear  # noqa: F401
from .activation import *  # noqa: F401,F403
from .adaptive import *  # noqa: F401,F403
from .channelshuffle import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .container import Container  # noqa: F401
from .conv import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .instancenorm import *  # noqa: F401,F403
from .lazy import UninitializedBuffer  # noqa: F401
from .loss import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
from . import batchnorm, utils  # noqa: F401
