"""torch.func's small helpers: ``debug_unwrap``, ``replace_all_batch_norm_modules_`` and the
einops-style ``rearrange``."""
import functools
import keyword
import warnings

from ..nn.modules.normalization import _BatchNorm
from ..ops.shape import stack
from ..tensor import Tensor
from ._batching import BatchedTensor

__all__ = ["debug_unwrap", "replace_all_batch_norm_modules_", "rearrange", "DimensionBindError"]


def debug_unwrap(tensor, *, recurse=True):
    """The tensor under a vmap wrapper (with its batch dimension), for debugging only.

    Matches ``torch.func.debug_unwrap``: other tensors are returned as they are.
    """
    if type(tensor) is not BatchedTensor:
        return tensor
    result = tensor._phys
    return debug_unwrap(result) if recurse else result


def _batch_norm_without_running_stats(module):
    if isinstance(module, _BatchNorm) and module.track_running_stats:
        module.running_mean = None
        module.running_var = None
        module.num_batches_tracked = None
        module.track_running_stats = False


def replace_all_batch_norm_modules_(root):
    """In place, drop the running statistics of every BatchNorm module in ``root`` (running
    mean/var and ``num_batches_tracked`` become None, ``track_running_stats`` False).

    Returns:
        ``root``. Matches ``torch.func.replace_all_batch_norm_modules_``.
    """
    _batch_norm_without_running_stats(root)
    for obj in root.modules():
        _batch_norm_without_running_stats(obj)
    return root


class DimensionBindError(Exception):
    """A pattern's axis sizes do not fit the tensor (functorch.dim's ``DimensionBindError``)."""


_ELLIPSIS = "\u2026"


class _AnonymousAxis:
    def __init__(self, value):
        self.value = int(value)
        if self.value < 1:
            raise ValueError(f"Anonymous axis should have positive length, not {self.value}")

    def __repr__(self):
        return f"{self.value}-axis"


def _check_axis_name(name):
    if not str.isidentifier(name):
        return False, "not a valid python identifier"
    if name[0] == "_" or name[-1] == "_":
        return False, "axis name should should not start or end with underscore"
    if keyword.iskeyword(name):
        warnings.warn(f"It is discouraged to use axes names that are keywords: {name}",
                      RuntimeWarning)
    if name == "axis":
        warnings.warn("It is discouraged to use 'axis' as an axis name and will raise an error "
                      "in future", FutureWarning)
    return True, ""


class _ParsedExpression:
    """One side of a pattern: ``composition`` lists groups (lists of names) and the ellipsis."""

    def __init__(self, expression):
        self.has_ellipsis = False
        self.has_ellipsis_parenthesized = None
        self.identifiers = set()
        self.has_non_unitary_anonymous_axes = False
        self.composition = []
        if "." in expression:
            if "..." not in expression:
                raise ValueError("Expression may contain dots only inside ellipsis (...)")
            if str.count(expression, "...") != 1 or str.count(expression, ".") != 3:
                raise ValueError("Expression may contain dots only inside ellipsis (...); only "
                                 "one ellipsis for tensor ")
            expression = expression.replace("...", _ELLIPSIS)
            self.has_ellipsis = True
        group = None

        def add_axis_name(x):
            if x in self.identifiers:
                raise ValueError(f"Indexing expression contains duplicate dimension '{x}'")
            if x == _ELLIPSIS:
                self.identifiers.add(_ELLIPSIS)
                if group is None:
                    self.composition.append(_ELLIPSIS)
                    self.has_ellipsis_parenthesized = False
                else:
                    group.append(_ELLIPSIS)
                    self.has_ellipsis_parenthesized = True
                return
            is_number = str.isdecimal(x)
            if is_number and int(x) == 1:
                if group is None:
                    self.composition.append([])
                return
            is_axis_name, reason = _check_axis_name(x)
            if not (is_number or is_axis_name):
                raise ValueError(f"Invalid axis identifier: {x}\n{reason}")
            axis = _AnonymousAxis(x) if is_number else x
            self.identifiers.add(axis)
            if is_number:
                self.has_non_unitary_anonymous_axes = True
            if group is None:
                self.composition.append([axis])
            else:
                group.append(axis)

        current = None
        for char in expression:
            if char in "() ":
                if current is not None:
                    add_axis_name(current)
                current = None
                if char == "(":
                    if group is not None:
                        raise ValueError("Axis composition is one-level (brackets inside "
                                         "brackets not allowed)")
                    group = []
                elif char == ")":
                    if group is None:
                        raise ValueError("Brackets are not balanced")
                    self.composition.append(group)
                    group = None
            elif str.isalnum(char) or char in ["_", _ELLIPSIS]:
                current = char if current is None else current + char
            else:
                raise ValueError(f"Unknown character '{char}'")
        if group is not None:
            raise ValueError(f"Imbalanced parentheses in expression: '{expression}'")
        if current is not None:
            add_axis_name(current)


def _parse_pattern(pattern, axes_lengths):
    try:
        left_str, right_str = pattern.split("->")
    except ValueError:
        raise ValueError("Pattern must contain a single '->' separator") from None
    if _ELLIPSIS in axes_lengths:
        raise ValueError(f"'{_ELLIPSIS}' is not an allowed axis identifier")
    left = _ParsedExpression(left_str)
    right = _ParsedExpression(right_str)
    if not left.has_ellipsis and right.has_ellipsis:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern {pattern}")
    if left.has_ellipsis and left.has_ellipsis_parenthesized:
        raise ValueError(f"Ellipsis is parenthesis in the left side is not allowed: {pattern}")
    return left, right


