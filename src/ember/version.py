"""``torch.version``: what ember is built with (no CUDA or ROCm build; CuPy supplies the GPU)."""
__version__ = "0.1.0"
cuda = None
hip = None
rocm = None
xpu = None
debug = False
git_version = "unknown"
