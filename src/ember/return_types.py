"""``ember.return_types``: the named tuples that ops with several results return, as
``torch.return_types`` (``x.max(0)`` is a ``max(values=..., indices=...)``).

Each class is a ``tuple`` subclass: it unpacks (``values, indices = x.max(0)``), indexes
(``r[0]``) and has named fields (``r.values``), and it prints as torch's does.

Example:
    >>> import ember
    >>> r = ember.tensor([1.0, 3.0, 2.0]).max(0)
    >>> type(r).__name__, r.indices.item()
    ('max', 1)
    >>> r
    torch.return_types.max(
    values=tensor(3.),
    indices=tensor(1))
"""
from collections import namedtuple

__all__ = ["max", "min", "median", "nanmedian", "mode", "sort", "topk", "kthvalue", "aminmax",
           "linalg_inv_ex", "linalg_svd", "svd", "linalg_qr", "qr", "linalg_eigh", "linalg_eig",
           "linalg_cholesky_ex", "linalg_lstsq", "linalg_lu", "linalg_lu_factor",
           "linalg_lu_factor_ex", "linalg_solve_ex", "linalg_slogdet", "slogdet",
           "linalg_ldl_factor", "linalg_ldl_factor_ex", "triangular_solve", "lu_unpack",
           "geqrf", "frexp", "cummax", "cummin", "histogram", "histogramdd"]


def _return_type(name, fields=("values", "indices")):
    """A named tuple class printing as ``torch.return_types.NAME(values=..., indices=...)``."""
    base = namedtuple(name, fields)

    def __repr__(self):
        return "torch.return_types.%s(\n%s)" % (
            name, ",\n".join("%s=%r" % (f, v) for f, v in zip(fields, self)))
    return type(name, (base,), {"__slots__": (), "__repr__": __repr__,
                                "__module__": __name__, "__qualname__": name})


max = _return_type("max")
min = _return_type("min")
median = _return_type("median")
nanmedian = _return_type("nanmedian")
mode = _return_type("mode")
sort = _return_type("sort")
topk = _return_type("topk")
kthvalue = _return_type("kthvalue")
aminmax = _return_type("aminmax", ("min", "max"))
linalg_inv_ex = _return_type("linalg_inv_ex", ("inverse", "info"))
linalg_svd = _return_type("linalg_svd", ("U", "S", "Vh"))
svd = _return_type("svd", ("U", "S", "V"))
linalg_qr = _return_type("linalg_qr", ("Q", "R"))
qr = _return_type("qr", ("Q", "R"))
linalg_eigh = _return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_eig = _return_type("linalg_eig", ("eigenvalues", "eigenvectors"))
linalg_cholesky_ex = _return_type("linalg_cholesky_ex", ("L", "info"))
linalg_lstsq = _return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
linalg_lu = _return_type("linalg_lu", ("P", "L", "U"))
linalg_lu_factor = _return_type("linalg_lu_factor", ("LU", "pivots"))
linalg_lu_factor_ex = _return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
linalg_solve_ex = _return_type("linalg_solve_ex", ("result", "info"))
linalg_slogdet = _return_type("linalg_slogdet", ("sign", "logabsdet"))
slogdet = _return_type("slogdet", ("sign", "logabsdet"))
linalg_ldl_factor = _return_type("linalg_ldl_factor", ("LD", "pivots"))
linalg_ldl_factor_ex = _return_type("linalg_ldl_factor_ex", ("LD", "pivots", "info"))
triangular_solve = _return_type("triangular_solve", ("solution", "cloned_coefficient"))
lu_unpack = _return_type("lu_unpack", ("P", "L", "U"))
geqrf = _return_type("geqrf", ("a", "tau"))
frexp = _return_type("frexp", ("mantissa", "exponent"))
cummax = _return_type("cummax")
cummin = _return_type("cummin")
histogram = _return_type("histogram", ("hist", "bin_edges"))
histogramdd = _return_type("histogramdd", ("hist", "bin_edges"))
