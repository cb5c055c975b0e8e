// make_jaxpr: the printed jaxprs of a dozen programs, pinned. Each text was checked by hand
// against what JAX prints for the same program (JAX's format; equation order and primitives as
// our rules produce them) and for the absence of needless operations (no transposes in
// vmapped code that does not need them, no zero-tangent arithmetic in grads).
#include <gtest/gtest.h>

#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;

ShapeDtypeStruct f32(Shape s) { return ShapeDtypeStruct{std::move(s), DType::kFloat32}; }

std::string text(const ClosedJaxpr& j) {
  verify(*j.jaxpr);
  return to_string(j);
}

#define PIN(expr, expected)        \
  do {                             \
    std::string got_ = text(expr); \
    EXPECT_EQ(got_, expected);     \
  } while (0)

TEST(MakeJaxpr, Elementwise) {
  PIN(make_jaxpr([](const Array& x) { return tnp::multiply(tnp::sin(x), 2.0); })(f32({3})),
      "{ lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[3] = mul b 2.0:f32[] in (c,) }");
}

TEST(MakeJaxpr, GradSin) {
  PIN(make_jaxpr(grad([](const Array& x) { return lax::sin(x); }))(1.0f),
      "{ lambda ; a:f32[]. let\n"
      "    b:f32[] = sin a\n"
      "    c:f32[] = cos a\n"
      "    d:f32[] = mul 1.0:f32[] c\n"
      "  in (d,) }");
}

TEST(MakeJaxpr, GradOfMeanSquare) {
  PIN(make_jaxpr(grad([](const Array& x) { return tnp::mean(tnp::multiply(x, x)); }))(f32({4})),
      "{ lambda ; a:f32[4]. let\n"
      "    b:f32[4] = mul a a\n"
      "    c:f32[] = reduce_sum[axes=(0,)] b\n"
      "    d:f32[] = div c 4.0:f32[]\n"
      "    e:f32[] = div 1.0:f32[] 4.0:f32[]\n"
      "    f:f32[4] = broadcast_in_dim[broadcast_dimensions=() shape=(4,)] e\n"
      "    g:f32[4] = mul f a\n"
      "    h:f32[4] = mul f a\n"
      "    i:f32[4] = add g h\n"
      "  in (i,) }");
}

TEST(MakeJaxpr, GradTanhDot) {
  auto f = [](const Array& w, const Array& x) { return tnp::sum(tnp::tanh(tnp::matmul(x, w))); };
  PIN(make_jaxpr(grad(f))(f32({3, 2}), f32({4, 3})),
      "{ lambda ; a:f32[3,2] b:f32[4,3]. let\n"
      "    c:f32[4,2] = dot_general[\n"
      "      dimension_numbers=(([1], [0]), ([], []))\n"
      "      preferred_element_type=float32\n"
      "    ] b a\n"
      "    d:f32[4,2] = tanh c\n"
      "    e:f32[4,2] = mul d d\n"
      "    f:f32[4,2] = sub 1.0:f32[] e\n"
      "    g:f32[] = reduce_sum[axes=(0, 1)] d\n"
      "    h:f32[4,2] = broadcast_in_dim[broadcast_dimensions=() shape=(4, 2)] 1.0:f32[]\n"
      "    i:f32[4,2] = mul h f\n"
      "    j:f32[3,2] = dot_general[dimension_numbers=(([0], [0]), ([], []))] b i\n"
      "  in (j,) }");
}

TEST(MakeJaxpr, VmapMatVec) {
  auto f = [](const Array& w, const Array& x) { return tnp::matmul(w, x); };
  PIN(make_jaxpr(vmap(f, {std::nullopt, 0}))(f32({2, 3}), f32({5, 3})),
      "{ lambda ; a:f32[2,3] b:f32[5,3]. let\n"
      "    c:f32[2,5] = dot_general[\n"
      "      dimension_numbers=(([1], [1]), ([], []))\n"
      "      preferred_element_type=float32\n"
      "    ] a b\n"
      "    d:f32[5,2] = transpose[permutation=(1, 0)] c\n"
      "  in (d,) }");
}

