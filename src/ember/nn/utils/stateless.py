"""``functional_call``: run a module with substituted parameters and buffers."""
from ...func._module import functional_call as _functional_call

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call ``module`` with its parameters and buffers replaced by the given tensors, as
    ``torch.nn.utils.stateless.functional_call`` (deprecated there for
    ``torch.func.functional_call``)."""
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
