"""The compiled launch path (gpubcast.cuda.compiled_launch, gpubcast/native/cuda_launch.cpp) on the
virtual CUDA device: a repeated call on device arrays answered in C -- its signature read from the
arrays' own fields, its launches patched and sent through ``cuLaunchKernel``'s ABI (here the virtual
device's launcher, which checks the parameter bytes against the kernel's PTX and runs the emulation).

What is checked: the C path answers (``compiled_launch.answered``) every op kind, scalars by value,
out=, ``gb.fuse``, ``ElementwiseKernel`` and the ONNX backend on "CUDA", with NumPy's values and the
Python path's launches byte for byte; a call C cannot answer takes the Python path (same values,
same errors); an absent or damaged libcuda leaves the Python path; and the semantics GPU users rely
on: the current stream of the library owning the inputs (CuPy's, or torch's: ``virtual_torch``), no
synchronisation or host copy, stream capture, CuPy's device rule, the result's type following the
inputs'.
"""

import ctypes.util
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import gpubcast as gb
from gpubcast import backends, compiled_calls, dispatch, ops
from gpubcast.backends.cuda import CudaBackend
from gpubcast.testing.device import virtual_unavailable

pytestmark = pytest.mark.skipif(bool(virtual_unavailable()), reason=virtual_unavailable() or "")
virtual = pytest.importorskip("gpubcast.testing.virtual")
from gpubcast.cuda import compiled_launch  # noqa: E402 - after the skip: it builds with the virtual device's tools
from gpubcast.testing import virtual_torch  # noqa: E402

F32 = np.float32
HX = (np.arange(12, dtype=F32).reshape(3, 4) - 5.5) / 2
HB = np.array([0.5, -1.0, 2.0, 3.25], F32)


@pytest.fixture
def cp():
    with virtual.installed(virtual.VirtualCupy(seed=3)) as cp:
        assert compiled_launch.load() is not None, "the compiled launch path must build here"
        yield cp


def compiled(call, nth=3):
    """``call()`` ``nth`` times: the calls before take the Python path (the second sighting
    registers the entry; a fused call prepares its runner on the second, registers on the third),
    the ``nth`` is answered in C.  Its result."""
    for k in range(nth):
        before = compiled_launch.answered()
        result = call()
        assert compiled_launch.answered() - before == (k == nth - 1), f"call {k + 1} of {nth}"
    return result


def host(x):
    return x.get() if hasattr(x, "get") else x.cpu().numpy()


def python_path_only(monkeypatch):
    """From here on, calls take the backend's Python runner: no context for new entries, none left."""
    monkeypatch.setattr(backends.get("cuda"), "_context", False)
    compiled_calls.clear()


def table_call(table, op, inputs, out=None, **options):
    """A call through ``table`` as the NumPy-style functions make it (the compiled path first)."""
    found = compiled_calls.call(table, out, *inputs)
    return found if found is not None else dispatch.apply(op, inputs, out=out, table=table, **options)


def _cases(cp):
    x, b = cp.asarray(HX), cp.asarray(HB)
    xt = cp.asarray(np.ascontiguousarray(HX.T)).T            # a transposed view: the general kernels
    xi = cp.asarray(np.arange(12, dtype=np.int8).reshape(3, 4))
    o = cp.empty((3, 4), F32)
    copy_t, sum_t = compiled_calls.table_for("test copy (3, 4)"), compiled_calls.table_for("test sum")
    y, z = cp.asarray(HX * 2), cp.asarray(HX - 1)
    cond = cp.asarray(HX < HB)
    return [
        ("tanh", lambda: gb.tanh(x), np.tanh(HX)),
        ("add, broadcast", lambda: gb.add(x, b), HX + HB),
        ("add, transposed", lambda: gb.add(xt, b), HX + HB),
        ("multiply by a Python float", lambda: gb.multiply(x, 2.5), HX * 2.5),
        ("subtract from a Python int", lambda: gb.subtract(3, x), 3 - HX),
        ("multiply by a NumPy scalar", lambda: gb.multiply(x, F32(-1.5)), HX * F32(-1.5)),
        ("multiply by a 0-d array", lambda: gb.multiply(x, np.array(0.25, F32)), HX * F32(0.25)),
        ("int8 plus a Python int", lambda: gb.add(xi, 5), np.arange(12, dtype=np.int8).reshape(3, 4) + 5),
        ("less (bool out)", lambda: gb.less(x, b), HX < HB),
        ("where", lambda: gb.where(cond, x, 0.0), np.where(HX < HB, HX, F32(0))),
        ("cast to int32", lambda: gb.cast(x, np.int32), HX.astype(np.int32)),
        ("add into out=", lambda: gb.add(x, b, out=o), HX + HB),
        ("copy (broadcast_to's op)", lambda: table_call(copy_t, ops.get("copy"), (b,), rule="numpy_to", shape=(3, 4)),
         np.broadcast_to(HB, (3, 4))),
        ("sum of three (variadic)", lambda: table_call(sum_t, ops.get("sum"), (x, y, z)), HX + HX * 2 + (HX - 1)),
    ]


