"""Per-op differential fuzzing: every public op called on random arguments in ember and torch.

An op is ``(namespace, name)``: ``torch`` (``ember.NAME``), ``Tensor`` (a method, in-place ones
included), ``F`` (``nn.functional``), ``linalg``, ``special`` or ``fft``. Its arguments come
from *templates* (``TEMPLATES``: a name -> a generator of positional and keyword arguments,
e.g. ``"tt"`` is two broadcastable tensors, ``"t_dim_keep"`` a tensor, a dim and keepdim). Which
templates an op takes is derived by probing torch with each template's canonical arguments
(``python -m tests.fuzz --derive`` writes ``signatures.json``) plus the hand-written
``HAND`` table. Op database entries (``tests/opdb``) are fuzzed too, as ``opdb:<entry>``.

A *case* is a plain literal ``(namespace, name, args, kwargs, seed)`` whose tensors are specs
``("T", shape, dtype, fill, layout, grad)``: fill is the kind of values (``u`` uniform, ``x``
with NaN/inf/-0 sprinkled, ``pos``, ``prob``, ``spd`` matrices, ``("idx", n)`` indices),
layout ``c`` contiguous, ``t`` a transposed view or ``s`` a strided slice of a bigger base.
``check_case`` runs it in both libraries and compares: raise/no-raise and the exception's
builtin class family, output structure, dtypes, shapes and values, every leaf's gradient under
a random upstream gradient, and the final values of every input's base and leaf (writes
through views). It returns ``None`` or a ``Mismatch`` whose ``kind`` names the class.
"""
import json
import math
import os
import signal
import warnings
from collections import namedtuple
from pathlib import Path

import numpy as np

import ember

__all__ = ["universe", "NON_OPS", "RANDOM", "TEMPLATES", "HAND", "signatures", "gen_case",
           "check_case", "Mismatch", "derive", "opdb_entries"]

SIG_FILE = Path(__file__).with_name("signatures.json")
Mismatch = namedtuple("Mismatch", "kind detail")

# Public names that are not tensor functions (configuration, I/O, type queries on non-tensors,
# callables taking callables): not ops, so not in the coverage denominator.
NON_OPS = {
    "torch": {
        "are_deterministic_algorithms_enabled", "compile", "from_dlpack", "from_numpy",
        "frombuffer", "get_default_device", "get_default_dtype", "get_float32_matmul_precision",
        "get_num_interop_threads", "get_num_threads", "get_rng_state", "initial_seed",
        "is_deterministic_algorithms_warn_only_enabled", "is_distributed",
        "is_grad_enabled", "is_inference_mode_enabled", "load", "manual_seed", "save", "seed",
        "set_default_device", "set_default_dtype", "set_float32_matmul_precision",
        "set_num_interop_threads", "set_num_threads", "set_printoptions", "set_rng_state",
        "use_deterministic_algorithms", "typename", "can_cast", "promote_types",
        "result_type", "broadcast_shapes", "get_device", "is_tensor",
        # (state, modules, transforms and handles, not tensor ops)
        "GradScaler", "vmap", "to_dlpack", "is_storage", "is_vulkan_available", "autocast",
        "cond", "while_loop", "sym_int", "sym_float", "sym_max", "sym_min", "sym_not",
        "sym_sqrt", "sym_sum", "sym_ite", "compiled_with_cxx11_abi", "get_device_module",
        "from_file", "init_num_threads", "set_flush_denormal", "set_default_tensor_type",
        "set_warn_always", "is_warn_always_enabled", "set_deterministic_debug_mode",
        "get_deterministic_debug_mode", "set_anomaly_enabled", "is_anomaly_enabled",
        "is_anomaly_check_nan_enabled", "autocast_increment_nesting",
        "autocast_decrement_nesting", "clear_autocast_cache", "is_autocast_cache_enabled",
        "set_autocast_cache_enabled", "get_autocast_cpu_dtype", "get_autocast_dtype",
        "get_autocast_gpu_dtype", "is_autocast_cpu_enabled", "is_autocast_enabled",
        "set_autocast_cpu_dtype", "set_autocast_cpu_enabled", "set_autocast_dtype",
        "set_autocast_enabled", "set_autocast_gpu_dtype",
        # (a uint64 result, which ember refuses by design)
        "hash_tensor"},
    "Tensor": {
        "apply_", "map_", "backward", "register_hook", "register_post_accumulate_grad_hook",
        "retain_grad", "data_ptr", "untyped_storage", "storage", "share_memory_", "pin_memory",
        "is_pinned", "cuda", "record_stream", "tolist", "numpy", "cpu", "item", "dim_order",
        "get_device", "is_shared", "element_size", "nbytes", "itemsize", "requires_grad_",
        "detach_", "type", "storage_type", "new_tensor", "is_set_to", "set_", "to",
        "register_hook", "__torch_function__", "as_subclass", "refine_names", "rename",
        "rename_", "align_to", "align_as", "unflatten", "hash_tensor", "module_load",
        "const_data_ptr", "reinforce", "eig", "lstsq", "solve", "symeig"},
    "F": {"Tensor"},
    "linalg": {"LinAlgError"},
    "special": {"Tensor"},
    "fft": set(),
}

# Ops whose values are random or uninitialised: only structure, dtype, shape and raising are
# compared (torch's generator is not ember's, and empty() memory is arbitrary).
RANDOM = {"rand", "rand_like", "randn", "randn_like", "randint", "randint_like", "randperm",
          "bernoulli", "bernoulli_", "multinomial", "normal", "normal_", "poisson", "dropout",
          "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
          "rrelu", "rrelu_", "gumbel_softmax", "fractional_max_pool2d", "fractional_max_pool3d",
          "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices", "empty",
          "empty_like", "empty_strided", "uniform_", "exponential_", "geometric_", "cauchy_",
          "log_normal_", "random_", "new_empty", "new_empty_strided", "resize_", "resize_as_",
          "new", "resize", "resize_as", "empty_permuted", "native_dropout", "svd_lowrank",
          "pca_lowrank", "binomial", "lobpcg"}

# Cases where torch itself is not a usable oracle; the fuzzer skips them (``_torch_quirk``):
# - NaN inputs to these activations: torch's CPU kernels handle whole SIMD blocks (16 float32
#   / 8 float64 elements) in a vectorised loop and the rest element by element, and the two
#   loops disagree at NaN (the gradient is 0 in one and passes through in the other; for
#   softshrink the sign of a zero output too), so torch's answer depends on where the NaN sits.
_SIMD_NAN = {"hardshrink", "softshrink", "hardtanh", "hardtanh_", "elu", "elu_", "selu",
             "selu_", "celu", "celu_", "gelu"}
# - convolutions of inf/NaN: which outputs come out NaN depends on the order torch's GEMM
#   (and its 3-real-multiplication trick for complex inputs) combines the products, e.g.
#   whether an inf ever meets an exact zero weight.
_CONV = {"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
         "conv_transpose3d", "conv_tbc"}
# - 2-D FFTs of an empty batch raise "MKL FFT error" in torch (a backend defect; the transform
#   of nothing is empty), and which outputs of an FFT of inf/NaN come out NaN depends on the
#   FFT library's internal order of operations.
_FFT2 = {"fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2", "fftn", "ifftn", "rfftn",
         "irfftn", "hfftn", "ihfftn"}
# - bessel_j0/j1/y0/y1 near their zeros: torch's float64 results are off by up to ~1e-7
#   (Cephes' polynomial fits); SciPy's are the accurate ones, so values get atol 1e-6 there.
_LOOSE = {"bessel_j0": 1e-6, "bessel_j1": 1e-6, "bessel_y0": 1e-6, "bessel_y1": 1e-6,
          "special_bessel_j0": 1e-6, "special_bessel_j1": 1e-6, "special_bessel_y0": 1e-6,
          "special_bessel_y1": 1e-6}
# - linear algebra on inf/NaN: how NaN spreads through a factorisation is up to the LAPACK
#   build (torch's MKL vs SciPy's OpenBLAS LAPACK), not a defined result; and the signs (phases)
#   of singular vectors and eigenvectors are arbitrary, chosen differently by each LAPACK, so
#   svd/eigh/eig values (and gradients of sign-dependent losses) are not compared.
_LAPACK = {"matrix_power", "pinv", "pinverse", "matrix_norm", "lu", "lu_factor",
           "lu_factor_ex", "qr", "svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals",
           "matrix_exp", "inv", "inv_ex", "det", "slogdet", "logdet",
           "solve", "solve_ex", "lstsq", "cholesky", "cholesky_ex", "inverse"}
