// arithmetic.cuh -- the NumPy 2 value of each arithmetic, comparison, bitwise and power op on one
// element (gb::num: add ... true_divide, floor_divide, remainder, fmod, less/equal, maximum/minimum,
// shifts, power).  Part of numeric.cuh, whose Assumptions hold here.
#pragma once

#include "element_types.cuh"

namespace gb {
namespace num {

// ---- arithmetic ---------------------------------------------------------------------------
// Wrap-around integer arithmetic: computed in the unsigned type, truncated to T.
template <typename T> GB_FN T wrap_add(T a, T b) { typedef typename Num<T>::U U; return (T)((U)a + (U)b); }
template <typename T> GB_FN T wrap_sub(T a, T b) { typedef typename Num<T>::U U; return (T)((U)a - (U)b); }
template <typename T> GB_FN T wrap_mul(T a, T b) { typedef typename Num<T>::U U; return (T)((U)a * (U)b); }
template <typename T> GB_FN T wrap_neg(T a) { typedef typename Num<T>::U U; return (T)((U)0 - (U)a); }

// Complex product, every product rounded (npy_cpow's cmul).
template <typename C> GB_FN C cmul(C a, C b) { return C{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
// Complex product as NumPy's SIMD multiply loop computes it (fused multiply-add/sub, x86-64
// with FMA3 or AVX-512): re = fma(ar, br, -(ai*bi)), im = fma(ar, bi, ai*br).
template <typename C> GB_FN C cmul_fused(C a, C b) {
  return C{fma_(a.re, b.re, -(a.im * b.im)), fma_(a.re, b.im, a.im * b.re)};
}

// NumPy's complex division (Smith's method, loops.c.src), including its division by zero.
template <typename C> GB_FN C cdiv(C a, C b) {
  typedef decltype(a.re) R;
  const R abs_br = fabs_(b.re), abs_bi = fabs_(b.im);
  if (abs_br >= abs_bi) {
    if (abs_br == 0 && abs_bi == 0) return C{a.re / abs_br, a.im / abs_br};
    const R rat = b.im / b.re, scl = (R)1.0 / (b.re + b.im * rat);
    return C{(a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl};
  }
  const R rat = b.re / b.im, scl = (R)1.0 / (b.im + b.re * rat);
  return C{(a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl};
}

template <typename T> GB_FN T add(T a, T b) {
  if constexpr (Num<T>::kind == K_BOOL) return a || b;
  else if constexpr (is_int<T>()) return wrap_add(a, b);
  else if constexpr (is_half<T>()) return from_float<T>(to_float(a) + to_float(b));
  else if constexpr (is_complex<T>()) return T{a.re + b.re, a.im + b.im};
  else return a + b;
}

template <typename T> GB_FN T subtract(T a, T b) {
  if constexpr (is_int<T>()) return wrap_sub(a, b);
  else if constexpr (is_half<T>()) return from_float<T>(to_float(a) - to_float(b));
  else if constexpr (is_complex<T>()) return T{a.re - b.re, a.im - b.im};
  else return a - b;
}

template <typename T> GB_FN T multiply(T a, T b) {
  if constexpr (Num<T>::kind == K_BOOL) return a && b;
  else if constexpr (is_int<T>()) return wrap_mul(a, b);
  else if constexpr (is_half<T>()) return from_float<T>(to_float(a) * to_float(b));
  else if constexpr (is_complex<T>()) return cmul_fused(a, b);
  else return a * b;
}

// True division (floating types only: NumPy promotes integers to float64 first).
template <typename T> GB_FN T true_divide(T a, T b) {
  if constexpr (is_half<T>()) return from_float<T>(to_float(a) / to_float(b));
  else if constexpr (is_complex<T>()) return cdiv(a, b);
  else return a / b;
}

// NumPy's npy_divmod for floats: floor quotient (first) with the Python-style remainder.
template <typename F> struct DivMod { F div, mod; };
template <typename F> GB_FN DivMod<F> float_divmod(F a, F b) {
  if (b == 0) return DivMod<F>{a / b, fmod_(a, b)};  // x / 0: inf or nan; x % 0: nan
  F mod = fmod_(a, b);
  F div = (a - mod) / b;
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= 1;
    }
  } else {
    mod = copysign_((F)0, b);
  }
  F floordiv;
  if (div != 0) {
    floordiv = floor_(div);
    if (div - floordiv > (F)0.5) floordiv += 1;
  } else {
    floordiv = copysign_((F)0, a / b);
  }
  return DivMod<F>{floordiv, mod};
}

template <typename T> GB_FN T floor_divide(T a, T b) {
  if constexpr (is_sint<T>()) {
    if (b == 0) return 0;                  // NumPy: x // 0 -> 0
    if (b == -1) return wrap_neg(a);       // INT_MIN // -1 -> INT_MIN (no trap)
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
  } else if constexpr (is_int<T>()) {
    return b == 0 ? (T)0 : (T)(a / b);
  } else if constexpr (is_half<T>()) {
    return from_float<T>(float_divmod(to_float(a), to_float(b)).div);
  } else {
    return float_divmod(a, b).div;
  }
}

template <typename T> GB_FN T remainder(T a, T b) {
  if constexpr (is_sint<T>()) {
    if (b == 0 || b == -1) return 0;       // x % 0 -> 0; x % -1 == 0 (INT_MIN % -1 would trap)
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  } else if constexpr (is_int<T>()) {
    return b == 0 ? (T)0 : (T)(a % b);
  } else if constexpr (is_half<T>()) {
    return from_float<T>(float_divmod(to_float(a), to_float(b)).mod);
  } else {
    return b == 0 ? fmod_(a, b) : float_divmod(a, b).mod;
  }
}

template <typename T> GB_FN T fmod(T a, T b) {
  if constexpr (is_sint<T>()) {
    if (b == 0 || b == -1) return 0;
    return (T)(a % b);
  } else if constexpr (is_int<T>()) {
    return b == 0 ? (T)0 : (T)(a % b);
  } else if constexpr (is_half<T>()) {
    return from_float<T>(fmod_(to_float(a), to_float(b)));
  } else {
    return fmod_(a, b);
  }
}

// ONNX/OpenVINO division: integers truncate toward zero (x / 0 -> 0, INT_MIN / -1 -> INT_MIN).
template <typename T> GB_FN T div_trunc(T a, T b) {
  if constexpr (is_sint<T>()) {
    if (b == 0) return 0;
    if (b == -1) return wrap_neg(a);
    return (T)(a / b);
  } else if constexpr (is_int<T>()) {
    return b == 0 ? (T)0 : (T)(a / b);
  } else {
    return true_divide(a, b);
  }
}

// ---- comparisons --------------------------------------------------------------------------
// NumPy orders complex numbers lexicographically, with NaN handling (CGT & co. in loops.c.src).
template <typename C> GB_FN bool c_lt(C x, C y) {
  return (x.re < y.re && !isnan_(x.im) && !isnan_(y.im)) || (x.re == y.re && x.im < y.im);
}
template <typename C> GB_FN bool c_le(C x, C y) {
  return (x.re < y.re && !isnan_(x.im) && !isnan_(y.im)) || (x.re == y.re && x.im <= y.im);
}

// a < b, a <= b, a == b for two (possibly mixed int64/uint64) types, exact like NumPy.
template <typename A, typename B> GB_FN bool less(A a, B b) {
  if constexpr (!is_same<A, B>::value) {           // mixed signed/unsigned 64-bit
    if constexpr (is_sint<A>()) return a < 0 || (u64)a < (u64)b;
    else return b >= 0 && (u64)a < (u64)b;
  } else if constexpr (is_half<A>()) {
    return to_float(a) < to_float(b);
  } else if constexpr (is_complex<A>()) {
    return c_lt(a, b);
  } else {
    return a < b;
  }
}
template <typename A, typename B> GB_FN bool equal(A a, B b) {
  if constexpr (!is_same<A, B>::value) {
    if constexpr (is_sint<A>()) return a >= 0 && (u64)a == (u64)b;
    else return b >= 0 && (u64)a == (u64)b;
  } else if constexpr (is_half<A>()) {
    return to_float(a) == to_float(b);
  } else if constexpr (is_complex<A>()) {
    return a.re == b.re && a.im == b.im;
  } else {
    return a == b;
  }
}
template <typename A, typename B> GB_FN bool less_equal(A a, B b) {
  if constexpr (is_complex<A>()) return c_le(a, b);
  else if constexpr (is_half<A>()) return to_float(a) <= to_float(b);
  else if constexpr (is_same<A, B>::value) return a <= b;
  else return less(a, b) || equal(a, b);
}

// ---- maximum / minimum (NaN-propagating) ------------------------------------------------
template <typename T> GB_FN T maximum(T a, T b) {
  if constexpr (Num<T>::kind == K_BOOL) return a || b;
  else if constexpr (is_int<T>()) return a >= b ? a : b;
  else if constexpr (is_same<T, bf16>::value) {  // ml_dtypes: isnan(a) || a > b ? a : b
    const float fa = to_float(a), fb = to_float(b);
    return (isnan_(fa) || fa > fb) ? a : b;
  } else if constexpr (is_half<T>()) {          // NumPy: a >= b || isnan(a) ? a : b
    const float fa = to_float(a), fb = to_float(b);
    return (fa >= fb || isnan_(fa)) ? a : b;
  } else if constexpr (is_complex<T>()) {
    return (isnan_(a.re) || isnan_(a.im) || c_le(b, a)) ? a : b;  // CGE(a, b) == CLE(b, a)
  } else {                                     // NumPy: a > b || isnan(a) ? a : b (ties: b)
    return (a > b || isnan_(a)) ? a : b;
  }
}
template <typename T> GB_FN T minimum(T a, T b) {
  if constexpr (Num<T>::kind == K_BOOL) return a && b;
  else if constexpr (is_int<T>()) return a <= b ? a : b;
  else if constexpr (is_same<T, bf16>::value) {
    const float fa = to_float(a), fb = to_float(b);
    return (isnan_(fa) || fa < fb) ? a : b;
  } else if constexpr (is_half<T>()) {
    const float fa = to_float(a), fb = to_float(b);
    return (fa <= fb || isnan_(fa)) ? a : b;
  } else if constexpr (is_complex<T>()) {
    return (isnan_(a.re) || isnan_(a.im) || c_le(a, b)) ? a : b;
  } else {
    return (a < b || isnan_(a)) ? a : b;
  }
}

// ---- shifts (NumPy's npy_lshift / npy_rshift) --------------------------------------------
template <typename T> GB_FN T left_shift(T a, T b) {
  typedef typename Num<T>::U U;
  if ((u64)(i64)b < (u64)(8 * sizeof(T))) return (T)((U)a << (int)b);
  return 0;
}
template <typename T> GB_FN T right_shift(T a, T b) {
  if ((u64)(i64)b < (u64)(8 * sizeof(T))) return (T)(a >> (int)b);
  if constexpr (is_sint<T>()) return a < 0 ? (T)-1 : (T)0;
  else return 0;
}

// ---- power ------------------------------------------------------------------------------
// NumPy's integer power (square-and-multiply, wrapping); a negative exponent gives 1 for
// base 1, +-1 for base -1 and 0 otherwise (gpubcast's contract: NumPy raises there).
template <typename T> GB_FN T int_power(T a, T b) {
  typedef typename Num<T>::U U;
  if constexpr (is_sint<T>()) {
    if (b < 0) return a == 1 ? (T)1 : a == -1 ? ((b & 1) ? (T)-1 : (T)1) : (T)0;
  }
  if (b == 0 || a == 1) return 1;
  U base = (U)a, out = (b & 1) ? (U)a : (U)1;
  U e = (U)b >> 1;
  while (e > 0) {
    base *= base;
    if (e & 1) out *= base;
    e >>= 1;
  }
  return (T)out;
}

template <typename R> GB_FN bool isinf_(R x) { return x - x != x - x && x == x; }   // +-inf

// C99 Annex G complex product (libgcc's __muldc3): recovers infinities a plain product
// turns into NaN + NaN i.
template <typename C> GB_FN C cmul_annex_g(C a, C b) {
  typedef decltype(a.re) R;
  R A = a.re, B = a.im, Cr = b.re, D = b.im;
  const R ac = A * Cr, bd = B * D, ad = A * D, bc = B * Cr;
  R x = ac - bd, y = ad + bc;
  if (isnan_(x) && isnan_(y)) {
    bool recalc = false;
    if (isinf_(A) || isinf_(B)) {
      A = copysign_(isinf_(A) ? (R)1 : (R)0, A);
      B = copysign_(isinf_(B) ? (R)1 : (R)0, B);
      if (isnan_(Cr)) Cr = copysign_((R)0, Cr);
      if (isnan_(D)) D = copysign_((R)0, D);
      recalc = true;
    }
    if (isinf_(Cr) || isinf_(D)) {
      Cr = copysign_(isinf_(Cr) ? (R)1 : (R)0, Cr);
      D = copysign_(isinf_(D) ? (R)1 : (R)0, D);
      if (isnan_(A)) A = copysign_((R)0, A);
      if (isnan_(B)) B = copysign_((R)0, B);
      recalc = true;
    }
    if (!recalc && (isinf_(ac) || isinf_(bd) || isinf_(ad) || isinf_(bc))) {
      if (isnan_(A)) A = copysign_((R)0, A);
      if (isnan_(B)) B = copysign_((R)0, B);
      if (isnan_(Cr)) Cr = copysign_((R)0, Cr);
      if (isnan_(D)) D = copysign_((R)0, D);
      recalc = true;
    }
    if (recalc) {
      x = inf_<R>() * (A * Cr - B * D);
      y = inf_<R>() * (A * D + B * Cr);
    }
  }
  return C{x, y};
}

// clog and cexp with glibc's special cases (the a == 0 case never reaches clog_ here).
template <typename C> GB_FN C clog_(C a) {
  return C{log_(hypot_(a.re, a.im)), atan2_(a.im, a.re)};
}
template <typename C> GB_FN C cexp_(C w) {
  typedef decltype(w.re) R;
  const R x = w.re, y = w.im;
  const bool y_finite = !isnan_(y) && !isinf_(y);
  if (!isnan_(x) && !isinf_(x)) {
    if (!y_finite) return C{nan_<R>(), nan_<R>()};
    if (y == 0) return C{exp_(x), y};
    const R m = exp_(x);
    return C{m * cos_(y), m * sin_(y)};
  }
  if (isinf_(x)) {
    if (y_finite) {
      const R v = x < 0 ? (R)0 : inf_<R>();
      if (y == 0) return C{v, y};
      return C{copysign_(v, cos_(y)), copysign_(v, sin_(y))};
    }
    if (x > 0) return C{inf_<R>(), y - y};
    return C{(R)0, copysign_((R)0, y)};
  }
  return C{nan_<R>(), y == 0 ? y : nan_<R>()};   // x is NaN
}

// NumPy's npy_cpow: exact small integer powers by multiplication, else exp(b * log(a)).
template <typename C> GB_FN C complex_power(C a, C b) {
  typedef decltype(a.re) R;
  if (b.re == 0 && b.im == 0) return C{1, 0};
  if (a.re == 0 && a.im == 0) {                  // NumPy 2: 0 ** b is 0 for Re(b) > 0, else NaN
    if (b.re > 0) return C{0, 0};
    return C{nan_<R>(), nan_<R>()};
  }
  if (b.im == 0 && b.re > (R)-100 && b.re < (R)100 && (R)(i64)b.re == b.re) {
    i64 n = (i64)b.re;
    if (n == 1) return a;
    if (n == 2) return cmul(a, a);
    if (n == 3) return cmul(a, cmul(a, a));
    if (n < 0) n = -n;
    C acc{1, 0}, p = a;
    i64 mask = 1;
    while (true) {
      if (n & mask) acc = cmul(acc, p);
      mask <<= 1;
      if (n < mask || mask <= 0) break;
      p = cmul(p, p);
    }
    if (b.re < 0) acc = cdiv(C{1, 0}, acc);
    return acc;
  }
  return cexp_(cmul_annex_g(b, clog_(a)));   // glibc: cpow(a, b) = cexp(b * clog(a))
}

template <typename T> GB_FN T power(T a, T b) {
  if constexpr (is_int<T>()) return int_power(a, b);
  else if constexpr (is_half<T>()) return from_float<T>(pow_(to_float(a), to_float(b)));
  else if constexpr (is_complex<T>()) return complex_power(a, b);
  else return pow_(a, b);
}

// NumPy's float32/float64 power loop when the exponent is one value over the whole call:
// -1 -> 1/x, 0 -> 1, 0.5 -> sqrt(x), 1 -> x, 2 -> x*x, else pow (so sqrt's -0.0 and NaN for -0.0
// and -inf, where pow gives 0 and inf).
template <typename T> GB_FN T power_scalar_exponent(T a, T b) {
  if constexpr (is_int<T>() || is_half<T>() || is_complex<T>()) return power(a, b);
  else {
    if (b == (T)-1) return (T)1 / a;
    if (b == (T)0) return (T)1;
    if (b == (T)0.5) return sqrt_(a);
    if (b == (T)1) return a;
    if (b == (T)2) return a * a;
    return pow_(a, b);
  }
}

}  // namespace num
}  // namespace gb