def test_every_op_kind_is_answered_in_c_with_numpys_values(cp):
    for name, call, want in _cases(cp):
        got = compiled(call)
        assert type(got) is cp.ndarray, name
        if name == "tanh":
            np.testing.assert_allclose(host(got), want, rtol=2e-6, err_msg=name)
        else:
            np.testing.assert_array_equal(host(got), want, err_msg=name)
        assert host(got).dtype == np.asarray(want).dtype, name


def _forms(cp):
    """Calling forms beyond the plain call, each through its own table (``OptionTables``, the front
    ends'): (name, call, NumPy's answer)."""
    import gpubcast.onnx as gx
    import gpubcast.openvino as gv
    x, b, c = cp.asarray(HX), cp.asarray(HB), cp.asarray(HB[:3])
    x64 = cp.asarray(HX.astype(np.float64))
    o64, oc = cp.empty((3, 4), np.float64), cp.empty((3, 4), np.complex64)
    return [
        ("broadcast_to", lambda: gb.broadcast_to(b, (3, 4)), np.broadcast_to(HB, (3, 4))),
        ("broadcast_to pdpd", lambda: gb.broadcast_to(c, (3, 4), mode="pdpd", axis=0),
         np.broadcast_to(HB[:3, None], (3, 4))),
        ("expand", lambda: gb.expand(b, [3, 4]), np.broadcast_to(HB, (3, 4))),
        ("broadcast='pdpd', axis=0", lambda: gb.add(x, c, broadcast="pdpd", axis=0), HX + HB[:3, None]),
        ("backend='cuda'", lambda: gb.add(x, b, backend="cuda"), HX + HB),
        ("dtype=float64", lambda: gb.add(x, b, dtype=np.float64), np.add(HX, HB, dtype=np.float64)),
        ("float32 + float64 arrays", lambda: gb.multiply(x, x64), HX * HX.astype(np.float64)),
        ("out= of float64", lambda: gb.add(x, b, out=o64), (HX + HB).astype(np.float64)),
        ("out= of complex64", lambda: gb.multiply(x, b, out=oc), (HX * HB).astype(np.complex64)),
        ("leaky_relu", lambda: gb.leaky_relu(x, 0.1), np.where(HX >= 0, HX, F32(0.1) * HX)),
        ("onnx Sum of 4", lambda: gx.Sum(x, x, b, x), HX + HX + HB + HX),
        ("onnx Add", lambda: gx.Add(x, b), HX + HB),
        ("openvino Add pdpd", lambda: gv.Add(x, c, auto_broadcast="pdpd", axis=0), HX + HB[:3, None]),
    ]


def test_every_calling_form_is_answered_in_c_with_numpys_values(cp):
    """Each calling form with a table of its own is answered in C from its fourth call, a call that
    converts an input first (dtype=, mixed types) or its result into out= of another dtype included:
    their cast launches are the entry's too, into temporaries it allocates."""
    for name, call, want in _forms(cp):
        for _ in range(3):
            call()
        got = compiled(call, 1)
        np.testing.assert_array_equal(host(got), want, err_msg=name)
        assert host(got).dtype == np.asarray(want).dtype, name


