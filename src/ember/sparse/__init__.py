"""Sparse COO tensors, as ``torch.sparse``: ``mm``, ``addmm``, ``sum`` and the legacy
``FloatTensor``-style constructors (made by ``ember.sparse_coo_tensor``).

Example:
    >>> import ember
    >>> from ember import sparse
    >>> s = sparse.sparse_coo_tensor([[0, 1], [1, 0]], [2., 3.], (2, 2))
    >>> sparse.mm(s, ember.ones(2, 1))
    tensor([[2.],
            [3.]])
"""
from .. import dtypes as _dt
from ..ops.sparse import SparseCooTensor, sparse_addmm as addmm, sparse_coo_tensor, \
    sparse_mm as mm, sparse_sum as sum

__all__ = ["mm", "addmm", "sum", "FloatTensor", "DoubleTensor", "LongTensor"]


class _LegacySparseType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, SparseCooTensor) and obj.dtype is cls._dtype


def _legacy(name, dtype):
    def __new__(cls, indices, values, size=None):
        return sparse_coo_tensor(indices, values, size, dtype=dtype)
    return _LegacySparseType(name, (), {"__new__": __new__, "_dtype": dtype, "dtype": dtype,
                                        "layout": _dt.sparse_coo, "is_cuda": False,
                                        "is_sparse": True, "is_sparse_csr": False,
                                        "__module__": "torch.sparse",
                                        "__doc__": "Legacy ``torch.sparse.%s(indices, values, "
                                                   "size)``: a COO tensor of %r." % (name, dtype)})


FloatTensor = _legacy("FloatTensor", _dt.float32)
DoubleTensor = _legacy("DoubleTensor", _dt.float64)
LongTensor = _legacy("LongTensor", _dt.int64)
