"""How many of torch 2.13's public, user-facing names ember resolves, by namespace (issue 18).

``python tests/api_coverage.py`` prints the counts and the in-scope names still missing. Out
of scope, as the issue says: quantized, sparse, TorchScript/JIT internals and backend-specific
names (cuDNN, MIOpen, MKLDNN, FBGEMM, XPU/MPS/MTIA), plus torch's C++ framework internals
(dispatch keys, type objects, loggers) and the legacy typed-storage classes.
"""
import inspect
import re
import warnings

OUT_OF_SCOPE = [
    # quantized
    r"^q_", r"^quantize", r"^quantized_", r"qscheme", r"^per_(channel|tensor)", r"^dequantize$",
    r"^int_repr$", r"^fake_quantize", r"^choose_qparams", r"^fused_moving_avg", r"^fbgemm",
    r"^Q(U)?Int", r"^quint", r"^qint",
    # sparse
    r"^sparse", r"indices_copy$", r"^values_copy$", r"^(h|d|s)?s?pmm$", r"^smm$", r"^hsmm$",
    r"^sspaddmm$", r"^saddmm$", r"_sparse_", r"^to_sparse", r"^(c)?col_indices$",
    r"^(c)?row_indices$", r"^crow_indices$", r"^ccol_indices$", r"^coalesce$",
    r"^is_coalesced$", r"^indices$", r"^values$", r"^dense_dim$", r"^sparse_dim$",
    r"^to_padded_tensor$", r"^is_sparse_csr$",
    # TorchScript / JIT and C++ framework internals
    r"Type$", r"^Script", r"^(Graph|Node|Block|Value|Use|Code|Argument|ArgumentSpec|AliasDb|"
    r"FileCheck|CompilationUnit|FunctionSchema|ErrorReport|ExecutionPlan|Gradient|"
    r"GraphExecutorState|TracingState|ConcreteModuleType|ConcreteModuleTypeBuilder|"
    r"DeepCopyMemoTable|LiteScriptModule|StaticModule|CallStack|IODescriptor|Capsule|"
    r"CompleteArgumentSpec|InferredType|JITException|OperatorInfo|Tag|Future|"
    r"DispatchKey|DispatchKeySet|ExcludeDispatchKeyGuard|DisableTorchFunction|"
    r"DisableTorchFunctionSubclass|ThroughputBenchmark|BenchmarkConfig|"
    r"BenchmarkExecutionStats|LoggerBase|LockingLogger|NoopLogger|AggregationType|SUM|AVG|"
    r"PRIVATE_OPS|USE_GLOBAL_DEPS|USE_RTLD_GLOBAL_WITH_LIBTORCH|TYPE_CHECKING|"
    r"PyTorchFileReader|PyTorchFileWriter|SerializationStorageContext|"
    r"DeserializationStorageContext|FatalError|SymInt|SymFloat|SymBool|BufferDict|"
    r"ModuleDict|ParameterDict)$",
    r"^parse_", r"^import_ir_module", r"^merge_type_from", r"^unify_type_list$", r"^fork$",
    r"^wait$", r"^sym_constrain_range", r"^sym_fresh_size$", r"^classproperty$",
    r"^prepare_multiprocessing_environment$", r"^thread_safe_generator$", r"^get_file_path$",
    r"^module_load$", r"^is_set_to$", r"^slice_inverse$", r"^index$",
    # backend-specific
    r"^cudnn_", r"^miopen_", r"^mkldnn_", r"mkldnn", r"^is_vulkan", r"^(is_)?(xpu|ipu|mtia|"
    r"maia|mps|xla|vulkan)$", r"cudagraph", r"^to_mkldnn$", r"autocast_(ipu|xla)",
    r"_(ipu|xla)_", r"^_", r"^is_maia$",
    # the legacy typed storages (one class per dtype) and the storage base classes
    r"Storage$", r"^StorageBase$", r"^storage_type$", r"^BFloat16Tensor$",
    # SyncBatchNorm's and the RNN modules' internal kernels
    r"^batch_norm_(backward|elemt|gather|stats|update)", r"^(gru|lstm|rnn_relu|rnn_tanh)$",
    r"^embedding_bag$", r"^resize_as_sparse_$", r"^nested", r"^segment_reduce$",
    # quantized storage and creation, sparse matmul
    r"^empty_quantized$", r"^dsmm$",
    # the documentation helpers and typing names sub-modules import (not API)
    r"_notes$", r"common_args$", r"^multi_dim_common$", r"^Tensor$", r"^Callable$",
    r"^Optional$", r"^BroadcastingList\d$", r"torch_function", r"^boolean_dispatch$",
    r"^assert_int_or_pair$", r"^GRID_SAMPLE_",
    # GPU-only kernels (float8 scaled and grouped GEMMs)
    r"^scaled_mm$", r"^scaled_grouped_mm$", r"^grouped_mm$",
    # sub-byte dtypes torch names for packed kernels (ember names them and refuses them)
]

_OUT = [re.compile(p) for p in OUT_OF_SCOPE]


def in_scope(name):
    return not any(p.search(name) for p in _OUT)


def _public(obj, names=None, modules=False):
    out = []
    for n in names if names is not None else dir(obj):
        if n.startswith("_"):
            continue
        v = getattr(obj, n, None)
        if inspect.ismodule(v) and not modules:
            continue
        out.append(n)
    return out


def namespaces(torch, ember):
    """(label, torch names, ember object or None for Tensor methods) per namespace."""
    import ember.fft
    import ember.linalg
    import ember.nn.functional
    import ember.special
    return [
        ("torch.*", _public(torch), ember),
        ("Tensor methods", _public(torch.Tensor), None),
        ("torch.linalg", _public(torch.linalg), ember.linalg),
        ("torch.fft", _public(torch.fft), ember.fft),
        ("torch.special", _public(torch.special), ember.special),
        ("torch.nn.functional", _public(torch.nn.functional), ember.nn.functional),
        ("torch.nn", [n for n in _public(torch.nn) if inspect.isclass(getattr(torch.nn, n))],
         ember.nn),
    ]


def _has_method(name, ember):
    t = ember.zeros(2, 2)
    try:
        getattr(t, name)
        return True
    except AttributeError:
        return False
    except Exception:  # noqa: BLE001 (a property that raises for this tensor: it exists)
        return True


def count(torch, ember):
    """{label: (resolved, in scope, [missing in-scope names])}."""
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, names, target in namespaces(torch, ember):
            scope = [n for n in names if in_scope(n)]
            if target is None:
                missing = [n for n in scope if not _has_method(n, ember)]
            else:
                missing = [n for n in scope if not hasattr(target, n)]
            out[label] = (len(scope) - len(missing), len(scope), sorted(missing))
    return out


if __name__ == "__main__":
    import torch

    import ember
    for label, (have, total, missing) in count(torch, ember).items():
        print("%-22s %4d / %4d (%.0f%%)  missing: %s" % (label, have, total,
                                                        100.0 * have / max(total, 1),
                                                        " ".join(missing) or "-"))