def _launches_of(cp, call):
    first = len(cp.launches)
    call()
    return [(name, grid, block, stream, params) for name, grid, block, stream, params in cp.launches[first:]]


def test_the_c_path_makes_the_python_paths_launches_byte_for_byte(cp, monkeypatch):
    """Into a given out= (so that every pointer is the same), the C path's launches -- kernel, grid,
    block, stream and every byte of the parameter block -- equal the Python runner's."""
    x, b, y, z = (cp.asarray(a) for a in (HX, HB, HX * 2, HX - 1))
    xt = cp.asarray(np.ascontiguousarray(HX.T)).T
    o, oi, cond = cp.empty((3, 4), F32), cp.empty((3, 4), np.int32), cp.asarray(HX < HB)
    sum_t = compiled_calls.table_for("test sum, out=")
    fused = gb.fuse(lambda x, b: x * gb.sigmoid(x) + b * 2)
    kernel = gb.ElementwiseKernel("T x, T y, float32 s", "T z", "z = x * s + y", "axpy_test")
    calls = [(lambda: gb.add(x, b, out=o), 3), (lambda: gb.multiply(xt, 2.5, out=o), 3),
             (lambda: gb.where(cond, x, -1.0, out=o), 3), (lambda: gb.cast(x, np.int32, out=oi), 3),
             (lambda: table_call(sum_t, ops.get("sum"), (x, y, z), out=o), 3), (lambda: fused(x, b, out=o), 4),
             (lambda: kernel(x, b, 0.5, o), 3)]
    for call, nth in calls:
        compiled(call, nth)
        by_c = _launches_of(cp, lambda: compiled(call, 1))
        python_path_only(monkeypatch)
        by_python = _launches_of(cp, call)
        monkeypatch.undo()
        assert by_c and by_c == by_python
    for name, call, _ in _forms(cp):                        # temporaries: new addresses each call
        for _ in range(3):
            call()
        by_c = _launches_of(cp, lambda: compiled(call, 1))
        python_path_only(monkeypatch)
        by_python = _launches_of(cp, call)
        monkeypatch.undo()
        assert [lc[:4] for lc in by_c] == [lc[:4] for lc in by_python], name


def test_fused_functions_and_elementwise_kernels_are_answered_in_c(cp):
    x, b, o = cp.asarray(HX), cp.asarray(HB), cp.empty((3, 4), F32)
    f = gb.fuse(lambda x, b: gb.maximum(x * 2 + b, 0))
    want = np.maximum(HX * 2 + HB, 0)
    np.testing.assert_array_equal(host(compiled(lambda: f(x, b), 4)), want)
    assert compiled(lambda: f(x, b, out=o), 4) is o
    np.testing.assert_array_equal(host(o), want)
    g = gb.fuse(lambda b, unused, x: gb.maximum(x * 2 + b, 0))   # leaves (x, b): arguments 2 and 0
    np.testing.assert_array_equal(host(compiled(lambda: g(b, o, x), 4)), want)
    k = gb.ElementwiseKernel("T x, T y, float32 s", "T z", "z = x * s + y", "axpy_test")
    for s in (0.5, 2.0):        # the scalar by value: a new value is the same entry
        np.testing.assert_array_equal(host(compiled(lambda s=s: k(x, b, s), 3 if s == 0.5 else 1)), HX * F32(s) + HB)
    two = gb.ElementwiseKernel("T x", "T y, T z", "y = x + 1; z = x * 2", "two_outputs_test")
    y1, y2 = compiled(lambda: two(x))
    np.testing.assert_array_equal(host(y1), HX + 1)
    np.testing.assert_array_equal(host(y2), HX * 2)


