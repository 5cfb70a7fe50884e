"""Sparse ops: ``Embedding`` (the row gather behind ``nn.functional.embedding``) and torch's
sparse COO tensors (``sparse_coo_tensor``, ``spmm``, ``torch.sparse.mm`` ...).

Embedding's gradient sums the upstream rows of each index into a weight-shaped zero array (rows
that no index picked stay zero; the ``padding_idx`` row always does).

A COO tensor keeps its ``indices`` (sparse_dim, nnz) and ``values`` (nnz, *dense_dims) and also
the dense array they stand for (as ``_array``), so shape, dtype, device and dense ops read it.
Gradients flowing to a sparse tensor are dense arrays of its full shape; the node that made it
from ``values`` gathers them at ``indices``.
"""

import math


import numpy as np

from .. import dtypes as _dt
from .._tensor_str import PRINT_OPTS, tensor_repr
from ..autograd.function import Function, once_differentiable
from ..autograd.grad_mode import no_grad
from ..tensor import Size, Tensor
from ._util import backend_of, called_by_user, caller_stacklevel, warn_once, xp_of
from .creation import as_tensor
from .shape import cat

__all__ = ["sparse_coo_tensor", "spmm", "smm", "sparse_mm", "sparse_addmm", "sparse_sum",
           "to_sparse", "to_sparse_csr", "sparse_csr_tensor"]


class Embedding(Function):
    """``weight[indices]``; no gradient reaches row ``padding_idx`` (None: every row gets one)."""

    node_name = "EmbeddingBackward0"
    edge_args = (0,)     # (torch gives the index/mask/condition no edge)

    @staticmethod
    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq=False, sparse=False):
        ctx.padding_idx, ctx.scale, ctx.sparse = padding_idx, scale_grad_by_freq, sparse
        ctx.save_for_backward(indices)
        return Tensor._wrap(weight._array[indices._array])

    @staticmethod
    def _inv_freq(xp, flat, n, dtype):
        """``1 / count`` of each position's index (``scale_grad_by_freq``), as a column."""
        counts = xp.bincount(flat, minlength=n) if flat.size else xp.zeros(n, xp.int64)
        return (1.0 / counts[flat].astype(np.float64)).astype(dtype)[:, None]

    @staticmethod
    def backward(ctx, grad_output):
        indices, = ctx.saved_tensors
        shape, dtype = ctx._input_meta(0)
        xp = xp_of(grad_output)
        rows = grad_output.reshape(-1, shape[1])
        if ctx.sparse:
            return _sparse_rows_grad(indices._array, rows, shape, ctx.padding_idx, ctx.scale), \
                None, None, None, None
        if ctx.scale:
            rows = rows * Tensor._wrap(Embedding._inv_freq(xp, indices._array.reshape(-1),
                                                           shape[0], dtype))
        grad = Tensor._wrap(xp.zeros(shape, dtype)).index_add(0, indices.reshape(-1), rows)
        if ctx.padding_idx is not None:
            keep = xp.ones((shape[0], 1), dtype)
            keep[ctx.padding_idx] = 0
            grad = grad * Tensor._wrap(keep)
        return grad, None, None, None, None

    @staticmethod
    def array_backward(ctx, grad_output):
        if ctx.sparse:
            return Embedding.backward(ctx, grad_output)
        indices, = ctx.saved_tensors
        shape, dtype = ctx._input_meta(0)
        g = grad_output._array.reshape(-1, shape[1]).astype(dtype, copy=False)
        grad = xp_of(grad_output).zeros(shape, dtype=dtype)
        flat = indices._array.reshape(-1)
        if ctx.scale:
            g = g * Embedding._inv_freq(xp_of(grad_output), flat, shape[0], dtype)
        if flat.size:
            backend_of(grad).index_add_rows(grad, flat, g)
        if ctx.padding_idx is not None:
            grad[ctx.padding_idx] = 0
        return Tensor._wrap(grad), None, None, None, None


def _sparse_rows_grad(indices, rows, shape, padding_idx, scale):
    """torch's ``embedding_sparse_backward``: an uncoalesced COO gradient of ``shape`` holding
    ``rows`` (L, D) at the raw ``indices`` (positions naming ``padding_idx`` left out)."""
    if scale:
        raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse "
                           "gradients")
    idx = indices.reshape(-1).astype(np.int64)
    if padding_idx is not None:
        keep = idx != padding_idx
        idx, rows = idx[keep], rows[Tensor._wrap(keep)]
    return SparseCooTensorWithDimsAndTensors.apply(rows, idx[None], Size(shape), idx.size <= 1)


