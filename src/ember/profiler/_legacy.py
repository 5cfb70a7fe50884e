"""``torch.autograd.profiler``: time the ops a region runs and print torch's summary table.

``with profile() as prof:`` records every ``Function.apply`` (each op, named ``aten::<op>`` as
torch names the matching kernel) and every ``record_function`` range, with wall-clock times
from :func:`time.perf_counter_ns`. ``prof.key_averages().table(...)`` groups them by name in
torch's layout. ember has no separate kernels below its ops and no device timeline, so device
times and memory columns are 0.
"""
import contextlib
import re
import time

from ..autograd import function as _function

__all__ = ["profile", "record_function", "emit_nvtx", "emit_itt", "EventList",
           "FunctionEvent", "FunctionEventAvg", "load_nvprof"]

_active: list = []        # the profiles recording now (innermost last)
_stack = []         # the open events (for parents and self time)


def _format_time(time_us):
    if time_us >= 1e6:
        return "%.3fs" % (time_us / 1e6)
    if time_us >= 1e3:
        return "%.3fms" % (time_us / 1e3)
    return "%.3fus" % time_us


def _format_time_share(time_us, total_time_us):
    if total_time_us == 0:
        return "NaN"
    return "%.2f%%" % (time_us * 100.0 / total_time_us)


class FunctionEvent:
    """One recorded op call or ``record_function`` range (times in microseconds)."""

    def __init__(self, id, name, start_ns, input_shapes=None, is_user_annotation=False):
        self.id = id
        self.trace_name = name
        # (torch's tables group every step's range under one wildcard name)
        self.name = self.key = "ProfilerStep*" if name.startswith("ProfilerStep#") else name
        self._start = start_ns
        self._end = start_ns
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.is_user_annotation = is_user_annotation
        self.cpu_parent = None
        self.cpu_children = []
        self.count = 1
        self.is_async = False
        self.is_legacy = False
        self.device_type = "CPU"
        self.flops = 0
        self.stack = []
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.device_time_total = self.self_device_time_total = 0
        self.device_memory_usage = self.self_device_memory_usage = 0
        self.overload_name = ""

    @property
    def cpu_time_total(self):
        return (self._end - self._start) / 1e3

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    cpu_time = cpu_time_total
    cuda_time = device_time = cuda_time_total = property(lambda self: 0.0)

    @property
    def time_range(self):
        return self._start / 1e3, self._end / 1e3

    def __repr__(self):
        return ("<FunctionEvent id=%d name=%s cpu_time=%s input_shapes=%s>"
                % (self.id, self.name, _format_time(self.cpu_time_total), self.input_shapes))


class FunctionEventAvg:
    """The events of one name (and input shapes, when grouped by them) added up."""

    def __init__(self, key, input_shapes=None):
        self.key = self.name = key
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.device_time_total = self.self_device_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.device_memory_usage = self.self_device_memory_usage = 0
        self.cpu_parent = None
        self.is_async = self.is_legacy = self.is_remote = False
        self.is_user_annotation = False
        self.device_type = "CPU"
        self.flops = 0
        self.stack = []
        self.overload_name = ""
        self.node_id = 0
        self.scope = 0

    def add(self, other):
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.is_user_annotation = other.is_user_annotation
        return self

    @property
    def cpu_time(self):
        return self.cpu_time_total / max(self.count, 1)

    cuda_time = device_time = property(lambda self: 0.0)
    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)

    def __repr__(self):
        return ("<FunctionEventAvg key=%s self_cpu_time=%s cpu_time=%s input_shapes=%s>"
                % (self.key, _format_time(self.self_cpu_time_total),
                   _format_time(self.cpu_time), self.input_shapes))


