// launch.cuh -- what every launch of the built-in kernels shares: the block size and elements per
// thread, the operand classes and Head::flags, the store paths (Path) and tile order, and Head<NIN>,
// the argument every kernel gets (gpubcast/cuda/launch.py packs it, byte for byte).  Part of
// indexing.cuh, whose launch contract and Assumptions hold here.
#pragma once

#include "numeric.cuh"

namespace gb {

constexpr int MAX_DIMS = 10;      // coalesced rank one launch handles
constexpr int BLOCK = 256;        // threads per block (launch contract)
constexpr int GENERAL_EPT = 4;    // elements per thread of the variadic kernels (contiguous; general: some launches)

// operand classes, 2 bits per operand in Head::classes (operand k at bits 2k..2k+1)
enum : unsigned { CONTIG = 0u, VALUE = 1u, SCALAR = 2u, STRIDED = 3u };

// Head::flags of a general kernel.  SHARED_TILES (launch.shared_tiles sets it where some
// operand is transposed -- |stride| 1 along the second-innermost coalesced dim, > 1 along the
// innermost -- and both dims hold at least 32 elements): a tile is TILE_COLS = 32 columns by
// 8 * EPT rows of the two innermost dims (BLOCK * EPT elements, one block's); in output order
// each thread takes EPT consecutive columns of one row, so the output and every operand in
// output order are accessed as under row tiles (vector accesses where aligned).  Each
// transposed ("staged") operand goes through shared memory: the block reads its tile along
// the operand's own contiguous dim (a warp's lanes on consecutive 16-byte chunks, or elements,
// of a column: coalesced; TileAccess::move) into the buffer, __syncthreads(), and every thread
// reads its elements from there in output order (a transposed output: the other way round).
// The host sets it only with EPT dividing TILE_COLS and fewer than 2^32 tiles.  One staged operand at a
// time through one buffer of SHARED_BYTES per block, whatever NIN; an operand whose tile holds
// more than SHARED_DATA bytes (8-byte elements at EPT 8, 16-byte at EPT 4) goes through in
// passes of rows; 2 barriers a pass.  Columns are padded by one element (no bank conflicts
// for 4-byte elements in either phase).
// Assumption: SHARED_TILES only with coalesced rank >= 2.
enum : unsigned { SHARED_TILES = 1u };
// Head::flags of a general kernel, row tiles.  LANE_CHUNKS (set by launch.py, 32-bit path, for a
// kernel whose CHUNK (lane_chunk) is less than its LANE_EPT (for_each_tile: the elements a lane takes
// under lane chunks, EPT or 2 * EPT)): in a full lane tile (BLOCK * LANE_EPT elements), lane L of a
// warp takes LANE_EPT / CHUNK chunks of CHUNK consecutive elements, chunk c from the warp's first
// element + c * 32 * CHUNK + L * CHUNK, so that each warp access of a chunk covers 32 * CHUNK
// consecutive elements (16 bytes a lane: half the L1 lines of 8 consecutive floats a lane); the last,
// partial lane tile runs as tiles of EPT consecutive elements a lane.  The host sets it only where no
// lane's chunks cross a row (launch.chunk_steps) -- the innermost size n0 a multiple of 32 * LANE_EPT
// (a warp's elements lie in one row: chunk_step = 32 * CHUNK innermost strides), or n0 a power of 2
// dividing 32 * CHUNK with dim 1's size a multiple of the 32 * LANE_EPT / n0 rows a warp covers
// (chunk c lies c * 32 * CHUNK / n0 rows below chunk 0: chunk_step = that many dim-1 strides) -- and
// passes each operand's OffsetCalc::chunk_step.
// PADDED_ROWS (with LANE_CHUNKS, LANE_EPT = 2 * EPT; launch.padded_row): rows of n0 = OffsetCalc::width elements, a
// multiple of CHUNK, laid out as rows of dim[0] = the next power of 2 dividing 32 * CHUNK (h.size
// counts the padded elements: a multiple of a warp's 32 * LANE_EPT): a lane whose column lies past
// the row (all its chunks do: they share the column) or whose warp lies past the end runs nothing;
// every tile takes lane chunks, the last too.  The linear index is then no element's: under lane
// chunks a contiguous operand too is reached by its located offset (Access::contig_at).
enum : unsigned { LANE_CHUNKS = 2u, PADDED_ROWS = 4u };
constexpr int TILE_COLS = 32;               // columns of a shared tile
constexpr int SHARED_DATA = 8192;           // bytes of a staged operand's pass through the buffer
constexpr int SHARED_BYTES = SHARED_DATA + TILE_COLS * 16;   // + a padding element per column

// Path<STORE, STREAM, SPAN, THREADS, EPT>: how a kernel of row tiles writes its output and which
// tiles a block takes.  Every kernel the runtime launches runs DefaultPath (the code as it was
// before paths existed: the same SASS on sm_90 but for register numbers); the others are variants
// that benchmarks/write_only.py measures on a GPU (catalog.Path is the host's side of it):
//   STORE    bytes a store instruction writes at most: 16 (a vector of up to 16 bytes, as the
//            loads), 8 or 4 (a vector store split in pieces; an element wider than STORE is
//            stored whole)
//   STREAM   every global store with the streaming cache hint (st.global.cs, __stcs), else st.global
//   SPAN     consecutive tiles a block takes before it strides: block b takes tiles b * SPAN ..
//            b * SPAN + SPAN - 1, then those gridDim.x * SPAN further on (1: grid-stride by tile)
//   THREADS  threads per block (the launch's blockDim.x, a multiple of 32); a kernel whose THREADS
//            is not BLOCK takes row tiles only (the host never sets SHARED_TILES for it)
//   EPT      a kernel's elements per thread in place of its own (0: its own, the *_ept constant)
//   CHUNK    bytes of a lane chunk under LANE_CHUNKS in place of 16 (0: 16; at least an element):
//            a warp access then covers 32 * CHUNK consecutive bytes, every sector it touches whole
//            (STORE below CHUNK splits each chunk's store: 32-byte sectors partly written per store)
// Assumption: the host launches a Path kernel with blockDim.x == THREADS; any gridDim.x >= 1.
// Assumption: the shared tiles' stores (SHARED_TILES) stay plain 16-byte ones on every path.
template <int STORE_ = 16, bool STREAM_ = false, int SPAN_ = 1, int THREADS_ = BLOCK, int EPT_ = 0, int CHUNK_ = 0>
struct Path {
  static constexpr int STORE = STORE_, SPAN = SPAN_, THREADS = THREADS_, EPT = EPT_, CHUNK = CHUNK_;
  static constexpr bool STREAM = STREAM_;
  static_assert(STORE == 4 || STORE == 8 || STORE == 16, "store widths: 4, 8, 16 bytes");
  static_assert(CHUNK == 0 || CHUNK == 4 || CHUNK == 8 || CHUNK == 16, "lane chunks: 4, 8, 16 bytes");
  static_assert(SPAN >= 1 && THREADS % 32 == 0 && THREADS >= 32 && THREADS <= 1024 && EPT >= 0, "a path's shape");
};
typedef Path<> DefaultPath;

// The elements per thread of a kernel on path P: P's, else the kernel's own.
template <class P> __host__ __device__ constexpr int path_ept(int own) { return P::EPT ? P::EPT : own; }

// Tile order of path P: a block's first tile and the tile after q (SPAN 1: grid-stride by tile).
template <class P, typename index_t> GB_FN index_t first_tile() { return (index_t)blockIdx.x * (index_t)P::SPAN; }
template <class P, typename index_t> GB_FN index_t next_tile(index_t q) {
  if constexpr (P::SPAN == 1) return q + gridDim.x;
  else return (q + 1) % (index_t)P::SPAN ? q + 1 : q + 1 + (index_t)(gridDim.x - 1) * (index_t)P::SPAN;
}

// Elements per thread of a contiguous kernel: 16 bytes of its widest operand, at least 4.
__host__ __device__ constexpr int max_of(int a) { return a; }
template <typename... R> __host__ __device__ constexpr int max_of(int a, int b, R... r) {
  return max_of(a > b ? a : b, r...);
}
template <typename... Ts> __host__ __device__ constexpr int contig_ept() {
  return 16 / max_of((int)sizeof(Ts)...) > 4 ? 16 / max_of((int)sizeof(Ts)...) : 4;
}
// Elements per thread of a binary, ternary or copy general kernel: 8 where every operand's
// element has at most 4 bytes (a tile's offset work shared by 8), else 4 (registers).
template <typename... Ts> __host__ __device__ constexpr int general_ept() {
  return max_of((int)sizeof(Ts)...) <= 4 ? 8 : 4;
}
// Elements of a lane chunk (LANE_CHUNKS) of a general kernel of EPT: 16 bytes of its widest operand,
// at most EPT (catalog.lane_chunk).
template <int EPT, typename... Ts> __host__ __device__ constexpr int lane_chunk() {
  return 16 / max_of((int)sizeof(Ts)...) < EPT ? 16 / max_of((int)sizeof(Ts)...) : EPT;
}
// The lane chunk of a kernel on path P (Path, defined below): P::CHUNK bytes of the widest operand
// (at least an element, at most EPT), else lane_chunk's.
template <class P, int EPT, typename... Ts> __host__ __device__ constexpr int path_chunk() {
  if (P::CHUNK == 0) return lane_chunk<EPT, Ts...>();
  const int n = P::CHUNK / max_of((int)sizeof(Ts)...);
  return n < 1 ? 1 : n < EPT ? n : EPT;
}

// Per-launch arguments every kernel gets (the contiguous kernels get only this).
template <int NIN> struct Head {
  char* ptr[NIN + 1];       // element (0, ..., 0) of the output [0] and of input k [k]
  u64 value[NIN + 1][2];    // bytes of a VALUE-class input k (kernel-argument scalar)
  u64 size;                 // output elements; tiles cover [0, size)
  u32 classes;              // 2 bits per operand: CONTIG | VALUE | SCALAR | STRIDED
  u32 flags;                // general kernels: SHARED_TILES or 0
  u32 nin;                  // variadic: inputs used in this launch (1 <= nin <= NIN)
  u32 aux;                  // variadic mean: divide by aux at the end (0: do not)
};

}  // namespace gb
