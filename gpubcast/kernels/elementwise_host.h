// elementwise_host.h -- the skeleton every gpubcast.ElementwiseKernel runs on the CPU.
//
// What it computes: the user's `operation` (the same C/C++ body as on the GPU) over a
// broadcast plan, for NumPy arrays, on the host's cores.  gpubcast/elementwise_kernel.py
// generates, per kernel, resolved types and the innermost-stride kind of each parameter,
// one function `gb_ewk_chunk(args, begin, end)` that walks the linear indices [begin, end)
// row by row of the plan's coalesced shape, and `gb_ewk_run` (extern "C") that splits the
// loop into one chunk per thread.  This header gives it the pieces:
//   Args<NARGS>     the one argument: coalesced shape, a pointer per parameter, its element
//                   strides (outermost first), raw parameters' element counts, scalar bytes;
//   row_start       the element offset of every parameter at the first element of a row;
//   at<KIND>        element j of a row: KIND 0 stride 0 (broadcast along the row), 1 stride
//                   1 (contiguous, so the compiler vectorises), 2 any stride;
//   Raw<T>, Indexer `raw` parameters (x[k], x.size()) and `_ind` (_ind.size()), as on the GPU;
//   parallel        [0, size) in one chunk per thread (std::thread), inline when small.
//
// Contract: gb_ewk_run(args, nbytes, nthreads) returns 0, or -1 when nbytes is not
//   sizeof(Args<NARGS>) (a caller built for another kernel).
// Assumption: 1 <= ndim <= MAX_DIMS; size == the product of shape; strides in elements,
//   0 on broadcast dims; raw parameters C-contiguous.
// Assumption: compiled with -ffp-contract=off (no fused multiply-add: the values of + - * /
//   equal the GPU path's, which NVRTC compiles with --fmad=false).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace gb_host {

typedef long long i64;
typedef unsigned long long u64;
constexpr int MAX_DIMS = 64;

template <int NARGS> struct Args {
  i64 ndim;                        // coalesced rank, 1..MAX_DIMS
  i64 size;                        // loop size
  i64 shape[MAX_DIMS];             // coalesced shape, outermost first
  char* ptr[NARGS];                // element (0, ..., 0) of each array parameter
  i64 stride[NARGS][MAX_DIMS];     // element strides, outermost first
  i64 raw_size[NARGS];             // element count of each raw parameter
  u64 value[NARGS][2];             // bytes of each scalar parameter
};

struct Indexer {
  i64 n;
  i64 size() const { return n; }
};

template <typename T> struct Raw {
  T* data_;
  i64 n;
  T& operator[](i64 k) const { return data_[k]; }
  i64 size() const { return n; }
};

template <typename T> inline T from_bits(const u64 (&w)[2]) {
  T x;
  memcpy(&x, w, sizeof(T));
  return x;
}

// The offsets of every parameter at the first element of row `row` (rows: every dim but the last).
template <int NARGS> inline void row_start(const Args<NARGS>& a, i64 row, i64 (&off)[NARGS]) {
  for (int k = 0; k < NARGS; ++k) off[k] = 0;
  for (i64 d = a.ndim - 2; d >= 0; --d) {
    const i64 n = a.shape[d];
    const i64 r = row % n;
    row /= n;
    for (int k = 0; k < NARGS; ++k) off[k] += r * a.stride[k][d];
  }
}

template <int KIND, typename T> inline T* at(T* row, i64 j, i64 s) {
  if constexpr (KIND == 0) return row;
  else if constexpr (KIND == 1) return row + j;
  else return row + j * s;
}

// f(begin, end) over [0, size) in up to nthreads chunks; one chunk (no thread) when small.
template <class F> inline void parallel(i64 size, int nthreads, F f) {
  const i64 grain = 1 << 15;
  i64 chunks = std::min<i64>(nthreads > 1 ? nthreads : 1, (size + grain - 1) / grain);
  if (chunks <= 1) {
    f((i64)0, size);
    return;
  }
  std::vector<std::thread> pool;
  const i64 step = (size + chunks - 1) / chunks;
  for (i64 c = 1; c < chunks; ++c) {
    const i64 b = c * step, e = std::min(size, b + step);
    if (b < e) pool.emplace_back(f, b, e);
  }
  f((i64)0, std::min(size, step));
  for (auto& t : pool) t.join();
}

}  // namespace gb_host
