// The cumulative reductions cumsum, cumprod, cummax, cummin, cumlogsumexp {axis, reverse}
// (jax.lax's cumred primitives).
//
// Eager kernel: the operand viewed as [O, N, I] (N along the axis) is scanned in order along N
// (from the end when reverse). Rows of a trailing axis (I == 1) are scanned one per task; an
// inner axis accumulates a block of up to kCols columns at once (contiguous, vectorizable). A
// long single row is cut into chunks of kChunk elements: each chunk's total first, then the
// carries in order, then each chunk's scan from its carry (chunk bounds depend only on the
// shape, so results do not depend on the thread count). 16-bit floats accumulate in float32 and
// round each output once; integers wrap in their own dtype; max/min propagate NaN.
//
// Rules as JAX: cumsum is linear (its transpose is the cumsum in the other direction); the JVPs
// of cumprod, cummax, cummin and cumlogsumexp are the JVP of lax.associative_scan with mul, max,
// min or logaddexp (so cumprod is right through zeros, and cummax's tangent follows the running
// maximum, ties split as lax.max's); batching moves the axis past the batch dim.
#include "prims/cumulative.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/broadcast_iter.h"
#include "prims/kernel_util.h"
#include "runtime/thread_pool.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/lax_assoc_scan.h"
#include "tessera/numpy_ufuncs.h"
#include "trace/jaxpr_transforms.h"

namespace tessera::prims {

Primitive cumsum("cumsum");
Primitive cumprod("cumprod");
Primitive cummax("cummax");
Primitive cummin("cummin");
Primitive cumlogsumexp("cumlogsumexp");

namespace {

using kernels::compute_t;

constexpr int64_t kTaskElems = int64_t{1} << 15;  // elements per parallel task, at least
constexpr int64_t kChunk = int64_t{1} << 16;      // a long row is scanned in chunks of this
constexpr int64_t kCols = 512;                    // columns accumulated together

enum class Kind { kSum, kProd, kMax, kMin, kLogSumExp };

template <Kind K, class C>
inline C combine(C acc, C v) {
  if constexpr (K == Kind::kSum) {
    if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<C>;
      return static_cast<C>(static_cast<U>(static_cast<U>(acc) + static_cast<U>(v)));  // wraps
    } else {
      return acc + v;
    }
  } else if constexpr (K == Kind::kProd) {
    if constexpr (std::is_integral_v<C>)
      return static_cast<C>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(v));  // wraps
    else
      return acc * v;
  } else if constexpr (K == Kind::kMax) {
    if constexpr (std::is_floating_point_v<C>)
      return (v > acc || v != v) ? v : acc;  // NaN wins (a NaN acc stays: v > NaN is false)
    else
      return v > acc ? v : acc;
  } else if constexpr (K == Kind::kMin) {
    if constexpr (std::is_floating_point_v<C>)
      return (v < acc || v != v) ? v : acc;
    else
      return v < acc ? v : acc;
  } else {
    if constexpr (std::is_floating_point_v<C>) {
      // log(e^acc + e^v) = max + log1p(e^(min - max)); infinities and NaN as logaddexp.
      if (acc != acc || v != v) return acc + v;
      const C hi = acc > v ? acc : v, lo = acc > v ? v : acc;
      if (hi == std::numeric_limits<C>::infinity() || lo == -std::numeric_limits<C>::infinity())
        return hi;
      return hi + std::log1p(std::exp(lo - hi));
    } else {
      return acc;  // unreachable: abstract eval accepts floating dtypes only
    }
  }
}

// One line of n elements at x, y with element step `step` (negative when reverse), starting
// from `carry` (has_carry) or from the first element.
template <Kind K, class T>
compute_t<T> scan_line(const T* x, T* y, int64_t n, int64_t step, compute_t<T> carry,
                       bool has_carry) {
  using C = compute_t<T>;
  int64_t k = 0;
  C acc = carry;
  if (!has_carry) {
    acc = kernels::load(x[0]);
    y[0] = kernels::store<T>(acc);
    k = 1;
  }
  for (; k < n; ++k) {
    acc = combine<K>(acc, static_cast<C>(kernels::load(x[k * step])));
    y[k * step] = kernels::store<T>(acc);
  }
  return acc;
}

template <Kind K, class T>
compute_t<T> reduce_line(const T* x, int64_t n, int64_t step) {
  using C = compute_t<T>;
  C acc = kernels::load(x[0]);
  for (int64_t k = 1; k < n; ++k) acc = combine<K>(acc, static_cast<C>(kernels::load(x[k * step])));
  return acc;
}

