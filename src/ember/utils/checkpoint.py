"""Activation checkpointing: drop a segment's saved tensors in forward, recompute them in backward.

The non-reentrant variant (``use_reentrant=False``) uses
:class:`~ember.autograd.graph.saved_tensors_hooks`: the forward builds the usual graph, but each
tensor saved inside the segment is replaced by a slot number; the first time backward needs one,
the segment is run again from its inputs and the tensors it saves fill the slots. The reentrant
variant (torch's default, ``CheckpointFunction``) runs the segment without a graph and, in
backward, runs it again with one and back-propagates through it.

``preserve_rng_state`` saves and restores the one global Generator: ember draws random numbers
on the host for every device, so there is no per-device (CUDA) state to keep, unlike torch.
"""
import contextlib
import enum
import warnings

from ..autograd import Function
from ..autograd import backward as _autograd_backward
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.graph import saved_tensors_hooks
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "noop_context_fn", "set_checkpoint_early_stop", "set_checkpoint_debug_enabled",
           "CheckpointPolicy", "SelectiveCheckpointContext",
           "create_selective_checkpoint_contexts"]

_enable_checkpoint_early_stop = True
_checkpoint_debug_enabled = None


class CheckpointError(RuntimeError):
    """The recomputation of a checkpointed segment did not match its forward."""


_debug_tip_msg = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint\u2011debug mode globally.

If this error occurs under torch.compile with automatic_dynamic_shapes enabled,
it may be because the recomputation selected a different compiled graph than the
forward pass (e.g., a dynamic graph instead of the original static graph).
To fix this, either:
  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as
    dynamic upfront, avoiding the static-to-dynamic transition.
  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache
    reordering, which can change which graph is checked first between forward
    and recompute.
