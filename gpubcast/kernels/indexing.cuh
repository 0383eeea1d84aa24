// indexing.cuh -- which elements a thread owns, and where they live in every operand.
//
// What it computes: for the thread (blockIdx.x, threadIdx.x), a tile of EPT output
// elements (linear indices into the plan's coalesced output shape) and, per operand, how
// to reach them: a contiguous operand at the linear index (vector loads of up to 16 bytes
// when the tile is full and consecutive and the pointer aligned), a scalar operand from a
// kernel argument (VALUE) or one device element (SCALAR), a strided operand at the offset
// given by the plan's coalesced strides.  Offsets come from OffsetCalc: divide the linear
// index by each coalesced size, innermost first, by magic-number multiplication
// (Divider: 32-bit on the u32 path, 64-bit multiply-high on the u64 path for outputs whose
// indices or offsets reach 2^31).  A tile's offsets are located once, at its first element,
// for every operand at once, and stepped by the innermost strides while the tile stays in
// one innermost row; a tile that crosses rows (innermost size not a multiple of EPT, or
// shorter than a tile) locates each operand's offsets anew at every row it enters.  Under
// LANE_CHUNKS (below) a lane's elements are chunks of 16 bytes, 32 chunks apart (a warp access
// covers 512 consecutive bytes), stepped by the host's per-operand chunk steps.  Within a row
// (32-bit path), an input of innermost stride 0 is read once per tile and one of stride 1
// with vector loads where aligned, as a contiguous operand; a full row tile's element-wise
// stores (and loads, in kernels of at most 8 inputs) run without per-element tests.  Under
// SHARED_TILES (transposed operands) a block takes a 2-D tile of the two innermost dims and
// reads each transposed operand through shared memory (for_each_shared_tile).
//
// Launch contract (every kernel of binary.cu, ternary.cu, variadic.cu, copy.cu):
//   blockDim = (BLOCK, 1, 1); any gridDim.x >= 1 (tiles are visited grid-stride; the host
//   launches ceil(size / (BLOCK * EPT)) blocks, EPT = the kernel's *_ept constant (variadic_general:
//   of its launches of few inputs, variadic.cu); under LANE_CHUNKS ceil(size / (BLOCK * LANE_EPT));
//   under SHARED_TILES one block per 2-D tile); one by-value argument: Head<NIN> (contiguous
//   kernels) or General<NIN, index_t>.
// Assumption: under SHARED_TILES a Body calls acc.load<ARG> and acc.store in control flow that
//   is the same for every thread of a block (they hold __syncthreads()): unconditionally, or
//   under a condition on the launch's arguments only (VariadicBody's `J < nin`).
// Assumption: operand 0 is the output; it is contiguous or strided, never a scalar.
// Assumption: every pointer is aligned to its element type (the host checks); vector
//   access is used only after checking the vector's alignment here (contiguous kernels:
//   once per launch, choosing consecutive or interleaved tiles; general kernels: per tile).
// Assumption: on the 32-bit path every linear index and every |offset| is < 2^31
//   (the planner's index_bits == 32); magic division is exact below 2^(bits-1) only.
// Assumption: coalesced rank <= MAX_DIMS (the host splits higher ranks into launches).
// Assumption: no operand's elements overlap the output's except element for element
//   (dispatch.py copies partially overlapping inputs first).
//
// The headers, one idea each: launch.cuh (block size, elements per thread, Path, Head), offsets.cuh
// (magic-number division, OffsetCalc, General), access.cuh (a thread's tile and its access to every
// operand), shared_tiles.cuh (the SHARED_TILES path); here for_each_tile, the loop every kernel
// runs its body in.
#pragma once

#include "shared_tiles.cuh"

