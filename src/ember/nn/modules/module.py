"""nn.Module: the base class of layers; registers Parameters, buffers and sub-modules in order."""
from collections import OrderedDict, namedtuple
import functools
import warnings

from ...backend import get_default_device, set_default_device

from ...ops.creation import empty_like
from ...tensor import RemovableHandle, Tensor
from ..parameter import Parameter
from ._backward_hooks import BackwardHook, attach_legacy_hooks

__all__ = ["Module", "register_module_forward_hook", "register_module_forward_pre_hook",
           "register_module_full_backward_pre_hook", "register_module_full_backward_hook",
           "register_module_backward_hook", "register_module_buffer_registration_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"
_global_forward_hooks = OrderedDict()
_global_forward_hooks_with_kwargs = {}
_global_forward_hooks_always_called = {}
_global_forward_pre_hooks = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_is_full_backward_hook = [None]     # True: full hooks, False: legacy ones
_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()


def _factory_device(init):
    """A built-in layer's ``__init__`` whose ``device=`` factory argument places everything it
    creates there (torch's ``factory_kwargs``): ``meta`` builds without data or random draws."""
    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        dev = kwargs.get("device")
        if dev is None:
            return init(self, *args, **kwargs)
        prev = get_default_device()
        set_default_device(dev)
        try:
            return init(self, *args, **kwargs)
        finally:
            set_default_device(prev)
    return __init__


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """A forward hook ``hook(module, args, output)`` called for every module, before the
    module's own forward hooks."""
    h = RemovableHandle(_global_forward_hooks, _global_forward_hooks_always_called,
                        _global_forward_hooks_with_kwargs)
    _global_forward_hooks[h.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[h.id] = True
    if always_call:
        _global_forward_hooks_always_called[h.id] = True
    return h


def register_module_forward_pre_hook(hook):
    """A forward pre-hook ``hook(module, args)`` called for every module, before the module's
    own pre-hooks."""
    h = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[h.id] = hook
    return h


def register_module_full_backward_pre_hook(hook):
    """A backward pre-hook ``hook(module, grad_output)`` for every module, before the
    module's own."""
    h = RemovableHandle(_global_backward_pre_hooks)
    _global_backward_pre_hooks[h.id] = hook
    return h


def register_module_full_backward_hook(hook):
    """A full backward hook ``hook(module, grad_input, grad_output)`` for every module,
    before the module's own."""
    if _global_is_full_backward_hook[0] is False:
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a "
                           "global Module hook. Please use only one of them.")
    _global_is_full_backward_hook[0] = True
    h = RemovableHandle(_global_backward_hooks)
    _global_backward_hooks[h.id] = hook
    return h


def register_module_backward_hook(hook):
    """Deprecated (a non-full hook on every module); use
    ``register_module_full_backward_hook``."""
    if _global_is_full_backward_hook[0] is True:
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a "
                           "global Module hook. Please use only one of them.")
    _global_is_full_backward_hook[0] = False
    h = RemovableHandle(_global_backward_hooks)
    _global_backward_hooks[h.id] = hook
    return h


def register_module_buffer_registration_hook(hook):
    """``hook(module, name, buffer)`` whenever any module registers a buffer; it may return
    the buffer to register instead."""
    h = RemovableHandle(_global_buffer_registration_hooks)
    _global_buffer_registration_hooks[h.id] = hook
    return h


def register_module_module_registration_hook(hook):
    """``hook(module, name, submodule)`` whenever any module registers a sub-module; it may
    return the sub-module to register instead."""
    h = RemovableHandle(_global_module_registration_hooks)
    _global_module_registration_hooks[h.id] = hook
    return h


def register_module_parameter_registration_hook(hook):
    """``hook(module, name, param)`` whenever any module registers a parameter; it may return
    the parameter to register instead."""
    h = RemovableHandle(_global_parameter_registration_hooks)
    _global_parameter_registration_hooks[h.id] = hook
    return h


def _registered(hooks, module, name, value):
    """``value`` after the global registration ``hooks`` (each may replace it)."""
    for hook in list(hooks.values()):
        out = hook(module, name, value)
        if out is not None:
            value = out
    return value


