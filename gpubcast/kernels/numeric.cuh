// numeric.cuh -- gpubcast's element types and the value of every op on ONE element.
//
// What it defines: the storage type of each NumPy dtype the CUDA backend computes in
// (bool, int8..uint64, float16 (__half), bfloat16 (__nv_bfloat16), float32, float64,
// complex64, complex128), and in namespace gb::num the NumPy 2 result of each elementwise
// ufunc applied to one element of that type (add, floor_divide, maximum, power, ...).
// The op functors of binary.cu and variadic.cu only call these functions, so one op has
// one definition of its values on the GPU, mirroring Op.reference in gpubcast/ops.py.
//
// Assumption: compiled with --fmad=false and -ftz=false (NVRTC) or -ffp-contract=off (g++,
//   host emulation): NumPy rounds every product and sum separately and keeps subnormals
//   (the one fused operation, the complex product, calls fma explicitly: cmul_fused).
// Assumption: float16 and bfloat16 values are computed in float and rounded once to the
//   storage type (NumPy's float16 loops and ml_dtypes' bfloat16 loops do the same; float's
//   24-bit significand makes that double rounding exact for + - * /).
// Assumption: signed integer arithmetic wraps (computed in the unsigned type), as NumPy's.
// Assumption: the same source compiles as host C++ (g++, the emulation harness) where
//   __device__ / __host__ expand to nothing; CUDA-only intrinsics appear only under
//   #ifdef __CUDA_ARCH__, with a host equivalent beside them.
#pragma once

#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <vector_types.h>

#ifndef __CUDACC_RTC__
#include <math.h>  // host emulation: fmod, pow, floor, ... (NVRTC has them built in)
#endif

#define GB_FN __host__ __device__ __forceinline__

