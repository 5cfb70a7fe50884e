"""Saved state of the conv, pooling, normalization and loss ops: everything a node keeps goes
through save_for_backward (freed after backward, version-checked, seen by saved-tensor hooks),
and the ops run on the strict device. Compared against torch."""
import numpy as np
import pytest

import ember
from ember.backend import is_array
from ember.utils.checkpoint import checkpoint
from oracle import compare

_FREED = "Trying to backward through the graph a second time"
_VERSION = "one of the variables needed for gradient computation has been modified by an inplace"


def _rand(*shape, seed=0, low=-2.0, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(np.float64)


def _nodes(*outs):
    """Every graph node reachable from the outputs' grad_fns."""
    nodes, stack = [], [o.grad_fn for o in outs]
    while stack:
        node = stack.pop()
        if node is None or any(node is n for n in nodes) or not hasattr(node, "next_functions"):
            continue
        nodes.append(node)
        stack.extend(fn for fn, _ in node.next_functions)
    return nodes


def _held(value, depth=0):
    """The arrays (raw, or of Tensors / packed saved values) inside a node attribute."""
    if is_array(value):
        return [value]
    if isinstance(value, ember.Tensor):
        return [value._array]
    if hasattr(value, "value") and hasattr(value, "_version_ref"):     # a packed saved tensor
        return _held(value.value, depth)
    if depth < 3 and isinstance(value, (tuple, list)):
        return [a for v in value for a in _held(v, depth + 1)]
    if depth < 3 and isinstance(value, dict):
        return [a for v in value.values() for a in _held(v, depth + 1)]
    return []


def _raw_arrays(node):
    return [k for k, v in vars(node).items() if k != "_edges"
            and any(is_array(a) for a in _raw_only(v))]


def _raw_only(value, depth=0):
    if is_array(value):
        return [value]
    if depth < 2 and isinstance(value, (tuple, list)):
        return [a for v in value for a in _raw_only(v, depth + 1)]
    if depth < 2 and isinstance(value, dict):
        return [a for v in value.values() for a in _raw_only(v, depth + 1)]
    return []


def test_batch_norm_frees_everything_and_refuses_a_second_backward(torch):
    x_np = np.random.default_rng(0).standard_normal((8, 64, 32, 32)).astype(np.float32)
    messages = []
    for lib in (ember, torch):
        bn = lib.nn.BatchNorm2d(64)
        x = lib.tensor(x_np, requires_grad=True)
        out = bn(x)
        loss = (out * out).mean()
        loss.backward()
        if lib is ember:
            assert out.grad_fn._saved is None
            for node in _nodes(loss):
                assert node._saved is None, "%s kept its saved tensors" % node.name()
                held = [k for k, v in vars(node).items() if k != "_edges" and _raw_only(v)]
                assert not held, "%s holds arrays on %s" % (node.name(), held)
        with pytest.raises(RuntimeError) as err:
            loss.backward()
        messages.append(str(err.value))
    assert messages[0].startswith(_FREED) and messages[1].startswith(_FREED)
    cut = messages[1].index("Specify retain_graph")
    assert messages[0][:cut] == messages[1][:cut]


def test_layer_norm_under_checkpoint_keeps_only_row_statistics(torch):
    import torch.utils.checkpoint as tcp
    x_np = _rand(16, 8, 32).astype(np.float32)
    up = _rand(16, 8, 32, seed=1).astype(np.float32)
    w_np, b_np = _rand(32, seed=2).astype(np.float32), _rand(32, seed=3).astype(np.float32)
    grads = {}
    for lib in (ember, torch):
        ln = lib.nn.LayerNorm(32)
        with lib.no_grad():
            ln.weight.copy_(lib.tensor(w_np))
            ln.bias.copy_(lib.tensor(b_np))
        x = lib.tensor(x_np, requires_grad=True)
        if lib is ember:
            out = checkpoint(ln, x, use_reentrant=False)
            rows = x_np.size // 32
            for node in _nodes(out):
                assert not _raw_arrays(node), node.name()
                for k, v in vars(node).items():
                    if k == "_edges":
                        continue
                    for a in _held(v):
                        if a is x._array:
                            continue    # the segment's input, kept for the recomputation
                        assert a.size <= rows, "%s.%s holds an array of %s" % (
                            node.name(), k, a.shape)
        else:
            out = tcp.checkpoint(ln, x, use_reentrant=False)
        out.backward(lib.tensor(up))
        grads[lib.__name__] = [t.grad.detach().numpy() for t in (x, ln.weight, ln.bias)]
    for a, b in zip(grads["ember"], grads["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def _targets(n, c, seed=0, shape=None):
    return np.random.default_rng(seed).integers(0, c, shape or (n,)).astype(np.int64)


def _probs(*shape, seed=0):
    e = np.exp(_rand(*shape, seed=seed))
    return e / e.sum(1, keepdims=True)


_WEIGHT = _rand(4, seed=1, low=0.5)


def _bce(lib, x, y):
    """ember.ops.loss's unreduced BinaryCrossEntropy (what nn.functional will call)."""
    if lib is ember:
        from ember.ops.loss import BinaryCrossEntropy
        return BinaryCrossEntropy.apply(x, y)
    return lib.nn.functional.binary_cross_entropy(x, y, reduction="none")


# (name, fn(lib, *inputs), inputs): conv, pooling, normalization and loss ops.
CASES = [
    ("conv2d", lambda L, x, w, b: L.nn.functional.conv2d(x, w, b, padding=1),
     (_rand(2, 3, 5, 5), _rand(4, 3, 3, 3, seed=1), _rand(4, seed=2))),
    ("conv2d_stride_groups", lambda L, x, w: L.nn.functional.conv2d(x, w, stride=2, groups=2,
                                                                   dilation=(1, 2)),
     (_rand(2, 4, 7, 7), _rand(4, 2, 3, 2, seed=1))),
    ("conv1d", lambda L, x, w: L.nn.functional.conv1d(x, w, padding="same"),
     (_rand(2, 3, 6), _rand(2, 3, 3, seed=1))),
    ("conv_transpose2d", lambda L, x, w, b: L.nn.functional.conv_transpose2d(
        x, w, b, stride=2, padding=1, output_padding=1),
     (_rand(2, 3, 4, 4), _rand(3, 2, 3, 3, seed=1), _rand(2, seed=2))),
    ("max_pool2d", lambda L, x: L.nn.functional.max_pool2d(x, 2), (_rand(2, 3, 6, 6),)),
    ("max_pool2d_overlap", lambda L, x: L.nn.functional.max_pool2d(x, 3, 2, 1, ceil_mode=True),
     (_rand(2, 3, 7, 7),)),
    ("max_pool1d", lambda L, x: L.nn.functional.max_pool1d(x, 3, 2), (_rand(2, 3, 9),)),
    ("avg_pool2d", lambda L, x: L.nn.functional.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
     (_rand(2, 3, 7, 7),)),
    ("adaptive_max_pool2d", lambda L, x: L.nn.functional.adaptive_max_pool2d(x, (3, 2)),
     (_rand(2, 3, 7, 5),)),
    ("adaptive_avg_pool2d", lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, (3, 2)),
     (_rand(2, 3, 7, 5),)),
    ("batch_norm", lambda L, x, w, b: L.nn.functional.batch_norm(
        x, None, None, w, b, training=True), (_rand(4, 3, 2, 2), _rand(3, seed=1),
                                              _rand(3, seed=2))),
    ("layer_norm", lambda L, x, w, b: L.nn.functional.layer_norm(x, (5,), w, b),
     (_rand(3, 4, 5), _rand(5, seed=1), _rand(5, seed=2))),
    ("group_norm", lambda L, x, w, b: L.nn.functional.group_norm(x, 2, w, b),
     (_rand(3, 4, 5), _rand(4, seed=1), _rand(4, seed=2))),
    ("cross_entropy", lambda L, x, t: L.nn.functional.cross_entropy(x, t),
     (_rand(5, 4), _targets(5, 4))),
    ("cross_entropy_ignore_none", lambda L, x, t: L.nn.functional.cross_entropy(
        x, t, ignore_index=1, reduction="none"), (_rand(5, 4), _targets(5, 4))),
    ("cross_entropy_weight_smooth_nd", lambda L, x, t: L.nn.functional.cross_entropy(
        x, t, weight=L.tensor(_WEIGHT, device=x.device), label_smoothing=0.2),
     (_rand(3, 4, 2), _targets(3, 4, shape=(3, 2)))),
    ("cross_entropy_probs", lambda L, x, t: L.nn.functional.cross_entropy(x, t),
     (_rand(5, 4), _probs(5, 4, seed=1))),
    ("nll_loss", lambda L, x, t: L.nn.functional.nll_loss(x.log_softmax(1), t, reduction="sum"),
     (_rand(5, 4), _targets(5, 4))),
    ("mse_loss", lambda L, x, y: L.nn.functional.mse_loss(x, y),
     (_rand(3, 4), _rand(3, 4, seed=1))),
    ("binary_cross_entropy_op", lambda L, x, y: _bce(L, x, y),
     (_rand(3, 4, low=0.05, high=0.95), _rand(3, 4, seed=1, low=0.0, high=1.0))),
    ("binary_cross_entropy", lambda L, x, y: L.nn.functional.binary_cross_entropy(
        x.sigmoid(), y), (_rand(3, 4), _rand(3, 4, seed=1, low=0.0, high=1.0))),
]
_IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("name, fn, inputs", CASES, ids=_IDS)
def test_strict_device(torch, name, fn, inputs):
    """Values and gradients on the strict device (no host array may slip in) equal torch's."""
    compare(torch, fn, *inputs, device="strict", rtol=1e-7, atol=1e-9)


def _ember_inputs(inputs):
    out = []
    for a in inputs:
        t = ember.tensor(a.copy())
        if a.dtype.kind == "f":
            t.requires_grad_(True)
        out.append(t)
    return out


@pytest.mark.parametrize("name, fn, inputs", CASES, ids=_IDS)
def test_saved_state_channel(name, fn, inputs):
    """No raw array on any node; every node's saved tensors are released after backward."""
    xs = _ember_inputs(inputs)
    out = fn(ember, *xs)
    nodes = _nodes(out)
    for node in nodes:
        held = _raw_arrays(node)
        assert not held, "%s keeps raw arrays outside save_for_backward: %s" % (node.name(), held)
    out.sum().backward()
    for node in nodes:
        assert node._saved is None, "%s kept its saved tensors" % node.name()


@pytest.mark.parametrize("name, fn, inputs", CASES, ids=_IDS)
def test_one_gradient_formula(name, fn, inputs):
    """The array-level gradients (create_graph=False) equal the Tensor-op ones."""
    results = []
    for create_graph in (False, True):
        xs = _ember_inputs(inputs)
        out = fn(ember, *xs)
        wrt = [t for t in xs if t.requires_grad]
        up = ember.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)))
        grads = ember.autograd.grad(out, wrt, up, create_graph=create_graph, allow_unused=True)
        results.append([None if g is None else g.detach().numpy() for g in grads])
    for a, b in zip(*results):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# (name, fn(lib, x, other) -> (output, tensor changed in place afterwards))
