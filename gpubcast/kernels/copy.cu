// copy.cu -- out[i] = x[i] over a broadcast plan: data movement for broadcast_to / expand
// (ONNX Expand, OpenVINO Broadcast).  Dispatched on element size (gb::Bytes<1/2/4/8/16>),
// not dtype: every dtype of that size moves with the same kernel.
//
// Kernels (launch contract: indexing.cuh):
//   copy_contig<Op, T>             x contiguous or a scalar (fill); Head<1> argument
//   copy_general<Op, T, index_t>   any strides (broadcast dims have stride 0); General<1, index_t>
//   *_ept<...>                     elements per thread
// Every kernel takes a last template argument P, its store path (launch.cuh Path; default
// DefaultPath, the only one the runtime launches: other paths are benchmarks/write_only.py's variants).
// Assumption: a scalar x (one device element or a host value) fills the output; a
//   contiguous x with a contiguous output is a plain (vectorised) copy.
#include "indexing.cuh"

namespace gb {

struct Copy {
  template <typename T> GB_FN T operator()(T x) const { return x; }
};

template <class Op, typename T, class P = DefaultPath> constexpr int copy_contig_ept = path_ept<P>(contig_ept<T>());
template <class Op, typename T, typename index_t, class P = DefaultPath>
constexpr int copy_general_ept = path_ept<P>(general_ept<T>());

template <class Op, typename T> struct CopyBody {
  template <typename Acc> GB_FN void operator()(const Acc& acc) const {
    constexpr int EPT = Acc::ELEMENTS;
    T x[EPT], r[EPT];
    acc.template load<1>(x);
#pragma unroll
    for (int k = 0; k < EPT; ++k) r[k] = Op()(x[k]);
    acc.store(r);
  }
};

template <class Op, typename T, class P = DefaultPath>
__global__ void __launch_bounds__(P::THREADS) copy_contig(const __grid_constant__ Head<1> h) {
  constexpr int EPT = copy_contig_ept<Op, T, P>;
  const bool consecutive = vec_ok<T, EPT>(h, 0) && vec_ok<T, EPT>(h, 1);
  for_each_tile<1, EPT, u64, false, false, 2, EPT, EPT, P>(h, NoCalc(), consecutive, CopyBody<Op, T>());
}

template <class Op, typename T, typename index_t, class P = DefaultPath>
__global__ void __launch_bounds__(P::THREADS) copy_general(const __grid_constant__ General<1, index_t> p) {
  constexpr int EPT = copy_general_ept<Op, T, index_t, P>;
  for_each_tile<1, EPT, index_t, true, true, 2, path_chunk<P, 2 * EPT, T>(), 2 * EPT, P>(p.h, p.calc, true,
                                                                                     CopyBody<Op, T>());
}

}  // namespace gb
