"""The compiled hot path (gpubcast.compiled_calls, gpubcast/native/hot_call.cpp): a repeated call it
serves gets exactly NumPy's answer, with each call's own scalar values; every call it must not serve (a
value C does not convert exactly, read-only or overlapping out=, misaligned data, another backend, a
subclass) gets the general path's answer or error.  The module is the extension built with the
package; in a source tree that was not built, it is built at run time, within a timeout, by one
thread while the others take the Python hot path, and never left behind in a temporary folder."""

import importlib
import importlib.util
import inspect
import os
import pickle
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

import gpubcast as gb
from gpubcast import api, backends, compiled_calls
from gpubcast.plan import plan as make_plan

from tests.support import ROOT

pytestmark = pytest.mark.skipif(not compiled_calls.load(), reason="no C++ compiler: the compiled path is off")


@pytest.fixture
def only_compiled(monkeypatch):
    """After it is entered, a call the compiled path does not serve fails the test."""
    def served_only_by_c(*args, **kwargs):
        raise AssertionError("this call left the compiled path")
    return lambda: monkeypatch.setattr(api, "apply", served_only_by_c)


def _warm(call, *args, **kwargs):
    for _ in range(3):   # first sighting, runner prepared (and its entry added), then C
        call(*args, **kwargs)


def _same(got, want):
    assert type(got) is np.ndarray and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


ARRAYS = {
    "f32": np.linspace(-3, 3, 32, dtype=np.float32).reshape(4, 8),
    "f64": np.linspace(-3, 3, 32).reshape(4, 8),
    "i8": np.arange(-16, 16, dtype=np.int8).reshape(4, 8),
    "u8": np.arange(32, dtype=np.uint8).reshape(4, 8),
    "i64": np.arange(-16, 16, dtype=np.int64).reshape(4, 8),
    "bool": (np.arange(32) % 3 == 0).reshape(4, 8),
    "c128": (np.arange(32) + 1j).reshape(4, 8),
}
#: every value is a Python scalar, a NumPy scalar or a 0-d array; the first one warms the entry
SCALARS = [2.0, -0.0, float("nan"), float("inf"), 1e300, 3, -7, 300, 2**40, 2**63, True, 1.5 + 2j,
           np.float32(2.5), np.float64(-1.25), np.int8(-3), np.uint64(7), np.bool_(True), np.array(4.0, np.float32)]


@pytest.mark.parametrize("name", ["add", "multiply", "subtract", "maximum", "less", "equal"])
@pytest.mark.parametrize("kind", sorted(ARRAYS))
def test_every_scalar_value_gets_numpys_answer_on_a_warm_entry(name, kind):
    x, f, ref = ARRAYS[kind], getattr(gb, name), getattr(np, name)
    for first in (2.0, 3, True, np.float32(1)):   # an entry per scalar type, then every value
        try:
            _warm(f, x, first)
        except TypeError:   # a combination NumPy rejects too (subtract of bools): checked below
            pass
        for v in SCALARS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                try:
                    want = ref(x, v)
                except (OverflowError, TypeError) as e:
                    with pytest.raises(type(e)):
                        f(x, v)
                    continue
                _same(f(x, v), want)
                _same(f(v, x), ref(v, x))


def test_the_compiled_path_serves_binary_unary_where_cast_and_clip(only_compiled):
    x, b = ARRAYS["f32"], np.arange(8, dtype=np.float32)
    calls = [(gb.add, (x, b), np.add), (gb.multiply, (x, 2.0), np.multiply), (gb.tanh, (x,), None),
             (gb.where, (x > 0, x, 0.0), np.where), (gb.cast, (x, np.float16), lambda a, t: a.astype(t)),
             (gb.clip, (x, 0.5, 1.5), np.clip), (gb.less, (x, np.float32(1)), np.less)]
    for f, args, _ in calls:
        _warm(f, *args)
    o = np.empty_like(x)
    _warm(gb.add, x, b, out=o)
    only_compiled()
    for f, args, ref in calls:
        got = f(*args)
        if ref is not None:
            _same(got, ref(*args))
        else:
            np.testing.assert_allclose(got, np.tanh(x), rtol=4e-7)
    _same(gb.multiply(x, -3.5), np.multiply(x, -3.5))      # another value: the same entry
    assert gb.add(x, b, out=o) is o
    _same(o, x + b)