See https://github.com/pytorch/pytorch/issues/166926 for more details and
workaround examples.
"""


def _default_meta_extractor(x):
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_allowed_determinism_checks_to_fns = {"default": _default_meta_extractor, "none": lambda _: None}


def noop_context_fn():
    """The default ``context_fn`` of ``checkpoint``: two do-nothing context managers."""
    return contextlib.nullcontext(), contextlib.nullcontext()


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Within this block, whether non-reentrant recomputation may stop once it has rebuilt
    every tensor backward needs (a speed setting: gradients are the same either way)."""
    global _enable_checkpoint_early_stop
    prev = _enable_checkpoint_early_stop
    try:
        _enable_checkpoint_early_stop = enable
        yield
    finally:
        _enable_checkpoint_early_stop = prev


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Within this block, override every ``checkpoint(..., debug=...)`` with ``enabled``
    (``None``: use each call's own flag)."""
    global _checkpoint_debug_enabled
    prev = _checkpoint_debug_enabled
    try:
        _checkpoint_debug_enabled = enabled
        yield
    finally:
        _checkpoint_debug_enabled = prev


class CheckpointPolicy(enum.Enum):
    """What selective checkpointing does with an op's output: keep it or recompute it."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class SelectiveCheckpointContext:
    """The ``ctx`` a selective-checkpoint policy function receives."""

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


class _SelectiveCheckpointMode:
    """One of the two contexts of ``create_selective_checkpoint_contexts``. ember recomputes
    every op of the segment (the policy only trades memory for compute: the gradients are the
    same, the random state being replayed), so entering it changes nothing."""

    def __init__(self, policy_fn, storage, allow_cache_entry_mutation=False):
        self.policy_fn = policy_fn
        self.storage = storage
        self.allow_cache_entry_mutation = allow_cache_entry_mutation

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The ``(forward, recompute)`` context pair for ``checkpoint(context_fn=...)`` from a
    policy function ``(ctx, op, *args, **kwargs) -> CheckpointPolicy`` or a list of ops to
    save."""
    if isinstance(policy_fn_or_list, list):
        ops = policy_fn_or_list

        def policy_fn(ctx, op, *args, **kwargs):
            if op in ops:
                return CheckpointPolicy.MUST_SAVE
            return CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage = {}
    return (_SelectiveCheckpointMode(policy_fn, storage),
            _SelectiveCheckpointMode(None, storage, allow_cache_entry_mutation))


class _Slot:
    """What a checkpointed segment keeps for one saved tensor: its position in the segment and
    where it sat in the graph (the recomputed value is put back there, as torch does)."""

    __slots__ = ("frame", "index", "grad_fn", "output_nr")

    def __init__(self, frame, index, t):
        self.frame = frame
        self.index = index
        self.grad_fn = t.grad_fn
        self.output_nr = t._output_nr


class _Frame:
    """One call of a checkpointed segment: its inputs, the RNG state and recomputed tensors."""

    def __init__(self, function, args, kwargs, rng_state, recompute_context=None,
                 metadata_fn=_default_meta_extractor):
        self.recompute_context = recompute_context or contextlib.nullcontext()
        self.function = function
        self.args = args
        self.kwargs = kwargs
        self.rng_state = rng_state
        self.metadata_fn = metadata_fn
        self.metadata = []          # per saved tensor of the forward
        self.recomputed = None
        self.backward_call = None   # the backward call the recomputed tensors belong to

    def check(self, storage):
        """Raise CheckpointError if the recomputation saved other tensors than the forward."""
        if len(storage) != len(self.metadata):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\nNumber of tensors saved during forward: "
                "%d\nNumber of tensors saved during recomputation: %d.\n%s"
                % (len(self.metadata), len(storage), _debug_tip_msg))
        different = ""
        for idx, (meta, t) in enumerate(zip(self.metadata, storage)):
            if meta != self.metadata_fn(t):
                different += ("tensor at position %d:\nsaved metadata: %s\nrecomputed metadata: "
                              "%s\n" % (idx, meta, self.metadata_fn(t)))
        if different:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                "different metadata than during the forward pass.\n%s.\n%s"
                % (different, _debug_tip_msg))

    def recompute(self):
        from .. import random as _random
        inputs = tuple(a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
                       for a in self.args)
        storage = []

        def pack(t):
            storage.append(t)
            return None

        state = None
        if self.rng_state is not None:
            state = _random.get_rng_state()
            _random.set_rng_state(self.rng_state)
        try:
            with enable_grad(), self.recompute_context, \
                    saved_tensors_hooks(pack, lambda p: p):
                self.function(*inputs, **self.kwargs)
        finally:
            if state is not None:
                _random.set_rng_state(state)
        self.check(storage)
        self.recomputed = dict(enumerate(storage))


