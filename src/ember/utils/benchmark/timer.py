"""``Timer``: ``timeit.Timer`` with warm-up, thread control and replicates."""
import enum
import statistics
import textwrap
import timeit
from typing import Any, Callable, Dict, List, Optional

from . import common

__all__ = ["Timer", "Language"]


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Time ``stmt`` (after ``setup``) with ``globals``; ``label``, ``sub_label``,
    ``description`` and ``env`` name the result for ``Compare``. Only Python statements."""

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timeit.default_timer,
                 globals: Optional[Dict[str, Any]] = None, label: Optional[str] = None,
                 sub_label: Optional[str] = None, description: Optional[str] = None,
                 env: Optional[str] = None, num_threads: int = 1,
                 language=Language.PYTHON) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`." if language not in (
                Language.CPP, "cpp", "c++") else "ember's Timer runs Python statements only.")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this "
                             "code can simply be moved to `setup`.")
        import ember
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", ember)
        stmt, setup = (self._clean(s) for s in (stmt, setup))
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                          label=label, sub_label=sub_label,
                                          description=description, env=env,
                                          num_threads=num_threads)

    @staticmethod
    def _clean(code: str) -> str:
        code = textwrap.dedent(code)
        return (code[1:] if code and code[0] == "\n" else code).rstrip()

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> common.Measurement:
        """Run ``stmt`` ``number`` times (after a warm-up of ``number // 100``) as one block."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(max(int(number // 100), 2))
            return common.Measurement(number, [self._timeit(number)], self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _loop(self, number, stop, min_run_time, max_run_time=None, callback=None) -> List[float]:
        total, times, can_stop = 0.0, [], False
        with common.set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                can_stop = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time: float) -> int:
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = statistics.median_low([self._timeit(0) for _ in range(5)])
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback=None, min_run_time: float = 0.2) -> common.Measurement:
        """Blocks of ``stmt`` (a block long enough to hide the timer's overhead) until
        ``min_run_time`` seconds have run."""
        number = self._estimate_block_size(min_run_time)
        times = self._loop(number, lambda times: True, min_run_time, callback=callback)
        return common.Measurement(number, times, self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0, callback=None) -> common.Measurement:
        """Blocks until the IQR is under ``threshold`` of the median (at least 4 blocks and
        ``min_run_time``), or ``max_run_time`` has passed."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop(times):
            return len(times) > 3 and common.Measurement(
                number, times, self._task_spec).meets_confidence(threshold)
        times = self._loop(number, stop, min_run_time, max_run_time, callback)
        return common.Measurement(number, times, self._task_spec)
