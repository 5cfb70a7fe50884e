"""ember.func: composable function transforms (torch.func): grad, vjp, jvp, jacrev, jacfwd,
hessian, vmap, functional_call, stack_module_state, linearize, functionalize.

See docs/func.md for how they are built on ember's reverse-mode engine.
"""
from ._module import functional_call, stack_module_state
from ._transforms import (functionalize, grad, grad_and_value, hessian, jacfwd, jacrev, jvp,
                          linearize, vjp)
from ._vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize",
           "functional_call", "stack_module_state", "vmap", "functionalize"]
