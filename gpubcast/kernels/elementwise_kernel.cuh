// elementwise_kernel.cuh -- the skeleton every gpubcast.ElementwiseKernel runs on the GPU.
//
// What it computes: a user kernel (CuPy's ElementwiseKernel conventions) over a broadcast
// plan.  gpubcast/elementwise_kernel.py generates, per kernel and resolved types, one
// __global__ function around the user's `operation`; this header gives it the pieces:
//   EwkParams<NARGS, index_t>  the one by-value argument: a pointer per parameter, the bytes
//                              of scalar parameters, the element count of raw parameters,
//                              the loop size, which operands are contiguous, and the plan's
//                              coalesced shape and strides (indexing.cuh's OffsetCalc);
//   ewk_offsets                the element offset of every parameter at linear index i:
//                              i for a contiguous operand, 0 for a broadcast scalar, else
//                              from OffsetCalc (magic division, 32- or 64-bit by index_t);
//   EwkRaw<T>                  a `raw` parameter: x[k] is element k of the C-contiguous
//                              array (CuPy's CArray::operator[] on a contiguous array), x.size();
//   EwkIndexer                 `_ind`: _ind.size() is the loop size.
// Parameters are numbered in declaration order (inputs, then outputs); a scalar or raw
// parameter has stride 0 in OffsetCalc and is never read through it.
//
// Launch contract: blockDim = (BLOCK, 1, 1), any gridDim.x >= 1 (grid-stride over the loop
//   size; the host launches min(ceil(size / BLOCK), EWK_MAX_GRID) blocks).
// Assumption: every non-raw array parameter's (element) strides are aligned to the loop's
//   coalesced shape (plan.coalesce), 0 on broadcast dims; the output parameters are never
//   broadcast (the host checks their shape).
// Assumption: on the 32-bit path (index_t = u32) the loop size and every |offset| are
//   < 2^31 and gridDim.x * BLOCK + size < 2^32 (EWK_MAX_GRID * BLOCK < 2^31).
// Assumption: coalesced rank <= MAX_DIMS (the host refuses more).
// Assumption: raw parameters are C-contiguous (the host copies raw inputs that are not and
//   refuses raw outputs that are not).
#pragma once

#include "indexing.cuh"

namespace gb {

constexpr int EWK_MAX_GRID = 65535 * 8;

template <int NARGS, typename index_t> struct EwkParams {
  char* ptr[NARGS];              // element (0, ..., 0) of each array parameter (null for scalars)
  u64 value[NARGS][2];           // bytes of each scalar parameter, in its type
  u64 raw_size[NARGS];           // element count of each raw parameter
  u64 size;                      // loop size: elements of the broadcast shape (or size=)
  u64 contig;                    // bit k: parameter k is contiguous (its offset is i)
  u64 general;                   // 1: some parameter is strided (offsets from calc)
  OffsetCalc<NARGS, index_t> calc;
};

struct EwkIndexer {
  u64 n;
  GB_FN long long size() const { return (long long)n; }
};

template <typename T> struct EwkRaw {
  T* data_;
  long long n;
  GB_FN T& operator[](long long k) const { return *GB_PTR(data_ + k, data_, false); }
  GB_FN long long size() const { return n; }
};

template <int NARGS, typename index_t>
GB_FN void ewk_offsets(const EwkParams<NARGS, index_t>& p, index_t i,
                       typename OffsetType<index_t>::type (&off)[NARGS]) {
  typedef typename OffsetType<index_t>::type offset_t;
  if (p.general) {
    p.calc.template locate<0, NARGS>(i, off);
  } else {
#pragma unroll
    for (int k = 0; k < NARGS; ++k) off[k] = ((p.contig >> k) & 1u) ? (offset_t)i : (offset_t)0;
  }
}

}  // namespace gb
