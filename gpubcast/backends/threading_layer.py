"""The threading layer of the parallel CPU drivers (Numba's ``prange``): TBB where it loads.

Numba picks a layer on first parallel use: TBB if it can load ``libtbb``, else OpenMP, else its
own workqueue.  GNU OpenMP is not fork-safe: a child forked after its threads started is killed at
its first parallel region ("fork() called from a process already using GNU OpenMP"), so a
``multiprocessing`` pool with Linux's default ``fork`` start never returns.  workqueue is
fork-safe but aborts when several threads run parallel code at once.  TBB is fork- and thread-safe,
and as fast here (docs/guide/reliability.md).

gpubcast depends on the ``tbb`` wheel where there is one (Linux x86-64).  The wheel puts
``libtbb.so.12`` in the environment's ``lib/``, which the loader of a venv does not search, so
``preload`` loads it by path on ``import gpubcast`` (``gpubcast.backends``), before Numba picks
(this module imports no Numba: ``import gpubcast`` does not).  A layer the user named
(``NUMBA_THREADING_LAYER``, ``numba.config.THREADING_LAYER``) is kept; where OpenMP runs anyway,
``numba.backend`` has a forked child run its ops on the serial drivers.

The library is checked before it is loaded (``library_check``): loading a truncated one kills the
process with SIGBUS.  A damaged or missing one is not loaded: Numba then picks OpenMP or workqueue,
as it would with no ``tbb`` installed, and one ``DamagedLibraryWarning`` names the file and says
to reinstall ``tbb``.
"""

from __future__ import annotations

import ctypes
import os
import sys
import warnings

from . import library_check

#: the file name Numba loads TBB by (``numba.np.ufunc.parallel._check_tbb_version_compatible``)
LIBRARY = {"win32": "tbb12.dll", "darwin": "libtbb.12.dylib"}.get(sys.platform, "libtbb.so.12")

#: what each layer means for gpubcast's parallel drivers (``describe``)
SAFETY = {
    "tbb": "fork- and thread-safe",
    "omp": "thread-safe; a forked child runs ops serially (pip install tbb for parallel children)",
    "workqueue": "fork-safe; parallel ops from several threads at once can abort the process",
}


class DamagedLibraryWarning(RuntimeWarning):
    """The ``tbb`` wheel's library is damaged or missing: not loaded, and Numba picks another layer."""


def started() -> str | None:
    """The layer Numba has started in this process, or None (not yet: no parallel code ran)."""
    numba = sys.modules.get("numba")  # not imported: nothing started (and no import here)
    try:
        return None if numba is None else numba.threading_layer()
    except ValueError:  # "Threading layer is not initialized."
        return None


def named() -> str:
    """The layer the user asked Numba for: "default" unless ``NUMBA_THREADING_LAYER`` or
    ``numba.config.THREADING_LAYER`` says otherwise."""
    numba = sys.modules.get("numba")
    if numba is None:  # numba.config reads the variable when Numba is imported
        return os.environ.get("NUMBA_THREADING_LAYER", "default").lower()
    return str(numba.config.THREADING_LAYER).lower()


def _candidates():
    """Where the ``tbb`` distribution's library may be: the environment's ``lib/``, then the files
    its metadata lists (a ``--user`` or ``--prefix`` install)."""
    yield os.path.join(sys.prefix, *(("Library", "bin") if sys.platform == "win32" else ("lib",)), LIBRARY)
    import importlib.metadata  # only here: its import costs more than the rest of ``preload``
    try:
        files = importlib.metadata.files("tbb") or ()
    except importlib.metadata.PackageNotFoundError:
        return
    for f in files:
        if f.name == LIBRARY:
            yield str(f.locate())


def preload() -> str | None:
    """Load the ``tbb`` distribution's library by path, so that Numba's default choice finds TBB:
    its path, or None (a layer already started or named by the user, no ``tbb`` installed, or its
    library damaged or missing: then with one ``DamagedLibraryWarning``)."""
    if started() is not None or named() in ("omp", "workqueue"):
        return None
    seen, problems = set(), []
    for path in _candidates():
        same = os.path.normcase(os.path.realpath(path))
        if same in seen:  # the environment's lib/ is usually the file the metadata lists as well
            continue
        seen.add(same)
        why = library_check.damage(path, "tbb")
        if why == library_check.ABSENT:
            continue
        if why is None:
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)  # global: Numba's tbbpool links against it
                return path
            except OSError as e:
                why = f"cannot be loaded ({e})"
        problems.append(f"{path} {why}")
    if problems:
        _warn_once("; ".join(problems))
    return None


_WARNED: set = set()


def _warn_once(problems: str) -> None:
    """One ``DamagedLibraryWarning`` per process and problem (``preload`` runs again for ``describe``)."""
    if problems in _WARNED:
        return
    _WARNED.add(problems)
    then = ("Numba's parallel code cannot start while the threading layer asked for is tbb" if named() == "tbb"
            else "Parallel CPU ops run on Numba's next threading layer (OpenMP or workqueue), with right values "
                 "but without TBB's fork and thread safety")
    warnings.warn(f"gpubcast: TBB's library is not loaded: {problems}. {then}. Reinstall TBB to fix it: "
                  f"pip install --force-reinstall tbb", DamagedLibraryWarning, stacklevel=3)


def describe() -> str:
    """One line for ``gpubcast info``: the layer of the parallel drivers (started now if need be,
    as the first large op would) and what it means for ``fork`` and threads."""
    preload()
    try:
        import numba
        threads = numba.get_num_threads()  # starts the layer: Numba picks it here
        layer = numba.threading_layer()
    except Exception as e:  # noqa: BLE001 - report any failure to start, never crash
        return f"unavailable ({type(e).__name__}: {e})"
    chosen = named()
    if chosen == "default":
        how = "Numba's default choice"
    elif "NUMBA_THREADING_LAYER" in os.environ:
        how = f"NUMBA_THREADING_LAYER={chosen}"
    else:
        how = f"numba.config.THREADING_LAYER={chosen!r}"
    return f"{layer}, {threads} threads ({how}): {SAFETY.get(layer, 'unknown to gpubcast')}"