def _validate(left, right, axes_lengths):
    for length in axes_lengths.values():
        if type(length) is not int:
            raise TypeError(f"rearrange axis lengths must be integers, got: {type(length)}")
    if left.has_non_unitary_anonymous_axes or right.has_non_unitary_anonymous_axes:
        raise ValueError("rearrange only supports unnamed axes of size 1")
    difference = set.symmetric_difference(left.identifiers, right.identifiers)
    if len(difference) > 0:
        raise ValueError("Identifiers only on one side of rearrange expression (should be on "
                         f"both): {difference}")
    unmatched = axes_lengths.keys() - left.identifiers
    if len(unmatched) > 0:
        raise ValueError(f"Identifiers not found in rearrange expression: {unmatched}")


@functools.lru_cache(256)
def _plan(ndim, pattern, **axes_lengths):
    """The rearrangement for ``ndim``-D tensors as elementary axes ``d0, d1, ...``:
    (left entries, right groups, anonymous axes, given sizes), or None for a 0-axis pattern."""
    left, right = _parse_pattern(pattern, axes_lengths)
    _validate(left, right, axes_lengths)
    n_anon = sum(not dim for dim in left.composition)
    if left.has_ellipsis:
        n_ellipsis = ndim - (len(left.composition) - 1)
        n_named = len(left.identifiers) - 1
        if n_anon + n_named > ndim:
            raise ValueError(f"Number of dimensions in pattern ({n_anon + n_named}) must be less "
                             "than or equal to the number of dimensions in the tensor "
                             f"({ndim})")
    else:
        n_ellipsis = 0
        n_named = len(left.identifiers)
        if len(left.composition) != ndim:
            raise ValueError(f"Number of dimensions in pattern ({len(left.composition)}) must be "
                             f"equal to the number of dimensions in the tensor ({ndim})")
    if n_named + n_ellipsis + n_anon == 0:
        return None
    axis_of = {}
    anon = []
    left_entries = []
    i = 0
    for dimension in left.composition:
        if isinstance(dimension, list):
            for name in dimension:
                axis_of[name] = (i,)
                i += 1
            if not dimension:
                axis = _AnonymousAxis("1")
                axis_of[axis] = (i,)
                anon.append(i)
                dimension.append(axis)
                i += 1
            left_entries.append(tuple(axis_of[name][0] for name in dimension))
        else:
            axis_of[_ELLIPSIS] = tuple(range(i, i + n_ellipsis))
            left_entries.extend(axis_of[_ELLIPSIS])     # single axes, not packs
            i += n_ellipsis
    right_groups = []
    for dimension in right.composition:
        if isinstance(dimension, list):
            right_groups.append(tuple(a for name in dimension for a in axis_of[name]))
        else:
            right_groups.extend((a,) for a in axis_of[_ELLIPSIS])
    given = tuple((axis_of[name][0], length) for name, length in axes_lengths.items())
    return tuple(left_entries), tuple(right_groups), tuple(anon), given, i


def _bind_pack(size, pack, sizes):
    """functorch.dim's binding of a tensor axis of ``size`` to a pack of axes."""
    prod = 1
    for i, a in enumerate(pack):
        if a not in sizes:
            for b in pack[i + 1:]:
                if b not in sizes:
                    raise DimensionBindError("cannot infer the sizes of two dimensions at once "
                                             f"d{a} and d{b}")
                prod *= sizes[b]
            if size % prod != 0:
                tup = tuple(sizes.get(b, "?") for b in pack)
                raise DimensionBindError("inferred dimension does not evenly fit into larger "
                                         f"dimension: {size} vs {tup}")
            sizes[a] = size // prod
            prod = size
            break
        prod *= sizes[a]
    if prod != size:
        names = "(" + ", ".join("d%d" % a for a in pack) + ("," if len(pack) == 1 else "") + ")"
        raise DimensionBindError(f"Dimension sizes to do not match ({size} != {prod}) when "
                                 f"matching dimension pack {names}")


def rearrange(tensor, pattern, **axes_lengths):
    """Reorder, split and merge axes by an einops pattern such as ``"b (h w) c -> b c h w"``.

    Matches ``torch.func.rearrange`` (a list or tuple of tensors is stacked first). Axes
    written ``()`` or ``1`` on the left are summed away, as torch does.

    Example:
        >>> import ember
        >>> images = ember.zeros(32, 30, 40, 3)
        >>> rearrange(images, "b (h h1) (w w1) c -> b h w (c h1 w1)", h1=2, w1=2).shape
        torch.Size([32, 15, 20, 12])
    """
    if not isinstance(tensor, Tensor):
        tensor = stack(tensor)
    plan = _plan(tensor.ndim, pattern, **axes_lengths)
    if plan is None:
        return tensor
    left_entries, right_groups, anon, given, n_axes = plan
    sizes = dict(given)
    for size, entry in zip(tensor.shape, left_entries):
        if isinstance(entry, tuple):
            _bind_pack(size, entry, sizes)
        else:
            sizes[entry] = size
    x = tensor.reshape([sizes[a] for a in range(n_axes)])
    order = [a for group in right_groups for a in group] + list(anon)
    x = x.permute(order)
    shape = []
    for group in right_groups:
        n = 1
        for a in group:
            n *= sizes[a]
        shape.append(n)
    x = x.reshape(shape + [sizes[a] for a in anon])
    if anon:
        x = x.sum(tuple(range(len(right_groups), len(right_groups) + len(anon))))
    return x
