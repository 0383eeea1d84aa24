// ternary.cu -- out[i] = Where(cond[i], x[i], y[i]) over a broadcast plan (ONNX Where,
// OpenVINO Select, gpubcast.where).  Values are moved, never computed on, so the kernels
// are instantiated per element size (gb::Bytes<1/2/4/8/16>), not per dtype.
//
// Kernels (launch contract: indexing.cuh):
//   ternary_contig<Op, T>             no strided operand; Head<3> argument (cond, x, y = args 1..3)
//   ternary_general<Op, T, index_t>   any strides; General<3, index_t>; index_t = u32 | u64
//   *_ept<...>                        elements per thread
// Every kernel takes a last template argument P, its store path (launch.cuh Path; default
// DefaultPath, the only one the runtime launches: other paths are benchmarks/write_only.py's variants).
// Assumption: cond holds bool (one byte, 0 or 1): the host casts it to the loop dtype bool.
// Assumption: x and y are loaded in full even where the other is selected (simple,
//   coalesced; the extra traffic is the price of no divergence).
#include "indexing.cuh"

namespace gb {

struct Where {
  template <typename T> GB_FN T operator()(bool c, T x, T y) const { return c ? x : y; }
};

template <class Op, typename T, class P = DefaultPath>
constexpr int ternary_contig_ept = path_ept<P>(contig_ept<bool, T>());
template <class Op, typename T, typename index_t, class P = DefaultPath>
constexpr int ternary_general_ept = path_ept<P>(general_ept<bool, T>());

template <class Op, typename T> struct TernaryBody {
  template <typename Acc> GB_FN void operator()(const Acc& acc) const {
    constexpr int EPT = Acc::ELEMENTS;
    bool c[EPT];
    T x[EPT], y[EPT], r[EPT];
    acc.template load<1>(c);
    acc.template load<2>(x);
    acc.template load<3>(y);
#pragma unroll
    for (int k = 0; k < EPT; ++k) r[k] = Op()(c[k], x[k], y[k]);
    acc.store(r);
  }
};

template <class Op, typename T, class P = DefaultPath>
__global__ void __launch_bounds__(P::THREADS) ternary_contig(const __grid_constant__ Head<3> h) {
  constexpr int EPT = ternary_contig_ept<Op, T, P>;
  const bool consecutive = vec_ok<T, EPT>(h, 0) && vec_ok<bool, EPT>(h, 1) && vec_ok<T, EPT>(h, 2) &&
                           vec_ok<T, EPT>(h, 3);
  for_each_tile<3, EPT, u64, false, false, 4, EPT, EPT, P>(h, NoCalc(), consecutive, TernaryBody<Op, T>());
}

template <class Op, typename T, typename index_t, class P = DefaultPath>
__global__ void __launch_bounds__(P::THREADS) ternary_general(const __grid_constant__ General<3, index_t> p) {
  constexpr int EPT = ternary_general_ept<Op, T, index_t, P>;
  // lane tiles of EPT: at 2 * EPT, 4 operands take 72 registers (occupancy 1/2 -> 3/8)
  for_each_tile<3, EPT, index_t, true, true, 4, path_chunk<P, EPT, bool, T>(), EPT, P>(p.h, p.calc, true,
                                                                                   TernaryBody<Op, T>());
}

}  // namespace gb