_SIGN_FREE = ("svd", "eigh", "eig", "linalg_svd", "linalg_eigh", "linalg_eig")
# - the orthogonal polynomials (Chebyshev, shifted Chebyshev, Laguerre, Legendre) at a NaN x
#   for degree >= 2 return an uninitialised value in torch (6.9e-310, or the previous
#   element's result).
# - torch.tensor() of an empty array keeps strides (0, 0), so torch's view_as_complex (and
#   view_as_real's backward) refuse some empty inputs that torch.zeros(0, 2) accepts; ember's
#   empty tensors are contiguous, as torch.zeros'. (For the same reason stride() of an empty
#   tensor is not compared.)
_EMPTY_VIEWS = {"view_as_complex", "view_as_real", "view_as_complex_copy",
                "view_as_real_copy"}
# - block_diag with an empty 1-D block: torch's forward counts a (0,) block as a (1, 0) row
#   but its backward does not step past it, so later blocks get the wrong rows' gradients.
# - resize_ to a negative size: torch raises but leaves the tensor with that invalid shape
#   (reading it afterwards fails), so its final state cannot be compared.
# - ops whose torch result is complex32 (Tensor.chalf, torch.complex of float16 parts): ember
#   refuses complex32 by design (see _NO_CHALF).
# - batch_norm in eval mode with strided (non-contiguous) running statistics: torch's backward
#   reads them as if contiguous, so its gradient changes from run to run (NaN or garbage).
# - multi_margin_loss / multilabel_margin_loss of an empty batch with mean/sum: torch returns
#   its uninitialised output.
# - batch_norm in eval mode with strided weight or bias (either form): as for the statistics;
#   and torch.batch_norm / native_batch_norm of an empty input kill torch's process (SIGFPE).
# - native_group_norm without a weight but with a bias that requires grad: torch's backward
#   fails with "shape '[0]' is invalid".
# - complex matrix products of inf/NaN through BLAS (mm, mv, addmm, addmv, dot, inner,
#   tensordot, linear, matmul): MKL's complex kernels decide which outputs are NaN by the
#   operands' layout (2,700 random products matched no single formula).
_CBLAS = {"mm", "mv", "addmm", "addmm_", "addmv", "addmv_", "dot", "vdot", "inner", "tensordot",
          "linear", "matmul", "bmm", "baddbmm", "baddbmm_", "addbmm", "addbmm_", "outer", "ger",
          "addr", "addr_", "chain_matmul", "multi_dot", "einsum", "kron", "mm_noncontig",
          "rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell"}
# - composites adding complex products with inf (trapezoid, cumulative_trapezoid, logcumsumexp,
#   x * x, vander): torch's vectorised complex multiply and add give position-dependent
#   results there (0 + (inf - inf j) is NaN at one position and not at the next, and flips
#   with the operand order).
_CPLX_ORDER = {"trapezoid_x", "cumulative_trapezoid_x", "logcumsumexp", "mul_square",
               "linalg_vander", "trapezoid", "cumulative_trapezoid", "vander"}
# - addbmm_ into a tensor of another shape: torch resizes it and the result depends on the
#   uninitialised memory it reads.
# - grid_sample of float16 with NaN coordinates: torch's half fallback casts NaN to an integer
#   index (undefined behaviour) and scatters NaN into arbitrary input positions.
# - pixel_shuffle / pixel_unshuffle of an empty batch: torch's pixel_unshuffle returns the
#   input's shape unchanged, so its own backward fails.
# - embedding_bag with include_last_offset=True on float32 weights: torch's float32 path drops
#   the positions after the last offset from the sum but still divides by their count, and
#   its gradients there read uninitialised memory (float64 takes the right path).
# - native_group_norm with a strided weight or bias: torch reads its storage as contiguous.
# - native_dropout of an empty input: torch returns the input tensor itself (an alias its
#   schema does not declare), so its backward fails on the leaf.
# - matrix_exp of float16/bfloat16: torch's reduced-precision kernel is wrong (exp(0.1 * I)
#   comes out NaN in float16, inf in bfloat16); ember computes it in float32 and rounds.
# - torch's own internal assertion failures (e.g. lstsq on inf/NaN: oneMKL reports illegal
#   parameters and torch ends in "INTERNAL ASSERT FAILED"): torch has no answer to compare.
# torch's internal asserts, and MKL's refusal of an FFT over an empty batch ("Inconsistent
# configuration parameters"), are torch failures on valid input: not compared
_TORCH_BUG = ("INTERNAL ASSERT FAILED", "MKL FFT error")
# ember's refusal of complex32 (NumPy has no complex32; issue 18: "chalf where NumPy can hold
# it, or a clear error"): a case torch runs in ComplexHalf is not compared.
_NO_CHALF = "ember does not support torch.complex32 tensors"


def _repeated_indices(case, specs):
    """Whether the int64 index tensor of a case (its values drawn as ``run_case`` draws them)
    repeats an index within one channel plane."""
    rng = np.random.default_rng(case[4] + 7919)
    arrays = [_values(sp, rng) for sp in specs]
    for sp, a in zip(specs, arrays):
        if sp[2] == "int64" and a.ndim >= 1 and a.size:
            k = int(case[1][-2]) if case[1][-2:-1].isdigit() else 2     # (1d/2d/3d planes)
            planes = a.reshape(-1, int(np.prod(a.shape[-k:])))
            if any(len(np.unique(p)) < p.size for p in planes):
                return True
    return False


def _torch_quirk(case):
    ns, name = case[0], case[1]
    base = name.split(".")[-1]
    specs = []
    if ns != "opdb":
        _collect_specs((case[2], case[3]), specs)
    special = case[2][2] if ns == "opdb" else any(s[3] == "x" for s in specs)
    if "polynomial" in base and any(isinstance(a, float) and a != a for a in case[2]):
        return True     # (torch's polynomials of a NaN number read uninitialised memory)
    if special and (base in _SIMD_NAN or base in _CONV or base in _LAPACK
                    or base.split("_")[0] in _LAPACK or "polynomial" in base):
        return True
    if base in _EMPTY_VIEWS | {"stride"} and any(0 in tuple(s[1]) for s in specs):
        return True
    if base == "block_diag" and any(tuple(s[1]) == (0,) for s in specs):
        return True
    if base in ("multi_margin_loss", "multilabel_margin_loss") and \
            any(0 in tuple(s[1]) for s in specs):
        return True
    if base in ("batch_norm", "native_batch_norm") and (
            any(s[4] != "c" for s in specs[1:5]) or
            (ns == "torch" and specs and 0 in tuple(specs[0][1]))):
        return True
    if base == "native_group_norm" and len(case[2]) > 2 and case[2][1] is None and \
            isinstance(case[2][2], (list, tuple)) and len(case[2][2]) == 6 and \
            case[2][2][0] == "T" and case[2][2][5]:
        return True
    if (base in ("view_as_complex", "view_as_complex_copy") and
            any(s[2] == "float16" for s in specs)) or (
            base == "block_diag" and any(s[2] == "float16" for s in specs) and
            any("complex" in s[2] for s in specs)):
        return True     # (torch's result is complex32)
    if base in ("signbit", "copysign", "copysign_") and any(
            s[2] == "bfloat16" and s[3] == "x" for s in specs):
        return True     # (torch's float32 -> bfloat16 cast makes every NaN 0xFFFF: negative)
    if base == "lstsq" and (any(isinstance(a, (int, float)) and not isinstance(a, bool)
                                and a >= 1 for a in case[2][2:]) or
                            (case[3].get("rcond") or 0) >= 1):
        return True     # (rcond >= 1: MKL's gelsy answers differently from call to call)
    if base == "pdist" and specs and tuple(specs[0][1])[:1] == (0,):
        return True     # (torch's pdist backward of zero rows segfaults)
    if base == "isin" and len(specs) > 1 and specs[1][4] == "t":
        return True     # (torch: "view size is not compatible" for a transposed test_elements)
    if special and base == "convolution":
        return True     # (as _CONV: which outputs are NaN depends on torch's internal path)
    if base == "chalf" or (base == "complex" and any(s[2] == "float16" for s in specs)) or \
            (ns == "opdb" and name.startswith("complex_") and case[2][1] == "float16"):
        return True
    if special and base in _CPLX_ORDER and (
            (ns == "opdb" and "complex" in case[2][1]) or any("complex" in s[2] for s in specs)):
        return True
    if base in ("hardshrink", "softshrink") and any(
            isinstance(a, float) and a != a for a in list(case[2][1:]) + list(case[3].values())):
        return True     # (a NaN lambd: torch's SIMD and scalar loops disagree, as for NaN x)
    if base in ("hardtanh", "hardtanh_") and any(
            isinstance(a, float) and a != a for a in list(case[2][1:]) + list(case[3].values())):
        return True     # (a NaN bound: the same, for the gradient)
    if special and (base in _CBLAS or base.startswith("matmul")) and (
            (ns == "opdb" and "complex" in case[2][1]) or any("complex" in s[2] for s in specs)):
        return True
    if base == "addbmm_" and len(specs) >= 3 and len(specs[1][1]) == 3 and \
            len(specs[2][1]) == 3 and tuple(specs[0][1]) != (specs[1][1][1], specs[2][1][2]):
        return True
    if special and base.startswith("grid_sample") and (
            case[3].get("padding_mode", "zeros") != "zeros" or
            (ns == "torch" and len(case[2]) > 3 and case[2][3] in (1, 2))):
        return True     # (torch segfaults on inf/NaN coordinates with border/reflection)
    if special and base.startswith("grid_sample") and (
            (ns == "opdb" and case[2][1] in ("float16", "bfloat16")) or
            any(s[2] in ("float16", "bfloat16") for s in specs)):
        return True     # (torch's 16-bit kernels wrap a NaN/inf index to pixel 0)
    if base in ("pixel_shuffle", "pixel_unshuffle") and specs and 0 in tuple(specs[0][1]):
        return True
    if base == "embedding_bag" and case[3].get("include_last_offset") and \
            any(s[2] != "float64" for s in specs[1:2]):
        return True
    if base == "native_group_norm" and any(
            isinstance(a, (list, tuple)) and len(a) == 6 and a[0] == "T" and a[4] != "c"
            for a in case[2][1:3]):
        return True
    if base == "native_dropout" and specs and 0 in tuple(specs[0][1]):
        return True
    if base.startswith("matrix_exp") and ("float16" in (case[2][1] if ns == "opdb" else "") or
                                          any(s[2] in ("float16", "bfloat16") for s in specs)):
        return True
    if base == "resize_" and any(a < 0 for x in case[2][1:]
                                 for a in (x if isinstance(x, (list, tuple)) else [x])
                                 if isinstance(a, int)):
        return True     # (torch's resize_ to a negative size corrupts the tensor's shape)
    if base.startswith("index_reduce") and not case[3].get("include_self", True) and \
            any(s[2] == "int32" for s in specs):
        return True     # (torch's backward refuses the int32 index its forward took)
    if base.startswith("max_unpool") and _repeated_indices(case, specs):
        return True     # (torch's unpool of repeated indices keeps an arbitrary one of them)
    fft = base[4:] if base.startswith("fft_") else base if ns == "fft" else None
    if fft is not None:
        if special:
            return True
        if fft in _FFT2 and any(0 in tuple(s[1]) for s in specs):
            return True
    return False


