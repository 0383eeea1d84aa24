"""Per-op scalar semantics for the Numba backend: the one place that declares them.

``SCALAR`` maps each op name of the registry (``gpubcast/ops.py``) that the Numba kernels compute
to a scalar function ``f(codec, x, y)``: ``x`` and ``y`` are *raw* stored values (what a load from
the array gives), the result is the raw value to store.  ``VARIADIC`` maps each variadic op to
``(step, finish)``: the output is ``finish(codec, step(...step(x1, x2)..., xn), n)``, left to
right, exactly like the registry's ``functools.reduce`` references.

A ``Codec`` says how raw values relate to the values NumPy computes with:

``NATIVE``    raw values are the values (ints, float32/64, complex64/128);
``BOOL``      raw uint8, value ``raw != 0``;
``FLOAT16``   raw uint16 bits of an IEEE half; computed in float32 and rounded back to nearest
              even, as NumPy's half loops do (bit conversions are NumPy's ``halffloat`` ones);
``BFLOAT16``  raw uint16 bits of a bfloat16 (ml_dtypes); computed in float32 and rounded back to
              nearest even with NaN -> canonical quiet NaN, as ml_dtypes/Eigen do.

Values follow the registry's NumPy references (NumPy 2 on this machine, ml_dtypes for bfloat16):
floor division and remainder of floats use NumPy's ``npy_divmod``; integer division guards x / 0
and INT_MIN / -1 (which traps on x86); shifts by >= the width (or by a negative count) give 0, or
-1 for a right shift of a negative value; complex multiply rounds like NumPy's FMA loops; complex
division is NumPy's Smith algorithm; float maximum/minimum propagate NaN and return the second
operand on ties (the first for float16, as NumPy's half loops do).

Assumption: ``power`` of float32/float64 uses the C library's ``pow``/``powf`` (NumPy uses SVML on
AVX-512 machines for contiguous data, which may differ in the last bit).  Complex power with a
non-integer exponent calls the C library's ``cpow``/``cpowf`` like NumPy on x86-64 Linux, elsewhere
``exp(b * log(a))``, equal to NumPy within a few ulps.
"""

from __future__ import annotations

import cmath
import math
import platform
import sys

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import lower_constant
from numba.extending import intrinsic, models, overload, register_jitable, register_model, typeof_impl


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


def _family(codec, x) -> str:
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
def f64_bits(typingctx, f):
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.uint64(types.float64), codegen


@intrinsic
def f64_from_bits(typingctx, u):
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


def _llvm_float_intrinsic(name, nargs):
    """An intrinsic calling ``llvm.<name>`` on floats of one type (float32 or float64)."""
    def impl(typingctx, *args):
        ty = args[0]
        if not isinstance(ty, types.Float) or any(a != ty for a in args):
            return None

        def codegen(context, builder, sig, llargs):
            t = llargs[0].type
            fn = builder.module.declare_intrinsic(f"llvm.{name}", [t], ir.FunctionType(t, [t] * len(llargs)))
            return builder.call(fn, llargs)
        return ty(*args), codegen
    if nargs == 1:
        return intrinsic(lambda typingctx, x: impl(typingctx, x))
    if nargs == 2:
        return intrinsic(lambda typingctx, x, y: impl(typingctx, x, y))
    return intrinsic(lambda typingctx, x, y, z: impl(typingctx, x, y, z))


fpow = _llvm_float_intrinsic("pow", 2)
ffloor = _llvm_float_intrinsic("floor", 1)
fcopysign = _llvm_float_intrinsic("copysign", 2)
fceil = _llvm_float_intrinsic("ceil", 1)
frint = _llvm_float_intrinsic("rint", 1)
fabs_ = _llvm_float_intrinsic("fabs", 1)
fsqrt = _llvm_float_intrinsic("sqrt", 1)
ffma = _llvm_float_intrinsic("fma", 3)


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


_system_cpow = _system_complex("cpow", 2)
_system_cexp, _system_clog = _system_complex("cexp", 1), _system_complex("clog", 1)
_system_csqrt, _system_ctanh = _system_complex("csqrt", 1), _system_complex("ctanh", 1)


# --- half and bfloat16 conversions (exact NumPy / ml_dtypes bit algorithms) ------------------------

