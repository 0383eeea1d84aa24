"""gpubcast.ElementwiseKernel: CuPy's documented examples with CuPy's documented results, every rule
set against NumPy, CuPy's conventions and errors, on the CPU (NumPy arrays, host C++ build) and on the
GPU path (the ``cupy`` fixture: the virtual CUDA device here, CuPy on a GPU), and on Dask arrays."""

import os
import re
import shutil

import numpy as np
import pytest

import gpubcast as gb
from gpubcast import elementwise_build as build
from gpubcast import elementwise_kernel as ewk
from gpubcast import hostbuild

HOST_CXX = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
pytestmark = pytest.mark.skipif(not HOST_CXX, reason="no host C++ compiler (the CPU path builds with it)")


@pytest.fixture(params=["numpy", "cupy"])
def xp(request):
    """NumPy (the CPU path) or the ``cupy`` fixture (the GPU path)."""
    if request.param == "numpy":
        return np
    return request.getfixturevalue("cupy")


def host(x):
    return x.get() if hasattr(x, "get") else np.asarray(x)


SQUARED_DIFF = ("float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "squared_diff")


# ---- CuPy's documented examples (docs.cupy.dev, User-Defined Kernels) ----------------------------

def test_squared_diff_documented(xp):
    squared_diff = gb.ElementwiseKernel(*SQUARED_DIFF)
    x = xp.arange(10, dtype=np.float32).reshape(2, 5)
    y = xp.arange(5, dtype=np.float32)
    r = squared_diff(x, y)
    assert isinstance(r, type(x)) and r.dtype == np.float32
    np.testing.assert_array_equal(host(r), [[0, 0, 0, 0, 0], [25, 25, 25, 25, 25]])
    np.testing.assert_array_equal(host(squared_diff(x, 5)), [[25, 16, 9, 4, 1], [0, 1, 4, 9, 16]])
    z = xp.empty((2, 5), dtype=np.float32)
    assert squared_diff(x, y, z) is z
    np.testing.assert_array_equal(host(z), [[0, 0, 0, 0, 0], [25, 25, 25, 25, 25]])


def test_type_placeholders_documented(xp):
    generic = gb.ElementwiseKernel("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff_generic")
    with_local = gb.ElementwiseKernel("T x, T y", "T z", "T diff = x - y;\nz = diff * diff;",
                                      "squared_diff_super_generic")
    for dtype in (np.float64, np.int32, np.uint8):
        x = np.arange(10, dtype=dtype).reshape(2, 5)
        y = np.arange(5, dtype=dtype)[::-1].copy()
        ref = (x - y) * (x - y)            # uint8 wraps the same way in C and NumPy
        for k in (generic, with_local):
            r = k(xp.asarray(x), xp.asarray(y))
            assert r.dtype == dtype
            np.testing.assert_array_equal(host(r), ref)


@pytest.mark.parametrize("dtype", list(build.CTYPES), ids=str)
def test_every_supported_type(dtype, xp):
    x = (np.arange(-6, 6) * 23).astype(dtype) if dtype != np.bool_ else np.arange(12) % 3 == 0
    if dtype == np.bool_:
        k, want = gb.ElementwiseKernel("T x", "T y", "y = !x", "negate"), ~x
    else:
        k = gb.ElementwiseKernel("T x", "T y", "y = x * (T)3 + (T)1", "three_x_plus_one")
        with np.errstate(over="ignore"):
            want = x * dtype.type(3) + dtype.type(1)     # wraps like C++'s conversion back to T
    got = k(xp.asarray(x))
    assert got.dtype == dtype
    np.testing.assert_array_equal(host(got), want)


def test_raw_argument_documented(xp):
    add_reverse = gb.ElementwiseKernel("T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]", "add_reverse")
    x = np.arange(6, dtype=np.int64) * 10
    y = np.arange(6, dtype=np.int64)
    np.testing.assert_array_equal(host(add_reverse(xp.asarray(x), xp.asarray(y))), x + y[::-1])
    y2 = np.arange(12, dtype=np.int64)[::2]                                  # a strided raw input: copied first
    np.testing.assert_array_equal(host(add_reverse(xp.asarray(x), xp.asarray(np.arange(12))[::2])), x + y2[::-1])


def test_size_for_kernels_without_non_raw_arrays(xp):
    iota = gb.ElementwiseKernel("", "int32 y", "y = i * 3", "iota")
    np.testing.assert_array_equal(host(iota(size=7)), np.arange(7, dtype=np.int32) * 3)
    reverse = gb.ElementwiseKernel("raw T x", "raw T y", "y[i] = x[_ind.size() - 1 - i]", "reverse_raw")
    x = np.arange(5, dtype=np.float64) ** 2
    np.testing.assert_array_equal(host(reverse(xp.asarray(x), size=5)), x[::-1])


# ---- CuPy's conventions ---------------------------------------------------------------------------

def test_scalars_outputs_and_return_conventions(xp):
    k = gb.ElementwiseKernel("int32 x, T y", "T z", "z = y * x", "scale")
    y = np.arange(4, dtype=np.float64)
    np.testing.assert_array_equal(host(k(2.7, xp.asarray(y))), y * 2)       # the scalar cast to int32: 2
    fill = gb.ElementwiseKernel("T v", "T y", "y = v", "fill")
    out = xp.zeros((2, 3), dtype=np.int16)
    assert fill(7, out) is out                                              # T from the output
    np.testing.assert_array_equal(host(out), np.full((2, 3), 7, np.int16))
    two = gb.ElementwiseKernel("T x", "T s, T d", "s = x + x; d = x - 1", "two")
    s, d = two(xp.asarray(y))
    np.testing.assert_array_equal(host(s), y + y)
    np.testing.assert_array_equal(host(d), y - 1)
    assert isinstance(gb.ElementwiseKernel("T x", "T y", "y = x", "one", return_tuple=True)(xp.asarray(y)), tuple)
    assert gb.ElementwiseKernel("T x", "T y", "y = x", "none_back", no_return=True)(xp.asarray(y)) is None


def test_in_place_and_strided_output(xp):
    acc = gb.ElementwiseKernel("T x", "T y", "y += x", "accumulate")
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = xp.asarray(base.copy())
    acc(xp.asarray(np.ones(4, np.float32)), y)
    np.testing.assert_array_equal(host(y), base + 1)
    out = xp.zeros((4, 3), dtype=np.float32).T                             # a transposed output
    sq = gb.ElementwiseKernel(*SQUARED_DIFF)
    sq(xp.asarray(base), xp.asarray(base[0]), out)
    np.testing.assert_array_equal(host(out), (base - base[0]) ** 2)


def test_preamble_loop_prep_after_loop_and_options(xp):
    k = gb.ElementwiseKernel(
        "T x", "T y", "y = cube(x) + bias", "cubed", preamble="__device__ float cube(float v) { return v * v * v; }",
        loop_prep="const float bias = OFFSET;", after_loop="(void)bias;", options=("-DOFFSET=0.5f",))
    x = np.linspace(-2, 2, 9, dtype=np.float32)
    np.testing.assert_array_equal(host(k(xp.asarray(x))), x * x * x + np.float32(0.5))


def test_strided_inputs_and_the_64_bit_index_path(xp, monkeypatch):
    k = gb.ElementwiseKernel("T a, T b", "T c", "c = a * 3 - b + (T)(i % 5)", "mix")
    rng = np.random.default_rng(1)
    a = rng.integers(-100, 100, (6, 5, 4)).astype(np.int64)
    b = rng.integers(-100, 100, (4, 5)).astype(np.int64)
    ref = a[:, ::-1].transpose(0, 2, 1)[:, :, :] * 3 - b[::-1, :][None, :, :]
    ref = ref + (np.arange(ref.size).reshape(ref.shape) % 5)
    args = (xp.asarray(a)[:, ::-1].transpose(0, 2, 1), xp.asarray(b)[::-1, :])
    np.testing.assert_array_equal(host(k(*args)), ref)
    if hasattr(xp, "launches"):                                            # the virtual device: which kernel ran
        assert xp.launches[-1][0].endswith("mix<gb::u32>")
    monkeypatch.setattr(ewk, "INT32_LIMIT", 10)                            # every loop takes the 64-bit path
    k64 = gb.ElementwiseKernel("T a, T b", "T c", "c = a * 3 - b + (T)(i % 5)", "mix")   # no hot path yet
    np.testing.assert_array_equal(host(k64(*args)), ref)
    if hasattr(xp, "launches"):
        assert xp.launches[-1][0].endswith("mix<gb::u64>")


def test_cpu_and_gpu_paths_give_identical_bits(cupy):
    k = gb.ElementwiseKernel("T x, T y", "T z", "z = (x * y - x / (y + (T)3)) + (T)(i % 7) * y", "exact")
    rng = np.random.default_rng(7)
    for dtype in (np.float32, np.float64, np.int32, np.uint64):
        x = (np.abs(rng.standard_normal((33, 17))) * 50).astype(dtype)
        y = (np.abs(rng.standard_normal(17)) * 9).astype(dtype) + dtype(1)
        cpu = k(x, y)
        gpu = host(k(cupy.asarray(x), cupy.asarray(y)))
        assert cpu.tobytes() == gpu.tobytes(), dtype
        if np.dtype(dtype).kind != "f":
            with np.errstate(over="ignore"):
                ref = (x * y - x // (y + dtype(3))) + (np.arange(x.size).reshape(x.shape) % 7).astype(dtype) * y
            np.testing.assert_array_equal(cpu, ref)
        else:
            ref = (x * y - x / (y + dtype(3))) + (np.arange(x.size).reshape(x.shape) % 7).astype(dtype) * y
            np.testing.assert_array_equal(cpu, ref)                         # + - * / rounded as NumPy's


# ---- every rule set against NumPy -----------------------------------------------------------------

AXPB = ("T a, T x, T b", "T z", "z = a * x + b", "axpb")
X = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5) / 7


def _f32(*shape):
    return (np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) + 1) / 3


