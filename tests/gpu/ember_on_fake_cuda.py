"""``import ember_on_fake_cuda as torch``: ember with the fake GPU behind ``'cuda'`` and, unless
``EMBER_FAKE_CUDA_DEFAULT=0``, ``'cuda'`` as the default device (tests only)."""
import os
import sys

import ember
import fake_cupy

fake_cupy.install()
if os.environ.get("EMBER_FAKE_CUDA_DEFAULT", "1") == "1":
    ember.set_default_device("cuda")
sys.modules[__name__] = ember
