"""The tensor-level idioms of PyTorch 0.3/0.4-era notes and answers (the "60 minute blitz" of
2017, yunjey/pytorch-tutorial's basics, the 0.4 migration guide), run on modern torch with what
each one does now: legacy constructors (``torch.FloatTensor(2, 3).zero_()``,
``torch.LongTensor([...])``, ``torch.Tensor(torch.Size)``), ``.type()`` strings and
``x.type(dtype)``, ``dtype = torch.cuda.FloatTensor`` guarded by ``torch.cuda.is_available()``,
``x.data`` / ``x.data[0]`` on 0-d results, ``Variable.backward(gradient)``, ``.numpy()`` on a
tensor that requires grad, removed linear-algebra names (``torch.gels``, ``torch.potrf``,
``torch.gesv``, ``torch.trtrs``, ``torch.btrifact``) and the removed-but-present ones
(``torch.symeig``, ``torch.eig``), ``nn.init.xavier_uniform`` and the other non-underscore
initialisers, ``nn.Softmax()``/``F.softmax`` without ``dim`` (which dim it picks),
``size_average``/``reduce`` combinations, ``x.index_add_``, uint8 masks (``masked_fill`` refuses
them), ``torch.range`` and ``x.storage()`` (its warning comes once per process)."""
import importlib
import os
import warnings

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
Variable = importlib.import_module(LIB + ".autograd").Variable


def run(label, fn):
    """Print what ``fn()`` returns or raises, and its warnings (torch's C++ suffix stripped)."""
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        try:
            out = fn()
        except Exception as e:  # noqa: BLE001
            out = "%s: %s" % (type(e).__name__, str(e).split(" (Triggered internally")[0]
                              .replace("module '%s'" % LIB, "module 'torch'"))
    print(label, "->", out)
    for w in ws:
        print("   warning:", w.category.__name__,
              str(w.message).split(" (Triggered internally")[0].replace("\n", " | "))


torch.manual_seed(0)
dtype = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor
print("dtype:", dtype.__name__)

# ---- constructors and type strings --------------------------------------------------------
run("FloatTensor(2, 3).zero_()", lambda: torch.FloatTensor(2, 3).zero_())
run("LongTensor([1, 2, 3])", lambda: torch.LongTensor([1, 2, 3]))
run("LongTensor([1.5, 2.7])", lambda: torch.LongTensor([1.5, 2.7]))
run("Tensor(Size([2, 2])).fill_(3)", lambda: torch.Tensor(torch.Size([2, 2])).fill_(3))
run("FloatTensor(np.ones(2))", lambda: torch.FloatTensor(np.ones(2)))
run("ByteTensor([1, 0, 1])", lambda: torch.ByteTensor([1, 0, 1]))
x = torch.randn(2, 3).type(dtype)
run("x.type()", lambda: x.type())
run("x.type(torch.DoubleTensor).type()", lambda: x.type(torch.DoubleTensor).type())
run("x.type('torch.IntTensor')", lambda: x.type("torch.IntTensor"))
run("x.long().type_as(x).type()", lambda: x.long().type_as(x).type())
run("isinstance(x, FloatTensor/DoubleTensor)",
    lambda: (isinstance(x, torch.FloatTensor), isinstance(x, torch.DoubleTensor)))
run("x.new(2).zero_(), x.new([1, 2])", lambda: (x.new(2).zero_(), x.new([1, 2])))
run("torch.range(0, 3)", lambda: torch.range(0, 3))
run("torch.range(0, 3) again", lambda: torch.range(0, 1, 0.5))

# ---- Variables, .data and 0-d results -----------------------------------------------------
v = Variable(torch.ones(2, 2), requires_grad=True)
y = v + 2
z = y * y * 3
out = z.mean()
run("out.data[0]", lambda: out.data[0])
run("out.data, out.item()", lambda: (out.data, out.item()))
out.backward()
run("v.grad", lambda: v.grad)
a = Variable(torch.FloatTensor([1, 2, 3]), requires_grad=True)
b = a * 2
b.backward(torch.FloatTensor([0.1, 1.0, 0.0001]))
run("a.grad after backward(gradient)", lambda: a.grad)
run("Variable(x, volatile=True).requires_grad", lambda: Variable(x, volatile=True).requires_grad)
run("a.volatile", lambda: a.volatile)
run("a.numpy()", lambda: a.numpy())
run("a.data.numpy()", lambda: a.data.numpy().tolist())
run("b.grad_fn", lambda: type(b.grad_fn).__name__)
run("b.backward() again", lambda: b.backward(torch.ones(3)))
run("torch.sum(a).data[0]", lambda: torch.sum(a).data[0])

