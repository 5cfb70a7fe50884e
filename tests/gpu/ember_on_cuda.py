"""``import ember_on_cuda as torch``: ember with the real CUDA device (CuPy) as the default
device, as ``torch.set_default_device('cuda')`` (for the seed programs on a GPU machine)."""
import sys

import ember

ember.set_default_device("cuda")
sys.modules[__name__] = ember