_NS = {"torch": lambda L: L, "Tensor": None, "F": lambda L: L.nn.functional,
       "linalg": lambda L: L.linalg, "special": lambda L: L.special, "fft": lambda L: L.fft}
def universe():
    """Every public op: ``[(namespace, name)]`` with a torch counterpart, less ``NON_OPS``."""
    import inspect

    import torch
    out = []
    for ns in ("torch", "F", "linalg", "special", "fft"):
        em, tm = _NS[ns](ember), _NS[ns](torch)
        for n in sorted(dir(em)):
            if n.startswith("_") or n in NON_OPS[ns] or not hasattr(tm, n):
                continue
            f = getattr(em, n)
            if callable(f) and not inspect.isclass(f) and not inspect.ismodule(f):
                out.append((ns, n))
    from ember.ops import _TENSOR_METHODS
    t = ember.zeros(2, 2)
    names = {n for n in dir(ember.Tensor) if not n.startswith("_")} | set(_TENSOR_METHODS)
    for n in sorted(names):
        if n in NON_OPS["Tensor"] or not callable(getattr(torch.Tensor, n, None)):
            continue
        try:
            if callable(getattr(t, n)):
                out.append(("Tensor", n))
        except Exception:  # noqa: BLE001  (a property raising on this tensor: not a method)
            continue
    return out


_DT_MAIN = ["float32"] * 6 + ["float64"] * 6 + ["int64"] * 2 + ["bool", "float16", "complex64",
                                                                  "complex128", "int32",
                                                                  "uint8", "bfloat16"]
_EW_SHAPES = [(), (0,), (3,), (2, 3), (1, 3), (2, 1, 3), (3, 0), (2, 2, 2), (4,)]


def _is_float(dt):
    return dt.startswith(("float", "complex", "bfloat"))


class Gen:
    """Argument drawing for one case; ``probe=True`` gives canonical, tame arguments."""

    def __init__(self, seed, probe=False, dtype=None):
        self.r = np.random.default_rng(seed)
        self.probe = probe
        self.tame = False
        self.dt = dtype or ("float64" if probe else _DT_MAIN[self.r.integers(len(_DT_MAIN))])

    def chance(self, p):
        return (not self.probe) and self.r.random() < p

    def pick(self, seq, canonical=0):
        return seq[canonical] if self.probe else seq[self.r.integers(len(seq))]

    def shape(self):
        return (3, 4) if self.probe else self.pick(_EW_SHAPES)

    def dtype(self):
        """The case's main dtype, sometimes another one (type promotion)."""
        return self.pick(_DT_MAIN) if self.chance(0.15) else self.dt

    def tensor(self, shape, fill="u", dtype=None, grad=None, layout=None):
        dt = dtype or self.dtype()
        if fill in ("u", "pos") and not self.tame and self.chance(0.12):
            fill = "x"
        if layout is None:
            options = ["c", "c", "c"] + (["s"] if len(shape) else []) + \
                (["t"] if len(shape) >= 2 else [])
            layout = self.pick(options)
        if grad is None:
            grad = _is_float(dt) and not self.probe and self.r.random() < 0.7
        return ("T", tuple(int(d) for d in shape), dt, fill, layout, bool(grad))

    def ew(self, fill="u"):
        return self.tensor(self.shape(), fill)

    def broadcast_like(self, shape):
        """A shape broadcastable with ``shape``."""
        if self.probe or not shape:
            return shape
        drop = self.r.integers(0, len(shape) + 1)
        return tuple(d if self.r.random() < 0.7 else 1 for d in shape[drop:])

    def dim(self, nd):
        if self.chance(0.04):
            return nd + 1                                    # out of range: both must raise
        if nd == 0:
            return self.pick([0, -1])
        return (nd - 1) if self.probe else int(self.r.integers(-nd, nd))

    def scalar(self):
        if self.probe:
            return 0.5
        special = [] if self.tame else [float("nan"), float("inf")]
        return self.pick([0.5, -1.25, 2, 0, True, 3, -2, 1e-3] + special)

    def idx(self, shape, hi, dtype=None):
        """An index tensor of values in [0, hi): int64, sometimes int32 (which torch takes for
        some ops and refuses for others)."""
        if dtype is None:
            dtype = "int32" if self.chance(0.15) else "int64"
        return ("T", tuple(shape), dtype, ("idx", int(hi)), "c", False)

    def mat(self, fill="spd", square=True, rows=None, cols=None):
        n = 3 if self.probe else self.pick([0, 1, 2, 3, 3])
        m = n if square else (rows if rows is not None else (4 if self.probe else
                                                             self.pick([1, 2, 3, 4])))
        k = cols if cols is not None else n
        batch = () if self.probe or self.r.random() < 0.6 else self.pick([(2,), (0,), (1, 2)])
        dt = self.dtype()
        if not _is_float(dt) and self.r.random() < 0.7:
            dt = "float64"
        return self.tensor(batch + (m, k), fill if square else "u", dtype=dt)


def _t(g):
    return [g.ew()], {}


def _t_pos(g):
    return [g.ew("pos")], {}


def _t_dim(g):
    a = g.ew()
    return [a, g.dim(len(a[1]))], {}


def _t_dim_keep(g):
    a = g.ew()
    return [a, g.dim(len(a[1]))], {"keepdim": bool(g.chance(0.5))}


def _t_int(g):
    return [g.ew(), int(g.pick([1, 2, 0, -1, 3]))], {}


def _t_int_dim(g):
    a = g.ew()
    return [a, int(g.pick([1, 2, 0, 3])), g.dim(len(a[1]))], {}


def _tt(g):
    s = g.shape()
    a, b = g.tensor(s), g.tensor(g.broadcast_like(s))
    return ([b, a] if g.chance(0.3) else [a, b]), {}