def _addindent(s, n):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line if line.strip() else "" for line in lines[1:])


class Module:
    """Base class for all neural network modules.

    Assigning a Parameter, a Module or an ``nn.Buffer`` as an attribute registers it; the order
    of assignment is the order of ``parameters()`` and of the ``state_dict`` keys.

    Example:
        >>> import ember
        >>> class Net(ember.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = ember.nn.Linear(4, 3)
        ...     def forward(self, x):
        ...         return self.fc(x).relu()
        >>> [name for name, _ in Net().named_parameters()]
        ['fc.weight', 'fc.bias']
    """

    training = True
    _version = 1
    call_super_init = False
    dump_patches = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        code = getattr(init, "__code__", None)
        if code is not None and cls.__module__.startswith("ember.nn.") and \
                "device" in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
            cls.__init__ = _factory_device(init)

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and kwargs:
            raise TypeError("%s.__init__() got an unexpected keyword argument '%s'"
                            % (type(self).__name__, next(iter(kwargs))))
        if self.call_super_init is False and args:
            raise TypeError("%s.__init__() takes 1 positional argument but %d were given"
                            % (type(self).__name__, len(args) + 1))
        d = self.__dict__       # (torch's attributes, in torch's order)
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_is_full_backward_hook"] = None
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = OrderedDict()
        d["_forward_hooks_always_called"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = OrderedDict()
        d["_state_dict_hooks"] = OrderedDict()
        d["_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()
        d["_modules"] = {}

    def forward(self, *input):
        raise NotImplementedError('Module [%s] is missing the required "forward" function'
                                  % type(self).__name__)

    def _check_init(self, store, what):
        if store not in self.__dict__:
            if what is None:      # (add_module: torch fails reading the missing dict)
                raise AttributeError("'%s' object has no attribute '%s'"
                                     % (type(self).__name__, store))
            raise AttributeError("cannot assign %s before Module.__init__() call" % what)

    def register_parameter(self, name, param):
        """Add a Parameter (or None, for an optional one) under ``name``."""
        self._check_init("_parameters", "parameter")
        if not isinstance(name, str):
            raise TypeError("parameter name should be a string. Got %s" % _typename(name))
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError("attribute '%s' already exists" % name)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError("cannot assign '%s' object to parameter '%s' (torch.nn.Parameter or "
                            "None required)" % (_typename(param), name))
        if param is not None and param.grad_fn is not None:
            raise ValueError("Cannot assign non-leaf Tensor to parameter '%s'. Model parameters "
                             "must be created explicitly." % name)
        if _global_parameter_registration_hooks:
            param = _registered(_global_parameter_registration_hooks, self, name, param)
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Add a tensor (or None) that is state but not a parameter (e.g. running_mean)."""
        self._check_init("_buffers", "buffer")
        if not isinstance(name, str):
            raise TypeError("buffer name should be a string. Got %s" % _typename(name))
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError("attribute '%s' already exists" % name)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError("cannot assign '%s' object to buffer '%s' (torch Tensor or None "
                            "required)" % (_typename(tensor), name))
        if _global_buffer_registration_hooks:
            tensor = _registered(_global_buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        """Add a child module under ``name``."""
        self._check_init("_modules", None)
        if module is not None and not isinstance(module, Module):
            raise TypeError("%s is not a Module subclass" % _typename(module))
        if not isinstance(name, str):
            raise TypeError("module name should be a string. Got %s" % _typename(name))
        if hasattr(self, name) and name not in self._modules:
            raise KeyError("attribute '%s' already exists" % name)
        if "." in name:
            raise KeyError('module name can\'t contain ".", got: %s' % name)
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        if _global_module_registration_hooks:
            module = _registered(_global_module_registration_hooks, self, name, module)
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_from(self, name, keep="_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError("cannot assign '%s' as parameter '%s' (torch.nn.Parameter or None "
                                "expected)" % (_typename(value), name))
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _remove_from(self, name, keep="_modules")
            if _global_module_registration_hooks:
                value = _registered(_global_module_registration_hooks, self, name, value)
            d["_modules"][name] = value
        elif d.get("_modules") is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError("cannot assign '%s' as child module '%s' (torch.nn.Module or "
                                "None expected)" % (_typename(value), name))
            if _global_module_registration_hooks:
                value = _registered(_global_module_registration_hooks, self, name, value)
            d["_modules"][name] = value
        elif isinstance(value, Tensor) and "_buffer_persistent" in getattr(value, "__dict__", {}):
            persistent = value.__dict__.pop("_buffer_persistent")
            _remove_from(self, name, keep="_buffers")
            self.register_buffer(name, value, persistent)
        elif d.get("_buffers") is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError("cannot assign '%s' as buffer '%s' (torch.nn.Buffer, torch.Tensor "
                                "or None expected)" % (_typename(value), name))
            if _global_buffer_registration_hooks:
                value = _registered(_global_buffer_registration_hooks, self, name, value)
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            s = d.get(store)
            if s is not None and name in s:
                return s[name]
        raise AttributeError("'%s' object has no attribute '%s'" % (type(self).__name__, name))

    def __delattr__(self, name):
        for store in ("_parameters", "_buffers", "_modules"):
            s = self.__dict__.get(store)
            if s is not None and name in s:
                del s[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self))
        for store in ("_parameters", "_buffers", "_modules"):
            keys += list(self.__dict__.get(store, {}))
        return sorted(set(k for k in keys if not k[0].isdigit()))

    def get_submodule(self, target):
        """The sub-module at dotted path ``target`` ('' is self)."""
        mod = self
        if target == "":
            return mod
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        """Put ``module`` at dotted path ``target`` (its parent must exist; with ``strict``,
        the attribute too)."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError("`module` is not an nn.Module, found %s" % type(module))
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]):
            mod = getattr(parent, atoms[-1])
            if not isinstance(mod, Module):
                raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target):
        """The Parameter at dotted path ``target``."""
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        buffer = getattr(mod, name)
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return buffer

    def _named_members(self, get, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for mod_prefix, mod in mods:
            for k, v in get(mod):
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(v))
                yield (mod_prefix + ("." if mod_prefix else "") + k, v)

    def parameters(self, recurse=True):
        """The Parameters of this module (and its sub-modules), in registration order."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """``(name, Parameter)`` pairs; names are the state_dict keys."""
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                   remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                   remove_duplicate)

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """This module and every sub-module, depth first, with dotted names."""
        if memo is None:
            memo = set()
        stack = [(prefix, self)]
        while stack:
            name, mod = stack.pop()
            if remove_duplicate:
                if id(mod) in memo:
                    continue
                memo.add(id(mod))
            yield name, mod
            children = [(name + ("." if name else "") + k, m)
                        for k, m in mod._modules.items() if m is not None]
            stack.extend(reversed(children))

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def get_extra_state(self):
        """The extra state a subclass saves in its state_dict (``_extra_state``); a subclass
        that has some overrides this and ``set_extra_state``."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug.")

    def set_extra_state(self, state):
        """Restore the extra state ``get_extra_state`` returned (see there)."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug.")

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An ordered dict of parameters and persistent buffers, keyed as torch keys them."""
        if args:
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.state_dict for details.", FutureWarning, stacklevel=2)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        d = self.__dict__
        for hook in d.get("_state_dict_pre_hooks", {}).values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in d.get("_state_dict_hooks", {}).values():
            hook_result = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                if hook_result is not None:
                    destination = hook_result
            elif hook_result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy parameters and buffers from ``state_dict``.

        Every mismatch (missing, unexpected or mis-shaped key) is reported at once, by name and
        shape; as in torch, the keys that do fit are loaded even then. Returns
        ``(missing_keys, unexpected_keys)``.
        """
        if not hasattr(state_dict, "items"):
            raise TypeError("Expected state_dict to be dict-like, got %s." % type(state_dict))
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)    # (the modules' upgrades edit this copy only)
        hook_missing, hook_unexpected, errors = {}, {}, []
        for name, mod in self.named_modules(remove_duplicate=False):
            prefix = name + "." if name else ""
            local = {} if metadata is None else metadata.get(name, {})
            hook_missing[name], hook_unexpected[name] = [], []  # (hooks always see strict=True)
            mod._load_from_state_dict(state_dict, prefix, local, True, hook_missing[name],
                                      hook_unexpected[name], errors)
        own = OrderedDict()     # (what the modules hold, without the state_dict hooks)
        extra = {}      # (the extra-state keys a module restores with set_extra_state)
        missing, unexpected = [], []    # (torch's order: module by module, hooks' keys first)
        for name, mod in self.named_modules(remove_duplicate=False):
            prefix = name + "." if name else ""
            before = len(own)
            mod._save_to_state_dict(own, prefix, True)
            key = prefix + _EXTRA_STATE_KEY_SUFFIX
            own.pop(key, None)
            if type(mod).set_extra_state is not Module.set_extra_state:
                own[key] = extra[key] = mod
            mine = list(own)[before:]
            missing += hook_missing[name] + [k for k in mine if k not in state_dict]
            unexpected += hook_unexpected[name]
            if key not in extra and key in state_dict:      # (no set_extra_state to take it)
                unexpected.append(key)
            for k in state_dict:
                head, dot, _ = k[len(prefix):].partition(".")
                if k.startswith(prefix) and k != key and (
                        head not in mod._modules if dot else k not in mine):
                    unexpected.append(k)
        bad = set()     # (keys that do not fit: reported, not loaded)
        for k, v in state_dict.items():
            if k not in own or k in extra:
                continue
            if not isinstance(v, Tensor):
                errors.append('While copying the parameter named "%s", expected torch.Tensor '
                              "or Tensor-like object from checkpoint but received %s"
                              % (k, type(v)))
                bad.add(k)
                continue
            if tuple(v.shape) != tuple(own[k].shape):
                errors.append("size mismatch for %s: copying a param with shape %s from "
                              "checkpoint, the shape in current model is %s."
                              % (k, v.shape, own[k].shape))
                bad.add(k)
        from ...autograd.grad_mode import no_grad
        from ... import __future__ as _future
        with no_grad():
            for k, v in state_dict.items():
                if k in extra:
                    extra[k].set_extra_state(v)
                    continue
                if k not in own or k in bad:
                    continue
                target = own[k]
                if target.is_meta and not v.is_meta and not assign:
                    warnings.warn(
                        f"for {k}: copying from a non-meta parameter in the checkpoint to a meta "
                        "parameter in the current model, which is a no-op. (Did you mean to "
                        "pass `assign=True` to assign items in the state dictionary to their "
                        "corresponding key in the module instead of copying them in place?)",
                        stacklevel=2)
                if _future.get_swap_module_params_on_conversion():
                    _swap_in(target, v, assign)
                elif assign:
                    self._assign(k, v)
                else:
                    target.copy_(v)
        incompatible = _IncompatibleKeys(missing, unexpected)
        for mod in _post_order(self):
            for hook in mod.__dict__.get("_load_state_dict_post_hooks", {}).values():
                out = hook(mod, incompatible)
                assert out is None, (
                    "Hooks registered with ``register_load_state_dict_post_hook`` are not"
                    "expected to return new values, if incompatible_keys need to be modified,"
                    "it should be done inplace.")
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: %s. "
                              % ", ".join('"%s"' % k for k in unexpected))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: %s. "
                              % ", ".join('"%s"' % k for k in missing))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for %s:\n\t%s"
                               % (type(self).__name__, "\n\t".join(errors)))
        return incompatible

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        """Upgrade this module's entries of ``state_dict`` (a copy) from an older ``version``
        in ``local_metadata`` before loading, and run the load-state-dict pre-hooks;
        ``load_state_dict`` then checks and copies every key at once (torch copies here,
        module by module)."""
        for hook in self.__dict__.get("_load_state_dict_pre_hooks", {}).values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)

    def _assign(self, key, value):
        mod_path, _, name = key.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name in mod._parameters:
            mod._parameters[name] = Parameter(value, mod._parameters[name].requires_grad)
        else:
            mod._buffers[name] = value

    def train(self, mode=True):
        """Set training mode (``self.training``) here and in all sub-modules."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.__dict__["training"] = mode
        for m in self.children():     # (each child's own ``train``: subclasses override it)
            m.train(mode)
        return self

    def eval(self):
        """``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all parameters (to None by default)."""
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.detach_()
                    p.grad.zero_()

    def apply(self, fn):
        """Call ``fn(m)`` on every sub-module (children first) and on self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, recurse=True):
        """Replace each parameter, gradient and buffer ``t`` by ``fn(t)``: in place by default,
        as new Parameters or by ``swap_tensors`` when ``ember.__future__`` says so."""
        if recurse:
            for m in self.children():
                m._apply(fn)
        from ... import __future__ as future
        from ...autograd.grad_mode import no_grad
        from ._swap import swap_tensors
        swap = future.get_swap_module_params_on_conversion()
        set_data = not future.get_overwrite_module_params_on_conversion()
        for key, p in self._parameters.items():
            if p is None:
                continue
            with no_grad():
                new = fn(p)
            grad, out = p._grad, p
            if swap:
                try:
                    p._grad = None
                    swap_tensors(p, Parameter(new, requires_grad=p.requires_grad))
                except Exception as e:
                    p._grad = grad
                    raise RuntimeError("_apply(): Couldn't swap %s.%s"
                                       % (self._get_name(), key)) from e
            elif set_data:
                if new is not p:
                    p._array = new._array
            else:
                out = self._parameters[key] = Parameter(new, p.requires_grad)
            if grad is not None:
                with no_grad():
                    new_grad = fn(grad)
                if swap:
                    new_grad.requires_grad_(grad.requires_grad)
                    swap_tensors(grad, new_grad)
                    out._grad = grad
                elif set_data:
                    grad._array = new_grad._array
                else:
                    out._grad = new_grad.requires_grad_(grad.requires_grad)
        for key, b in self._buffers.items():
            if b is not None:
                self._buffers[key] = fn(b)
        return self

    def to(self, *args, **kwargs):
        """Convert parameters and buffers: ``to(dtype)``, ``to('cpu')``, ``to(tensor)``."""
        from ...ops.conversion import to as _to
        _check_to_dtype(args, kwargs)

        memory_format = kwargs.get("memory_format")
        kw = {k: v for k, v in kwargs.items() if k != "memory_format"}
        float_args = [a.dtype if isinstance(a, Tensor) else a for a in args]
        float_args += [a.device for a in args if isinstance(a, Tensor)]
        int_args = [a.device if isinstance(a, Tensor) else a for a in args
                    if not _is_dtype_like(a)]
        int_kw = {k: v for k, v in kw.items() if k != "dtype"}

        def convert(t):
            # torch gives a dtype only to floating/complex tensors, and memory_format only to
            # 4-D/5-D ones
            fmt = {} if memory_format is None or t.dim() not in (4, 5) else {
                "memory_format": memory_format}
            if t.is_floating_point() or t.is_complex():
                return _to(t, *float_args, **kw, **fmt)
            return _to(t, *int_args, **int_kw, **fmt)
        return self._apply(convert)

    def to_empty(self, *, device, recurse=True):
        """Parameters and buffers replaced by uninitialised ones on ``device``."""
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def float(self):
        from ... import dtypes
        return self._apply(lambda t: t.to(dtypes.float32) if t.is_floating_point() else t)

    def double(self):
        from ... import dtypes
        return self._apply(lambda t: t.to(dtypes.float64) if t.is_floating_point() else t)

    def half(self):
        from ... import dtypes
        return self._apply(lambda t: t.to(dtypes.float16) if t.is_floating_point() else t)

    def bfloat16(self):
        from ... import dtypes
        return self._apply(lambda t: t.to(dtypes.bfloat16) if t.is_floating_point() else t)

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self):
        """Move parameters and buffers to the CPU (in place, as ``to``)."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        """Move parameters and buffers to a CUDA device (in place, as ``to``)."""
        return self._apply(lambda t: t.cuda(device))

    def share_memory(self):
        """Move every parameter and buffer (and their grads) into shared memory, in place."""
        for t in list(self.parameters()) + list(self.buffers()):
            t.share_memory_()
            if t.grad is not None:
                t.grad.share_memory_()
        return self

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args)`` before forward; may return new args."""
        h = RemovableHandle(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[h.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[h.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(h.id, last=False)
        return h

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """``hook(module, args, output)`` after forward; may return a new output."""
        h = RemovableHandle(self._forward_hooks, self._forward_hooks_with_kwargs,
                            self._forward_hooks_always_called)
        self._forward_hooks[h.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[h.id] = True
        if always_call:
            self._forward_hooks_always_called[h.id] = True
        if prepend:
            self._forward_hooks.move_to_end(h.id, last=False)
        return h

    def register_backward_hook(self, hook):
        """Deprecated (torch's non-full hook): ``hook(module, grad_input, grad_output)`` with the
        gradients of the last autograd node of the module's forward (its first output's
        grad_fn); ``register_full_backward_hook`` gives the module's own."""
        if self.__dict__.get("_is_full_backward_hook") is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self.__dict__["_is_full_backward_hook"] = False
        h = RemovableHandle(self._backward_hooks)
        self._backward_hooks[h.id] = hook
        return h

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output)`` when the gradients w.r.t. the module's
        inputs are computed; may return new grad_input."""
        if self.__dict__.get("_is_full_backward_hook") is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self.__dict__["_is_full_backward_hook"] = True
        h = RemovableHandle(self._backward_hooks)
        self._backward_hooks[h.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(h.id, last=False)
        return h

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output)`` before the module's input gradients are computed."""
        h = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[h.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(h.id, last=False)
        return h

    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars)`` before ``state_dict`` collects the state."""
        h = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[h.id] = hook
        return h

    def _register_state_dict_hook(self, hook):
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError(
                "Cannot register the same function as the state dict post hook that was "
                "previously registered via register_state_dict_post_hook")
        h = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[h.id] = hook
        return h

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata)`` after ``state_dict`` collected
        this module's state; it edits ``state_dict`` in place and returns None."""
        hook._from_public_api = True
        h = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[h.id] = hook
        return h

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """``hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)`` (with the module first when ``with_module``) before loading."""
        h = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[h.id] = (
            _WrappedHook(hook, self) if with_module else hook)
        return h

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before ``load_state_dict`` loads this module."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys)`` after ``load_state_dict``; it may edit the
        missing/unexpected key lists in place (before ``strict`` checks them)."""
        h = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[h.id] = hook
        return h

    def __call__(self, *args, **kwargs):
        d = self.__dict__
        if not (d["_forward_hooks"] or d["_forward_pre_hooks"] or d["_backward_hooks"]
                or d["_backward_pre_hooks"] or _global_forward_hooks
                or _global_forward_pre_hooks or _global_backward_hooks
                or _global_backward_pre_hooks):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _get_backward_hooks(self):
        """(full hooks, non-full hooks): the global ones first, then the module's."""
        full, non_full = [], []
        own = self.__dict__.get("_is_full_backward_hook")
        if _global_is_full_backward_hook[0] is True:
            full += _global_backward_hooks.values()
        if own is True:
            full += self._backward_hooks.values()
        if _global_is_full_backward_hook[0] is False:
            non_full += _global_backward_hooks.values()
        if own is False:
            non_full += self._backward_hooks.values()
        return full, non_full

    def _call_with_hooks(self, args, kwargs):
        called = set()      # the always-called forward hooks that ran
        state = {"args": args, "kwargs": kwargs, "out": None}
        try:
            return self._run_hooked(state, called)
        except Exception:
            # torch runs the ``always_call`` forward hooks not yet run, then re-raises
            self._run_always_called(state, called)
            raise

    def _run_always_called(self, state, called):
        args, kwargs, out = state["args"], state["kwargs"], state["out"]
        for hid, hook in list(_global_forward_hooks.items()):
            if hid in _global_forward_hooks_always_called and hid not in called:
                try:
                    r = hook(self, args, out)
                    if r is not None:
                        out = r
                except Exception as e:
                    warnings.warn("global module forward hook with ``always_call=True`` raised "
                                  "an exception that was silenced as another error was raised "
                                  "in forward: %s" % e, stacklevel=3)
        for hid, hook in list(self._forward_hooks.items()):
            if hid in self._forward_hooks_always_called and hid not in called:
                try:
                    if hid in self._forward_hooks_with_kwargs:
                        r = hook(self, args, kwargs, out)
                    else:
                        r = hook(self, args, out)
                    if r is not None:
                        out = r
                except Exception as e:
                    warnings.warn("module forward hook with ``always_call=True`` raised an "
                                  "exception that was silenced as another error was raised in "
                                  "forward: %s" % e, stacklevel=3)

    def _run_hooked(self, state, called):
        args, kwargs = state["args"], state["kwargs"]
        for hid, hook in list(_global_forward_pre_hooks.items()) + \
                list(self._forward_pre_hooks.items()):
            if self._forward_pre_hooks_with_kwargs.get(hid):
                r = hook(self, args, kwargs)
                if r is not None:
                    if not (isinstance(r, tuple) and len(r) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           "(new_args, new_kwargs), but got %s." % (r,))
                    args, kwargs = r
            else:
                r = hook(self, args)
                if r is not None:
                    args = r if isinstance(r, tuple) else (r,)
            state["args"], state["kwargs"] = args, kwargs
        full, legacy = [], []
        if self._backward_hooks or _global_backward_hooks:
            full, legacy = self._get_backward_hooks()
        pre = list(_global_backward_pre_hooks.values()) + list(self._backward_pre_hooks.values())
        bw = full or pre
        if bw:
            hook_state = _ModuleBackwardHook(self, full, pre)
            args = hook_state.setup_input(args)
            state["args"] = args
        out = state["out"] = self.forward(*args, **kwargs)
        for hid, hook in list(_global_forward_hooks.items()) + list(self._forward_hooks.items()):
            if hid in self._forward_hooks_always_called or \
                    hid in _global_forward_hooks_always_called:
                called.add(hid)
            if (self._forward_hooks_with_kwargs.get(hid)
                    or _global_forward_hooks_with_kwargs.get(hid)):
                r = hook(self, args, kwargs, out)
            else:
                r = hook(self, args, out)
            if r is not None:
                out = state["out"] = r
        if bw:
            out = hook_state.setup_output(out)
        if legacy:
            attach_legacy_hooks(self, legacy, args, out)
        return out

    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """Extra text inside this module's repr (override in layers)."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        for key, mod in self._modules.items():
            lines.append("(" + key + "): " + _addindent(repr(mod), 2))
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        d = self.__dict__
        d.update(state)
        # (checkpoints pickled before these attributes existed)
        for name in ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs",
                     "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                     "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks", "_backward_pre_hooks"):
            d.setdefault(name, OrderedDict())
        d.setdefault("_non_persistent_buffers_set", set())
        d.setdefault("_is_full_backward_hook", None)


def _typename(obj):
    """torch.typename: ``torch.FloatTensor`` for a tensor, else the qualified class name."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in (None, "builtins") else module + "." + name


class _WrappedHook:
    """A hook called with its module as the first argument (the module held weakly)."""

    def __init__(self, hook, module):
        import weakref
        self.hook = hook
        self.module = weakref.ref(module)

    def __call__(self, *args, **kwargs):
        module = self.module()
        if module is None:
            raise RuntimeError("You are trying to call the hook of a dead Module!")
        return self.hook(module, *args, **kwargs)

    def __getstate__(self):
        return {"hook": self.hook, "module": self.module()}

    def __setstate__(self, state):
        import weakref
        self.hook = state["hook"]
        self.module = weakref.ref(state["module"])


def _swap_in(param, value, assign):
    """``load_state_dict`` under swap_module_params_on_conversion: swap
    ``param.module_load(value, assign)`` into ``param`` (as torch's ``_load_from_state_dict``)."""
    from ._swap import swap_tensors
    if type(param).module_load is Tensor.module_load:     # (torch's default rule)
        new = value.detach() if assign else param.copy_(value).detach()
    else:
        new = param.module_load(value, assign=assign)
    if new is value or new is param:
        raise RuntimeError("module_load returned one of self or other, please .detach() the "
                           "result if returning one of the inputs in module_load")
    if isinstance(param, Parameter):
        if isinstance(new, Parameter):
            new.requires_grad_(param.requires_grad)
        else:
            new = Parameter(new, requires_grad=param.requires_grad)
    swap_tensors(param, new)


def _post_order(module):
    """``module`` and its sub-modules, children before parents (torch's load order of
    the post-hooks)."""
    out, stack = [], [(module, False)]
    while stack:
        mod, done = stack.pop()
        if done:
            out.append(mod)
            continue
        stack.append((mod, True))
        stack.extend((m, False) for m in reversed(list(mod._modules.values())) if m is not None)
    return out


_TO_SIGNATURES = (
    " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
    "bool copy = False, *, torch.memory_format memory_format = None)\n"
    " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n")


def _check_to_args(args, kwargs):
    """torch's argument parser for ``Module.to``: its TypeError for a combination that matches
    none of the three signatures and its RuntimeError for a ``copy`` argument."""
    def name(a):
        if _is_dtype_like(a):
            return "torch.dtype"
        return "Tensor" if isinstance(a, Tensor) else {"device": "torch.device"}.get(
            type(a).__name__, type(a).__name__)
    lead = 1 if args and (_is_dtype_like(args[0]) or isinstance(args[0], Tensor)) else 2
    head, flags = args[:lead], args[lead:]
    ok = set(kwargs) <= {"device", "dtype", "non_blocking", "copy", "memory_format"}
    ok = ok and len(flags) <= 2 and all(isinstance(f, bool) for f in flags)
    ok = ok and (lead == 1 or len(head) < 2 or head[1] is None or _is_dtype_like(head[1]))
    ok = ok and all(isinstance(kwargs.get(k, False), bool) for k in ("non_blocking", "copy"))
    if not ok:
        got = [name(a) for a in args] + ["%s=%s" % (k, name(kwargs[k])) for k in sorted(kwargs)]
        got = ", ".join(got) if args else "".join(g + ", " for g in got)
        raise TypeError("to() received an invalid combination of arguments - got (%s), but "
                        "expected one of:\n%s" % (got, _TO_SIGNATURES))
    if len(flags) == 2 or "copy" in kwargs:
        raise RuntimeError(".to() does not accept copy argument")


def _check_to_dtype(args, kwargs):
    """torch's refusal of an integral or bool dtype in ``Module.to`` (before anything moves)."""
    _check_to_args(args, kwargs)
    dtype = kwargs.get("dtype")
    for a in args:
        if _is_dtype_like(a):
            dtype = a
        elif isinstance(a, Tensor):
            dtype = a.dtype
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got "
                        "desired dtype=%s" % dtype)


def _is_dtype_like(a):
    from ... import dtypes
    return isinstance(a, dtypes.dtype)


def _remove_from(module, name, keep):
    for store in ("_parameters", "_buffers", "_modules"):
        if store != keep:
            s = module.__dict__.get(store)
            if s is not None and name in s:
                del s[name]
    module.__dict__.pop(name, None)


class _ModuleBackwardHook(BackwardHook):
    """A module's full backward (pre-)hooks, given as lists: the global hooks, then the
    module's own (``torch.utils.hooks.BackwardHook``)."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        super().__init__(module)
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks

    def setup_input_hook(self, args):
        return self.setup_input(args)

    def setup_output_hook(self, args):
        return self.setup_output(args)

    def got_outputs(self, grads):
        for hook in self.user_pre_hooks:
            r = hook(self.module, tuple(grads))
            if r is not None:
                grads = tuple(r) if isinstance(r, (tuple, list)) else (r,)
        self.grad_outputs = tuple(grads)
        if not self.input_wrapped:
            self._call((None,) * max(self.n_inputs, 1))
        return grads

    def _call(self, grad_inputs):
        for hook in self.user_hooks:
            r = hook(self.module, grad_inputs, self.grad_outputs)
            if r is not None:
                r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
                if len(r) != len(grad_inputs):
                    raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                       "got %d, but expected %d" % (len(r), len(grad_inputs)))
                grad_inputs = r
        return grad_inputs
