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
#pragma once

#include "numeric.cuh"

#ifndef __CUDACC__
#include <string.h>  // host emulation: memcpy
#endif

// Host emulation hook: every global memory access below goes through GB_PTR(address, base,
// is_write), `base` being the operand's pointer h.ptr[ARG].  NVRTC never defines it (GB_PTR(p, ...)
// is p); the host emulation harness (gpubcast/cuda/emulate.py) defines it to check that each access
// lies in the allocation `base` points into and is aligned (the virtual CUDA device, README).
#ifndef GB_PTR
#define GB_PTR(p, base, is_write) (p)
#endif
// Likewise every shared memory access goes through GB_SMEM(address, buffer, buffer bytes,
// is_write), and GB_SMEM_DEAD(buffer, bytes) says that the buffer's contents are dead from here
// on (the harness checks barriers, races and reads of unwritten bytes).
#ifndef GB_SMEM
#define GB_SMEM(p, base, bytes, is_write) (p)
#define GB_SMEM_DEAD(base, bytes)
#endif

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

// ---- vector access -----------------------------------------------------------------------
template <typename T, int N> struct alignas(sizeof(T) * N) Vec { T v[N]; };

// Elements per vector access of T in a tile of EPT: at most 16 bytes, at most EPT.
template <typename T, int EPT> struct VecOf {
  static constexpr int N = (int)(16 / sizeof(T)) < EPT ? (int)(16 / sizeof(T)) : EPT;
  static constexpr int NV = N > 0 ? N : 1;
  static constexpr int BYTES = NV * (int)sizeof(T);
};

template <typename T> GB_FN T from_bits(const u64 (&w)[2]) {
  u64 words[2] = {w[0], w[1]};
  T x;
  memcpy(&x, words, sizeof(T));
  return x;
}

// The unsigned word of W bytes (__stcs takes these).
template <int W> struct Word;
template <> struct Word<1> { typedef unsigned char type; };
template <> struct Word<2> { typedef unsigned short type; };
template <> struct Word<4> { typedef unsigned type; };
template <> struct Word<8> { typedef uint2 type; };
template <> struct Word<16> { typedef uint4 type; };

// One global store of x at p (an address already through GB_PTR): plain, or on a STREAM path with
// the streaming hint, in the widest words x's alignment allows (uint4 .. unsigned char).
template <class P, typename V> GB_FN void put(V* p, const V& x) {
#ifdef __CUDA_ARCH__
  if constexpr (P::STREAM) {
    constexpr int A = alignof(V) < sizeof(V) ? (int)alignof(V) : (int)sizeof(V);
    constexpr int W = A >= 16 ? 16 : A >= 8 ? 8 : A >= 4 ? 4 : A >= 2 ? 2 : 1;
    typedef typename Word<W>::type U;
    static_assert(sizeof(V) % W == 0, "a store of whole words");
    U w[sizeof(V) / W];
    memcpy(w, &x, sizeof(V));
#pragma unroll
    for (int j = 0; j < (int)(sizeof(V) / W); ++j) __stcs(reinterpret_cast<U*>(p) + j, w[j]);
    return;
  }
#endif
  *p = x;
}

template <typename T, int EPT> GB_FN bool vec_aligned(const void* p) {
  return ((unsigned long long)p % (unsigned long long)VecOf<T, EPT>::BYTES) == 0;
}

// Whether operand `arg` (elements T) allows vector access: not contiguous, or aligned.
template <typename T, int EPT, int NIN> GB_FN bool vec_ok(const Head<NIN>& h, int arg) {
  return ((h.classes >> (2 * arg)) & 3u) != CONTIG || vec_aligned<T, EPT>(h.ptr[arg]);
}

struct NoCalc {};  // the contiguous kernels compute no offsets

// The elements of one thread: element k is first + k * step, for k < count.
template <int EPT, typename index_t> struct Tile {
  index_t first, step;
  int count;
  GB_FN index_t at(int k) const { return first + (index_t)k * step; }
};