@register_jitable
def half_to_float(h):
    """IEEE half bits -> float32 (NumPy's npy_halfbits_to_floatbits; NaN payloads kept)."""
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
def float_to_half(v):
    """float32 -> IEEE half bits, round to nearest even (NumPy's npy_floatbits_to_halfbits)."""
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


@overload(convert)
def _convert(codec_from, codec_to, x, T):
    source, target = _family(codec_from, x), codec_to.codec
    if target == "bool":
        if source == "c":
            return lambda codec_from, codec_to, x, T: T(_ctruth(x))
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


# --- helpers over computed values -----------------------------------------------------------------

def _jitable(fn):
    """``fn`` callable from jitted code (registered once)."""
    if not getattr(fn, "_gpubcast_jitable", False):
        register_jitable(fn)
        fn._gpubcast_jitable = True
    return fn


def _lift(fn):
    """``fn(value, value) -> value`` as a raw-in, raw-out scalar function."""
    fn = _jitable(fn)
    return lambda codec, x, y: encode(codec, fn(decode(codec, x), decode(codec, y)))


def _predicate(fn):
    """``fn(value, value) -> bool`` on raw inputs."""
    fn = _jitable(fn)
    return lambda codec, x, y: fn(decode(codec, x), decode(codec, y))


def _select(first):
    """``first(value, value) -> bool``: keep the raw first operand if true, else the second."""
    first = _jitable(first)
    return lambda codec, x, y: x if first(decode(codec, x), decode(codec, y)) else y


def like(x, v):
    """``v`` converted to the type of ``x`` (keeps float32 math in float32)."""
    raise NotImplementedError


@overload(like)
def _like(x, v):
    t = x
    if isinstance(x, types.Complex):
        return lambda x, v: t(complex(v))
    return lambda x, v: t(v)


def cpack(x, re, im):
    """The complex ``re + im*j`` in the complex type of ``x``."""
    raise NotImplementedError


@overload(cpack)
def _cpack(x, re, im):
    t = x
    return lambda x, re, im: t(complex(re, im))


@register_jitable
def _isnan(v):
    return v != v


@register_jitable
def _truth(v):
    return v != 0


@register_jitable
def _ctruth(v):
    return v.real != 0 or v.imag != 0


@register_jitable
def _cmul(a, b):
    """Complex multiply rounded like NumPy's SIMD loops: fma(ar, br, -(ai*bi)), fma(ar, bi, ai*br)."""
    return cpack(a, ffma(a.real, b.real, -(a.imag * b.imag)), ffma(a.real, b.imag, a.imag * b.real))


@register_jitable
def _cmul_plain(a, b):
    """Complex multiply without FMA, as NumPy's npy_cpow computes integer powers."""
    return cpack(a, a.real * b.real - a.imag * b.imag, a.real * b.imag + a.imag * b.real)


@register_jitable
def _cdiv(a, b):
    """Complex division by NumPy's Smith algorithm (loops_arithm_fp)."""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    abr, abi = abs(br), abs(bi)
    one = like(br, 1)
    if abr >= abi:
        if abr == 0 and abi == 0:
            return cpack(a, ar / abr, ai / abi)
        rat = bi / br
        scl = one / (br + bi * rat)
        return cpack(a, (ar + ai * rat) * scl, (ai - ar * rat) * scl)
    rat = br / bi
    scl = one / (bi + br * rat)
    return cpack(a, (ar * rat + ai) * scl, (ai * rat - ar) * scl)


@register_jitable
def _cge(a, b):
    return ((a.real > b.real and not _isnan(a.imag) and not _isnan(b.imag))
            or (a.real == b.real and a.imag >= b.imag))


@register_jitable
def _cgt(a, b):
    return ((a.real > b.real and not _isnan(a.imag) and not _isnan(b.imag))
            or (a.real == b.real and a.imag > b.imag))


@register_jitable
def _cle(a, b):
    return ((a.real < b.real and not _isnan(a.imag) and not _isnan(b.imag))
            or (a.real == b.real and a.imag <= b.imag))


@register_jitable
def _clt(a, b):
    return ((a.real < b.real and not _isnan(a.imag) and not _isnan(b.imag))
            or (a.real == b.real and a.imag < b.imag))


@register_jitable
def _cnan(a):
    return _isnan(a.real) or _isnan(a.imag)


