"""The virtual CUDA device itself (gpubcast.testing.virtual): CuPy's argument marshalling, the checks
against the loaded binary's parameters and names, and faults a GPU would raise, each provoked on purpose."""

import numpy as np
import pytest

import gpubcast as gb
from gpubcast import backends, ops
from gpubcast.cuda import launch
from gpubcast.testing.device import virtual_unavailable

pytestmark = pytest.mark.skipif(bool(virtual_unavailable()), reason=virtual_unavailable() or "")
virtual = pytest.importorskip("gpubcast.testing.virtual")


@pytest.fixture(params=["runtime", "fast"])
def cp(request):
    """Both ways of making kernels: the backend's own CUBINs, and the fast PTX the ``cupy`` fixture uses."""
    with virtual.installed(virtual.VirtualCupy(seed=7, kernels=request.param)) as cp:
        yield cp


def test_arguments_are_marshalled_as_cupy_does(cp):
    x = cp.zeros(4, np.float32)
    assert virtual.marshal(None) == bytes(8)
    assert virtual.marshal(x) == x.data.ptr.to_bytes(8, "little")              # a pointer, 8 bytes
    assert virtual.marshal(x.data + 4) == (x.data.ptr + 4).to_bytes(8, "little")
    struct_arg = np.frombuffer(bytes(range(40)), np.dtype((np.void, 40)))
    assert virtual.marshal(struct_arg) == bytes(range(40))                    # size 1: by value, its own bytes
    assert virtual.marshal(np.zeros(1, np.int16)) == bytes(2)
    with pytest.raises(TypeError, match="Only numpy.ndarrays of size one"):
        virtual.marshal(np.zeros(2, np.float32))
    assert virtual.marshal(True) == b"\x01"                                   # Python bool: bool
    assert virtual.marshal(5) == (5).to_bytes(8, "little", signed=True)       # Python int: int64
    assert virtual.marshal(2**63) == (2**63).to_bytes(8, "little")            # ... uint64 from 2**63
    assert virtual.marshal(1.5) == np.float64(1.5).tobytes()                  # Python float: double
    assert virtual.marshal(1j) == np.complex128(1j).tobytes()
    assert virtual.marshal(np.float32(2)) == np.float32(2).tobytes()          # NumPy scalar: its size
    with pytest.raises(TypeError, match="Unsupported type"):
        virtual.marshal("text")


def test_parameters_of_the_kernels_in_their_cubin_and_ptx():
    """The parameter sizes the virtual device checks launches against, read from a CUBIN's
    ``.nv.info`` records, equal the PTX ``.entry``'s and the launch structs' sizes."""
    from gpubcast.cuda import catalog, compiler
    names = ["gb::binary_contig<gb::Add, float, float>",
             *(f"gb::binary_general<gb::Add, float, float, gb::u{bits}>" for bits in (32, 64))]
    names += [n for k in catalog.every_instantiation()["variadic"][:2] for n in k.names()]
    cubin, ptx = (compiler.compile_family("binary", names[:3], arch) for arch in ("sm_90", "compute_90"))
    entries = virtual.cubin_entries(cubin.binary)
    assert entries == virtual.ptx_entries(ptx.binary.decode())
    assert entries[cubin.lowered[names[0]]] == {"params": [launch.head_size(2)], "maxntid": launch.BLOCK}
    for name, bits in zip(names[1:3], (32, 64)):
        assert entries[cubin.lowered[name]]["params"] == [launch.general_size(2, bits)]
    cubin, ptx = (compiler.compile_family("variadic", names[3:], arch) for arch in ("sm_90", "compute_90"))
    assert virtual.cubin_entries(cubin.binary) == virtual.ptx_entries(ptx.binary.decode())


def test_fast_kernels_have_the_runtime_kernels_parameters_and_names(monkeypatch):
    """A ``kernels="fast"`` device checks launches against what a GPU loads: the fast PTX's entries
    (from the catalog's fast program holding the kernel, the one ``kernels --check --fast`` compiles)
    equal the runtime CUBIN's."""
    from gpubcast.cuda import catalog, compiler
    programs = []
    compile_family = compiler.compile_family
    monkeypatch.setattr(compiler, "compile_family", lambda *a, **k: programs.append(a[:2]) or compile_family(*a, **k))
    virtual._fast_program.cache_clear()
    for k in (catalog.every_instantiation()["binary"][7], catalog.every_instantiation()["variadic"][3]):
        runtime = compiler.compile_family(k.family, list(k.names()), "sm_90")
        for name in k.names():
            binary, lowered = virtual.fast_kernel(k.family, name, "sm_90")
            assert binary.endswith(b"\0") and lowered == runtime.lowered[name]     # NUL-terminated for the driver
            assert virtual.ptx_entries(binary[:-1].decode())[lowered] == virtual.cubin_entries(runtime.binary)[lowered]
        assert virtual.fast_kernel(k.family, name, "compute_90")[0][-1] != 0   # the backend ends PTX it asked for
    fast = [(family, tuple(names)) for family, names in programs if len(names) != 3]
    assert [len(names) for _, names in programs].count(3) == 2                  # the runtime compiles
    assert len(set(fast)) == len(fast) and all(names in catalog.fast_programs(family) for family, names in fast)
    with pytest.raises(ValueError, match="'fast' or 'runtime'"):
        virtual.VirtualCupy(kernels="slow")