// Tile `tile` of the launch (THREADS * EPT elements): this thread takes EPT consecutive ones
// (consecutive: vector access) or every THREADS-th one (interleaved: coalesced element access).
template <int EPT, typename index_t, int THREADS = BLOCK>
GB_FN Tile<EPT, index_t> make_tile(index_t tile, index_t size, bool consecutive) {
  Tile<EPT, index_t> t;
  const index_t start = tile * (index_t)(THREADS * EPT);
  t.first = start + (index_t)threadIdx.x * (consecutive ? EPT : 1);
  t.step = consecutive ? 1 : THREADS;
  if (t.first >= size) {
    t.count = 0;
  } else {
    const index_t left = (size - t.first + t.step - 1) / t.step;   // elements from first on
    t.count = left >= (index_t)EPT ? EPT : (int)left;
  }
  return t;
}

// Tile `tile` of a LANE_CHUNKS launch (THREADS * EPT elements): lane L of warp w from element
// w * 32 * EPT + L * CHUNK of the tile, in chunks of CHUNK 32 * CHUNK apart (Access, CHUNK < EPT).
template <int EPT, typename index_t, int CHUNK, int THREADS = BLOCK>
GB_FN Tile<EPT, index_t> make_lane_tile(index_t tile, index_t size) {
  Tile<EPT, index_t> t;
  t.first = tile * (index_t)(THREADS * EPT) + (index_t)(threadIdx.x / 32 * (32 * EPT) + threadIdx.x % 32 * CHUNK);
  t.step = 1;
  t.count = t.first >= size ? 0 : EPT;        // the host: a warp's elements all before the end, or none
  return t;
}

// One thread's access to every operand of a launch.
//   contiguous kernels (GENERAL = false): element k of a contiguous operand is at t.at(k);
//   general kernels (row tiles consecutive): the offsets of every operand at the tile's first
//   element (OffsetCalc::locate, once per tile), then element k of operand ARG at cur[ARG] +
//   k * its innermost stride while the tile stays in one innermost row (the usual case: no
//   per-element division, no per-element offset table); a row tile that crosses rows takes
//   each operand's offsets row by row (row_offsets).
//   general kernels, lane chunks (CHUNK < EPT: a full tile of a LANE_CHUNKS launch): element k
//   (chunk c = k / CHUNK, j = k % CHUNK) at cur[ARG] + c * calc.chunk_step[ARG] + j * its innermost
//   stride; the host sets the flag only where no lane's chunks cross rows (never row_offsets).
// A contiguous operand is read with vector loads when the tile is full and its pointer
// aligned (contiguous kernels: all pointers, checked once per launch).
// CROSS (general kernels): a tile may cross innermost rows (row tiles; shared tiles never do).
// LOCATED (general kernels): the offsets of argument slots 0 .. LOCATED - 1 are located per tile
// (a Body accessing only those: the variadic kernel with few inputs); the rest are never accessed.
// P: the store path (Path; DefaultPath: plain stores of up to 16 bytes).
template <int NIN, int EPT, typename index_t, bool GENERAL, bool CROSS = GENERAL, int LOCATED = NIN + 1,
          int CHUNK = EPT, class P = DefaultPath>