def _ts(g):
    return [g.ew(), g.scalar()], {}


def _st(g):
    return [g.scalar(), g.ew()], {}


def _ttt(g):
    s = g.shape()
    return [g.tensor(s), g.tensor(g.broadcast_like(s)), g.tensor(g.broadcast_like(s))], {}


def _tts(g):
    s = g.shape()
    return [g.tensor(s), g.tensor(g.broadcast_like(s)), g.scalar()], {}


def _tss(g):
    lo = g.pick([-0.5, -1, 0])
    return [g.ew(), lo, lo + g.pick([1.0, 0.5, 2])], {}


def _list(g):
    s = g.shape()
    return [("L", [g.tensor(s), g.tensor(s)])], {}


def _list_dim(g):
    s = (3, 4) if g.probe else g.pick([(2, 3), (3,), (2, 0), (1, 2, 2)])
    return [("L", [g.tensor(s), g.tensor(s)]), g.dim(len(s))], {}


def _mat(g):
    return [g.mat()], {}


def _mat_u(g):
    return [g.mat("u")], {}


def _mat_rect(g):
    return [g.mat("u", square=False)], {}


def _mat_mat(g):
    a = g.mat()
    n = a[1][-1]
    k = g.pick([2, 1, 3])
    return [a, g.tensor(a[1][:-2] + (n, k), dtype=a[2])], {}


def _mm(g):
    m, k, n = (3, 4, 2) if g.probe else (g.pick([1, 2, 3, 0]), g.pick([1, 3, 0]), g.pick([2, 1]))
    dt = g.dtype()
    return [g.tensor((m, k), dtype=dt), g.tensor((k, n), dtype=g.dtype())], {}


def _bmm(g):
    b, m, k, n = (2, 3, 4, 2) if g.probe else (g.pick([2, 1, 0]), g.pick([1, 3]),
                                               g.pick([1, 3, 0]), g.pick([2, 1]))
    return [g.tensor((b, m, k)), g.tensor((b, k, n))], {}


def _mv(g):
    m, k = (3, 4) if g.probe else (g.pick([1, 3, 0]), g.pick([1, 3, 0]))
    return [g.tensor((m, k)), g.tensor((k,))], {}


def _vv(g):
    n = 3 if g.probe else g.pick([0, 1, 3])
    return [g.tensor((n,)), g.tensor((n,))], {}


def _c_mm(g):
    (a, b), _ = _mm(g)
    return [g.tensor(g.broadcast_like((a[1][0], b[1][1]))), a, b], \
        ({"beta": g.pick([0.5, 0, 1]), "alpha": g.pick([1.5, 1])} if g.chance(0.4) else {})


def _c_mv(g):
    (a, v), _ = _mv(g)
    return [g.tensor(g.broadcast_like((a[1][0],))), a, v], {}


def _c_vv(g):
    (a, b), _ = _vv(g)
    m = 2 if g.probe else g.pick([2, 1, 0])
    return [g.tensor((m, b[1][0])), g.tensor((m,)), b], {}


def _c_bmm(g):
    (a, b), _ = _bmm(g)
    return [g.tensor(g.broadcast_like((a[1][0], a[1][1], b[1][2]))), a, b], {}


def _c_bmm2(g):
    (a, b), _ = _bmm(g)
    return [g.tensor(g.broadcast_like((a[1][1], b[1][2]))), a, b], {}


def _t_shape(g):
    a = g.ew()
    s = a[1]
    n = int(np.prod(s))
    options = [(-1,), (n,), tuple(reversed(s)), (1,) + s, (n, 1) if n else (0, 2)]
    return [a, g.pick(options)], {}


def _t_shape_star(g):
    (a, s), _ = _t_shape(g)
    return [a, *s], {}


def _t_perm(g):
    a = g.ew()
    nd = len(a[1])
    p = list(range(nd)) if g.probe else list(g.r.permutation(nd))
    if nd and g.chance(0.3):
        p[0] -= nd
    return [a, tuple(int(i) for i in p)], {}


def _t_perm_star(g):
    (a, p), _ = _t_perm(g)
    return [a, *p], {}


def _t_dim_dim(g):
    a = g.ew()
    nd = len(a[1])
    return [a, g.dim(nd), g.dim(nd)], {}


def _t_index_select(g):
    a = g.ew()
    nd = len(a[1])
    d = g.dim(nd)
    size = a[1][d] if -nd <= d < nd else 1
    size = size if nd else 1
    return [a, d, g.idx((g.pick([2, 0, 3]),), max(size, 1) if size else 0)], {}


def _t_gather(g):
    a = g.ew()
    nd = len(a[1])
    d = g.dim(nd)
    if not (-nd <= d < max(nd, 1)):
        return [a, d, g.idx(a[1], 1)], {}
    shape = list(a[1]) if nd else []
    size = shape[d] if nd else 1
    if nd:
        shape[d] = g.pick([2, 1, 0])
    return [a, d, g.idx(tuple(shape), size)], {}


def _t_scatter(g):
    (a, d, i), _ = _t_gather(g)
    return [a, d, i, g.tensor(i[1], dtype=a[2])], {}


def _t_scatter_s(g):
    (a, d, i), _ = _t_gather(g)
    return [a, d, i, g.scalar()], {}


def _t_index_src(g):
    (a, d, i), _ = _t_index_select(g)
    nd = len(a[1])
    shape = list(a[1])
    if nd and -nd <= d < nd:
        shape[d] = i[1][0]
    return [a, d, i, g.tensor(tuple(shape), dtype=a[2])], {}


def _t_mask(g):
    a = g.ew()
    return [a, g.tensor(g.broadcast_like(a[1]), dtype="bool", grad=False)], {}


def _t_mask_s(g):
    (a, m), _ = _t_mask(g)
    return [a, m, g.scalar()], {}


def _t_mask_t(g):
    (a, m), _ = _t_mask(g)
    return [a, m, g.tensor(a[1], dtype=a[2])], {}


def _t_t_dim(g):
    (a, b), _ = _tt(g)
    return [a, b, g.dim(max(len(a[1]), len(b[1])))], {}


def _ints(g):
    return [g.pick([3, 0, 1, 5])], {}


def _ints2(g):
    return [g.pick([2, 0, 1]), g.pick([3, 0, 1])], {}


def _shape_tuple(g):
    return [g.pick([(2, 3), (0,), (), (1, 2, 2)])], {}


def _range(g):
    return [g.pick([0, -2, 1.5]), g.pick([5, 3, 0.5])], {}


def _range3(g):
    return [g.pick([0, -2, 1.5]), g.pick([5, 3, 0.5]), g.pick([3, 1, 0, 2])], {}


def _t_like_s(g):
    return [g.ew(), g.scalar()], {}


def _sorted_t(g):
    return [g.tensor((4,) if g.probe else g.pick([(4,), (0,), (2, 3)]), "u"), g.ew()], {}


def _nn_conv1d(g):
    n, c, L, o, k = (2, 3, 5, 4, 3) if g.probe else (g.pick([1, 2, 0]), g.pick([1, 3]),
                                                      g.pick([5, 3, 4]), g.pick([2, 1]),
                                                      g.pick([1, 2, 3]))
    kw = {"stride": g.pick([1, 2]), "padding": g.pick([0, 1])} if g.chance(0.5) else {}
    return [g.tensor((n, c, L)), g.tensor((o, c, k), dtype=None)], kw


def _nn_conv2d(g):
    n, c, h, o, k = (2, 3, 5, 4, 3) if g.probe else (g.pick([1, 2, 0]), g.pick([1, 3]),
                                                      g.pick([5, 3, 4]), g.pick([2, 1]),
                                                      g.pick([1, 2, 3]))
    kw = {"stride": g.pick([1, 2]), "padding": g.pick([0, 1])} if g.chance(0.5) else {}
    return [g.tensor((n, c, h, h + 1)), g.tensor((o, c, k, k))], kw


def _nn_convt1d(g):
    (x, w), kw = _nn_conv1d(g)
    return [x, g.tensor((x[1][1], w[1][0], w[1][2]))], kw


def _nn_convt2d(g):
    (x, w), kw = _nn_conv2d(g)
    return [x, g.tensor((x[1][1], w[1][0]) + w[1][2:])], kw


def _nn_pool1d(g):
    return [g.tensor((2, 3, 6) if g.probe else g.pick([(2, 3, 6), (1, 5), (2, 2, 3)])),
            g.pick([2, 3, 1])], ({"stride": g.pick([1, 2])} if g.chance(0.4) else {})


