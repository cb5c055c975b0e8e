// Placement with JAX's semantics on four virtual CPU devices (ctest runs this binary with
// TESSERA_NUM_CPU_DEVICES=4): device_put commits; arrays made without a device are uncommitted and
// follow committed operands; outputs of every primitive family are allocated on the inputs'
// device (Buffer::device() and per-device memory_stats) without the eval trace having to move
// them; arrays committed to different devices raise JAX's error naming both. Values are compared
// with the same computation on uncommitted default-device inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tessera/checkpoint.h"
#include "tessera/custom_derivatives.h"
#include "tessera/debug.h"
#include "tessera/lax_cond.h"
#include "tessera/lax_scan.h"
#include "tessera/numpy_cumulative.h"
#include "tessera/sharding.h"
#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;
using testing::random_array;
using testing::to_doubles;

constexpr int kDev = 2;  // the device the committed inputs live on

#define REQUIRE_FOUR_DEVICES()                                                         \
  if (devices().size() < 4)                                                            \
  GTEST_SKIP() << "needs TESSERA_NUM_CPU_DEVICES=4 (ctest sets it); this process has " \
               << devices().size()

struct Case {
  std::string name;
  std::vector<Array> inputs;  // uncommitted, on the default device
  std::function<std::vector<Array>(const std::vector<Array>&)> fn;
};

std::vector<Array> one(Array a) { return {std::move(a)}; }

