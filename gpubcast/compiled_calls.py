"""The compiled hot path: a repeated small call on the CPU, from the public function to the serial
driver in one C call (``native/hot_call.cpp``: the extension module ``gpubcast.native.hot_call``,
built with the package).

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

Where the module comes from (``load``, once per process): the extension built with the package
(setup.py; a wheel needs no compiler at run time) when it imports and was built from this
``hot_call.cpp`` (its ``SOURCE_SHA256``).  Else - a source tree that was not built, or was changed
since - the fallback: ``hot_call.cpp`` built now with the system C++ compiler, once per machine
(``hostbuild``: the library is named by a hash of its source, the compiler, NumPy's version and the
Python ABI; a damaged or foreign ``.so`` is rebuilt, never loaded), with one warning saying so.  No
compiler, a failed build, a compiler that runs over ``BUILD_TIMEOUT_S`` (``$GPUBCAST_TOOL_TIMEOUT``)
or ``GPUBCAST_COMPILED_CALLS=0`` leave ``call`` answering None (the Python hot path serves), with
one warning saying why.  ``describe()`` says which it is.

Safety: each table is bounded (``MAX_ENTRIES``: full, it starts over), and an entry holds what its
addresses point into.

Threads: one thread loads (or builds) the module; no lock is held while a compiler runs, and any
other thread that asks meanwhile gets "not yet" (``load`` False: its call takes the Python hot
path, and a later call asks again).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import sys
import sysconfig
import threading
import warnings
import weakref
from pathlib import Path
from typing import NamedTuple

import numpy as np

from . import hostbuild

#: the extension module setup.py builds from ``SOURCE``
EXTENSION = "gpubcast.native.hot_call"
SOURCE = Path(__file__).resolve().parent / "native" / "hot_call.cpp"
#: entries per table (per op and option set) before it starts over
MAX_ENTRIES = 1024
#: inputs of a call an entry of the variadic driver takes (``hot_call.cpp``'s MAX_IN)
MAX_INPUTS = 16
#: seconds each compiler run of the build may take (it takes ~0.5 s); ``$GPUBCAST_TOOL_TIMEOUT`` overrides it
BUILD_TIMEOUT_S = 60
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
#: the loaded module (None until ``load`` succeeds): ``drive_parallel`` and ``configure`` are the
#: thread pool of parallel walks (``gpubcast.backends.numba.pool``)
module = None
_tables: weakref.WeakValueDictionary = weakref.WeakValueDictionary()   # id -> table
_lock = threading.Lock()   # guards _state's changes; never held while the compiler runs
_state = {"tried": False, "building": False,   # tried: the answer is final; building: a thread builds now
          "how": "not loaded yet"}               # describe()'s answer


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


#: ``function``'s ``out``: how the function takes ``out=`` (None: it takes none)
OUT_MODES = {None: 0, "keyword": 1, "positional": 2}


def function(general, declined, table: Table, inputs: int, *, extra: tuple = (), out: str | None = "positional",
             options: dict | None = None, keyed: dict | None = None):
    """``general`` (a public function) with its default call run from C first: ``inputs`` positional
    operands, ``out=`` given (by name, or with ``out="positional"`` also after them; with ``out=None``
    the function takes none, and a call passing one is ``general``'s error) or not, and
    no other argument run as ``call(table, out, *operands, *extra)``, or where C does not answer it as
    ``declined(out, *operands, *extra)`` (best ``general``'s own general path for those options, so
    the table is not asked twice).  ``options`` maps one keyword option, ``(name, value)``, to the
    table of calls with it (``("backend", "numba")``, ``("broadcast", "none")``: what ``general``
    would pick); such a call that C does not answer is ``general``'s.  With ``keyed`` (a dict), one
    more positional argument after the operands picks the table, ``keyed[argument]`` (``cast``'s
    dtype), and ``declined`` gets it last; an argument not in ``keyed`` is ``general``'s.  Any other call is
    ``general``'s (``hot_call.cpp``'s ``function``).  The object carries ``general``'s name, docs and
    signature (``__wrapped__``).  ``general`` itself where the package's built extension is not there
    (nothing is compiled at import time): its own Python hot path serves then."""
    if not _prebuilt():
        return general
    fn = module.function(general, declined, table, inputs, tuple(extra), OUT_MODES[out], options, keyed)
    functools.update_wrapper(fn, general)
    return fn


def _prebuilt() -> bool:
    """Whether the compiled module is loaded, or is the package's built extension of this source (then
    loaded now); never builds."""
    if _state["tried"] or not enabled():
        return module is not None
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest() if SOURCE.is_file() else None
    try:
        built = importlib.import_module(EXTENSION)
    except ImportError:
        return False
    return (digest is None or built.SOURCE_SHA256 == digest) and load()


def load() -> bool:
    """Load the compiled module (the package's extension, else built now); whether ``call`` is now
    the compiled one.  False at once while another thread loads it (the caller takes the Python
    hot path)."""
    global call, key, _entry, module
    if _state["tried"]:
        return call is not _absent_call
    with _lock:   # claims the load; released before any compiler runs
        if _state["tried"] or _state["building"]:
            return call is not _absent_call
        if not enabled():
            _state.update(tried=True, how="off (GPUBCAST_COMPILED_CALLS=0)")
            return False
        _state["building"] = True
    loaded, how, note = None, "", ""
    try:
        loaded, how, note = _module()
    except Exception as e:  # noqa: BLE001 - no compiler, headers, a failed or timed-out build: the Python path serves
        how = f"unavailable: {e if isinstance(e, Unavailable) else f'{type(e).__name__}: {_first_line(e)}'}"
        note = (f"the compiled hot path is {how}. Repeated small calls take the Python hot path (the same "
                f"values, slower). Install gpubcast from a wheel or with pip install . (it builds the extension), "
                f"or give a C++ compiler ($CXX, or g++ or c++ on PATH) with Python's headers; "
                f"GPUBCAST_COMPILED_CALLS=0 silences this")
    finally:   # an interrupt leaves the answer open: a later call loads again
        with _lock:
            if loaded is not None:
                key, _entry, call, module = loaded.key, loaded.entry, loaded.call, loaded
            if how:
                _state.update(tried=True, how=how)
            _state["building"] = False
    if note:
        warnings.warn(f"gpubcast: {note}", RuntimeWarning, stacklevel=3)
    return loaded is not None


def describe() -> str:
    """Where the compiled hot path's module came from, or why there is none (``gpubcast info``)."""
    return _state["how"]


class Unavailable(RuntimeError):
    """The extension is not built and building it now failed."""


def _module():
    """(module, how it came, a note to warn with or ""): the hot path's module (``native_module``)."""
    return native_module("hot_call", "gpubcast's compiled hot path")


def native_module(name: str, purpose: str):
    """(module, how it came, a note to warn with or ""): the extension ``gpubcast.native.<name>`` built
    with the package when it imports and was built from ``native/<name>.cpp``; else that source built
    now (``Unavailable`` when that fails).  Also the compiled CUDA launch path's (``cuda_launch``)."""
    extension, source = f"gpubcast.native.{name}", SOURCE.with_name(f"{name}.cpp")
    digest = hashlib.sha256(source.read_bytes()).hexdigest() if source.is_file() else None
    try:
        module = importlib.import_module(extension)
    except ImportError as e:
        why = f"{extension} is not built ({type(e).__name__}: {_first_line(e)})"
    else:
        if digest is None or module.SOURCE_SHA256 == digest:
            return module, f"{extension}, built with the package ({module.__file__})", ""
        why = f"{extension} was built from another {source.name} than {source} (changed since it was installed)"
    try:
        module = _build(extension, source, purpose, digest or "")
    except Exception as e:   # re-raised: every failure to build is reported the same way
        raise Unavailable(f"{why}, and building it now failed ({type(e).__name__}: {_first_line(e)})") from e
    return module, f"{extension}, built at run time ({why})", (
        f"{why}; built it now with the C++ compiler instead (once per machine, cached). Installing gpubcast "
        f"(pip install ., or make install in a checkout) builds it with the package")


def _first_line(e: Exception) -> str:
    """The first line of ``e``'s message, and of the compiler's first error for a failed build."""
    line = str(e).splitlines()[0] if str(e) else ""
    log = [x.strip() for x in getattr(e, "log", "").splitlines() if x.strip()]
    errors = [x for x in log if "error" in x.lower()] or log
    return f"{line} {errors[0][:300]}" if errors else line


def _forked_child() -> None:
    """A child forked while a thread of its parent built the library (or held ``_lock``) asks again:
    that thread is not in it."""
    global _lock
    _lock = threading.Lock()
    _state["building"] = False


os.register_at_fork(after_in_child=_forked_child)


def _build(extension: str, source: Path, purpose: str, digest: str):
    """``source`` built with the system C++ compiler (a proven cached library, else built now) and
    loaded as ``extension``."""
    # what the binary depends on besides its text and compiler: part of the cache key
    text = (f"// numpy {np.__version__}, python {sys.version.split()[0]} {sysconfig.get_config_var('EXT_SUFFIX')}\n"
            + source.read_text())
    includes = (f"-I{sysconfig.get_paths()['include']}", f"-I{np.get_include()}")
    lib = hostbuild.build_library("cpu", source.stem, text, (*FLAGS, f'-DGB_SOURCE_SHA256="{digest}"'), includes,
                                  purpose=purpose, timeout=BUILD_TIMEOUT_S)
    loader = importlib.machinery.ExtensionFileLoader(extension, str(lib))
    module = importlib.util.module_from_spec(importlib.util.spec_from_file_location(extension, lib, loader=loader))
    loader.exec_module(module)
    hostbuild.release(lib)   # a private build: its file removed, the loaded module stays
    return module


class Cast(NamedTuple):
    """The slot of an input array that a call converts to ``dtype`` first (``dtype=``, mixed types)."""
    dtype: np.dtype


class Native(NamedTuple):
    """What a runner runs, described to C: ``driver(row, p0..p3, meta)`` (0: NumPy's cast), or with
    ``variadic`` ``driver(row, operand addresses, meta)``; with ``chunks`` > 0, the walk's chunks run
    on the thread pool instead (``chunk`` the chunk runner, ``check`` the operands' check).  A call's
    new output is ``allocate(shape, dtype)``'s (the host pool's, for large outputs), or with None
    NumPy's ``empty`` in C."""
    driver: int
    row: int
    meta: int
    variadic: bool = False
    chunk: int = 0
    check: int = 0
    chunks: int = 0
    allocate: object = None


def register(table: dict, out, inputs, native: Native, slots, out_dtype, out_shape, keep,
             cast_out: bool = False) -> bool:
    """Add the entry of this call (``out``, ``inputs``, as passed) running ``native``; ``slots`` per
    input (None: an array as it is; ``Cast(dtype)``: an array converted first; else the loop dtype
    of a scalar); with ``cast_out``, the result is converted into ``out``.  Whether it was added (no
    library, no key, too many inputs, or a scalar C does not convert: not).

    ``native`` may instead be a device program (``gpubcast.cuda.compiled_launch.Program``: it has
    ``register_call``), which adds its own entry to the same table."""
    if hasattr(native, "register_call"):
        return native.register_call(table, out, inputs, slots, out_dtype, out_shape, keep, cast_out)
    if not load() or len(inputs) > (MAX_INPUTS if native.variadic else 3) or not native.driver and any(
            dt is not None for dt in slots):
        return False   # NumPy's cast (driver 0) takes an array only
    k = key(out, *inputs)
    if k is None:
        return False
    codes, casts = [], []
    for x, dt in zip(inputs, slots):
        if dt is None or type(dt) is Cast:
            if type(x) is not np.ndarray:   # only an array is passed as it is, or converted
                return False
            codes.append(0)
            casts.append(None if dt is None else dt.dtype)
        elif isinstance(x, np.generic) or dt.num in PYTHON_SCALAR_LOOPS and dt.isnative:
            codes.append(1 + dt.num)   # 0 is an array's slot (NPY_BOOL's number is 0)
            casts.append(None)
        else:
            return False
    dtypes = tuple(x.dtype for x in (out, *inputs) if isinstance(x, np.ndarray))  # the key's dtype objects
    e = _entry(native.driver, native.row, native.meta, tuple(codes), np.dtype(out_dtype), tuple(out_shape),
               (keep, dtypes), native.variadic, tuple(casts) if any(c is not None for c in casts) else None,
               cast_out, native.chunk, native.check, native.chunks, native.allocate)
    if len(table) >= MAX_ENTRIES and k not in table:
        table.clear()
    table[k] = e
    return True
