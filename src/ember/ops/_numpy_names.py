"""NumPy's keyword names accepted where torch accepts them: ``axis=`` for ``dim=`` and
``keepdims=`` for ``keepdim=`` (``t.sum(axis=0, keepdims=True)``)."""
import functools

_ALIASES = (("axis", "dim"), ("keepdims", "keepdim"))


def _renamed(fn):
    """``fn`` also taking NumPy's names of its ``dim``/``keepdim`` keywords."""
    @functools.wraps(fn)
    def op(*args, **kwargs):
        if kwargs:
            for alias, torch_name in _ALIASES:
                # (with both names given, the alias stays and is refused, as in torch)
                if alias in kwargs and torch_name not in kwargs:
                    if "out" in kwargs:     # (a method given out=: NumPy's np.sum(t), ...)
                        raise TypeError("%s() got an unexpected keyword argument '%s'"
                                        % (fn.__name__, alias))
                    kwargs[torch_name] = kwargs.pop(alias)
        return fn(*args, **kwargs)
    return op


def numpy_names(namespace, names):
    """Rebind each function ``namespace[name]`` with a ``dim`` or ``keepdim`` parameter to take
    NumPy's keyword names too (called once at the end of an op module)."""
    for name in names:
        fn = namespace.get(name)
        code = getattr(fn, "__code__", None)
        if code is None:
            continue
        params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        if "dim" in params or "keepdim" in params:
            namespace[name] = _renamed(fn)