@register_jitable
def _float_divmod(a, b):
    """NumPy's npy_divmod for a nonzero divisor: (floor quotient, remainder with b's sign)."""
    zero = like(a, 0)
    one = like(a, 1)
    mod = ffmod(a, b)
    div = (a - mod) / b
    if mod != 0:
        if (b < 0) != (mod < 0):
            mod = mod + b
            div = div - one
    else:
        mod = fcopysign(zero, b)
    if div != 0:
        floordiv = ffloor(div)
        if div - floordiv > 0.5:
            floordiv = floordiv + one
    else:
        floordiv = fcopysign(zero, a / b)
    return floordiv, mod


@register_jitable
def _float_floor_divide(a, b):
    if b == 0:
        return a / b
    return _float_divmod(a, b)[0]


@register_jitable
def _float_remainder(a, b):
    if b == 0:
        return ffmod(a, b)
    return _float_divmod(a, b)[1]


# --- the scalar functions, one per op ---------------------------------------------------------------

def _binary(families):
    """Declare a scalar function: ``families`` maps a value family (b/i/u/f/c) to the raw impl
    builder ``(codec type, raw type) -> impl``, or to an impl directly."""
    def stub(codec, x, y):
        raise NotImplementedError

    @overload(stub)
    def _ov(codec, x, y):
        fam = _family(codec, x)
        make = families.get(fam)
        if make is None:
            raise TypeError(f"no scalar implementation for family {fam!r} ({x} under {codec})")
        return make(codec, x) if getattr(make, "_builder", False) else make
    return stub


def _builder(fn):
    fn._builder = True
    return fn


def _arith(op):
    """The same value formula for every numeric family, lifted through the codec."""
    f = _lift(op)
    return {"i": f, "u": f, "f": f, "c": f}


def _integer(build):
    """A family builder from ``build(t, signed) -> impl`` (``t``: the Numba integer type)."""
    @_builder
    def make(codec, xt):
        return build(xt, xt.signed)
    return make


