// Comparison primitives eq, ne, lt, le, gt, ge: lax's binary shape rule on operands of one
// dtype (bool included), a bool result. NaN compares as IEEE (unequal to everything, ne true).
#include <type_traits>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/elementwise_util.h"
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

// Every dtype, a bool result (elementwise_util.h).
struct CompareOp : elementwise::AnyKernel {
  template <class S>
  using result = bool;
};

struct EqOp : CompareOp {
  template <class C>
  bool operator()(C a, C b) const {
    return a == b;
  }
};
struct NeOp : CompareOp {
  template <class C>
  bool operator()(C a, C b) const {
    return a != b;
  }
};
struct LtOp : CompareOp {
  template <class C>
  bool operator()(C a, C b) const {
    return a < b;
  }
};
struct LeOp : CompareOp {
  template <class C>
  bool operator()(C a, C b) const {
    return a <= b;
  }
};
struct GtOp : CompareOp {
  template <class C>
  bool operator()(C a, C b) const {
    return a > b;
  }
};
struct GeOp : CompareOp {
  template <class C>
  bool operator()(C a, C b) const {
    return a >= b;
  }
};

template <class Op>
void define(Primitive& p) {
  elementwise::define_binary<elementwise::Runs<Op>>(
      p, "prims/compare", [](const char* op, std::span<const Aval> in) {
        elementwise::check_binary_operands(op, in, elementwise::kPromoteHint);
        return std::vector<Aval>{Aval{kernels::broadcast_shapes(op, in), DType::kBool, false}};
      });
  // Comparisons are not differentiable: the bool output has no tangent (a symbolic zero).
  p.jvp = ad::zero_jvp(p);
  p.batch = batching::broadcasting_rule(p);  // as the binary arithmetic primitives
  register_primitive(p);
}

// ---- Scalar definitions (scalar_ir.h): one comparison each (16-bit floats compare as float32,
// which is exact).

void set_scalar_defs() {
  using elementwise::sdef::op;
  using scalar::Op;
  eq.scalar = op(Op::kEq);
  ne.scalar = op(Op::kNe);
  lt.scalar = op(Op::kLt);
  le.scalar = op(Op::kLe);
  gt.scalar = op(Op::kGt);
  ge.scalar = op(Op::kGe);
}

}  // namespace

void register_compare() {
  for (Primitive* p : {&eq, &ne, &lt, &le, &gt, &ge}) p->kind = PrimitiveKind::kElementwise;
  set_scalar_defs();
  for (Primitive* p : {&eq, &ne, &lt, &le, &gt, &ge}) p->signature = Signature::fixed(2);
  define<EqOp>(eq);
  define<NeOp>(ne);
  define<LtOp>(lt);
  define<LeOp>(le);
  define<GtOp>(gt);
  define<GeOp>(ge);
}

}  // namespace tessera::prims