# (kernel params order, call kwargs, arguments, reference)
RULE_CASES = {
    "numpy": (AXPB, {}, (_f32(3, 1, 1), X, _f32(5)), _f32(3, 1, 1) * X + _f32(5)),
    "pdpd_axis1": (("T x, T a, T b", "T z", "z = a * x + b", "axpb_pdpd"), dict(broadcast="pdpd", axis=1),
                   (X, _f32(3, 4), _f32(3, 1)), _f32(3, 4)[None, :, :, None] * X + _f32(3, 1)[None, :, :, None]),
    "pdpd_default": (("T x, T a, T b", "T z", "z = a * x + b", "axpb_pdpd"), dict(broadcast="pdpd"),
                     (X, _f32(4, 5), _f32(5)), _f32(4, 5) * X + _f32(5)),
    "explicit": (("T x, T a, T b", "T z", "z = a * x + b", "axpb_explicit"),
                 dict(broadcast="explicit", axes_mapping=[1]), (X, _f32(3), _f32(3)),
                 _f32(3)[None, :, None, None] * X + _f32(3)[None, :, None, None]),
    "explicit_2d": (("T x, T a", "T z", "z = a * x", "ax_explicit"), dict(broadcast="explicit", axes_mapping=[0, 2]),
                    (X, _f32(2, 4)), _f32(2, 4)[:, None, :, None] * X),
    "bidirectional": (("T a, T x", "T z", "z = a * x", "ax_bidi"), dict(broadcast="bidirectional"),
                      (_f32(3, 1), _f32(2, 1, 6)), _f32(3, 1) * _f32(2, 1, 6)),
    "none": (AXPB, dict(broadcast="none"), (X, X, X), X * X + X),
}


