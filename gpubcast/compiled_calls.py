"""The compiled hot path: a repeated small call on the CPU, from the public function to the serial
driver in one C call (``hot_call.cpp``, built once per machine with the system C++ compiler).

Why: a call that repeats already skips planning (``hot_calls``), but the Python left around it -
building the signature from ``dtype``/``shape``/``strides`` attributes, the runner closure, Numba's
dispatcher typing four arguments - costs 1-2 us, two to five times NumPy's whole call on a small
array.  ``hot_call.cpp`` computes the same signature from the arrays' C fields, finds the entry and
calls the driver's address: NumPy's own per-call cost (the "Small calls" table of docs/reports/cpu-vm.md).

Who uses it: a NumPy-style function calls ``call(table, out, *inputs)`` first (its ``table``: one
dict per op and option set, from ``table_for``); None means "not here", and the function takes
``dispatch.apply``.  ``dispatch`` adds an entry when it prepares a serial runner that can be
described to C (``register``).  A scalar operand travels by value: C converts it only where the
conversion is exact and NumPy's (``hot_call.cpp``); any other value takes the Python path.

Safety: the library is named by a hash of its source, the compiler, NumPy's version and the
Python ABI (``hostbuild``; a damaged or foreign ``.so`` is rebuilt, never loaded); no compiler,
a failed build or ``GPUBCAST_COMPILED_CALLS=0`` leave ``call`` answering None (the Python hot path
serves).  Each table is bounded (``MAX_ENTRIES``: full, it starts over), and an entry holds what
its addresses point into.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import sysconfig
import threading
import warnings
import weakref
from pathlib import Path

import numpy as np

from . import hostbuild

#: entries per table (per op and option set) before it starts over
MAX_ENTRIES = 1024
FLAGS = ("-std=c++17", "-O2", "-fPIC", "-shared", "-w")
#: NumPy type numbers of the loop dtypes ``hot_call.cpp`` converts Python scalars into
PYTHON_SCALAR_LOOPS = frozenset(np.dtype(t).num for t in (
    bool, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float32, np.float64, np.complex128))


def _absent_call(table, out, *inputs):
    """``call`` without the library: never answers."""
    return None


class Table(dict):
    """One table of entries (a dict, referenced weakly by ``clear``'s registry, so a table dies with
    the function that owns it, e.g. a ``gb.fuse`` object)."""
    __slots__ = ("__weakref__",)


call = _absent_call
key = None
_entry = None
_tables: weakref.WeakValueDictionary = weakref.WeakValueDictionary()   # id -> table
_lock = threading.Lock()
_state = {"tried": False}


def enabled() -> bool:
    return os.environ.get("GPUBCAST_COMPILED_CALLS", "1") != "0"


def table_for(_name: str) -> Table:
    """A new table (``call``'s first argument) for one op and option set; ``_name`` documents it."""
    table = Table()
    _tables[id(table)] = table
    return table


def clear() -> None:
    """Forget every entry (tests; a backend that changed)."""
    for table in list(_tables.values()):
        table.clear()


def load() -> bool:
    """Build (once per machine) and load ``hot_call.cpp``; whether ``call`` is now the compiled one."""
    global call, key, _entry
    with _lock:
        if _state["tried"]:
            return call is not _absent_call
        _state["tried"] = True
        if not enabled():
            return False
        try:
            module = _build()
        except Exception as e:  # noqa: BLE001 - no compiler, headers or a failed build: the Python path serves
            warnings.warn(f"gpubcast: the compiled hot path is unavailable ({type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else ''}); repeated small calls take the "
                          f"Python hot path (GPUBCAST_COMPILED_CALLS=0 silences this)", RuntimeWarning,
                          stacklevel=3)
            return False
        key, _entry, call = module.key, module.entry, module.call
        return True


def _build():
    source = Path(__file__).with_name("hot_call.cpp").read_text()
    # what the binary depends on besides its text and compiler: part of the cache key
    text = (f"// numpy {np.__version__}, python {sys.version.split()[0]} {sysconfig.get_config_var('EXT_SUFFIX')}\n"
            + source)
    includes = (f"-I{sysconfig.get_paths()['include']}", f"-I{np.get_include()}")
    lib = hostbuild.build_library("cpu", "hot_call", text, FLAGS, includes,
                                  purpose="gpubcast's compiled hot path")
    name = "gpubcast_hot_call"
    spec = importlib.util.spec_from_file_location(name, lib,
                                                  loader=importlib.machinery.ExtensionFileLoader(name, str(lib)))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def register(table: dict, out, inputs, driver: int, row: int, meta: int, slots, out_dtype, out_shape,
             keep) -> bool:
    """Add the entry of this call (``out``, ``inputs``, as passed): ``driver(row, p0..p3, meta)`` (0:
    NumPy's cast), ``slots`` per input (None: an array as it is; else the loop dtype of a scalar).
    Whether it was added (no library, no key, or a scalar C does not convert: not)."""
    if not load() or len(inputs) > 3 or not driver and any(dt is not None for dt in slots):
        return False   # NumPy's cast (driver 0) takes an array only
    k = key(out, *inputs)
    if k is None:
        return False
    codes = []
    for x, dt in zip(inputs, slots):
        if dt is None:
            if type(x) is not np.ndarray:   # only an array is passed as it is
                return False
            codes.append(0)
        elif isinstance(x, np.generic) or dt.num in PYTHON_SCALAR_LOOPS and dt.isnative:
            codes.append(1 + dt.num)   # 0 is an array's slot (NPY_BOOL's number is 0)
        else:
            return False
    dtypes = tuple(x.dtype for x in (out, *inputs) if isinstance(x, np.ndarray))  # the key's dtype objects
    e = _entry(driver, row, meta, tuple(codes), np.dtype(out_dtype), tuple(out_shape), (keep, dtypes))
    if len(table) >= MAX_ENTRIES and k not in table:
        table.clear()
    table[k] = e
    return True
