// tessera::nn::dot_product_attention against naive float64 loops written here on fresh random
// inputs: grouped-query heads, causal and boolean masks, bias, sequence lengths; jit against
// eager; the gradient in the query against float64 central differences; the errors. (The Python
// test compares every option with a torch reference and torch autograd.)
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tessera/lax.h"
#include "tessera/nn.h"
#include "tessera/numpy.h"
#include "tessera/tessera.h"
#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::random_array;
using testing::to_doubles;

// out[b,t,n,:] = sum_s softmax_s(q·k * scale (+ masks)) v, in float64, q [B,T,N,H], k/v [B,S,K,H].
std::vector<double> naive(const std::vector<double>& q, const std::vector<double>& k,
                          const std::vector<double>& v, int64_t B, int64_t T, int64_t S, int64_t N,
                          int64_t K, int64_t H, bool causal, const std::vector<int64_t>& kv_len) {
  std::vector<double> out(static_cast<size_t>(B * T * N * H), 0.0);
  const int64_t G = N / K;
  const double scale = 1.0 / std::sqrt(static_cast<double>(H));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t n = 0; n < N; ++n) {
        const int64_t kh = n / G;
        std::vector<double> logit(static_cast<size_t>(S));
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t s = 0; s < S; ++s) {
          double d = 0;
          for (int64_t h = 0; h < H; ++h)
            d += q[((b * T + t) * N + n) * H + h] * k[((b * S + s) * K + kh) * H + h];
          d *= scale;
          const bool keep = (!causal || s <= t) && (kv_len.empty() || s < kv_len[b]);
          logit[s] = keep ? d : -0.7 * std::numeric_limits<float>::max();
          mx = std::max(mx, logit[s]);
        }
        double z = 0;
        for (double& l : logit) z += (l = std::exp(l - mx));
        for (int64_t s = 0; s < S; ++s)
          for (int64_t h = 0; h < H; ++h)
            out[((b * T + t) * N + n) * H + h] += logit[s] / z * v[((b * S + s) * K + kh) * H + h];
      }
  return out;
}

TEST(DotProductAttention, MatchesNaiveLoops) {
  const int64_t B = 2, T = 4, S = 6, H = 5;
  for (auto [N, K] : {std::pair<int64_t, int64_t>{2, 2}, {4, 2}, {3, 1}}) {
    for (bool causal : {false, true}) {
      Array q = random_array({B, T, N, H}, DType::kFloat32);
      Array k = random_array({B, S, K, H}, DType::kFloat32);
      Array v = random_array({B, S, K, H}, DType::kFloat32);
      nn::AttentionOptions o;
      o.is_causal = causal;
      Array got = nn::dot_product_attention(q, k, v, o);
      ASSERT_EQ(got.shape(), q.shape());
      EXPECT_EQ(testing::compare(to_doubles(got),
                                 naive(to_doubles(q), to_doubles(k), to_doubles(v), B, T, S, N, K,
                                       H, causal, {}),
                                 2e-5, 2e-5),
                "")
          << "N " << N << " K " << K << " causal " << causal;
      // Key lengths as a mask; jit agrees with eager.
      o.key_value_seq_lengths =
          lax::convert_element_type(numpy::array(std::vector<double>{6, 3}, {2}), DType::kInt32);
      Array masked = nn::dot_product_attention(q, k, v, o);
      EXPECT_EQ(testing::compare(to_doubles(masked),
                                 naive(to_doubles(q), to_doubles(k), to_doubles(v), B, T, S, N, K,
                                       H, causal, {6, 3}),
                                 2e-5, 2e-5),
                "");
      auto f = [&](const Array& qq, const Array& kk, const Array& vv) {
        return nn::dot_product_attention(qq, kk, vv, o);
      };
      EXPECT_EQ(testing::compare(to_doubles(jit(f)(q, k, v)), to_doubles(masked), 1e-6, 1e-6), "");
    }
  }
}

TEST(DotProductAttention, QueryGradientMatchesFiniteDifferences) {
  testing::X64Scope x64(true);
  // float64 inputs: the softmax still runs in float32 (as JAX's), so the differences use a
  // step and tolerance that float32 rounding of the probabilities cannot reach.
  Array q = random_array({1, 3, 2, 4}, DType::kFloat64);
  Array k = random_array({1, 5, 1, 4}, DType::kFloat64);
  Array v = random_array({1, 5, 1, 4}, DType::kFloat64);
  auto f = [&](const Array& qq) {
    nn::AttentionOptions o;
    o.is_causal = true;
    return numpy::sum(lax::sin(nn::dot_product_attention(qq, k, v, o)));
  };
  const auto gs = to_doubles(grad(f)(q));
  const auto xs = to_doubles(q);
  for (size_t i = 0; i < xs.size(); ++i) {
    std::vector<double> p = xs, m = xs;
    p[i] += 1e-3;
    m[i] -= 1e-3;
    const double fd = (to_doubles(f(numpy::array(p, q.shape())))[0] -
                       to_doubles(f(numpy::array(m, q.shape())))[0]) /
                      2e-3;
    EXPECT_NEAR(gs[i], fd, 2e-3 * (1 + std::abs(fd))) << "element " << i;
  }
}

TEST(DotProductAttention, Errors) {
  Array q = random_array({2, 4, 3, 5}, DType::kFloat32);
  Array k = random_array({2, 6, 2, 5}, DType::kFloat32);
  EXPECT_ERROR(ValueError, nn::dot_product_attention(q, k, k), "multiple of the number");
  EXPECT_ERROR(TypeError,
               nn::dot_product_attention(q, lax::convert_element_type(k, DType::kBFloat16), k),
               "same floating dtype");
  nn::AttentionOptions o;
  o.mask = random_array({4, 6}, DType::kFloat32);
  Array k3 = random_array({2, 6, 3, 5}, DType::kFloat32);
  EXPECT_ERROR(TypeError, nn::dot_product_attention(q, k3, k3, o), "mask must be boolean");
  o.mask.reset();
  o.bias = random_array({3, 6}, DType::kFloat32);
  EXPECT_ERROR(ValueError, nn::dot_product_attention(q, k3, k3, o), "does not broadcast");
}

}  // namespace
}  // namespace tessera