class EmbeddingBag(Function):
    """Per-bag sum / mean / max of ``weight`` rows. ``indices`` (L,) and ``bags`` (L,) are raw
    arrays: each position's row and bag (-1: left out, e.g. ``padding_idx``)."""

    node_name = "EmbeddingBagBackward0"
    edge_args = (0, 1)      # weight and per_sample_weights (None when not given)

    @staticmethod
    def forward(ctx, weight, per_sample_weights, indices, bags, n_bags, mode, scale=False,
                sparse=False, padding_idx=None):
        ctx.scale, ctx.sparse, ctx.padding_idx = scale, sparse, padding_idx
        xp = xp_of(weight)
        w = weight._array
        dim = w.shape[1]
        keep = bags >= 0
        idx, bag = indices[keep], bags[keep]
        rows = w[idx]
        counts = xp.bincount(bag, minlength=n_bags)[:n_bags] if bag.size else \
            xp.zeros(n_bags, dtype=xp.int64)
        dropped = int((bags == -2).sum())    # (past offsets[-1]: left out, yet counted ...)
        if dropped and n_bags:
            counts = counts.copy()
            counts[n_bags - 1] += dropped    # (... in the last bag's mean, as torch's fast path)
        out = xp.zeros((n_bags, dim), dtype=w.dtype)
        argmax = None
        if mode == "max":
            if bag.size:
                # (``bags`` is non-decreasing: the offsets are)
                first = xp.concatenate([xp.zeros(1, dtype=counts.dtype), xp.cumsum(counts)[:-1]])
                pos = xp.arange(bag.size) - first[bag]
                dense = xp.full((n_bags, int(counts.max()), dim), -xp.inf, dtype=w.dtype)
                dense[bag, pos] = rows
                # NOTE: torch keeps a bag's first row, then takes a row only where it is
                # strictly greater: a NaN wins only as the first row
                nan = xp.isnan(dense)
                first_nan = nan[:, 0]
                nan[:, 0] = False
                dense[nan] = -xp.inf
                slot = xp.where(first_nan, 0, dense.argmax(1))         # (B, D) position
                dense[:, 0][first_nan] = xp.nan
                has = counts[:, None] > 0
                argmax = xp.where(has, idx[xp.minimum(first[:, None] + slot, bag.size - 1)], -1)
                out = xp.where(has, dense.max(1), 0).astype(w.dtype)
            else:
                argmax = xp.full((n_bags, dim), -1, dtype=xp.int64)
        else:
            if per_sample_weights is not None:
                rows = rows * per_sample_weights._array[keep][:, None]
            if bag.size:
                backend_of(out).index_add_rows(out, bag, rows.astype(w.dtype, copy=False))
            if mode == "mean":
                out = out / xp.maximum(counts, 1)[:, None].astype(w.dtype)
        ctx.mode, ctx.n_bags = mode, n_bags
        ctx.save_for_backward(weight, per_sample_weights, Tensor._wrap(indices),
                              Tensor._wrap(bags), Tensor._wrap(counts),
                              None if argmax is None else Tensor._wrap(argmax))
        return Tensor._wrap(out.astype(w.dtype, copy=False))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        weight, psw, indices, bags, counts, argmax = ctx.saved_tensors
        xp = xp_of(grad_output)
        w = weight._array
        g = grad_output._array.astype(w.dtype, copy=False)
        keep = bags._array >= 0
        idx, bag = indices._array[keep], bags._array[keep]
        grad_w = grad_psw = None
        if ctx.needs_input_grad[0]:
            grad_w = xp.zeros(w.shape, dtype=w.dtype)
            if ctx.mode == "max":
                am = argmax._array
                sel = am >= 0
                cols = xp.broadcast_to(xp.arange(w.shape[1]), am.shape)[sel]
                flat = grad_w.reshape(-1, 1)
                if cols.size:
                    backend_of(flat).index_add_rows(flat, am[sel] * w.shape[1] + cols,
                                                    g[sel][:, None])
            elif ctx.sparse:
                rows = g[xp.maximum(bags._array, 0)]
                if ctx.mode == "mean":
                    rows = rows * (1 / counts._array.astype(w.dtype))[xp.maximum(bags._array, 0),
                                                                      None]
                elif psw is not None:
                    rows = rows * psw._array[:, None]
                pad = ctx.padding_idx if ctx.padding_idx is not None else -1
                at = xp.flatnonzero((bags._array >= 0) | (indices._array == pad))
                grad_w = _sparse_rows_grad(indices._array[at], Tensor._wrap(rows[at]), w.shape,
                                           ctx.padding_idx, ctx.scale)
            elif bag.size:
                # NOTE: torch scales each row in float64 (its quirk: ``scale_grad_by_freq``
                # divides the k-th distinct index's rows by the count of the k-th sorted index)
                scale = psw._array[keep].astype(np.float64) if psw is not None else \
                    xp.ones(idx.shape, np.float64)
                if ctx.scale:
                    all_idx = xp.sort(indices._array)
                    uniq, k = xp.unique(idx, return_inverse=True)
                    scale = scale / xp.bincount(all_idx, minlength=w.shape[0])[all_idx[
                        xp.searchsorted(xp.unique(all_idx), uniq)[k.reshape(-1)]]]
                if ctx.mode == "mean":
                    scale = scale / xp.maximum(counts._array[bag], 1)
                scale = scale.astype(w.dtype).astype(np.float64)
                if w.dtype.itemsize > 4:
                    backend_of(grad_w).index_add_rows(grad_w, idx, g[bag] * scale[:, None])
                else:
                    _fma_rows_(grad_w, idx, g[bag].astype(np.float64) * scale[:, None])
            grad_w = grad_w if ctx.sparse else Tensor._wrap(grad_w)
        if ctx.needs_input_grad[1]:
            full = xp.zeros(bags.shape, dtype=psw._array.dtype)
            full[keep] = (g[bag] * w[idx]).sum(1)
            grad_psw = Tensor._wrap(full)
        return grad_w, grad_psw, None, None, None, None, None, None, None


def _linear(xp, indices, sparse_size):
    """Row-major positions of the COO ``indices`` within the sparse dims."""
    lin = xp.zeros(indices.shape[1], dtype=np.int64)
    for d, n in enumerate(sparse_size):
        lin = lin * n + indices[d]
    return lin


def _densify(xp, indices, values, size):
    sparse_size = tuple(size[:indices.shape[0]])
    out = xp.zeros((math.prod(sparse_size),) + tuple(size[indices.shape[0]:]), dtype=values.dtype)
    if values.shape[0]:
        xp.add.at(out, _linear(xp, indices, sparse_size), values)    # (in turn, as torch)
    return out.reshape(tuple(size))


def _make(dense, indices, values, coalesced):
    """A ``SparseCooTensor`` around raw arrays (no copy)."""
    t = Tensor._wrap(dense)
    t.__class__ = SparseCooTensor
    t._sp_indices, t._sp_values, t._sp_coalesced = indices, values, coalesced
    return t


def _coalesced_arrays(xp, indices, values, sparse_size):
    if indices.shape[1] == 0:
        return indices, values
    lin = _linear(xp, indices, sparse_size)
    uniq, inverse = xp.unique(lin, return_inverse=True)
    vals = xp.zeros((uniq.shape[0],) + values.shape[1:], dtype=values.dtype)
    xp.add.at(vals, inverse.reshape(-1), values)       # (duplicates summed in turn, as torch)
    idx = xp.stack(xp.unravel_index(uniq, sparse_size)).astype(np.int64).reshape(
        len(sparse_size), -1)
    return idx, vals


