// variadic.cu -- out[i] = x1[i] (+) x2[i] (+) ... (+) xn[i] in one pass over up to
// MAX_VARIADIC inputs (ONNX Sum, Mean, Max, Min), folded left to right like
// functools.reduce(np.add / np.maximum / np.minimum, xs); Mean then divides by n.
// Axpby (Gemm's scaling and bias) is a non-fold: inputs (alpha, x, beta, y) give
// alpha * x + beta * y, each product rounded in T (no FMA), like the NumPy reference; so are the
// parametric activations Selu, HardSigmoid, Shrink over (x, p, q).
//
// Kernels (launch contract: indexing.cuh):
//   variadic_contig<Op, T>             no strided operand; Head<MAX_VARIADIC> argument
//   variadic_general<Op, T, index_t>   any strides; General<MAX_VARIADIC, index_t>
//   *_ept<...>                         elements per thread (variadic_general: of a launch of at most
//                                      FEW_VARIADIC inputs; more inputs take GENERAL_EPT)
// Head::nin = inputs of this launch (args 1..nin); Head::aux = n for Mean's final division
// (0: no division).  More than MAX_VARIADIC inputs: the host chains launches, the partial
// result (the output) being the first input of the next launch.
// Assumption: every input has the loop dtype T (the host casts); the output is T.
// Assumption: an input may alias the output element for element (the chained partial sum).
// The general kernel locates the argument slots' offsets once per tile: 1 + FEW_VARIADIC slots
// when nin <= FEW_VARIADIC, else all (slots past Head::nin have stride 0 and are never
// accessed; access.cuh, Access).
#include "indexing.cuh"