TEST(MakeJaxpr, VmapAddBroadcast) {
  auto f = [](const Array& a, const Array& b) { return tnp::add(a, b); };
  PIN(make_jaxpr(vmap(f, {1, std::nullopt}))(f32({3, 5}), f32({3})),
      "{ lambda ; a:f32[3,5] b:f32[3]. let\n"
      "    c:f32[3,1] = reshape[new_sizes=(3, 1)] b\n"
      "    d:f32[3,5] = add a c\n"
      "    e:f32[5,3] = transpose[permutation=(1, 0)] d\n"
      "  in (e,) }");
}

TEST(MakeJaxpr, VmapSumLastAxis) {
  auto f = [](const Array& a) { return tnp::sum(a, 0); };
  PIN(make_jaxpr(vmap(f, 1))(f32({3, 5})),
      "{ lambda ; a:f32[3,5]. let b:f32[5] = reduce_sum[axes=(0,)] a in (b,) }");
}

TEST(MakeJaxpr, JvpExp) {
  auto f = [](const Array& x, const Array& t) {
    return jvp([](const Array& v) { return tnp::exp(v); }, x, t).second;
  };
  PIN(make_jaxpr(f)(f32({2}), f32({2})),
      "{ lambda ; a:f32[2] b:f32[2]. let c:f32[2] = exp a; d:f32[2] = mul b c in (d,) }");
}

TEST(MakeJaxpr, ClosedOverConstant) {
  Array c = tnp::array({1.0, 2.0, 3.0});
  PIN(make_jaxpr([&](const Array& x) { return tnp::add(x, c); })(f32({3})),
      "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = add b a in (c,) }");
}

TEST(MakeJaxpr, StopGradient) {
  auto f = [](const Array& x) { return tnp::multiply(x, stop_gradient(x)); };
  PIN(make_jaxpr(grad(f))(1.0f),
      "{ lambda ; a:f32[]. let\n"
      "    b:f32[] = stop_gradient a\n"
      "    c:f32[] = mul a b\n"
      "    d:f32[] = mul 1.0:f32[] b\n"
      "  in (d,) }");
}

TEST(MakeJaxpr, Hessian) {
  auto f = [](const Array& x) { return tnp::sum(tnp::multiply(tnp::multiply(x, x), x)); };
  PIN(make_jaxpr(hessian(f))(f32({2})),
      "{ lambda ; a:f32[2]. let\n"
      "    b:i32[2,2] = iota[dimension=0 dtype=int32 shape=(2, 2)] \n"
      "    c:i32[2,2] = iota[dimension=1 dtype=int32 shape=(2, 2)] \n"
      "    d:bool[2,2] = eq b c\n"
      "    e:f32[2,2] = convert_element_type[new_dtype=float32 weak_type=False] d\n"
      "    f:f32[2,2] = reshape[new_sizes=(2, 2)] e\n"
      "    g:f32[2] = mul a a\n"
      "    h:f32[1,2] = reshape[new_sizes=(1, 2)] a\n"
      "    i:f32[2,2] = mul f h\n"
      "    j:f32[1,2] = reshape[new_sizes=(1, 2)] a\n"
      "    k:f32[2,2] = mul j f\n"
      "    l:f32[2,2] = add i k\n"
      "    m:f32[2] = mul g a\n"
      "    n:f32[1,2] = reshape[new_sizes=(1, 2)] a\n"
      "    o:f32[2,2] = mul l n\n"
      "    p:f32[1,2] = reshape[new_sizes=(1, 2)] g\n"
      "    q:f32[2,2] = mul p f\n"
      "    r:f32[2,2] = add o q\n"
      "    s:f32[] = reduce_sum[axes=(0,)] m\n"
      "    t:f32[2] = reduce_sum[axes=(1,)] r\n"
      "    u:i32[1,1] = iota[dimension=0 dtype=int32 shape=(1, 1)] \n"
      "    v:i32[1,1] = iota[dimension=1 dtype=int32 shape=(1, 1)] \n"
      "    w:bool[1,1] = eq u v\n"
      "    x:f32[1,1] = convert_element_type[new_dtype=float32 weak_type=False] w\n"
      "    y:f32[1] = reshape[new_sizes=(1,)] x\n"
      "    z:f32[1,2] = broadcast_in_dim[broadcast_dimensions=(0,) shape=(1, 2)] y\n"
      "    ba:f32[1,2] = reshape[new_sizes=(1, 2)] g\n"
      "    bb:f32[2,1,2] = reshape[new_sizes=(2, 1, 2)] l\n"
      "    bc:f32[1,2] = mul z ba\n"
      "    bd:f32[1,1,2] = reshape[new_sizes=(1, 1, 2)] z\n"
      "    be:f32[2,1,2] = mul bd bb\n"
      "    bf:f32[1,2] = reshape[new_sizes=(1, 2)] a\n"
      "    bg:f32[2,1,2] = reshape[new_sizes=(2, 1, 2)] f\n"
      "    bh:f32[1,2] = mul z bf\n"
      "    bi:f32[1,1,2] = reshape[new_sizes=(1, 1, 2)] z\n"
      "    bj:f32[2,1,2] = mul bi bg\n"
      "    bk:f32[1,2] = reshape[new_sizes=(1, 2)] a\n"
      "    bl:f32[2,1,2] = reshape[new_sizes=(2, 1, 2)] f\n"
      "    bm:f32[1,2] = mul bh bk\n"
      "    bn:f32[1,1,2] = reshape[new_sizes=(1, 1, 2)] bk\n"
      "    bo:f32[2,1,2] = mul bj bn\n"
      "    bp:f32[1,1,2] = reshape[new_sizes=(1, 1, 2)] bh\n"
      "    bq:f32[2,1,2] = mul bp bl\n"
      "    br:f32[2,1,2] = add bo bq\n"
      "    bs:f32[1,2] = add bc bm\n"
      "    bt:f32[2,1,2] = add be br\n"
      "    bu:f32[1,2] = reshape[new_sizes=(1, 2)] a\n"
      "    bv:f32[2,1,2] = reshape[new_sizes=(2, 1, 2)] f\n"
      "    bw:f32[1,2] = mul bh bu\n"
      "    bx:f32[1,1,2] = reshape[new_sizes=(1, 1, 2)] bu\n"
      "    by:f32[2,1,2] = mul bj bx\n"
      "    bz:f32[1,1,2] = reshape[new_sizes=(1, 1, 2)] bh\n"
      "    ca:f32[2,1,2] = mul bz bv\n"
      "    cb:f32[2,1,2] = add by ca\n"
      "    cc:f32[1,2] = add bs bw\n"
      "    cd:f32[2,1,2] = add bt cb\n"
      "    ce:f32[2] = reshape[new_sizes=(2,)] cc\n"
      "    cf:f32[2,2] = reshape[new_sizes=(2, 2)] cd\n"
      "    cg:f32[2,2] = transpose[permutation=(1, 0)] cf\n"
      "    ch:f32[2,2] = reshape[new_sizes=(2, 2)] cg\n"
      "  in (ch,) }");
}