std::vector<Case> family_cases() {
  const DType f = DType::kFloat32, i = DType::kInt32;
  Array x = random_array({3, 4}, f, 0.5, 2.0), y = random_array({3, 4}, f, 0.5, 2.0);
  Array row = random_array({4}, f), n = random_array({3, 4}, i);
  Array m = random_array({4, 5}, f), bm = random_array({2, 3, 4}, f),
        bn = random_array({2, 4, 2}, f);
  Array u = random_array({6}, f, 0.1, 0.9);
  Array idx = tnp::scalar(1, i), pred = tnp::scalar(1, DType::kBool);
  return {
      // elementwise: unary, binary (broadcasting), compare, select, convert, special, bitwise
      {"exp", {x}, [](auto& a) { return one(lax::exp(a[0])); }},
      {"add_broadcast", {x, row}, [](auto& a) { return one(tnp::add(a[0], a[1])); }},
      {"scalar_mul", {x}, [](auto& a) { return one(a[0] * 2.0); }},
      {"lt", {x, y}, [](auto& a) { return one(lax::lt(a[0], a[1])); }},
      {"select_n",
       {x, y},
       [](auto& a) {
         return one(lax::select_n(lax::lt(a[0], a[1]), {a[0], a[1]}));
       }},
      {"convert",
       {x},
       [](auto& a) { return one(lax::convert_element_type(a[0], DType::kFloat16)); }},
      {"integer_pow", {x}, [](auto& a) { return one(lax::integer_pow(a[0], 3)); }},
      {"clamp", {x, y}, [](auto& a) { return one(lax::clamp(a[1] * 0.5, a[0], a[1])); }},
      {"lgamma", {x}, [](auto& a) { return one(lax::lgamma(a[0])); }},
      {"betainc", {u}, [](auto& a) { return one(lax::betainc(a[0] + 1.0, a[0] * 2.0, a[0])); }},
      {"round", {x}, [](auto& a) { return one(lax::round(a[0])); }},
      {"is_finite", {x}, [](auto& a) { return one(lax::is_finite(a[0])); }},
      {"bitwise_not", {n}, [](auto& a) { return one(lax::bitwise_not(a[0])); }},
      {"shift_left", {n}, [](auto& a) { return one(lax::shift_left(a[0], a[0])); }},
      {"bitcast", {x}, [](auto& a) { return one(lax::bitcast_convert_type(a[0], DType::kInt32)); }},
      {"reduce_precision", {x}, [](auto& a) { return one(lax::reduce_precision(a[0], 5, 10)); }},
      // index maps
      {"broadcast_in_dim",
       {row},
       [](auto& a) {
         return one(lax::broadcast_in_dim(a[0], {3, 4}, {1}));
       }},
      {"reshape",
       {x},
       [](auto& a) {
         return one(lax::reshape(a[0], {4, 3}));
       }},
      {"transpose",
       {x},
       [](auto& a) {
         return one(lax::transpose(a[0], {1, 0}));
       }},
      {"slice",
       {x},
       [](auto& a) {
         return one(lax::slice(a[0], {1, 0}, {3, 3}));
       }},
      {"dynamic_slice",
       {x, idx},
       [](auto& a) {
         return one(lax::dynamic_slice(a[0], {a[1], a[1]}, {2, 2}));
       }},
      {"dynamic_update_slice",
       {x, idx},
       [](auto& a) {
         return one(
             lax::dynamic_update_slice(a[0], lax::slice(a[0], {0, 0}, {1, 2}), {a[1], a[1]}));
       }},
      {"concatenate",
       {x, y},
       [](auto& a) {
         return one(lax::concatenate({a[0], a[1]}, 0));
       }},
      {"pad",
       {x},
       [](auto& a) {
         return one(tnp::pad(a[0], tnp::PadWidth{{1, 2}, {0, 1}}));
       }},
      {"rev", {x}, [](auto& a) { return one(lax::rev(a[0], {0})); }},
      {"squeeze",
       {row},
       [](auto& a) {
         return one(lax::squeeze(lax::reshape(a[0], {1, 4}), {0}));
       }},
      // reductions and scans
      {"reduce_sum", {x}, [](auto& a) { return one(lax::reduce_sum(a[0], {1})); }},
      {"reduce_max",
       {x},
       [](auto& a) {
         return one(lax::reduce_max(a[0], {0, 1}));
       }},
      {"argmax", {x}, [](auto& a) { return one(lax::argmax(a[0], 1, DType::kInt32)); }},
      {"cumsum", {x}, [](auto& a) { return one(tnp::cumsum(a[0], 1)); }},
      {"mean_var",
       {x},
       [](auto& a) {
         return std::vector<Array>{tnp::mean(a[0]), tnp::var(a[0])};
       }},
      // contraction (float, integer with preferred type, batched)
      {"matmul", {x, m}, [](auto& a) { return one(tnp::matmul(a[0], a[1])); }},
      {"int_dot",
       {n},
       [](auto& a) {
         return one(lax::dot(a[0], lax::transpose(a[0], {1, 0}), DType::kFloat32));
       }},
      {"batched_dot", {bm, bn}, [](auto& a) { return one(tnp::matmul(a[0], a[1])); }},
      // control flow
      {"scan",
       {x},
       [](auto& a) {
         auto [c, ys] = lax::scan(
             [](const Array& c, const Array& r) { return std::make_pair(c + r, c * 2.0); },
             tnp::zeros({4}), a[0]);
         return std::vector<Array>{c, ys};
       }},
      {"cond",
       {x, pred},
       [](auto& a) {
         return one(lax::cond(
             a[1], [](const Array& v) { return v * 2.0; }, [](const Array& v) { return v - 1.0; },
             a[0]));
       }},
      {"fori_loop",
       {x},
       [](auto& a) {
         return one(lax::fori_loop(
             0, 3, [](const Array&, const Array& c) { return c * 1.5; }, a[0]));
       }},
      {"checkpoint",
       {x},
       [](auto& a) {
         return flat::checkpoint(
             [](std::span<const Array> v) { return std::vector<Array>{tnp::sin(v[0]) * v[0]}; },
             std::span<const Array>(a.data(), 1));
       }},
      {"while_loop",
       {x},
       [](auto& a) {
         auto [k, v] =
             lax::while_loop([](const auto& c) { return std::get<0>(c) < 3; },
                             [](const auto& c) {
                               return std::make_tuple(std::get<0>(c) + 1, std::get<1>(c) * 1.5);
                             },
                             std::make_tuple(tnp::scalar(0, DType::kInt32), a[0]));
         return std::vector<Array>{k, v};
       }},
      {"reduce",
       {x},
       [](auto& a) {
         return one(lax::reduce(a[0], tnp::scalar(0.0, DType::kFloat32),
                                [](const Array& p, const Array& q) { return lax::max(p, q); },
                                {1}));
       }},
      {"custom_jvp",
       {x},
       [](auto& a) {
         auto f = custom_jvp([](const Array& v) {
                    return tnp::sin(v);
                  }).defjvp([](auto primals, auto tangents) {
           auto [v] = primals;
           auto [t] = tangents;
           return std::make_pair(tnp::sin(v), t * tnp::cos(v));
         });
         return std::vector<Array>{f(a[0]),
                                   grad([&](const Array& v) { return tnp::sum(f(v)); })(a[0])};
       }},
      {"custom_vjp",
       {x},
       [](auto& a) {
         auto f = custom_vjp([](const Array& v) { return v * v; })
                      .defvjp([](const Array& v) { return std::make_pair(v * v, v); },
                              [](const Array& res, const Array& ct) {
                                return std::make_tuple(ct * res * 2.0);
                              });
         return std::vector<Array>{f(a[0]),
                                   grad([&](const Array& v) { return tnp::sum(f(v)); })(a[0])};
       }},
      {"grad",
       {x},
       [](auto& a) {
         return one(grad([](const Array& v) { return tnp::sum(tnp::tanh(v) * v); })(a[0]));
       }},
      {"vmap",
       {x, m},
       [](auto& a) {
         return one(vmap([](const Array& r, const Array& w) { return tnp::matmul(r, w); },
                         {0, std::nullopt})(a[0], a[1]));
       }},
      {"pure_callback",
       {x},
       [](auto& a) {
         return flat::pure_callback(
             [](std::span<const Array> v) {
               return std::vector<Array>{
                   tnp::array(to_doubles(v[0]), v[0].shape(), DType::kFloat32)};
             },
             {a[0].aval()}, std::span<const Array>(a.data(), 1));
       }},
  };
}

