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
// COLUMN_TILES (transposed operands) a thread's elements step down a column instead.
//
// Launch contract (every kernel of binary.cu, ternary.cu, variadic.cu, copy.cu):
//   blockDim = (BLOCK, 1, 1); any gridDim.x >= 1 (tiles are visited grid-stride; the host
//   launches ceil(size / (BLOCK * EPT)) blocks, EPT = the kernel's *_ept constant);
//   one by-value argument: Head<NIN> (contiguous kernels) or General<NIN, index_t>.
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

namespace gb {

constexpr int MAX_DIMS = 10;      // coalesced rank one launch handles
constexpr int BLOCK = 256;        // threads per block (launch contract)
constexpr int GENERAL_EPT = 4;    // elements per thread of the variadic general kernels

// operand classes, 2 bits per operand in Head::classes (operand k at bits 2k..2k+1)
enum : unsigned { CONTIG = 0u, VALUE = 1u, SCALAR = 2u, STRIDED = 3u };

// Head::flags of a general kernel.  COLUMN_TILES (the host sets it where an operand is
// contiguous along the second-innermost dim but not along the innermost, e.g. transposed):
// a tile is COLUMN_WARPS * EPT rows of the two innermost dims by 32 columns; each warp takes
// EPT rows, lane l column l, stepping down the rows, so the lanes of a warp read and write
// along the innermost dim and each thread along the second-innermost: every access
// coalesced or sector-complete (idle lanes only in a last, partial column block).
// Assumption: COLUMN_TILES only with coalesced rank >= 2.
enum : unsigned { COLUMN_TILES = 1u };
constexpr int COLUMN_WARPS = BLOCK / 32;   // warps of a block, one row block of EPT each

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

// Per-launch arguments every kernel gets (the contiguous kernels get only this).
template <int NIN> struct Head {
  char* ptr[NIN + 1];       // element (0, ..., 0) of the output [0] and of input k [k]
  u64 value[NIN + 1][2];    // bytes of a VALUE-class input k (kernel-argument scalar)
  u64 size;                 // output elements; tiles cover [0, size)
  u32 classes;              // 2 bits per operand: CONTIG | VALUE | SCALAR | STRIDED
  u32 flags;                // general kernels: COLUMN_TILES or 0
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

// Element offsets of NARGS operands (0 = output) at one linear index of the coalesced shape.
template <int NARGS, typename index_t> struct OffsetCalc {
  typedef typename OffsetType<index_t>::type offset_t;
  i32 ndim;                               // coalesced rank, 1..MAX_DIMS
  u32 pad_;
  Divider<index_t> dim[MAX_DIMS];         // coalesced sizes, innermost first
  offset_t stride[MAX_DIMS][NARGS];       // element strides, innermost first (may be 0 or < 0)

  // The offsets of arguments FIRST .. FIRST + N - 1 at linear index i (off is overwritten);
  // returns i's coordinate in the innermost dim (dim 0, peeled).
  template <int FIRST, int N> GB_FN index_t locate(index_t i, offset_t (&off)[N]) const {
    index_t inner = i;                    // rank 1: the index is the innermost coordinate
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
    int d = 0;
#pragma unroll 1
    for (; d < ndim - 1; ++d) {
      const index_t q = dim[d].div(i);
      const index_t r = i - q * dim[d].divisor;
      if (d == 0) inner = r;
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += (offset_t)r * stride[d][FIRST + k];
      i = q;
    }
    if (d < ndim) {                       // outermost dim: the remaining index is its coordinate
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += (offset_t)i * stride[d][FIRST + k];
    }
    return inner;
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

// Tile `tile` of the launch (BLOCK * EPT elements): this thread takes EPT consecutive ones
// (consecutive: vector access) or every BLOCK-th one (interleaved: coalesced element access).
template <int EPT, typename index_t>
GB_FN Tile<EPT, index_t> make_tile(index_t tile, index_t size, bool consecutive) {
  Tile<EPT, index_t> t;
  const index_t start = tile * (index_t)(BLOCK * EPT);
  t.first = start + (index_t)threadIdx.x * (consecutive ? EPT : 1);
  t.step = consecutive ? 1 : BLOCK;
  if (t.first >= size) {
    t.count = 0;
  } else {
    const index_t left = (size - t.first + t.step - 1) / t.step;   // elements from first on
    t.count = left >= (index_t)EPT ? EPT : (int)left;
  }
  return t;
}

// One thread's access to every operand of a launch.
//   contiguous kernels (GENERAL = false): element k of a contiguous operand is at t.at(k);
//   general kernels (row tiles consecutive, or column tiles): the offsets of every operand at
//   the tile's first element (OffsetCalc::locate, once per tile), then element k of operand
//   ARG at cur[ARG] + k * (its stride along dim sd: 0, or 1 for column tiles) while the tile
//   stays in one innermost row (the usual case: no per-element division, no per-element
//   offset table); a row tile that crosses rows takes each operand's offsets row by row
//   (row_offsets).
// A contiguous operand is read with vector loads when the tile is full and its pointer
// aligned (contiguous kernels: all pointers, checked once per launch).
template <int NIN, int EPT, typename index_t, bool GENERAL> struct Access {
  typedef typename OffsetType<index_t>::type offset_t;
  static constexpr int NARGS = NIN + 1;
  const Head<NIN>& h;
  Tile<EPT, index_t> t;
  bool vec;                                         // a full tile of consecutive elements (row tiles)
  bool one_row = true;                              // general: the tile lies in one innermost row
  int sd = 0;                                       // general: the dim a thread steps along (1: COLUMN_TILES)
  offset_t cur[GENERAL ? NARGS : 1];                // general: offsets of the tile's first element
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
      const index_t inner = calc.template locate<0, NARGS>(t.first, cur);
      one_row = sd == 1 || calc.dim[0].divisor - inner >= (index_t)t.count;   // column tiles: within one column
    }
  }

  template <typename T> GB_FN bool use_vector(const void* p) const {
    if constexpr (GENERAL) return vec && vec_aligned<T, EPT>(p);
    else return vec;
  }

  template <int ARG, typename T> GB_FN void load(T (&v)[EPT]) const {
    const unsigned c = cls<ARG>();
    const T* p = reinterpret_cast<const T*>(h.ptr[ARG]);
    if (c == VALUE || c == SCALAR) {               // one value for the whole tile
      const T x = c == VALUE ? from_bits<T>(h.value[ARG]) : *GB_PTR(p, p, false);
#pragma unroll
      for (int k = 0; k < EPT; ++k) v[k] = x;
    } else if (c == CONTIG && use_vector<T>(p)) {  // vector loads, all issued before use
      typedef VecOf<T, EPT> V;
      const Vec<T, V::NV>* q = reinterpret_cast<const Vec<T, V::NV>*>(p + t.first);
#pragma unroll
      for (int c2 = 0; c2 < EPT / V::NV; ++c2) {
        const Vec<T, V::NV> x = *GB_PTR(q + c2, p, false);
#pragma unroll
        for (int j = 0; j < V::NV; ++j) v[c2 * V::NV + j] = x.v[j];
      }
    } else if constexpr (!GENERAL) {               // element by element
#pragma unroll
      for (int k = 0; k < EPT; ++k) v[k] = k < t.count ? *GB_PTR(p + t.at(k), p, false) : T();
    } else if (one_row) {                          // element by element, stepped in the row
      const T* q = p + cur[ARG];
      const offset_t s = calc_->stride[sd][ARG];
#pragma unroll
      for (int k = 0; k < EPT; ++k) v[k] = k < t.count ? *GB_PTR(q + (offset_t)k * s, p, false) : T();
    } else {                                       // element by element, row by row
      offset_t o[EPT];
      row_offsets<ARG>(o);
#pragma unroll
      for (int k = 0; k < EPT; ++k) v[k] = k < t.count ? *GB_PTR(p + o[k], p, false) : T();
    }
  }

  template <typename T> GB_FN void store(const T (&v)[EPT]) const {
    T* p = reinterpret_cast<T*>(h.ptr[0]);
    if (cls<0>() == CONTIG && use_vector<T>(p)) {
      typedef VecOf<T, EPT> V;
      Vec<T, V::NV>* q = reinterpret_cast<Vec<T, V::NV>*>(p + t.first);
#pragma unroll
      for (int c2 = 0; c2 < EPT / V::NV; ++c2) {
        Vec<T, V::NV> x;
#pragma unroll
        for (int j = 0; j < V::NV; ++j) x.v[j] = v[c2 * V::NV + j];
        *GB_PTR(q + c2, p, true) = x;
      }
    } else if constexpr (!GENERAL) {
#pragma unroll
      for (int k = 0; k < EPT; ++k)
        if (k < t.count) *GB_PTR(p + t.at(k), p, true) = v[k];
    } else if (one_row) {
      T* q = p + cur[0];
      const offset_t s = calc_->stride[sd][0];
#pragma unroll
      for (int k = 0; k < EPT; ++k)
        if (k < t.count) *GB_PTR(q + (offset_t)k * s, p, true) = v[k];
    } else {
      offset_t o[EPT];
      row_offsets<0>(o);
#pragma unroll
      for (int k = 0; k < EPT; ++k)
        if (k < t.count) *GB_PTR(p + o[k], p, true) = v[k];
    }
  }
};

// COLUMN_TILES: tile (outer o, row block rb, column block cb) of the two innermost dims
// (n1 rows of n0); lane l of warp w takes column cb * 32 + l, rows (rb * COLUMN_WARPS + w) * EPT
// .. + EPT - 1.
template <int NIN, int EPT, typename index_t, typename Calc, typename Body>
GB_FN void for_each_column_tile(const Head<NIN>& h, const Calc& calc, Body body) {
  constexpr index_t ROWS = (index_t)(COLUMN_WARPS * EPT);
  const index_t n0 = calc.dim[0].divisor, n1 = calc.dim[1].divisor;
  const index_t cbs = (n0 + 31) / 32, rbs = (n1 + ROWS - 1) / ROWS;
  const index_t tiles = (index_t)h.size / (n0 * n1) * rbs * cbs;
  for (index_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const index_t cb = tile % cbs, rest = tile / cbs, rb = rest % rbs, o = rest / rbs;
    const index_t col = cb * 32 + (index_t)(threadIdx.x % 32);
    const index_t row = rb * ROWS + (index_t)(threadIdx.x / 32 * EPT);
    if (col >= n0 || row >= n1) continue;         // past the last column or row (last blocks only)
    Tile<EPT, index_t> t;
    t.first = (o * n1 + row) * n0 + col;
    t.step = n0;
    t.count = n1 - row >= (index_t)EPT ? EPT : (int)(n1 - row);
    Access<NIN, EPT, index_t, true> acc(h, t, false);
    acc.sd = 1;
    acc.compute_offsets(calc);
    body(acc);
  }
}

// Run body(access) for every tile this thread takes part in (grid-stride over tiles).
// `consecutive` must be the same for every thread of the launch (general kernels: true).
// COLUMNS: the kernel honours COLUMN_TILES (binary, ternary, copy; the variadic kernels do
// not: the host never sets it for them, and the path would cost them registers).
template <int NIN, int EPT, typename index_t, bool GENERAL, bool COLUMNS = GENERAL, typename Calc, typename Body>
GB_FN void for_each_tile(const Head<NIN>& h, const Calc& calc, bool consecutive, Body body) {
  if constexpr (GENERAL && COLUMNS) {
    if (h.flags & COLUMN_TILES) return for_each_column_tile<NIN, EPT, index_t>(h, calc, body);
  }
  const index_t size = (index_t)h.size;
  const index_t tiles = (size + (index_t)(BLOCK * EPT) - 1) / (index_t)(BLOCK * EPT);
  for (index_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    Access<NIN, EPT, index_t, GENERAL> acc(h, make_tile<EPT, index_t>(tile, size, consecutive), consecutive);
    if (acc.t.count == 0) continue;               // past the end (last tile only)
    acc.compute_offsets(calc);
    body(acc);
  }
}

}  // namespace gb