struct Access {
  typedef typename OffsetType<index_t>::type offset_t;
  static constexpr int NARGS = NIN + 1;
  static_assert(LOCATED >= 1 && LOCATED <= NARGS, "located slots: the output and some inputs");
  static_assert(EPT % CHUNK == 0 && (CHUNK == EPT || (GENERAL && !CROSS)), "lane chunks: general, in rows");
  static constexpr bool LANES = CHUNK < EPT;
  static constexpr bool ROW_TILE = CROSS || LANES;  // else a shared tile's (TileAccess): a thread may have no element
  static constexpr int CHUNKS = EPT / CHUNK;
  static constexpr int ELEMENTS = EPT;              // a Body's arrays: this thread's elements a tile
  // A full row tile loads a strided input without per-element tests where the kernel has at most 8
  // inputs (binary ... variadic); a fused kernel of 15 leaves then spills at 64 registers, so more
  // inputs keep the predicated loads (the partial last tile always does).
  static constexpr bool UNGUARDED_LOADS = NIN <= 8;
  const Head<NIN>& h;
  Tile<EPT, index_t> t;
  bool vec;                                         // a full tile of consecutive elements (row tiles)
  bool one_row = true;                              // general: the tile lies in one innermost row
  index_t column = 0;                               // general: the first element's innermost coordinate
  offset_t cur[GENERAL ? LOCATED : 1];              // general: offsets of the tile's first element
  const OffsetCalc<NARGS, index_t>* calc_ = nullptr;

  template <int ARG> GB_FN unsigned cls() const { return (h.classes >> (2 * ARG)) & 3u; }

  GB_FN Access(const Head<NIN>& head, Tile<EPT, index_t> tile, bool consecutive)
      : h(head), t(tile), vec(consecutive && tile.count == EPT) {}

  // A row tile crossing innermost rows: operand ARG's offsets (OffsetCalc::locate, a division
  // per dim) where the tile enters each row, stepped by its innermost stride within the row.
  template <int ARG> GB_FN void row_offsets(offset_t (&o)[EPT]) const {
    const OffsetCalc<NARGS, index_t>& calc = *calc_;
    const index_t n0 = calc.dim[0].divisor;       // innermost size (rank 1: the whole size)
    int k0 = 0;                                   // first element of the row
#pragma unroll 1
    while (true) {
      offset_t c[1];
      const index_t left = n0 - calc.template locate<ARG, 1>(t.first + (index_t)k0, c);  // >= 1
      const int end = left < (index_t)(t.count - k0) ? k0 + (int)left : t.count;
#pragma unroll
      for (int k = 0; k < EPT; ++k)               // the rest of the tile: a later row overwrites its part
        if (k >= k0) o[k] = c[0] + (offset_t)(k - k0) * calc.stride[0][ARG];
      if (end >= t.count) break;
      k0 = end;
    }
  }

  template <typename Calc> GB_FN void compute_offsets(const Calc& calc) {
    if constexpr (GENERAL && !is_same<Calc, NoCalc>::value) {
      calc_ = &calc;
      column = calc.template locate<0, LOCATED>(t.first, cur);
      if constexpr (CROSS) one_row = calc.dim[0].divisor - column >= (index_t)t.count;
    }
  }

  // A contiguous operand ARG's offset at the first element: the linear index, but under lane chunks
  // its located offset (the same, but in a padded row: PADDED_ROWS).
  template <int ARG> GB_FN index_t contig_at() const {
    if constexpr (LANES) return (index_t)cur[ARG];
    else return t.first;
  }
  // Operand ARG's offset from a chunk to the next (one chunk: unused).
  template <int ARG> GB_FN offset_t chunk_step() const {
    if constexpr (LANES) return calc_->chunk_step[ARG];
    else return 0;
  }
  // Element k of operand ARG in the row: chunk k / CHUNK's start + k % CHUNK innermost strides.
  GB_FN static offset_t row_at(int k, offset_t step, offset_t s) {
    return (offset_t)(k / CHUNK) * step + (offset_t)(k % CHUNK) * s;
  }

  template <typename T> GB_FN bool use_vector(const void* p) const {
    if constexpr (GENERAL) return vec && vec_aligned<T, EPT>(p);
    else return vec;
  }