def _floor_divide_int(t, signed):
    def impl(codec, x, y):
        a, b = x, y
        if b == 0:
            return t(0)
        if signed and b == -1:
            return t(-a)  # INT_MIN // -1 wraps to INT_MIN, and never traps
        return t(a // b)
    return impl


def _remainder_int(t, signed):
    def impl(codec, x, y):
        a, b = x, y
        if b == 0 or (signed and b == -1):
            return t(0)
        return t(a % b)
    return impl


def _fmod_int(t, signed):
    def impl(codec, x, y):
        a, b = x, y
        if b == 0 or (signed and b == -1):
            return t(0)
        r = t(a % b)
        if r != 0 and (a < 0) != (b < 0):
            r = t(r - b)
        return r
    return impl


def _div_trunc_int(t, signed):
    def impl(codec, x, y):
        a, b = x, y
        if b == 0:
            return t(0)
        if signed and b == -1:
            return t(-a)
        q = t(a // b)
        if (a < 0) != (b < 0) and t(a % b) != 0:
            q = t(q + 1)
        return q
    return impl


def _power_int(t, signed):
    def impl(codec, x, y):
        a, b = x, y
        one = t(1)
        if signed and b < 0:
            if a == 1:
                return one
            if a == -1:
                return t(-1) if b & 1 else one
            return t(0)
        result = one
        base = a
        e = b
        while e > 0:
            if e & 1:
                result = t(result * base)
            e = t(e >> 1)
            if e > 0:
                base = t(base * base)
        return result
    return impl


def _shift(left: bool):
    @_builder
    def make(codec, xt):
        t, signed = xt, xt.signed
        width = xt.bitwidth
        ut = types.Integer.from_bitwidth(width, signed=False)

        if left:
            def impl(codec, x, y):
                a, b = x, y
                if ut(b) < width:
                    return t(a << b)
                return t(0)
        else:
            def impl(codec, x, y):
                a, b = x, y
                if ut(b) < width:
                    return t(a >> b)
                if signed and a < 0:
                    return t(-1)
                return t(0)
        return impl
    return make


@_builder
def _float_power(codec, x):
    return _lift(lambda a, b: fpow(a, b))


@register_jitable
def _power_fast_path(a, b):
    if b == -1:
        return like(a, 1) / a
    if b == 0:
        return like(a, 1)
    if b == 0.5:
        return np.sqrt(a)
    if b == 1:
        return a
    if b == 2:
        return a * a
    return fpow(a, b)


@_builder
def _float_power_scalar_exponent(codec, x):
    if codec.codec != "native":  # float16 (NumPy's half loop) and bfloat16 (ml_dtypes): plain pow
        return _lift(lambda a, b: fpow(a, b))
    return _lift(lambda a, b: _power_fast_path(a, b))


@register_jitable
def _complex_power(a, b):
    """NumPy's npy_cpow: exact special cases and repeated multiplication for small integer
    exponents; otherwise exp(b * log(a))."""
    one = cpack(a, 1.0, 0.0)
    if b.real == 0 and b.imag == 0:
        return one
    if a.real == 0 and a.imag == 0:
        if b.real > 0:
            return cpack(a, 0.0, 0.0)
        return cpack(a, math.nan, math.nan)
    if b.imag == 0 and b.real > -100 and b.real < 100:
        n = int(b.real)
        if n == b.real:
            if n == 1:
                return a
            if n == 2:
                return _cmul_plain(a, a)
            if n == 3:
                return _cmul_plain(a, _cmul_plain(a, a))
            m = -n if n < 0 else n
            aa = one
            p = a
            mask = 1
            while True:
                if m & mask:
                    aa = _cmul_plain(aa, p)
                mask <<= 1
                if m < mask:
                    break
                p = _cmul_plain(p, p)
            if b.real < 0:
                return _cdiv(one, aa)
            return aa
    if SYSTEM_CPOW:
        return _system_cpow(a, b)
    return cpack(a, 0.0, 0.0) + np.exp(b * np.log(a))


def _float_maximum():
    """NaN-propagating maximum: second operand on ties (first for float16, like NumPy's half loop)."""
    @_builder
    def make(codec, x):
        if codec.codec == "float16":
            return _select(lambda a, b: a >= b or _isnan(a))
        return _select(lambda a, b: a > b or _isnan(a))
    return make


def _float_minimum():
    @_builder
    def make(codec, x):
        if codec.codec == "float16":
            return _select(lambda a, b: a <= b or _isnan(a))
        return _select(lambda a, b: a < b or _isnan(a))
    return make


@_builder
def _prelu_make(codec, x):
    if codec.codec in ("float16", "bfloat16"):
        def impl(codec, x, y):
            a, s = x, y
            v = decode(codec, a)
            return encode(codec, v * decode(codec, s)) if v < 0 else a
        return impl

    def impl(codec, x, y):
        a, s = x, y
        return a * s if a < 0 else a
    return impl


_compare_real = {
    "equal": lambda a, b: a == b, "not_equal": lambda a, b: a != b,
    "greater": lambda a, b: a > b, "greater_equal": lambda a, b: a >= b,
    "less": lambda a, b: a < b, "less_equal": lambda a, b: a <= b,
}
_compare_complex = {
    "equal": lambda a, b: a.real == b.real and a.imag == b.imag,
    "not_equal": lambda a, b: a.real != b.real or a.imag != b.imag,
    "greater": lambda a, b: _cgt(a, b), "greater_equal": lambda a, b: _cge(a, b),
    "less": lambda a, b: _clt(a, b), "less_equal": lambda a, b: _cle(a, b),
}
_logical = {
    "logical_and": lambda p, q: p and q,
    "logical_or": lambda p, q: p or q,
    "logical_xor": lambda p, q: p != q,
}


def _logical_families(combine):
    combine = _jitable(combine)
    real = _predicate(lambda a, b: combine(_truth(a), _truth(b)))
    return {"b": _predicate(combine), "i": real, "u": real, "f": real,
            "c": _predicate(lambda a, b: combine(_ctruth(a), _ctruth(b)))}


def _compare_families(name):
    real = _predicate(_compare_real[name])
    return {"b": real, "i": real, "u": real, "f": real, "c": _predicate(_compare_complex[name])}


_bitwise = {"bitwise_and": lambda a, b: a & b, "bitwise_or": lambda a, b: a | b,
            "bitwise_xor": lambda a, b: a ^ b}


def _declare():
    add = _arith(lambda a, b: a + b)
    add["b"] = _lift(lambda a, b: a or b)
    sub = _arith(lambda a, b: a - b)
    mul = _arith(lambda a, b: a * b)
    mul["b"] = _lift(lambda a, b: a and b)
    mul["c"] = _lift(lambda a, b: _cmul(a, b))
    div = {"f": _lift(lambda a, b: a / b), "c": _lift(lambda a, b: _cdiv(a, b))}
    int_max = _select(lambda a, b: a > b)
    int_min = _select(lambda a, b: a < b)
    table = {
        "add": add,
        "subtract": sub,
        "multiply": mul,
        "divide": div,
        "floor_divide": {"i": _integer(_floor_divide_int), "u": _integer(_floor_divide_int),
                         "f": _lift(lambda a, b: _float_floor_divide(a, b))},
        "remainder": {"i": _integer(_remainder_int), "u": _integer(_remainder_int),
                      "f": _lift(lambda a, b: _float_remainder(a, b))},
        "fmod": {"i": _integer(_fmod_int), "u": _integer(_fmod_int), "f": _lift(lambda a, b: ffmod(a, b))},
        "power": {"i": _integer(_power_int), "u": _integer(_power_int), "f": _float_power,
                  "c": _lift(lambda a, b: _complex_power(a, b))},
        "maximum": {"b": _lift(lambda a, b: a or b), "i": int_max, "u": int_max, "f": _float_maximum(),
                    "c": _select(lambda a, b: _cnan(a) or _cge(a, b))},
        "minimum": {"b": _lift(lambda a, b: a and b), "i": int_min, "u": int_min, "f": _float_minimum(),
                    "c": _select(lambda a, b: _cnan(a) or _cle(a, b))},
        "left_shift": {"i": _shift(True), "u": _shift(True)},
        "right_shift": {"i": _shift(False), "u": _shift(False)},
        "div_trunc": {"i": _integer(_div_trunc_int), "u": _integer(_div_trunc_int),
                      "f": div["f"], "c": div["c"]},
        "prelu": {"i": _prelu_make, "u": _prelu_make, "f": _prelu_make},
    }
    for name in _compare_real:
        table[name] = _compare_families(name)
    # NumPy's float32/float64 power loop takes a fast path when the exponent is one value for the
    # whole call (measured on NumPy 2.4: a scalar, a (1, 1) array or an all-0-stride view; not an
    # exponent broadcast along a row but varying along another dim): -1 -> 1/x, 0 -> 1,
    # 0.5 -> sqrt(x), 1 -> x, 2 -> x*x
    variants = {"power": dict(table["power"], f=_float_power_scalar_exponent)}
    for name, combine in _logical.items():
        table[name] = _logical_families(combine)
    for name, fn in _bitwise.items():
        f = _lift(fn)
        table[name] = {"b": f, "i": f, "u": f}
    return table, variants


def _make_stubs(table, prefix):
    out = {}
    for name, families in table.items():
        stub = _binary(families)
        stub.__name__ = stub.__qualname__ = f"{prefix}{name}"
        stub.__module__ = __name__
        globals()[stub.__name__] = stub  # importable by name: closures over it pickle by reference
        out[name] = stub
    return out


_TABLE, _VARIANTS = _declare()
#: op name -> scalar function ``f(codec, raw x, raw y) -> raw result``
SCALAR = _make_stubs(_TABLE, "op_")
#: op name -> its scalar function where the second operand is one value over the whole call (NumPy's
#: loop takes a fast path then: measured, a broadcast operand that varies along any dim does not get
#: it), for the ops where NumPy's values differ there
SCALAR_SECOND_CONSTANT = _make_stubs(_VARIANTS, "op_second_constant_")


def row_functions(name: str):
    """(scalar function, its variant for a second operand constant along the row) of op ``name``."""
    f = SCALAR[name]
    return f, SCALAR_SECOND_CONSTANT.get(name, f)


# --- unary scalar functions ---------------------------------------------------------------------------

def _unary(families):
    """Declare a unary scalar function ``f(codec, raw x) -> raw result`` (as ``_binary``)."""
    def stub(codec, x):
        raise NotImplementedError

    @overload(stub)
    def _ov(codec, x):
        fam = _family(codec, x)
        make = families.get(fam)
        if make is None:
            raise TypeError(f"no scalar implementation for family {fam!r} ({x} under {codec})")
        return make(codec, x) if getattr(make, "_builder", False) else make
    return stub


def _lift1(fn):
    """``fn(value) -> value`` as a raw-in, raw-out unary scalar function."""
    fn = _jitable(fn)
    return lambda codec, x: encode(codec, fn(decode(codec, x)))


def _raw1(fn):
    """``fn(raw) -> raw``: the raw value is the value (integers, bools kept as raw 0/1)."""
    return _jitable(fn)


def _complex_function(system, portable):
    """The C library's complex function where it can be called (NumPy's values), else Numba's cmath."""
    if SYSTEM_CPOW:
        return _lift1(lambda v: system(v))
    return _lift1(lambda v: portable(v))


@register_jitable
def _creciprocal(v):
    """NumPy's complex reciprocal loop (a Smith division of 1 by v, without Smith's zero case)."""
    one = like(v.real, 1)
    if abs(v.imag) <= abs(v.real):
        r = v.imag / v.real
        d = v.real + v.imag * r
        return cpack(v, one / d, -r / d)
    r = v.real / v.imag
    d = v.real * r + v.imag
    return cpack(v, r / d, -one / d)


@register_jitable
def _sign_float(v):
    if v > 0:
        return like(v, 1)
    if v < 0:
        return like(v, -1)
    if v == 0:
        return like(v, 0)
    return v  # nan


_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10


@register_jitable
def _exp_f64_short(x):
    """e ** x in float64 for |x| <= 20, to about 1e-15 relative, by arithmetic only (so loops of it
    vectorise): x = n ln2 + r, |r| <= ln2 / 2, a degree-13 Taylor polynomial of e ** r, times 2 ** n."""
    n = ffloor(x * 1.4426950408889634 + 0.5)
    r = (x - n * _LN2_HI) - n * _LN2_LO
    p = (((((1.0 / 6227020800.0 * r + 1.0 / 479001600.0) * r + 1.0 / 39916800.0) * r + 1.0 / 3628800.0) * r
          + 1.0 / 362880.0) * r + 1.0 / 40320.0) * r + 1.0 / 5040.0
    p = (((((p * r + 1.0 / 720.0) * r + 1.0 / 120.0) * r + 1.0 / 24.0) * r + 1.0 / 6.0) * r + 0.5) * r + 1.0
    return (p * r + 1.0) * f64_from_bits((np.int64(n) + np.int64(1023)) << np.int64(52))


@register_jitable
def _tanh_single(v):
    """tanh of a float32 value (float16 and bfloat16 compute in float32), computed in float64 and
    rounded once: within an ulp of the true value, vectorisable (the C library's tanhf is not)."""
    x = np.float64(v)
    a = fabs_(x)
    y = 2.0 * a if 2.0 * a < 20.0 else 20.0     # tanh(10) rounds to 1 in float32 (and NaN -> 20)
    big = fcopysign(1.0 - 2.0 / (_exp_f64_short(y) + 1.0), x)
    small = fcopysign(a - a * a * a / 3.0, x)    # tanh x = x - x^3 / 3 + O(x^5), |x| < 2^-12; -0 stays -0
    t = small if a < 2.0 ** -12 else big         # selects, no branches: the loop vectorises
    return np.float32(t if x == x else x)


def _tanh(v):
    raise NotImplementedError


@overload(_tanh)
def _tanh_ov(v):
    if v == types.float32:
        return lambda v: _tanh_single(v)
    return lambda v: math.tanh(v)


@register_jitable
def _sigmoid(v):
    one = like(v, 1)
    return one / (one + math.exp(-v))


@register_jitable
def _erf(v):
    return like(v, math.erf(np.float64(v)))  # float32: computed in float64, rounded once (the reference)


def _relu(codec, x):
    """max(x, 0) with ``maximum``'s own NaN and tie rules (the raw zero is +0 in every codec)."""
    return lambda codec, x: op_maximum(codec, x, like(x, 0))


_relu._builder = True


def _declare_unary():
    ident = lambda codec, x: x  # noqa: E731 - integers and bools unchanged (floor, ceil, round)
    neg = _raw1(lambda codec, x: -x)
    return {
        "negative": {"i": neg, "u": neg, "f": _lift1(lambda v: -v), "c": _lift1(lambda v: -v)},
        "abs": {"b": ident, "i": _raw1(lambda codec, x: -x if x < 0 else x), "u": ident,
                "f": _lift1(lambda v: fabs_(v)), "c": lambda codec, x: abs(x)},
        "sqrt": {"f": _lift1(lambda v: fsqrt(v)), "c": _complex_function(_system_csqrt, cmath.sqrt)},
        "exp": {"f": _lift1(lambda v: math.exp(v)), "c": _complex_function(_system_cexp, cmath.exp)},
        "log": {"f": _lift1(lambda v: math.log(v)), "c": _complex_function(_system_clog, cmath.log)},
        "tanh": {"f": _lift1(lambda v: _tanh(v)), "c": _complex_function(_system_ctanh, cmath.tanh)},
        "erf": {"f": _lift1(lambda v: _erf(v))},
        "sigmoid": {"f": _lift1(lambda v: _sigmoid(v))},
        "reciprocal": {"f": _lift1(lambda v: like(v, 1) / v), "c": _lift1(lambda v: _creciprocal(v))},
        "floor": {"b": ident, "i": ident, "u": ident, "f": _lift1(lambda v: ffloor(v))},
        "ceil": {"b": ident, "i": ident, "u": ident, "f": _lift1(lambda v: fceil(v))},
        "round": {"i": ident, "u": ident, "f": _lift1(lambda v: frint(v))},
        "sign": {"i": _raw1(lambda codec, x: (x > 0) - (x < 0)), "u": _raw1(lambda codec, x: x > 0),
                 "f": _lift1(lambda v: _sign_float(v))},
        "relu": {"i": _relu, "u": _relu, "f": _relu},
        "logical_not": {"b": lambda codec, x: x == 0, "i": lambda codec, x: x == 0, "u": lambda codec, x: x == 0,
                        "f": lambda codec, x: not _truth(decode(codec, x)),
                        "c": lambda codec, x: not _ctruth(x)},
        "bitwise_not": {"b": lambda codec, x: x == 0, "i": _raw1(lambda codec, x: ~x),
                        "u": _raw1(lambda codec, x: ~x)},
    }


def _make_unary_stubs(table):
    out = {}
    for name, families in table.items():
        stub = _unary(families)
        stub.__name__ = stub.__qualname__ = f"unary_{name}"
        stub.__module__ = __name__
        globals()[stub.__name__] = stub
        out[name] = stub
    return out


#: unary op name -> scalar function ``f(codec, raw x) -> raw result`` (``cast`` runs NumPy's astype)
UNARY = _make_unary_stubs(_declare_unary())


def move(codec, x):
    """Data movement's scalar function: the raw value itself (``unary_row`` of it copies elements)."""
    raise NotImplementedError


@overload(move)
def _move(codec, x):
    return lambda codec, x: x


def count_finish(codec, acc, n):
    """Finish of ``sum``/``max``/``min``: the accumulated value itself."""
    raise NotImplementedError


@overload(count_finish)
def _count_finish(codec, acc, n):
    return lambda codec, acc, n: acc


def mean_finish(codec, acc, n):
    """Finish of ``mean``: the sum divided by n converted to the inputs' type (NumPy's
    ``total / dtype(n)``), complex by NumPy's Smith division."""
    raise NotImplementedError


@overload(mean_finish)
def _mean_finish(codec, acc, n):
    fam = _family(codec, acc)
    if fam == "c":
        return lambda codec, acc, n: _cdiv(acc, cpack(acc, n, 0))
    if codec.codec in ("float16", "bfloat16"):
        def impl(codec, acc, n):
            count = decode(codec, encode(codec, np.float32(n)))  # n in the inputs' type
            return encode(codec, decode(codec, acc) / count)
        return impl
    return lambda codec, acc, n: acc / like(acc, n)


#: variadic op name -> (step scalar function, finish function)
VARIADIC = {
    "sum": (SCALAR["add"], count_finish),
    "mean": (SCALAR["add"], mean_finish),
    "max": (SCALAR["maximum"], count_finish),
    "min": (SCALAR["minimum"], count_finish),
}

#: ops whose integer results do not depend on signedness (two's complement): the kernels compute
#: signed integers as unsigned of the same width, sharing one compiled specialisation
SIGN_AGNOSTIC = frozenset({"add", "subtract", "multiply", "bitwise_and", "bitwise_or", "bitwise_xor",
                           "equal", "not_equal", "left_shift", "logical_and", "logical_or",
                           "logical_xor", "sum"})
