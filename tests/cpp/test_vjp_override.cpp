// The VJP-override hook (DESIGN §1): a primitive may give linearize a VJP of its own, which
// reverse mode then uses instead of transposing its JVP. Exercised here by an internal
// primitive, clip_gradient: the identity forward, whose backward clamps the cotangent to
// [-1, 1] (a rule no JVP could produce). custom_vjp and checkpoint build on this in #6.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;
using testing::compare;
using testing::random_array;
using testing::to_doubles;

Array clamp_unit(const Array& ct) {
  Array one = lax::convert_element_type(tnp::ones({}), ct.dtype());
  return lax::max(lax::min(ct, one), lax::neg(one));
}

Primitive& clip_gradient(bool with_jvp) {
  static Primitive with("test_clip_gradient");
  static Primitive without("test_clip_gradient_vjp_only");
  static bool ready = [] {
    for (Primitive* p : {&with, &without}) {
      p->abstract_eval = [](std::span<const Aval> in, const Params&) {
        return std::vector<Aval>{in[0]};
      };
      p->impl = [](const ExecContext&, std::span<const Array> args, const Params&,
                   std::span<const Aval>) { return std::vector<Array>{args[0]}; };
      p->vjp_override = [](std::span<const Array> primals, const Params&) {
        VjpBwdFn bwd = [](std::span<const Array>, std::span<const Array> cts) {
          return std::vector<Array>{clamp_unit(cts[0])};
        };
        return VjpOverride{std::vector<Array>{primals[0]}, {}, bwd};
      };
      Primitive* self = p;
      p->batch = [self](const BatchAxis&, std::span<const Array> args,
                        std::span<const int64_t> dims, const Params& params) {
        return std::make_pair(tessera::bind(*self, args, params), std::vector<int64_t>{dims[0]});
      };
      register_primitive(*p);
    }
    with.jvp = [](std::span<const Array> primals, std::span<const Array> tangents, const Params&) {
      return std::make_pair(std::vector<Array>{primals[0]}, std::vector<Array>{tangents[0]});
    };
    return true;
  }();
  (void)ready;
  return with_jvp ? with : without;
}

Array clip(const Array& x, bool with_jvp = true) { return bind1(clip_gradient(with_jvp), {x}); }

#define EXPECT_CLOSE(got, want, tol) \
  EXPECT_EQ(compare(to_doubles(got), to_doubles(want), tol, tol), "")

TEST(VjpOverride, ReverseModeUsesTheOverride) {
  Array x = random_array({6}, DType::kFloat32);
  auto f = [](const Array& v) { return tnp::sum(tnp::multiply(clip(v), 5.0)); };
  EXPECT_CLOSE(f(x), tnp::multiply(tnp::sum(x), 5.0), 1e-5);
  // The true derivative is 5; the override clamps the cotangent 5 to 1.
  EXPECT_CLOSE(grad(f)(x), tnp::ones({6}), 0);
  auto [y, f_vjp] = vjp([](const Array& v) { return clip(v); }, x);
  Array u = random_array({6}, DType::kFloat32, -3, 3);
  auto [c] = f_vjp(u);
  std::vector<double> want = to_doubles(u);
  for (double& w : want) w = std::clamp(w, -1.0, 1.0);
  EXPECT_EQ(compare(to_doubles(c), want, 0, 0), "");
}

TEST(VjpOverride, ForwardModeUsesTheJvpRule) {
  Array x = random_array({6}, DType::kFloat32);
  auto f = [](const Array& v) { return tnp::multiply(clip(v), 5.0); };
  EXPECT_CLOSE(jvp(f, x, tnp::ones({6})).second, tnp::full({6}, 5.0), 0);
  // Without a JVP rule, forward mode says so; reverse mode still works.
  auto g = [](const Array& v) { return tnp::multiply(clip(v, false), 5.0); };
  EXPECT_ERROR(TypeError, jvp(g, x, tnp::ones({6})),
               "differentiation rule for 'test_clip_gradient_vjp_only'");
  EXPECT_CLOSE(grad([&](const Array& v) { return tnp::sum(g(v)); })(x), tnp::ones({6}), 0);
  // The linearized tangent map of an override cannot be evaluated forward (JAX's custom_vjp
  // under linearize): the error names the primitive.
  auto [y, f_jvp] = linearize(g, x);
  EXPECT_ERROR(TypeError, f_jvp(tnp::ones({6})), "test_clip_gradient_vjp_only");
}

TEST(VjpOverride, ComposesWithVmapAndHigherOrder) {
  Array xs = random_array({4, 3}, DType::kFloat32);
  auto f = [](const Array& v) { return tnp::sum(tnp::multiply(clip(v), 5.0)); };
  EXPECT_CLOSE(vmap(grad(f))(xs), tnp::ones({4, 3}), 0);
  // d/dx sum(clip(x)^2) = clamp(2x); differentiating again goes through the backward rule:
  // d/dx clamp(2x) = 2 inside (-1/2, 1/2), 0 outside.
  auto sq = [](const Array& v) {
    Array c = clip(v);
    return tnp::sum(tnp::multiply(c, c));
  };
  Array x = random_array({8}, DType::kFloat32, -1, 1);
  auto g1 = grad(sq);
  Array g2 = grad([&](const Array& v) { return tnp::sum(g1(v)); })(x);
  std::vector<double> xv = to_doubles(x), want;
  for (double v : xv) want.push_back(std::abs(2 * v) < 1 ? 2.0 : 0.0);
  EXPECT_EQ(compare(to_doubles(g2), want, 0, 0), "");
  // Staged, the override's backward is inlined: no custom_lin survives in grad's jaxpr.
  std::string text = to_string(make_jaxpr(grad(f))(x));
  EXPECT_EQ(text.find("custom_lin"), std::string::npos) << text;
  EXPECT_NE(text.find("min"), std::string::npos) << text;
}

}  // namespace
}  // namespace tessera