def test_onnx_backend_on_cuda_is_answered_in_c(cp):
    from onnx import TensorProto, helper

    from gpubcast.onnx import backend as onnx_backend
    f = TensorProto.FLOAT
    nodes = [helper.make_node("Mul", ["x", "s"], ["xs"]), helper.make_node("Add", ["xs", "b"], ["xsb"]),
             helper.make_node("Relu", ["xsb"], ["y"])]
    graph = helper.make_graph(nodes, "three", [helper.make_tensor_value_info("x", f, (3, 4)),
                                               helper.make_tensor_value_info("s", f, (4,)),
                                               helper.make_tensor_value_info("b", f, (4,))],
                              [helper.make_tensor_value_info("y", f, (3, 4))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    want = np.maximum(HX * (HB * 2) + HB, 0)
    for fuse, nth, per_run in ((False, 3, 3), (True, 4, 1)):   # node by node: three calls a run
        rep = onnx_backend.prepare(model, device="CUDA", fuse=fuse)
        for _ in range(nth):
            before = compiled_launch.answered()
            [y] = rep.run([HX, HB * 2, HB])
            np.testing.assert_array_equal(y, want)
        assert compiled_launch.answered() - before == per_run, fuse


def test_calls_c_cannot_answer_take_the_python_path(cp):
    """An out= partially overlapping an input, a Python int beyond the loop dtype, a misaligned array,
    a scalar C does not convert exactly: the Python path, with its values and errors.  An out= that
    is the input itself, element for element, is answered in C."""
    b = cp.asarray(HB)
    z = cp.asarray(np.arange(9, dtype=F32))
    w = cp.asarray(np.arange(9, dtype=F32))
    compiled(lambda: gb.add(w[1:], w[:-1], out=cp.empty(8, F32)))   # the signature's entry (no overlap)
    before = compiled_launch.answered()
    gb.add(z[1:], z[:-1], out=z[1:])                        # the inputs read before out is written
    assert compiled_launch.answered() == before
    want = np.arange(9, dtype=F32)
    want[1:] = want[1:] + want[:-1].copy()
    np.testing.assert_array_equal(host(z), want)
    y = cp.asarray(HX)
    compiled(lambda: gb.add(y, b, out=y))                   # in place: answered
    np.testing.assert_array_equal(host(y), HX + HB + HB + HB)
    xi = cp.asarray(np.arange(4, dtype=np.int8))
    compiled(lambda: gb.add(xi, 5))
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for int8"):
        gb.add(xi, 300)
    x32 = cp.asarray(HX)
    compiled(lambda: gb.multiply(x32, 2.0))
    before = compiled_launch.answered()
    with warnings.catch_warnings():                         # beyond float32: the Python path (NumPy may warn)
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(host(gb.multiply(x32, 1e300)), HX * np.float32(np.inf))
    assert compiled_launch.answered() == before
    mem = virtual.Allocation(cp, 64)
    aligned = cp.ndarray((3,), F32, virtual.MemoryPointer(mem, 16))
    skewed = cp.ndarray((3,), F32, virtual.MemoryPointer(mem, 18))
    aligned.fill(1)
    compiled(lambda: gb.add(aligned, aligned))
    with pytest.raises(ValueError, match="is not aligned to its 4-byte elements"):
        gb.add(skewed, aligned)


def test_an_error_from_the_launch_is_raised(cp):
    """The launcher's failure comes out as the device's error (here: a kernel handle it does not
    know), never a crash nor a silent result."""
    x = cp.asarray(HX)
    compiled(lambda: gb.negative(x))
    cp._functions.clear()                                   # every loaded kernel forgotten by the device
    with pytest.raises(virtual.VirtualCudaError, match="CUDA_ERROR_INVALID_HANDLE"):
        gb.negative(x)


def test_no_context_on_the_thread_yet_takes_the_python_path(cp):
    """cuLaunchKernel's CUDA_ERROR_INVALID_CONTEXT on a call's first launch (a thread on which no CUDA
    context is current yet): nothing ran, so the Python path (CuPy's launch) takes the call."""
    x, b = cp.asarray(HX), cp.asarray(HB)
    compiled(lambda: gb.add(x, b))
    cp.fail_next_launch(201)
    before = compiled_launch.answered()
    np.testing.assert_array_equal(host(gb.add(x, b)), HX + HB)
    assert compiled_launch.answered() == before
    cp.fail_next_launch(700)                                # CUDA_ERROR_ILLEGAL_ADDRESS: raised
    with pytest.raises(virtual.VirtualCudaError, match="cuLaunchKernel returned 700"):
        gb.add(x, b)


@pytest.mark.parametrize("libcuda", ["absent", "damaged", "no cuLaunchKernel"])
def test_an_absent_or_damaged_libcuda_leaves_the_python_path(cp, monkeypatch, tmp_path, libcuda):
    """The real launcher comes from libcuda, loaded at run time: where it does not load (or has no
    cuLaunchKernel), one warning says so and every call takes the Python path -- never a crash."""
    path = {"absent": str(tmp_path / "libcuda.so.1"), "damaged": str(tmp_path / "libcuda.so.1"),
            "no cuLaunchKernel": ctypes.util.find_library("m") or "libm.so.6"}[libcuda]
    if libcuda == "damaged":
        (tmp_path / "libcuda.so.1").write_bytes(b"\x7fELF" + bytes(range(256)) * 8)
    monkeypatch.setattr(compiled_launch, "LIBCUDA", path)
    monkeypatch.setitem(compiled_launch._state, "driver_tried", False)
    monkeypatch.setitem(compiled_launch._state, "driver", None)
    x, b = cp.asarray(HX), cp.asarray(HB)
    with backends.registered("cuda", CudaBackend(cp)):      # no launcher given: the driver's
        before = compiled_launch.answered()
        with pytest.warns(RuntimeWarning, match="cannot use the CUDA driver"):
            for _ in range(4):
                np.testing.assert_array_equal(host(gb.add(x, b)), HX + HB)
        assert compiled_launch.answered() == before
        assert backends.get("cuda").compiled_context() is None


def test_the_off_switch_leaves_the_python_path(tmp_path):
    """GPUBCAST_COMPILED_CALLS=0 turns the compiled launch path off with the CPU's: every call takes
    the Python runner, with the same values (a fresh process: the switch is read when it loads)."""
    code = ("import numpy as np, gpubcast as gb\n"
            "from gpubcast.testing import virtual\n"
            "from gpubcast.cuda import compiled_launch\n"
            "with virtual.installed() as cp:\n"
            "    x = cp.asarray(np.arange(6.0))\n"
            "    ok = all((gb.multiply(x, 2.0).get() == np.arange(6.0) * 2).all() for _ in range(4))\n"
            "    print(ok, compiled_launch.answered(), compiled_launch.load() is None)\n")
    env = {**os.environ, "GPUBCAST_COMPILED_CALLS": "0"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["True", "0", "True"]


# ---- the semantics GPU users rely on ---------------------------------------------------------------------

def test_launches_go_to_cupys_current_stream(cp):
    x, b = cp.asarray(HX), cp.asarray(HB)
    f = gb.fuse(lambda x, b: x * b + 1)
    k = gb.ElementwiseKernel("T x, T y", "T z", "z = x - y", "minus_test")
    s = cp.cuda.Stream()
    for call, nth in ((lambda: gb.add(x, b), 3), (lambda: f(x, b), 4), (lambda: k(x, b), 3)):
        with s:
            first = len(cp.launches)
            compiled(call, nth)
        assert {stream for *_, stream, _ in cp.launches[first:]} == {s.ptr}
        first = len(cp.launches)
        compiled(call, 1)                                   # outside the block: the null stream
        assert {stream for *_, stream, _ in cp.launches[first:]} == {0}


def test_no_call_synchronises_or_copies_to_the_host(cp, monkeypatch):
    """Neither path asks for a device-to-host copy or a synchronisation (the virtual device counts
    them: get, asnumpy, bool/int/float of an array, a stream's or device's synchronize)."""
    cases = _cases(cp)
    f = gb.fuse(lambda x, b: x * b + 1)
    k = gb.ElementwiseKernel("T x, T y", "T z", "z = x - y", "minus_test")
    x, b = cp.asarray(HX), cp.asarray(HB)
    calls = [call for _, call, _ in cases + _forms(cp)] + [lambda: f(x, b), lambda: k(x, b)]
    syncs = cp.host_syncs
    for call in calls:
        for _ in range(4):
            call()
    python_path_only(monkeypatch)                           # and the Python path alone
    for call in calls:
        call()
    assert cp.host_syncs == syncs


@pytest.mark.parametrize("compiled_path", [True, False])
def test_a_call_inside_a_stream_capture_is_captured_and_replays(cp, monkeypatch, compiled_path):
    """``Stream.begin_capture``: the calls' launches are captured on the capturing stream (a launch
    on any other stream would be an error), nothing runs until the graph is launched, and each
    replay computes from the inputs' memory as it is then."""
    x, b = cp.asarray(HX), cp.asarray(HB)
    f = gb.fuse(lambda x, b: x * 2 - b)
    gb.add(x, b), gb.add(x, b), f(x, b), f(x, b), f(x, b)   # entries ready (the C path answers in the capture)
    if not compiled_path:
        python_path_only(monkeypatch)
    s = cp.cuda.Stream()
    before = compiled_launch.answered()
    with s:
        s.begin_capture()
        y = gb.add(x, b)
        z = f(x, b)
        graph = s.end_capture()
    assert compiled_launch.answered() - before == (2 if compiled_path else 0)
    assert (host(y).view(np.uint8) == virtual.POISON).all()   # captured, not run
    graph.launch()
    np.testing.assert_array_equal(host(y), HX + HB)
    np.testing.assert_array_equal(host(z), HX * 2 - HB)
    x[...] = cp.asarray(HX * 10)
    graph.launch(s)
    np.testing.assert_array_equal(host(y), HX * 10 + HB)
    np.testing.assert_array_equal(host(z), HX * 20 - HB)


def test_arrays_on_another_device_or_two_devices_are_refused_on_both_paths():
    with virtual.installed(virtual.VirtualCupy(device_count=2)) as cp:
        with cp.cuda.Device(1):
            a, b = cp.asarray(HX), cp.asarray(HB)
            compiled(lambda: gb.add(a, b))                 # the entry of device 1's arrays
            k = gb.ElementwiseKernel("T x, T y", "T z", "z = x + y", "plus_test")
            compiled(lambda: k(a, b))
        c = cp.asarray(HB)                                  # on device 0
        for _ in range(3):                                  # the C path declines, the Python path says why
            before = compiled_launch.answered()
            with pytest.raises(ValueError, match="on device 1 with the current device 0"):
                gb.add(a, b)
            with pytest.raises(ValueError, match="on device 1 with the current device 0"):
                gb.add(a, c)                                # two devices
            with pytest.raises(ValueError, match="on device 1 with the current device 0"):
                k(a, b)
            assert compiled_launch.answered() == before
        with cp.cuda.Device(1):
            np.testing.assert_array_equal(host(compiled(lambda: gb.add(a, b), 1)), HX + HB)
        with virtual_torch.installed(cp) as torch:          # torch tensors: the same rule
            with cp.cuda.Device(1):
                t = torch.as_tensor(HX)
                compiled(lambda: gb.negative(t))
            for _ in range(2):
                with pytest.raises(ValueError, match="on device 1 with the current device 0"):
                    gb.negative(t)


# ---- torch tensors (testing.virtual_torch stands in for torch) ------------------------------------------

@pytest.fixture
def torch(cp):
    with virtual_torch.installed(cp) as torch:
        yield torch


def test_torch_tensors_in_torch_tensors_out_on_torchs_stream(cp, torch):
    """A torch user on a side stream: every launch goes to torch's current stream (not CuPy's), on
    the Python path and in C; the result is a torch tensor (allocated by torch in C)."""
    x, b = torch.as_tensor(HX), torch.as_tensor(HB)
    f = gb.fuse(lambda x, b: x * b + 1)
    k = gb.ElementwiseKernel("T x, T y", "T z", "z = x - y", "minus_test")
    side, cupy_stream = torch.cuda.Stream(), cp.cuda.Stream()
    cases = [(lambda: gb.add(x, b), 3, HX + HB), (lambda: gb.multiply(x, 2.0), 3, HX * 2),
             (lambda: f(x, b), 4, HX * HB + 1), (lambda: k(x, b), 3, HX - HB)]
    for call, nth, want in cases:
        with cupy_stream, torch.cuda.stream(side):
            first, allocated = len(cp.launches), len(torch.allocations)
            y = compiled(call, nth)
        assert type(y) is torch.Tensor
        assert len(torch.allocations) == allocated + 1     # the C path's result: torch.empty
        assert {stream for *_, stream, _ in cp.launches[first:]} == {side.cuda_stream}
        np.testing.assert_array_equal(host(y), want)
    o = torch.empty((3, 4), dtype=torch.float32)
    assert compiled(lambda: gb.add(x, b, out=o)) is o
    np.testing.assert_array_equal(host(o), HX + HB)


def test_torch_and_cupy_operands_together_give_a_torch_result(cp, torch):
    x, b = torch.as_tensor(HX), cp.asarray(HB)
    y = compiled(lambda: gb.subtract(x, b))
    assert type(y) is torch.Tensor
    np.testing.assert_array_equal(host(y), HX - HB)
    z = compiled(lambda: gb.subtract(cp.asarray(HX), b), 1)   # the same signature on CuPy arrays
    assert type(z) is cp.ndarray


def test_torch_tensors_autograd_and_conjugate_views_are_never_read_in_c(cp, torch):
    """A tensor that requires grad, or a complex one with a lazy conjugate: torch's own DLPack error
    (the Python path), even once the signature has its entry."""
    x, b = torch.as_tensor(HX), torch.as_tensor(HB)
    compiled(lambda: gb.add(x, b))
    grad = torch.as_tensor(HX, requires_grad=True)
    with pytest.raises(RuntimeError, match="require gradient"):
        gb.add(grad, b)
    c = torch.as_tensor(HX.astype(np.complex64))
    compiled(lambda: gb.negative(c))
    conj = type(c)(c._a, conj=True)
    with pytest.raises(RuntimeError, match="conjugate bit"):
        gb.negative(conj)


def test_the_torch_reader_takes_real_torch_tensors_fields(cp):
    """With torch installed (a CPU build here): the compiled path reads a real tensor's fields by their
    real names -- dtype, shape, stride(), data_ptr(), get_device(), requires_grad, is_conj() -- into
    the key a CuPy view of the same memory has; a CPU tensor (get_device() -1), one that requires
    grad, a conjugate view: no key.  gpubcast's torch routing claims CUDA tensors only."""
    torch = pytest.importorskip("torch")
    from gpubcast.cuda import torch_tensors
    module = compiled_launch.load()
    assert backends.get("cuda").compiled_context() is not None   # (it registers the virtual arrays' type)

    class OnDevice0(torch.Tensor):                          # a CPU tensor that says it is on device 0
        def get_device(self):
            return 0
    compiled_launch.register_library(OnDevice0, compiled_launch.READ_TORCH, lambda: 0, None, None,
                                     torch_tensors.numpy_dtypes(torch), torch=True)
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4).t().as_subclass(OnDevice0)
    view = cp.asarray(np.arange(12, dtype=F32).reshape(3, 4)).T   # (4, 3), strides (4, 16) bytes
    assert module.key(0, None, t) == module.key(0, None, view) is not None
    assert module.key(0, None, torch.ones(3).requires_grad_().as_subclass(OnDevice0)) is None
    assert module.key(0, None, torch.ones(3, dtype=torch.complex64).conj().as_subclass(OnDevice0)) is None
    assert module.key(0, None, torch.ones(3, dtype=torch.complex64).as_subclass(OnDevice0)) is not None
    assert len(torch_tensors.numpy_dtypes(torch)) == len(torch_tensors.DTYPE_NAMES)
    assert torch_tensors.torch_of((torch.ones(3), np.ones(3))) is None   # CPU tensors are not gpubcast's CUDA