class SparseCooTensor(Tensor):
    """A tensor of layout ``torch.sparse_coo`` (made by ``sparse_coo_tensor``)."""

    is_sparse = True
    layout = _dt.sparse_coo

    def __reduce_ex__(self, proto):
        return (_rebuild_sparse_coo, (Tensor._wrap(self._sp_indices),
                                      Tensor._wrap(self._sp_values), tuple(self.shape),
                                      self._sp_coalesced, self.requires_grad))

    def _nnz(self):
        return int(self._sp_indices.shape[1])

    def sparse_dim(self):
        return int(self._sp_indices.shape[0])

    def dense_dim(self):
        return self._sp_values.ndim - 1

    def is_coalesced(self):
        return self._sp_coalesced

    def _indices(self):
        return Tensor._wrap(self._sp_indices)

    def _values(self):
        return SparseValues.apply(self)

    def indices(self):
        self._check_coalesced("indices")
        return self._indices()

    def values(self):
        self._check_coalesced("values")
        return self._values()

    def _check_coalesced(self, what):
        if not self._sp_coalesced:
            raise RuntimeError("Cannot get %s on an uncoalesced tensor, please call .coalesce() "
                               "first" % what)

    def coalesce(self):
        return self if self._sp_coalesced else Coalesce.apply(self)

    def zero_(self):
        """torch's ``zero_`` of a COO tensor: the same object, no stored element, coalesced."""
        self._array[...] = 0
        self._sp_indices, self._sp_values = self._sp_indices[:, :0], self._sp_values[:0]
        self._sp_coalesced = True
        self._bump()
        return self

    def to_dense(self, dtype=None, *, masked_grad=None):
        out = ToDense.apply(self)
        return out if dtype is None else out.to(dtype)

    def t(self):
        if self._sp_indices.shape[0] != 2 or self._sp_values.ndim != 1:
            raise RuntimeError("t() expects a tensor with <= 2 sparse and 0 dense dimensions, "
                               "but self is %dD" % self._array.ndim)
        return SparseT.apply(self)

    def mm(self, mat2):
        return spmm(self, mat2)

    def to_sparse_csr(self, dense_dim=None):
        return _coo_to_csr(self.coalesce())

    def to_sparse_coo(self):
        return self

    def detach(self):
        return _make(self._array, self._sp_indices, self._sp_values, self._sp_coalesced)

    def clone(self, *, memory_format=None):
        return sparse_coo_tensor(self._indices(), self._values().clone(), self.shape,
                                 is_coalesced=self._sp_coalesced)

    def to(self, *args, **kwargs):
        values = self._values().to(*args, **kwargs)
        if values.dtype is self.dtype and values.device == self.device:
            return self
        return sparse_coo_tensor(self._indices().to(values.device), values, self.shape,
                                 is_coalesced=self._sp_coalesced)

    def float(self, memory_format=None):
        return self.to(_dt.float32)

    def double(self, memory_format=None):
        return self.to(_dt.float64)

    def cpu(self, memory_format=None):
        return self.to("cpu")

    def matmul(self, other):
        return spmm(self, other)

    def __matmul__(self, other):
        return spmm(self, other)

    def __repr__(self, *, tensor_contents=None):
        body = "tensor(" + _sparse_part("indices=", self._sp_indices) + ",\n" + " " * 7 \
            + _sparse_part("values=", self._sp_values)
        return _sparse_repr(self, body, True)

    def _binary(self, other, op, alpha=1):
        if isinstance(other, SparseCooTensor):
            if op == "mul":
                return _sparse_mul(self, other)
            return _sparse_add(self, other, alpha if op == "add" else -alpha)
        if op != "div" and op != "mul":
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                               "instead.")
        vals = self._values()
        if isinstance(other, Tensor) and other.dim() > 0:
            if op == "div":
                raise RuntimeError("Sparse division requires a scalar or zero-dim dense tensor "
                                   "divisor (got shape %s for divisor)" % list(other.shape))
            other = other.expand(self.shape)[tuple(self._indices())]
        vals = vals * other if op == "mul" else vals / other
        return _with_values(self, vals, self._sp_coalesced, op.capitalize() + "Backward0")

    def __mul__(self, other):
        return self._binary(other, "mul")

    __rmul__ = mul = __mul__

    def __truediv__(self, other):
        return self._binary(other, "div")

    div = __truediv__

    def __add__(self, other, *, alpha=1):
        return self._binary(other, "add", alpha)

    add = __add__

    def __sub__(self, other, *, alpha=1):
        return self._binary(other, "sub", alpha)

    sub = __sub__

    def __neg__(self):
        return _with_values(self, -self._values(), self._sp_coalesced, "NegBackward0")

    def _inplace(self, other, op, alpha=1):
        """``add_``/``sub_``/``mul_``/``div_``: the result's contents in this tensor."""
        _assign_sparse_(self, self._binary(other, op, alpha).detach())
        self._bump()
        return self

    def add_(self, other, *, alpha=1):
        return self._inplace(other, "add", alpha)

    def sub_(self, other, *, alpha=1):
        return self._inplace(other, "sub", alpha)

    def mul_(self, other):
        return self._inplace(other, "mul")

    def div_(self, other):
        return self._inplace(other, "div")

    __iadd__, __isub__, __imul__, __itruediv__ = add_, sub_, mul_, div_

    neg = __neg__

    __str__ = __repr__

    @staticmethod
    def _sparse_accumulate(t, g, create_graph):
        """Add the gradient ``g`` into ``t.grad`` where either is sparse, by torch's
        AccumulateGrad rules: sparse += sparse and dense += sparse in place; else a new sum."""
        old = t._grad
        if old is None:
            t._grad = g.clone() if create_graph else _make(
                g._array, g._sp_indices, g._sp_values.copy(), g._sp_coalesced)
        elif create_graph:
            t._grad = g + old if old.is_sparse and not g.is_sparse else old + g
        elif not old.is_sparse:
            _add_sparse_rows_(old._array, g)
        elif not g.is_sparse:
            t._grad = Tensor._wrap(g._array.copy())
            _add_sparse_rows_(t._grad._array, old)
        else:
            _assign_sparse_(old, _sparse_add(old, g, 1))


def _assign_sparse_(dst, src):
    """Make the COO tensor ``dst`` hold ``src``'s contents (torch's in-place sparse ops)."""
    dst._array, dst._sp_indices = src._array, src._sp_indices
    dst._sp_values, dst._sp_coalesced = src._sp_values, src._sp_coalesced
    return dst


