// unary.cu -- out[i] = Op(x[i]) over a broadcast plan, for every unary op of gpubcast/ops.py
// (negative, abs, sqrt, exp, log, tanh, erf, sigmoid, reciprocal, floor, ceil, round, sign,
// relu, logical_not, bitwise_not, cast, the math functions of #22: sin ... signbit, and the activations
// softplus ... gelu_tanh).  The values are NumPy 2's (gb::num in numeric.cuh);
// the math-library ops (exp, log, tanh, erf, sigmoid, complex abs) are CUDA's, within
// gpubcast.ops.MATH_ULPS ulps of NumPy's.
//
// Kernels (launch contract: indexing.cuh):
//   unary_contig<Op, A, R>             x contiguous or a scalar; Head<1> argument
//   unary_general<Op, A, R, index_t>   any strides; General<1, index_t>
//   *_ept<...>                         elements per thread
// A: the op's loop dtype; R: the output dtype (A, but bool for logical_not, isnan, isinf,
// isfinite and signbit, the real type for complex abs, real and imag, any dtype for cast).
// Assumption: the functor names are Op.functor of gpubcast/ops.py (CamelCase of the name).
#include "indexing.cuh"

namespace gb {

#define GB_UNARY(NAME, EXPR)                                                          \
  struct NAME {                                                                       \
    template <typename R, typename A> GB_FN R apply(A x) const { return (R)(EXPR); }  \
  };

GB_UNARY(Negative, num::negative(x))
GB_UNARY(Abs, num::absolute(x))
GB_UNARY(Sqrt, num::sqrt(x))
GB_UNARY(Exp, num::exp(x))
GB_UNARY(Log, num::log(x))
GB_UNARY(Tanh, num::tanh(x))
GB_UNARY(Erf, num::erf(x))
GB_UNARY(Sigmoid, num::sigmoid(x))
GB_UNARY(Reciprocal, num::reciprocal(x))
GB_UNARY(Floor, num::floor(x))
GB_UNARY(Ceil, num::ceil(x))
GB_UNARY(Round, num::round(x))
GB_UNARY(Sign, num::sign(x))
GB_UNARY(Relu, num::maximum(x, A()))  // A() is +0 in every type: maximum's NaN and tie rules
GB_UNARY(LogicalNot, !num::truth(x))
GB_UNARY(BitwiseNot, num::invert(x))

// activations (issue #22): computed in double, rounded once to A (math_functions.cuh num::act)
#define GB_ACTIVATION1(NAME, FN) GB_UNARY(NAME, num::cast<A>(num::act::FN(num::wide(x))))
GB_ACTIVATION1(Softplus, softplus)
GB_ACTIVATION1(Softsign, softsign)
GB_ACTIVATION1(Mish, mish)
GB_ACTIVATION1(HardSwish, hard_swish)
GB_ACTIVATION1(Hsigmoid, hsigmoid)
GB_ACTIVATION1(Gelu, gelu)
GB_ACTIVATION1(GeluTanh, gelu_tanh)
#undef GB_ACTIVATION1

// math functions (#22); complex Sin ... Log10 have no kernel (catalog.COMPLEX_ON_CPU)
GB_UNARY(Sin, num::sin(x))
GB_UNARY(Cos, num::cos(x))
GB_UNARY(Tan, num::tan(x))
GB_UNARY(Arcsin, num::arcsin(x))
GB_UNARY(Arccos, num::arccos(x))
GB_UNARY(Arctan, num::arctan(x))
GB_UNARY(Sinh, num::sinh(x))
GB_UNARY(Cosh, num::cosh(x))
GB_UNARY(Arcsinh, num::arcsinh(x))
GB_UNARY(Arccosh, num::arccosh(x))
GB_UNARY(Arctanh, num::arctanh(x))
GB_UNARY(Exp2, num::exp2(x))
GB_UNARY(Expm1, num::expm1(x))
GB_UNARY(Log1p, num::log1p(x))
GB_UNARY(Log2, num::log2(x))
GB_UNARY(Log10, num::log10(x))
GB_UNARY(Cbrt, num::cbrt(x))
GB_UNARY(Deg2rad, num::deg2rad(x))
GB_UNARY(Rad2deg, num::rad2deg(x))
GB_UNARY(Square, num::square(x))
GB_UNARY(Trunc, num::trunc(x))
GB_UNARY(Positive, x)
GB_UNARY(Conj, num::conj(x))
GB_UNARY(Real, num::real(x))
GB_UNARY(Imag, num::imag(x))
GB_UNARY(Isnan, num::isnan(x))
GB_UNARY(Isinf, num::isinf(x))
GB_UNARY(Isfinite, num::isfinite(x))
GB_UNARY(Signbit, num::signbit(x))

// Cast: NumPy's astype (casting='unsafe'); float -> int out of range or NaN is undefined.
struct Cast {
  template <typename R, typename A> GB_FN R apply(A x) const { return num::cast<R>(x); }
};

template <class Op, typename A, typename R> constexpr int unary_contig_ept = contig_ept<A, R>();
template <class Op, typename A, typename R, typename index_t>
constexpr int unary_general_ept = general_ept<A, R>();

// One tile (Acc::ELEMENTS a thread): every load issued before any compute, then one store.
template <class Op, typename A, typename R> struct UnaryBody {
  template <typename Acc> GB_FN void operator()(const Acc& acc) const {
    constexpr int EPT = Acc::ELEMENTS;
    A x[EPT];
    R r[EPT];
    acc.template load<1>(x);
#pragma unroll
    for (int k = 0; k < EPT; ++k) r[k] = Op().template apply<R>(x[k]);
    acc.store(r);
  }
};

template <class Op, typename A, typename R>
__global__ void __launch_bounds__(BLOCK) unary_contig(const __grid_constant__ Head<1> h) {
  constexpr int EPT = unary_contig_ept<Op, A, R>;
  const bool consecutive = vec_ok<R, EPT>(h, 0) && vec_ok<A, EPT>(h, 1);
  for_each_tile<1, EPT, u64, false>(h, NoCalc(), consecutive, UnaryBody<Op, A, R>());
}

template <class Op, typename A, typename R, typename index_t>
__global__ void __launch_bounds__(BLOCK) unary_general(const __grid_constant__ General<1, index_t> p) {
  constexpr int EPT = unary_general_ept<Op, A, R, index_t>;
  for_each_tile<1, EPT, index_t, true, true, 2, lane_chunk<2 * EPT, A, R>(), 2 * EPT>(p.h, p.calc, true,
                                                                                UnaryBody<Op, A, R>());
}

}  // namespace gb