  // EPT elements from q on (vector-aligned; `base`: the operand's pointer), vector loads all
  // issued before use: consecutive, or (LANES) chunk c from q + c * step.  (One chunk: q, no step
  // term -- the same value, but ptxas then schedules the contiguous kernels as before the chunks,
  // 2 instructions a thread fewer on `same`.)
  template <typename T> GB_FN static void load_vector(const T* q, const T* base, T (&v)[EPT], offset_t step) {
    typedef VecOf<T, CHUNK> V;
#pragma unroll
    for (int c = 0; c < CHUNKS; ++c) {
      const Vec<T, V::NV>* w = reinterpret_cast<const Vec<T, V::NV>*>(CHUNKS == 1 ? q : q + (offset_t)c * step);
#pragma unroll
      for (int c2 = 0; c2 < CHUNK / V::NV; ++c2) {
        const Vec<T, V::NV> x = *GB_PTR(w + c2, base, false);
#pragma unroll
        for (int j = 0; j < V::NV; ++j) v[c * CHUNK + c2 * V::NV + j] = x.v[j];
      }
    }
  }

  // Stores as load_vector's loads, each vector in pieces of P::STORE bytes (at least an element).
  template <typename T> GB_FN static void store_vector(T* q, T* base, const T (&v)[EPT], offset_t step) {
    typedef VecOf<T, CHUNK> V;
    constexpr int S0 = P::STORE / (int)sizeof(T) < V::NV ? P::STORE / (int)sizeof(T) : V::NV;
    constexpr int S = S0 > 0 ? S0 : 1;               // elements a store instruction writes
#pragma unroll
    for (int c = 0; c < CHUNKS; ++c) {
      Vec<T, S>* w = reinterpret_cast<Vec<T, S>*>(CHUNKS == 1 ? q : q + (offset_t)c * step);
#pragma unroll
      for (int c2 = 0; c2 < CHUNK / S; ++c2) {
        Vec<T, S> x;
#pragma unroll
        for (int j = 0; j < S; ++j) x.v[j] = v[c * CHUNK + c2 * S + j];
        put<P>(GB_PTR(w + c2, base, true), x);
      }
    }
  }

  // Element k's linear index (C order of the output's shape, rows unpadded): the user kernels' i.
  GB_FN index_t linear(int k) const {
    if constexpr (LANES) {
      index_t x = t.first + (index_t)(k / CHUNK * 32 * CHUNK);
      if (h.flags & PADDED_ROWS) {                 // a padded row's element: back to rows of calc.width
        const index_t row = calc_->dim[0].divisor;
        x = x / row * (index_t)calc_->width + x % row;
      }
      return x + (index_t)(k % CHUNK);
    } else {
      return t.at(k);
    }
  }

  template <int ARG, typename T> GB_FN void load(T (&v)[EPT]) const {
    static_assert(!GENERAL || ARG < LOCATED, "an argument slot whose offsets are not located");
    const unsigned c = cls<ARG>();
    const T* p = reinterpret_cast<const T*>(h.ptr[ARG]);
    if (c == VALUE || c == SCALAR) {               // one value for the whole tile
      const T x = c == VALUE ? from_bits<T>(h.value[ARG]) : *GB_PTR(p, p, false);
#pragma unroll
      for (int k = 0; k < EPT; ++k) v[k] = x;
    } else if (c == CONTIG && use_vector<T>(p)) {  // vector loads, all issued before use
      load_vector(p + contig_at<ARG>(), p, v, chunk_step<ARG>());
    } else if constexpr (!GENERAL) {               // element by element
#pragma unroll
      for (int k = 0; k < EPT; ++k) v[k] = k < t.count ? *GB_PTR(p + t.at(k), p, false) : T();
    } else if (!CROSS || one_row) {                // in the row: stride 0, 1 or any
      const T* q = p + cur[ARG];
      const offset_t s = calc_->stride[0][ARG], step = chunk_step<ARG>();
      // 32-bit path only: on the 64-bit path these two branches take the binary kernels past 64
      // registers (occupancy 1/2 -> 3/8), and it runs only outputs of 2^31 elements or more
      constexpr bool ROW_PATHS = sizeof(index_t) == 4;
      if (ROW_PATHS && s == 0 && step == 0) {      // broadcast along the row: one load for the tile
        const T x = ROW_TILE || t.count > 0 ? *GB_PTR(q, p, false) : T();   // (a row tile runs with some)
#pragma unroll
        for (int k = 0; k < EPT; ++k) v[k] = x;
      } else if (ROW_PATHS && LANES && s == 0) {   // broadcast along rows, chunks in other rows: a load a chunk
#pragma unroll
        for (int c2 = 0; c2 < CHUNKS; ++c2) {
          const T x = *GB_PTR(q + (offset_t)c2 * step, p, false);
#pragma unroll
          for (int j = 0; j < CHUNK; ++j) v[c2 * CHUNK + j] = x;
        }
      } else if (ROW_PATHS && s == 1 && use_vector<T>(q) && (!LANES || step % CHUNK == 0)) {   // ascending: vectors
        load_vector(q, p, v, step);
      } else if (UNGUARDED_LOADS && t.count == EPT) {   // element by element, stepped in the row:
#pragma unroll                                          // a full tile without per-element tests
        for (int k = 0; k < EPT; ++k) v[k] = *GB_PTR(q + row_at(k, step, s), p, false);
      } else {
#pragma unroll
        for (int k = 0; k < EPT; ++k) v[k] = k < t.count ? *GB_PTR(q + row_at(k, step, s), p, false) : T();
      }
    } else {                                       // element by element, row by row
      offset_t o[EPT];
      row_offsets<ARG>(o);
#pragma unroll
      for (int k = 0; k < EPT; ++k) v[k] = k < t.count ? *GB_PTR(p + o[k], p, false) : T();
    }
  }