TEST(Placement, EveryFamilyAllocatesOnTheInputsDevice) {
  REQUIRE_FOUR_DEVICES();
  Device* dev = devices()[kDev];
  for (const Case& c : family_cases()) {
    SCOPED_TRACE(c.name);
    std::vector<Array> want = c.fn(c.inputs);
    std::vector<Array> put;
    for (const Array& a : c.inputs) put.push_back(device_put(a, dev));
    const int64_t fix0 = placement_fixups();
    const int64_t on0 = memory_stats(devices()[0]).bytes_in_use;
    const int64_t on_dev = memory_stats(dev).bytes_in_use;
    std::vector<Array> got = c.fn(put);
    EXPECT_EQ(placement_fixups(), fix0) << "a rule allocated an output off its device";
    ASSERT_EQ(got.size(), want.size());
    int64_t bytes = 0;  // of the outputs with buffers of their own (not an input's)
    for (size_t k = 0; k < got.size(); ++k) {
      EXPECT_EQ(got[k].device(), dev) << "output " << k;
      EXPECT_EQ(got[k].buffer()->device(), dev);
      EXPECT_TRUE(got[k].committed()) << "output " << k;
      EXPECT_EQ(got[k].aval(), want[k].aval());
      EXPECT_EQ(to_doubles(got[k]), to_doubles(want[k])) << "output " << k;
      bool shared = false;
      for (const Array& a : put) shared |= a.buffer() == got[k].buffer();
      if (!shared) bytes += static_cast<int64_t>(got[k].nbytes());
    }
    // The outputs are held: what the op allocated and kept is on `dev`; cpu:0 holds nothing new
    // (temporaries such as uncommitted constants moved to `dev` are freed by now).
    EXPECT_EQ(memory_stats(devices()[0]).bytes_in_use, on0);
    EXPECT_GE(memory_stats(dev).bytes_in_use - on_dev, bytes);
  }
}