namespace gb {

typedef signed char i8;
typedef unsigned char u8;
typedef short i16;
typedef unsigned short u16;
typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;
typedef __half f16;
typedef __nv_bfloat16 bf16;

// complex64 / complex128: the layout of float2 / double2 (cuFloatComplex, cuDoubleComplex)
struct alignas(8) c64 { float re, im; };
struct alignas(16) c128 { double re, im; };
static_assert(sizeof(c64) == sizeof(float2) && alignof(c64) == alignof(float2), "c64 is float2-shaped");
static_assert(sizeof(c128) == sizeof(double2) && alignof(c128) == alignof(double2), "c128 is double2-shaped");

// Opaque elements of N bytes for data movement (copy, where): moved, never computed on.
// Each holds its bytes as integers (u8/u16/u32/u64, two u64 for 16), not as a char array:
// a vector load or a select then moves whole registers instead of shuffling bytes.
template <int N> struct Bytes;
template <> struct alignas(1) Bytes<1> { u8 v; };
template <> struct alignas(2) Bytes<2> { u16 v; };
template <> struct alignas(4) Bytes<4> { u32 v; };
template <> struct alignas(8) Bytes<8> { u64 v; };
template <> struct alignas(16) Bytes<16> { u64 lo, hi; };
static_assert(sizeof(Bytes<1>) == 1 && sizeof(Bytes<2>) == 2 && sizeof(Bytes<4>) == 4 &&
              sizeof(Bytes<8>) == 8 && sizeof(Bytes<16>) == 16, "Bytes<N> holds exactly N bytes");

// ---- type traits (NVRTC has no <type_traits>) ---------------------------------------------
template <bool B, typename T = void> struct enable_if {};
template <typename T> struct enable_if<true, T> { typedef T type; };
template <typename A, typename B> struct is_same { static constexpr bool value = false; };
template <typename A> struct is_same<A, A> { static constexpr bool value = true; };

enum Kind { K_BOOL, K_SINT, K_UINT, K_FLOAT, K_HALF, K_COMPLEX };

template <typename T> struct Num;
template <> struct Num<bool> { static constexpr int kind = K_BOOL; typedef unsigned int U; };
template <> struct Num<i8> { static constexpr int kind = K_SINT; typedef unsigned int U; };
template <> struct Num<i16> { static constexpr int kind = K_SINT; typedef unsigned int U; };
template <> struct Num<i32> { static constexpr int kind = K_SINT; typedef unsigned int U; };
template <> struct Num<i64> { static constexpr int kind = K_SINT; typedef u64 U; };
template <> struct Num<u8> { static constexpr int kind = K_UINT; typedef unsigned int U; };
template <> struct Num<u16> { static constexpr int kind = K_UINT; typedef unsigned int U; };
template <> struct Num<u32> { static constexpr int kind = K_UINT; typedef unsigned int U; };
template <> struct Num<u64> { static constexpr int kind = K_UINT; typedef u64 U; };
template <> struct Num<float> { static constexpr int kind = K_FLOAT; typedef float R; };
template <> struct Num<double> { static constexpr int kind = K_FLOAT; typedef double R; };
template <> struct Num<f16> { static constexpr int kind = K_HALF; typedef float R; };
template <> struct Num<bf16> { static constexpr int kind = K_HALF; typedef float R; };
template <> struct Num<c64> { static constexpr int kind = K_COMPLEX; typedef float R; };
template <> struct Num<c128> { static constexpr int kind = K_COMPLEX; typedef double R; };

template <typename T> __host__ __device__ constexpr bool is_int() { return Num<T>::kind == K_SINT || Num<T>::kind == K_UINT; }
template <typename T> __host__ __device__ constexpr bool is_sint() { return Num<T>::kind == K_SINT; }
template <typename T> __host__ __device__ constexpr bool is_float() { return Num<T>::kind == K_FLOAT; }
template <typename T> __host__ __device__ constexpr bool is_half() { return Num<T>::kind == K_HALF; }
template <typename T> __host__ __device__ constexpr bool is_complex() { return Num<T>::kind == K_COMPLEX; }

namespace num {

// ---- conversions ------------------------------------------------------------------------
GB_FN float to_float(f16 x) { return __half2float(x); }
GB_FN float to_float(bf16 x) { return __bfloat162float(x); }
template <typename T> GB_FN T from_float(float x);
template <> GB_FN f16 from_float<f16>(float x) { return __float2half_rn(x); }
template <> GB_FN bf16 from_float<bf16>(float x) { return __float2bfloat16_rn(x); }

template <typename T> GB_FN bool isnan_(T x) { return x != x; }
// float / double overloads of the C math functions (names with a trailing _)
#define GB_MATH1(NAME, FN) \
  GB_FN float NAME(float a) { return FN##f(a); } \
  GB_FN double NAME(double a) { return FN(a); }
#define GB_MATH2(NAME, FN) \
  GB_FN float NAME(float a, float b) { return FN##f(a, b); } \
  GB_FN double NAME(double a, double b) { return FN(a, b); }
GB_MATH1(floor_, floor)
GB_MATH1(fabs_, fabs)
GB_MATH1(log_, log)
GB_MATH1(exp_, exp)
GB_MATH1(cos_, cos)
GB_MATH1(ceil_, ceil)
GB_MATH1(rint_, rint)
GB_MATH1(sqrt_, sqrt)
GB_MATH1(tanh_, tanh)
GB_MATH1(erf_, erf)
GB_MATH1(sin_, sin)
GB_MATH2(copysign_, copysign)
GB_MATH2(fmod_, fmod)
GB_MATH2(pow_, pow)
GB_MATH2(hypot_, hypot)
GB_MATH2(atan2_, atan2)
GB_FN float fma_(float a, float b, float c) { return fmaf(a, b, c); }
GB_FN double fma_(double a, double b, double c) { return fma(a, b, c); }

// quiet NaN and +inf (NVRTC has no __builtin_nan / __builtin_huge_val)
template <typename R> GB_FN R nan_();
template <typename R> GB_FN R inf_();
#ifdef __CUDA_ARCH__
template <> GB_FN float nan_<float>() { return __int_as_float(0x7fc00000); }
template <> GB_FN double nan_<double>() { return __longlong_as_double(0x7ff8000000000000LL); }
template <> GB_FN float inf_<float>() { return __int_as_float(0x7f800000); }
template <> GB_FN double inf_<double>() { return __longlong_as_double(0x7ff0000000000000LL); }
#else
template <> GB_FN float nan_<float>() { return __builtin_nanf(""); }
template <> GB_FN double nan_<double>() { return __builtin_nan(""); }
template <> GB_FN float inf_<float>() { return __builtin_huge_valf(); }
template <> GB_FN double inf_<double>() { return __builtin_huge_val(); }
#endif

// T(n) for a small count n, rounded like NumPy's ``dtype.type(n)``.
template <typename T> GB_FN T from_count(unsigned n) {
  if constexpr (is_half<T>()) return from_float<T>((float)n);
  else if constexpr (is_complex<T>()) return T{(typename Num<T>::R)n, 0};
  else return (T)n;
}

// Truth value (NumPy's nonzero): NaN is true; a complex is true if either part is nonzero.
template <typename T> GB_FN bool truth(T x) {
  if constexpr (is_half<T>()) return to_float(x) != 0.0f;
  else if constexpr (is_complex<T>()) return x.re != 0 || x.im != 0;
  else return x != 0;
}

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
