"""The "(beta) Building a Simple CPU Performance Profiler with FX" tutorial
(intermediate_source/fx_profiling_tutorial.py), shrunk: a ProfilingInterpreter (an
fx.Interpreter subclass overriding run and run_node) times every node of a traced small
ResNet-style net over a few runs and builds the per-node summary table. Times vary, so this
prints the summary's node kinds and names, run counts and that the percentages are sane, and
checks the interpreted result against the module."""
import importlib
import os
import statistics
import time
from collections import Counter

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
fx = importlib.import_module(LIB + ".fx")
Interpreter = fx.Interpreter


class ProfilingInterpreter(Interpreter):
    def __init__(self, mod):
        gm = torch.fx.symbolic_trace(mod)
        super().__init__(gm)
        self.total_runtime_sec = []
        self.runtimes_sec = {}

    def run(self, *args):
        t_start = time.time()
        return_val = super().run(*args)
        t_end = time.time()
        self.total_runtime_sec.append(t_end - t_start)
        return return_val

    def run_node(self, n):
        t_start = time.time()
        return_val = super().run_node(n)
        t_end = time.time()
        self.runtimes_sec.setdefault(n, [])
        self.runtimes_sec[n].append(t_end - t_start)
        return return_val

    def summary(self, should_sort=False):
        node_summaries = []
        mean_total_runtime = statistics.mean(self.total_runtime_sec)
        for node, runtimes in self.runtimes_sec.items():
            mean_runtime = statistics.mean(runtimes)
            pct_total = mean_runtime / mean_total_runtime * 100
            node_summaries.append([node.op, str(node), mean_runtime, pct_total, len(runtimes)])
        if should_sort:
            node_summaries.sort(key=lambda s: s[2], reverse=True)
        return node_summaries


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU())
        self.blocks = nn.Sequential(Block(6), Block(6))
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(x).softmax(-1)


torch.manual_seed(0)
rn = Net().eval()
x = torch.randn(2, 3, 8, 8)
interp = ProfilingInterpreter(rn)
with torch.no_grad():
    for _ in range(3):
        out = interp.run(x)
    ref = rn(x)
print("output matches module:", torch.allclose(out, ref, atol=1e-6))
print("runs:", len(interp.total_runtime_sec))
rows = interp.summary(should_sort=True)
print("nodes timed:", len(rows))
print("op kinds:", sorted(Counter(r[0] for r in rows).items()))
for op, name, mean_runtime, pct, count in sorted(rows, key=lambda r: r[1]):
    print("%-14s %-22s runs=%d" % (op, name, count))
print("each pct in [0, 100]:", all(0 <= r[3] <= 100 for r in rows))
print("sorted descending:", all(rows[i][2] >= rows[i + 1][2] for i in range(len(rows) - 1)))
print("node total <= run total:",
      sum(r[2] for r in rows) <= statistics.mean(interp.total_runtime_sec) * 1.5)
print(interp.module.code)
