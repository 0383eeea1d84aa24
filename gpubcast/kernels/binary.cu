// binary.cu -- out[i] = Op(x1[i], x2[i]) over a broadcast plan, for every binary op of
// gpubcast/ops.py (arithmetic, fmod, div_trunc, prelu, comparisons, logical, bitwise,
// shifts, power, and the math functions of #22: arctan2 hypot logaddexp logaddexp2 copysign
// nextafter fmax fmin).  The values are NumPy 2's (gb::num in numeric.cuh).
//
// Kernels (launch contract: indexing.cuh):
//   binary_contig<Op, A, B>             every operand contiguous or scalar; Head<2> argument;
//                                       vector loads/stores when all pointers align.
//   binary_general<Op, A, B, index_t>   any strides (0, negative, transposed); General<2, index_t>;
//                                       index_t = u32 (magic division) or u64 (outputs >= 2^31).
//   *_ept<...>                          elements per thread of each kernel (host grid size).
// Every kernel takes a last template argument P, its store path (launch.cuh Path; default
// DefaultPath, the only one the runtime launches: other paths are benchmarks/write_only.py's variants).
// A, B: the op's loop dtypes (equal except int64/uint64 comparisons); the output type is
// what Op returns (bool for comparisons and logical ops, else A).
// Assumption: x1/x2 of a VALUE class carry the value in Head::value (loop dtype's bytes).
// Assumption: the functor names are Op.functor of gpubcast/ops.py (CamelCase of the name), plus
// catalog.SCALAR_SECOND's variants (launched when x2 is a VALUE or SCALAR operand).
#include "indexing.cuh"

namespace gb {

#define GB_BINARY(NAME, EXPR)                                                   \
  struct NAME {                                                                 \
    template <typename T> GB_FN auto operator()(T a, T b) const { return EXPR; } \
  };
#define GB_COMPARE(NAME, EXPR)                                                  \
  struct NAME {                                                                 \
    template <typename A, typename B> GB_FN bool operator()(A a, B b) const { return EXPR; } \
  };

GB_BINARY(Add, num::add(a, b))
GB_BINARY(Subtract, num::subtract(a, b))
GB_BINARY(Multiply, num::multiply(a, b))
GB_BINARY(Divide, num::true_divide(a, b))
GB_BINARY(FloorDivide, num::floor_divide(a, b))
GB_BINARY(Remainder, num::remainder(a, b))
GB_BINARY(Fmod, num::fmod(a, b))
GB_BINARY(DivTrunc, num::div_trunc(a, b))
GB_BINARY(Power, num::power(a, b))
GB_BINARY(PowerScalarExponent, num::power_scalar_exponent(a, b))   // x2 one value over the call
GB_BINARY(Maximum, num::maximum(a, b))
GB_BINARY(Minimum, num::minimum(a, b))
GB_BINARY(BitwiseAnd, (T)(a & b))
GB_BINARY(BitwiseOr, (T)(a | b))
GB_BINARY(BitwiseXor, (T)(a ^ b))
GB_BINARY(LeftShift, num::left_shift(a, b))
GB_BINARY(RightShift, num::right_shift(a, b))
GB_BINARY(LogicalAnd, num::truth(a) && num::truth(b))
GB_BINARY(LogicalOr, num::truth(a) || num::truth(b))
GB_BINARY(LogicalXor, num::truth(a) != num::truth(b))
GB_COMPARE(Equal, num::equal(a, b))
GB_COMPARE(NotEqual, !num::equal(a, b))
GB_COMPARE(Less, num::less(a, b))
GB_COMPARE(LessEqual, num::less_equal(a, b))
GB_COMPARE(Greater, num::less(b, a))
GB_COMPARE(GreaterEqual, num::less_equal(b, a))

// math functions (#22)
GB_BINARY(Arctan2, num::arctan2(a, b))
GB_BINARY(Hypot, num::hypot(a, b))
GB_BINARY(Logaddexp, num::logaddexp(a, b))
GB_BINARY(Logaddexp2, num::logaddexp2(a, b))
GB_BINARY(Copysign, num::copysign(a, b))
GB_BINARY(Nextafter, num::nextafter(a, b))
GB_BINARY(Fmax, num::fmax(a, b))
GB_BINARY(Fmin, num::fmin(a, b))

// ONNX PRelu: x where x >= 0, else slope * x (unsigned x is never negative).
struct Prelu {
  template <typename T> GB_FN T operator()(T x, T slope) const {
    if constexpr (Num<T>::kind == K_UINT) return x;
    else return num::less(x, T()) ? num::multiply(x, slope) : x;
  }
};

// activations with one parameter (issue #22): x and alpha of one float type, computed in double and
// rounded once (math_functions.cuh num::act)
#define GB_ACTIVATION2(NAME, FN)                                                           \
  struct NAME {                                                                            \
    template <typename T> GB_FN T operator()(T x, T a) const {                             \
      return num::cast<T>(num::act::FN(num::wide(x), num::wide(a)));                       \
    }                                                                                      \
  };
GB_ACTIVATION2(LeakyRelu, leaky_relu)
GB_ACTIVATION2(Elu, elu)
GB_ACTIVATION2(Celu, celu)
GB_ACTIVATION2(Swish, swish)
GB_ACTIVATION2(ThresholdedRelu, thresholded_relu)
#undef GB_ACTIVATION2

template <class Op, typename A, typename B> using binary_result = decltype(Op()(A(), B()));

template <class Op, typename A, typename B, class P = DefaultPath>
constexpr int binary_contig_ept = path_ept<P>(contig_ept<A, B, binary_result<Op, A, B>>());
template <class Op, typename A, typename B, typename index_t, class P = DefaultPath>
constexpr int binary_general_ept = path_ept<P>(general_ept<A, B, binary_result<Op, A, B>>());

// One tile (Acc::ELEMENTS a thread): every load issued before any compute, then one store.
template <class Op, typename A, typename B> struct BinaryBody {
  template <typename Acc> GB_FN void operator()(const Acc& acc) const {
    constexpr int EPT = Acc::ELEMENTS;
    A a[EPT];
    B b[EPT];
    acc.template load<1>(a);
    acc.template load<2>(b);
    binary_result<Op, A, B> r[EPT];
#pragma unroll
    for (int k = 0; k < EPT; ++k) r[k] = Op()(a[k], b[k]);
    acc.store(r);
  }
};

template <class Op, typename A, typename B, class P = DefaultPath>
__global__ void __launch_bounds__(P::THREADS) binary_contig(const __grid_constant__ Head<2> h) {
  typedef binary_result<Op, A, B> R;
  constexpr int EPT = binary_contig_ept<Op, A, B, P>;
  const bool consecutive = vec_ok<R, EPT>(h, 0) && vec_ok<A, EPT>(h, 1) && vec_ok<B, EPT>(h, 2);
  for_each_tile<2, EPT, u64, false, false, 3, EPT, EPT, P>(h, NoCalc(), consecutive, BinaryBody<Op, A, B>());
}

template <class Op, typename A, typename B, typename index_t, class P = DefaultPath>
__global__ void __launch_bounds__(P::THREADS) binary_general(const __grid_constant__ General<2, index_t> p) {
  typedef binary_result<Op, A, B> R;
  constexpr int EPT = binary_general_ept<Op, A, B, index_t, P>;
  constexpr int CHUNK = path_chunk<P, 2 * EPT, A, B, R>();
  for_each_tile<2, EPT, index_t, true, true, 3, CHUNK, 2 * EPT, P>(p.h, p.calc, true, BinaryBody<Op, A, B>());
}

}  // namespace gb
