"""ember.autograd: the graph, the engine, custom Functions and gradient checking."""
from . import anomaly_mode, engine, function, grad_mode, graph, gradcheck as _gc  # noqa: F401
from . import forward_ad, functional  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly, is_anomaly_enabled
from .engine import backward, grad
from .function import Function, FunctionCtx, once_differentiable, InplaceFunction
from .grad_mode import (no_grad, enable_grad, set_grad_enabled, is_grad_enabled,
                        inference_mode, set_multithreading_enabled, is_multithreading_enabled)
from .gradcheck import gradcheck, gradgradcheck, GradcheckError
from .variable import Variable

__all__ = ["Function", "FunctionCtx", "Variable", "backward", "grad", "gradcheck",
           "gradgradcheck", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
           "inference_mode", "detect_anomaly", "set_detect_anomaly", "once_differentiable",
           "GradcheckError", "InplaceFunction", "is_anomaly_enabled",
           "set_multithreading_enabled", "is_multithreading_enabled"]


def _is_checkpoint_valid():
    """False inside a backward run by ``grad()`` or ``backward(inputs=)`` (torch's reentrant
    checkpoint refuses those)."""
    return not (engine._partial and engine._partial[-1])