TEST(MakeJaxpr, PerExampleGrads) {
  auto loss = [](const Array& w, const Array& x) { return tnp::sum(tnp::tanh(tnp::matmul(w, x))); };
  PIN(make_jaxpr(vmap(grad(loss), {std::nullopt, 0}))(f32({2, 3}), f32({4, 3})),
      "{ lambda ; a:f32[2,3] b:f32[4,3]. let\n"
      "    c:f32[2,4] = dot_general[\n"
      "      dimension_numbers=(([1], [1]), ([], []))\n"
      "      preferred_element_type=float32\n"
      "    ] a b\n"
      "    d:f32[2,4] = tanh c\n"
      "    e:f32[2,4] = mul d d\n"
      "    f:f32[2,4] = sub 1.0:f32[] e\n"
      "    g:f32[4] = reduce_sum[axes=(0,)] d\n"
      "    h:f32[2] = broadcast_in_dim[broadcast_dimensions=() shape=(2,)] 1.0:f32[]\n"
      "    i:f32[2,1] = reshape[new_sizes=(2, 1)] h\n"
      "    j:f32[2,4] = mul i f\n"
      "    k:f32[4,2,3] = dot_general[dimension_numbers=(([], []), ([1], [0]))] j b\n"
      "  in (k,) }");
}

TEST(MakeJaxpr, IntegerAndMultipleOutputs) {
  auto f = [](const Array& x, const Array& i) {
    return std::make_tuple(tnp::add(x, 1.0), tnp::multiply(i, 2), x);
  };
  PIN(make_jaxpr(f)(f32({2}), ShapeDtypeStruct{{}, DType::kInt32}),
      "{ lambda ; a:f32[2] b:i32[]. let\n"
      "    c:i32[] = mul b 2:i32[]\n"
      "    d:f32[2] = add a 1.0:f32[]\n"
      "  in (d, c, a) }");
}

}  // namespace
}  // namespace tessera