def _nn_pool2d(g):
    return [g.tensor((2, 3, 6, 5) if g.probe else g.pick([(2, 3, 6, 5), (1, 4, 4),
                                                         (2, 1, 3, 3)])),
            g.pick([2, 3, 1])], ({"stride": g.pick([1, 2])} if g.chance(0.4) else {})


def _nn_pool3d(g):
    return [g.tensor((1, 2, 4, 4, 3)), g.pick([2, 1])], {}


def _nn_class(g):
    n, c = (4, 3) if g.probe else (g.pick([4, 1, 0]), g.pick([3, 1]))
    return [g.tensor((n, c)), g.idx((n,), c)], {}


def _nn_same(g):
    s = g.shape()
    return [g.tensor(s, "prob"), g.tensor(s, "prob")], {}


def _nn_norm(g):
    s = (2, 3, 4) if g.probe else g.pick([(2, 3, 4), (3, 4), (2, 4)])
    return [g.tensor(s), s[-1:]], {}


def _nn_batch(g):
    s = (2, 3, 4) if g.probe else g.pick([(2, 3, 4), (4, 3), (2, 3)])
    c = s[1]
    return [g.tensor(s), g.tensor((c,), grad=False), g.tensor((c,), "pos", grad=False)], {}


def _nn_group(g):
    s = (2, 4, 3) if g.probe else g.pick([(2, 4, 3), (1, 4), (3, 2, 2)])
    return [g.tensor(s), g.pick([2, 1, 4])], {}


def _nn_linear(g):
    n, i, o = (3, 4, 2) if g.probe else (g.pick([3, 0, 1]), g.pick([4, 1]), g.pick([2, 1]))
    args = [g.tensor((n, i)), g.tensor((o, i))]
    if g.chance(0.5):
        args.append(g.tensor((o,)))
    return args, {}


def _nn_embed(g):
    n = 5
    return [g.idx((3,) if g.probe else g.pick([(3,), (2, 2), (0,)]), n),
            g.tensor((n, 3), dtype=g.pick(["float64", "float32"]))], {}


def _nn_onehot(g):
    return [g.idx((3,) if g.probe else g.pick([(3,), (2, 2), (0,)]), 4)], {}


def _nn_pad(g):
    a = g.ew() if not g.probe else g.tensor((2, 3))
    return [a, g.pick([(1, 1), (0, 2), (1,), (1, 0, 2, 1), (-1, 1)])], {}


def _nn_interp(g):
    x = g.tensor((1, 2, 4) if g.probe else g.pick([(1, 2, 4), (2, 1, 3, 3)]))
    return [x], {"scale_factor": g.pick([2, 1.5, 0.5])}


def _t_n_dim_norm(g):
    a = g.ew()
    kw = {}
    if g.chance(0.5):
        kw["norm"] = g.pick(["ortho", "forward", "backward"])
    if a[1] and g.chance(0.5):
        kw["dim"] = g.dim(len(a[1]))
    if g.chance(0.3):
        kw["n"] = g.pick([1, 2, 5, 0])
    return [a], kw


def _t_p(g):
    return [g.ew(), g.pick([2, 1, float("inf"), 0, 3, -1, "fro", "nuc"])], {}


def _t_narrow(g):
    a = g.ew()
    nd = len(a[1])
    d = g.dim(nd)
    return [a, d, g.pick([0, 1]), g.pick([1, 0, 2])], {}


def _t_take(g):
    a = g.ew()
    n = int(np.prod(a[1]))
    return [a, g.idx((g.pick([3, 0, 1]),), n)], {}


def _t_index_fill(g):
    (a, d, i), _ = _t_index_select(g)
    return [a, d, i, g.scalar()], {}


def _t_index_put(g):
    a = g.ew()
    n = a[1][0] if a[1] else 0
    return [a, ("TUP", [g.idx((2,), n)]), g.tensor((2,) + a[1][1:] if a[1] else (), dtype=a[2])
            ], {"accumulate": bool(g.chance(0.5))}


def _t_put(g):
    a = g.ew()
    n = int(np.prod(a[1]))
    return [a, g.idx((2,), n), g.tensor((2,), dtype=a[2])], {}


def _t_renorm(g):
    a = g.ew()
    return [a, g.pick([2, 1]), g.dim(len(a[1])), g.pick([1.0, 0.5])], {}


def _mat_int(g):
    return [g.mat("u"), g.pick([2, 0, 1, 3, -1])], {}


def _t_bshape(g):
    a = g.ew()
    s = a[1]
    return [a, g.pick([(2,) + s, tuple(2 if d == 1 else d for d in s), (-1,) * len(s)])], {}


def _int_t(g):
    return [g.pick([1, 0, 2]), g.ew()], {}


def _vec(g):
    return [g.tensor((g.pick([3, 0, 1]),))], {}


def _complex_t(g):
    return [g.tensor(g.shape(), dtype=g.pick(["complex64", "complex128"]))], {}


def _t_pair(g):
    return [g.tensor(g.pick([(3, 2), (2, 2), (0, 2), (2,)]))], {}


def _shape_s(g):
    return [g.pick([(2, 3), (0,), ()]), g.scalar()], {}


def _n_only(g):
    return [g.pick([4, 5, 1, 0])], {}


def _b_mat(g):
    a = g.mat()
    return [g.tensor(a[1][:-2] + (a[1][-1], g.pick([2, 1])), dtype=a[2]), a], {}


def _t_single(g):
    return [g.tensor(g.pick([(), (1,), (1, 1), (2,), (0,)]))], {}


def _t_unflatten(g):
    a = g.tensor(g.pick([(6,), (2, 6), (6, 1)]))
    return [a, g.pick([0, -1, 1]), g.pick([(2, 3), (-1, 2), (3, 2)])], {}


def _t_sizes(g):
    a = g.tensor(g.pick([(5,), (5, 2)]))
    return [a, g.pick([[2, 3], [1, 4], [5, 0], [2, 2]])], {}


def _mats(g):
    n = 3 if g.probe else g.pick([1, 2, 3])
    return [("L", [g.tensor((2, n)), g.tensor((n, 3)), g.tensor((3, 2))])], {}


def _mat_tri(g):
    a = g.mat()
    return [a, g.tensor(a[1][:-1] + (g.pick([2, 1]),), dtype=a[2])], \
        {"upper": bool(g.chance(0.5))}


TEMPLATES = {
    "t_narrow": _t_narrow, "t_take": _t_take, "t_index_fill": _t_index_fill,
    "t_index_put": _t_index_put, "t_put": _t_put, "t_renorm": _t_renorm, "mat_int": _mat_int,
    "t_bshape": _t_bshape, "int_t": _int_t, "vec": _vec, "complex_t": _complex_t,
    "t_pair": _t_pair, "shape_s": _shape_s, "n_only": _n_only, "b_mat": _b_mat,
    "t_single": _t_single, "t_unflatten": _t_unflatten, "t_sizes": _t_sizes, "mats": _mats,
    "mat_tri": _mat_tri,
    "t": _t, "t_pos": _t_pos, "t_dim": _t_dim, "t_dim_keep": _t_dim_keep, "t_int": _t_int,
    "t_int_dim": _t_int_dim, "tt": _tt, "ts": _ts, "st": _st, "ttt": _ttt, "tts": _tts,
    "tss": _tss, "list": _list, "list_dim": _list_dim, "mat": _mat, "mat_u": _mat_u,
    "mat_rect": _mat_rect, "mat_mat": _mat_mat, "mm": _mm, "bmm": _bmm, "mv": _mv, "vv": _vv,
    "c_mm": _c_mm, "c_mv": _c_mv, "c_vv": _c_vv, "c_bmm": _c_bmm, "c_bmm2": _c_bmm2,
    "t_shape": _t_shape, "t_shape_star": _t_shape_star, "t_perm": _t_perm,
    "t_perm_star": _t_perm_star, "t_dim_dim": _t_dim_dim, "t_index_select": _t_index_select,
    "t_gather": _t_gather, "t_scatter": _t_scatter, "t_scatter_s": _t_scatter_s,
    "t_index_src": _t_index_src, "t_mask": _t_mask, "t_mask_s": _t_mask_s,
    "t_mask_t": _t_mask_t, "t_t_dim": _t_t_dim, "ints": _ints, "ints2": _ints2,
    "shape_tuple": _shape_tuple, "range": _range, "range3": _range3, "sorted_t": _sorted_t,
    "nn_conv1d": _nn_conv1d, "nn_conv2d": _nn_conv2d, "nn_convt1d": _nn_convt1d,
    "nn_convt2d": _nn_convt2d, "nn_pool1d": _nn_pool1d, "nn_pool2d": _nn_pool2d,
    "nn_pool3d": _nn_pool3d, "nn_class": _nn_class, "nn_same": _nn_same, "nn_norm": _nn_norm,
    "nn_batch": _nn_batch, "nn_group": _nn_group, "nn_linear": _nn_linear,
    "nn_embed": _nn_embed, "nn_onehot": _nn_onehot, "nn_pad": _nn_pad, "nn_interp": _nn_interp,
    "t_n_dim_norm": _t_n_dim_norm, "t_p": _t_p,
}
# Templates probed for every op (the nn_* ones only in F, the creation ones only in torch).
_GENERIC = ["t", "t_dim_keep", "t_dim", "tt", "ts", "st", "ttt", "tss", "t_int", "t_int_dim",
            "list", "list_dim", "mat", "mm", "bmm", "mv", "vv", "c_mm", "c_mv", "c_vv", "c_bmm",
            "c_bmm2", "mat_mat", "mat_rect", "t_shape", "t_shape_star", "t_perm",
            "t_perm_star", "t_dim_dim", "t_index_select", "t_gather", "t_scatter",
            "t_scatter_s", "t_index_src", "t_mask", "t_mask_s", "t_mask_t", "t_t_dim",
            "sorted_t", "t_p", "t_n_dim_norm", "t_narrow", "t_take", "t_index_fill",
            "t_index_put", "t_put", "t_renorm", "mat_int", "t_bshape", "int_t", "vec",
            "complex_t", "t_pair", "b_mat", "t_single", "t_unflatten", "t_sizes", "mats",
            "mat_tri"]