class EventList(list):
    """A list of events with torch's summaries (``key_averages``, ``table``, ...)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args)

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """The events grouped by name (and input shapes), in first-seen order."""
        groups = {}
        for e in self:
            k = (e.key, str(e.input_shapes)) if group_by_input_shapes else e.key
            if k not in groups:
                groups[k] = FunctionEventAvg(e.key, e.input_shapes if group_by_input_shapes
                                             else None)
            groups[k].add(e)
        out = EventList(groups.values())
        out._with_shapes = group_by_input_shapes
        return out

    def total_average(self):
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """torch's text table of these events (one row per entry)."""
        return _build_table(self, sort_by, row_limit, max_name_column_width,
                            max_shapes_column_width, header, top_level_events_only,
                            getattr(self, "_with_shapes", False))

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (``chrome://tracing``, Perfetto)."""
        import json
        trace = [{"name": e.trace_name, "ph": "X", "ts": e._start / 1e3,
                  "dur": e.cpu_time_total, "pid": "CPU functions", "tid": 0,
                  "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                  "args": {}} for e in self if isinstance(e, FunctionEvent)]
        with open(path, "w") as f:
            json.dump({"traceEvents": trace}, f)

    def __str__(self):
        return self.table()


def _build_table(events, sort_by, row_limit, max_name_width, max_shapes_width, header,
                 top_level_only, with_shapes):
    if len(events) == 0:
        return ""
    if sort_by is not None:
        key = sort_by.replace("cuda", "device").replace("xpu", "device")
        events = sorted(events, key=lambda e: getattr(e, key), reverse=True)
    name_width = max(len(e.key) for e in events) + 4
    if max_name_width is not None:
        name_width = min(name_width, max_name_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
               "# of Calls"]
    widths = [name_width] + [12] * 6
    if with_shapes:
        headers.append("Input Shapes")
        shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
        widths.append(min(shapes_width, max_shapes_width or shapes_width))
    row = "".join("{:>%d}  " % w for w in widths)
    sep = "".join("-" * w + "  " for w in widths)
    total = sum(e.self_cpu_time_total for e in events)
    out = []
    if header is not None:
        out += ["=" * len(sep), header]
    if top_level_only:
        out += ["=" * len(sep), "This report only display top-level ops statistics"]
    out += [sep, row.format(*headers), sep]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_width is not None and len(name) >= max_name_width - 3:
            name = name[:max_name_width - 3] + "..."
        values = [name, _format_time_share(e.self_cpu_time_total, total),
                  _format_time(e.self_cpu_time_total),
                  _format_time_share(e.cpu_time_total, total), _format_time(e.cpu_time_total),
                  _format_time(e.cpu_time_total / max(e.count, 1)), e.count]
        if with_shapes:
            values.append(str(e.input_shapes)[:max_shapes_width])
        out.append(row.format(*values))
    out += [sep, "Self CPU time total: %s" % _format_time(total)]
    return "\n".join(out) + "\n"


def _op_name(cls):
    """torch's kernel name for an op: ``AddmmBackward0`` -> ``aten::addmm``."""
    name = getattr(cls, "node_name", None) or cls.__name__
    name = re.sub(r"Backward\d*$", "", name)
    name = re.sub(r"(\d)D", r"\1d", name)
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    return "aten::" + name


def _open(name, shapes=None, user=False):
    prof = _active[-1]
    ev = FunctionEvent(len(prof._events), name, time.perf_counter_ns(), shapes, user)
    if _stack:
        ev.cpu_parent = _stack[-1]
        _stack[-1].cpu_children.append(ev)
    _stack.append(ev)
    prof._events.append(ev)
    return ev


def _close(ev):
    ev._end = time.perf_counter_ns()
    if _stack and _stack[-1] is ev:
        _stack.pop()


def _hook(cls, args, kwargs):
    nxt = _next[0]
    if not _active:
        return _function.plain_apply(cls, args, kwargs) if nxt is None else nxt(cls, args,
                                                                                   kwargs)
    shapes = None
    if _active[-1].record_shapes:
        shapes = [list(a.shape) if hasattr(a, "shape") else [] for a in args]
    ev = _open(_op_name(cls), shapes)
    try:
        if nxt is None:
            return _function.plain_apply(cls, args, kwargs)
        return nxt(cls, args, kwargs)
    finally:
        _close(ev)


_next = [None]      # the hook that held Function.apply before the profiler's, if any


class profile:      # noqa: N801 (torch's name)
    """Context manager: record the ops and ``record_function`` ranges run inside it.

    Example:
        >>> import ember
        >>> with ember.autograd.profiler.profile() as prof:
        ...     y = ember.ones(2).mul(2)
        >>> [e.key for e in prof.key_averages()]
        ['aten::mul']
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self._events = []
        self.function_events = None
        self.entered = False

    def __enter__(self):
        if not self.enabled:
            return None     # (torch binds ``as prof`` to None when disabled)
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._start_recording()
        return self

    def _start_recording(self):
        if not _active and _function._hook is not _hook:
            _next[0] = _function._hook
            _function._hook = _hook
        _active.append(self)

    def _stop_recording(self):
        if self in _active:
            _active.remove(self)
        if not _active and _function._hook is _hook:
            _function._hook = _next[0]
            _next[0] = None
        self.function_events = EventList(self._events)

    def __exit__(self, *exc):
        if self.enabled:
            self._stop_recording()
        return False

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        self._check_finish()
        return self.function_events.table(sort_by, row_limit, max_src_column_width,
                                          max_name_column_width, max_shapes_column_width,
                                          header, top_level_events_only)

    def total_average(self):
        self._check_finish()
        return self.function_events.total_average()

    def export_chrome_trace(self, path):
        self._check_finish()
        return self.function_events.export_chrome_trace(path)

    @property
    def self_cpu_time_total(self):
        self._check_finish()
        return self.function_events.self_cpu_time_total

    def events(self):
        self._check_finish()
        return self.function_events

    def __str__(self):
        return self.table() if self.function_events is not None else repr(self)


class record_function(contextlib.ContextDecorator):     # noqa: N801 (torch's name)
    """Label a range of code: inside a profile it shows as one row named ``name``."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._ev = None

    def __enter__(self):
        if _active:
            self._ev = _open(self.name, user=True)
        return self

    def __exit__(self, *exc):
        if self._ev is not None:
            _close(self._ev)
            self._ev = None
        return False


class emit_nvtx(contextlib.nullcontext):     # noqa: N801 (torch's name)
    """No-op: ember runs no CUDA kernels for NVTX ranges to annotate."""

    def __init__(self, enabled=True, record_shapes=False):
        super().__init__()


class emit_itt(emit_nvtx):     # noqa: N801 (torch's name)
    """No-op (Intel ITT ranges)."""


def load_nvprof(path):
    raise RuntimeError("ember.autograd.profiler.load_nvprof: ember does not read nvprof "
                       "traces")
