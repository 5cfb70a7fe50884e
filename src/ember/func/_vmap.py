"""vmap: map a function over a dimension of its inputs (torch.func.vmap).

ember's vmap first runs ``func`` once on batched tensors (``_batching``): ops with a batching
rule run as one op over the whole batch, other ops once per sample. When the function computes
on a batched tensor's values outside an op (a comparison, ``bool(t)``, an in-place write), when
it draws random numbers under 'same' or 'different', or where the batched run cannot start
(CUDA or strict-device inputs, an empty batch, ember.compile recording), vmap calls ``func``
once per sample and stacks the outputs, which is correct for every op. Either way it raises
torch's errors for bad ``in_dims``/``out_dims``, mismatched batch sizes, random ops under
``randomness='error'``, ``.item()`` on a tensor (from user code), and outputs whose shape
differs between samples (a data-dependent shape).
"""
import contextlib
import functools
import sys
import threading

from .. import random as _random
from ._checks import under_transform
from ..backend import get_array_module
from ..ops.shape import expand, movedim, unsqueeze
from ..ops.shape import stack
from ..tensor import Tensor, _ndarray
from . import _batching as _b
from ._pytree import LEAF_SPEC, broadcast_prefix, tree_flatten, tree_unflatten
from ._rng import _check_randomness, _rng_guard, _rng_state

_ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
         "calling .item() on a Tensor, please try to rewrite what you're doing with other "
         "operations. If error is occurring somewhere inside PyTorch internals, please file a "
         "bug report.")
_local = threading.local()
_patch_lock = threading.Lock()
_patch_count = [0]
_orig_item = Tensor.item


_CONVERSIONS = ("__float__", "__int__", "__index__", "__complex__", "_scalar")


def _guarded_item(self):
    if getattr(_local, "depth", 0):
        frame = sys._getframe(1)
        while frame.f_globals.get("__name__") == "ember.tensor" \
                and frame.f_code.co_name in _CONVERSIONS and frame.f_back is not None:
            frame = frame.f_back     # float(t) in user code is the user's .item()
        if not frame.f_globals.get("__name__", "").startswith("ember."):
            raise RuntimeError(_ITEM)
    return _orig_item(self)


@contextlib.contextmanager
def _in_vmap():
    """While active, ``Tensor.item()`` called from user code raises torch's vmap error.

    NOTE: the method is swapped on the class only while some vmap runs (other threads are
    unaffected: the check is thread-local); a hook in tensor.py would replace this.
    """
    with _patch_lock:
        if _patch_count[0] == 0:
            Tensor.item = _guarded_item
        _patch_count[0] += 1
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        yield
    finally:
        _local.depth -= 1
        with _patch_lock:
            _patch_count[0] -= 1
            if _patch_count[0] == 0:
                Tensor.item = _orig_item