// A long row: chunk totals in parallel, carries in order, chunk scans in parallel.
template <Kind K, class T>
void scan_long_row(const T* x, T* y, int64_t n, bool reverse) {
  using C = compute_t<T>;
  const int64_t step = reverse ? -1 : 1;
  const T* x0 = reverse ? x + n - 1 : x;
  T* y0 = reverse ? y + n - 1 : y;
  const int64_t nc = (n + kChunk - 1) / kChunk;
  std::vector<C> total(static_cast<size_t>(nc));
  runtime::parallel_for(nc, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t b = c * kChunk, len = std::min(kChunk, n - b);
      total[c] = reduce_line<K>(x0 + b * step, len, step);
    }
  });
  std::vector<C> carry(static_cast<size_t>(nc));
  for (int64_t c = 1; c < nc; ++c)
    carry[c] = c == 1 ? total[0] : combine<K>(carry[c - 1], total[c - 1]);
  runtime::parallel_for(nc, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t b = c * kChunk, len = std::min(kChunk, n - b);
      scan_line<K>(x0 + b * step, y0 + b * step, len, step, carry[c], c > 0);
    }
  });
}

template <Kind K, class T>
void scan_kernel(const T* x, T* y, int64_t O, int64_t N, int64_t In, bool reverse) {
  using C = compute_t<T>;
  if (In == 1) {
    if (N >= 2 * kChunk) {
      for (int64_t o = 0; o < O; ++o) scan_long_row<K>(x + o * N, y + o * N, N, reverse);
      return;
    }
    const int64_t step = reverse ? -1 : 1, first = reverse ? N - 1 : 0;
    runtime::parallel_for(O, std::max<int64_t>(1, kTaskElems / N), [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o)
        scan_line<K>(x + o * N + first, y + o * N + first, N, step, C{}, false);
    });
    return;
  }
  // Columns: a block of columns accumulated row by row.
  const int64_t nb = (In + kCols - 1) / kCols;
  const int64_t step = reverse ? -In : In, first = reverse ? (N - 1) * In : 0;
  runtime::parallel_for(O * nb, std::max<int64_t>(1, kTaskElems / (N * std::min(In, kCols))),
                        [&](int64_t t0, int64_t t1) {
                          C acc[kCols];
                          for (int64_t t = t0; t < t1; ++t) {
                            const int64_t o = t / nb, c0 = (t % nb) * kCols;
                            const int64_t w = std::min(kCols, In - c0);
                            const T* xb = x + o * N * In + c0 + first;
                            T* yb = y + o * N * In + c0 + first;
                            for (int64_t j = 0; j < w; ++j) {
                              acc[j] = kernels::load(xb[j]);
                              yb[j] = kernels::store<T>(acc[j]);
                            }
                            for (int64_t k = 1; k < N; ++k) {
                              const T* xr = xb + k * step;
                              T* yr = yb + k * step;
                              for (int64_t j = 0; j < w; ++j) {
                                acc[j] = combine<K>(acc[j], static_cast<C>(kernels::load(xr[j])));
                                yr[j] = kernels::store<T>(acc[j]);
                              }
                            }
                          }
                        });
}

template <Kind K>
std::vector<Array> cum_impl(const ExecContext& ctx, const char* op, std::span<const Array> args,
                            const Params& p, std::span<const Aval> outs) {
  const Array& x = args[0];
  Array out = empty_array(outs[0], op, ctx.device);
  if (outs[0].size() == 0) return {out};
  const int64_t axis = p.get_int("axis");
  const bool reverse = p.get_bool("reverse");
  int64_t O = 1, In = 1;
  for (int64_t d = 0; d < axis; ++d) O *= x.shape()[d];
  for (int64_t d = axis + 1; d < x.ndim(); ++d) In *= x.shape()[d];
  const int64_t N = x.shape()[axis];
  kernels::dispatch_dtype(x.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      throw_internal("prims/cumulative", "a bool operand passed abstract eval");
    } else if constexpr (K == Kind::kLogSumExp && !std::is_floating_point_v<compute_t<T>>) {
      throw_internal("prims/cumulative", "an integer cumlogsumexp passed abstract eval");
    } else {
      scan_kernel<K>(static_cast<const T*>(x.raw_data()), static_cast<T*>(out.buffer()->data()), O,
                     N, In, reverse);
    }
  });
  return {out};
}

std::vector<Aval> cum_abstract(const char* op, bool floating_only, std::span<const Aval> in,
                               const Params& p) {
  kernels::check_num_operands(op, in, 1);
  const Aval& x = in[0];
  const int64_t axis = p.get_int("axis");
  if (is_extended(x.dtype) || is_bool(x.dtype) || (floating_only && !is_floating(x.dtype)))
    throw TypeError(op_message(
        op, std::string(op) + " does not accept dtype " + std::string(dtype_name(x.dtype)) +
                ". Accepted dtypes are subtypes of " + (floating_only ? "floating." : "number.")));
  if (axis < 0 || axis >= x.ndim())
    throw ValueError(op_message(op, "axis " + std::to_string(axis) +
                                        " is out of bounds for array of shape " +
                                        shape_str(x.shape) +
                                        " (lax takes 0 <= axis < ndim; normalize "
                                        "negative axes first)."));
  return {x};
}

