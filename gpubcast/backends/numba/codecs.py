"""How raw stored values relate to the values NumPy computes with (``Codec``), and the number-level
intrinsics the scalar functions are built from.

A ``Codec`` is a compile-time tag in the kernels:

``NATIVE``    raw values are the values (ints, float32/64, complex64/128);
``BOOL``      raw uint8, value ``raw != 0``;
``FLOAT16``   raw uint16 bits of an IEEE half; computed in float32 and rounded back to nearest
              even, as NumPy's half loops do (bit conversions are NumPy's ``halffloat`` ones);
``BFLOAT16``  raw uint16 bits of a bfloat16 (ml_dtypes); computed in float32 and rounded back to
              nearest even with NaN -> canonical quiet NaN, as ml_dtypes/Eigen do.

``decode`` and ``encode`` go between raw and computed values under a codec; ``convert`` converts a
raw value of one codec and raw type to another as NumPy's ``astype``.  The intrinsics are LLVM's
float functions (``fpow``, ``ffloor``, ...), bit casts, and the C library's complex functions.
"""

from __future__ import annotations

import platform
import sys

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import lower_constant
from numba.extending import intrinsic, models, register_model, typeof_impl

from .cache import overload, register_jitable


# --- codecs -------------------------------------------------------------------------------------

