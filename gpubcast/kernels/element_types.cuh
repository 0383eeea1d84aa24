// element_types.cuh -- the storage type of each NumPy dtype the CUDA backend computes in, and how
// values of those types convert: bool, int8..uint64, float16 (__half), bfloat16 (__nv_bfloat16),
// float32, float64, complex64, complex128 (the layouts of float2 / double2), Bytes<N> for data
// movement, the type traits the op templates dispatch on (Num<T>::kind), and in gb::num the
// conversions, float / double overloads of the C math functions (names with a trailing _), NaN,
// inf, counts and truth values.  Part of numeric.cuh, whose Assumptions hold here.
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

}  // namespace num
}  // namespace gb
