"""The Optimizer base class: parameter groups, per-parameter state and torch's state_dict layout."""
import copy
import warnings
import functools
from collections import OrderedDict, defaultdict
from itertools import chain

import numpy as np

from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..backend import backend_for, backend_of, get_array_module
from ..ops._util import xp_of
from ..tensor import Tensor
from ..tensor import RemovableHandle

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook",
           "required"]


class _RequiredParameter:
    """Marks a hyper-parameter that has no default (torch's ``optim.optimizer.required``)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


_cpu = backend_for("cpu")


def _to_scalar(value):
    if isinstance(value, Tensor):
        return value.item()
    if isinstance(value, tuple) and any(isinstance(v, Tensor) for v in value):
        return tuple(_to_scalar(v) for v in value)
    return value


def _check_tensor_lr(lr):
    """Raise as torch's optimizers do, first thing, for a Tensor lr of more than one element."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")


def _scalar_hyperparameters(group):
    """``group`` with Tensor hyper-parameters (``lr=torch.tensor(0.01)``, Tensor betas) read
    as Python numbers, as torch's single-tensor (CPU) implementations read them."""
    for key, value in group.items():
        if key != "params" and (isinstance(value, Tensor) or isinstance(value, tuple) and any(
                isinstance(v, Tensor) for v in value)):
            return {k: (v if k == "params" else _to_scalar(v)) for k, v in group.items()}
    return group


def _scalar_state(value=0.0):
    """A 0-d float32 CPU tensor, what torch keeps as ``state['step']`` whatever the device of
    the parameter (so reading the step never waits for a device)."""
    return Tensor._wrap(_cpu.xp.asarray(value, dtype=np.float32))


def _zeros_like(p):
    """Zeros shaped like ``p``, on its device: the optimizers' state buffers."""
    return Tensor._wrap(xp_of(p).zeros_like(p._array))


def _grad_array(p, maximize):
    """``p.grad`` as a raw array, negated (a new array) when maximizing."""
    g = p._grad._array
    return -g if maximize else g


def _with_weight_decay(g, p, weight_decay):
    """``g + weight_decay * p`` as a new array (torch's ``grad.add(param, alpha=wd)``)."""
    return g + weight_decay * p._array if weight_decay != 0 else g


def _lerp_(a, b, w, tmp=None):
    """In-place ``a.lerp_(b, w)`` with torch's formula for either half of ``w``.

    ``tmp`` is an optional work array shaped like ``a``; with it no array is allocated.
    """
    xp = get_array_module(a)
    tmp = xp.subtract(b, a, out=tmp)
    if w < 0.5:
        tmp *= w
        a += tmp
    else:
        tmp *= 1 - w
        xp.subtract(b, tmp, out=a)
    return a


def _scratch(opt, like, k=0):
    """Work array number ``k`` shaped and typed like ``like``, kept by ``opt`` across steps.

    Reusing warm buffers instead of allocating temporaries is most of the speed of an update.
    """
    bufs = opt.__dict__.setdefault("_scratch", {})
    key = (type(like), like.dtype.str, k)
    buf = bufs.get(key)
    if buf is None or buf.size < like.size:
        buf = bufs[key] = get_array_module(like).empty(like.size, like.dtype)
    return buf[:like.size].reshape(like.shape)


