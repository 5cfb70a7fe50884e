"""Type hints on the public API of the backend, tensor.py and the autograd engine.

mypy (run by .ci/run) checks that the hints agree with the code. This test checks that every
public function and method of those modules has them, and that each one names something real:
under ``from __future__ import annotations`` hints are strings that Python never evaluates, so a
misspelt one would otherwise surface only in mypy or a documentation tool.
"""
import importlib
import inspect
import typing

import pytest

# (by import_module: ``ember.tensor`` is also the name of the function that makes tensors)
MODULES = [importlib.import_module("ember." + m) for m in
           ("backend", "backend._device", "tensor", "autograd.engine", "autograd.grad_mode",
            "autograd.variable")]
EXTRA = (MODULES[2].RemovableHandle,)     # public through every register_*hook, not in __all__


def _is_public(name):
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _own_classes(cls):
    """``cls`` and its bases that are defined in ember (their methods are ember's API)."""
    return [c for c in cls.__mro__ if c.__module__.startswith("ember.")]


def _functions():
    """(qualified name, function) for every public function, method and property accessor."""
    found = {}
    objs = [getattr(m, n) for m in MODULES for n in m.__all__] + list(EXTRA)
    for obj in objs:
        if inspect.isfunction(obj) and obj.__module__.startswith("ember."):
            found[obj.__qualname__] = obj
        elif inspect.isclass(obj):
            for c in _own_classes(obj):
                for name, attr in vars(c).items():
                    if not _is_public(name) or name in ("__doc__", "__module__"):
                        continue
                    if isinstance(attr, (staticmethod, classmethod)):
                        attr = attr.__func__
                    accessors = [attr] if inspect.isfunction(attr) else \
                        [attr.fget, attr.fset] if isinstance(attr, property) else []
                    for fn in accessors:
                        # Methods bound from ember.ops (tensor._METHODS) are typed there.
                        if fn is not None and fn.__qualname__.startswith(c.__qualname__ + "."):
                            found[fn.__qualname__ + ("" if fn is accessors[0] else ".setter")] = fn
    return sorted(found.items())


FUNCTIONS = _functions()


def test_the_api_is_found():
    names = {n for n, _ in FUNCTIONS}
    for n in ("Tensor.backward", "Tensor.__init__", "Tensor.grad", "Tensor.grad.setter",
              "Tensor.__eq__", "grad", "backward", "_Mode.__call__", "Variable.__new__",
              "backend_for", "device.__init__", "RemovableHandle.remove"):
        assert n in names
    assert "Tensor.sum" not in names and "Tensor.__add__" not in names   # ops' functions


@pytest.mark.parametrize("name,fn", FUNCTIONS, ids=[n for n, _ in FUNCTIONS])
def test_public_signature_is_annotated(name, fn):
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    if params and params[0].name in ("self", "cls"):
        params = params[1:]
    missing = [p.name for p in params if p.annotation is inspect.Parameter.empty]
    assert not missing, "%s: parameters without a type hint: %s" % (name, missing)
    assert sig.return_annotation is not inspect.Signature.empty, "%s: no return type" % name
    typing.get_type_hints(fn)     # every hint names something that exists