  // This thread's elements of operand ARG (the output, 0, unless a kernel has several: the
  // user kernels of elementwise_kernel.cuh), contiguous or strided, never a scalar.
  template <int ARG = 0, typename T> GB_FN void store(const T (&v)[EPT]) const {
    static_assert(!GENERAL || ARG < LOCATED, "an argument slot whose offsets are not located");
    T* p = reinterpret_cast<T*>(h.ptr[ARG]);
    if (cls<ARG>() == CONTIG && use_vector<T>(p)) {
      store_vector(p + contig_at<ARG>(), p, v, chunk_step<ARG>());
    } else if constexpr (!GENERAL) {
#pragma unroll
      for (int k = 0; k < EPT; ++k)
        if (k < t.count) put<P>(GB_PTR(p + t.at(k), p, true), v[k]);
    } else if (!CROSS || one_row) {
      T* q = p + cur[ARG];
      const offset_t s = calc_->stride[0][ARG], step = chunk_step<ARG>();
      if (t.count == EPT) {                        // a full tile: unguarded stores (no branch per element)
#pragma unroll
        for (int k = 0; k < EPT; ++k) put<P>(GB_PTR(q + row_at(k, step, s), p, true), v[k]);
      } else {
#pragma unroll
        for (int k = 0; k < EPT; ++k)
          if (k < t.count) put<P>(GB_PTR(q + row_at(k, step, s), p, true), v[k]);
      }
    } else {
      offset_t o[EPT];
      row_offsets<ARG>(o);
#pragma unroll
      for (int k = 0; k < EPT; ++k)
        if (k < t.count) put<P>(GB_PTR(p + o[k], p, true), v[k]);
    }
  }
};

// The one shared buffer of the SHARED_TILES path (a kernel that never takes it still holds it:
// static shared memory is per kernel, not per path).
__shared__ Vec<u64, 2> shared_tile[SHARED_BYTES / 16];