@pytest.mark.parametrize("case", sorted(RULE_CASES))
def test_rule_sets_against_numpy(case, xp):
    decl, kwargs, args, ref = RULE_CASES[case]
    k = gb.ElementwiseKernel(*decl)
    np.testing.assert_array_equal(host(k(*(xp.asarray(a) for a in args), **kwargs)), ref)
    kd = gb.ElementwiseKernel(*decl, **kwargs)                            # the rule as the kernel's default
    np.testing.assert_array_equal(host(kd(*(xp.asarray(a) for a in args))), ref)


RULE_ERRORS = [
    (AXPB, {}, (_f32(3, 2), X, _f32(5)),
     r"broadcast \(numpy\): shapes cannot be broadcast together\. Mismatch is between arg 0 with shape \(3, 2\) "
     r"and arg 1 with shape \(2, 3, 4, 5\) at output dim 2: 3 vs 4 \[ElementwiseKernel 'axpb': arg 0 = 'a', "
     r"arg 1 = 'x', arg 2 = 'b'\]"),
    (("T x, T a, T b", "T z", "z = a * x + b", "axpb_pdpd"), dict(broadcast="pdpd", axis=1), (X, _f32(4, 4), _f32(3)),
     r"broadcast \(pdpd, axis=1\): arg 1 with shape \(4, 4\)->\(1, 4, 4, 1\) does not fit arg 0 with shape "
     r"\(2, 3, 4, 5\) at output dim 1: 4 vs 3 .*\[ElementwiseKernel 'axpb_pdpd': arg 0 = 'x', arg 1 = 'a', "
     r"arg 2 = 'b', the first is the target\]"),
    (("T x, T a, T b", "T z", "z = a * x + b", "axpb_explicit"), dict(broadcast="explicit", axes_mapping=[1]),
     (X, _f32(3), _f32(4)),
     r"broadcast \(explicit, axes_mapping=\[1\]\): arg 0 with shape \(4,\)->\(1, 4, 1, 1\) does not fit arg 1 .* "
     r"4 vs 3 .*\[ElementwiseKernel 'axpb_explicit': arg 0 = 'b', arg 1 = 'x', arg 1 is the target\]"),
    (("T x, T a", "T z", "z = a * x", "ax_explicit"), dict(broadcast="explicit"), (X, _f32(3)),
     r"rule 'explicit' needs axes_mapping"),
    (AXPB, dict(broadcast="bidirectional"), (X, X, X), r"rule 'bidirectional' takes exactly 2 shapes, got 3"),
    (AXPB, dict(broadcast="none"), (X, X, _f32(5)), r"broadcast \(none\): shapes must be equal"),
]


