"""The Numba backend's compiled functions, kept in gpubcast's cache (``gpubcast.cache``) and proven
before use.

Numba's own on-disk cache (``cache=True``) gave wrong values and once hung a process in LLVM's
``parse_bitcode`` after a few processes had filled an empty cache together.  Its design allows it:

- one index file per function maps signatures to data files numbered per process, so two processes
  compiling different signatures of one function at once can leave an index that names the other's
  data (numba#4807, numba#10128; a fix is proposed in numba PR #10545, not merged);
- symbol names carry a per-process counter (``FunctionIdentity._unique_ids``): two closures of one
  qualname compiled in two processes can get one symbol name for two bodies, and a process that
  loads both links one body for both (numba#10486) -- gpubcast's row functions are such closures;
- data files are unpickled and their bitcode parsed unchecked: a truncated or foreign file can
  crash or hang the process;
- it writes next to the sources (``__pycache__``, read-only in an installed package).

Here instead (the same interface to Numba: ``Dispatcher._cache`` / ``CFunc._cache``):

- every overload (function x signature x target) is one entry of ``gpubcast.cache``, kind
  ``numba``: no index shared between signatures or functions.  Its key names the function's
  *identity* (module and qualname, or for a generated row function its factory and everything it
  was made from: op, codec, raw types), a hash of the Numba backend's sources, the Python, Numba and
  llvmlite versions, and Numba's own key (signature, target CPU and its features, hashes of the
  bytecode and of the closure's values -- pickled with an intrinsic or a dispatcher written as what
  it was made from, not by its uuid, which is drawn anew in every process: with it, a closure
  holding one, as a unary row holds its contiguous loop, missed in every new process).  The entry
  is proven (key and digest) before a byte of it reaches pickle or LLVM, and written atomically;
- symbol uids count from a random start drawn per process (again after ``fork``): no two processes
  give one symbol to two bodies;
- a load that fails in any way is a miss (the function is compiled); a save that fails is skipped
  (``gpubcast.cache`` warns once) and the compiled code lives in memory.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import os
import pickle
import secrets
import sys

import llvmlite
import numba
from numba.core import bytecode, caching, extending, serialize
from numba.core.dispatcher import Dispatcher

from ... import cache

_HERE = os.path.dirname(__file__)


def sources_hash(folder: str = _HERE) -> str:
    """Hash of the Numba backend's sources (every ``.py`` file under ``folder``, this package, its
    subpackages included, by path relative to it, sorted): part of every key, so an edit of any codec,
    scalar semantics, driver or row factory retires every entry made before it."""
    paths = sorted(os.path.relpath(os.path.join(d, name), folder).replace(os.sep, "/")
                   for d, _, names in os.walk(folder) for name in names if name.endswith(".py"))
    h = hashlib.sha256()
    for path in paths:
        with open(os.path.join(folder, path), "rb") as f:
            h.update(path.encode() + b"\0" + f.read())
    return h.hexdigest()[:24]


SOURCE_HASH = sources_hash()
_VERSIONS = (sys.version, numba.__version__, llvmlite.__version__)

#: options of every compiled function (cached here, not by Numba's ``cache=True``)
JIT = dict(nogil=True, error_model="numpy", boundscheck=False)

#: options of every helper a compiled function calls (``register_jitable``, ``overload`` below): no C
#: wrapper.  Numba gives each overload one by default, though only compiled code calls a helper;
#: without it 21 rows compiled on an empty cache in 10.6-11.6 s, not 12.8-14.1 (alternating runs).
HELPER = {"no_cfunc_wrapper": True}


def register_jitable(fn=None, **options):
    """``numba.extending.register_jitable`` with ``HELPER``'s options (and ``options``)."""
    decorate = extending.register_jitable(**HELPER, **options)  # noqa: TID251 - the one wrapper of it
    return decorate if fn is None else decorate(fn)


def overload(func, jit_options=None, **kwargs):
    """``numba.extending.overload`` with ``HELPER``'s options (and ``jit_options``)."""
    return extending.overload(func, jit_options={**HELPER, **(jit_options or {})}, **kwargs)  # noqa: TID251 - the one wrapper


def _random_uids() -> None:
    """Symbol uids from a random 62-bit start in this process (numba#10486)."""
    bytecode.FunctionIdentity._unique_ids = itertools.count(secrets.randbits(62))


_random_uids()
os.register_at_fork(after_in_child=_random_uids)  # a forked child would repeat its parent's uids