_CREATION = ["ints", "ints2", "shape_tuple", "range", "range3", "shape_s", "n_only"]
_NN = [k for k in TEMPLATES if k.startswith("nn_")]

# Hand-written templates (probing misses them, or they need particular values).
HAND = {
    ("torch", "log"): ["t_pos", "t"], ("torch", "sqrt"): ["t_pos", "t"],
    ("torch", "cholesky"): ["mat"], ("linalg", "cholesky"): ["mat"],
    ("torch", "where"): ["ttt", "t"], ("torch", "polar"): ["tt"], ("torch", "complex"): ["tt"],
    ("F", "binary_cross_entropy"): ["nn_same"], ("torch", "conv1d"): ["nn_conv1d"],
    ("torch", "conv2d"): ["nn_conv2d"], ("torch", "conv_transpose1d"): ["nn_convt1d"],
    ("torch", "conv_transpose2d"): ["nn_convt2d"], ("torch", "max_pool2d"): ["nn_pool2d"],
    ("torch", "layer_norm"): ["nn_norm"], ("torch", "view_as_real"): ["complex_t"],
}
_MAX_TEMPLATES = 4


def _load_template_files():
    """Merge ``tests/fuzz/tpl_*.py`` (each defines ``TEMPLATES`` and ``HAND``) into ours."""
    import importlib
    pkg = __name__.rpartition(".")[0]
    for f in sorted(Path(__file__).parent.glob("tpl_*.py")):
        mod = importlib.import_module(f"{pkg}.{f.stem}" if pkg else f.stem)
        TEMPLATES.update(mod.TEMPLATES)
        HAND.update(mod.HAND)


_load_template_files()


def derive(write=True):
    """Probe torch with every template's canonical arguments; ``{"ns:name": [templates]}``."""
    found = {}
    for ns, name in universe():
        cands = list(_GENERIC)
        if ns == "F":
            cands = _NN + cands
        if ns == "torch" or name.startswith("new_"):
            cands += _CREATION
        ok = []
        for dt in ("float64", "int64"):
            for tpl in cands:
                args, kwargs = TEMPLATES[tpl](Gen(0, probe=True, dtype=dt))
                case = (ns, name, args, kwargs, 0)
                res = run_case(_torch(), case, values=False)
                if res[0] == "ok":
                    ok.append(tpl if dt == "float64" else tpl + "@int64")
                if len(ok) >= _MAX_TEMPLATES:
                    break
            if ok:
                break
        found["%s:%s" % (ns, name)] = ok
    if write:
        SIG_FILE.write_text(json.dumps(found, indent=0, sort_keys=True) + "\n")
    return found


_SIGS = []


def signatures():
    """``{(ns, name): [templates]}``: derived (``signatures.json``) merged with ``HAND``."""
    if _SIGS:
        return _SIGS[0]
    raw = json.loads(SIG_FILE.read_text()) if SIG_FILE.exists() else {}
    sigs = {tuple(k.split(":", 1)): v for k, v in raw.items()}
    sigs.update(HAND)
    _SIGS.append(sigs)
    return sigs


def opdb_entries():
    """The op database's entries by name (fuzzed with mutated dtypes, layouts and values)."""
    try:
        from opdb import all_ops
    except ImportError:
        return {}
    return {op.name: op for op in all_ops()}


def gen_case(op, seed):
    """A random case for ``op`` (``(ns, name)``; ``("opdb", entry)`` for op database ones).
    ``EMBER_FUZZ_DTYPE`` (e.g. ``bfloat16``) fixes every case's main dtype."""
    g = Gen(seed, dtype=os.environ.get("EMBER_FUZZ_DTYPE") or None)
    ns, name = op
    if ns == "opdb":
        entry = opdb_entries()[name]
        dt = g.pick(["float32", "float64", "float64", "float16", "complex128", "int64", "bool"])
        return ("opdb", name, [g.pick([0, 0, 1, 2, 3]), dt, bool(g.chance(0.2)) and not g.tame,
                               g.pick(["c", "c", "t"])], {}, seed) if entry else None
    tpls = signatures().get(op) or []
    if not tpls:
        return None
    tpl = g.pick(tpls)
    if "@" in tpl:                                          # an integer-only op
        tpl, dt = tpl.split("@")
        g.dt = dt if g.r.random() < 0.7 else g.dt
    args, kwargs = TEMPLATES[tpl](g)
    return (ns, name, args, kwargs, seed)


def _torch():
    import torch
    return torch


def _values(spec, rng):
    return np.asarray(_raw_values(spec, rng))     # 0-d draws come back as numpy scalars


def _raw_values(spec, rng):
    _, shape, dt, fill, layout, grad = spec
    if isinstance(fill, (list, tuple)) and fill[0] == "idx":
        hi = fill[1]
        return rng.integers(0, max(hi, 1), size=shape).astype(dt) if hi else \
            np.zeros(shape, dt)
    if dt == "bool":
        return rng.random(shape) < 0.5
    if dt.startswith("int") or dt == "uint8":
        lo, hi = {"pos": (1, 4), "prob": (0, 2)}.get(fill, (-3, 4))
        if dt == "uint8":
            lo = max(lo, 0) if fill != "u" else 0
            hi = 7 if fill == "u" else hi
        return rng.integers(lo, hi, size=shape).astype(dt)
    lo, hi = {"pos": (0.1, 2.0), "prob": (0.05, 0.95)}.get(fill, (-2.0, 2.0))
    a = rng.uniform(lo, hi, size=shape)
    if dt.startswith("complex"):
        a = a + 1j * rng.uniform(lo, hi, size=shape)
    if fill == "spd" and len(shape) >= 2 and shape[-1] == shape[-2]:
        a = a @ np.swapaxes(a, -1, -2).conj() + shape[-1] * np.eye(shape[-1])
    if fill == "x":
        special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])
        mask = rng.random(shape) < 0.3
        a = np.where(mask, special[rng.integers(0, 5, size=shape)], a)
    if dt == "bfloat16":        # float32 values that bfloat16 holds exactly (NumPy has none)
        return _round_bf16(a)
    return a.astype(dt)