namespace gb {

constexpr int MAX_VARIADIC = 8;

struct Sum {
  template <typename T> GB_FN T step(T acc, T x) const { return num::add(acc, x); }
};
struct Mean {
  template <typename T> GB_FN T step(T acc, T x) const { return num::add(acc, x); }
};
struct Max {
  template <typename T> GB_FN T step(T acc, T x) const { return num::maximum(acc, x); }
};
struct Min {
  template <typename T> GB_FN T step(T acc, T x) const { return num::minimum(acc, x); }
};
struct Axpby {};  // exactly 4 inputs (alpha, x, beta, y); not a fold

// Parametric activations (issue #22): exactly 3 inputs (x, p, q), computed in double and rounded
// once (math_functions.cuh num::act); not a fold.
template <class Op> struct is_parametric { static constexpr bool value = false; };
#define GB_PARAMETRIC(NAME, FN)                                                            \
  struct NAME {                                                                            \
    template <typename T> GB_FN T operator()(T x, T p, T q) const {                        \
      return num::cast<T>(num::act::FN(num::wide(x), num::wide(p), num::wide(q)));         \
    }                                                                                      \
  };                                                                                       \
  template <> struct is_parametric<NAME> { static constexpr bool value = true; };
GB_PARAMETRIC(Selu, selu)
GB_PARAMETRIC(HardSigmoid, hard_sigmoid)
GB_PARAMETRIC(Shrink, shrink)
#undef GB_PARAMETRIC

// A fold (Sum, Mean, Max, Min) can hold its result and one input at a time (VariadicBody's STREAM):
// in the general kernel's launches of few inputs its lanes then take lane tiles of 2 tiles
// (kernels/indexing.cuh LANE_EPT; sm_90 registers: <= 64 for elements of up to 4 bytes, 48-52 for
// 8 bytes, 77-80 for 16 bytes).  Axpby and the parametric activations hold every input at once (at
// 2 tiles: 116-248 registers, f16 Axpby spills): 1.
template <class Op> struct is_fold {
  static constexpr bool value = !is_same<Op, Axpby>::value && !is_parametric<Op>::value;
};

template <class Op, typename T> constexpr int variadic_contig_ept = GENERAL_EPT;  // 8 inputs: keep tiles small
// A launch of at most FEW_VARIADIC inputs on the 32-bit path takes a binary kernel's tile (8 elements
// of 2 or 4 bytes): its per-tile work (the offsets of 5 slots over every dim, the class tests) is
// shared by 8 elements, not 4.  More inputs, 64-bit indices or other sizes keep GENERAL_EPT
// (registers: 1-byte elements at 8 spill on sm_80).
template <class Op, typename T, typename index_t> constexpr int variadic_general_ept =
    sizeof(index_t) == 4 && (sizeof(T) == 2 || sizeof(T) == 4) ? 8 : GENERAL_EPT;

// One tile (Acc::ELEMENTS a thread) of inputs 1 .. nin, nin <= MAXIN (inputs past MAXIN are never touched).
// STREAM (the general kernel's folds): each input folded into the result as it comes, one input's
// elements live at a time (the registers that let a lane take 2 tiles; a kernel's registers are
// its largest branch's, so the launches of many inputs stream too); else every input is loaded
// first, all of a thread's loads in flight together.
template <class Op, typename T, int MAXIN = MAX_VARIADIC, bool STREAM = false> struct VariadicBody {
  static_assert(MAXIN >= 4 && MAXIN <= MAX_VARIADIC, "Axpby takes 4 inputs");
  static_assert(!STREAM || is_fold<Op>::value, "only a fold takes its inputs one at a time");
  template <typename Acc> GB_FN void operator()(const Acc& acc) const {
    constexpr int EPT = Acc::ELEMENTS;
    const unsigned nin = acc.h.nin;
    T r[EPT];
    if constexpr (STREAM) {
      acc.template load<1>(r);
      fold_inputs<1>(acc, nin, r);
    } else {
      T x[MAXIN][EPT];
      load_inputs<0>(acc, nin, x);                    // all loads first ...
      if constexpr (is_same<Op, Axpby>::value) {
#pragma unroll
        for (int k = 0; k < EPT; ++k)
          r[k] = num::add(num::multiply(x[0][k], x[1][k]), num::multiply(x[2][k], x[3][k]));
      } else if constexpr (is_parametric<Op>::value) {
#pragma unroll
        for (int k = 0; k < EPT; ++k) r[k] = Op()(x[0][k], x[1][k], x[2][k]);
      } else {
#pragma unroll
        for (int k = 0; k < EPT; ++k) r[k] = x[0][k];
#pragma unroll
        for (int j = 1; j < MAXIN; ++j)              // ... then the fold
          if (j < (int)nin) {
#pragma unroll
            for (int k = 0; k < EPT; ++k) r[k] = Op().step(r[k], x[j][k]);
          }
      }
    }
    if constexpr (is_same<Op, Mean>::value) {
      if (acc.h.aux != 0) {
        const T n = num::from_count<T>(acc.h.aux);
#pragma unroll
        for (int k = 0; k < EPT; ++k) r[k] = num::true_divide(r[k], n);
      }
    }
    acc.store(r);
  }

  // input J (0-based) is argument J + 1, a compile-time constant for Access::load
  template <int J, typename Acc, int EPT> GB_FN static void load_inputs(const Acc& acc, unsigned nin,
                                                                        T (&x)[MAXIN][EPT]) {
    if (J < (int)nin) acc.template load<J + 1>(x[J]);
    if constexpr (J + 1 < MAXIN) load_inputs<J + 1>(acc, nin, x);
  }
  template <int J, typename Acc, int EPT> GB_FN static void fold_inputs(const Acc& acc, unsigned nin, T (&r)[EPT]) {
    if (J < (int)nin) {
      T x[EPT];
      acc.template load<J + 1>(x);
#pragma unroll
      for (int k = 0; k < EPT; ++k) r[k] = Op().step(r[k], x[k]);
    }
    if constexpr (J + 1 < MAXIN) fold_inputs<J + 1>(acc, nin, r);
  }
};

template <class Op, typename T>
__global__ void __launch_bounds__(BLOCK) variadic_contig(const __grid_constant__ Head<MAX_VARIADIC> h) {
  constexpr int EPT = variadic_contig_ept<Op, T>;
  bool consecutive = true;
#pragma unroll
  for (int a = 0; a <= MAX_VARIADIC; ++a)
    consecutive = consecutive && (a > (int)h.nin || vec_ok<T, EPT>(h, a));
  for_each_tile<MAX_VARIADIC, EPT, u64, false>(h, NoCalc(), consecutive, VariadicBody<Op, T>());
}

// A launch of at most FEW_VARIADIC inputs (Axpby's always) locates the offsets of 1 + FEW_VARIADIC
// argument slots per tile, not 1 + MAX_VARIADIC: the offset work per dim of the usual launches halves.
constexpr int FEW_VARIADIC = 4;

template <class Op, typename T, typename index_t>
__global__ void __launch_bounds__(BLOCK) variadic_general(const __grid_constant__ General<MAX_VARIADIC, index_t> p) {
  constexpr int FEW_EPT = variadic_general_ept<Op, T, index_t>;   // the host launches by it (launch.py)
  constexpr bool FOLD = is_fold<Op>::value;    // the non-folds take at most FEW_VARIADIC inputs
  if (!FOLD || p.h.nin <= (u32)FEW_VARIADIC) {
    constexpr int LANE_EPT = FOLD ? 2 * FEW_EPT : FEW_EPT;   // catalog.Kernels.lane_tiles
    for_each_tile<MAX_VARIADIC, FEW_EPT, index_t, true, false, FEW_VARIADIC + 1, lane_chunk<LANE_EPT, T>(),
                  LANE_EPT>(p.h, p.calc, true, VariadicBody<Op, T, FEW_VARIADIC, FOLD>());
  } else if constexpr (FOLD) {
    for_each_tile<MAX_VARIADIC, GENERAL_EPT, index_t, true, false, MAX_VARIADIC + 1, lane_chunk<GENERAL_EPT, T>()>(
        p.h, p.calc, true, VariadicBody<Op, T, MAX_VARIADIC, true>());
  }
}

}  // namespace gb