def _add_sparse_rows_(dense, sparse, alpha=1):
    """``dense += alpha * sparse`` in place, one stored value after another (torch's
    ``add_out_dense_sparse``: an uncoalesced tensor's duplicates are added in turn)."""
    xp = xp_of(sparse)
    idx = sparse._sp_indices
    lin = _linear(xp, idx, sparse.shape[:idx.shape[0]])
    rows = dense.reshape((-1,) + dense.shape[idx.shape[0]:])
    if alpha == 1 or dense.dtype.itemsize > 4:
        vals = sparse._sp_values if alpha == 1 else sparse._sp_values * dense.dtype.type(alpha)
        xp.add.at(rows, lin, vals)
        return
    # NOTE: torch's axpy fuses the multiply-add; float64 holds the product exactly, so each
    # value goes in by rounds (the k-th time its row is named) rounding once per add
    _fma_rows_(rows, lin, sparse._sp_values.astype(np.float64) * float(dense.dtype.type(alpha)))


def _fma_rows_(rows, lin, vals):
    """``rows[lin[i]] += vals[i]`` in turn, ``vals`` being exact float64 products."""
    xp = xp_of(Tensor._wrap(rows))
    order = xp.argsort(lin, kind="stable")
    first = xp.searchsorted(lin[order], lin[order])
    rank = xp.empty_like(order)
    rank[order] = xp.arange(lin.size) - first
    for k in range(int(rank.max()) + 1 if lin.size else 0):
        at = rank == k
        rows[lin[at]] = (rows[lin[at]] + vals[at]).astype(rows.dtype)


def _sparse_repr(t, body, newline):
    """torch's sparse repr: ``body`` then size/nnz/dtype/layout suffixes, wrapped at the line
    width (on a new line for COO; after the values for compressed layouts)."""
    indent = len("tensor(")
    suffixes = ["size=" + str(tuple(t.shape)), "nnz=" + str(t._nnz())]
    if t.dtype not in (_dt.get_default_dtype(), _dt.int64, _dt.bool):
        suffixes.append("dtype=" + repr(t.dtype))
    suffixes.append("layout=" + repr(t.layout))
    if t.grad_fn is not None:
        suffixes.append("grad_fn=<%s>" % type(t.grad_fn).__name__)
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    # (torch counts the last line two characters longer than it is, unless it starts a new one)
    parts, last = [body], len(body) - body.rfind("\n") + 1
    for suffix in suffixes:
        if newline or last + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last, newline = indent + len(suffix), False
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    return "".join(parts) + ")"


def _with_values(sparse, values, coalesced, node_name, indices=None):
    """A COO tensor of ``sparse``'s shape holding ``values`` (at ``sparse``'s indices)."""
    idx = sparse._sp_indices if indices is None else indices
    return SparseCooTensorWithDimsAndTensors.apply(values, idx, Size(sparse.shape), coalesced,
                                                   node_name)


def _sparse_add(a, b, alpha):
    """``a + alpha * b`` for two COO tensors, merged as torch's CPU kernel walks them (in linear
    index order; the result is coalesced when both are)."""
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError("add: expected sizes of 'self' and 'other' to match, but %s != %s"
                           % (list(a.shape), list(b.shape)))
    xp = xp_of(a)
    if a._nnz() and b._nnz() and not (a._sp_values.flags.c_contiguous
                                      and b._sp_values.flags.c_contiguous):
        # NOTE: torch's kernel concatenates when either values tensor is not contiguous, and
        # coalesces past nnz > numel (yet leaves the flag unset)
        idx = xp.concatenate([a._sp_indices, b._sp_indices], axis=1)
        out = _with_values(a, cat([a._values(), b._values() * alpha]), False,
                           "AddBackward0" if alpha > 0 else "SubBackward0", idx)
        if out._nnz() > out.numel():
            out = Coalesce.apply(out)
            out._sp_coalesced = False
        return out
    sparse_size = tuple(a.shape[:a._sp_indices.shape[0]])
    lin_a = _linear(xp, a._sp_indices, sparse_size).tolist()
    lin_b = _linear(xp, b._sp_indices, sparse_size).tolist()
    from_a, from_b, i, j = [], [], 0, 0
    while i < len(lin_a) or j < len(lin_b):
        if j == len(lin_b) or (i < len(lin_a) and lin_a[i] < lin_b[j]):
            from_a.append(i)
            from_b.append(len(lin_b))
            i += 1
        elif i == len(lin_a) or lin_b[j] < lin_a[i]:
            from_a.append(len(lin_a))
            from_b.append(j)
            j += 1
        else:
            from_a.append(i)
            from_b.append(j)
            i, j = i + 1, j + 1
    ia = Tensor._wrap(xp.asarray(from_a, dtype=np.int64))
    ib = Tensor._wrap(xp.asarray(from_b, dtype=np.int64))
    va, vb = a._values(), b._values() * alpha
    zero = va.new_zeros((1,) + tuple(va.shape[1:]))
    vals = cat([va, zero])[ia] + cat([vb, zero.to(vb.dtype)])[ib]
    idx = xp.concatenate([a._sp_indices, b._sp_indices[:, :1] * 0], axis=1)[:, ia._array]
    idx_b = b._sp_indices[:, xp.minimum(ib._array, max(len(lin_b) - 1, 0))] if len(lin_b) \
        else idx
    idx = xp.where((ia._array < len(lin_a))[None], idx, idx_b) if len(lin_a) else idx_b
    return _with_values(a, vals, a._sp_coalesced and b._sp_coalesced,
                        "AddBackward0" if alpha > 0 else "SubBackward0", idx)


