"""functional_call and stack_module_state (torch.func): modules as functions of their state."""
from collections.abc import Sequence

from ..ops.shape import stack
from ..tensor import Tensor

_MISSING = object()


def _untie(module, given):
    """``given`` with each tied name filled in from the name the caller gave (torch's rule)."""
    named = {}
    named.update(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    by_tensor = {}
    for name, t in named.items():
        by_tensor.setdefault(id(t), set()).add(name)
    tied = {n: names for names in by_tensor.values() if len(names) > 1 for n in names}
    given_tied = {n for n in given if n in tied}
    for n in given_tied:
        names = tied[n]
        if len(names & given_tied) > 1 and len({id(given[m]) for m in names if m in given}) != 1:
            raise ValueError("functional_call got multiple values for keys %s, which are tied. "
                             "Consider using tie_weights=False" % sorted(names))
    out = dict(given)
    for n in given_tied:
        for m in tied[n]:
            out[m] = given[n]
    return out


def _submodule(module, path):
    for attr in path.split(".") if path else ():
        try:
            module = getattr(module, attr)
        except AttributeError:
            raise AttributeError("%s has no attribute `%s`" % (module._get_name(), attr)) \
                from None
    return module


def _swap(module, name, tensor):
    """Put ``tensor`` at ``name`` (a dotted path) and return what was there (_MISSING if
    nothing)."""
    prefix, _, attr = name.rpartition(".")
    mod = _submodule(module, prefix)
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, Tensor):
        raise TypeError("%s is not an instance of torch.Tensor" % (tensor,))
    for store in ("_parameters", "_buffers"):
        d = mod.__dict__.get(store)
        if d is not None and attr in d:
            orig = d[attr]
            if tensor is _MISSING:
                del d[attr]
            else:
                d[attr] = tensor
            return orig
    orig = getattr(mod, attr, _MISSING)
    if orig is not _MISSING and orig is not None and not isinstance(orig, Tensor):
        raise TypeError("attribute `%s`: %s is not an instance of torch.Tensor" % (attr, orig))
    if tensor is _MISSING:
        if orig is not _MISSING:
            delattr(mod, attr)
    else:
        setattr(mod, attr, tensor)
    return orig


def _swap_all(module, named):
    done = {}
    try:
        for name, t in named.items():
            done[name] = _swap(module, name, t)
    except Exception:
        for name, t in done.items():
            _swap(module, name, t)
        raise
    return done


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call ``module`` with its parameters and buffers replaced by the given tensors (by
    ``state_dict``-style name), restoring them afterwards, as ``torch.func.functional_call``.

    Example:
        >>> import ember
        >>> from ember.func import functional_call
        >>> lin = ember.nn.Linear(2, 1)
        >>> params = {"weight": ember.ones(1, 2), "bias": ember.zeros(1)}
        >>> functional_call(lin, params, (ember.tensor([1.0, 2.0]),))
        tensor([3.])
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        given = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError("%s appeared in multiple dictionaries; behavior of functional call "
                             "is ambiguous" % repeated)
        given = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         "dicts, but got %s" % type(parameter_and_buffer_dicts))
    kwargs = {} if kwargs is None else kwargs
    args = () if args is None else (args if isinstance(args, tuple) else (args,))
    named = _untie(module, given) if tie_weights else given
    if strict:
        valid = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        valid |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing, unexpected = sorted(valid - set(named)), sorted(set(named) - valid)
        msgs = []
        if unexpected:
            msgs.append("Unexpected key(s): %s." % ", ".join(map(repr, unexpected)))
        if missing:
            msgs.append("Missing key(s): %s." % ", ".join(map(repr, missing)))
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for %s:\n\t%s"
                               % (module._get_name(), "\n\t".join(msgs)))
    orig = {}
    try:
        orig = _swap_all(module, named)
        return module(*args, **kwargs)
    finally:
        now = _swap_all(module, orig)
        given.update({k: now[k] for k in given if k in now})


def stack_module_state(models):
    """``(params, buffers)``: each parameter and buffer of the same-class ``models`` stacked
    along a new first dimension (parameters as new leaves that require grad), as
    ``torch.func.stack_module_state``, for ensembling with :func:`vmap`."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {k: _stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]}
    buffers = {k: _stacked_leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers


def _stacked_leaf(tensors, name):
    rg = [t.requires_grad for t in tensors]
    if any(rg) and not all(rg):
        raise RuntimeError("Expected %s from each model to have the same .requires_grad" % name)
    result = stack(tensors)
    if all(rg):
        result = result.detach().requires_grad_()
    return result