def test_cubin_parameter_records_of_a_kernel_of_several_parameters():
    """Parameters of several sizes and alignments, unbounded blocks: the CUBIN's records in order."""
    from gpubcast.cuda import compiler
    nvrtc = compiler.nvrtc_module()
    src = ('struct S { char c[12]; }; extern "C" __global__ void k(char a, double b, S s, float* p, short h, '
           'long long q) { if (p) p[0] = a + b + s.c[3] + h + q; }')
    got = {}
    for arch in ("sm_90", "compute_90"):
        prog = nvrtc.createProgram(src, "k.cu", [], [])
        try:
            nvrtc.compileProgram(prog, [f"--gpu-architecture={arch}"])
            got[arch] = compiler._cubin(prog) if arch == "sm_90" else nvrtc.getPTX(prog)
        finally:
            nvrtc.destroyProgram(prog)
    want = {"k": {"params": [1, 8, 12, 8, 2, 8], "maxntid": None}}
    assert virtual.cubin_entries(got["sm_90"]) == want
    assert virtual.ptx_entries(got["compute_90"].decode() if isinstance(got["compute_90"], bytes)
                               else got["compute_90"]) == want


def _add_launch(cp, n_plan, a, b, out, shift=0):
    """The launch of add over a contiguous float plan of n_plan elements on these arrays."""
    host = np.ones(n_plan, a.dtype)
    p = gb.plan(host, host)
    ins = [launch.Operand(x.dtype, x.data.ptr + shift) for x in (a, b)]
    [lc] = launch.plan_launches(ops.get("add"), p, ins, launch.Operand(out.dtype, out.data.ptr))
    fn = backends.get("cuda").function(lc.family, lc.name)
    return fn, lc


def struct(params):
    return np.frombuffer(params, np.dtype((np.void, len(params))))


def test_a_write_past_the_output_allocation_faults(cp):
    a, b, out = cp.ones(1000, np.float32), cp.ones(1000, np.float32), cp.empty(999, np.float32)
    fn, lc = _add_launch(cp, 1000, a, b, out)
    with pytest.raises(virtual.VirtualFault, match=r"write of \d+ bytes .* outside the allocation of its operand"):
        fn((lc.grid,), (launch.BLOCK,), (struct(lc.params),))
    out = cp.empty(1000, np.float32)
    fn, lc = _add_launch(cp, 1000, a, b, out)
    fn((lc.grid,), (launch.BLOCK,), (struct(lc.params),))                   # the same launch, in bounds
    assert (out.get() == 2).all()


def test_a_read_past_an_input_allocation_faults(cp):
    a, b, out = cp.ones(1000, np.float32), cp.ones(600, np.float32), cp.empty(1000, np.float32)
    fn, lc = _add_launch(cp, 1000, a, b, out)
    with pytest.raises(virtual.VirtualFault, match=r"read of \d+ bytes .* outside the allocation"):
        fn((lc.grid,), (launch.BLOCK,), (struct(lc.params),))


def test_a_misaligned_element_access_faults(cp):
    a, b, out = cp.ones(64, np.float64), cp.ones(64, np.float64), cp.empty(64, np.float64)
    fn, lc = _add_launch(cp, 60, a, b, out, shift=4)                         # doubles at 4 mod 8
    with pytest.raises(virtual.VirtualFault, match=r"misaligned \(needs 8 bytes\)"):
        fn((lc.grid,), (launch.BLOCK,), (struct(lc.params),))


def test_argument_size_and_launch_shape_are_checked(cp):
    a, b, out = cp.ones(300, np.float32), cp.ones(300, np.float32), cp.empty(300, np.float32)
    fn, lc = _add_launch(cp, 300, a, b, out)
    with pytest.raises(virtual.VirtualCudaError, match="the GPU would read past the argument"):
        fn((lc.grid,), (launch.BLOCK,), (struct(lc.params[:-8]),))
    with pytest.raises(virtual.VirtualCudaError, match="1 arguments for 1 parameters|2 arguments for 1"):
        fn((lc.grid,), (launch.BLOCK,), (struct(lc.params), 0))
    with pytest.raises(virtual.VirtualCudaError, match="at most 256 threads"):
        fn((lc.grid,), (512,), (struct(lc.params),))
    with pytest.raises(TypeError, match="tuples"):
        fn(lc.grid, launch.BLOCK, (struct(lc.params),))
    assert not (out.get() == 2).any()                                        # nothing ran
    fn((1,), (launch.BLOCK,), (struct(lc.params),))                          # any grid >= 1 (grid-stride)
    assert (out.get() == 2).all()