def _sparse_mul(a, b):
    """``a * b`` for two COO tensors: the product where both store a value (when both are
    coalesced), else at the uncoalesced (or larger-nnz lookup's partner) one's indices."""
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError("sparse_binary_op_intersection_cpu(): expects sparse inputs with "
                           "equal dimensionality, number of sparse dimensions, and shape of "
                           "sparse dimensions")
    xp = xp_of(a)
    if not (a._sp_coalesced and b._sp_coalesced):
        lookup, src = (a, b) if a._sp_coalesced or (not b._sp_coalesced
                                                    and a._nnz() >= b._nnz()) else (b, a)
        at = ToDense.apply(lookup)[tuple(src._indices())]
        size = tuple(a.shape[:a._sp_indices.shape[0]])
        miss = ~xp.isin(_linear(xp, src._sp_indices, size),
                        _linear(xp, lookup._sp_indices, size))
        miss = Tensor._wrap(miss.reshape(miss.shape + (1,) * (src._sp_values.ndim - 1)))
        vals = (at * src._values()).masked_fill(miss, 0)
        return _with_values(src, vals, False, "MulBackward0")
    sparse_size = tuple(a.shape[:a._sp_indices.shape[0]])
    lin_a = _linear(xp, a._sp_indices, sparse_size)
    lin_b = _linear(xp, b._sp_indices, sparse_size)
    pos = xp.minimum(xp.searchsorted(lin_b, lin_a), max(lin_b.shape[0] - 1, 0))
    hit = (lin_b[pos] == lin_a) if lin_b.shape[0] else xp.zeros(lin_a.shape, dtype=bool)
    keep_a = Tensor._wrap(xp.nonzero(hit)[0])
    keep_b = Tensor._wrap(pos[hit])
    vals = a._values()[keep_a] * b._values()[keep_b]
    return _with_values(a, vals, True, "MulBackward0", a._sp_indices[:, hit])


def _sparse_part(prefix, arr):
    """``indices=tensor([...])`` in a sparse tensor's repr, its lines indented under it."""
    text = tensor_repr(Tensor._wrap(arr), prefix=" " * (len("tensor(") + len(prefix + "tensor(")))
    head = text.lstrip(" ")
    # (tensor_repr's suffixes: drop a dtype, which the sparse repr shows once)
    head = head.split(", dtype=")[0].rstrip(")") + ")" if ", dtype=" in head else head
    if arr.size == 0:
        head = "[], size=" + str(tuple(arr.shape)) + ")"
    return prefix + "tensor(" + head


class SparseCooTensorWithDimsAndTensors(Function):
    """``values`` -> the sparse tensor; its gradient is the dense gradient at ``indices``."""

    node_name = "SparseCooTensorWithDimsAndTensorsBackward0"

    @staticmethod
    def forward(ctx, values, indices, size, coalesced, node_name=None):
        if node_name is not None:
            ctx.set_node_name(node_name)
        xp = xp_of(values)
        ctx.save_for_backward(Tensor._wrap(_linear(xp, indices, size[:indices.shape[0]])))
        ctx.dense_tail = tuple(size[indices.shape[0]:])
        vals = values._array
        return _make(_densify(xp, indices, vals, size), indices, vals, coalesced)

    @staticmethod
    def backward(ctx, grad_output):
        lin, = ctx.saved_tensors
        return grad_output.reshape((-1,) + ctx.dense_tail)[lin], None, None, None, None


class SparseValues(Function):
    """``sparse._values()``."""

    node_name = "ValuesBackward0"

    @staticmethod
    def forward(ctx, sparse):
        xp = xp_of(sparse)
        idx = sparse._sp_indices
        ctx.save_for_backward(Tensor._wrap(_linear(xp, idx, sparse.shape[:idx.shape[0]])))
        ctx.shape = tuple(sparse.shape)
        return Tensor._wrap(sparse._sp_values)

    @staticmethod
    def backward(ctx, grad_output):
        lin, = ctx.saved_tensors
        xp = xp_of(grad_output)
        flat = Tensor._wrap(xp.zeros((math.prod(ctx.shape[:len(ctx.shape) - grad_output.dim()
                                                           + 1]),) + tuple(grad_output.shape[1:]),
                                     dtype=grad_output._array.dtype))
        return flat.index_put((lin,), grad_output, accumulate=True).reshape(ctx.shape)


class Coalesce(Function):
    """Sorted, duplicate-free indices (duplicates' values summed); the dense value is unchanged."""

    node_name = "CoalesceBackward0"

    @staticmethod
    def forward(ctx, sparse):
        xp = xp_of(sparse)
        idx, vals = _coalesced_arrays(xp, sparse._sp_indices, sparse._sp_values,
                                      tuple(sparse.shape[:sparse._sp_indices.shape[0]]))
        return _make(sparse._array.copy(), idx, vals, True)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class ToDense(Function):
    node_name = "ToDenseBackward0"

    @staticmethod
    def forward(ctx, sparse):
        return Tensor._wrap(sparse._array.copy())

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class SparseT(Function):
    node_name = "TBackward0"

    @staticmethod
    def forward(ctx, sparse):
        idx = sparse._sp_indices[::-1].copy()
        return _make(sparse._array.T.copy(), idx, sparse._sp_values, False)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.t()


class SparseMm(Function):
    """``sparse (n, m) @ dense (m, k)``: each stored value's row of ``dense`` added to its row."""

    @staticmethod
    def forward(ctx, sparse, dense, node_name):
        ctx.set_node_name(node_name)
        xp = xp_of(dense)
        idx, vals, d = sparse._sp_indices, sparse._sp_values, dense._array
        out = xp.zeros((sparse.shape[0], d.shape[1]), dtype=d.dtype)
        if vals.shape[0]:
            backend_of(out).index_add_rows(out, idx[0], vals[:, None] * d[idx[1]])
        ctx.save_for_backward(Tensor._wrap(idx[0]), Tensor._wrap(idx[1]), Tensor._wrap(vals),
                              dense if ctx.needs_input_grad[0] else None)
        ctx.shape = tuple(sparse.shape)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        rows, cols, vals, dense = ctx.saved_tensors
        xp = xp_of(grad_output)
        grad_sparse = grad_dense = None
        if ctx.needs_input_grad[0]:
            # NOTE: torch's gradient is masked to the stored positions; a duplicate position
            # is written once (put, not add), as the dense gradient there
            n, m = ctx.shape
            at = (grad_output[rows] * dense[cols]).sum(1)
            zeros = Tensor._wrap(xp.zeros(n * m, dtype=grad_output._array.dtype))
            grad_sparse = zeros.index_put((rows * m + cols,), at).reshape(n, m)
        if ctx.needs_input_grad[1]:
            zeros = Tensor._wrap(xp.zeros((ctx.shape[1], grad_output.shape[1]),
                                          dtype=grad_output._array.dtype))
            grad_dense = zeros.index_add(0, cols, grad_output[rows] * vals.unsqueeze(1))
        return grad_sparse, grad_dense, None


