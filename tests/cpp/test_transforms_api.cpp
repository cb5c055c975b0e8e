// The public transformation API (transforms.h): each function and option on closed forms.
#include <gtest/gtest.h>

#include <cmath>

#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;
using testing::random_array;
using testing::to_doubles;

double scalar(const Array& a) { return a.item<double>(); }

TEST(Grad, SinClosedForm) {
  Array x = random_array({}, DType::kFloat32);
  Array g = grad([](const Array& v) { return lax::sin(v); })(x);
  EXPECT_NEAR(scalar(g), std::cos(scalar(x)), 1e-6);
  Array gg = grad(grad([](const Array& v) { return lax::sin(v); }))(x);
  EXPECT_NEAR(scalar(gg), -std::sin(scalar(x)), 1e-6);
}

TEST(Grad, PerturbationConfusion) {
  // d/dx [x * d/dy (x + y)] at y = 1 is 1.
  auto f = [](const Array& x) {
    auto inner = [&](const Array& y) { return lax::add(x, y); };
    return lax::mul(x, grad(inner)(tnp::asarray(1.0f)));
  };
  Array x = tnp::asarray(3.0f);
  EXPECT_EQ(scalar(grad(f)(x)), 1.0);
}

TEST(Vmap, AddOne) {
  Array x = random_array({5, 3}, DType::kFloat32);
  Array y = vmap([](const Array& r) { return tnp::sum(lax::mul(r, r)); })(x);
  ASSERT_EQ(y.shape(), (Shape{5}));
  auto xv = to_doubles(x);
  auto yv = to_doubles(y);
  for (int i = 0; i < 5; ++i) {
    double s = 0;
    for (int j = 0; j < 3; ++j) s += xv[i * 3 + j] * xv[i * 3 + j];
    EXPECT_NEAR(yv[i], s, 1e-5);
  }
}

TEST(MakeJaxpr, Prints) {
  Array x = random_array({3}, DType::kFloat32);
  ClosedJaxpr j = make_jaxpr([](const Array& v) { return lax::sin(lax::mul(v, v)); })(x);
  EXPECT_EQ(to_string(j),
            "{ lambda ; a:f32[3]. let b:f32[3] = mul a a; c:f32[3] = sin b in (c,) }");
}

}  // namespace
}  // namespace tessera
