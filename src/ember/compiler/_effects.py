"""Steps with effects that a program replays: random draws and batch norm's running statistics.

While ``ember.compile`` records or serves a call, the random functions (``randn``,
``bernoulli_``...) and batch norm's running-statistics update run through the Functions below,
so that ``Function.apply`` hands them to the recorder like any op: a replay then draws fresh
numbers from the generator in eager's order, and updates the statistics in place as eager does.
Outside a compiled call nothing here runs (the patches are installed only while recording).
"""
import sys

from ..autograd.function import Function
from ..backend import get_array_module
from ..nn.modules.normalization import _BatchNorm
from ..ops.normalization import update_running_stats
from ..tensor import Tensor

# the random functions, in place (``t.bernoulli_(p)``) and creating (``ember.randn(...)``)
_FILLS = ("bernoulli_", "uniform_", "normal_", "random_", "exponential_", "geometric_",
          "cauchy_", "log_normal_")
_RANDOM = ("rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like",
           "bernoulli", "multinomial", "normal", "poisson")

_ORIG: dict = {}      # name -> the original function (captured when the patches are first made)


class _Step(Function):
    """A replayable step with an effect: never differentiable."""

    _effect = True

    @staticmethod
    def backward(ctx, *grads):
        return (None,) * len(ctx.needs_input_grad)


class RandomLike(_Step):
    """``like``'s shape and layout filled by the random method ``name`` (a fresh tensor)."""

    _effect = False

    @staticmethod
    def forward(ctx, like, name, *args, **kwargs):
        t = Tensor._wrap(get_array_module(like._array).empty_like(like._array))
        _ORIG[name](t, *args, **kwargs)
        return t


class RandomCall(_Step):
    """A random creation function (``randn``, ``bernoulli``...) called again."""

    _effect = False

    @staticmethod
    def forward(ctx, name, *args, **kwargs):
        return _ORIG[name](*args, **kwargs)


class RunningStats(_Step):
    """Batch norm's update of ``running_mean`` and ``running_var`` from ``input``'s batch,
    in place (the same array calls as ``ember.nn.functional.batch_norm`` in training)."""

    @staticmethod
    def forward(ctx, input, running_mean, running_var, momentum):
        update_running_stats(input._array, running_mean, running_var, momentum)
        return None


class CountUp(_Step):
    """``num_batches_tracked += 1`` (batch norm modules in training)."""

    @staticmethod
    def forward(ctx, counter):
        counter._array[...] += 1
        counter._bump()
        return None


def _root():
    return sys.modules[__package__.rsplit(".", 1)[0]]


def patches(active):
    """(owner, name, replacement) for every function routed through the steps above while
    ``active()`` (the recorder or server of the call) is not None."""
    root = _root()
    ops = root.ops
    F = root.nn.functional
    out = []

    def owners(name):
        found = [(m, name) for m in (root, ops) if name in m.__dict__]
        if name in ops._PLAIN:
            found.append((ops._PLAIN, name))
        if name in Tensor.__dict__:      # (the method: a class attribute of Tensor)
            found.append((Tensor, name))
        return found

    def fill(name):
        def method(self, *args, **kwargs):
            rec = active()
            if rec is None or rec.depth or not rec.may_fill(self, args, kwargs):
                return _ORIG[name](self, *args, **kwargs)
            like = Tensor._wrap(get_array_module(self._array).zeros_like(self._array))
            rec.made(like)
            r = RandomLike.apply(like, name, *args, **kwargs)
            get_array_module(self._array).copyto(self._array, r._array)
            self._version_ref[0] += 1
            rec.alias(self, r)
            return self
        return method

    def call(name):
        def fn(*args, **kwargs):
            rec = active()
            if rec is None or rec.depth or not rec.may_call(args, kwargs):
                return _ORIG[name](*args, **kwargs)
            return RandomCall.apply(name, *args, **kwargs)
        return fn

    for names, make in ((_FILLS, fill), (_RANDOM, call)):
        for name in names:
            _ORIG.setdefault(name, getattr(ops, name))
            new = make(name)
            out.extend((owner, key, new) for owner, key in owners(name))
    _ORIG.setdefault("batch_norm", F.batch_norm)
    _ORIG.setdefault("_BatchNorm.forward", _BatchNorm.forward)

    def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
                   momentum=0.1, eps=1e-05):
        rec = active()
        if rec is None or rec.depth or not training or (running_mean is None and
                                                         running_var is None):
            return _ORIG["batch_norm"](input, running_mean, running_var, weight, bias,
                                       training, momentum, eps)
        out = _ORIG["batch_norm"](input, None, None, weight, bias, training, momentum, eps)
        RunningStats.apply(input, running_mean, running_var, momentum)
        return out

    def bn_forward(self, input):
        rec = active()
        if rec is None or rec.depth or not (self.training and self.track_running_stats and
                                            self.num_batches_tracked is not None and
                                            self.momentum is not None):
            return _ORIG["_BatchNorm.forward"](self, input)
        # (the module's forward with its counter update as a step)
        self._check_input_dim(input)
        CountUp.apply(self.num_batches_tracked)
        return F.batch_norm(input, self.running_mean, self.running_var, self.weight,
                            self.bias, True, self.momentum, self.eps)

    out.append((F, "batch_norm", batch_norm))
    out.append((_BatchNorm, "forward", bn_forward))
    return out


def install(items):
    """Apply ``items`` (from ``patches``); returns what undoes them."""
    saved = []
    for owner, key, new in items:
        if isinstance(owner, dict):
            saved.append((owner, key, owner[key]))
            owner[key] = new
        else:
            saved.append((owner, key, owner.__dict__[key]))
            setattr(owner, key, new)
    return saved


def uninstall(saved):
    for owner, key, old in reversed(saved):
        if isinstance(owner, dict):
            owner[key] = old
        else:
            setattr(owner, key, old)
