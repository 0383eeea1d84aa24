// elementwise_kernel.cuh -- the skeleton every gpubcast.ElementwiseKernel runs on the GPU.
//
// What it computes: a user kernel (CuPy's ElementwiseKernel conventions) over a broadcast
// plan.  gpubcast/elementwise_build.py generates, per kernel and resolved types, __global__
// functions around the user's `operation`, on one of two paths:
//
// Tile path (a kernel with a non-raw array parameter and no `_non_const` array input): the
// built-in kernels' access paths (indexing.cuh for_each_tile).  The array parameters are the
// argument slots of a Head<NIN> (slot s: the s-th array parameter in declaration order, inputs
// then outputs; NIN + 1 slots), classed by the host: CONTIG, SCALAR (an input of stride 0
// everywhere) or STRIDED (outputs never SCALAR).  Kernels, each on a store path P (default
// DefaultPath; others for benchmarks/write_only.py):
//   NAME_contig<P>            no STRIDED slot: EwkContig<NIN, NPARAM> (u64 indices, vector
//                             accesses when every contiguous slot aligns, checked per launch)
//   NAME<index_t, P>          any strides: EwkGeneral<NIN, NPARAM, index_t>; row tiles with
//                             per-tile offsets, lane chunks / padded rows where the host sets
//                             them (launch.row_tiles); never shared tiles (no SHARED_TILES)
//   NAME_contig_ept<P>, NAME_ept<index_t, P>   elements per thread
// Each tile loads every slot (outputs too) with the built-ins' vector or element loads, all issued
// before the operation runs on each element in registers, then stores every output slot: an
// output the operation reads (`y += x`) or writes only sometimes keeps its memory's values, and
// one it overwrites before reading is never read -- in a full tile (all of the thread's elements in
// range: every tile but the last) those loads are dead code, which NVRTC removes (the full and the
// partial tile run separate copies of the operation for that).  `i` is the
// element's linear index (Access::linear).
//
// Element path (every other kernel): NAME<index_t>, one element a thread per grid-stride step,
// each parameter a reference into memory at ewk_offsets (EwkParams).
//
// The pieces:
//   EwkParams<NARGS, index_t>  the element path's one by-value argument: a pointer per parameter, the bytes
//                              of scalar parameters, the element count of raw parameters,
//                              the loop size, which operands are contiguous, and the plan's
//                              coalesced shape and strides (offsets.cuh's OffsetCalc);
//   EwkScalars<NPARAM>         the tile path's per-parameter part (pointers, scalar bytes, raw
//                              sizes, the loop size), followed by the slots' Head or General;
//   ewk_offsets                the element offset of every parameter at linear index i:
//                              i for a contiguous operand, 0 for a broadcast scalar, else
//                              from OffsetCalc (magic division, 32- or 64-bit by index_t);
//   EwkRaw<T>                  a `raw` parameter: x[k] is element k of the C-contiguous
//                              array (CuPy's CArray::operator[] on a contiguous array), x.size();
//   EwkIndexer                 `_ind`: _ind.size() is the loop size.
// Parameters are numbered in declaration order (inputs, then outputs); a scalar or raw
// parameter has stride 0 in OffsetCalc and is never read through it.
//
// Launch contract: element path: blockDim = (BLOCK, 1, 1), any gridDim.x >= 1 (grid-stride over
//   the loop size; the host launches min(ceil(size / BLOCK), EWK_MAX_GRID) blocks).  Tile path:
//   indexing.cuh's (blockDim.x = P::THREADS).
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

template <int NPARAM> struct EwkScalars {
  char* ptr[NPARAM];             // each raw (and array) parameter's element 0 (null for scalars)
  u64 value[NPARAM][2];          // bytes of each scalar parameter, in its type
  u64 raw_size[NPARAM];          // element count of each raw parameter
  u64 size;                      // loop size (_ind.size())
};
template <int NIN, int NPARAM> struct EwkContig {
  EwkScalars<NPARAM> s;
  Head<NIN> h;                   // the array slots
};
template <int NIN, int NPARAM, typename index_t> struct EwkGeneral {
  EwkScalars<NPARAM> s;
  General<NIN, index_t> g;       // the array slots and their coalesced strides
};

// Elements per thread of the access a tile body gets (its parameter's type: const Acc&).
template <class A> struct EwkElements;
template <class A> struct EwkElements<const A&> { static constexpr int value = A::ELEMENTS; };

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