class CheckpointFunction(Function):
    """The reentrant checkpoint: ``run_function`` runs without a graph; backward runs it again
    with one and back-propagates through it (node CheckpointFunctionBackward)."""

    node_name = "CheckpointFunctionBackward"

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        from .. import random as _random
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_rng_state = _random.get_rng_state()
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with no_grad():
            outputs = run_function(*args)
        return outputs

    @staticmethod
    def backward(ctx, *grads):
        from .. import random as _random
        from ..autograd import _is_checkpoint_valid
        if not _is_checkpoint_valid():
            raise RuntimeError("When use_reentrant=True, torch.utils.checkpoint is incompatible "
                               "with .grad() or passing an `inputs` parameter to .backward(). To "
                               "resolve this error, you can either set use_reentrant=False, or "
                               "call .backward() without passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        tensors = ctx.saved_tensors
        for i, idx in enumerate(ctx.tensor_indices):
            inputs[idx] = tensors[i]
        detached = tuple(a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor)
                         else a for a in inputs)
        state = None
        if ctx.preserve_rng_state:
            state = _random.get_rng_state()
            _random.set_rng_state(ctx.fwd_rng_state)
        try:
            with enable_grad():
                outputs = ctx.run_function(*detached)
        finally:
            if state is not None:
                _random.set_rng_state(state)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        outs, gs = [], []
        for o, g in zip(outputs, grads):
            if isinstance(o, Tensor) and o.requires_grad:
                outs.append(o)
                gs.append(g)
        if not outs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        _autograd_backward(outs, gs)
        return (None, None) + tuple(a.grad if isinstance(a, Tensor) else None
                                    for a in detached)


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default",
               debug=False, preserve_rng_state=True, **kwargs):
    """Run ``function(*args, **kwargs)`` without keeping its intermediate saved tensors.

    The tensors the segment saves for backward are recomputed (by calling ``function`` again,
    with the same RNG state when ``preserve_rng_state``) when backward first needs them, which
    trades compute for memory. Gradients reach ``args`` and any parameters used inside, as
    without checkpointing. ``use_reentrant`` left unset warns and means ``True``, as in torch.

    Args:
        function: the segment to run.
        *args: its inputs (the tensors kept for the recomputation).
        use_reentrant: torch asks for it to be explicit; ``False`` is recommended.
        preserve_rng_state: replay the random state so dropout masks match.

    Example:
        >>> import ember
        >>> from ember.utils.checkpoint import checkpoint
        >>> x = ember.ones(3, requires_grad=True)
        >>> checkpoint(lambda t: (t * t).sin(), x, use_reentrant=False).sum().backward()
        >>> x.grad.shape
        torch.Size([3])
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        if context_fn is not None or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          stacklevel=2)
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    from .. import random as _random
    from ..autograd.graph import _current_backward
    if determinism_check not in _allowed_determinism_checks_to_fns:
        raise ValueError("determinism_check should be one of %s, but got %s"
                         % (list(_allowed_determinism_checks_to_fns), determinism_check))
    forward_context, recompute_context = (context_fn or noop_context_fn)()
    frame = _Frame(function, args, kwargs,
                   _random.get_rng_state() if preserve_rng_state else None, recompute_context,
                   _allowed_determinism_checks_to_fns[determinism_check])
    kept = {id(a._array): a for a in args if isinstance(a, Tensor)}

    def pack(t):
        frame.metadata.append(frame.metadata_fn(t))
        if id(t._array) in kept:
            return t            # an input of the segment: held for recomputation anyway
        return _Slot(frame, len(frame.metadata) - 1, t)

    def unpack(packed):
        try:
            call = _current_backward()
        except IndexError:      # (unpacked outside backward)
            call = None
        if frame.recomputed is None or frame.backward_call is not call:
            frame.recompute()   # once per backward call (a double backward needs them again)
            frame.backward_call = call
        if not isinstance(packed, _Slot):
            return packed
        t = frame.recomputed.pop(packed.index, None)
        if packed.grad_fn is not None and t is not None:
            t = _attached(t, packed.grad_fn, packed.output_nr)
        if t is None:
            raise RuntimeError("torch.utils.checkpoint: unpack is being triggered for a tensor "
                               "that has already been unpacked once, or the recomputation did "
                               "not save the same tensors as the forward (is the function "
                               "deterministic?). Use retain_graph=False.")
        return t

    with forward_context, saved_tensors_hooks(pack, unpack):
        return function(*args, **kwargs)


def _attached(t, grad_fn, output_nr):
    """The recomputed ``t`` where the forward's tensor was in the graph, so that a double
    backward reaches the segment's inputs."""
    a = Tensor._wrap(t._array)
    a._version_ref = t._version_ref
    a._requires_grad = True
    a._grad_fn = grad_fn
    a._output_nr = output_nr
    return a


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a Sequential (or list of modules) in ``segments`` checkpointed chunks.

    The last segment runs normally, as torch does.
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should "
            "be passed explicitly. In version 2.9 we will raise an exception if use_reentrant is "
            "not passed. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    functions = list(functions)
    size = max(1, len(functions) // segments)

    def run(start, end):
        def forward(x):
            for k in range(start, end + 1):
                x = functions[k](x)
            return x
        return forward

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