TEST(Placement, UncommittedArraysStayUncommittedOnTheDefaultDevice) {
  REQUIRE_FOUR_DEVICES();
  for (const Case& c : family_cases()) {
    SCOPED_TRACE(c.name);
    for (const Array& o : c.fn(c.inputs)) {
      EXPECT_EQ(o.device(), default_device());
      EXPECT_FALSE(o.committed());
    }
  }
  Array z = tnp::zeros({3});
  EXPECT_FALSE(z.committed());
  EXPECT_EQ(&z.sharding(), &single_device_sharding(default_device()));
}

TEST(Placement, UncommittedOperandsFollowCommittedOnes) {
  REQUIRE_FOUR_DEVICES();
  Device* d1 = devices()[1];
  Array a = random_array({5}, DType::kFloat32), b = random_array({5}, DType::kFloat32);
  Array a1 = device_put(a, d1);
  for (const Array& r :
       {tnp::add(a1, b), tnp::add(b, a1), lax::select_n(lax::lt(b, a1), {b, a1})}) {
    EXPECT_EQ(r.device(), d1);
    EXPECT_TRUE(r.committed());
    EXPECT_EQ(to_doubles(r).size(), 5u);
  }
  EXPECT_EQ(to_doubles(tnp::add(a1, b)), to_doubles(tnp::add(a, b)));
  // The uncommitted operand itself is unchanged by taking part.
  EXPECT_EQ(b.device(), default_device());
  EXPECT_FALSE(b.committed());
  // A pass-through op returning the committed input keeps it committed; one returning an
  // uncommitted input's buffer on the committed device does not change that input.
  Array same = lax::convert_element_type(b, DType::kFloat32);
  EXPECT_FALSE(same.committed());
}

TEST(Placement, MixingCommittedDevicesRaisesNamingBoth) {
  REQUIRE_FOUR_DEVICES();
  Array a = device_put(random_array({2, 3}, DType::kFloat32), devices()[1]);
  Array b = device_put(random_array({2, 3}, DType::kFloat32), devices()[3]);
  try {
    (void)tnp::add(a, b);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("[add]"), std::string::npos) << m;
    EXPECT_NE(m.find("incompatible devices"), std::string::npos) << m;
    EXPECT_NE(m.find("cpu:1"), std::string::npos) << m;
    EXPECT_NE(m.find("cpu:3"), std::string::npos) << m;
    EXPECT_NE(m.find("f32[2,3]"), std::string::npos) << m;
    EXPECT_NE(m.find("device_put"), std::string::npos) << m;
  }
  // device_put moves it; then the op runs there.
  Array r = tnp::add(device_put(a, devices()[3]), b);
  EXPECT_EQ(r.device(), devices()[3]);
}

TEST(Placement, DevicePutCommitsCopiesAcrossDevicesAndSharesOnTheSame) {
  REQUIRE_FOUR_DEVICES();
  Array a = random_array({16}, DType::kFloat32);
  const int64_t before = memory_stats(devices()[3]).bytes_in_use;
  Array b = device_put(a, devices()[3]);
  EXPECT_TRUE(b.committed());
  EXPECT_EQ(b.device(), devices()[3]);
  EXPECT_NE(b.raw_data(), a.raw_data());
  EXPECT_EQ(memory_stats(devices()[3]).bytes_in_use - before, 64);
  EXPECT_EQ(to_doubles(b), to_doubles(a));
  Array c = device_put(b, devices()[3]);
  EXPECT_EQ(c.raw_data(), b.raw_data());  // same device: the buffer is shared
  EXPECT_TRUE(c.committed());
  Array d = device_put(b, nullptr);  // no device: uncommitted on the default device
  EXPECT_FALSE(d.committed());
  EXPECT_EQ(d.device(), default_device());
  EXPECT_EQ(&b.sharding(), &single_device_sharding(devices()[3]));
  EXPECT_EQ(b.sharding().repr(),
            "SingleDeviceSharding(device=CpuDevice(id=3), memory_kind=device)");
  EXPECT_EQ(b.sharding().num_devices(), 1);
  EXPECT_TRUE(b.sharding().is_fully_replicated());
}