def _fname(func):
    return getattr(func, "__name__", repr(func))


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over dimension ``in_dims`` of its inputs, the results stacked at
    ``out_dims``, as ``torch.func.vmap``.

    ``in_dims`` is an int or a tuple (a pytree prefix of the arguments; None marks an argument
    not mapped over); ``out_dims`` likewise for the outputs. ``randomness`` is 'error'
    (random ops raise), 'different' (each sample draws its own numbers) or 'same' (every
    sample draws the same numbers). ``chunk_size`` is accepted (the batch runs at once).

    Ops with a batching rule (element-wise ops, comparisons, matmul and its relatives,
    reductions, softmax, shape and indexing ops, cat/stack, where, linear) run once over the
    whole batch; other ops run once per sample. Code that reads a batched tensor's values
    outside an op (Python control flow on them, an in-place write, ``print``) makes vmap run
    the whole function once per sample instead. ``grad`` inside vmap gives per-sample
    gradients from one backward pass.

    Deliberate differences from torch: Python control flow on a sample's values works (the
    function then runs once per sample) where torch raises; an in-place change to an input that
    is not mapped over is applied once in a batched run (as torch) but raises in a per-sample
    run; an output with ``out_dims=None`` counts as unbatched when it is equal for every
    sample; a function that falls back to running per sample has its Python side effects
    repeated.

    Example:
        >>> import ember
        >>> from ember.func import vmap
        >>> vmap(lambda x, y: (x * y).sum())(ember.ones(3, 2), ember.ones(3, 2))
        tensor([2., 2., 2.])
    """
    _check_randomness(randomness)
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("vmap: chunk_size should be None or greater than 0. (got %s)"
                         % (chunk_size,))

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        name = _fname(func)
        where = "vmap(%s, in_dims=%s, ...)(<inputs>)" % (name, in_dims)
        if not args:
            raise ValueError("vmap(%s)(<inputs>): got no inputs. Maybe you forgot to add inputs, "
                             "or you are trying to vmap over a function with no inputs. The "
                             "latter is unsupported." % name)
        if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
            raise ValueError("%s: expected `in_dims` to be int or a (potentially nested) tuple "
                             "matching the structure of inputs, got: %s." % (where, type(in_dims)))
        leaves, spec = tree_flatten(args)
        dims = (broadcast_prefix(in_dims, args, lambda d: d is None or not isinstance(
            d, (tuple, list, dict))) if isinstance(in_dims, tuple) else [in_dims] * len(leaves))
        if dims is None:
            raise ValueError("%s: in_dims is not compatible with the structure of `inputs`. "
                             "in_dims has structure %r but inputs has structure %r."
                             % (where, tree_flatten(in_dims)[1], spec))
        sizes, batched = [], []
        for leaf, d in zip(leaves, dims):
            if d is None:
                continue
            if not isinstance(d, int):
                raise ValueError("%s: Got in_dim=%s for an input but in_dim must be either an "
                                 "integer dimension or None." % (where, d))
            if not isinstance(leaf, Tensor):
                raise ValueError("%s: Got in_dim=%d for an input but the input is of type %s. We "
                                 "cannot vmap over non-Tensor arguments, please use None as the "
                                 "respective in_dim" % (where, d, type(leaf)))
            n = leaf.dim()
            if not -n <= d < n:
                raise ValueError("%s: Got in_dim=%d for some input, but that input is a Tensor of "
                                 "dimensionality %d so expected in_dim to satisfy -%d <= in_dim "
                                 "< %d." % (where, d, n, n, n))
            sizes.append(leaf.shape[d])
            batched.append(True)
        if not sizes:
            raise ValueError("vmap: Expected at least one Tensor to vmap over")
        if len(set(sizes)) > 1:
            raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                             "dimension, got sizes %s for the mapped dimension" % sizes)
        size = sizes[0]
        fixed = [leaf for leaf, d in zip(leaves, dims)
                 if d is None and isinstance(leaf, Tensor)]
        versions = [t._version for t in fixed]

        def sample(b):
            if b is None:     # an empty batch: one call on zeros, for the output structure
                new = [leaf if d is None else leaf.new_zeros(
                    tuple(n for i, n in enumerate(leaf.shape) if i != d % leaf.dim()))
                    for leaf, d in zip(leaves, dims)]
            else:
                new = [leaf if d is None else leaf.select(d, b)
                       for leaf, d in zip(leaves, dims)]
            return func(*tree_unflatten(new, spec), **kwargs)

        if size:
            done, out = _run_batched(func, leaves, dims, spec, kwargs, randomness, out_dims,
                                     name, size)
            if done:
                return out
        outs = []
        state = _random.get_rng_state() if randomness == "same" else None
        with _in_vmap(), under_transform("vmap"):
            for b in (range(size) if size else [None]):
                if state is not None:
                    _random.set_rng_state(state)
                with _rng_guard(randomness):
                    outs.append(sample(b))
                if any(t._version != v for t, v in zip(fixed, versions)):
                    raise RuntimeError(
                        "vmap: ember's vmap runs the function once per sample, so an in-place "
                        "change to an input that is not mapped over (in_dim=None) would be "
                        "applied once per sample; please use an out-of-place operation")
        return _stack_outputs(outs, out_dims, name, size)

    return wrapped


def _batchable(leaf):
    """A mapped input the batched run can take: a CPU tensor or an enclosing vmap's batch."""
    return type(leaf._array) is _ndarray or type(leaf) is _b.BatchedTensor


