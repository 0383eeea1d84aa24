"""The planner-to-kernel parameters: magic numbers, elements per thread, argument layout,
operand classes, kernel choice and index width -- checked against NumPy models and against
the compiled kernels (host emulation harness exports each kernel's EPT and argument size)."""

import dataclasses

import numpy as np
import pytest

import gpubcast as gb
from gpubcast import ops
from gpubcast.cuda import catalog, launch
from gpubcast.cuda.sources import FAMILIES
from gpubcast.testing import emulate

needs_harness = pytest.mark.skipif(bool(emulate.available()), reason=emulate.available() or "")


def _magic_quotients(n, m, shift, bits):
    """(mulhi(n, m) + n) >> shift in `bits`-bit unsigned arithmetic (Python ints: exact)."""
    return [(((int(x) * m) >> bits) + int(x)) >> shift for x in n]


@pytest.mark.parametrize("bits", [32, 64])
def test_magic_division_equals_integer_division(bits):
    rng = np.random.default_rng(bits)
    limit = 2 ** (bits - 1)
    divisors = np.concatenate([np.arange(1, 300), rng.integers(1, limit, 400, dtype=np.uint64),
                               [2**k for k in range(bits - 1)], [2**k + 1 for k in range(1, bits - 1)],
                               [limit - 1, limit]]).astype(object)
    for d in divisors:
        d = int(d)
        m, shift = launch.magic(d, bits)
        assert 0 < m < 2**bits and 0 <= shift <= bits - 1
        n = np.concatenate([rng.integers(0, limit, 64, dtype=np.uint64),
                            [0, 1, d - 1, d, d + 1, 2 * d - 1, limit - 1]]).astype(object)
        n = [x for x in n if 0 <= x < limit]
        assert _magic_quotients(n, m, shift, bits) == [int(x) // d for x in n], d


def test_magic_division_vectorised_32bit_model():
    # the 32-bit device arithmetic (u32 wrap-around) modelled with NumPy uint64
    rng = np.random.default_rng(7)
    for d in rng.integers(1, 2**31, 200):
        m, shift = launch.magic(int(d), 32)
        n = rng.integers(0, 2**31, 5000, dtype=np.uint64)
        hi = (n * np.uint64(m)) >> np.uint64(32)
        q = ((hi + n) & np.uint64(0xFFFFFFFF)) >> np.uint64(shift)
        assert np.array_equal(q, n // np.uint64(d))


def test_magic_rejects_divisors_out_of_range():
    with pytest.raises(ValueError):
        launch.magic(0, 32)
    with pytest.raises(ValueError):
        launch.magic(2**31 + 2, 32)


@pytest.mark.parametrize("sizes, ept", [((1,), 16), ((2,), 8), ((4,), 4), ((8,), 4), ((16,), 4),
                                        ((1, 8, 1), 4), ((2, 2, 1), 8)])
def test_contig_ept_model(sizes, ept):
    assert catalog.contig_ept(*sizes) == ept


@pytest.fixture(scope="module")
def sample_emulator():
    picks = [
        catalog.kernels_for(ops.get("add"), (np.dtype(t), np.dtype(t)), np.dtype(t))
        for t in ("int8", "float16", "float32", "float64", "complex128")
    ] + [
        catalog.kernels_for(ops.get("less"), (np.dtype("float64"), np.dtype("float64")), np.dtype(bool)),
        catalog.kernels_for(ops.get("where"), (np.dtype(bool), np.dtype("int8"), np.dtype("int8")), np.dtype("int8")),
        catalog.kernels_for(ops.get("copy"), (np.dtype("complex128"),), np.dtype("complex128")),
        catalog.kernels_for(ops.get("sum"), (np.dtype("float32"),), np.dtype("float32")),
    ]
    return picks, emulate.Emulator(picks)


@needs_harness
def test_ept_and_argument_sizes_match_the_compiled_kernels(sample_emulator):
    picks, emu = sample_emulator
    for k in picks:
        nin = FAMILIES[k.family].nin
        for bits in (None, 32, 64):
            name = k.name(bits)
            assert emu.ept(name) == k.ept(bits), name
            size = launch.head_size(nin) if bits is None else launch.general_size(nin, bits)
            assert emu.param_size(name) == size, name


def _launches(*arrays, op="add", out=None, **kw):
    p = gb.plan(*arrays, out=out, **kw)
    operands = [emulate.operand(np.asarray(x)) for x in arrays]
    o = out if out is not None else np.empty(p.out_shape, np.asarray(arrays[0]).dtype)
    return p, launch.plan_launches(ops.get(op), p, operands, emulate.operand(o, output=True))


def _classes(lc, nargs):
    word = int.from_bytes(lc.params[launch.head_size(FAMILIES[lc.family].nin) - 16:][:4], "little")
    return [(word >> (2 * k)) & 3 for k in range(nargs)]


def test_kernel_choice_and_operand_classes():
    a = np.ones((64, 33), np.float32)
    _, [lc] = _launches(a, a)
    assert lc.name == "gb::binary_contig<gb::Add, float, float>" and lc.ept == 4
    assert _classes(lc, 3) == [launch.CONTIG] * 3
    # row broadcast: b is strided (stride 0 on dim 0) -> general kernel, 32-bit indices
    _, [lc] = _launches(a, np.ones(33, np.float32))
    assert lc.name.startswith("gb::binary_general<") and lc.name.endswith("gb::u32>")
    assert _classes(lc, 3) == [launch.CONTIG, launch.CONTIG, launch.STRIDED]
    # a 0-d host value is a kernel argument; a size-1 array a device scalar
    _, [lc] = _launches(a, np.array(2.0, np.float32))
    assert _classes(lc, 3) == [launch.CONTIG, launch.CONTIG, launch.VALUE]
    assert lc.params[8 * 3 + 32:8 * 3 + 36] == np.float32(2.0).tobytes()   # value[2]
    _, [lc] = _launches(a, np.ones((1, 1), np.float32))
    assert _classes(lc, 3) == [launch.CONTIG, launch.CONTIG, launch.SCALAR]
    # a strided output forces the general kernel
    out = np.empty((33, 64), np.float32).T
    _, [lc] = _launches(a, a, out=out)
    assert lc.name.startswith("gb::binary_general<") and _classes(lc, 3)[0] == launch.STRIDED


def test_index_width_follows_the_plan():
    a, b = np.ones((4, 5), np.float32), np.ones(5, np.float32)
    p = gb.plan(a, b)
    assert p.index_bits == 32
    ops_ = [emulate.operand(a), emulate.operand(b)]
    out = emulate.operand(np.empty((4, 5), np.float32), output=True)
    [lc] = launch.plan_launches(ops.get("add"), dataclasses.replace(p, index_bits=64), ops_, out)
    assert lc.name.endswith("gb::u64>") and len(lc.params) == launch.general_size(2, 64)
    # a plan whose offsets reach past 2**31 - 1 is planned 64-bit
    huge = gb.plan((2, 2**30 + 1), (2**30 + 1,))
    assert huge.index_bits == 64


def test_offset_calc_packing_innermost_first():
    p = gb.plan((3, 1, 5), (4, 5))            # out (3, 4, 5); a broadcasts dim 1, b dim 0
    blob = launch.pack_calc(tuple(p.coalesced_shape),
                            (tuple(p.coalesced_out_strides),) + tuple(map(tuple, p.coalesced_strides)), 32)
    ndim = int.from_bytes(blob[:4], "little", signed=True)
    dims = np.frombuffer(blob[8:8 + 12 * launch.MAX_DIMS], np.uint32).reshape(launch.MAX_DIMS, 3)
    at = 8 + 12 * launch.MAX_DIMS
    strides = np.frombuffer(blob[at:at + 12 * launch.MAX_DIMS], np.int32).reshape(launch.MAX_DIMS, 3)
    steps = np.frombuffer(blob[at + 12 * launch.MAX_DIMS:at + 12 * launch.MAX_DIMS + 12], np.int32)
    assert list(steps) == [0, 0, 0]                           # no lane chunks asked for
    assert list(np.frombuffer(blob[-24:], np.uint32)) == [1, 1, 0, 1, 1, 0]   # no shared tiles: dividers by 1
    assert len(blob) == at + 12 * launch.MAX_DIMS + 12 + 24
    assert ndim == len(p.coalesced_shape)
    assert list(dims[:ndim, 0]) == list(reversed(p.coalesced_shape))
    assert [tuple(s) for s in strides[:ndim]] == list(zip(*[list(reversed(s)) for s in
                                                           [p.coalesced_out_strides, *p.coalesced_strides]]))
    assert (dims[ndim:, 0] == 1).all() and (strides[ndim:] == 0).all()


def test_rank_above_max_dims_splits_into_launches():
    # 12 alternating broadcast dims cannot coalesce: 2 leading dims -> 4 launches
    shape_a = tuple(2 if i % 2 else 1 for i in range(12))
    shape_b = tuple(1 if i % 2 else 2 for i in range(12))
    p, lcs = _launches(np.ones(shape_a, np.float32), np.ones(shape_b, np.float32))
    assert len(p.coalesced_shape) == 12 and len(lcs) == 4
    assert all(int.from_bytes(lc.params[launch.head_size(2) - 24:][:8], "little") == 2**10 for lc in lcs)


def test_variadic_chains_launches_of_at_most_eight_inputs():
    xs = [np.ones(7, np.float32) for _ in range(19)]
    p = gb.plan(*xs)
    out = np.empty(7, np.float32)
    lcs = launch.plan_launches(ops.get("mean"), p, [emulate.operand(x) for x in xs], emulate.operand(out, True))
    nin_aux = [tuple(int.from_bytes(lc.params[launch.head_size(8) - 8 + 4 * i:][:4], "little") for i in range(2))
               for lc in lcs]
    assert nin_aux == [(8, 0), (8, 0), (5, 19)]       # 8 + 7 + 4 new inputs; divide by 19 at the end


def test_zero_size_launches_nothing():
    _, lcs = _launches(np.ones((0, 3), np.float32), np.ones(3, np.float32))
    assert lcs == []


def test_every_instantiation_covers_every_op():
    every = catalog.every_instantiation()
    functors = {k.targs.split(",")[0] for ks in every.values() for k in ks}
    assert functors == {f"gb::{op.functor}" for op in ops.REGISTRY.values()} | \
        {f"gb::{f}" for f in catalog.SCALAR_SECOND.values()}
    # power's scalar-exponent variant: float32/float64 only
    assert sorted(k.targs for k in every["binary"] if "PowerScalar" in k.targs) == \
        ["gb::PowerScalarExponent, double, double", "gb::PowerScalarExponent, float, float"]
    assert len(every["copy"]) == len(every["ternary"]) == len(catalog.MOVE_SIZES)
    # the int64/uint64 mixed comparison loops of NumPy 2 are instantiated
    assert any(k.targs == "gb::Less, gb::i64, gb::u64" for k in every["binary"])


def test_unsupported_dtypes_are_type_errors():
    with pytest.raises(TypeError, match="strings, objects"):
        catalog.cxx_type(np.dtype("U3"))
    with pytest.raises(TypeError, match="cannot move elements"):
        catalog.move_type(np.dtype("U3"))
    with pytest.raises(TypeError, match="cannot move elements"):
        catalog.move_type(np.dtype([("a", "i1"), ("b", "i2")]))


def test_variadic_general_launches_take_8_elements_a_thread_for_few_inputs_of_2_or_4_bytes():
    # issue 23 (gpubcast/kernels/variadic.cu variadic_general_ept): at most 4 inputs on the 32-bit path, 2- or 4-byte
    # elements: 8 a thread, the grid sized by it; more inputs, other sizes: 4
    def general(dtype, nin):
        xs = [np.ones((40, 300), dtype)] + [np.ones(300, dtype)] * (nin - 1)
        p, launches = _launches(*xs, op="sum")
        [lc] = [lc for lc in launches if lc.name.startswith("gb::variadic_general<")]
        assert lc.name.endswith("gb::u32>")
        return lc.ept, lc.grid, p.size

    for dtype, nin, ept in [(np.float32, 2, 8), (np.float32, 4, 8), (np.int16, 3, 8), (np.float16, 4, 8),
                            (np.float32, 5, 4), (np.float32, 8, 4), (np.int8, 3, 4), (np.float64, 3, 4)]:
        got, grid, size = general(dtype, nin)
        assert got == ept, (dtype, nin)
        assert grid == -(-size // (launch.BLOCK * ept)), (dtype, nin)
    k = catalog.kernels_for(ops.get("sum"), (np.dtype(np.float32),), np.dtype(np.float32))
    assert (k.ept(None), k.ept(32), k.ept(64)) == (4, 8, 4)


@pytest.mark.parametrize("blocks", [(1, 1), (3, 7), (2**16 + 1, 2**15 - 3), (2**31 - 1, 1)])
def test_shared_tile_dividers_give_each_tiles_coordinates(blocks):
    # gpubcast/kernels/shared_tiles.cuh for_each_shared_tile: tile -> (o, rb, cb) by the packed dividers
    # ((mulhi(n, magic) + n) >> shift, 32-bit), as division gives them, for tiles up to 2**31 - 1
    blob = launch.pack_calc((4, 5), ((5, 1), (1, 4)), 32, (), 0, blocks)
    grid = np.frombuffer(blob[-24:], np.uint32).reshape(2, 3).astype(np.uint64)
    rng = np.random.default_rng(1)
    n = np.concatenate([np.arange(64, dtype=np.uint64), np.array([2**31 - 1, 2**31 - 2], np.uint64),
                        rng.integers(0, 2**31, 10_000, dtype=np.uint64)])
    for (d, m, sh), divisor in zip(grid, blocks):
        assert d == divisor
        q = ((((n * m) >> np.uint64(32)) + n) & np.uint64(2**32 - 1)) >> sh
        assert np.array_equal(q, n // np.uint64(divisor))