TEST(Placement, TransformationsKeepTheInputsDevice) {
  REQUIRE_FOUR_DEVICES();
  Device* dev = devices()[3];
  Array x = device_put(random_array({4}, DType::kFloat32), dev);
  auto f = [](const Array& v) { return tnp::sum(tnp::sin(v) * v); };
  Array g = grad(f)(x);
  EXPECT_EQ(g.device(), dev);
  EXPECT_TRUE(g.committed());
  auto [y, t] = jvp(f, std::make_tuple(x), std::make_tuple(tnp::ones({4})));
  EXPECT_EQ(y.device(), dev);
  EXPECT_EQ(t.device(), dev);
  Array v = vmap([](const Array& r) { return tnp::sum(r * r); })(lax::reshape(x, {2, 2}));
  EXPECT_EQ(v.device(), dev);
}

TEST(Placement, ExecContextAndBatchAxisReachTheRules) {
  REQUIRE_FOUR_DEVICES();
  // A primitive of the test's own: the impl records its context's device, the batching rule the
  // axis it maps over, the abstract eval the axis names in scope.
  static Primitive probe("placement_probe");
  static Device* seen_device = nullptr;
  static BatchAxis seen_axis;
  static std::string seen_name;
  static std::vector<std::string> env_names;
  probe.kind = PrimitiveKind::kElementwise;
  probe.scalar.exemption = "a test probe";
  probe.signature = Signature::fixed(1);
  probe.abstract_eval = [](std::span<const Aval> in, const Params&) {
    env_names.clear();
    for (const AxisEntry& e : axis_env())
      env_names.push_back(e.name + ":" + std::to_string(e.size));
    return std::vector<Aval>{in[0]};
  };
  probe.impl = [](const ExecContext& ctx, std::span<const Array> args, const Params&,
                  std::span<const Aval> out) {
    seen_device = ctx.device;
    Array o = empty_array(out[0], "placement_probe", ctx.device);
    std::memcpy(o.buffer()->data(), args[0].raw_data(), args[0].nbytes());
    return std::vector<Array>{o};
  };
  probe.batch = [](const BatchAxis& axis, std::span<const Array> args,
                   std::span<const int64_t> dims, const Params& p) {
    seen_axis.size = axis.size;
    seen_name = std::string(axis.name);
    return std::make_pair(tessera::bind(probe, args, p),
                          std::vector<int64_t>(dims.begin(), dims.end()));
  };
  Array x = device_put(random_array({3, 2}, DType::kFloat32), devices()[1]);
  Array y = bind1(probe, {x});
  EXPECT_EQ(seen_device, devices()[1]);
  EXPECT_EQ(y.device(), devices()[1]);
  VmapOptions o;
  o.axis_name = "rows";
  (void)vmap([](const Array& r) { return bind1(probe, {r}); }, 0, 0, o)(x);
  EXPECT_EQ(seen_axis.size, 3);
  EXPECT_EQ(seen_name, "rows");
  EXPECT_EQ(env_names, std::vector<std::string>{"rows:3"});
  EXPECT_TRUE(axis_env().empty());  // the scope ended with vmap
  (void)vmap([](const Array& r) { return bind1(probe, {r}); })(x);
  EXPECT_EQ(seen_name, "");
  EXPECT_TRUE(env_names.empty());
}

}  // namespace
}  // namespace tessera
