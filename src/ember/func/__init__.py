"""ember.func: composable function transforms (torch.func): grad, vjp, jvp, jacrev, jacfwd,
hessian, vmap, functional_call, stack_module_state, linearize, functionalize, plus
rearrange, replace_all_batch_norm_modules_ and debug_unwrap.

See docs/func.md for how they are built on ember's reverse-mode engine.
"""
from ._extras import debug_unwrap, rearrange, replace_all_batch_norm_modules_
from ._module import functional_call, stack_module_state
from ._transforms import (functionalize, grad, grad_and_value, hessian, jacfwd, jacrev, jvp,
                          linearize, vjp)
from ._vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize",
           "functional_call", "stack_module_state", "vmap", "functionalize",
           "replace_all_batch_norm_modules_", "rearrange", "debug_unwrap"]
