"""List torch module paths and public names that ember lacks (a report, not a test).

    PYTHONPATH=src python tools/check_import_paths.py

Part 1 imports, under ``ember``, every module path a typical program imports from torch
(``import torch.backends.cudnn as cudnn``, ``from torch.nn.modules.activation import ...``).
Part 2 walks torch's public namespaces and prints the names each lacks in ember.
"""
import importlib
import pkgutil
import sys
import warnings

warnings.filterwarnings("ignore")

PATHS = """
backends backends.cudnn backends.cuda backends.mps backends.cpu backends.mkldnn backends.mkl
backends.openmp backends.opt_einsum backends.nnpack
nn nn.functional nn.init nn.parameter nn.modules nn.modules.module nn.modules.utils
nn.utils nn.utils.rnn nn.utils.parametrize nn.utils.parametrizations nn.utils.clip_grad
nn.utils.weight_norm nn.utils.spectral_norm nn.utils.stateless nn.utils.fusion
nn.utils.convert_parameters nn.utils.init nn.utils.memory_format
nn.attention nn.parallel nn.parallel.distributed nn.grad nn.common_types nn.intrinsic
multiprocessing autograd autograd.grad_mode autograd.profiler autograd.function
autograd.functional autograd.forward_ad autograd.graph autograd.anomaly_mode autograd.variable
autograd.gradcheck profiler random serialization types overrides hub jit cuda cuda.amp cpu
cpu.amp amp amp.autocast_mode amp.grad_scaler compiler utils utils.data utils.data.distributed
utils.data.dataloader utils.data.dataset utils.data.sampler utils.hooks utils.checkpoint
utils.tensorboard utils.benchmark utils.cpp_extension utils.model_zoo utils._pytree
optim optim.lr_scheduler optim.optimizer optim.swa_utils optim.sgd optim.adam optim.adamw
distributions distributions.normal distributions.categorical distributions.kl
distributions.constraints distributions.transforms distributions.utils
linalg fft special func testing version library _dynamo storage functional
return_types quantization ao sparse masked nested export onnx fx package mps xpu
""".split()


def modules_of(lib):
    base = importlib.import_module(lib + ".nn.modules")
    return sorted(m.name for m in pkgutil.iter_modules(base.__path__))


def check_paths():
    missing = []
    paths = PATHS + ["nn.modules." + m for m in modules_of("torch")]
    for p in paths:
        try:
            importlib.import_module("torch." + p)
        except Exception:
            continue        # (not a torch path on this build)
        try:
            importlib.import_module("ember." + p)
        except Exception as e:     # noqa: BLE001 (a report)
            missing.append((p, "%s: %s" % (type(e).__name__, str(e)[:80])))
    print("== module paths torch has and ember cannot import (%d)" % len(missing))
    for p, why in missing:
        print("  %-40s %s" % (p, why))


NAMESPACES = ["", ".nn", ".nn.functional", ".nn.init", ".nn.utils", ".linalg", ".fft",
              ".special", ".distributions", ".optim", ".optim.lr_scheduler", ".utils.data",
              ".autograd", ".cuda", ".backends.cudnn", ".random", ".serialization",
              ".nn.modules.activation", ".nn.modules.module", ".jit", ".amp", ".profiler",
              ".multiprocessing", ".overrides", ".hub", ".types", ".testing"]


def public(obj):
    names = getattr(obj, "__all__", None)
    if names is None:
        names = [n for n in dir(obj) if not n.startswith("_")]
    return sorted(set(names))


def check_names():
    for ns in NAMESPACES:
        try:
            t = importlib.import_module("torch" + ns)
        except Exception:
            continue
        try:
            e = importlib.import_module("ember" + ns)
        except Exception as exc:      # noqa: BLE001
            print("== torch%s: ember cannot import (%s)" % (ns, exc))
            continue
        miss = [n for n in public(t) if not hasattr(e, n)]
        print("== torch%s: %d missing of %d" % (ns, len(miss), len(public(t))))
        if miss:
            print("  " + " ".join(miss))
    t = importlib.import_module("torch").Tensor
    e = importlib.import_module("ember").zeros(2, 2)     # (methods resolve on instances)
    miss = []
    for n in dir(t):
        if n.startswith("_"):
            continue
        try:
            getattr(e, n)
        except AttributeError:
            miss.append(n)
        except Exception:      # noqa: BLE001 (present, but refuses this tensor)
            pass
    print("== torch.Tensor: %d missing" % len(miss))
    print("  " + " ".join(miss))


if __name__ == "__main__":
    check_paths()
    if "--paths-only" not in sys.argv:
        check_names()
