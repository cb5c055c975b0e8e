// Core: allocator, devices, thread pool, params, registry, bind, trace context, Array basics.
#include <gtest/gtest.h>

#include <atomic>
#include <numeric>
#include <thread>

#include "core/allocator.h"
#include "runtime/thread_pool.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::random_array;
using testing::to_doubles;

TEST(Allocator, SizeClassesBoundWaste) {
  for (size_t n : {1ul, 63ul, 64ul, 65ul, 257ul, 1000ul, 4096ul, 4097ul, 100000ul, 123456789ul}) {
    size_t c = CachingCpuAllocator::size_class(n);
    EXPECT_GE(c, n);
    EXPECT_EQ(c % 64, 0u) << n;
    if (n > 256) {
      EXPECT_LE(c, n + n / 4 + 64) << n;
    }
  }
}

TEST(Allocator, ReusesFreedBlocks) {
  Device* d = default_device();
  MemoryStats before = d->memory_stats();
  const void* first;
  {
    Array a = empty_array(Aval{{1 << 20}, DType::kFloat32, false}, "test");
    first = a.raw_data();
    EXPECT_GE(d->memory_stats().bytes_in_use, before.bytes_in_use + (4 << 20));
  }
  MemoryStats mid = d->memory_stats();
  EXPECT_EQ(mid.bytes_in_use, before.bytes_in_use);
  Array b = empty_array(Aval{{1 << 20}, DType::kFloat32, false}, "test");
  EXPECT_EQ(b.raw_data(), first);  // served from the cache: no fresh pages
  EXPECT_EQ(d->memory_stats().num_cache_hits, mid.num_cache_hits + 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.raw_data()) % 64, 0u);
}

TEST(Allocator, MemoryLimitRaisesClearError) {
  Device* d = default_device();
  int64_t in_use = d->memory_stats().bytes_in_use;
  d->set_memory_limit(in_use + (1 << 20));
  try {
    Array big = empty_array(Aval{{1 << 22}, DType::kFloat32, false}, "my_op");
    d->set_memory_limit(0);
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    d->set_memory_limit(0);
    std::string m = e.what();
    EXPECT_NE(m.find("[my_op]"), std::string::npos) << m;
    EXPECT_NE(m.find("16.00 MiB"), std::string::npos) << m;
    EXPECT_NE(m.find("cpu:0"), std::string::npos) << m;
    EXPECT_NE(m.find("limit"), std::string::npos) << m;
  }
  // The allocator is still usable after the error.
  Array ok = empty_array(Aval{{16}, DType::kFloat32, false}, "test");
  EXPECT_EQ(ok.size(), 16);
}

TEST(Device, NamesAndStats) {
  ASSERT_FALSE(devices().empty());
  EXPECT_EQ(default_device()->str(), "cpu:0");
  EXPECT_EQ(default_device()->repr(), "CpuDevice(id=0)");
  EXPECT_THROW(cpu_device(100000), ValueError);
  Array a = empty_array(Aval{{3}, DType::kFloat32, false}, "test");
  EXPECT_EQ(a.device(), default_device());
}

TEST(ThreadPool, CoversRangeOnceInFixedChunks) {
  const int64_t n = 1000003;
  std::vector<std::atomic<int>> hits(n);
  runtime::parallel_for(n, 4096, [&](int64_t b, int64_t e) {
    EXPECT_EQ(b % 4096, 0);
    EXPECT_TRUE(e == n || e - b == 4096);
    for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
  });
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << i;
}

TEST(ThreadPool, ResultsIndependentOfThreadCount) {
  std::vector<float> x(3000000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 2654435761u) % 1000) / 7.f;
  auto chunked_sum = [&] {
    const int64_t grain = 1 << 16;
    int64_t chunks = (static_cast<int64_t>(x.size()) + grain - 1) / grain;
    std::vector<float> partial(chunks);
    runtime::parallel_for(static_cast<int64_t>(x.size()), grain, [&](int64_t b, int64_t e) {
      float s = 0;
      for (int64_t i = b; i < e; ++i) s += x[i];
      partial[b / grain] = s;
    });
    return std::accumulate(partial.begin(), partial.end(), 0.0f);
  };
  int before = runtime::num_threads();
  runtime::set_num_threads(1);
  float one = chunked_sum();
  runtime::set_num_threads(2);
  float two = chunked_sum();
  runtime::set_num_threads(before);
  EXPECT_EQ(one, two);
}

TEST(ThreadPool, PropagatesExceptionsAndNests) {
  EXPECT_THROW(runtime::parallel_for(1 << 20, 1 << 10,
                                     [](int64_t b, int64_t) {
                                       if (b == (1 << 19)) throw ValueError("boom");
                                     }),
               ValueError);
  std::atomic<int64_t> total{0};
  runtime::parallel_for(8, 1, [&](int64_t, int64_t) {
    EXPECT_TRUE(runtime::in_parallel_region());
    runtime::parallel_for(100, 10, [&](int64_t b, int64_t e) { total += e - b; });
  });
  EXPECT_EQ(total.load(), 800);
  EXPECT_FALSE(runtime::in_parallel_region());
}

