"""``torch.utils.swap_tensors`` (here so that ``Module._apply`` can use it without importing
``ember.utils``, which imports ``nn``)."""
import copyreg
import weakref


def swap_tensors(t1, t2) -> None:
    """Swap the contents (class, ``__dict__`` and slots) of two Tensors, keeping each one's
    identity: afterwards ``t1`` holds what ``t2`` held and the other way round. Matches
    ``torch.utils.swap_tensors``, without its reference-count check.

    Example:
        >>> import ember
        >>> a, b = ember.ones(2), ember.zeros(3)
        >>> swap_tensors(a, b)
        >>> a, b
        (tensor([0., 0., 0.]), tensor([1., 1.]))
    """
    if weakref.getweakrefs(t1):
        raise RuntimeError("Cannot swap t1 because it has weakref associated with it")
    if weakref.getweakrefs(t2):
        raise RuntimeError("Cannot swap t2 because it has weakref associated with it")
    slots = set(copyreg._slotnames(t1.__class__))  # type: ignore[attr-defined]
    if slots != set(copyreg._slotnames(t2.__class__)):  # type: ignore[attr-defined]
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
    t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__
    missing = object()
    for slot in slots:
        v1, v2 = getattr(t1, slot, missing), getattr(t2, slot, missing)
        for t, v in ((t1, v2), (t2, v1)):
            if v is missing:
                delattr(t, slot)
            else:
                setattr(t, slot, v)
