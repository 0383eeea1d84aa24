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
//
// The headers, one idea each: element_types.cuh (the types, their traits and conversions),
// arithmetic.cuh (the arithmetic, comparison, bitwise and power ops), math_functions.cuh (the
// unary ops, the activations and the math functions).
#pragma once

#include "element_types.cuh"
#include "arithmetic.cuh"
#include "math_functions.cuh"