namespace gb {

// Run body(access) for every tile this thread takes part in (grid-stride over tiles; P: the path's
// tile order, block size and stores -- DefaultPath: single tiles, BLOCK threads, plain stores).
// `consecutive` must be the same for every thread of the launch (general kernels: true).
// SHARED: the kernel honours SHARED_TILES (binary, ternary, copy, unary; the variadic kernels
// do not: the host never sets it for them, and the path would cost them registers).  A kernel
// whose EPT does not divide TILE_COLS takes row tiles under SHARED_TILES too.
// LOCATED, CHUNK: as Access's (row tiles only).  LANE_EPT: a lane's elements under LANE_CHUNKS (the
// Body sizes its arrays by Access::ELEMENTS); EPT or 2 * EPT (kernels whose registers allow it).
template <int NIN, int EPT, typename index_t, bool GENERAL, bool SHARED = GENERAL, int LOCATED = NIN + 1,
          int CHUNK = EPT, int LANE_EPT = EPT, class P = DefaultPath, typename Calc, typename Body>
GB_FN void for_each_tile(const Head<NIN>& h, const Calc& calc, bool consecutive, Body body) {
  constexpr int THREADS = P::THREADS;
  if constexpr (GENERAL && SHARED && TILE_COLS % EPT == 0 && THREADS == BLOCK) {
    if (h.flags & SHARED_TILES) return for_each_shared_tile<NIN, EPT, index_t>(h, calc, body);
  }
  const index_t size = (index_t)h.size;
  const index_t tiles = (size + (index_t)(THREADS * EPT) - 1) / (index_t)(THREADS * EPT);
  if constexpr (GENERAL && CHUNK < LANE_EPT && sizeof(index_t) == 4) {   // the host: 32-bit path only
    if (h.flags & LANE_CHUNKS) {                  // a loop of its own: the other launches' loop stays as it was
      // tiles of BLOCK * LANE_EPT elements (LANE_EPT / CHUNK chunks a lane); the last, partial one
      // as LANE_EPT / EPT tiles of EPT consecutive elements a lane
      constexpr int SUB = LANE_EPT / EPT;
      static_assert(LANE_EPT % EPT == 0, "a lane tile: whole tiles of EPT");
      const index_t lane_tiles = (size + (index_t)(THREADS * LANE_EPT) - 1) / (index_t)(THREADS * LANE_EPT);
      const bool padded = LANE_EPT > EPT && (h.flags & PADDED_ROWS) != 0;
      const index_t full = padded ? lane_tiles : size / (index_t)(THREADS * LANE_EPT);   // tiles of lane chunks
      for (index_t tile = first_tile<P, index_t>(); tile < lane_tiles; tile = next_tile<P>(tile)) {
        if (tile < full) {
          Access<NIN, LANE_EPT, index_t, true, false, LOCATED, CHUNK, P> acc(
              h, make_lane_tile<LANE_EPT, index_t, CHUNK, THREADS>(tile, size), true);
          if constexpr (LANE_EPT > EPT) {         // the host pads rows only for lane tiles of 2 tiles
            if (acc.t.count == 0) continue;       // padded: a warp past the end (the last tile)
          }
          acc.compute_offsets(calc);
          if constexpr (LANE_EPT > EPT) {
            if (acc.column >= (index_t)calc.width) continue;   // padded: a lane past its row's end
          }
          body(acc);
          continue;
        }
#pragma unroll 1
        for (int sub = 0; sub < SUB; ++sub) {     // the partial tile: EPT consecutive elements a lane
          Access<NIN, EPT, index_t, true, true, LOCATED, EPT, P> acc(
              h, make_tile<EPT, index_t, THREADS>(tile * (index_t)SUB + (index_t)sub, size, true), true);
          if (acc.t.count == 0) continue;
          acc.compute_offsets(calc);
          body(acc);
        }
      }
      return;
    }
  }
  for (index_t tile = first_tile<P, index_t>(); tile < tiles; tile = next_tile<P>(tile)) {
    Access<NIN, EPT, index_t, GENERAL, GENERAL, LOCATED, EPT, P> acc(
        h, make_tile<EPT, index_t, THREADS>(tile, size, consecutive), consecutive);
    if (acc.t.count == 0) continue;               // past the end (last tile only)
    acc.compute_offsets(calc);
    body(acc);
  }
}

}  // namespace gb
