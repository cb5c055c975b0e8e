// Comparison primitives eq, ne, lt, le, gt, ge: lax's binary shape rule on operands of one
// dtype (bool included), a bool result. NaN compares as IEEE (unequal to everything, ne true).
#include <type_traits>

#include "prims/batch_util.h"
#include "prims/broadcast_iter.h"
#include "prims/kernel_util.h"
#include "prims/prims.h"

namespace tessera::prims {

Primitive eq("eq");
Primitive ne("ne");
Primitive lt("lt");
Primitive le("le");
Primitive gt("gt");
Primitive ge("ge");

namespace {

struct EqOp {
  template <class C>
  bool operator()(C a, C b) const {
    return a == b;
  }
};
struct NeOp {
  template <class C>
  bool operator()(C a, C b) const {
    return a != b;
  }
};
struct LtOp {
  template <class C>
  bool operator()(C a, C b) const {
    return a < b;
  }
};
struct LeOp {
  template <class C>
  bool operator()(C a, C b) const {
    return a <= b;
  }
};
struct GtOp {
  template <class C>
  bool operator()(C a, C b) const {
    return a > b;
  }
};
struct GeOp {
  template <class C>
  bool operator()(C a, C b) const {
    return a >= b;
  }
};

std::vector<Aval> compare_abstract(const char* op, std::span<const Aval> in) {
  kernels::check_num_operands(op, in, 2);
  for (const Aval& a : in) kernels::check_not_extended(op, a);
  kernels::check_same_dtype(
      op, in, "convert with convert_element_type or use tessera::numpy which promotes");
  return {Aval{kernels::broadcast_shapes(op, in), DType::kBool, false}};
}

template <class Op>
std::vector<Array> compare_impl(const char* op, std::span<const Array> args,
                                std::span<const Aval> out_avals) {
  const Aval& oa = out_avals[0];
  Array out = empty_array(oa, op);
  const auto plan = kernels::make_plan<2>(oa.shape, {&args[0].shape(), &args[1].shape()});
  if (plan.size == 0) return {out};
  kernels::dispatch_dtype(args[0].dtype(), [&]<class T>() {
    const T* a = static_cast<const T*>(args[0].raw_data(op));
    const T* b = static_cast<const T*>(args[1].raw_data(op));
    bool* o = static_cast<bool*>(out.buffer()->data());
    kernels::parallel_runs<2>(
        plan, [&](int64_t oo, const std::array<int64_t, 2>& off, int64_t len) {
          kernels::run2(a + off[0], plan.inner[0], b + off[1], plan.inner[1], o + oo, len, Op{});
        });
  });
  return {out};
}

template <class Op>
void define(Primitive& p) {
  const char* name = p.name().c_str();
  p.abstract_eval = [name](std::span<const Aval> in, const Params&) {
    return compare_abstract(name, in);
  };
  p.impl = [name](std::span<const Array> args, const Params&, std::span<const Aval> out_avals) {
    return compare_impl<Op>(name, args, out_avals);
  };
  // Comparisons are not differentiable: the bool output has no tangent (a symbolic zero).
  p.jvp = [&p](std::span<const Array> primals, std::span<const Array>, const Params& params) {
    return std::pair<std::vector<Array>, std::vector<Array>>{tessera::bind(p, primals, params),
                                                             {Array()}};
  };
  p.batch = batching::broadcasting_rule(p);  // as the binary arithmetic primitives
  register_primitive(p);
}

}  // namespace

void register_compare() {
  define<EqOp>(eq);
  define<NeOp>(ne);
  define<LtOp>(lt);
  define<LeOp>(le);
  define<GtOp>(gt);
  define<GeOp>(ge);
}

}  // namespace tessera::prims