def _round_bf16(a):
    import ml_dtypes
    return np.asarray(a, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def _make(L, arr, dt):
    """A tensor of ``arr`` in library ``L``; ``bfloat16`` specs are float32 arrays rounded."""
    t = L.tensor(arr)
    return t.to(L.bfloat16) if dt == "bfloat16" else t


def _host(t):
    """A tensor's values as a NumPy array (bfloat16 through float32: torch has no NumPy
    bfloat16, ember's is ml_dtypes')."""
    if str(t.dtype) == "torch.bfloat16":
        t = t.float()
    elif str(t.dtype) == "torch.complex32":     # (NumPy has no complex32; compared widened)
        t = t.to(_torch().complex64)
    return t.numpy()


def _collect_specs(obj, out):
    if isinstance(obj, tuple) and obj and obj[0] == "T":
        out.append(obj)
    elif isinstance(obj, tuple) and obj and obj[0] in ("L", "TUP"):
        for x in obj[1]:
            _collect_specs(x, out)
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            _collect_specs(x, out)
    elif isinstance(obj, dict):
        for x in obj.values():
            _collect_specs(x, out)


class _Build:
    """Makes each library's tensors from the specs; remembers leaves and bases to compare."""

    def __init__(self, L, arrays, inplace_self):
        self.L, self.arrays, self.k = L, arrays, 0
        self.inplace_self = inplace_self
        self.leaves, self.bases, self.before = [], [], []

    def make(self, obj, top=False):
        if isinstance(obj, tuple) and obj and obj[0] == "T":
            return self.tensor(obj, top)
        if isinstance(obj, tuple) and obj and obj[0] == "L":
            return [self.make(x) for x in obj[1]]
        if isinstance(obj, tuple) and obj and obj[0] == "TUP":
            return tuple(self.make(x) for x in obj[1])
        if isinstance(obj, list):
            return [self.make(x, top and i == 0) for i, x in enumerate(obj)]
        if isinstance(obj, dict):
            return {k: self.make(v) for k, v in obj.items()}
        return obj

    def tensor(self, spec, top):
        _, shape, dt, fill, layout, grad = spec
        a = self.arrays[self.k]
        self.k += 1
        L = self.L
        if layout == "t" and len(shape) >= 2:
            base_arr = np.ascontiguousarray(np.swapaxes(a, -1, -2))
        elif layout == "s" and len(shape) >= 1:
            base_arr = np.concatenate([a, a[..., ::-1]], axis=-1)
            base_arr[..., ::2] = a
            base_arr[..., 1::2] = a[..., ::-1]
        else:
            base_arr = a
        leaf = _make(L, base_arr.copy(), dt)
        if grad:
            leaf.requires_grad_()
            self.leaves.append(leaf)
        base = leaf.clone() if (grad and top and self.inplace_self) else leaf
        self.bases.append(base)
        self.before.append(base_arr.copy())
        if layout == "t" and len(shape) >= 2:
            return base.transpose(-1, -2)
        if layout == "s" and len(shape) >= 1:
            return base[..., ::2]
        return base


def _family(e):
    for c in type(e).__mro__:
        if c.__module__ == "builtins":
            return c.__name__
    return "Exception"


def _norm_after_error(t):
    """``_norm`` of an input after a call that raised; torch's ``resize_`` to a negative size
    leaves a tensor whose shape cannot be read back (compared as broken)."""
    try:
        return _norm(t)
    except ValueError:
        return ("O", "broken")


def _unchanged(b):
    """Whether every input tensor still holds its values from before the call."""
    try:
        return all(tuple(t.shape) == a.shape and np.array_equal(
            np.asarray(_host(t.detach())), a, equal_nan=a.dtype.kind in "fc")
            for t, a in zip(b.bases, b.before))
    except (TypeError, ValueError, RuntimeError):
        return False


def _norm(x):
    """A comparable form of an op's result (tensors to numpy; sequences recursively)."""
    if hasattr(x, "grad_fn") and hasattr(x, "shape") and hasattr(x, "dtype"):
        t = x.detach()
        if hasattr(t, "resolve_conj"):
            t = t.resolve_conj()
        if hasattr(t, "resolve_neg"):
            t = t.resolve_neg()
        try:
            arr = np.array(_host(t), copy=True)
        except RuntimeError:                                # torch's ZeroTensor gradients
            arr = np.array(t.new_zeros(t.shape).numpy(), copy=True)
        return ("T", str(x.dtype).split(".")[-1], tuple(int(d) for d in x.shape), arr)
    if isinstance(x, np.ndarray):
        return ("N", str(x.dtype), x.shape, x.copy())
    if isinstance(x, (list, tuple)) and not isinstance(x, str):
        if type(x).__name__ in ("Size",):
            return ("S", tuple(int(d) for d in x))
        return ("Q", [_norm(v) for v in x])
    if isinstance(x, (bool, int, float, complex, str)) or x is None:
        return ("V", type(x).__name__, x)
    if "dtype" in type(x).__name__:
        return ("D", str(x).split(".")[-1])
    return ("O", type(x).__name__)


def _tensors_of(x):
    if hasattr(x, "grad_fn") and hasattr(x, "shape"):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _tensors_of(v)]
    return []


def _call(L, case, built):
    ns, name, args, kwargs, seed = case
    if ns == "opdb":
        entry = opdb_entries()[name]
        return entry.fn(L, *args)
    if ns == "Tensor":
        return getattr(args[0], name)(*args[1:], **kwargs)
    return getattr(_NS[ns](L), name)(*args, **kwargs)


def _opdb_specs(case):
    """The op database sample of an ``opdb`` case turned into tensor specs."""
    ns, name, (k, dt, special, layout), kwargs, seed = case
    entry = opdb_entries()[name]
    base_dt = "float64" if dt in ("int64", "bool") or dt.startswith("complex") else dt
    try:
        samples = entry.samples(np.dtype(base_dt if base_dt != "float16" else "float32"))
    except Exception:  # noqa: BLE001  (the op database tests report broken entries)
        return None, None
    sample = samples[k % len(samples)]
    specs, arrays = [], []
    for i, a in enumerate(sample):
        if isinstance(a, np.ndarray):
            if a.dtype.kind == "c" and dt == "float16":
                return None, None                           # no complex32 in numpy/ember
            if a.dtype.kind == "f":
                if dt in ("int64",):
                    a = np.round(a * 2)
                elif dt == "bool":
                    a = a > 0
                if special and a.size:
                    a = a.copy()
                    a.flat[0] = np.nan
                    a.flat[-1] = np.inf
                a = a.astype(dt)
            grad = a.dtype.kind in "fc" and (entry.grad_inputs is None or i in entry.grad_inputs)
            lay = layout if a.ndim >= 2 else "c"
            specs.append(("T", a.shape, str(a.dtype), "given", lay, bool(grad)))
            arrays.append(a)
        else:
            specs.append(a)
    return specs, arrays


def run_case(L, case, values=True, arrays=None):
    """Run ``case`` in library ``L``: ``("ok", outputs, grads, state)`` or ``("raise", ...)``."""
    ns, name, args, kwargs, seed = case
    if ns == "opdb":
        args, arrays = _opdb_specs(case)
        if args is None:
            return ("skip",)
    elif arrays is None:
        specs = []
        _collect_specs((args, kwargs), specs)
        rng = np.random.default_rng(seed + 7919)
        arrays = [_values(s, rng) for s in specs]
    inplace = name.endswith("_") and not name.endswith("__")
    b = _Build(L, arrays, inplace)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            real_args = b.make(list(args), top=True)
            real_kwargs = b.make(dict(kwargs))
            out = _call(L, (ns, name, real_args, real_kwargs, seed), b)
        except Exception as e:  # noqa: BLE001  (compared between the libraries)
            return ("raise", "forward", _family(e), "%s: %s" % (type(e).__name__, e),
                    [_norm_after_error(x) for x in b.bases], _unchanged(b))
        outputs = _norm(out)
        if not values:
            return ("ok", outputs)
        diff = [t for t in _tensors_of(out) if t.requires_grad
                and _is_float(str(t.dtype).split(".")[-1])]
        grads = None
        if diff and b.leaves:
            rng = np.random.default_rng(seed + 1)
            ups = []
            for t in diff:
                dt = str(t.dtype).split(".")[-1]
                g = rng.standard_normal(tuple(t.shape))
                if dt.startswith("complex"):
                    g = g + 1j * rng.standard_normal(tuple(t.shape))
                if dt == "complex32":       # (torch's ComplexHalf: NumPy has no complex32)
                    ups.append(L.tensor(g.astype(np.complex64)).to(L.complex32))
                    continue
                ups.append(_make(L, _round_bf16(g), dt) if dt == "bfloat16" else
                           L.tensor(g.astype(dt)))
            try:
                L.autograd.backward(diff, ups)
            except Exception as e:  # noqa: BLE001
                return ("raise", "backward", _family(e), "%s: %s" % (type(e).__name__, e),
                        [_norm(x) for x in b.bases], False)
            grads = [None if t.grad is None else _norm(t.grad) for t in b.leaves]
        state = [_norm(x) for x in b.bases]
    return ("ok", outputs, grads, state)


def _tol(dt):
    if dt in ("float16", "bfloat16"):
        return 1e-2, 1e-2
    if dt in ("float32", "complex64"):
        return 1e-4, 1e-5
    return 1e-6, 1e-9