def test_out_read_only_overlapping_and_misaligned_take_the_general_path():
    x = np.arange(12, dtype=np.float64)
    o = np.empty(11)
    _warm(gb.add, x[1:], x[:-1], out=o)
    ro = np.empty(11)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        gb.add(x[1:], x[:-1], out=ro)
    y = x.copy()
    want = np.add(y[1:], y[:-1])
    gb.add(y[1:], y[:-1], out=y[:-1])                 # out= partially overlapping an input (same layout)
    np.testing.assert_array_equal(y[:-1], want)
    raw = np.zeros(8 * 11 + 1, np.uint8)
    mis = np.frombuffer(raw.data, np.float64, 11, offset=1)   # misaligned, same key as x[1:]
    _same(gb.add(mis, x[:-1], out=np.empty(11)), np.add(mis, x[:-1]))
    c = np.arange(8.0)
    _warm(gb.cast, c, np.float64, out=np.empty(8))
    gb.cast(c[::-1], np.float64, out=c[::-1])          # cast into memory the input shares
    np.testing.assert_array_equal(c, np.arange(8.0))


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix is one of the subclasses
def test_layouts_dtypes_and_subclasses_key_their_own_entries():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    _warm(gb.add, x, x)
    for a in (x.T, x[:, ::-1], x.astype(">f4"), x.astype(np.float64), x[None], np.asmatrix(x)):
        want = np.add(a, a)
        got = gb.add(a, a)
        assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    m = np.ma.masked_array(x, mask=x > 5)
    got = gb.add(m, m)
    assert isinstance(got, np.ma.MaskedArray) and got.mask.tolist() == (x > 5).tolist()


def test_an_entry_never_serves_another_backend():
    x = np.arange(8.0)
    _warm(gb.add, x, 1.0)
    seen = []

    class Spy(type(backends.get("numpy"))):
        def execute(self, op, p, arrays, out):
            seen.append(op.name)
            return super().execute(op, p, arrays, out)
    with backends.registered(backends.DEFAULT_CPU, Spy()):
        _same(gb.add(x, 1.0), x + 1.0)
    assert seen == ["add"]


def test_tables_are_bounded(monkeypatch):
    monkeypatch.setattr(compiled_calls, "MAX_ENTRIES", 4)
    table = compiled_calls.table_for("test")
    for n in range(1, 12):
        x = np.ones(n)
        p = gb.plan(x, x)
        assert compiled_calls.register(table, None, (x,), compiled_calls.Native(0, 0, 0), (None,), x.dtype, p.out_shape,
                                       None)
        assert len(table) <= 4


def _python(code, tree=None, **env):
    """Run ``code`` in a new interpreter: gpubcast from ``tree`` (a folder holding a copy of the
    package) when given, else this checkout's."""
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env}, cwd=tree or ROOT)