// SHARED_TILES: one thread's access in a 2-D tile (rows x cols valid of TILE_ROWS x TILE_COLS):
// EPT consecutive columns col.. of tile row `row` in output order, as a row tile within one
// innermost row (Access, one_row); a staged operand (staged<ARG>) through shared_tile.
template <int NIN, int EPT, typename index_t> struct TileAccess : Access<NIN, EPT, index_t, true, false> {
  typedef Access<NIN, EPT, index_t, true, false> Base;
  typedef typename Base::offset_t offset_t;
  static constexpr int NARGS = NIN + 1;
  static constexpr int TILE_ROWS = BLOCK * EPT / TILE_COLS;
  int row, col, rows, cols;

  // t.first: the tile's element (0, 0); made this thread's first element here.
  GB_FN TileAccess(const Head<NIN>& head, const OffsetCalc<NARGS, index_t>& calc, Tile<EPT, index_t> tile,
                   int row_, int col_, int rows_, int cols_)
      : Base(head, tile, true), row(row_), col(col_), rows(rows_), cols(cols_) {
    this->calc_ = &calc;
    calc.template locate<0, NARGS>(this->t.first, this->cur);
#pragma unroll
    for (int k = 0; k < NARGS; ++k)
      this->cur[k] += (offset_t)row * calc.stride[1][k] + (offset_t)col * calc.stride[0][k];
    this->t.first += (index_t)row * calc.dim[0].divisor + (index_t)col;
    this->vec = this->t.count == EPT && this->t.first % (index_t)EPT == 0;
  }

  // Whether operand ARG goes through shared memory: strided, |stride| 1 along the rows and > 1
  // along the columns (launch.transposed; the same for every thread of the launch).
  template <int ARG> GB_FN bool staged() const {
    const offset_t s1 = this->calc_->stride[1][ARG], s0 = this->calc_->stride[0][ARG];
    return this->template cls<ARG>() == STRIDED && (s1 == 1 || s1 == -1) && (s0 > 1 || s0 < -1);
  }

  // A staged operand of T goes through the buffer in P passes of RP rows; a column of a pass is
  // LD elements apart (one of padding).  Between memory and the buffer, thread x moves its part
  // of a pass: with vector accesses (V rows each) where the operand's rows ascend (stride 1) and
  // its chunks align (tile row (x % RV) * V .., columns x / RV + k * CV, k < PV: a warp's lanes on
  // consecutive chunks of a column), else element by element (tile row x % RP, columns
  // x / RP + k * CS, k < PER: a warp's lanes on consecutive rows).  Either way coalesced.
  template <typename T> struct Pass {
    static constexpr int P = ((int)(TILE_ROWS * TILE_COLS * sizeof(T)) + SHARED_DATA - 1) / SHARED_DATA;
    static constexpr int RP = TILE_ROWS / P, LD = RP + 1, CS = BLOCK / RP, PER = TILE_COLS / CS;
    static constexpr int V0 = 16 / (int)sizeof(T) < RP * TILE_COLS / BLOCK ? 16 / (int)sizeof(T)
                                                                             : RP * TILE_COLS / BLOCK;
    static constexpr int V = V0 > 0 ? V0 : 1, RV = RP / V, CV = BLOCK / RV, PV = TILE_COLS / CV;
    static_assert(TILE_ROWS % P == 0 && BLOCK % RP == 0 && TILE_COLS % CS == 0, "EPT, sizeof(T): powers of 2");
    static_assert(BLOCK % RV == 0 && TILE_COLS % CV == 0 && PV >= 1, "EPT, sizeof(T): powers of 2");
    static_assert(TILE_COLS * LD * (int)sizeof(T) <= SHARED_BYTES, "a pass fits the buffer");
  };

  // Operand ARG's element offset at tile element (r, c).
  template <int ARG> GB_FN offset_t at(int r, int c) const {
    const OffsetCalc<NARGS, index_t>& calc = *this->calc_;
    return this->cur[ARG] + (offset_t)(r - row) * calc.stride[1][ARG] + (offset_t)(c - col) * calc.stride[0][ARG];
  }

  // Element or vector `x` of the operand moved to (TO_SHARED) or from the buffer element `s`
  // (N elements, consecutive rows of one column).
  template <bool TO_SHARED, typename X, typename T> GB_FN static void swap_in(X* g, T* s, const T* p) {
    constexpr int N = sizeof(X) / sizeof(T);
    if constexpr (TO_SHARED) {
      const X x = *GB_PTR(g, p, false);
      const T* e = reinterpret_cast<const T*>(&x);
#pragma unroll
      for (int j = 0; j < N; ++j) *GB_SMEM(s + j, shared_tile, SHARED_BYTES, true) = e[j];
    } else {
      X x;
      T* e = reinterpret_cast<T*>(&x);
#pragma unroll
      for (int j = 0; j < N; ++j) e[j] = *GB_SMEM(s + j, shared_tile, SHARED_BYTES, false);
      *GB_PTR(g, p, true) = x;
    }
  }

  // This thread's part of moving pass `pass` of operand ARG (elements T at p) between memory
  // and the buffer sm: to the buffer (TO_SHARED) or from it.
  template <int ARG, bool TO_SHARED, typename T> GB_FN void move(T* p, T* sm, int pass) const {
    typedef Pass<T> S;
    const OffsetCalc<NARGS, index_t>& calc = *this->calc_;
    const offset_t s0 = calc.stride[0][ARG];
    T* const origin = p + at<ARG>(pass * S::RP, 0);
    if (S::V > 1 && calc.stride[1][ARG] == 1 && s0 % S::V == 0 &&
        (unsigned long long)origin % (unsigned long long)(S::V * sizeof(T)) == 0) {
      const int r = (int)threadIdx.x % S::RV * S::V, c = (int)threadIdx.x / S::RV;
      Vec<T, S::V>* q = reinterpret_cast<Vec<T, S::V>*>(origin + r + (offset_t)c * s0);
      const offset_t step = (offset_t)S::CV * s0 / S::V;
      const int left = rows - pass * S::RP - r;    // rows of the chunk in the tile
#pragma unroll
      for (int k = 0; k < S::PV; ++k) {
        T* s = sm + (c + k * S::CV) * S::LD + r;
        if (c + k * S::CV >= cols || left <= 0) continue;
        if (left >= S::V) {
          swap_in<TO_SHARED>(q + k * step, s, p);
        } else {
#pragma unroll 1
          for (int j = 0; j < left; ++j) swap_in<TO_SHARED>(reinterpret_cast<T*>(q + k * step) + j, s + j, p);
        }
      }
    } else {
      const int r = (int)threadIdx.x % S::RP, c = (int)threadIdx.x / S::RP;
      if (pass * S::RP + r >= rows) return;
      T* q = origin + (offset_t)r * calc.stride[1][ARG] + (offset_t)c * s0;
      const offset_t step = (offset_t)S::CS * s0;
#pragma unroll 1
      for (int k = 0; k < S::PER; ++k)
        if (c + k * S::CS < cols) swap_in<TO_SHARED>(q + k * step, sm + (c + k * S::CS) * S::LD + r, p);
    }
  }

  // This thread's elements of pass `pass`, in output order, from or to the buffer.
  template <bool TO_SHARED, typename T> GB_FN void mine(T* sm, int pass, T* v) const {
    typedef Pass<T> S;
    if (row / S::RP != pass) return;
    T* s = sm + col * S::LD + row % S::RP;
#pragma unroll
    for (int k = 0; k < EPT; ++k) {
      if constexpr (TO_SHARED) {
        if (k < this->t.count) *GB_SMEM(s + k * S::LD, shared_tile, SHARED_BYTES, true) = v[k];
      } else {
        v[k] = k < this->t.count ? *GB_SMEM(s + k * S::LD, shared_tile, SHARED_BYTES, false) : T();
      }
    }
  }

  template <int ARG, typename T> GB_FN void load(T (&v)[EPT]) const {
    if (!staged<ARG>()) return Base::template load<ARG>(v);
    T* p = const_cast<T*>(reinterpret_cast<const T*>(this->h.ptr[ARG]));
    T* sm = reinterpret_cast<T*>(shared_tile);
#pragma unroll
    for (int pass = 0; pass < Pass<T>::P; ++pass) {
      __syncthreads();                              // the buffer's readers are done with it
      GB_SMEM_DEAD(shared_tile, SHARED_BYTES);
      move<ARG, true>(p, sm, pass);
      __syncthreads();
      mine<false>(sm, pass, v);
    }
  }

  template <int ARG = 0, typename T> GB_FN void store(const T (&v)[EPT]) const {
    if (!staged<ARG>()) return Base::template store<ARG>(v);
    T* p = reinterpret_cast<T*>(this->h.ptr[ARG]);
    T* sm = reinterpret_cast<T*>(shared_tile);
#pragma unroll
    for (int pass = 0; pass < Pass<T>::P; ++pass) {
      __syncthreads();
      GB_SMEM_DEAD(shared_tile, SHARED_BYTES);
      mine<true>(sm, pass, const_cast<T*>(v));
      __syncthreads();
      move<ARG, false>(p, sm, pass);
    }
  }
};