def _run_batched(func, leaves, dims, spec, kwargs, randomness, out_dims, name, size):
    """``(True, outputs)`` from one batched run of ``func``; ``(False, None)`` when the call
    must run per sample instead."""
    if not all(_batchable(leaf) for leaf, d in zip(leaves, dims) if d is not None):
        return False, None
    if not _b.try_install():
        return False, None
    level = _b.next_level(size)
    state = _random.get_rng_state() if randomness != "error" else None
    before = _rng_state() if state is not None else None
    try:
        new = [leaf if d is None else _b.make(leaf, d % leaf.dim(), level)
               for leaf, d in zip(leaves, dims)]
        with _in_vmap(), under_transform("vmap"):
            with _rng_guard(randomness):
                out = func(*tree_unflatten(new, spec), **kwargs)
        if state is not None and _rng_state() != before:
            _random.set_rng_state(state)     # random draws: per sample, as the mode says
            return False, None
        return True, _unbatch_outputs(out, out_dims, name, size, level)
    except _b.Escape:
        if state is not None:
            _random.set_rng_state(state)
        return False, None
    finally:
        _b.pop_level()
        _b.uninstall()


def _check_out_dims(out_dims, name, out, spec, n):
    if not (out_dims is None or isinstance(out_dims, (int, tuple, list))) \
            or isinstance(out_dims, bool):
        raise ValueError("vmap(%s, ..., out_dims=%s): `out_dims` must be an int, None or a python "
                         "collection of ints representing where in the outputs the vmapped "
                         "dimension should appear." % (name, out_dims))
    if isinstance(out_dims, (tuple, list)):
        dims = broadcast_prefix(out_dims, out, lambda d: d is None or isinstance(d, int))
        if dims is None:
            raise ValueError("vmap(%s, ..., out_dims=%s)(<inputs>): out_dims is not compatible "
                             "with the structure of `outputs`. out_dims has structure %r but "
                             "outputs has structure %r."
                             % (name, out_dims, tree_flatten(out_dims)[1], spec))
        return dims
    return [out_dims] * n


def _unbatch_outputs(out, out_dims, name, size, level):
    """The batched run's outputs with the batch moved to ``out_dims``."""
    flat, spec = tree_flatten(out)
    dims = _check_out_dims(out_dims, name, out, spec, len(flat))
    result = []
    for v, d in zip(flat, dims):
        if d is None:
            if _b._is(v, level):
                raise ValueError("vmap(%s, ...): `%s` can not return a BatchedTensor when out_dim "
                                 "is None" % (name, name))
            result.append(v)
            continue
        if not isinstance(v, Tensor):
            raise ValueError("vmap(%s, ...): `%s` must only return Tensors, got type %s. Did you "
                             "mean to set out_dims= to None for output?" % (name, name, type(v)))
        if _b._is(v, level):
            n = v.dim() + 1
            same = -n <= d < n and d % n == v._bdim
            result.append(v._phys if same else movedim(v._phys, v._bdim, d))  # (torch's too)
        else:
            v = unsqueeze(v, d)
            shape = list(v.shape)
            shape[d] = size
            result.append(expand(v, tuple(shape)))
    if spec == LEAF_SPEC:
        return result[0]
    return tree_unflatten(result, spec)


def _stack_outputs(outs, out_dims, name, size):
    flat0, spec = tree_flatten(outs[0])
    dims = _check_out_dims(out_dims, name, outs[0], spec, len(flat0))
    per_sample = [tree_flatten(o)[0] for o in outs]
    result = []
    for i, d in enumerate(dims):
        vals = [p[i] for p in per_sample]
        if d is None:
            if isinstance(vals[0], Tensor) and not all(_same(vals[0], v) for v in vals[1:]):
                raise ValueError("vmap(%s, ...): `%s` can not return a BatchedTensor when out_dim "
                                 "is None" % (name, name))
            result.append(vals[0])
            continue
        if not isinstance(vals[0], Tensor):
            raise ValueError("vmap(%s, ...): `%s` must only return Tensors, got type %s. Did you "
                             "mean to set out_dims= to None for output?"
                             % (name, name, type(vals[0])))
        shapes = [tuple(v.shape) for v in vals]
        if len(set(shapes)) > 1:
            raise RuntimeError("vmap: We do not support batching operators that can output "
                               "dynamic shape. The function's output %d has a different shape "
                               "for each sample: %s." % (i, sorted(set(shapes))))
        out = stack(vals, dim=d)
        if not size:
            out = out.narrow(d, 0, 0)
        result.append(out)
    if spec == LEAF_SPEC:
        return result[0]
    return tree_unflatten(result, spec)


def _same(a, b):
    if not isinstance(b, Tensor) or a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a is b:
        return True
    xp = get_array_module(a._array)
    return bool(xp.array_equal(a._array, b._array, equal_nan=a.dtype.is_floating_point))