class Codec:
    """How raw stored values relate to computed values (a compile-time tag in the kernels)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __reduce__(self):  # deterministic pickling: Numba hashes closure variables into cache keys
        return (Codec, (self.name,))

    def __repr__(self):
        return f"Codec({self.name!r})"


NATIVE, BOOL, FLOAT16, BFLOAT16 = Codec("native"), Codec("bool"), Codec("float16"), Codec("bfloat16")


class CodecType(types.Dummy):
    def __init__(self, name: str):
        self.codec = name
        super().__init__(name=f"Codec[{name}]")


@typeof_impl.register(Codec)
def _typeof_codec(val, c):
    return CodecType(val.name)


register_model(CodecType)(models.OpaqueModel)


@lower_constant(CodecType)
def _lower_codec(context, builder, ty, pyval):
    return context.get_dummy_value()


def family(codec, x) -> str:
    """The value family of raw type ``x`` under ``codec`` (typing time): b, i, u, f or c."""
    name = codec.codec
    if name == "bool" or isinstance(x, types.Boolean):
        return "b"
    if name in ("float16", "bfloat16"):
        return "f"
    if isinstance(x, types.Integer):
        return "i" if x.signed else "u"
    if isinstance(x, types.Float):
        return "f"
    if isinstance(x, types.Complex):
        return "c"
    raise TypeError(f"no scalar family for {x} under {codec}")


# --- bit-level intrinsics -------------------------------------------------------------------------

@intrinsic
def f32_from_bits(typingctx, u):
    def codegen(context, builder, sig, args):
        return builder.bitcast(builder.trunc(args[0], ir.IntType(32)) if args[0].type.width > 32
                               else builder.zext(args[0], ir.IntType(32)) if args[0].type.width < 32
                               else args[0], ir.FloatType())
    return types.float32(u), codegen


@intrinsic
def f32_bits(typingctx, f):
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return types.uint32(types.float32), codegen


@intrinsic
def f32_has_bits(typingctx, f, mask):
    """True where the bits of float32 ``f`` and the uint32 ``mask`` share a set bit: a 32-bit test
    (Numba's own ``&`` on a uint32 is 64-bit, which halves the vector width of a loop around it)."""
    if f != types.float32 or mask != types.uint32:
        return None

    def codegen(context, builder, sig, args):
        bits = builder.and_(builder.bitcast(args[0], ir.IntType(32)), args[1])
        return builder.icmp_unsigned("!=", bits, ir.Constant(ir.IntType(32), 0))
    return types.boolean(types.float32, types.uint32), codegen


@intrinsic
def f32_magnitude_key(typingctx, f):
    """An int32 that orders the finite float32 values by magnitude (the bits of |f| plus 2^23: from
    2^23 at 0 up to 2^31 - 1 at the largest finite value) and is negative for +-inf and NaN (the sum
    wraps): the max of a block's keys tells whether it holds a finite value of magnitude >= some bound.
    32-bit IR (Numba's own integer arithmetic is 64-bit)."""
    if f != types.float32:
        return None

    def codegen(context, builder, sig, args):
        i32 = ir.IntType(32)
        bits = builder.and_(builder.bitcast(args[0], i32), ir.Constant(i32, 0x7FFFFFFF))
        return builder.add(bits, ir.Constant(i32, 0x00800000))
    return types.int32(types.float32), codegen


@intrinsic
def f32_split_sqrt2(typingctx, f):
    """(k, m) as two float32: f = 2 ** k * m, m in [sqrt(2)/2, sqrt(2)), for a positive normal float32
    (e_logf.c's normalisation; anything for others).  32-bit integer IR throughout (Numba's own
    integer arithmetic is 64-bit, which halves the vector width of a loop around it)."""
    def codegen(context, builder, sig, args):
        i32 = ir.IntType(32)
        c = lambda v: ir.Constant(i32, v)
        ix = builder.bitcast(args[0], i32)
        hx = builder.and_(ix, c(0x007FFFFF))
        half = builder.and_(builder.add(hx, c(0x4AFB0D)), c(0x800000))       # mantissa >= sqrt(2)
        k = builder.add(builder.sub(builder.lshr(ix, c(23)), c(127)), builder.lshr(half, c(23)))
        m = builder.bitcast(builder.or_(hx, builder.xor(half, c(0x3F800000))), ir.FloatType())
        return context.make_tuple(builder, sig.return_type, (builder.sitofp(k, ir.FloatType()), m))
    return types.UniTuple(types.float32, 2)(types.float32), codegen


@intrinsic
def f64_bits(typingctx, f):
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.uint64(types.float64), codegen


@intrinsic
def f64_from_bits(typingctx, u):
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


def _float_function(declare, nargs):
    """An intrinsic calling the function ``declare(module, ir type, numba type, nargs)`` declares, on
    floats of one type (float32 or float64)."""
    def impl(typingctx, *args):
        ty = args[0]
        if not isinstance(ty, types.Float) or any(a != ty for a in args):
            return None

        def codegen(context, builder, sig, llargs):
            return builder.call(declare(builder.module, llargs[0].type, ty, len(llargs)), llargs)
        return ty(*args), codegen
    if nargs == 1:
        return intrinsic(lambda typingctx, x: impl(typingctx, x))
    if nargs == 2:
        return intrinsic(lambda typingctx, x, y: impl(typingctx, x, y))
    return intrinsic(lambda typingctx, x, y, z: impl(typingctx, x, y, z))


def _llvm_float_intrinsic(name, nargs):
    """An intrinsic calling ``llvm.<name>`` on floats of one type (float32 or float64)."""
    return _float_function(lambda module, t, ty, n: module.declare_intrinsic(
        f"llvm.{name}", [t], ir.FunctionType(t, [t] * n)), nargs)


fpow = _llvm_float_intrinsic("pow", 2)
ffloor = _llvm_float_intrinsic("floor", 1)
fcopysign = _llvm_float_intrinsic("copysign", 2)
fceil = _llvm_float_intrinsic("ceil", 1)
frint = _llvm_float_intrinsic("rint", 1)
fabs_ = _llvm_float_intrinsic("fabs", 1)
fsqrt = _llvm_float_intrinsic("sqrt", 1)
ffma = _llvm_float_intrinsic("fma", 3)
ftrunc = _llvm_float_intrinsic("trunc", 1)
fexp2 = _llvm_float_intrinsic("exp2", 1)


def _libm(name: str, nargs: int):
    """An intrinsic calling the C library's real function ``name + 'f'`` (float32) or ``name``
    (float64), as NumPy's loops call it (``npy_cbrtf`` is ``cbrtf``, ...)."""
    return _float_function(lambda module, t, ty, n: cgutils.get_or_insert_function(
        module, ir.FunctionType(t, [t] * n), name + ("f" if ty == types.float32 else "")), nargs)


libm_cbrt, libm_hypot, libm_nextafter = _libm("cbrt", 1), _libm("hypot", 2), _libm("nextafter", 2)


@intrinsic
def ffmod(typingctx, x, y):
    """C fmod (LLVM ``frem``), in the type of the operands."""
    if not isinstance(x, types.Float) or x != y:
        return None

    def codegen(context, builder, sig, args):
        return builder.frem(args[0], args[1])
    return x(x, y), codegen


#: the C library's complex functions (cpow, cexp, clog, csqrt, ctanh and their float versions) are
#: called directly where their ABI is known (x86-64 Linux: a complex double is passed as two doubles
#: and returned as a pair, a complex float as one <2 x float>), as NumPy calls them
SYSTEM_CPOW = sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")


def _system_complex(name: str, nargs: int):
    """An intrinsic calling the C library's ``name`` (complex128) or ``name + 'f'`` (complex64)."""
    def typer(typingctx, *args):
        a = args[0]
        if not isinstance(a, types.Complex) or any(t != a for t in args):
            return None

        def codegen(context, builder, sig, llargs):
            fl = context.get_value_type(a.underlying_float)
            cs = [context.make_complex(builder, a, v) for v in llargs]
            out = context.make_complex(builder, a)
            if a.bitwidth == 128:
                fnty = ir.FunctionType(ir.LiteralStructType([fl, fl]), [fl] * (2 * nargs))
                r = builder.call(cgutils.get_or_insert_function(builder.module, fnty, name),
                                 [part for c in cs for part in (c.real, c.imag)])
                out.real, out.imag = builder.extract_value(r, 0), builder.extract_value(r, 1)
            else:
                vty = ir.VectorType(fl, 2)
                i0, i1 = ir.Constant(ir.IntType(32), 0), ir.Constant(ir.IntType(32), 1)

                def pack(c):
                    v = builder.insert_element(ir.Constant(vty, ir.Undefined), c.real, i0)
                    return builder.insert_element(v, c.imag, i1)
                fnty = ir.FunctionType(vty, [vty] * nargs)
                r = builder.call(cgutils.get_or_insert_function(builder.module, fnty, name + "f"),
                                 [pack(c) for c in cs])
                out.real, out.imag = builder.extract_element(r, i0), builder.extract_element(r, i1)
            return out._getvalue()
        return a(*args), codegen
    if nargs == 1:
        return intrinsic(lambda typingctx, a: typer(typingctx, a))
    return intrinsic(lambda typingctx, a, b: typer(typingctx, a, b))


system_cpow = _system_complex("cpow", 2)
system_cexp, system_clog = _system_complex("cexp", 1), _system_complex("clog", 1)
system_csqrt, system_ctanh = _system_complex("csqrt", 1), _system_complex("ctanh", 1)
#: the C library's complex functions NumPy's math functions call (#22): name -> intrinsic
SYSTEM_COMPLEX = {name: _system_complex(name, 1) for name in (
    "csin", "ccos", "ctan", "casin", "cacos", "catan", "csinh", "ccosh", "casinh", "cacosh", "catanh")}


# --- half and bfloat16 conversions (exact NumPy / ml_dtypes bit algorithms) ------------------------

@register_jitable
def _half_to_float_bits(h):
    """IEEE half bits -> float32 by their bits (NumPy's npy_halfbits_to_floatbits; NaN payloads kept)."""
    h = np.uint32(h)
    sign = (h & np.uint32(0x8000)) << np.uint32(16)
    e = h & np.uint32(0x7C00)
    m = h & np.uint32(0x03FF)
    if e == np.uint32(0):  # zero or subnormal: m * 2**-24, exact in float32
        magnitude = np.float32(m) * np.float32(5.960464477539063e-08)
        return fcopysign(magnitude, f32_from_bits(sign | np.uint32(0x3F800000)))
    if e == np.uint32(0x7C00):
        return f32_from_bits(sign | np.uint32(0x7F800000) | (m << np.uint32(13)))
    return f32_from_bits(sign | (((h & np.uint32(0x7FFF)) + np.uint32(0x1C000)) << np.uint32(13)))


@register_jitable
def _float_to_half_bits(v):
    """float32 -> IEEE half bits, round to nearest even, by their bits (NumPy's npy_floatbits_to_halfbits)."""
    f = f32_bits(np.float32(v))
    sign = np.uint16((f & np.uint32(0x80000000)) >> np.uint32(16))
    fe = f & np.uint32(0x7F800000)
    if fe >= np.uint32(0x47800000):  # overflow, inf or NaN
        fs = f & np.uint32(0x007FFFFF)
        if fe == np.uint32(0x7F800000) and fs != np.uint32(0):
            r = np.uint32(0x7C00) + (fs >> np.uint32(13))
            if r == np.uint32(0x7C00):
                r = np.uint32(0x7C01)
            return np.uint16(sign | np.uint16(r))
        return np.uint16(sign | np.uint16(0x7C00))
    if fe <= np.uint32(0x38000000):  # subnormal half or signed zero
        if fe < np.uint32(0x33000000):
            return sign
        e = fe >> np.uint32(23)
        fs = np.uint32(0x00800000) + (f & np.uint32(0x007FFFFF))
        fs = fs >> (np.uint32(113) - e)
        if (fs & np.uint32(0x3FFF)) != np.uint32(0x1000) or (f & np.uint32(0x7FF)) != np.uint32(0):
            fs = fs + np.uint32(0x1000)
        return np.uint16(sign + np.uint16(fs >> np.uint32(13)))
    he = (fe - np.uint32(0x38000000)) >> np.uint32(13)
    fs = f & np.uint32(0x007FFFFF)
    if (fs & np.uint32(0x3FFF)) != np.uint32(0x1000):
        fs = fs + np.uint32(0x1000)
    return np.uint16(sign + np.uint16(he + (fs >> np.uint32(13))))


@intrinsic
def _half_to_float_f16c(typingctx, h):
    """``_half_to_float_bits`` by LLVM's ``fpext`` (x86: the F16C instruction, which vectorises), a NaN by
    its bits (the instruction quiets a signalling NaN, NumPy keeps it as it is): 32-bit lanes
    throughout (Numba's own integer ops on a uint32 are 64-bit, and halved the vector width)."""
    if not isinstance(h, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        i16, i32 = ir.IntType(16), ir.IntType(32)
        x = args[0]
        bits = builder.trunc(x, i16) if x.type.width > 16 else builder.zext(x, i16) if x.type.width < 16 else x
        value = builder.fpext(builder.bitcast(bits, ir.HalfType()), ir.FloatType())
        u = builder.zext(bits, i32)
        nan = builder.or_(builder.or_(builder.shl(builder.and_(u, i32(0x8000)), i32(16)), i32(0x7F800000)),
                          builder.shl(builder.and_(u, i32(0x03FF)), i32(13)))
        return builder.select(builder.fcmp_unordered("uno", value, value), builder.bitcast(nan, ir.FloatType()),
                              value)
    return types.float32(h), codegen


@intrinsic
def _float32_to_half_f16c(typingctx, v):
    """``_float_to_half_bits`` of a float32 by LLVM's ``fptrunc`` (x86: the F16C instruction, which
    vectorises), a NaN by its bits (NumPy's: the payload's top bits, not quieted; 0x7C01 where those
    are all zero)."""
    if v != types.float32:
        return None

    def codegen(context, builder, sig, args):
        i16, i32 = ir.IntType(16), ir.IntType(32)
        value = args[0]
        half = builder.bitcast(builder.fptrunc(value, ir.HalfType()), i16)
        f = builder.bitcast(value, i32)
        r = builder.add(i32(0x7C00), builder.lshr(builder.and_(f, i32(0x007FFFFF)), i32(13)))
        r = builder.select(builder.icmp_unsigned("==", r, i32(0x7C00)), i32(0x7C01), r)
        nan = builder.trunc(builder.or_(builder.and_(builder.lshr(f, i32(16)), i32(0x8000)), r), i16)
        return builder.select(builder.fcmp_unordered("uno", value, value), nan, half)
    return types.uint16(v), codegen


@register_jitable
def _float_to_half_f16c(v):
    """``_float_to_half_bits`` (any real ``v``, through float32 as it does) by ``_float32_to_half_f16c``."""
    return _float32_to_half_f16c(np.float32(v))


def _has_f16c() -> bool:
    """Whether the code Numba makes here may use F16C: the target's features (``NUMBA_CPU_FEATURES``,
    else the host's) on x86-64; AArch64 converts halves natively; other machines by the bits."""
    machine = platform.machine().lower()
    if machine not in ("x86_64", "amd64"):
        return machine in ("aarch64", "arm64")
    from numba.core import config
    features = config.CPU_FEATURES
    if features is None:
        import llvmlite.binding as llvm
        features = llvm.get_host_cpu_features().flatten()
    return "+f16c" in features.split(",")


_F16C = _has_f16c()
#: IEEE half bits -> float32 (NumPy's npy_halfbits_to_floatbits: exact, NaN payloads kept)
half_to_float = _half_to_float_f16c if _F16C else _half_to_float_bits
#: float32 -> IEEE half bits, round to nearest even (NumPy's npy_floatbits_to_halfbits)
float_to_half = _float_to_half_f16c if _F16C else _float_to_half_bits


@register_jitable
def double_to_half(v):
    """float64 -> IEEE half bits, rounded once to nearest even (NumPy's npy_doublebits_to_halfbits:
    a float64 is not rounded to float32 first)."""
    d = f64_bits(np.float64(v))
    sign = np.uint16((d & np.uint64(0x8000000000000000)) >> np.uint64(48))
    de = d & np.uint64(0x7FF0000000000000)
    if de >= np.uint64(0x40F0000000000000):  # overflow, inf or NaN
        ds = d & np.uint64(0x000FFFFFFFFFFFFF)
        if de == np.uint64(0x7FF0000000000000) and ds != np.uint64(0):
            r = np.uint64(0x7C00) + (ds >> np.uint64(42))
            if r == np.uint64(0x7C00):
                r = np.uint64(0x7C01)
            return np.uint16(sign | np.uint16(r))
        return np.uint16(sign | np.uint16(0x7C00))
    if de <= np.uint64(0x3F00000000000000):  # subnormal half or signed zero
        if de < np.uint64(0x3E60000000000000):
            return sign
        e = de >> np.uint64(52)
        ds = np.uint64(0x0010000000000000) + (d & np.uint64(0x000FFFFFFFFFFFFF))
        ds = ds << (e - np.uint64(998))
        if (ds & np.uint64(0x003FFFFFFFFFFFFF)) != np.uint64(0x0010000000000000):
            ds = ds + np.uint64(0x0010000000000000)
        return np.uint16(sign + np.uint16(ds >> np.uint64(53)))
    he = (de - np.uint64(0x3F00000000000000)) >> np.uint64(42)
    ds = d & np.uint64(0x000FFFFFFFFFFFFF)
    if (ds & np.uint64(0x000007FFFFFFFFFF)) != np.uint64(0x0000020000000000):
        ds = ds + np.uint64(0x0000020000000000)
    return np.uint16(sign + np.uint16(he + (ds >> np.uint64(42))))


@register_jitable
def bfloat16_to_float(h):
    return f32_from_bits(np.uint32(h) << np.uint32(16))


@register_jitable
def float_to_bfloat16(v):
    """float32 -> bfloat16 bits: round to nearest even; NaN -> quiet NaN with the sign (Eigen)."""
    f = np.float32(v)
    u = f32_bits(f)
    if f != f:
        return np.uint16(0xFFC0) if u >> np.uint32(31) else np.uint16(0x7FC0)
    return np.uint16((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16))


def decode(codec, x):
    """Raw stored value -> value computed with."""
    raise NotImplementedError


@overload(decode)
def _decode(codec, x):
    name = codec.codec
    if name == "float16":
        return lambda codec, x: half_to_float(x)
    if name == "bfloat16":
        return lambda codec, x: bfloat16_to_float(x)
    if name == "bool":
        return lambda codec, x: x != 0
    return lambda codec, x: x


def encode(codec, v):
    """Computed value -> raw stored value (rounding to nearest even for float16/bfloat16)."""
    raise NotImplementedError


@overload(encode)
def _encode(codec, v):
    name = codec.codec
    if name == "float16":
        return lambda codec, v: float_to_half(v)
    if name == "bfloat16":
        return lambda codec, v: float_to_bfloat16(v)
    return lambda codec, v: v


def convert(codec_from, codec_to, x, T):
    """Raw ``x`` (under ``codec_from``) converted to raw type ``T`` under ``codec_to``, as NumPy's
    astype (casting='unsafe'): truth for bool, the real part of a complex for reals, float64 ->
    float16 rounded once, -> bfloat16 through float32 (ml_dtypes); float -> int out of range or NaN
    is undefined (C's conversion)."""
    raise NotImplementedError


@register_jitable
def _real_part(v):
    return v.real


@register_jitable
def _itself(v):
    return v


@register_jitable
def ctruth(v):
    """The truth of a complex value: a nonzero real or imaginary part."""
    return v.real != 0 or v.imag != 0


@overload(convert)
def _convert(codec_from, codec_to, x, T):
    source, target = family(codec_from, x), codec_to.codec
    if target == "bool":
        if source == "c":
            return lambda codec_from, codec_to, x, T: T(ctruth(x))
        return lambda codec_from, codec_to, x, T: T(decode(codec_from, x) != 0)
    if source == "c" and isinstance(T.instance_type, types.Complex):
        return lambda codec_from, codec_to, x, T: T(x)
    part = _real_part if source == "c" else _itself
    if target == "float16":
        single = codec_from.codec in ("float16", "bfloat16") or x in (types.float32, types.complex64)
        if single:  # a float32 value: NumPy's float -> half
            return lambda codec_from, codec_to, x, T: float_to_half(np.float32(part(decode(codec_from, x))))
        return lambda codec_from, codec_to, x, T: double_to_half(np.float64(part(decode(codec_from, x))))
    if target == "bfloat16":
        return lambda codec_from, codec_to, x, T: float_to_bfloat16(np.float32(part(decode(codec_from, x))))
    return lambda codec_from, codec_to, x, T: T(part(decode(codec_from, x)))