def test_kernel_lookup_by_nvrtc_lowered_name(cp):
    be = backends.get("cuda")
    gb.add(cp.ones(3, np.float32), cp.ones(3, np.float32))
    module = cp.cuda.function.Module()
    binary, lowered = gb.cuda.compiler.cached_kernel("binary", "gb::binary_contig<gb::Add, float, float>", "sm_90")
    module.load(binary)
    assert lowered in module.symbols and module.get_function(lowered).lowered == lowered
    with pytest.raises(virtual.VirtualCudaError, match="CUDA_ERROR_NOT_FOUND"):
        module.get_function("gb::binary_contig<gb::Add, float, float>")     # the name expression is no symbol
    assert be._functions


def test_ptx_path_for_an_architecture_nvrtc_does_not_know():
    with virtual.installed(virtual.VirtualCupy(compute_capability="999")) as cp:
        a = cp.asarray(np.arange(6, dtype=np.int32))
        assert (gb.multiply(a, 3).get() == np.arange(6) * 3).all()
        [(dev, name)] = backends.get("cuda")._functions
        assert name == "gb::binary_contig<gb::Multiply, gb::i32, gb::i32>"


def test_arrays_on_another_device_are_refused():
    with virtual.installed(virtual.VirtualCupy(device_count=2)) as cp:
        with cp.cuda.Device(1):
            a = cp.ones(4, np.float32)
        with pytest.raises(ValueError, match="on device 1 with the current device 0"):
            gb.add(a, a)
        with cp.cuda.Device(1):
            assert (gb.add(a, a).get() == 2).all()


def test_device_memory_is_not_host_memory(cp):
    x = cp.empty(8, np.uint8)
    assert (x.get() == virtual.POISON).all()                                 # unwritten output shows
    assert x.data.ptr % virtual.ALIGN == 0
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(x)
    assert backends.is_cuda_array(x) and backends.select([x]).name == "cuda"


def test_fast_programs_are_a_bounded_cache_that_keeps_no_failure(monkeypatch, tmp_path):
    """At most 24 programs' PTX per process; a compile that raises is not remembered, in memory or on
    disk (the next asks again)."""
    from gpubcast.cuda import catalog, compiler
    monkeypatch.setenv("GPUBCAST_CACHE_DIR", str(tmp_path))
    assert virtual._fast_program.cache_info().maxsize == 24
    calls = []

    def broken(*a, **k):
        calls.append(a[1])
        raise compiler.CompileError("NVRTC said no")
    monkeypatch.setattr(compiler, "compile_family", broken)
    virtual._fast_program.cache_clear()
    for _ in range(2):
        with pytest.raises(compiler.CompileError, match="NVRTC said no"):
            virtual.fast_kernel("binary", "gb::binary_contig<gb::Add, float, float>", "sm_90")
    program = next(p for p in catalog.fast_programs("binary") if "gb::binary_contig<gb::Add, float, float>" in p)
    assert calls == [program, program]                       # the catalog's program of the kernel, asked twice
    assert virtual._fast_program.cache_info().currsize == 0 and not list(tmp_path.rglob("*.entry"))


def test_the_check_and_the_device_compile_each_fast_program_once(monkeypatch, tmp_path):
    """``kernels --check --fast`` and the virtual device take their PTX from the same cached programs:
    after the check, the device's kernels compile nothing."""
    from gpubcast import kernels_cli
    from gpubcast.cuda import catalog, compiler
    monkeypatch.setenv("GPUBCAST_CACHE_DIR", str(tmp_path))
    virtual._fast_program.cache_clear()
    compiled = []
    compile_family = compiler.compile_family
    monkeypatch.setattr(compiler, "compile_family", lambda *a, **k: compiled.append(a[:2]) or compile_family(*a, **k))
    assert kernels_cli.check(["sm_90"], ["copy"], fast=True, jobs=1, out=lambda line: None) == 0
    assert compiled == [("copy", names) for names in catalog.fast_programs("copy")]
    for k in catalog.every_instantiation()["copy"]:
        for name in k.names():
            ptx, lowered = virtual.fast_kernel("copy", name, "sm_90")
            assert virtual.ptx_entries(ptx[:-1].decode())[lowered]["params"]
    assert len(compiled) == len(catalog.fast_programs("copy"))       # nothing more compiled
    virtual._fast_program.cache_clear()
