// access.cuh -- one thread's access to every operand of a launch: its tile of elements (Tile,
// make_tile, make_lane_tile), vector loads and stores where aligned, kernel-argument and device
// scalars, strided operands at their located offsets, and the stores of each Path (Access).
// Part of indexing.cuh, whose launch contract and Assumptions hold here.
#pragma once

#include "offsets.cuh"

#ifndef __CUDACC__
#include <string.h>  // host emulation: memcpy
#endif

// Host emulation hook: every global memory access of the kernels goes through GB_PTR(address, base,
// is_write), `base` being the operand's pointer h.ptr[ARG].  NVRTC never defines it (GB_PTR(p, ...)
// is p); the host emulation harness (gpubcast/testing/emulate.py) defines it to check that each access
// lies in the allocation `base` points into and is aligned (docs/developer/virtual-device.md).
#ifndef GB_PTR
#define GB_PTR(p, base, is_write) (p)
#endif

namespace gb {

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

}  // namespace gb