@pytest.mark.parametrize("decl, kwargs, args, message", RULE_ERRORS)
def test_rule_violations_are_the_planners_errors(decl, kwargs, args, message):
    with pytest.raises(gb.BroadcastError, match=message):
        gb.ElementwiseKernel(*decl)(*args, **kwargs)


def test_generated_kernels_compile_with_nvrtc_for_sm80_and_sm90():
    from gpubcast.cuda import compiler
    try:
        compiler.nvrtc_version()
    except RuntimeError as e:
        pytest.skip(str(e))
    f32 = np.dtype(np.float32)
    k = gb.ElementwiseKernel("T x, raw T y, float32 s", "T z", "z = x * s + y[i % y.size()]", "nvrtc_check")
    sig = k.signature((f32,) * 4, (("T", f32),), ("array", "raw", "scalar", "array"))
    family, names = build.gpu_family(sig)
    assert sig.tiles and names == (f"{family}::nvrtc_check_contig<>", f"{family}::nvrtc_check<gb::u32>",
                                   f"{family}::nvrtc_check<gb::u64>")
    nc = gb.ElementwiseKernel("_non_const T x", "T z", "z = x; x = 0", "nvrtc_element")   # writes an input
    nc_sig = nc.signature((f32,) * 2, (("T", f32),), ("array", "array"))
    nc_family, nc_names = build.gpu_family(nc_sig)
    assert not nc_sig.tiles and nc_names == (f"{nc_family}::nvrtc_element<gb::u32>",
                                             f"{nc_family}::nvrtc_element<gb::u64>")
    for arch in ("sm_80", "sm_90"):
        for fam, ns in ((family, names), (nc_family, nc_names)):
            compiled = compiler.compile_family(fam, ns, arch)
            assert compiled.binary[:4] == b"\x7fELF" and set(compiled.lowered) == set(ns)
            assert "error" not in compiled.log


# ---- errors ---------------------------------------------------------------------------------------

def test_bad_kernels_are_clear_errors_with_the_users_line(xp):
    k = gb.ElementwiseKernel("T x", "T y", "T t = x;\ny = t +* 2;", "broken")
    with pytest.raises(ewk.build.KernelSourceError) as e:
        k(xp.asarray(np.ones(3, np.float32)))
    text = str(e.value)
    assert isinstance(e.value, ValueError)
    assert "ElementwiseKernel 'broken' does not compile" in text
    assert re.search(r"operation(:2|\(2\))", text) and "error" in text          # the compiler's own message
    assert "in operation, line 2: y = t +* 2;" in text
    bad_preamble = gb.ElementwiseKernel("T x", "T y", "y = x", "pre", preamble="int broken(")
    with pytest.raises(ValueError, match="in preamble, line 1: int broken"):
        bad_preamble(xp.asarray(np.ones(3, np.float32)))


def test_declaration_errors():
    with pytest.raises(TypeError, match="unknown type 'floaty'"):
        gb.ElementwiseKernel("floaty x", "T y", "y = x")
    with pytest.raises(TypeError, match="complex64"):
        gb.ElementwiseKernel("complex64 x", "T y", "y = x")
    with pytest.raises(ValueError, match="Syntax error"):
        gb.ElementwiseKernel("x", "T y", "y = x")
    with pytest.raises(ValueError, match='Unknown keyword "const"'):
        gb.ElementwiseKernel("const T x", "T y", "y = x")
    with pytest.raises(ValueError, match="Can not use 'i' as a parameter name"):
        gb.ElementwiseKernel("T i", "T y", "y = i")
    with pytest.raises(ValueError, match='Invalid kernel name: "my kernel"'):
        gb.ElementwiseKernel("T x", "T y", "y = x", "my kernel")
    with pytest.raises(ValueError, match="x declared twice"):
        gb.ElementwiseKernel("T x", "T x", "x = x")