@pytest.fixture(scope="module")
def unbuilt(tmp_path_factory):
    """A folder holding a copy of the package without its built extension (a source tree that was
    not built): its processes build ``hot_call.cpp`` at run time."""
    tree = tmp_path_factory.mktemp("unbuilt")
    shutil.copytree(ROOT / "gpubcast", tree / "gpubcast", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    return tree


def test_the_extension_built_with_the_package_is_the_one_loaded(only_compiled):
    if importlib.util.find_spec(compiled_calls.EXTENSION) is None:
        pytest.skip("this source tree was not built (make install builds gpubcast.native.hot_call)")
    extension = importlib.import_module(compiled_calls.EXTENSION)
    assert compiled_calls.load() and compiled_calls.call.__self__ is extension
    assert compiled_calls.describe().startswith("gpubcast.native.hot_call, built with the package")
    x = np.arange(5.0)
    _warm(gb.multiply, x, 2.0)
    only_compiled()
    _same(gb.multiply(x, 3.0), x * 3.0)     # answered by the extension's call


def test_a_tree_changed_since_its_build_builds_its_own_at_run_time(tmp_path):
    built = list((ROOT / "gpubcast" / "native").glob("hot_call.*.so"))
    if not built:
        pytest.skip("this source tree was not built (make install builds gpubcast.native.hot_call)")
    shutil.copytree(ROOT / "gpubcast", tmp_path / "gpubcast", ignore=shutil.ignore_patterns("__pycache__"))
    with open(tmp_path / "gpubcast" / "native" / "hot_call.cpp", "a") as f:
        f.write("// changed after the build\n")
    done = _python(CHECK + "print(c.describe())\n", tmp_path, GPUBCAST_CACHE_DIR=str(tmp_path / "cache"))
    assert done.returncode == 0, done.stderr[-3000:]
    compiled, how = done.stdout.splitlines()[-2:]
    assert compiled == "True" and how.startswith("gpubcast.native.hot_call, built at run time"), done.stdout
    assert "was built from another hot_call.cpp" in done.stderr and "built it now" in done.stderr


CHECK = ("import numpy as np, gpubcast as gb, gpubcast.compiled_calls as c\n"
         "x = np.arange(6.0)\n"
         "r = [gb.multiply(x, v) for v in (2.0, 3.0, 4.0, 5.0)]\n"
         "assert all((a == x * v).all() for a, v in zip(r, (2.0, 3.0, 4.0, 5.0)))\n"
         "print(c.call is not c._absent_call)\n")


def test_off_switch_missing_compiler_and_damaged_library(tmp_path, unbuilt):
    cache = tmp_path / "cache"
    off = _python(CHECK, unbuilt, GPUBCAST_COMPILED_CALLS="0", GPUBCAST_CACHE_DIR=str(cache))
    assert off.returncode == 0 and off.stdout.strip() == "False" and "unavailable" not in off.stderr
    none = _python(CHECK, unbuilt, CXX=str(tmp_path / "no-such-compiler"), GPUBCAST_CACHE_DIR=str(cache))
    assert none.returncode == 0 and none.stdout.strip() == "False"
    assert "compiled hot path is unavailable" in none.stderr and "is not built" in none.stderr
    on = _python(CHECK, unbuilt, GPUBCAST_CACHE_DIR=str(cache))
    assert on.returncode == 0 and on.stdout.strip() == "True", on.stderr
    assert "is not built" in on.stderr and "built it now" in on.stderr    # the run-time build's one warning
    (lib,) = cache.rglob("hot_call-*.so")
    lib.write_bytes(b"\0not a library" * 10)             # damaged: rebuilt, never loaded
    again = _python(CHECK, unbuilt, GPUBCAST_CACHE_DIR=str(cache))
    assert again.returncode == 0 and again.stdout.strip() == "True", again.stderr
    assert lib.read_bytes()[:4] == b"\x7fELF"


def test_front_ends_take_the_compiled_path_and_keep_their_type_constraints(monkeypatch):
    import gpubcast.onnx as gbo
    import gpubcast.openvino as gbv
    from gpubcast.onnx import constraints

    x, b = ARRAYS["f32"], np.arange(8, dtype=np.float32)
    calls = [(gbo.Add, (x, b), np.add(x, b)), (gbo.Tanh, (x,), None), (gbv.Multiply, (x, b), np.multiply(x, b)),
             (gbv.SoftSign, (x,), x / (1 + np.abs(x)))]
    for f, args, _ in calls:
        _warm(f, *args)

    def boom(*args, **kwargs):
        raise AssertionError("this call left the compiled path")
    with monkeypatch.context() as m:
        m.setattr(constraints, "apply", boom)
        m.setattr(gbo, "apply", boom)
        m.setattr(gbv, "apply", boom)
        for f, args, want in calls:
            got = f(*args)
            if want is None:
                np.testing.assert_allclose(got, np.tanh(x), rtol=4e-7)
            else:
                np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(TypeError, match="type constraint"):
        gbo.Add(x, b.astype(np.float64))           # two element types: ONNX's error, never a cast
    with pytest.raises(TypeError):
        gbo.Tanh(np.arange(4, dtype=np.int8))       # not in T: the constraint's error


def test_a_cast_of_a_scalar_never_reaches_the_compiled_cast():
    for x, t in [(2.5, np.int32), (np.float32(2), np.float64), (True, np.float16), (3, np.uint8)] * 4:
        got = gb.cast(x, t)
        assert got.dtype == np.dtype(t) and got.shape == () and got == np.asarray(x).astype(t)
    with pytest.raises(ValueError, match="1 array for a cast"):
        compiled_calls._entry(0, 0, 0, (1 + np.dtype(np.float64).num,), np.dtype(np.int32), (), None)


def test_a_fused_functions_table_dies_with_it():
    import gc
    import weakref

    x = np.ones(8)
    f = gb.fuse(lambda a, b: a * b + a)
    _warm(f, x, x)
    table = weakref.ref(f._table)
    assert len(f._table) == 1
    del f
    gc.collect()
    assert table() is None          # inline gb.fuse in a loop keeps no entry alive


def test_entries_serve_a_forked_child_and_the_parent_after_it():
    x, b = ARRAYS["f32"], np.arange(8, dtype=np.float32)
    _warm(gb.add, x, b)
    pid = os.fork()
    if pid == 0:   # the child: the parent's entries, its own arrays
        ok = np.array_equal(gb.add(x, b), x + b) and np.array_equal(gb.add(x * 2, b), x * 2 + b)
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    _same(gb.add(x, b), x + b)


def test_an_options_entries_are_cleared_with_the_rest_and_serve_a_forked_child():
    """A keyword option's table (``function``'s ``options``) is one of compiled_calls' tables: ``clear``
    empties it, and a forked child runs its entries with the child's own arrays."""
    _built()
    x = ARRAYS["f32"]
    _warm(gb.add, x, x, broadcast="none")
    assert sum(len(t) for t in compiled_calls._tables.values()) > 0
    compiled_calls.clear()
    assert all(len(t) == 0 for t in compiled_calls._tables.values())
    _same(gb.add(x, x, broadcast="none"), x + x)     # the general path again, then a new entry
    _warm(gb.add, x, x, broadcast="none")
    pid = os.fork()
    if pid == 0:
        y = x * 3
        ok = np.array_equal(gb.add(y, y, broadcast="none"), y + y)
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    _same(gb.add(x, x, broadcast="none"), x + x)


def test_cache_clear_removes_the_library_and_nothing_beside_it(tmp_path, unbuilt):
    cache_dir = tmp_path / "cache"
    built = _python(CHECK, unbuilt, GPUBCAST_CACHE_DIR=str(cache_dir))
    assert built.returncode == 0 and built.stdout.strip() == "True", built.stderr
    (lib,) = cache_dir.rglob("hot_call-*.so")
    mine = lib.parent / "notes.txt"
    mine.write_text("not gpubcast's")
    cleared = _python("import gpubcast.cache as c; print(c.clear())", GPUBCAST_CACHE_DIR=str(cache_dir))
    assert cleared.returncode == 0 and int(cleared.stdout) >= 2, cleared.stderr   # the .so and its .sha256
    assert not list(cache_dir.rglob("hot_call-*")) and mine.read_text() == "not gpubcast's"


# --- building the library: a compiler that hangs or fails, other threads, no usable cache ---------------

@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    """A cache folder the fake compilers' processes share (Numba's rows compiled once; each fake
    compiler's library has a key of its own)."""
    return tmp_path_factory.mktemp("cache")


def _script(path, body):
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


FAKE_COMPILERS = {
    "version never returns": "sleep 60\n",
    "build never returns": 'if [ "$1" = --version ]; then echo "fake c++ 1.0"; exit 0; fi\nsleep 60\n',
    "build fails": 'if [ "$1" = --version ]; then echo "fake c++ 1.0"; exit 0; fi\n'
                   'echo "hot_call.cpp:1:1: error: no licence for this compiler" >&2\nexit 1\n',
}
#: repeated small calls (the second prepares its runner and builds the library); stderr shows every warning
REPEATED = ("import time, numpy as np, gpubcast as gb, gpubcast.compiled_calls as c\n"
            "x = np.arange(6.0)\n"
            "gb.add(x, 0.0)\n"
            "t = time.monotonic()\n"
            "r = [gb.add(x, v) for v in (1.0, 2.0, 3.0, 4.0)]\n"
            "assert all((a == x + v).all() for a, v in zip(r, (1.0, 2.0, 3.0, 4.0)))\n"
            "print(c.call is not c._absent_call, round(time.monotonic() - t, 2))\n")


@pytest.mark.parametrize("fake", sorted(FAKE_COMPILERS))
def test_a_compiler_that_hangs_or_fails_leaves_the_python_path_with_one_warning(fake, tmp_path, unbuilt,
                                                                                 shared_cache):
    cxx = _script(tmp_path / "fake-c++", FAKE_COMPILERS[fake])
    done = _python(REPEATED, unbuilt, CXX=str(cxx), GPUBCAST_TOOL_TIMEOUT="1", GPUBCAST_CACHE_DIR=str(shared_cache),
                   PYTHONWARNINGS="always")
    assert done.returncode == 0, done.stderr[-3000:]
    compiled, seconds = done.stdout.split()
    assert compiled == "False" and float(seconds) < 10, done.stdout
    assert done.stderr.count("compiled hot path is unavailable") == 1, done.stderr
    if fake == "build fails":
        assert "BuildError" in done.stderr and "no licence for this compiler" in done.stderr
    else:
        assert "ToolTimeout" in done.stderr and "did not finish within 1 s" in done.stderr
        assert "GPUBCAST_TOOL_TIMEOUT" in done.stderr


BUSY = ("import os, threading, time, gpubcast.compiled_calls as c\n"
        "builder = threading.Thread(target=c.load)\n"
        "builder.start()\n"
        "while not os.path.exists({started!r}):\n"
        "    time.sleep(0.01)\n"
        "t = time.monotonic()\n"
        "meanwhile = c.load()\n"
        "waited = time.monotonic() - t\n"
        "builder.join()\n"
        "print(meanwhile, round(waited, 3), c.load())\n")


def test_another_thread_takes_the_python_path_while_the_library_builds(tmp_path, unbuilt):
    gxx = shutil.which("g++") or shutil.which("c++")
    if gxx is None:
        pytest.skip("no C++ compiler on PATH")
    started = tmp_path / "started"
    cxx = _script(tmp_path / "slow-c++", f'if [ "$1" != --version ]; then touch {started}; sleep 2; fi\n'
                                         f'exec {gxx} "$@"\n')
    done = _python(BUSY.format(started=str(started)), unbuilt, CXX=str(cxx),
                   GPUBCAST_CACHE_DIR=str(tmp_path / "cache"))
    assert done.returncode == 0, done.stderr[-3000:]
    meanwhile, waited, loaded = done.stdout.split()
    assert meanwhile == "False" and float(waited) < 0.5, done.stdout   # it did not wait for the compiler
    assert loaded == "True", done.stderr[-3000:]


PRIVATE = ("import os, signal, numpy as np, gpubcast as gb, gpubcast.compiled_calls as c, gpubcast.hostbuild as h\n"
           "assert c.load()\n"
           "twice = gb.ElementwiseKernel('float64 x', 'float64 y', 'y = x * 2', 'twice')\n"
           "assert (twice(np.arange(4.0)) == np.arange(4.0) * 2).all()\n")
#: how each process ends: normally; after a private build nobody released (removed at exit); killed
ENDINGS = ["", "h.build_library('cpu', 'spare', 'int f() { return 1; }', ('-shared', '-fPIC'), purpose='test')\n",
           "os.kill(os.getpid(), signal.SIGKILL)\n"]


def test_processes_without_a_usable_cache_leave_no_private_build_behind(tmp_path, unbuilt):
    temp = tmp_path / "tmp"
    temp.mkdir()
    not_a_folder = tmp_path / "cache-root"
    not_a_folder.write_text("a regular file where the cache root should be")
    env = {**os.environ, "TMPDIR": str(temp), "GPUBCAST_CACHE_DIR": str(not_a_folder), "PYTHONPATH": str(unbuilt)}
    procs = [subprocess.Popen([sys.executable, "-c", PRIVATE + ending], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=unbuilt) for ending in ENDINGS]
    results = [(p.wait(timeout=120), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    assert [rc for rc, _ in results] == [0, 0, -9], results
    assert "cannot be used" in results[0][1]         # the cache warning: the builds were private
    assert sorted(os.listdir(temp)) == []


def test_calls_c_declines_hold_no_reference_they_did_not_take():
    """Every way the compiled path declines a call (a read-only out=, a value C does not convert, an
    input the driver rejects) leaves every operand's reference count as it was (a read-only out= was
    released once too often: a crash a few hundred calls later)."""
    import sys
    x, b = ARRAYS["f32"], np.arange(8, dtype=np.float32)
    o = np.empty_like(x)
    _warm(gb.add, x, b, out=o)
    _warm(gb.add, x, 2.0)
    ro = np.empty_like(x)
    ro.flags.writeable = False
    misaligned = np.frombuffer(bytearray(x.nbytes + 1), np.float32, x.size, 1).reshape(x.shape)
    before = [sys.getrefcount(a) for a in (x, b, ro, misaligned)]
    for _ in range(100):
        with pytest.raises(ValueError, match="read-only"):
            gb.add(x, b, out=ro)
        gb.add(x, 1e300)                      # beyond float32: the general path converts it
        gb.add(misaligned, b)                 # the driver rejects it: the general path stages it
    assert [sys.getrefcount(a) for a in (x, b, ro, misaligned)] == before


def _built():
    if importlib.util.find_spec(compiled_calls.EXTENSION) is None:
        pytest.skip("this source tree was not built (make install builds gpubcast.native.hot_call)")


def _onnx(name):
    import gpubcast.onnx as gx
    return getattr(gx, name)


PUBLIC = (gb.add, gb.less, gb.tanh, gb.negative, gb.relu, gb.elu, gb.leaky_relu, gb.gelu, _onnx("Div"), _onnx("Relu"))


@pytest.mark.parametrize("f", PUBLIC, ids=lambda f: f.__name__)
def test_a_public_function_is_the_extensions_object_with_the_python_functions_contract(f):
    """The default call of gb.add & co. runs from C with no Python frame (hot_call.cpp's ``function``);
    the object still says what the Python function says: name, docs, signature, pickling by name, and
    no binding as a method."""
    _built()
    general = f.__wrapped__
    assert type(f).__name__ == "Function" and callable(general) and type(general).__name__ == "function"
    assert (f.__name__, f.__qualname__, f.__module__, f.__doc__) == (
        general.__name__, general.__qualname__, general.__module__, general.__doc__)
    assert inspect.signature(f) == inspect.signature(general) and inspect.isroutine(f)
    assert pickle.loads(pickle.dumps(f)) is f and f.__name__ in repr(f)

    class Holder:
        fn = f
    x = ARRAYS["f32"]
    args = (x,) * sum(p.kind == p.POSITIONAL_ONLY for p in inspect.signature(general).parameters.values())
    _same(Holder().fn(*args), general(*args))


def test_the_default_call_of_each_form_is_served_by_c_and_every_other_call_by_the_python_function(only_compiled):
    _built()
    x, b = ARRAYS["f32"], np.arange(8, dtype=np.float32)
    o = np.empty_like(x)
    calls = [(gb.add, (x, b), {}), (gb.add, (x, b, o), {}), (gb.add, (x, b), {"out": o}), (gb.add, (x, 2.5), {}),
             (gb.tanh, (x,), {}), (gb.tanh, (x, o), {}), (gb.elu, (x,), {}), (gb.leaky_relu, (x,), {"out": o}),
             (gb.gelu, (x,), {}),
             # one keyword option C has a table for: the default backend named, a rule set
             (gb.add, (x, b), {"backend": "numba"}), (gb.add, (x, x), {"broadcast": "none", "out": o}),
             (gb.subtract, (x, b), {"broadcast": "numpy"}), (gb.tanh, (x,), {"backend": "numba"}),
             (gb.elu, (x,), {"backend": "numba", "out": o})]
    want = [np.array(f.__wrapped__(*a, **k), copy=True) for f, a, k in calls]   # the Python functions' answers
    for f, a, k in calls:
        _warm(f, *a, **k)
    only_compiled()
    for (f, a, k), w in zip(calls, want):
        got = f(*a, **k)
        _same(got, w)
        assert (got is o) == ("out" in k or any(y is o for y in a))


def test_cast_runs_from_c_with_the_table_of_its_dtype(only_compiled):
    """gb.cast(x, dtype[, out]) runs from C (hot_call.cpp's ``function`` with ``keyed``): its second
    positional argument picks the table, once the Python function has made one for that dtype; a dtype
    without one, any option, and every error are the Python function's."""
    _built()
    assert type(gb.cast).__name__ == "Function"
    assert inspect.signature(gb.cast) == inspect.signature(gb.cast.__wrapped__)
    x, xi = ARRAYS["f32"], ARRAYS["i8"]
    o16, o32, o64 = np.empty(x.shape, np.float16), np.empty(x.shape, np.int32), np.empty(x.shape, np.float64)
    calls = [((x, np.float16), {}), ((x, "int32", o32), {}), ((x, np.dtype(np.float64)), {"out": o64}),
             ((xi, np.float32), {}), ((x, np.float16, o16), {})]
    for a, k in calls:
        _warm(gb.cast, *a, **k)
    only_compiled()
    for a, k in calls:
        out = k.get("out", a[2] if len(a) > 2 else None)
        got = gb.cast(*a, **k)
        _same(np.array(got, copy=True), a[0].astype(a[1]))
        assert out is None or got is out
    with pytest.raises(AssertionError, match="left the compiled path"):
        gb.cast(x, np.uint16)                          # no table for this dtype yet: the Python function
    with pytest.raises(AssertionError, match="left the compiled path"):
        gb.cast(x, np.float16, backend="numpy")        # an option: the Python function
    for call, message in ((lambda: gb.cast(x, None), "dtype is required"),
                          (lambda: gb.cast(x), "missing 1 required positional argument"),
                          (lambda: gb.cast(x, np.float16, o16, o16), "positional argument"),
                          (lambda: gb.cast(x, np.float16, o16, out=o16), "multiple values for argument 'out'")):
        with pytest.raises(TypeError, match=message):
            call()


def test_calls_beyond_the_default_take_the_python_function_with_its_values_and_errors():
    _built()
    x, c = ARRAYS["f32"], np.arange(4, dtype=np.float32)
    o = np.empty_like(x)
    _warm(gb.add, x, x)
    _warm(gb.elu, x)
    _same(gb.add(x, c, broadcast="pdpd", axis=0), x + c[:, None])
    # an option's warm entry keeps its rule's errors, and a call it declines gets the Python function's
    _warm(gb.add, x, x, broadcast="none")
    with pytest.raises(gb.BroadcastError, match="none"):
        gb.add(x, x[:1], broadcast="none")
    read_only = np.empty_like(x)
    read_only.flags.writeable = False
    _warm(gb.add, x, x, backend="numba", out=o)
    with pytest.raises(ValueError, match="read-only"):
        gb.add(x, x, backend="numba", out=read_only)
    with pytest.raises(ValueError, match="is not a rule"):
        gb.add(x, x, broadcast=["none"])
    # an activation's positional arguments are its parameters, never out=
    np.testing.assert_allclose(gb.elu(x, 0.5), np.where(x > 0, x, 0.5 * np.expm1(x)), rtol=1e-6)
    np.testing.assert_allclose(gb.gelu(x, "tanh"), gb.gelu.__wrapped__(x, approximate="tanh"), rtol=0)
    for call, message in ((lambda: gb.add(x, x, o, out=o), "multiple values for argument 'out'"),
                          (lambda: gb.add(x), "missing 1 required positional argument"),
                          (lambda: gb.add(x, x, o, o), "positional argument"),
                          (lambda: gb.tanh(x, o, o), "positional argument"),
                          (lambda: gb.elu(x, 0.5, o), "elu\\(\\) takes x and at most 1 parameter"),
                          (lambda: gb.add(x, x, outt=o), "unexpected keyword argument 'outt'"),
                          (lambda: _onnx("Add")(x, x, out=o), "unexpected keyword argument 'out'"),
                          (lambda: _onnx("Relu")(x, o), "positional argument")):
        with pytest.raises(TypeError, match=message):
            call()


def test_without_the_compiled_path_the_public_functions_are_the_python_functions():
    done = _python("import gpubcast as gb\nprint(type(gb.add).__name__, type(gb.tanh).__name__)\n",
                   GPUBCAST_COMPILED_CALLS="0")
    assert done.returncode == 0 and done.stdout.split() == ["function", "function"], done.stderr


@pytest.mark.parametrize("threads", ["pool", "serial"])
def test_large_outputs_are_served_by_c_from_the_host_pool(only_compiled, monkeypatch, threads):
    """An output of >= host_pool.MIN_BYTES comes from the host pool (its allocator, called from C):
    such calls take the compiled path too, with out= or without, serial or on the thread pool."""
    from gpubcast import host_pool
    from gpubcast.backends.numba import backend as numba_backend
    if threads == "serial":
        monkeypatch.setattr(numba_backend.Spec, "parallel", lambda self, size: False)
    gb.compiled_calls.clear()
    n = host_pool.MIN_BYTES // 4 + 64
    x, y = np.linspace(-1, 1, n, dtype=np.float32), np.linspace(2, 3, n, dtype=np.float32)
    o = np.empty_like(x)
    _warm(gb.multiply, x, y)
    _warm(gb.multiply, x, y, out=o)
    _warm(gb.cast, x, np.float64)
    only_compiled()
    got = gb.multiply(x, y)
    assert host_pool.is_pooled(got)
    _same(got, x * y)
    assert gb.multiply(x, y, out=o) is o
    _same(o, x * y)
    wide = gb.cast(x, np.float64)
    assert host_pool.is_pooled(wide)
    _same(wide, x.astype(np.float64))


def test_an_allocator_whose_array_does_not_fit_the_plan_sends_the_call_to_the_general_path():
    """C checks the allocator's array (dtype, shape, C order, writable, aligned) before a driver
    writes it; a misfit is the general path's call, never a write out of bounds."""
    x = ARRAYS["f32"]
    table = compiled_calls.table_for("test misfit")
    runner = backends.get("numba").prepare(gb.ops.get("negative"), make_plan(x), (x.dtype,), x.dtype)
    for wrong in (lambda shape, dtype: np.empty(shape[::-1], dtype),
                  lambda shape, dtype: np.empty(shape, np.float64),
                  lambda shape, dtype: np.empty(shape, dtype, order="F"),
                  lambda shape, dtype: np.empty(shape, dtype)[::1, ::-1]):
        table.clear()
        assert compiled_calls.register(table, None, (x,), runner.native._replace(allocate=wrong), (None,), x.dtype,
                                       x.shape, runner.keep)
        assert compiled_calls.call(table, None, x) is None
    table.clear()
    assert compiled_calls.register(table, None, (x,), runner.native._replace(allocate=lambda s, d: np.empty(s, d)),
                                   (None,), x.dtype, x.shape, runner.keep)
    _same(compiled_calls.call(table, None, x), -x)
