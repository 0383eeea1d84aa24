// math_functions.cuh -- the NumPy 2 value of each unary op, activation and math function on one
// element (gb::num: negative, absolute, sqrt, rounding, cast, ...; gb::num::act, the activations'
// double formulas; the math functions of #22 with nextafter, fmax and fmin).  Part of
// numeric.cuh, whose Assumptions hold here.
#pragma once

#include "arithmetic.cuh"

namespace gb {
namespace num {

// ---- unary ops (NumPy's loops; float16 / bfloat16 computed in float, rounded once) --------
template <typename T> GB_FN T negative(T x) {
  if constexpr (is_int<T>()) return wrap_neg(x);
  else if constexpr (is_half<T>()) return from_float<T>(-to_float(x));
  else if constexpr (is_complex<T>()) return T{-x.re, -x.im};
  else return -x;
}

// |x|; complex -> its real modulus (hypot); -INT_MIN wraps to INT_MIN, as NumPy's.
template <typename T> GB_FN auto absolute(T x) {
  if constexpr (is_sint<T>()) return x < 0 ? wrap_neg(x) : x;
  else if constexpr (is_half<T>()) return from_float<T>(fabs_(to_float(x)));
  else if constexpr (is_complex<T>()) return hypot_(x.re, x.im);
  else if constexpr (is_float<T>()) return fabs_(x);
  else return x;  // bool, unsigned
}

// A real function of floats: float16 / bfloat16 through float.
#define GB_REAL_FN(NAME, EXPR)                                                                 \
  template <typename T> GB_FN T NAME(T x) {                                                   \
    if constexpr (is_half<T>()) { const float v = to_float(x); return from_float<T>(EXPR); }  \
    else { const T v = x; return EXPR; }                                                      \
  }
GB_REAL_FN(sqrt, sqrt_(v))
GB_REAL_FN(exp, exp_(v))
GB_REAL_FN(log, log_(v))
GB_REAL_FN(tanh, tanh_(v))
GB_REAL_FN(erf, erf_(v))
GB_REAL_FN(sigmoid, (decltype(v))1 / ((decltype(v))1 + exp_(-v)))

// floor / ceil / rint: integers and bools unchanged.
#define GB_ROUNDING(NAME, FN)                                                             \
  template <typename T> GB_FN T NAME(T x) {                                             \
    if constexpr (is_half<T>()) return from_float<T>(FN(to_float(x)));                  \
    else if constexpr (is_float<T>()) return FN(x);                                     \
    else return x;                                                                      \
  }
GB_ROUNDING(floor, floor_)
GB_ROUNDING(ceil, ceil_)
GB_ROUNDING(rint, rint_)
#undef GB_ROUNDING

// np.round: rint; complex: both parts.
template <typename T> GB_FN T round(T x) {
  if constexpr (is_complex<T>()) return T{rint_(x.re), rint_(x.im)};
  else return rint(x);
}

// 1 / x; complex: NumPy's reciprocal loop (Smith's division of 1 by x).
template <typename T> GB_FN T reciprocal(T x) {
  if constexpr (is_half<T>()) return from_float<T>(1.0f / to_float(x));
  else if constexpr (is_complex<T>()) {
    typedef decltype(x.re) R;
    if (fabs_(x.im) <= fabs_(x.re)) {
      const R r = x.im / x.re, d = x.re + x.im * r;
      return T{(R)1 / d, -r / d};
    }
    const R r = x.re / x.im, d = x.re * r + x.im;
    return T{r / d, (R)-1 / d};
  } else return (T)1 / x;
}

// NumPy 2's complex sign: x / |x| (0 for 0, NaN for NaN; an infinite part gives +-1 on its axis).
template <typename C> GB_FN C csign(C x) {
  typedef decltype(x.re) R;
  const R m = hypot_(x.re, x.im);
  if (isnan_(m)) return C{nan_<R>(), nan_<R>()};
  if (m == inf_<R>()) {
    if (fabs_(x.re) == m) return fabs_(x.im) == m ? C{nan_<R>(), nan_<R>()} : C{x.re > 0 ? (R)1 : (R)-1, (R)0};
    return C{(R)0, x.im > 0 ? (R)1 : (R)-1};
  }
  if (m == 0) return C{(R)0, (R)0};
  return C{x.re / m, x.im / m};
}

// -1, 0 or 1 (NaN stays NaN; sign(-0.0) is +0.0); complex: csign.
template <typename T> GB_FN T sign(T x) {
  if constexpr (is_half<T>()) return from_float<T>(sign(to_float(x)));
  else if constexpr (is_complex<T>()) return csign(x);
  else if constexpr (is_float<T>()) return x > 0 ? (T)1 : x < 0 ? (T)-1 : x == 0 ? (T)0 : x;
  else if constexpr (is_sint<T>()) return (T)((x > 0) - (x < 0));
  else return (T)(x > 0);
}

template <typename T> GB_FN T invert(T x) {
  if constexpr (Num<T>::kind == K_BOOL) return !x;
  else return (T)~x;
}

// NumPy's astype (casting='unsafe'): complex -> real keeps the real part; -> bool is truth;
// float16 from double rounds once (NumPy), bfloat16 through float (ml_dtypes); float -> int
// out of range or NaN is undefined (C's conversion), as in NumPy.
template <typename R, typename A> GB_FN R cast(A x) {
  if constexpr (Num<R>::kind == K_BOOL) return truth(x);
  else if constexpr (is_half<A>()) return cast<R>(to_float(x));
  else if constexpr (is_complex<A>() && is_complex<R>()) {
    typedef decltype(R().re) P;
    return R{(P)x.re, (P)x.im};
  } else if constexpr (is_complex<A>()) return cast<R>(x.re);
  else if constexpr (is_complex<R>()) {
    typedef decltype(R().re) P;
    return R{cast<P>(x), (P)0};
  } else if constexpr (is_same<R, f16>::value && is_same<A, double>::value) return __double2half(x);
  else if constexpr (is_half<R>()) return from_float<R>((float)x);
  else return (R)x;
}

// --- activations (issue #22; gpubcast/ops.py ACTIVATIONS) ------------------------------------------------
// Each computes in double and rounds once to its type (num::cast: float16 once, bfloat16 through
// float, as ml_dtypes), like the registry's references; act:: holds the double formulas.
template <typename T> GB_FN double wide(T x) {
  if constexpr (is_half<T>()) return (double)to_float(x);
  else return (double)x;
}

namespace act {
GB_FN double clip01(double t) { return t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t; }  // NaN stays NaN
GB_FN double clip06(double t) { return t < 0.0 ? 0.0 : t > 6.0 ? 6.0 : t; }
GB_FN double max0(double t) { return t > 0.0 || t != t ? t : 0.0; }           // NumPy's maximum(0, t)
GB_FN double min0(double t) { return t < 0.0 || t != t ? t : 0.0; }           // NumPy's minimum(0, t)
GB_FN double softplus(double v) {                                             // NumPy's logaddexp(0, v)
  if (v != v) return v;
  return v > 0.0 ? v + log1p(exp(-v)) : log1p(exp(v));
}
GB_FN double softsign(double v) { return v / (1.0 + fabs(v)); }
GB_FN double mish(double v) { return v * tanh(softplus(v)); }
GB_FN double hard_swish(double v) { return v * clip01(v / 6.0 + 0.5); }
GB_FN double hsigmoid(double v) { return clip06(v + 3.0) / 6.0; }
GB_FN double gelu(double v) { return 0.5 * v * erfc(v * -0.7071067811865476); }
GB_FN double gelu_tanh(double v) { return v / (1.0 + exp(-1.5957691216057308 * (v + 0.044715 * (v * v * v)))); }
GB_FN double leaky_relu(double v, double a) { return v < 0.0 ? v * a : v; }
GB_FN double elu(double v, double a) { return v > 0.0 ? v : a * expm1(v); }
GB_FN double celu(double v, double a) { return max0(v) + min0(a * expm1(v / a)); }
GB_FN double swish(double v, double b) { return v / (1.0 + exp(-(b * v))); }
GB_FN double thresholded_relu(double v, double a) { return v > a ? v : 0.0; }
GB_FN double selu(double v, double a, double g) { return (v > 0.0 ? v : a * expm1(v)) * g; }
GB_FN double hard_sigmoid(double v, double a, double b) { return clip01(v * a + b); }
GB_FN double shrink(double v, double b, double l) { return v < -l ? v + b : v > l ? v - b : 0.0; }
}  // namespace act

// ---- math functions (#22): the Array API set and the NumPy ufuncs paired with them -----------
// Real types only where a libdevice function computes them (complex sin ... log10 run on the CPU:
// catalog.COMPLEX_ON_CPU); float16 / bfloat16 computed in float and rounded once.  Values within
// gpubcast.ops.MATH_FUNCTION_ULPS of NumPy's float64 result rounded once.
GB_MATH1(tan_, tan)
GB_MATH1(asin_, asin)
GB_MATH1(acos_, acos)
GB_MATH1(atan_, atan)
GB_MATH1(sinh_, sinh)
GB_MATH1(cosh_, cosh)
GB_MATH1(asinh_, asinh)
GB_MATH1(acosh_, acosh)
GB_MATH1(atanh_, atanh)
GB_MATH1(exp2_, exp2)
GB_MATH1(expm1_, expm1)
GB_MATH1(log1p_, log1p)
GB_MATH1(log2_, log2)
GB_MATH1(log10_, log10)
GB_MATH1(cbrt_, cbrt)
GB_MATH1(trunc_, trunc)
GB_MATH2(nextafter_, nextafter)

GB_REAL_FN(sin, sin_(v))
GB_REAL_FN(cos, cos_(v))
GB_REAL_FN(tan, tan_(v))
GB_REAL_FN(arcsin, asin_(v))
GB_REAL_FN(arccos, acos_(v))
GB_REAL_FN(arctan, atan_(v))
GB_REAL_FN(sinh, sinh_(v))
GB_REAL_FN(cosh, cosh_(v))
GB_REAL_FN(arcsinh, asinh_(v))
GB_REAL_FN(arccosh, acosh_(v))
GB_REAL_FN(arctanh, atanh_(v))
GB_REAL_FN(exp2, exp2_(v))
GB_REAL_FN(expm1, expm1_(v))
GB_REAL_FN(log1p, log1p_(v))
GB_REAL_FN(log2, log2_(v))
GB_REAL_FN(log10, log10_(v))
GB_REAL_FN(cbrt, cbrt_(v))
// NumPy: x * (pi / 180) and x * (180 / pi), the constant computed in x's precision
GB_REAL_FN(deg2rad, v * ((decltype(v))3.14159265358979323846 / (decltype(v))180))
GB_REAL_FN(rad2deg, v * ((decltype(v))180 / (decltype(v))3.14159265358979323846))
#undef GB_REAL_FN

// x * x: integers wrap, complex as NumPy's SIMD square (the fused complex product).
template <typename T> GB_FN T square(T x) { return multiply(x, x); }

template <typename T> GB_FN T trunc(T x) {
  if constexpr (is_half<T>()) return from_float<T>(trunc_(to_float(x)));
  else if constexpr (is_float<T>()) return trunc_(x);
  else return x;  // bool, integers unchanged
}

template <typename T> GB_FN T conj(T x) {
  if constexpr (is_complex<T>()) return T{x.re, -x.im};
  else return x;
}
template <typename T> GB_FN auto real(T x) {
  if constexpr (is_complex<T>()) return x.re;
  else return x;
}
template <typename T> GB_FN auto imag(T x) {
  if constexpr (is_complex<T>()) return x.im;
  else return T();  // +0 in every type
}

template <typename T> GB_FN bool isnan(T x) {
  if constexpr (is_half<T>()) return isnan_(to_float(x));
  else if constexpr (is_complex<T>()) return isnan_(x.re) || isnan_(x.im);
  else if constexpr (is_float<T>()) return isnan_(x);
  else return false;
}
template <typename T> GB_FN bool isinf(T x) {
  if constexpr (is_half<T>()) return isinf_(to_float(x));
  else if constexpr (is_complex<T>()) return isinf_(x.re) || isinf_(x.im);
  else if constexpr (is_float<T>()) return isinf_(x);
  else return false;
}
template <typename R> GB_FN bool finite_(R x) { return x - x == x - x; }   // not inf, not NaN
template <typename T> GB_FN bool isfinite(T x) {
  if constexpr (is_half<T>()) return finite_(to_float(x));
  else if constexpr (is_complex<T>()) return finite_(x.re) && finite_(x.im);
  else if constexpr (is_float<T>()) return finite_(x);
  else return true;
}
template <typename T> GB_FN bool signbit(T x) {
  if constexpr (is_half<T>()) return copysign_(1.0f, to_float(x)) < 0;
  else return copysign_((T)1, x) < 0;
}

// A binary real function: float16 / bfloat16 through float.
#define GB_FLOAT_FN2(NAME, EXPR)                                                               \
  template <typename T> GB_FN T NAME(T x, T y) {                                              \
    if constexpr (is_half<T>()) {                                                             \
      const float a = to_float(x), b = to_float(y);                                           \
      return from_float<T>(EXPR);                                                             \
    } else { const T a = x, b = y; return EXPR; }                                             \
  }

// npy_logaddexp / npy_logaddexp2 (log2(1 + t) as LOG2E * log1p(t)).
template <typename F> GB_FN F logaddexp_(F x, F y) {
  if (x == y) return x + (F)0.693147180559945309417232121458176568;
  const F d = x - y;
  if (d > 0) return x + log1p_(exp_(-d));
  if (d <= 0) return y + log1p_(exp_(d));
  return d;  // NaN
}
template <typename F> GB_FN F logaddexp2_(F x, F y) {
  if (x == y) return x + (F)1;
  const F d = x - y, log2e = (F)1.442695040888963407359924681001892137;
  if (d > 0) return x + log2e * log1p_(exp2_(-d));
  if (d <= 0) return y + log2e * log1p_(exp2_(d));
  return d;
}
GB_FLOAT_FN2(arctan2, atan2_(a, b))
GB_FLOAT_FN2(hypot, hypot_(a, b))
GB_FLOAT_FN2(logaddexp, logaddexp_(a, b))
GB_FLOAT_FN2(logaddexp2, logaddexp2_(a, b))
GB_FLOAT_FN2(copysign, copysign_(a, b))
#undef GB_FLOAT_FN2

// The raw bits of a float16 / bfloat16.
template <typename T> GB_FN u16 bits16(T x) {
  if constexpr (is_same<T, f16>::value) { const __half_raw r = x; return r.x; }
  else { const __nv_bfloat16_raw r = x; return r.x; }
}
template <typename T> GB_FN T from_bits16(u16 b) {
  if constexpr (is_same<T, f16>::value) { __half_raw r; r.x = b; return T(r); }
  else { __nv_bfloat16_raw r; r.x = b; return T(r); }
}

// The next value after x toward y: C's nextafter; float16 as NumPy's npy_half_nextafter (equal
// values give x), bfloat16 as ml_dtypes' (equal bits or two zeros give y).
template <typename T> GB_FN T nextafter(T x, T y) {
  if constexpr (is_same<T, f16>::value) {
    const u16 a = bits16(x), b = bits16(y);
    if ((a & 0x7FFF) > 0x7C00 || (b & 0x7FFF) > 0x7C00) return from_bits16<T>(0x7E00);
    if (a == b || ((a & 0x7FFF) == 0 && (b & 0x7FFF) == 0)) return x;
    if ((a & 0x7FFF) == 0) return from_bits16<T>((u16)((b & 0x8000) + 1));
    if (!(a & 0x8000)) return from_bits16<T>((u16)((i16)a > (i16)b ? a - 1 : a + 1));
    if (!(b & 0x8000) || (a & 0x7FFF) > (b & 0x7FFF)) return from_bits16<T>((u16)(a - 1));
    return from_bits16<T>((u16)(a + 1));
  } else if constexpr (is_half<T>()) {
    const u16 a = bits16(x), b = bits16(y);
    if ((a & 0x7FFF) > 0x7F80 || (b & 0x7FFF) > 0x7F80) return from_bits16<T>(0x7FC0);
    if (a == b) return y;
    if ((a & 0x7FFF) == 0) return (b & 0x7FFF) == 0 ? y : from_bits16<T>((u16)((b & 0x8000) | 1));
    const bool up = (to_float(x) < to_float(y)) == !(a & 0x8000);   // away from zero: magnitude up
    return from_bits16<T>((u16)(up ? a + 1 : a - 1));
  } else {
    return nextafter_(x, y);
  }
}

// NumPy's fmax / fmin: NaN ignored unless both are; ties as maximum (the second operand, the
// first for float16).
template <typename T> GB_FN T fmax(T a, T b) {
  if constexpr (Num<T>::kind == K_BOOL || is_int<T>()) return maximum(a, b);
  else if constexpr (is_same<T, f16>::value) {
    const float fa = to_float(a), fb = to_float(b);
    return (fa >= fb || isnan_(fb)) ? a : b;
  } else if constexpr (is_half<T>()) {
    const float fa = to_float(a), fb = to_float(b);
    return (fa > fb || isnan_(fb)) ? a : b;
  } else if constexpr (is_complex<T>()) {
    return (isnan_(b.re) || isnan_(b.im) || c_le(b, a)) ? a : b;
  } else {
    return (a > b || isnan_(b)) ? a : b;
  }
}
template <typename T> GB_FN T fmin(T a, T b) {
  if constexpr (Num<T>::kind == K_BOOL || is_int<T>()) return minimum(a, b);
  else if constexpr (is_same<T, f16>::value) {
    const float fa = to_float(a), fb = to_float(b);
    return (fa <= fb || isnan_(fb)) ? a : b;
  } else if constexpr (is_half<T>()) {
    const float fa = to_float(a), fb = to_float(b);
    return (fa < fb || isnan_(fb)) ? a : b;
  } else if constexpr (is_complex<T>()) {
    return (isnan_(b.re) || isnan_(b.im) || c_le(a, b)) ? a : b;
  } else {
    return (a < b || isnan_(b)) ? a : b;
  }
}

}  // namespace num
}  // namespace gb