TEST(ThreadPool, ConcurrentCallersFromUserThreads) {
  std::atomic<int64_t> total{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&] {
      for (int r = 0; r < 50; ++r)
        runtime::parallel_for(1 << 16, 1 << 12, [&](int64_t b, int64_t e) { total += e - b; });
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(total.load(), int64_t{4} * 50 * (1 << 16));
}

TEST(Params, HashAndEquality) {
  Params a{{"axes", std::vector<int64_t>{0, 2}}, {"new_dtype", DType::kFloat16}};
  Params b;
  b.set("axes", std::vector<int64_t>{0, 2}).set("new_dtype", DType::kFloat16);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.hash(), b.hash());
  Params c = a;
  c.set("axes", std::vector<int64_t>{0, 1});
  EXPECT_FALSE(a == c);
  EXPECT_NE(a.hash(), c.hash());
  EXPECT_EQ(a.str(), "axes=(0, 2) new_dtype=float16");
  EXPECT_EQ(a.get_ints("axes"), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(a.get_optional_dtype("preferred_element_type"), std::nullopt);
  EXPECT_THROW(a.get_int("axes"), InternalError);
}

TEST(Registry, KnowsTheFirstPrimitives) {
  for (const char* name : {"add",
                           "sub",
                           "mul",
                           "div",
                           "neg",
                           "max",
                           "min",
                           "exp",
                           "log",
                           "sin",
                           "cos",
                           "tanh",
                           "logistic",
                           "sqrt",
                           "pow",
                           "integer_pow",
                           "eq",
                           "ne",
                           "lt",
                           "le",
                           "gt",
                           "ge",
                           "select_n",
                           "convert_element_type",
                           "broadcast_in_dim",
                           "reshape",
                           "transpose",
                           "reduce_sum",
                           "reduce_max",
                           "iota",
                           "dot_general"}) {
    Primitive* p = find_primitive(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_TRUE(p->abstract_eval && p->impl) << name;
  }
  EXPECT_EQ(find_primitive("no_such_primitive"), nullptr);
}

// A minimal tracer/trace pair to check the context rules that transformations rely on.
class FakeTracer : public Tracer {
 public:
  FakeTracer(Aval a, uint64_t tag) : aval_(std::move(a)), tag_(tag) {}
  const Aval& aval() const override { return aval_; }
  uint64_t trace_tag() const override { return tag_; }
  std::string str() const override { return "FakeTracer(" + aval_.str() + ")"; }

 private:
  Aval aval_;
  uint64_t tag_;
};

class CountingTrace : public Trace {
 public:
  CountingTrace() : Trace(current_trace()) {}
  std::vector<Array> process_primitive(const Primitive& p, std::span<const Array> args,
                                       const Params& params) override {
    ++count;
    if (p.name() == "sin") throw ValueError("[sin] refused by the test trace");
    TraceScope up(parent());
    return bind(p, args, params);
  }
  int count = 0;
};

TEST(Trace, BindGoesToCurrentTraceAndContextIsRestored) {
  Array x = random_array({4}, DType::kFloat32);
  Trace* bottom = current_trace();
  CountingTrace t;
  EXPECT_NE(t.tag(), bottom->tag());
  {
    TraceScope scope(&t);
    Array y = lax::add(x, x);
    EXPECT_EQ(t.count, 1);
    EXPECT_THROW(lax::sin(x), ValueError);
    EXPECT_EQ(current_trace(), &t);
  }
  EXPECT_EQ(current_trace(), bottom);
  try {
    TraceScope scope(&t);
    throw std::runtime_error("unwind");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(current_trace(), bottom);
}

TEST(Trace, LeakedTracerRaisesAtTheBottom) {
  Array leaked(std::make_shared<FakeTracer>(Aval{{3}, DType::kFloat32, false}, 12345));
  EXPECT_TRUE(leaked.is_tracer());
  try {
    lax::neg(leaked);
    FAIL();
  } catch (const UnexpectedTracerError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("[neg]"), std::string::npos) << m;
    EXPECT_NE(m.find("FakeTracer(f32[3])"), std::string::npos) << m;
  }
  EXPECT_THROW((void)static_cast<bool>(leaked), ConcretizationError);
  EXPECT_THROW(leaked.raw_data(), ConcretizationError);
  try {
    (void)leaked.item<float>();
  } catch (const ConcretizationError& e) {
    EXPECT_NE(std::string(e.what()).find("lax.cond"), std::string::npos);
  } catch (const ValueError&) {
    // size 3: item() refuses before looking at the value; also acceptable.
  }
}

TEST(Array, BasicsAndDeletion) {
  Array x = random_array({2, 3}, DType::kFloat32);
  EXPECT_EQ(x.ndim(), 2);
  EXPECT_EQ(x.size(), 6);
  EXPECT_EQ(x.dim(-1), 3);
  EXPECT_EQ(x.nbytes(), 24u);
  EXPECT_THROW(x.dim(2), IndexError);
  EXPECT_THROW(x.data<int32_t>(), TypeError);
  EXPECT_THROW((void)static_cast<bool>(x), ValueError);
  EXPECT_THROW(x.item<float>(), ValueError);
  Array s = random_array({}, DType::kInt32);
  EXPECT_EQ(s.item<int>(), static_cast<int>(to_doubles(s)[0]));
  Array y = x;
  x.delete_buffer();
  EXPECT_TRUE(y.is_deleted());  // same handle
  EXPECT_THROW(lax::neg(x), ValueError);
  int64_t before = eval_count();
  Array z = lax::neg(s);
  EXPECT_EQ(eval_count(), before + 1);
}

}  // namespace
}  // namespace tessera