def _compare(e, t, where, values=True, scale=1.0, atol_min=0.0):
    """None if equal, else (kind, detail)."""
    if e[0] != t[0]:
        return ("structure", "%s: ember %s, torch %s" % (where, _short(e), _short(t)))
    if e[0] == "Q":
        if len(e[1]) != len(t[1]):
            return ("structure", "%s: %d vs %d items" % (where, len(e[1]), len(t[1])))
        for k, (a, b) in enumerate(zip(e[1], t[1])):
            r = _compare(a, b, "%s[%d]" % (where, k), values, scale, atol_min)
            if r:
                return r
        return None
    if e[0] in ("T", "N"):
        if e[1] != t[1]:
            return ("dtype", "%s: ember %s, torch %s" % (where, e[1], t[1]))
        if tuple(e[2]) != tuple(t[2]):
            return ("shape", "%s: ember %s, torch %s" % (where, e[2], t[2]))
        if not values:
            return None
        a, b = e[3], t[3]
        if a.shape != b.shape:
            return ("shape", "%s: ember array %s, torch %s" % (where, a.shape, b.shape))
        if a.dtype.kind in "biu" or b.dtype.kind in "biu":
            if not np.array_equal(a, b):
                return ("values", "%s: ember %s, torch %s" % (where, _arr(a), _arr(b)))
            return None
        rtol, atol = _tol(t[1])
        a64, b64 = a.astype(np.complex128), b.astype(np.complex128)
        na, nb = np.isnan(a64), np.isnan(b64)
        if (na != nb).any():
            kind = "nan_vs_number" if (na & ~nb).any() else "number_vs_nan"
            return (kind, "%s: ember %s, torch %s" % (where, _arr(a), _arr(b)))
        fin = np.isfinite(a64) & np.isfinite(b64)
        if (np.isinf(a64) != np.isinf(b64)).any() or \
                not _same_infinite(a64[~fin & ~na], b64[~fin & ~na], rtol * scale, atol * scale):
            return ("inf_vs_number", "%s: ember %s, torch %s" % (where, _arr(a), _arr(b)))
        if not np.allclose(a64[fin], b64[fin], rtol=rtol * scale,
                           atol=max(atol * scale, atol_min)):
            return ("values", "%s: ember %s, torch %s" % (where, _arr(a), _arr(b)))
        return None
    if e[0] == "V" and e[1] != t[1]:
        return ("pytype", "%s: ember %r, torch %r" % (where, e[2], t[2]))
    if e[0] == "V" and isinstance(e[2], float):
        if not (e[2] == t[2] or (math.isnan(e[2]) and math.isnan(t[2])) or
                (values and abs(e[2] - t[2]) <= 1e-6 * (1 + abs(t[2])))):
            return ("values", "%s: ember %r, torch %r" % (where, e[2], t[2]))
        return None
    if e != t if e[0] != "V" else (values and e[2] != t[2]):
        return ("values", "%s: ember %s, torch %s" % (where, _short(e), _short(t)))
    return None


def _same_infinite(a, b, rtol, atol):
    """Infinite elements agree: the same infinities, and a complex one's finite part within
    the tolerance (``inf+1.2847158j`` and ``inf+1.284716j`` from another summation order)."""
    for x, y in ((a.real, b.real), (a.imag, b.imag)):
        inf = np.isinf(x) | np.isinf(y)
        if (x[inf] != y[inf]).any() or not np.allclose(x[~inf], y[~inf], rtol=rtol, atol=atol):
            return False
    return True


def _arr(a):
    return np.array2string(np.asarray(a).ravel()[:6], precision=4, threshold=6)


def _short(x):
    if x[0] in ("T", "N"):
        return "%s%s %s" % (x[1], list(x[2]), _arr(x[3]))
    if x[0] == "Q":
        return "(%s)" % ", ".join(_short(v) for v in x[1])
    return repr(x[1:])[:80]


def check_case(case, torch=None, timeout=None):
    """Run ``case`` in ember and torch; None when they agree, else a ``Mismatch``."""
    torch = torch or _torch()
    name = case[1]
    values = name not in RANDOM and not (
        name.split(".")[-1].startswith(_SIGN_FREE)
        and not name.split(".")[-1].startswith(("svdvals", "eigvals")))
    if _torch_quirk(case):
        return None
    atol_min = _LOOSE.get(name.split(".")[-1], 0.0)
    if timeout and hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(timeout)
    try:
        t = run_case(torch, case)
        if t[0] == "skip":
            return None
        try:
            e = run_case(ember, case)
        except _Timeout:
            return Mismatch("hang", "ember ran past %d s" % timeout)
    except _Timeout:
        return None                                         # torch itself slow: not compared
    finally:
        if timeout and hasattr(signal, "SIGALRM"):
            signal.alarm(0)
    if e[0] == "raise" and _NO_CHALF in e[3]:
        return None
    if t[0] == "raise" and any(m in t[3] for m in _TORCH_BUG):
        return None
    if t[0] == "raise" or e[0] == "raise":
        if t[0] == "raise" and e[0] == "raise":
            if t[1] != e[1] or t[2] != e[2]:
                return Mismatch("error_family", "ember %s (%s) / torch %s (%s)" % (
                    e[3][:160], e[1], t[3][:160], t[1]))
            r = _state(e[4], t[4], values)
            if r and e[1] == t[1] == "forward" and e[5] and not t[5]:
                return None     # (torch wrote into an input before raising; ember changed nothing)
            return Mismatch("state_after_error", r[1]) if r else None
        if e[0] == "raise":
            return Mismatch("ember_raises_" + e[1], "%s" % e[3][:240])
        return Mismatch("torch_raises_" + t[1], "ember returns; torch %s" % t[3][:240])
    r = _compare(e[1], t[1], "output", values, atol_min=atol_min)
    if r:
        return Mismatch(r[0], r[1])
    if (e[2] is None) != (t[2] is None):
        return Mismatch("grad_presence", "ember grads %s, torch %s" % (
            "none" if e[2] is None else "some", "none" if t[2] is None else "some"))
    if e[2] is not None:
        for k, (a, b) in enumerate(zip(e[2], t[2])):
            if (a is None) != (b is None):
                return Mismatch("grad_none" if a is None else "grad_extra",
                                "leaf %d: ember %s, torch %s" % (
                                    k, None if a is None else _short(a),
                                    None if b is None else _short(b)))
            if a is not None:
                r = _compare(a, b, "grad of leaf %d" % k, values, scale=10.0)
                if r:
                    return Mismatch("grad_" + r[0], r[1])
    r = _state(e[3], t[3], values)
    return Mismatch(r[0], r[1]) if r else None


def _state(e, t, values):
    for k, (a, b) in enumerate(zip(e, t)):
        r = _compare(a, b, "input %d after the call" % k, values)
        if r:
            return ("input_state", r[1])
    return None


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def signal_supported():
    return hasattr(signal, "SIGALRM") and os.name == "posix"


def input_features(case):
    """Short tags for what a case's inputs are (dtypes, 0-d, empty, strided, NaN/inf)."""
    specs = []
    _collect_specs((case[2], case[3]), specs)
    tags = set()
    for s in specs:
        dt = s[2]
        tags.add("int" if dt.startswith(("int", "uint")) else dt if dt in (
            "bool", "float16", "bfloat16") else "complex" if dt.startswith("complex") else "float")
        if len(s[1]) == 0:
            tags.add("0-d")
        if 0 in s[1]:
            tags.add("empty")
        if s[4] != "c" and len(s[1]):
            tags.add("strided")
        if s[3] == "x":
            tags.add("nan/inf")
    if case[0] == "opdb":
        tags.add(case[2][1])
    return sorted(tags)



def case_from_json(obj, top=True):
    """A case read back from JSON (lists to the tuples ``gen_case`` makes)."""
    if top:
        ns, name, args, kwargs, seed = obj
        return (ns, name, [case_from_json(a, False) for a in args],
                {k: case_from_json(v, False) for k, v in kwargs.items()}, seed)
    if isinstance(obj, list) and obj and obj[0] == "T":
        fill = tuple(obj[3]) if isinstance(obj[3], list) else obj[3]
        return ("T", tuple(obj[1]), obj[2], fill, obj[4], obj[5])
    if isinstance(obj, list) and obj and obj[0] in ("L", "TUP"):
        return (obj[0], [case_from_json(x, False) for x in obj[1]])
    if isinstance(obj, list):
        return tuple(case_from_json(x, False) for x in obj)
    return obj