def _rebuild_sparse_coo(indices, values, size, coalesced, requires_grad=False):
    """A pickled sparse COO tensor, rebuilt."""
    return sparse_coo_tensor(indices, values, size, is_coalesced=coalesced,
                             requires_grad=requires_grad)


def _invariants_warning(check_invariants):
    """torch's warning, once per process, for a sparse tensor built by the user without
    ``check_invariants``."""
    if check_invariants is None and called_by_user(1):
        warn_once("sparse invariants", "Sparse invariant checks are implicitly disabled. Memory "
                  "errors (e.g. SEGFAULT) will occur when operating on a sparse tensor which "
                  "violates the invariants, but checks incur performance overhead. To silence "
                  "this warning, explicitly opt in or out. See `torch.sparse.check_sparse_"
                  "tensor_invariants.__doc__` for guidance.", caller_stacklevel() + 1)


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor with ``values`` at ``indices`` (sparse_dim, nnz). Matches
    ``torch.sparse_coo_tensor``.

    Example:
        >>> from ember.ops.sparse import sparse_coo_tensor
        >>> s = sparse_coo_tensor([[0, 1], [1, 0]], [2., 3.], (2, 2))
        >>> s.to_dense()
        tensor([[0., 2.],
                [3., 0.]])
    """
    _invariants_warning(check_invariants)
    if not isinstance(indices, Tensor):
        indices = as_tensor(indices, dtype=_dt.int64)
    if not isinstance(values, Tensor):
        values = as_tensor(values, dtype=dtype)
    if dtype is not None and values.dtype is not dtype:
        values = values.to(dtype)
    if indices.dtype is not _dt.int64:
        raise RuntimeError("indices must be an int64 tensor")
    idx = indices._array
    if idx.ndim != 2:
        raise RuntimeError("indices must be sparse_dim x nnz, but got: %s"
                           % str(list(indices.shape)))
    if idx.shape[1] != values.shape[0]:
        raise RuntimeError("indices and values must have same nnz, but got nnz from indices: "
                           "%d, nnz from values: %d" % (idx.shape[1], values.shape[0]))
    if size is None:
        top = (idx.max(axis=1) + 1).tolist() if idx.shape[1] else [0] * idx.shape[0]
        size = tuple(int(v) for v in top) + tuple(values.shape[1:])
    size = tuple(int(v) for v in size)
    if len(size) != idx.shape[0] + values.dim() - 1:
        raise RuntimeError("number of dimensions must be sparse_dim (%d) + dense_dim (%d), but "
                           "got %d" % (idx.shape[0], values.dim() - 1, len(size)))
    if idx.shape[1]:
        top = idx.max(axis=1)
        for d in range(idx.shape[0]):
            if int(top[d]) >= size[d]:
                raise RuntimeError("size is inconsistent with indices: for dim %d, size is %d "
                                   "but found index %d" % (d, size[d], int(top[d])))
    if requires_grad:
        values = values.detach().requires_grad_()
    coalesced = bool(is_coalesced) or idx.shape[1] <= 1
    return SparseCooTensorWithDimsAndTensors.apply(values, idx.astype(np.int64, copy=False),
                                                   Size(size), coalesced)


def _check_mm(sparse, dense, name):
    if sparse.dim() != 2 or sparse.dense_dim() != 0:
        raise RuntimeError("%s: 2-D sparse matrices expected, got %dD" % (name, sparse.dim()))
    if dense.dim() != 2:
        raise RuntimeError("%s: 2-D matrices expected, got %dD tensor" % (name, dense.dim()))
    if sparse.dtype is not dense.dtype:
        raise RuntimeError("expected scalar type %s but found %s"
                           % (_dt.scalar_type_name(sparse.dtype.np),
                              _dt.scalar_type_name(dense.dtype.np)))
    if sparse.shape[1] != dense.shape[0]:
        raise RuntimeError("addmm: Argument #3 (dense): Expected dim 0 size %d, got %d"
                           % (sparse.shape[1], dense.shape[0]))


def spmm(input, mat2):
    """``input @ mat2`` for a sparse COO ``input`` and a dense ``mat2``. Matches ``torch.spmm``
    (a dense ``input``: plain ``mm``)."""
    if not isinstance(input, SparseCooTensor):
        return input.mm(mat2)
    _check_mm(input, mat2, "spmm")
    return SparseMm.apply(input, mat2, "MmBackward0")


def smm(input, mat):
    """``torch.smm``: sparse ``input`` times dense ``mat``, as a sparse tensor holding every
    column of each row that ``input`` stores. (No gradient: torch has none either.)"""
    if not isinstance(input, SparseCooTensor):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    _check_mm(input, mat, "smm")
    xp = xp_of(mat)
    with no_grad():
        out = SparseMm.apply(input, mat, "MmBackward0")._array
    rows = xp.unique(input._sp_indices[0])
    k = out.shape[1]
    idx = xp.stack([xp.repeat(rows, k), xp.tile(xp.arange(k, dtype=np.int64), rows.shape[0])])
    vals = out[rows].reshape(-1)
    return _make(_densify(xp, idx, vals, out.shape), idx, vals, True)


def sparse_mm(mat1, mat2, reduce="sum"):
    """``torch.sparse.mm``: sparse @ dense (dense result), with gradients to both."""
    if reduce != "sum":
        raise NotImplementedError("torch.sparse.mm: only reduce='sum' is supported by ember")
    if not isinstance(mat1, SparseCooTensor):
        return mat1.mm(mat2)
    _check_mm(mat1, mat2, "sparse.mm")
    return SparseMm.apply(mat1, mat2, "SparseAddmmBackward0")


def sparse_addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``torch.sparse.addmm``: ``beta * mat + alpha * (mat1 @ mat2)``, ``mat1`` sparse."""
    prod = sparse_mm(mat1, mat2)
    return mat * beta + prod * alpha


