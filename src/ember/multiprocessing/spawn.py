"""``torch.multiprocessing.spawn``: run ``fn(i, *args)`` in ``nprocs`` processes."""
import multiprocessing
import os
import pickle
import signal
import sys
import tempfile
import warnings

__all__ = ["spawn", "start_processes", "ProcessContext", "SpawnContext", "ProcessException",
           "ProcessRaisedException", "ProcessExitedException"]


class ProcessException(Exception):
    """A spawned process failed."""

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised an exception (its traceback is in the message)."""


class ProcessExitedException(ProcessException):
    """A spawned process ended with a signal or a non-zero exit code."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code,
                            self.signal_name)


def _wrap(fn, i, args, error_file):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        import traceback
        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    """The processes ``start_processes(..., join=False)`` started; ``join()`` waits."""

    def __init__(self, processes, error_files):
        self.processes = processes
        self.error_files = error_files

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def join(self, timeout=None, grace_period=None):
        """Wait for the processes: True once all ended well; raises the first failure."""
        error_index = None
        for index, process in enumerate(self.processes):
            process.join(timeout)
            if process.exitcode is not None and process.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return all(p.exitcode is not None for p in self.processes)
        for process in self.processes:
            if process.is_alive():
                process.terminate()
            process.join()
        failed = self.processes[error_index]
        if not os.access(self.error_files[error_index], os.R_OK):
            exitcode = failed.exitcode
            if exitcode < 0:
                try:
                    name = signal.Signals(-exitcode).name
                except ValueError:
                    name = "<Unknown signal %d>" % -exitcode
                raise ProcessExitedException(
                    "process %d terminated with signal %s" % (error_index, name),
                    error_index=error_index, error_pid=failed.pid, exit_code=exitcode,
                    signal_name=name)
            raise ProcessExitedException(
                "process %d terminated with exit code %d" % (error_index, exitcode),
                error_index=error_index, error_pid=failed.pid, exit_code=exitcode)
        with open(self.error_files[error_index], "rb") as fh:
            original_trace = pickle.load(fh)
        msg = "\n\n-- Process %d terminated with the following error:\n" % error_index
        raise ProcessRaisedException(msg + original_trace, error_index, failed.pid)


class SpawnContext(ProcessContext):
    """``ProcessContext`` under its older name."""


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start ``nprocs`` processes running ``fn(i, *args)`` with ``start_method``; wait for
    them when ``join`` (else return their ``ProcessContext``)."""
    mp = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        tf = tempfile.NamedTemporaryFile(prefix="pytorch-errorfile-", suffix=".pickle",
                                         delete=False)
        tf.close()
        os.unlink(tf.name)
        process = mp.Process(target=_wrap, args=(fn, i, args, tf.name), daemon=daemon)
        process.start()
        processes.append(process)
        error_files.append(tf.name)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run ``fn(i, *args)`` for ``i`` in ``range(nprocs)``, each in a fresh (spawned) process.

    A child's exception is raised in the parent as ``ProcessRaisedException`` with the child's
    traceback; a child killed by a signal or exiting non-zero raises
    ``ProcessExitedException``. Returns None when ``join``, else a ``ProcessContext``.
    """
    if start_method != "spawn":
        warnings.warn("This method only supports start_method=spawn (got: %s).\nTo use a "
                      "different start_method use:\n\t\t torch.multiprocessing."
                      "start_processes(...)" % start_method, FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
