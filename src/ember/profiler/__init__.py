"""``torch.profiler``: profile a region or a training loop, step by step.

``profile`` records the ops that run (as ``ember.autograd.profiler.profile`` does) while its
``schedule`` says RECORD, names each step ``ProfilerStep#N`` and calls ``on_trace_ready`` at
the end of each active stretch. Only CPU activity is recorded: ember's times are wall-clock
times of its ops, and ``ProfilerActivity.CUDA`` adds nothing.
"""
import enum
import os
import warnings

from . import _legacy as _autograd_profiler
from ._legacy import record_function

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
           "tensorboard_trace_handler", "supported_activities", "itt", "DeviceType",
           "kineto_available"]


class ProfilerActivity(enum.Enum):
    """The kinds of activity a profile can collect."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What the profiler does during a step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


class DeviceType(enum.Enum):
    """The device an event ran on."""

    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    MTIA = 19
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    PrivateUse1 = 20


def kineto_available():
    """True: ``profile`` (torch's Kineto-based API) is available."""
    return True


def supported_activities():
    """The activities this build can profile: the CPU."""
    return {ProfilerActivity.CPU}


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """A ``schedule`` for ``profile``: skip ``skip_first`` steps, then cycle through ``wait``
    idle, ``warmup`` and ``active`` recorded steps (``repeat`` cycles; 0: no limit)."""
    def schedule_fn(step):
        if step < 0:
            raise AssertionError("Step must be non-negative. Got %d." % step)
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        if mod_step < num_steps - 1:
            return ProfilerAction.RECORD
        return ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            "Invalid profiler schedule arguments. Got wait=%d (need >= 0), warmup=%d (need >= "
            "0), active=%d (need > 0), repeat=%d (need >= 0), skip_first=%d (need >= 0)."
            % (wait, warmup, active, repeat, skip_first))
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    return schedule_fn


def _default_schedule_fn(_):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False,
                              use_python_export=False):
    """An ``on_trace_ready`` that writes each trace as a Chrome trace file in ``dir_name``."""
    import socket
    import time

    def handler_fn(prof):
        nonlocal worker_name
        os.makedirs(dir_name, exist_ok=True)
        if not worker_name:
            worker_name = "%s_%d" % (socket.gethostname(), os.getpid())
        prof.export_chrome_trace(os.path.join(
            dir_name, "%s.%d.pt.trace.json" % (worker_name, time.time_ns())))
    return handler_fn


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


class profile:      # noqa: N801 (torch's name)
    """Profiler context manager: ``with profile(...) as prof:``, then
    ``prof.key_averages().table(...)``; with a ``schedule``, call ``prof.step()`` after each
    training step.

    Example:
        >>> import ember
        >>> from ember.profiler import profile, ProfilerActivity
        >>> with profile(activities=[ProfilerActivity.CPU]) as prof:
        ...     y = ember.ones(3).exp()
        >>> [e.key for e in prof.key_averages()]
        ['aten::exp']
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None, custom_trace_id_callback=None,
                 post_processing_timeout_s=None):
        self.activities = set(activities) if activities else supported_activities()
        self.record_steps = schedule is not None
        self.schedule = schedule if schedule is not None else _default_schedule_fn
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.profiler = None
        self._trace = None
        self._step_rec = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def _start_trace(self):
        if self.profiler is None:
            self.profiler = _autograd_profiler.profile(record_shapes=self.record_shapes)
            self.profiler._start_recording()

    def _stop_trace(self):
        if self.profiler is not None:
            self.profiler._stop_recording()
            self._trace, self.profiler = self.profiler, None

    def _transit(self, prev, cur):
        """Run torch's actions for the schedule moving from ``prev`` to ``cur`` (None: the
        profile stops)."""
        none, warmup = ProfilerAction.NONE, ProfilerAction.WARMUP
        record, save = ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE
        start, stop, ready = self._start_trace, self._stop_trace, self._ready

        def warn(msg):
            return lambda: warnings.warn(msg, stacklevel=4)

        actions = {
            (none, record): [start], (none, save): [start],
            (warmup, none): [warn("Incorrect schedule: WARMUP followed by NONE"), start, stop],
            (warmup, record): [start], (warmup, save): [start],
            (record, none): [warn("Incorrect schedule: RECORD followed by NONE"), stop],
            (record, warmup): [warn("Incorrect schedule: RECORD followed by WARMUP"), stop],
            (save, none): [stop, ready], (save, warmup): [stop, ready],
            (save, record): [stop, ready, start], (save, save): [stop, ready, start],
            (warmup, None): [start, stop], (record, None): [stop, ready],
            (save, None): [stop, ready],
        }
        for action in actions.get((prev, cur), ()):
            action()

    def _ready(self):
        if self.on_trace_ready is not None and self._trace is not None:
            self.on_trace_ready(self)

    def _open_step(self):
        if self.record_steps:
            self._step_rec = record_function("ProfilerStep#%d" % self.step_num)
            self._step_rec.__enter__()

    def _close_step(self):
        if self._step_rec is not None:
            self._step_rec.__exit__(None, None, None)
            self._step_rec = None

    def start(self):
        """Begin profiling (what ``with`` does on entry)."""
        self._transit(ProfilerAction.NONE, self.current_action)
        self._open_step()

    def stop(self):
        """End profiling (what ``with`` does on exit)."""
        self._close_step()
        self._transit(self.current_action, None)

    def step(self):
        """Mark the start of the next step: records or not as the schedule says."""
        self._close_step()
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)
        self._open_step()

    def _finished(self):
        if self._trace is None:
            raise AssertionError("Profiler must be initialized before exporting chrome trace")
        return self._trace

    def events(self):
        """The events recorded in the last finished trace."""
        return self._finished().function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """The last trace's events grouped by name (see ``EventList.table``)."""
        return self._finished().key_averages(group_by_input_shape)

    def export_chrome_trace(self, path, use_python_export=False):
        """Write the last trace as a Chrome trace JSON file."""
        return self._finished().export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Write nothing: ember records no stacks (``with_stack`` is accepted)."""
        with open(path, "w"):
            pass


class _Itt:
    """``torch.profiler.itt``: Intel ITT ranges (not available: no-ops)."""

    @staticmethod
    def is_available():
        return False

    @staticmethod
    def range_push(msg):
        pass

    @staticmethod
    def range_pop():
        pass

    @staticmethod
    def mark(msg):
        pass


itt = _Itt()