def _made_from(*what):
    """Stands for an intrinsic or a dispatcher in a key's pickle (keys are hashed, never unpickled)."""
    raise TypeError("a cache key's pickle is not for loading")


class _KeyPickler(serialize.NumbaPickler):
    """Numba's pickler, but an intrinsic or a dispatcher is pickled as what it was made from (its
    Python definition and options), not by its per-process uuid: the same closure, the same bytes in
    every process."""

    def reducer_override(self, obj):
        if isinstance(obj, extending._Intrinsic):
            return _made_from, ("intrinsic", obj._name, obj._defn)
        if isinstance(obj, Dispatcher):
            return _made_from, ("dispatcher", obj.py_func, sorted(obj.targetoptions.items()))
        return super().reducer_override(obj)


def key_bytes(value) -> bytes:
    """``value`` pickled for a key (``_KeyPickler``): the same bytes in every process."""
    with io.BytesIO() as buf:
        _KeyPickler(buf, protocol=4).dump(value)
        return buf.getvalue()


def closure_digest(fn) -> str:
    """Hash of the values ``fn``'s closure holds, the same in every process."""
    if fn.__closure__ is None:
        return ""
    return hashlib.sha256(key_bytes(tuple(c.cell_contents for c in fn.__closure__))).hexdigest()


class _Impl(caching.CompileResultCacheImpl):
    """Numba's (de)serialisation of a compile result, without its cache-file locator search."""

    def __init__(self, py_func):  # no locator: gpubcast.cache says where entries go
        self._lineno = py_func.__code__.co_firstlineno
        self._locator = type("_Where", (), {"_py_file": py_func.__code__.co_filename})()


class VerifiedCache(caching._Cache):
    """A Numba cache whose overloads are entries of ``gpubcast.cache`` (see the module's doc)."""

    def __init__(self, py_func, identity: str):
        self._py_func = py_func
        self._identity = identity
        self._impl = _Impl(py_func)
        self._enabled = True
        self.hits = self.misses = 0

    def __repr__(self):
        return f"<VerifiedCache {self._identity}>"

    @property
    def cache_path(self):
        d = cache.directory("numba")
        return None if d is None else str(d)

    def enable(self):
        self._enabled = True

    def disable(self):
        self._enabled = False

    def flush(self):
        pass

    def key(self, sig, codegen) -> str:
        """The entry key of overload ``sig`` (text: it is compared whole on every load)."""
        # Numba's own key (caching.Cache._index_key), its closure hash made deterministic
        code = hashlib.sha256(self._py_func.__code__.co_code).hexdigest()
        numba_key = (sig, codegen.magic_tuple(), (code, closure_digest(self._py_func)))
        return repr((self._identity, SOURCE_HASH, _VERSIONS, numba_key))

    def load_overload(self, sig, target_context):
        if not self._enabled:
            return None
        target_context.refresh()
        key = self.key(sig, target_context.codegen())
        path = cache.entry_path("numba", self._identity, key)
        payload = cache.read(path, key)
        if payload is not None:
            try:
                result = self._impl.rebuild(target_context, pickle.loads(payload))
                self.hits += 1
                return result
            except Exception:  # noqa: BLE001 - a proven entry Numba cannot rebuild: compile instead
                cache.discard(path)
        self.misses += 1
        return None

    def save_overload(self, sig, data):
        if not self._enabled or not self._impl.check_cachable(data):
            return
        key = self.key(sig, data.codegen)
        path = cache.entry_path("numba", self._identity, key)
        if path is not None:
            cache.write(path, key, serialize.dumps(self._impl.reduce(data)))


def njit(identity: str | None = None, **options):
    """``numba.njit(**options)`` whose overloads are cached in ``gpubcast.cache`` under
    ``identity`` (default: the function's module and qualname)."""
    def wrap(fn):
        dispatcher = numba.njit(**options)(fn)
        dispatcher._cache = VerifiedCache(fn, identity or f"{fn.__module__}.{fn.__qualname__}")
        return dispatcher
    return wrap


def cfunc(signature, fn, identity: str, **options):
    """``numba.cfunc(signature, **options)(fn)`` compiled now, cached in ``gpubcast.cache`` under
    ``identity`` (which must name everything ``fn`` was made from)."""
    from numba.core import sigutils
    from numba.core.ccallback import CFunc
    result = CFunc(fn, sigutils.normalize_signature(signature), locals={}, options=options)
    result._cache = VerifiedCache(fn, identity)
    result.compile()
    return result
