"""no_grad, enable_grad, set_grad_enabled, inference_mode: thread-local switches for recording."""
from __future__ import annotations

import functools
import inspect
import threading
from typing import Any, Callable, Literal, TypeVar, cast

_F = TypeVar("_F", bound=Callable[..., Any])

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled", "set_multithreading_enabled", "is_multithreading_enabled"]


class _State(threading.local):
    enabled = True       # class attributes are each new thread's defaults
    inference = False    # inside an enabled ``inference_mode()``
    inference_made = False    # whether this thread has made an inference tensor
    anomaly = False
    retain = True        # whether the running backward keeps the graph (retain_graph)
    anomaly_check_nan = True
    multithreading = True    # set_multithreading_enabled (ember's backward is single-threaded)
    autocast: dict = {}           # device type -> dtype, inside an enabled ``amp.autocast``
    autocast_dtypes: dict = {}    # device type -> dtype set by ``set_autocast_dtype``


state = _State()


def is_grad_enabled() -> bool:
    """True when operations are being recorded for autograd in this thread."""
    return bool(state.enabled)


class _Mode:
    """Base of the grad-mode switches: a context manager that also decorates functions."""

    _target = True

    def __enter__(self) -> None:
        self._prev = state.enabled
        state.enabled = self._target

    def __exit__(self, *exc: Any) -> Literal[False]:
        state.enabled = self._prev
        return False

    def __call__(self, fn: _F) -> _F:
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen_wrapper(*args, **kwargs):
                gen = fn(*args, **kwargs)
                with self.clone():
                    item = next(gen)
                while True:
                    try:
                        sent = yield item
                    except GeneratorExit:
                        gen.close()
                        raise
                    with self.clone():
                        try:
                            item = gen.send(sent)
                        except StopIteration as stop:
                            return stop.value
            return cast(_F, gen_wrapper)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return cast(_F, wrapper)

    def clone(self) -> _Mode:
        return type(self)()


class _NoParam(_Mode):
    """A switch that also decorates without parentheses (``@no_grad``), as torch's."""

    def __new__(cls, orig_func: Any = None) -> Any:
        return super().__new__(cls) if orig_func is None else cls()(orig_func)

    def __init__(self, orig_func: Any = None) -> None:
        pass


class no_grad(_NoParam):
    """Context manager and decorator that turns off graph recording in this thread.

    Example:
        >>> import ember
        >>> x = ember.ones(2, requires_grad=True)
        >>> with ember.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    _target = False


class enable_grad(_NoParam):
    """Context manager and decorator that turns graph recording back on in this thread."""

    _target = True


class set_grad_enabled(_Mode):
    """Set grad mode to ``mode``; takes effect at once, and is undone when used with ``with``."""

    def __init__(self, mode: bool) -> None:
        self._prev = state.enabled
        self._target = bool(mode)
        state.enabled = self._target

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> Literal[False]:
        state.enabled = self._prev
        return False

    def __call__(self, fn: _F) -> _F:
        state.enabled = self._prev      # used as a decorator: only the calls switch the mode
        return super().__call__(fn)

    def clone(self) -> _Mode:
        return _Scoped(self._target)


class _Scoped(_Mode):
    def __init__(self, target: bool) -> None:
        self._target = target


class inference_mode(_Mode):
    """Like ``no_grad``, and the tensors made inside are inference tensors (``is_inference()``):
    they may not be saved for backward nor changed in place outside inference mode."""

    def __new__(cls, mode: Any = True) -> Any:
        return super().__new__(cls) if isinstance(mode, bool) else cls()(mode)

    def __init__(self, mode: bool = True) -> None:
        self._target = not mode

    def __enter__(self) -> None:
        self._prev = state.enabled
        self._prev_inference = state.inference
        state.enabled = self._target
        state.inference = not self._target

    def __exit__(self, *exc: Any) -> Literal[False]:
        state.enabled = self._prev
        state.inference = self._prev_inference
        return False

    def clone(self) -> inference_mode:
        return inference_mode(not self._target)


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()``."""
    return state.inference


class set_multithreading_enabled(_Mode):
    """Enable or disable multithreaded backward in this thread; takes effect at once and is
    undone when used with ``with``. ember's backward always runs on the calling thread, so
    only the flag changes."""

    def __init__(self, mode: bool) -> None:
        self.prev = state.multithreading
        state.multithreading = bool(mode)
        self.mode = mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> Literal[False]:
        state.multithreading = self.prev
        return False

    def clone(self) -> set_multithreading_enabled:
        return self.__class__(self.mode)


def is_multithreading_enabled() -> bool:
    """Whether multithreaded backward is enabled in this thread (``set_multithreading_enabled``)."""
    return state.multithreading