class Optimizer:
    """Base class of all optimizers.

    Args:
        params: an iterable of Tensors, or of dicts (parameter groups) each holding ``'params'``
            and any options that override ``defaults`` for that group.
        defaults: the default value of every option.

    Subclasses implement ``step(closure=None)``, updating ``p._array`` in place under no_grad.
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        self._init_hooks()
        self._patch_step_function()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got torch.%s" % params.dtype._legacy)
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._init_hooks()
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    def _init_hooks(self):
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())

    def _patch_step_function(self):
        """Wrap the class's ``step`` (once) so the step hooks run around any optimizer's step,
        as torch does."""
        cls = self.__class__
        if not getattr(cls.step, "hooked", None):
            cls.step = _hook_step(cls.step)
            cls.step.hooked = True

    def __repr__(self):
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += "\nParameter Group %d\n" % i
            for key in sorted(group):
                if key != "params":
                    text += "    %s: %s\n" % (key, group[key])
        return text + ")"

    def add_param_group(self, param_group):
        """Add a group of parameters (a dict with ``'params'`` and optional options)."""
        if not isinstance(param_group, dict):
            raise TypeError("param_group must be a dict, but got %s" % type(param_group).__name__)
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        named = [isinstance(p, tuple) and len(p) == 2 for p in param_group["params"]]
        if any(named):
            if not all(named):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = [name for name, _ in param_group["params"]]
            param_group["params"] = [p for _, p in param_group["params"]]
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + type(p).__name__)
            if not self.defaults.get("differentiable", None) and not (p.is_leaf
                                                                       or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 "optimization parameter " + name)
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        for group in self.param_groups:
            if ("param_names" in param_group) != ("param_names" in group):
                raise ValueError("all optimizer param groups should be with/without names. cannot "
                                 "add param group %s names to the optimizer"
                                 % ("with" if "param_names" in param_group else "without"))
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Reset the gradient of every parameter (to None, or to zeros in place)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if p._grad.grad_fn is not None:
                        p._grad = p._grad.detach()
                    g = p._grad
                    g._array[...] = 0
                    if g.is_sparse:     # (torch's zero_: no stored element, coalesced)
                        g._sp_indices, g._sp_values = g._sp_indices[:, :0], g._sp_values[:0]
                        g._sp_coalesced = True

    def _params_with_grad(self, group):
        return [p for p in group["params"] if p._grad is not None]

    def _run_closure(self, closure):
        if closure is None:
            return None
        from ..autograd.grad_mode import enable_grad
        with enable_grad():
            return closure()

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the model, returns the loss."""
        loss = self._run_closure(closure)
        with no_grad():
            for group in self.param_groups:
                hyper = _scalar_hyperparameters(group)
                params = self._params_with_grad(group)
                if self._sparse_error and any(p._grad.is_sparse for p in params):
                    raise RuntimeError(self._sparse_error)
                for p in params:
                    _check_step_flags(self, hyper, p)
                    if self._complex_as_real and p._array.dtype.kind == "c":
                        _update_real_view(self, p, hyper, self.state[p])
                    else:
                        self._update(p, hyper, self.state[p])
                    p._bump()
        return loss

    # torch updates a complex parameter as the real tensor view_as_real(p) (its grad and state
    # likewise), the state staying complex; optimizers whose rule is complex-linear opt out.
    _complex_as_real = True
    # torch's error for a sparse .grad, raised before any parameter of the group is updated
    # (None where the optimizer supports sparse gradients)
    _sparse_error = None
    # torch's capturable-device assertion: what it names (single-tensor, foreach) and whether
    # its device list holds 'xla' (single-tensor, foreach)
    _capturable_names = ("params and state_steps", "params and state_steps")
    _capturable_xla = (True, False)

    def _updates_real_view(self, group):
        """Whether torch's first in-place write to a complex parameter goes through its real
        view (its first error then names the view)."""
        return self._complex_as_real

    def _update(self, p, group, state):
        raise NotImplementedError

    def state_dict(self):
        """The optimizer's state in torch's layout.

        Returns:
            ``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}``, where a
            parameter's index counts across all groups in order.
        """
        for pre_hook in list(self._optimizer_state_dict_pre_hooks.values()):
            pre_hook(self)
        index = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index and s}
        state_dict = {"state": state, "param_groups": groups}
        for post_hook in list(self._optimizer_state_dict_post_hooks.values()):
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict):
        """Load a state produced by ``state_dict()`` (of ember or of torch's same optimizer)."""
        state_dict = state_dict.copy()
        for pre_hook in list(self._optimizer_load_state_dict_pre_hooks.values()):
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            key = int(k) if isinstance(k, str) else k
            if key in id_map:
                p = id_map[key]
                state[p] = {name: _cast_state(p, name, value) for name, value in v.items()}
            else:
                state[k] = v
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            new = {k: copy.deepcopy(v) if isinstance(v, (list, dict)) else v
                   for k, v in saved.items() if k != "params"}
            if "betas" in new and isinstance(new["betas"], list):
                new["betas"] = tuple(new["betas"])
            new["params"] = group["params"]
            new_groups.append(new)
        self.__setstate__({"state": state, "param_groups": new_groups})
        for post_hook in list(self._optimizer_load_state_dict_post_hooks.values()):
            post_hook(self)

    def register_step_pre_hook(self, hook):
        """Register ``hook(optimizer, args, kwargs)`` to run before ``step``; it may return
        new ``(args, kwargs)``."""
        return _register(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """Register ``hook(optimizer, args, kwargs)`` to run after ``step``."""
        return _register(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """Register ``hook(optimizer)`` to run before ``state_dict``."""
        return _register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """Register ``hook(optimizer, state_dict)`` to run after ``state_dict``; it may return
        a new state dict."""
        return _register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """Register ``hook(optimizer, state_dict)`` to run before ``load_state_dict``; it may
        return the state dict to load instead."""
        return _register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """Register ``hook(optimizer)`` to run after ``load_state_dict``."""
        return _register(self._optimizer_load_state_dict_post_hooks, hook, prepend)


def _as_real(arr):
    """A complex array seen as real with a trailing dimension of 2 (torch's view_as_real)."""
    return arr[..., None].view(_dt.from_numpy_dtype(arr.dtype).to_real().np)


def _as_complex(arr):
    """A contiguous real array with a trailing dimension of 2 seen as complex."""
    return arr.view(_dt.from_numpy_dtype(arr.dtype).to_complex().np)[..., 0]


def _update_real_view(opt, p, group, state):
    """``opt._update`` on the real views of complex ``p``, its grad and its complex state;
    state the update creates or replaces is kept as complex, as torch keeps it."""
    real_p = Tensor._wrap(_as_real(p._array))
    real_p._grad = Tensor._wrap(_as_real(p._grad._array))
    views = {k: Tensor._wrap(_as_real(v._array))
             if isinstance(v, Tensor) and v._array.dtype.kind == "c" else v
             for k, v in state.items()}
    real_state = dict(views)
    opt._update(real_p, group, real_state)
    shape = real_p._array.shape
    for key, value in real_state.items():
        if views.get(key) is not value:
            if isinstance(value, Tensor) and value._array.shape == shape:
                value = Tensor._wrap(_as_complex(xp_of(value).ascontiguousarray(value._array)))
            state[key] = value


_CAPTURABLE_DEVICES = ["cuda", "xpu", "hpu", "privateuseone"]
_FUSED_DEVICES = ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone"]


def _check_step_flags(opt, group, p):
    """torch's step-time errors for ``fused``, ``capturable`` and ``differentiable`` groups on
    ember's devices (none of which CUDA graphs can capture)."""
    if group.get("fused") and (p._array.dtype.kind != "f" or p.device.type != "cpu"):
        raise RuntimeError("`fused=True` requires all the params to be floating point Tensors "
                           "of supported devices: %s but %s and %s"
                           % (_FUSED_DEVICES, p.dtype, p.device.type))
    if group.get("capturable"):
        k = 1 if group.get("foreach") else 0
        devices = _CAPTURABLE_DEVICES + (["xla"] if opt._capturable_xla[k] else [])
        raise AssertionError("If capturable=True, %s must be on supported devices: %s."
                             % (opt._capturable_names[k], devices))
    if group.get("differentiable") and p.requires_grad:
        # (torch steps with grad enabled: its in-place update of the leaf fails)
        raise RuntimeError("a %sleaf Variable that requires grad is being used in an in-place "
                           "operation." % ("view of a " if p.is_complex() and
                                           opt._updates_real_view(group) else ""))


def _check_fused_args(fused, foreach, differentiable):
    """torch's constructor errors of an optimizer with a fused implementation."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _register(hooks, hook, prepend=False):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """Register ``hook(optimizer, args, kwargs)`` to run before every optimizer's ``step``
    (before its own pre-hooks); it may return new ``(args, kwargs)``."""
    return _register(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """Register ``hook(optimizer, args, kwargs)`` to run after every optimizer's ``step``
    (after its own post-hooks)."""
    return _register(_global_optimizer_post_hooks, hook)


def _hook_step(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        self = args[0]
        for pre_hook in [*_global_optimizer_pre_hooks.values(),
                         *self._optimizer_step_pre_hooks.values()]:
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError("%s must return None or a tuple of (new_args, "
                                       "new_kwargs), but got %s." % (func, result))
        out = func(*args, **kwargs)
        for post_hook in [*self._optimizer_step_post_hooks.values(),
                          *_global_optimizer_post_hooks.values()]:
            post_hook(self, args, kwargs)
        return out
    return wrapper


def _cast_state(p, name, value):
    """A loaded state value as torch places it: tensors (nested in dicts, lists and tuples too)
    on ``p``'s device and, when ``p`` is floating, in its dtype; ``step`` left as it is. A tensor
    that needs no change is kept, not copied, as torch's ``Tensor.to`` keeps it."""
    if isinstance(value, dict):
        return {k: _cast_state(p, k, v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(p, None, v) for v in value)
    if hasattr(value, "detach") and not isinstance(value, Tensor):
        value = value.detach().cpu().numpy()     # a torch tensor: its values, on the host
    if isinstance(value, np.ndarray):
        value = Tensor._wrap(value.copy())
    if isinstance(value, Tensor) and name != "step":
        arr = value._array
        b = backend_of(p._array)
        dtype = p._array.dtype if _dt.kind(p._array.dtype) == "f" else arr.dtype
        if arr.dtype == dtype and type(arr) is b.array_type:
            return value
        arr = arr.astype(dtype)
        return Tensor._wrap(arr if type(arr) is b.array_type else b.asarray(arr))
    return value