INPLACE = [
    ("conv2d_weight", lambda L, x, w: (L.nn.functional.conv2d(x, w), w),
     (_rand(2, 3, 5, 5), _rand(4, 3, 3, 3, seed=1))),
    ("conv2d_input", lambda L, x, w: (lambda xx: (L.nn.functional.conv2d(xx, w), xx))(x * 1),
     (_rand(2, 3, 5, 5), _rand(4, 3, 3, 3, seed=1))),
    ("batch_norm_weight", lambda L, x, w: (L.nn.functional.batch_norm(
        x, None, None, w, None, training=True), w), (_rand(4, 3, 2, 2), _rand(3, seed=1))),
    ("batch_norm_input", lambda L, x, w: (lambda xx: (L.nn.functional.batch_norm(
        xx, None, None, w, None, training=True) ** 2, xx))(x * 1),
     (_rand(4, 3, 2, 2), _rand(3, seed=1))),
    ("layer_norm_input", lambda L, x, w: (lambda xx: (L.nn.functional.layer_norm(
        xx, (3,), w) ** 2, xx))(x * 1), (_rand(4, 3), _rand(3, seed=1))),
    ("max_pool2d_input", lambda L, x, w: (lambda xx: (L.nn.functional.max_pool2d(xx, 2) * w,
                                                       xx))(x * 1),
     (_rand(2, 3, 4, 4), _rand(2, seed=1))),
    ("avg_pool2d_input", lambda L, x, w: (lambda xx: (L.nn.functional.avg_pool2d(xx, 2) * w,
                                                       xx))(x * 1),
     (_rand(2, 3, 4, 4), _rand(2, seed=1))),
    ("cross_entropy_logits", lambda L, x, w: (lambda xx: (L.nn.functional.cross_entropy(
        xx, L.tensor([0, 2, 1, 0])), xx))(x * w), (_rand(4, 3), _rand(3, seed=1))),
    ("nll_loss_input", lambda L, x, w: (lambda xx: (L.nn.functional.nll_loss(
        xx, L.tensor([0, 2, 1, 0])), xx))(x * w), (_rand(4, 3), _rand(3, seed=1))),
    ("cross_entropy_probs_target", lambda L, x, w: (lambda t: (L.nn.functional.cross_entropy(
        x, t), t))(w.detach().softmax(1)), (_rand(4, 3), _rand(4, 3, seed=1))),
]


@pytest.mark.parametrize("name, fn, inputs", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_change_of_saved_input(torch, name, fn, inputs):
    """Changing a tensor in place between forward and backward raises torch's version error
    exactly where torch raises it."""
    outcome = {}
    for lib in (ember, torch):
        xs = [lib.tensor(a.copy(), requires_grad=True) for a in inputs]
        out, changed = fn(lib, *xs)
        with lib.no_grad():
            changed.mul_(2)
        try:
            out.sum().backward()
            outcome[lib.__name__] = None
        except RuntimeError as e:
            outcome[lib.__name__] = str(e)
    e_msg, t_msg = outcome["ember"], outcome["torch"]
    assert (e_msg is None) == (t_msg is None), outcome
    if t_msg is not None:
        assert t_msg.startswith(_VERSION) and e_msg.startswith(_VERSION), outcome