class SparseSum(Function):
    """``torch.sparse.sum`` over some sparse dims: a sparse result (dense gradient broadcast)."""

    node_name = "SparseSumBackward0"

    @staticmethod
    def forward(ctx, sparse, dims):
        xp = xp_of(sparse)
        nsp = sparse._sp_indices.shape[0]
        keep = [d for d in range(nsp) if d not in dims]
        dense_dims = tuple(d - nsp + 1 for d in dims if d >= nsp)
        vals = sparse._sp_values.sum(axis=dense_dims) if dense_dims else sparse._sp_values
        idx = sparse._sp_indices[keep]
        size = tuple(n for d, n in enumerate(sparse.shape) if d not in dims)
        ctx.dims, ctx.shape = dims, tuple(sparse.shape)
        if not keep:
            return Tensor._wrap(vals.sum(axis=0))
        idx, vals = _coalesced_arrays(xp, idx, vals, size[:len(keep)])
        return _make(_densify(xp, idx, vals, size), idx, vals, True)

    @staticmethod
    def backward(ctx, grad_output):
        g = grad_output
        for d in sorted(ctx.dims):
            g = g.unsqueeze(d)
        return g.expand(ctx.shape), None


def sparse_sum(input, dim=None, dtype=None):
    """``torch.sparse.sum``: the sum of all values (dense 0-d), or over ``dim`` (sparse)."""
    if dtype is not None:
        input = sparse_coo_tensor(input._indices(), input._values().to(dtype), input.shape)
    if dim is None:
        return input._values().sum()
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    dims = tuple(sorted(d % input.dim() for d in dims))
    return SparseSum.apply(input, dims)


class ToSparse(Function):
    """``dense.to_sparse(sparse_dim)``: the positions whose (sub-)entries are not all zero."""

    node_name = "ToSparseBackward1"

    @staticmethod
    def forward(ctx, dense, sparse_dim):
        xp = xp_of(dense)
        arr = dense._array
        flat = arr.reshape(arr.shape[:sparse_dim] + (-1,)) if sparse_dim < arr.ndim else arr
        mask = (flat != 0).any(axis=-1) if sparse_dim < arr.ndim else flat != 0
        idx = xp.stack(xp.nonzero(mask)).astype(np.int64).reshape(sparse_dim, -1)
        vals = arr[tuple(idx)]
        full = mask.reshape(mask.shape + (1,) * (arr.ndim - sparse_dim))
        ctx.save_for_backward(Tensor._wrap(xp.broadcast_to(full, arr.shape).astype(arr.dtype)))
        return _make(arr.copy(), idx, vals, True)

    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        return grad_output * mask, None