def test_call_errors(xp):
    sq = gb.ElementwiseKernel(*SQUARED_DIFF)
    x = xp.asarray(np.ones((2, 5), np.float32))
    with pytest.raises(TypeError, match=r"Wrong number of arguments for 'squared_diff'\. It must be either 2 or 3 "
                                        r"\(with outputs\), but given 1\."):
        sq(x)
    with pytest.raises(TypeError, match=r"Wrong number of arguments .* given 4"):
        sq(x, x, x, x)
    with pytest.raises(TypeError, match="Wrong arguments"):
        sq(x, x, blocks=3)
    with pytest.raises(TypeError, match="Type is mismatched. x float64 float32"):
        sq(xp.asarray(np.ones(3)), x)
    generic = gb.ElementwiseKernel("T x, T y", "T z", "z = x + y", "generic_add")
    with pytest.raises(TypeError, match="Type is mismatched. y int32 float32 T"):
        generic(x, xp.asarray(np.ones(5, np.int32)))
    with pytest.raises(TypeError, match="cannot determine type placeholder T"):
        generic(1.0, 2.0, )
    with pytest.raises(ValueError, match="Out shape is mismatched"):
        sq(x, x, xp.asarray(np.ones((5,), np.float32)))
    with pytest.raises(TypeError, match="Output arguments type must be an array"):
        sq(x, x, [0.0])
    with pytest.raises(ValueError, match="Loop size is undecided"):
        gb.ElementwiseKernel("raw T x", "T y", "y = x[i]", "gather")(x)
    with pytest.raises(ValueError, match="Specified 'size' can be used only if all of the ndarray are 'raw'"):
        sq(x, x, size=3)
    with pytest.raises(ValueError, match="Output array size is Undecided"):
        gb.ElementwiseKernel("T x", "raw T y", "y[i] = x", "scatter")(x)


def test_stream_argument_and_read_only_outputs(cupy):
    sq = gb.ElementwiseKernel(*SQUARED_DIFF)
    stream = cupy.cuda.Stream()
    r = sq(cupy.ones(3, np.float32), 3.0, stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(host(r), [4, 4, 4])
    if hasattr(cupy, "launches"):                                          # the virtual device records the stream
        assert cupy.launches[-1][3] == stream.ptr
    frozen = np.zeros(3, np.float32)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="output 'z' is read-only"):
        sq(np.ones(3, np.float32), 3.0, frozen)


def test_host_arrays_mixed_with_cuda_arrays_are_a_type_error(cupy):
    sq = gb.ElementwiseKernel(*SQUARED_DIFF)
    with pytest.raises(TypeError, match="move it to the GPU first"):
        sq(cupy.ones(3, np.float32), np.ones(3, np.float32))
    r = sq(cupy.ones(3, np.float32), np.float32(3))                       # a NumPy scalar is a scalar
    np.testing.assert_array_equal(host(r), [4, 4, 4])


def test_no_host_compiler_says_what_to_install(monkeypatch):
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setattr(hostbuild.shutil, "which", lambda name: None)
    k = gb.ElementwiseKernel("T x", "T y", "y = x * 41", "needs_a_compiler")
    with pytest.raises(RuntimeError, match=r"ElementwiseKernel on NumPy arrays needs a C\+\+ compiler .* apt-get "
                                           r"install g\+\+"):
        k(np.ones(3))