# ---- removed names ------------------------------------------------------------------------
A = torch.FloatTensor([[4, 1], [1, 3]])
for name in ("gels", "potrf", "gesv", "trtrs", "btrifact", "symeig", "eig"):
    run("torch.%s(A, A)" % name, lambda: getattr(torch, name)(A, A) if name in (
        "gels", "gesv", "trtrs") else getattr(torch, name)(A))
run("A.potrf()", lambda: A.potrf())
run("A.symeig()", lambda: A.symeig())
run("torch.linalg.cholesky(A)", lambda: torch.linalg.cholesky(A))

# ---- nn.init without the underscore -------------------------------------------------------
torch.manual_seed(1)
w = torch.empty(3, 4)
for name, args in (("xavier_uniform", ()), ("xavier_normal", ()), ("kaiming_uniform", ()),
                   ("kaiming_normal", ()), ("uniform", (-0.1, 0.1)), ("normal", (0, 0.02)),
                   ("constant", (0.5,)), ("orthogonal", ()), ("eye", ())):
    run("nn.init.%s" % name,
        lambda: "%.4f %.4f" % tuple(float(s) for s in
                                    (getattr(nn.init, name)(w, *args).sum(), w.abs().max())))
lin = nn.Linear(4, 3)
nn.init.xavier_uniform_(lin.weight, gain=nn.init.calculate_gain("relu"))
run("calculate_gain('relu') init", lambda: "%.4f" % float(lin.weight.abs().max()))

# ---- softmax without dim ------------------------------------------------------------------
torch.manual_seed(2)
for shape in ((3,), (2, 3), (2, 3, 4), (2, 3, 2, 2)):
    t = torch.randn(*shape)
    run("F.softmax %s sums along" % (shape,),
        lambda: [d for d in range(t.dim()) if torch.allclose(F.softmax(t).sum(d), torch.ones(1))])
run("nn.Softmax()(2x3)", lambda: nn.Softmax()(torch.arange(6.).view(2, 3)))
run("nn.LogSoftmax()(1x3)", lambda: nn.LogSoftmax()(torch.arange(3.).view(1, 3)))
run("F.log_softmax 3-d dim", lambda: F.log_softmax(torch.zeros(2, 3, 4)).exp().sum(1)[0, 0])

# ---- size_average / reduce ---------------------------------------------------------------
inp = torch.FloatTensor([[0.2, 0.8], [0.6, 0.4], [0.9, 0.1]])
tgt = torch.LongTensor([1, 0, 0])
for kw in ({}, {"size_average": False}, {"size_average": True}, {"reduce": False},
           {"size_average": False, "reduce": False}, {"size_average": True, "reduce": True}):
    run("nll_loss %s" % kw, lambda: F.nll_loss(torch.log(inp), tgt, **kw))
    run("nn.L1Loss %s" % kw, lambda: nn.L1Loss(**kw)(inp[:, 0], inp[:, 1]))
run("CrossEntropyLoss(weight, size_average=False)",
    lambda: nn.CrossEntropyLoss(weight=torch.FloatTensor([1, 3]), size_average=False)(inp, tgt))
run("BCELoss(size_average=False)",
    lambda: nn.BCELoss(size_average=False)(inp[:, 0], torch.FloatTensor([1, 0, 1])))

# ---- in-place indexing and masks ----------------------------------------------------------
run("index_add_", lambda: torch.zeros(3, 2).index_add_(0, torch.LongTensor([0, 2, 0]),
                                                        torch.FloatTensor([[1, 2], [3, 4],
                                                                           [5, 6]])))
run("index_fill_", lambda: torch.zeros(2, 3).index_fill_(1, torch.LongTensor([0, 2]), -1))
m = torch.FloatTensor([[1, -2, 3], [-4, 5, -6]])
run("masked_fill uint8 mask", lambda: m.masked_fill((m > 0).byte(), 0))
run("masked_fill bool mask", lambda: m.masked_fill(m > 0, 0))
run("masked_select uint8 mask", lambda: m.masked_select((m > 0).byte()))
run("(m > 0).dtype, .sum()", lambda: ((m > 0).dtype, (m > 0).sum()))
run("m.max(1)", lambda: tuple(m.max(1)))
run("m.sum(1).size()", lambda: m.sum(1).size())

# ---- storages ------------------------------------------------------------------------------
run("first x.storage().tolist()", lambda: torch.arange(4.).storage().tolist())
run("x.storage().size()", lambda: torch.arange(6.).view(2, 3).t().storage().size())
run("FloatStorage(3).size()", lambda: torch.FloatStorage(3).size())
