// offsets.cuh -- where an element lives in each operand: division of a linear index by each
// coalesced size, innermost first, by magic-number multiplication (Divider: 32-bit, or 64-bit
// multiply-high for outputs whose indices or offsets reach 2^31), OffsetCalc (the element offsets
// of every operand at one linear index, a tile's steps along the innermost dim, lane chunks'
// steps) and General<NIN, index_t>, the argument of a general kernel.  Part of indexing.cuh, whose
// Assumptions hold here.
#pragma once

#include "launch.cuh"

namespace gb {

// ---- division by a run-time constant -----------------------------------------------------
GB_FN u32 mulhi(u32 a, u32 b) {
#ifdef __CUDA_ARCH__
  return __umulhi(a, b);
#else
  return (u32)(((u64)a * (u64)b) >> 32);
#endif
}
GB_FN u64 mulhi(u64 a, u64 b) {
#ifdef __CUDA_ARCH__
  return __umul64hi(a, b);
#else
  return (u64)(((unsigned __int128)a * b) >> 64);
#endif
}

// n / divisor == (mulhi(n, magic) + n) >> shift for n < 2^(W-1), W = bits of index_t
// (Granlund-Montgomery, as PyTorch's IntDivider; the host computes
// shift = ceil(log2(divisor)), magic = 2^W * (2^shift - divisor) / divisor + 1).
template <typename index_t> struct Divider {
  index_t divisor, magic, shift;
  GB_FN index_t div(index_t n) const { return (mulhi(n, magic) + n) >> shift; }
};

template <typename index_t> struct OffsetType;
template <> struct OffsetType<u32> { typedef i32 type; };
template <> struct OffsetType<u64> { typedef i64 type; };

// OffsetCalc::locate of at most this many operands on the 32-bit path runs unrolled over MAX_DIMS
// (binary, ternary, copy, unary, the variadic kernel's launches of few inputs); more operands, or
// the 64-bit path, keep the loop over dims (unrolled, they spill: fused kernels of 15 leaves; the
// binary kernel's 64-bit multiply-highs reach 110 registers).
constexpr int UNROLLED_LOCATE = 5;

// Element offsets of NARGS operands (0 = output) at one linear index of the coalesced shape.
template <int NARGS, typename index_t> struct OffsetCalc {
  typedef typename OffsetType<index_t>::type offset_t;
  i32 ndim;                               // coalesced rank, 1..MAX_DIMS
  u32 width;                              // LANE_CHUNKS: the innermost size (PADDED_ROWS: dim[0] is it padded)
  Divider<index_t> dim[MAX_DIMS];         // coalesced sizes, innermost first
  offset_t stride[MAX_DIMS][NARGS];       // element strides, innermost first (may be 0 or < 0)
  offset_t chunk_step[NARGS];             // LANE_CHUNKS: offset from a lane's chunk to its next (the host's)
  Divider<u32> tile_grid[2];              // SHARED_TILES: column blocks ceil(n0 / TILE_COLS), row blocks
                                          // ceil(n1 / TILE_ROWS) (the host's; else 1): tile coordinates
                                          // by multiply-high (for_each_shared_tile: where ptxas allows)

  // Dim d of linear index i (the dims inside it divided out): its coordinate's offsets added to
  // off, i divided by its size; returns the coordinate.
  template <int FIRST, int N> GB_FN index_t peel(int d, index_t& i, offset_t (&off)[N]) const {
    const index_t q = dim[d].div(i);
    const index_t r = i - q * dim[d].divisor;
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] += (offset_t)r * stride[d][FIRST + k];
    i = q;
    return r;
  }

  // The offsets of arguments FIRST .. FIRST + N - 1 at linear index i (off is overwritten);
  // returns i's coordinate in the innermost dim (dim 0, peeled).
  template <int FIRST, int N> GB_FN index_t locate(index_t i, offset_t (&off)[N]) const {
    index_t inner = i;                    // rank 1: the index is the innermost coordinate
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
    if constexpr (sizeof(index_t) == 4 && N <= UNROLLED_LOCATE) {
      // unrolled: no loop counter, the sizes and strides constant-bank operands
      const int last = ndim - 1;
#pragma unroll
      for (int d = 0; d < MAX_DIMS - 1; ++d) {
        if (d >= last) break;
        const index_t r = peel<FIRST>(d, i, off);
        if (d == 0) inner = r;
      }
      outermost<FIRST>(last, i, off);
      return inner;
    }
    int d = 0;                            // a loop (in this form the 64-bit binary kernel keeps 64 registers)
#pragma unroll 1
    for (; d < ndim - 1; ++d) {
      const index_t r = peel<FIRST>(d, i, off);
      if (d == 0) inner = r;
    }
    if (d < ndim) outermost<FIRST>(d, i, off);
    return inner;
  }

  // The outermost dim d: the index left, i, is its coordinate.
  template <int FIRST, int N> GB_FN void outermost(int d, index_t i, offset_t (&off)[N]) const {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] += (offset_t)i * stride[d][FIRST + k];
  }
};

template <int NIN, typename index_t> struct General {
  Head<NIN> h;
  OffsetCalc<NIN + 1, index_t> calc;
};

}  // namespace gb
