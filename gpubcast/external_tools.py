"""Running an external tool (the host C++ compiler, cuobjdump, nvdisasm): every run has a timeout,
and a tool that runs over it is stopped together with every process it started.

``run(args, timeout=..., what=...)`` returns the finished process (``stdout``, ``stderr`` as text,
undecodable bytes replaced); ``ToolTimeout`` when it ran over ``timeout`` seconds.  The tool runs
in a session of its own with no standard input: a wrapper that waits for a terminal, a network or
a licence server cannot hang its caller, and on a timeout (or an interrupt of the caller) the whole
process group is killed (a compiler driver's ``cc1plus`` and ``as``, a wrapper's children), so
nothing it started keeps running.

``timeout(default)``: the seconds a caller gives a tool, ``$GPUBCAST_TOOL_TIMEOUT`` when it is set
(one knob for every tool: a slow machine raises it, a test lowers it).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess

#: the environment variable that sets every tool's timeout (seconds)
TIMEOUT_ENV = "GPUBCAST_TOOL_TIMEOUT"


class ToolTimeout(RuntimeError):
    """An external tool ran over its timeout and was stopped."""


def timeout(default: float) -> float:
    """Seconds a tool may run: ``$GPUBCAST_TOOL_TIMEOUT`` when set, else ``default``; ValueError
    when the variable is not a number of seconds above 0."""
    text = os.environ.get(TIMEOUT_ENV, "").strip()
    if not text:
        return default
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError(f"{TIMEOUT_ENV}={text!r} is not a number of seconds above 0 (the time an external tool, "
                         f"such as the C++ compiler, may run); set it to one, or unset it for the defaults")
    return seconds


def run(args, *, timeout: float, what: str) -> subprocess.CompletedProcess:
    """Run ``args`` to its end, at most ``timeout`` seconds (``what``: who runs it, for the error).
    OSError when it cannot start; ``ToolTimeout`` when it ran over (it and its children killed)."""
    with subprocess.Popen(list(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, errors="replace", start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _stop(proc)
            raise ToolTimeout(f"{what}: {args[0]} did not finish within {timeout:g} s and was stopped (set "
                              f"{TIMEOUT_ENV} to more seconds if it is only slow)") from None
        except BaseException:   # an interrupt of the caller: the tool does not outlive the call
            _stop(proc)
            raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _stop(proc: subprocess.Popen) -> None:
    """Kill ``proc``'s process group (its session: it and what it started) and reap ``proc``."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.kill()   # in case the group was already gone but the process was not
    proc.wait()