// SHARED_TILES: tile (outer o, row block rb, column block cb) of the two innermost dims (n1 rows
// of n0), TILE_ROWS x TILE_COLS; thread x takes row x / (TILE_COLS / EPT), columns
// x % (TILE_COLS / EPT) * EPT ...  Every thread runs the body on every tile of its block (a thread
// with no element in a partial tile too: the barriers in the staged accesses need it).
template <int NIN, int EPT, typename index_t, typename Calc, typename Body>
GB_FN void for_each_shared_tile(const Head<NIN>& h, const Calc& calc, Body body) {
  constexpr int Q = TILE_COLS / EPT, ROWS = TileAccess<NIN, EPT, index_t>::TILE_ROWS;
  const index_t n0 = calc.dim[0].divisor, n1 = calc.dim[1].divisor;
  const int row = (int)threadIdx.x / Q, col = (int)threadIdx.x % Q * EPT;
  auto run = [&](u32 cb, u32 rb, u32 o) {        // tile (o, rb, cb)
    const index_t r0 = (index_t)rb * (index_t)ROWS, c0 = (index_t)cb * (index_t)TILE_COLS;
    const int rows = n1 - r0 < (index_t)ROWS ? (int)(n1 - r0) : ROWS;
    const int cols = n0 - c0 < (index_t)TILE_COLS ? (int)(n0 - c0) : TILE_COLS;
    Tile<EPT, index_t> t;
    t.first = ((index_t)o * n1 + r0) * n0 + c0;
    t.step = 1;
    t.count = row < rows && col < cols ? (cols - col < EPT ? cols - col : EPT) : 0;
    body(TileAccess<NIN, EPT, index_t>(h, calc, t, row, col, rows, cols));
  };
  u32 outer = 1;
#pragma unroll 1
  for (int d = 2; d < calc.ndim; ++d) outer *= (u32)calc.dim[d].divisor;
  // tile coordinates in 32 bits (the host: fewer than 2^31 tiles); by the host's dividers where
  // ptxas keeps the registers (sm_80, sm_90): with them, the 64-bit binary kernel took 80 (from 64),
  // where's 8-byte one 80 (from 64), so those keep two divisions a thread
  if constexpr (sizeof(index_t) == 4 && NIN <= 2) {   // multiply-high
    const Divider<u32> &cbs = calc.tile_grid[0], &rbs = calc.tile_grid[1];
    const u32 tiles = outer * rbs.divisor * cbs.divisor;
    for (u32 tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      const u32 rest = cbs.div(tile), o = rbs.div(rest);
      run(tile - rest * cbs.divisor, rest - o * rbs.divisor, o);
    }
  } else {                                       // division
    const u32 cbs = (u32)((n0 + TILE_COLS - 1) / TILE_COLS);
    const u32 rbs = (u32)((n1 + ROWS - 1) / ROWS), tiles = outer * rbs * cbs;
    for (u32 tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      const u32 rest = tile / cbs;
      run(tile % cbs, rest % rbs, rest / rbs);
    }
  }
}

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