Array bind_cum(const Primitive& prim, const Array& x, int64_t axis, bool reverse) {
  return tessera::bind1(prim, {x}, Params{{"axis", axis}, {"reverse", reverse}});
}

// The combining function of the associative scan whose JVP is the primitive's.
Array combine_of(Kind k, const Array& a, const Array& b) {
  switch (k) {
    case Kind::kProd:
      return lax::mul(a, b);
    case Kind::kMax:
      return lax::max(a, b);
    case Kind::kMin:
      return lax::min(a, b);
    case Kind::kLogSumExp:
      return numpy::logaddexp(a, b);
    default:
      return lax::add(a, b);
  }
}

JvpRule scan_jvp(const Primitive& prim, Kind kind) {
  const Primitive* pp = &prim;
  return [pp, kind](std::span<const Array> primals, std::span<const Array> tangents,
                    const Params& p) -> ad::JvpOut {
    const int64_t axis = p.get_int("axis");
    const bool reverse = p.get_bool("reverse");
    Array out = bind_cum(*pp, primals[0], axis, reverse);
    if (ad::zero_tangent(primals[0], tangents[0])) return {ad::one(out), ad::one(Array())};
    flat::Fun scan = [kind, axis, reverse](std::span<const Array> xs) {
      flat::Fun fn = [kind](std::span<const Array> ab) {
        return std::vector<Array>{combine_of(kind, ab[0], ab[1])};
      };
      return lax::associative_scan(fn, {xs[0]}, reverse, axis);
    };
    auto [outs, touts] = trace::jvp_fun(scan, primals.subspan(0, 1), tangents.subspan(0, 1));
    return {ad::one(out), ad::one(touts[0])};
  };
}

template <Kind K>
void set_rules(Primitive& prim, const char* name) {
  prim.abstract_eval = [name](std::span<const Aval> in, const Params& p) {
    return cum_abstract(name, K == Kind::kLogSumExp, in, p);
  };
  prim.impl = [name](const ExecContext& ctx, std::span<const Array> a, const Params& p,
                     std::span<const Aval> o) { return cum_impl<K>(ctx, name, a, p, o); };
  const Primitive* pp = &prim;
  if constexpr (K == Kind::kSum) {
    prim.jvp = [pp](std::span<const Array> ps, std::span<const Array> ts, const Params& p) {
      return ad::linear_jvp(ps, ts, [&](const Array& v) {
        return bind_cum(*pp, v, p.get_int("axis"), p.get_bool("reverse"));
      });
    };
    prim.transpose = [pp](std::span<const Array> cts, std::span<const Array>, std::span<const Aval>,
                          const Params& p) {
      return ad::one(bind_cum(*pp, cts[0], p.get_int("axis"), !p.get_bool("reverse")));
    };
  } else {
    prim.jvp = scan_jvp(prim, K);
  }
  // JAX's lowering off TPU: the associative scan of the combining function (lower_fun).
  prim.composite = [](std::span<const Array> a, const Params& p) {
    flat::Fun fn = [](std::span<const Array> ab) {
      return std::vector<Array>{combine_of(K, ab[0], ab[1])};
    };
    return lax::associative_scan(fn, {a[0]}, p.get_bool("reverse"), p.get_int("axis"));
  };
  prim.batch = [pp](const BatchAxis&, std::span<const Array> args, std::span<const int64_t> dims,
                    const Params& p) -> batching::BatchOut {
    const int64_t b = dims[0], axis = p.get_int("axis");
    return {{bind_cum(*pp, args[0], axis < b ? axis : axis + 1, p.get_bool("reverse"))}, {b}};
  };
  register_primitive(prim);
}

}  // namespace

void register_cumulative() {
  for (Primitive* p : {&cumsum, &cumprod, &cummax, &cummin, &cumlogsumexp})
    p->kind = PrimitiveKind::kReduction;
  for (Primitive* p : {&cumsum, &cumprod, &cummax, &cummin, &cumlogsumexp})
    p->signature = Signature::fixed(1, {{"axis", ParamKind::kInt}, {"reverse", ParamKind::kBool}});
  set_rules<Kind::kSum>(cumsum, "cumsum");
  set_rules<Kind::kProd>(cumprod, "cumprod");
  set_rules<Kind::kMax>(cummax, "cummax");
  set_rules<Kind::kMin>(cummin, "cummin");
  set_rules<Kind::kLogSumExp>(cumlogsumexp, "cumlogsumexp");
}

}  // namespace tessera::prims