def to_sparse(input, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """``input.to_sparse()``: a coalesced COO tensor of ``input``'s non-zero entries (its
    gradient is masked to them, as torch's)."""
    if layout is _dt.sparse_csr:
        if isinstance(input, (SparseCooTensor, SparseCsrTensor)) or input.dim() != 2:
            return to_sparse_csr(input)
        return ToSparseCsr.apply(input, "ToSparseBackward1")
    if layout is not None and layout is not _dt.sparse_coo:
        raise NotImplementedError("to_sparse: ember supports only layout=torch.sparse_coo and "
                                  "torch.sparse_csr")
    if isinstance(input, SparseCsrTensor):
        return input.to_sparse_coo()
    if isinstance(input, SparseCooTensor):
        return input
    return ToSparse.apply(input, input.dim() if sparse_dim is None else int(sparse_dim))


def _make_csr(dense, crow, col, values):
    """A ``SparseCsrTensor`` around raw arrays (no copy)."""
    t = Tensor._wrap(dense)
    t.__class__ = SparseCsrTensor
    t._csr_crow, t._csr_col, t._csr_values = crow, col, values
    return t


def _csr_rows(xp, crow):
    """The row of each stored value of a CSR tensor."""
    return xp.repeat(xp.arange(crow.shape[0] - 1, dtype=np.int64), xp.diff(crow))


class SparseCsrTensor(Tensor):
    """A 2-D tensor of layout ``torch.sparse_csr`` (made by ``to_sparse_csr`` or
    ``sparse_csr_tensor``): row pointers ``crow_indices``, ``col_indices`` and ``values``."""

    layout = _dt.sparse_csr
    is_sparse_csr = True

    def _nnz(self):
        return int(self._csr_col.shape[0])

    def crow_indices(self):
        return Tensor._wrap(self._csr_crow)

    def col_indices(self):
        return Tensor._wrap(self._csr_col)

    def values(self):
        return CsrValues.apply(self)

    def to_dense(self, dtype=None, *, masked_grad=None):
        out = ToDense.apply(self)
        return out if dtype is None else out.to(dtype)

    def to_sparse_coo(self):
        xp = xp_of(self)
        idx = xp.stack([_csr_rows(xp, self._csr_crow), self._csr_col])
        return _with_values(self, self.values(), True, "SparseCompressedTensorBackward0", idx)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        return self if layout is _dt.sparse_csr else self.to_sparse_coo()

    def to_sparse_csr(self, dense_dim=None):
        return self

    def detach(self):
        return _make_csr(self._array, self._csr_crow, self._csr_col, self._csr_values)

    def mm(self, mat2):
        return spmm(self.to_sparse_coo(), mat2)

    matmul = __matmul__ = mm

    def _scaled(self, values, node_name):
        return CsrFromValues.apply(values, self._csr_crow, self._csr_col, Size(self.shape),
                                   node_name)

    def _binary(self, other, op):
        if op == "sub" or op == "div":
            raise RuntimeError("unsupported tensor layout: SparseCsr")
        if isinstance(other, SparseCsrTensor):
            coo = self.to_sparse_coo()._binary(other.to_sparse_coo(), op)
            return _coo_to_csr(coo, op.capitalize() + "Backward0")
        if op == "add":
            # (torch adds the dense operand to the CSR one: a dense result)
            other_shape = list(other.shape) if isinstance(other, Tensor) else []
            if other_shape != list(self.shape):
                raise RuntimeError("add: expected 'self' and 'other' to have same size, but self "
                                   "has size %s while other has size %s (FYI: op2-sparse "
                                   "addition does not currently support broadcasting)"
                                   % (other_shape, list(self.shape)))
            return other + self.to_dense()
        if isinstance(other, Tensor) and other.dim() > 0:
            raise NotImplementedError("ember: a sparse CSR tensor multiplies only by a scalar or "
                                      "another CSR tensor")
        return self._scaled(self.values() * other, "MulBackward0")

    def __mul__(self, other):
        return self._binary(other, "mul")

    __rmul__ = mul = __mul__

    def __truediv__(self, other):
        return self._binary(other, "div")

    div = __truediv__

    def __add__(self, other):
        return self._binary(other, "add")

    add = __add__

    def __sub__(self, other):
        return self._binary(other, "sub")

    sub = __sub__

    def t(self):
        raise NotImplementedError("ember: the sparse CSC layout (a transposed CSR tensor) is "
                                  "not supported")

    def __neg__(self):
        return self._scaled(-self.values(), "NegBackward0")

    neg = __neg__

    def __repr__(self, *, tensor_contents=None):
        body = "tensor(" + _sparse_part("crow_indices=", self._csr_crow) + ",\n" + " " * 7 \
            + _sparse_part("col_indices=", self._csr_col) + ",\n" + " " * 7 \
            + _sparse_part("values=", self._csr_values)
        return _sparse_repr(self, body, False)

    __str__ = __repr__


class CsrValues(Function):
    """``csr.values()``: the stored values (their gradient scattered back to the dense one)."""

    node_name = "ValuesBackward0"

    @staticmethod
    def forward(ctx, csr):
        xp = xp_of(csr)
        lin = _csr_rows(xp, csr._csr_crow) * csr.shape[1] + csr._csr_col
        ctx.save_for_backward(Tensor._wrap(lin))
        ctx.shape = tuple(csr.shape)
        return Tensor._wrap(csr._csr_values)

    @staticmethod
    def backward(ctx, grad_output):
        lin, = ctx.saved_tensors
        flat = grad_output.new_zeros(ctx.shape[0] * ctx.shape[1])
        return flat.index_put((lin,), grad_output, accumulate=True).reshape(ctx.shape)


class CsrFromValues(Function):
    """``values`` -> a CSR tensor with the given row pointers and columns."""

    node_name = "SparseCsrTensorBackward0"

    @staticmethod
    def forward(ctx, values, crow, col, size, node_name=None):
        if node_name is not None:
            ctx.set_node_name(node_name)
        xp = xp_of(values)
        rows = _csr_rows(xp, crow)
        ctx.save_for_backward(Tensor._wrap(rows * size[1] + col))
        vals = values._array
        return _make_csr(_densify(xp, xp.stack([rows, col]), vals, size), crow, col, vals)

    @staticmethod
    def backward(ctx, grad_output):
        lin, = ctx.saved_tensors
        return grad_output.reshape(-1)[lin], None, None, None, None


class ToSparseCsr(Function):
    """``dense.to_sparse_csr()``: the non-zero entries of a 2-D tensor, row by row."""

    node_name = "ToSparseCsrBackward0"

    @staticmethod
    def forward(ctx, dense, node_name=None):
        if node_name is not None:
            ctx.set_node_name(node_name)
        xp = xp_of(dense)
        arr = dense._array
        mask = arr != 0
        rows, cols = xp.nonzero(mask)
        crow = xp.concatenate([xp.zeros(1, dtype=np.int64),
                               xp.cumsum(mask.sum(axis=1)).astype(np.int64)])
        ctx.save_for_backward(Tensor._wrap(mask.astype(arr.dtype)))
        return _make_csr(arr.copy(), crow, cols.astype(np.int64), arr[rows, cols])

    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        return grad_output * mask, None


def _coo_to_csr(coo, node_name="SparseCompressedTensorBackward0"):
    if coo.dim() != 2 or coo.dense_dim() != 0:
        raise NotImplementedError("ember: to_sparse_csr supports 2-D tensors only")
    xp = xp_of(coo)
    rows = coo._sp_indices[0]
    counts = xp.bincount(rows, minlength=coo.shape[0]) if rows.shape[0] else \
        xp.zeros(coo.shape[0], dtype=np.int64)
    crow = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(counts).astype(np.int64)])
    return CsrFromValues.apply(coo._values(), crow, coo._sp_indices[1].copy(), Size(coo.shape),
                               node_name)


def to_sparse_csr(input, dense_dim=None):
    """``input.to_sparse_csr()``: a 2-D tensor in compressed sparse row layout (its gradient is
    masked to the stored entries, as torch's)."""
    if isinstance(input, (SparseCooTensor, SparseCsrTensor)):
        return input.to_sparse_csr()
    if input.dim() != 2:
        raise NotImplementedError("ember: to_sparse_csr supports 2-D tensors only")
    return ToSparseCsr.apply(input)


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None):
    """A 2-D CSR tensor from row pointers, column indices and values. Matches
    ``torch.sparse_csr_tensor``.

    Example:
        >>> from ember.ops.sparse import sparse_csr_tensor
        >>> sparse_csr_tensor([0, 1, 2], [1, 0], [5., 6.], (2, 2)).to_dense()
        tensor([[0., 5.],
                [6., 0.]])
    """
    _invariants_warning(check_invariants)
    crow = crow_indices if isinstance(crow_indices, Tensor) else \
        as_tensor(crow_indices, dtype=_dt.int64)
    col = col_indices if isinstance(col_indices, Tensor) else \
        as_tensor(col_indices, dtype=_dt.int64)
    if not isinstance(values, Tensor):
        values = as_tensor(values, dtype=dtype)
    if dtype is not None and values.dtype is not dtype:
        values = values.to(dtype)
    if crow.dim() != 1 or col.dim() != 1 or values.dim() != 1:
        raise NotImplementedError("ember: sparse_csr_tensor supports 2-D tensors only")
    if col.shape[0] != values.shape[0]:
        raise RuntimeError("col_indices and values nnz must be equal, but got %d and %d"
                           % (col.shape[0], values.shape[0]))
    if size is None:
        ncol = int(col._array.max()) + 1 if col.shape[0] else 0
        size = (crow.shape[0] - 1, ncol)
    if requires_grad:
        values = values.detach().requires_grad_()
    return CsrFromValues.apply(values, crow._array.astype(np.int64, copy=False),
                               col._array.astype(np.int64, copy=False),
                               Size(tuple(int(v) for v in size)))
