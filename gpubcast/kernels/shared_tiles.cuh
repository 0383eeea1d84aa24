// shared_tiles.cuh -- the SHARED_TILES path (launch.cuh: a block's 2-D tile of the two innermost
// dims, each transposed operand read through shared memory): the one shared buffer, TileAccess and
// for_each_shared_tile.  Part of indexing.cuh, whose launch contract and Assumptions hold here.
#pragma once

#include "access.cuh"

// Host emulation hook, as GB_PTR (access.cuh): every shared memory access goes through
// GB_SMEM(address, buffer, buffer bytes, is_write), and GB_SMEM_DEAD(buffer, bytes) says that the
// buffer's contents are dead from here on (the harness checks barriers, races and reads of
// unwritten bytes).
#ifndef GB_SMEM
#define GB_SMEM(p, base, bytes, is_write) (p)
#define GB_SMEM_DEAD(base, bytes)
#endif

namespace gb {

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

}  // namespace gb
