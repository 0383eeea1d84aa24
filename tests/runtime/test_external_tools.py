"""Every external tool gpubcast runs has a timeout (gpubcast.external_tools): a tool that never returns
is stopped with everything it started, one that waits on its standard input gets none, and
``$GPUBCAST_TOOL_TIMEOUT`` sets the seconds (a bad value is a clear error)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from gpubcast import external_tools


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def _running(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie, killed and not yet reaped by its new parent, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def test_a_tool_that_never_returns_is_stopped_with_its_children(tmp_path):
    pids = tmp_path / "pids"
    tool = _script(tmp_path / "hangs", f'sleep 60 & echo $! > {pids}\nwait\n')
    start = time.monotonic()
    with pytest.raises(external_tools.ToolTimeout, match=r"test build: .*hangs did not finish within 0\.5 s"):
        external_tools.run([str(tool)], timeout=0.5, what="test build")
    assert time.monotonic() - start < 5
    child = int(pids.read_text())
    deadline = time.monotonic() + 5
    while _running(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(child), "the tool's child outlived the timeout"


def test_a_tool_gets_no_standard_input_and_its_output_comes_back(tmp_path):
    tool = _script(tmp_path / "asks", 'read answer; echo "got [$answer]"; echo "\\377 note" >&2; exit 3\n')
    done = external_tools.run([str(tool)], timeout=10, what="test")
    assert done.returncode == 3 and done.stdout == "got []\n" and done.stderr.endswith(" note\n")


def test_the_timeout_comes_from_the_environment_when_set(monkeypatch):
    monkeypatch.delenv(external_tools.TIMEOUT_ENV, raising=False)
    assert external_tools.timeout(30) == 30
    monkeypatch.setenv(external_tools.TIMEOUT_ENV, " 2.5 ")
    assert external_tools.timeout(30) == 2.5
    for bad in ("abc", "0", "-1", "nan", "inf"):
        monkeypatch.setenv(external_tools.TIMEOUT_ENV, bad)
        with pytest.raises(ValueError, match=r"GPUBCAST_TOOL_TIMEOUT=.* is not a number of seconds above 0"):
            external_tools.timeout(30)


def test_a_tool_that_cannot_start_is_an_oserror(tmp_path):
    with pytest.raises(OSError):
        external_tools.run([str(tmp_path / "no-such-tool")], timeout=5, what="test")
    assert os.listdir(tmp_path) == []


def test_a_user_kernel_built_by_a_compiler_that_never_returns_fails_clearly(tmp_path, monkeypatch):
    import numpy as np

    import gpubcast as gb
    cxx = _script(tmp_path / "hangs-c++", 'if [ "$1" = --version ]; then echo "fake c++ 1.0"; exit 0; fi\nsleep 60\n')
    monkeypatch.setenv("CXX", str(cxx))
    monkeypatch.setenv(external_tools.TIMEOUT_ENV, "1")
    monkeypatch.setenv("GPUBCAST_CACHE_DIR", str(tmp_path / "cache"))
    kernel = gb.ElementwiseKernel("float64 x", "float64 y", "y = x + 41", "never_built_here")
    start = time.monotonic()
    with pytest.raises(external_tools.ToolTimeout, match=r"ElementwiseKernel .*did not finish within 1 s"):
        kernel(np.arange(3.0))
    assert time.monotonic() - start < 10
