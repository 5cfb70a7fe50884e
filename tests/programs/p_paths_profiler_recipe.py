"""The "PyTorch Profiler" recipe: profile(activities, record_shapes), record_function,
key_averages().table(...), a schedule with on_trace_ready and prof.step(), and the older
torch.autograd.profiler.profile. Times vary run to run, so only the structure is printed."""
import importlib
import os
import tempfile

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = importlib.import_module(LIB + ".nn")
profiler = importlib.import_module(LIB + ".profiler")
autograd_profiler = importlib.import_module(LIB + ".autograd.profiler")
profile, record_function = profiler.profile, profiler.record_function
ProfilerActivity, schedule = profiler.ProfilerActivity, profiler.schedule

torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 5))
inputs = torch.randn(2, 3, 8, 8)

print(repr(ProfilerActivity.CPU), ProfilerActivity.CPU in profiler.supported_activities())
with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    with record_function("model_inference"):
        out = model(inputs)
print("out", out.sum())
avgs = prof.key_averages()
keys = [e.key for e in avgs]
print("model_inference" in keys, len(keys) > 1)
table = avgs.table(sort_by="cpu_time_total", row_limit=10)
lines = table.splitlines()
print(lines[1].split())
print(lines[-1].split(":")[0])
row = [e for e in avgs if e.key == "model_inference"][0]
print(row.count, row.cpu_time_total >= row.self_cpu_time_total >= 0)
shaped = prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total",
                                                          row_limit=3)
print(shaped.splitlines()[1].split()[-2:])

my_schedule = schedule(skip_first=1, wait=1, warmup=1, active=2, repeat=1)
print([my_schedule(i) for i in range(7)])
traces = []


def trace_handler(p):
    names = sorted(k.key for k in p.key_averages() if k.key.startswith("ProfilerStep"))
    traces.append((p.step_num, names))


with profile(activities=[ProfilerActivity.CPU], schedule=my_schedule,
             on_trace_ready=trace_handler) as p:
    for idx in range(7):
        model(inputs).sum().backward()
        p.step()
print("traces", traces)

with tempfile.TemporaryDirectory() as d:
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        model(inputs)
    path = os.path.join(d, "trace.json")
    prof.export_chrome_trace(path)
    print("trace written", os.path.getsize(path) > 0)

with autograd_profiler.profile(record_shapes=False) as prof2:
    with autograd_profiler.record_function("forward"):
        y = model(inputs).sum()
    y.backward()
t2 = prof2.key_averages().table(sort_by="self_cpu_time_total", row_limit=5)
print(t2.splitlines()[1].split())
print("forward" in [e.key for e in prof2.key_averages()],
      prof2.self_cpu_time_total > 0)
print("RESULT:", y)