def test_cpu_build_is_cached_and_verified_before_load(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUBCAST_CACHE_DIR", str(tmp_path))
    k = gb.ElementwiseKernel("T x", "T y", "y = x * 43", "cached_build")
    np.testing.assert_array_equal(k(np.arange(4)), np.arange(4) * 43)
    [lib] = tmp_path.rglob("cpu/ewk_cached_build-*.so")
    good = lib.read_bytes()
    damaged = lib.with_suffix(".damaged")                                  # a new file: the loaded one is mapped
    damaged.write_bytes(good[:100])
    os.replace(damaged, lib)                                                # damaged: never loaded, rebuilt
    build.cpu_function.cache_clear()
    again = gb.ElementwiseKernel("T x", "T y", "y = x * 43", "cached_build")   # as a new process would
    np.testing.assert_array_equal(again(np.arange(4)), np.arange(4) * 43)
    assert lib.read_bytes() == good


def test_repeated_calls_take_new_pointers_and_scalars(xp):
    k = gb.ElementwiseKernel("T x, float64 s", "T y", "y = x * s + (T)i", "hot")
    outs = []
    for step in range(4):                                                   # the same call signature each time
        x = np.arange(12, dtype=np.float64).reshape(3, 4) * (step + 1)
        y = k(xp.asarray(x), float(step))
        np.testing.assert_array_equal(host(y), x * step + np.arange(12).reshape(3, 4))
        outs.append(y)
    assert len({id(y) for y in outs}) == 4                                 # a new output each call
    given = xp.asarray(np.empty((3, 4)))
    assert k(xp.asarray(x), 2.0, given) is given and k(xp.asarray(x), -1.0, given) is given
    np.testing.assert_array_equal(host(given), -x + np.arange(12).reshape(3, 4))


def test_parallel_chunks_cover_every_element():
    k = gb.ElementwiseKernel("T x", "T y", "y = x + (T)i", "big")
    x = np.zeros((3, 70001), np.int64)[:, ::2]                             # 3 rows, split across threads
    np.testing.assert_array_equal(k(x), np.arange(x.size).reshape(x.shape))


# ---- the tile path: the built-in kernels' access paths, every layout --------------------------------

def _index(shape):
    return np.arange(int(np.prod(shape))).reshape(shape)


def _tile_cases():
    """(name, kernel declaration, arguments (NumPy), reference, the kernel that must run on the virtual
    device: contig | u32 | u64 | element), every value computed by NumPy."""
    rng = np.random.default_rng(5)
    f = lambda *s: (rng.standard_normal(s) * 4).astype(np.float32)
    axpb = AXPB
    x512, a, b = f(2, 3, 16, 32), f(1, 3, 1, 1), f(1, 3, 1, 1)       # rows of 512: lane chunks
    x56, w = f(2, 3, 8, 56), f(3, 56)                                   # rows of 56: padded rows
    xs = f(40, 33)
    d = (rng.standard_normal((6, 70)) * 9).astype(np.float64)
    cases = [
        ("contiguous", axpb, (f(70), f(70), f(70)), None, "contig"),
        ("scalar broadcast", axpb, (f(1), f(67), f(1)), None, "contig"),
        ("misaligned", axpb, (f(101)[1:], f(101)[1:], f(101)[1:]), None, "contig"),
        ("lane chunks", axpb, (a, x512, b), None, "u32"),
        ("padded rows", ("T x, T w", "T z", "z = x * w + (T)(i % 9)", "padded"),
         (x56, w[None, :, None, :]), x56 * w[None, :, None, :] + (_index(x56.shape) % 9).astype(np.float32), "u32"),
        ("rows crossing tiles", axpb, (f(3, 1, 1), f(2, 3, 4, 5), f(5)), None, "u32"),
        ("transposed and reversed", axpb, (xs.T, xs[::-1].T.copy(), xs.T[:, ::-1]), None, "u32"),
        ("float64, 8-byte lanes", ("T x, T y", "T z", "z = x - y * (T)3", "f64"), (d, d[:1]), d - d[:1] * 3, "u32"),
        ("int8 and bool", ("int8 x, bool c", "int8 z", "z = c ? x : (signed char)(-x)", "i8"),
         (np.arange(-60, 60, dtype=np.int8).reshape(4, 30), np.arange(30) % 3 == 0),
         np.where(np.arange(30) % 3 == 0, np.arange(-60, 60, dtype=np.int8).reshape(4, 30),
                  -np.arange(-60, 60, dtype=np.int8).reshape(4, 30)), "u32"),
        ("i, _ind and raw", ("T x, T a, raw T r", "T z",
                             "z = x * a + r[(i + 1) % r.size()] + (T)(i % 7) + (T)_ind.size()", "indexed"),
         (x512, a, f(10)), None, "u32"),
        ("four slots, two outputs", ("T x, T y, T q", "T s, T t", "s = x + y * q; t = x - q", "two_out"),
         (f(5, 64), f(64), f(5, 1)), None, "u32"),
        ("continue", ("T x", "T y", "if (x < (T)0) continue;\ny = x * (T)2;", "skip"), (f(9, 33),), None, "contig"),
    ]
    refs = {"contiguous": lambda a, x, b: a * x + b, "scalar broadcast": lambda a, x, b: a * x + b,
            "misaligned": lambda a, x, b: a * x + b, "lane chunks": lambda a, x, b: a * x + b,
            "rows crossing tiles": lambda a, x, b: a * x + b, "transposed and reversed": lambda a, x, b: a * x + b,
            "i, _ind and raw": lambda x, a, r: x * a + r[(_index(x.shape) + 1) % r.size]
            + (_index(x.shape) % 7).astype(np.float32) + np.float32(x.size),
            "four slots, two outputs": lambda x, y, q: (x + y * q, x - q),
            "continue": lambda x: np.where(x < 0, np.float32(-1), x * 2)}
    return [(name, decl, args, ref if ref is not None else refs[name](*args), kind)
            for name, decl, args, ref, kind in cases]


TILE_CASES = _tile_cases()


@pytest.mark.parametrize("case", TILE_CASES, ids=[c[0] for c in TILE_CASES])
def test_tile_path_layouts_against_numpy(case, xp):
    """Every layout the tile path lays out differently gives NumPy's values, on the kernel it must run."""
    name, decl, args, ref, kind = case
    k = gb.ElementwiseKernel(*decl)
    if name == "continue":                                                  # skipped elements keep the output's
        out = xp.asarray(np.full(args[0].shape, -1, np.float32))
        got = k(*(xp.asarray(a) for a in args), out)
    else:
        got = k(*(xp.asarray(a) if a.ndim and a.strides[-1] > 0 and a.flags.c_contiguous else a for a in args)) \
            if xp is np else k(*(_device_view(xp, a) for a in args))
    for g, r in zip(got if isinstance(got, tuple) else (got,), ref if isinstance(ref, tuple) else (ref,)):
        np.testing.assert_array_equal(host(g), r)
    if hasattr(xp, "launches"):                                             # the virtual device: which kernel ran
        launched = xp.launches[-1][0]
        assert launched.endswith({"contig": "_contig<>", "u32": "<gb::u32>"}[kind]), launched


def _device_view(cp, a):
    """``a`` on the device with the same strides (a view of a copy of its base), offset and all."""
    if a.flags.c_contiguous:
        return cp.asarray(a)
    base = a.base if a.base is not None else a
    while base.base is not None:
        base = base.base
    dev = cp.asarray(np.ascontiguousarray(base))
    start = (a.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // a.itemsize
    flat = dev.reshape(-1)[start:] if start else dev.reshape(-1)
    return cp.lib.stride_tricks.as_strided(flat, a.shape, a.strides)


def test_tile_path_writes_what_the_operation_writes(xp):
    """An output the operation reads (in place) or writes sometimes keeps its values: the tile path loads it."""
    acc = gb.ElementwiseKernel("T x", "T y", "y += x", "acc_rows")
    y0 = np.arange(5 * 64, dtype=np.float32).reshape(5, 64)
    y = xp.asarray(y0.copy())
    acc(xp.asarray(np.ones(64, np.float32)), y)
    np.testing.assert_array_equal(host(y), y0 + 1)
    some = gb.ElementwiseKernel("T x", "T y", "if (x > (T)0) y = x;", "some")
    x = np.sin(np.arange(5 * 64, dtype=np.float32)).reshape(5, 64)
    y = xp.asarray(y0.copy())
    some(xp.asarray(x), y)
    np.testing.assert_array_equal(host(y), np.where(x > 0, x, y0))


def test_tile_path_64_bit_indices_and_non_const_inputs(cupy, monkeypatch):
    k = gb.ElementwiseKernel("T x, T w", "T z", "z = x * w + (T)(i % 9)", "wide_tiles")
    x, w = _f32(2, 3, 8, 56), _f32(3, 1, 56)
    monkeypatch.setattr(ewk, "INT32_LIMIT", 10)                            # the 64-bit path
    np.testing.assert_array_equal(host(k(cupy.asarray(x), cupy.asarray(w))),
                                  x * w + (_index(x.shape) % 9).astype(np.float32))
    if hasattr(cupy, "launches"):
        assert cupy.launches[-1][0].endswith("wide_tiles<gb::u64>")
    swap = gb.ElementwiseKernel("_non_const T x", "T y", "y = x; x = (T)i", "swap_in")    # writes an input
    xd = cupy.asarray(x)
    y = swap(xd)
    np.testing.assert_array_equal(host(y), x)
    np.testing.assert_array_equal(host(xd), _index(x.shape).astype(np.float32))
    if hasattr(cupy, "launches"):
        assert cupy.launches[-1][0].endswith("swap_in<gb::u64>")        # the element path: no _contig kernel


def _layout(decl, shapes, strides_of=None, itemsize=4, bits=32):
    """``build.gpu_launch`` of kernel ``decl`` on float32 arrays of ``shapes`` (C-contiguous unless
    ``strides_of`` gives element strides), the loop shape coalesced as the call does."""
    from gpubcast.plan import c_strides, coalesce, plan as make_plan
    k = gb.ElementwiseKernel(*decl)
    t = np.dtype(f"f{itemsize}")
    arrays = [np.empty(s, t) for s in shapes]
    p = make_plan(*arrays)
    out = tuple(p.out_shape)
    sets = [tuple(st) for st in p.strides] + [c_strides(out)] * k.nout
    shape, csets, _ = coalesce(out, sets, c_strides(out))
    sig = k.signature((t,) * k.nargs, (("T", t),), ("array",) * k.nargs)
    n = int(np.prod(out))
    return build.gpu_launch(sig, bits, [0] * k.nargs, [b""] * k.nargs, [0] * k.nargs, n, shape, csets)


def _flags(lc, nargs):
    """Head::flags of a tile launch ``lc`` of a kernel of ``nargs`` array parameters."""
    head = 8 * nargs + 16 * nargs + 8 * nargs + 8                          # EwkScalars
    return int.from_bytes(lc.params[head + 24 * nargs + 12:head + 24 * nargs + 16], "little")


def test_tile_path_lays_out_as_the_built_in_kernels():
    """The host gives a user kernel the layout launch.py gives the built-in kernels of its operands."""
    from gpubcast.cuda import launch
    lanes = _layout(AXPB, [(1, 3, 1, 1), (2, 3, 16, 32), (1, 3, 1, 1)])
    assert lanes.name.endswith("axpb<gb::u32>") and _flags(lanes, 4) == launch.LANE_CHUNKS
    assert lanes.grid == -(-2 * 3 * 512 // (256 * 8))                      # 8 elements a lane (4 slots: 1 lane tile)
    ax = _layout(("T a, T x", "T z", "z = a * x", "ax"), [(3, 1, 56), (2, 3, 8, 56)])
    assert _flags(ax, 3) == launch.LANE_CHUNKS | launch.PADDED_ROWS        # rows of 56 padded to 64
    assert ax.grid == -(-2 * 3 * 8 * 64 // (256 * 16))
    same = _layout(AXPB, [(4096,)] * 3)
    assert same.name.endswith("axpb_contig<>") and same.grid == 4096 // (256 * 4)
    nchw = _layout(AXPB, [(1, 64, 1, 1), (384, 64, 56, 56), (1, 64, 1, 1)])   # the benchmark's axpb
    assert _flags(nchw, 4) == 0 and nchw.grid == 384 * 64 * 56 * 56 // (256 * 8)


# ---- Dask -----------------------------------------------------------------------------------------

def test_dask_arrays_chunk_by_chunk():
    da = pytest.importorskip("dask.array")
    k = gb.ElementwiseKernel("T x, T a, T b", "T z", "z = a * x + b", "axpb_dask")
    x = da.from_array(X, chunks=(1, 2, 3, 5))
    a, b = _f32(3, 4), da.from_array(_f32(3, 1), chunks=(2, 1))
    z = k(x, a, b, broadcast="pdpd", axis=1)
    assert isinstance(z, da.Array)
    np.testing.assert_array_equal(z.compute(), a[None, :, :, None] * X + _f32(3, 1)[None, :, :, None])
    z = k(x, a, _f32(3, 4), broadcast="explicit", axes_mapping=[1, 2])
    np.testing.assert_array_equal(z.compute(), a[None, :, :, None] * X + _f32(3, 4)[None, :, :, None])
    with pytest.raises(gb.BroadcastError, match="pdpd"):                     # planned now, not at compute()
        k(x, _f32(4, 4), b, broadcast="pdpd", axis=1)
    with pytest.raises(TypeError, match="outputs cannot be given with Dask arrays"):
        k(x, a, b, np.empty(X.shape, np.float32))
    with pytest.raises(TypeError, match="raw parameter 'y' cannot be a Dask array"):
        gb.ElementwiseKernel("T x, raw T y", "T z", "z = x + y[0]", "raw_dask")(x, x)


# ---- on a GPU: against CuPy's own ElementwiseKernel ----------------------------------------------

@pytest.mark.gpu
def test_same_results_as_cupy_elementwise_kernel():
    import cupy
    kernels = [SQUARED_DIFF, ("T x, T y", "T z", "T diff = x - y;\nz = diff * diff;", "generic"),
               ("T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]", "add_reverse"),
               ("T a, T x, T b", "T z", "z = a * x + b", "axpb")]
    rng = np.random.default_rng(3)
    for decl in kernels:
        n = decl[0].count(",") + 1
        args = [cupy.asarray(rng.standard_normal((4, 6)).astype(np.float32)) for _ in range(n)]
        theirs = cupy.ElementwiseKernel(*decl)(*args)
        ours = gb.ElementwiseKernel(*decl)(*args)
        np.testing.assert_allclose(cupy.asnumpy(ours), cupy.asnumpy(theirs), rtol=1e-6, atol=1e-6)
    iota = ("", "int32 y", "y = i * 3", "iota")
    np.testing.assert_array_equal(cupy.asnumpy(gb.ElementwiseKernel(*iota)(size=9)),
                                  cupy.asnumpy(cupy.ElementwiseKernel(*iota)(size=9)))
