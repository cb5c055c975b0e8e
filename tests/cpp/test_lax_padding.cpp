// lax.padtype_to_pads: VALID/SAME/SAME_LOWER against a brute-force reference (the least total
// padding that gives ceil(in / stride) windows, split low/high), JAX's string parsing and errors.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "tessera/lax_padding.h"
#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using Pads = std::vector<std::pair<int64_t, int64_t>>;
using Ints = std::vector<int64_t>;

// The smallest p >= 0 such that a window of w with stride s fits ceil(in / s) times in in + p.
int64_t brute_total(int64_t in, int64_t w, int64_t s) {
  int64_t want = 0;
  while (want * s < in) ++want;  // ceil(in / s), counted
  for (int64_t p = 0;; ++p) {
    const int64_t span = in + p;
    const int64_t fits = span < w ? 0 : (span - w) / s + 1;
    if (fits >= want) return p;
  }
}

TEST(LaxPadding, KnownCases) {
  // in 5, window 3, stride 2: 3 outputs need 7 elements -> 2 of padding, split 1/1.
  EXPECT_EQ(lax::padtype_to_pads(Ints{5}, Ints{3}, Ints{2}, "SAME"), (Pads{{1, 1}}));
  // in 4, window 3, stride 1: 4 outputs need 6 -> 2; in 4 window 2 stride 1 -> 1 goes high.
  EXPECT_EQ(lax::padtype_to_pads(Ints{4, 4}, Ints{3, 2}, Ints{1, 1}, "SAME"),
            (Pads{{1, 1}, {0, 1}}));
  EXPECT_EQ(lax::padtype_to_pads(Ints{4, 4}, Ints{3, 2}, Ints{1, 1}, "SAME_LOWER"),
            (Pads{{1, 1}, {1, 0}}));
  EXPECT_EQ(lax::padtype_to_pads(Ints{4, 7}, Ints{3, 2}, Ints{1, 5}, "valid"),
            (Pads{{0, 0}, {0, 0}}));
  // A stride larger than the window: no padding needed.
  EXPECT_EQ(lax::padtype_to_pads(Ints{6}, Ints{2}, Ints{3}, lax::PaddingType::kSame),
            (Pads{{0, 0}}));
  // An empty dimension: JAX's formula gives max(0, window - stride) (no window fits anyway).
  EXPECT_EQ(lax::padtype_to_pads(Ints{0, 0}, Ints{5, 2}, Ints{2, 3}, "SAME"),
            (Pads{{1, 2}, {0, 0}}));
  EXPECT_EQ(lax::parse_padding_type("Same_Lower"), lax::PaddingType::kSameLower);
  EXPECT_EQ(lax::padding_type_name(lax::PaddingType::kSame), "SAME");
}

TEST(LaxPadding, RandomAgainstBruteForce) {
  auto& rng = testing::rng();
  std::uniform_int_distribution<int64_t> rank_d(0, 4), in_d(1, 20), w_d(1, 7), s_d(1, 5);
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t rank = rank_d(rng);
    Ints in(rank), w(rank), s(rank);
    for (int64_t i = 0; i < rank; ++i) {
      in[i] = in_d(rng);
      w[i] = w_d(rng);
      s[i] = s_d(rng);
    }
    const Pads same = lax::padtype_to_pads(in, w, s, "SAME");
    const Pads lower = lax::padtype_to_pads(in, w, s, lax::PaddingType::kSameLower);
    const Pads valid = lax::padtype_to_pads(in, w, s, "VALID");
    ASSERT_EQ(same.size(), static_cast<size_t>(rank));
    for (int64_t i = 0; i < rank; ++i) {
      const int64_t total = brute_total(in[i], w[i], s[i]);
      EXPECT_EQ(same[i].first + same[i].second, total) << in[i] << " " << w[i] << " " << s[i];
      EXPECT_EQ(lower[i].first + lower[i].second, total);
      // SAME: the odd element goes high; SAME_LOWER: low.
      EXPECT_EQ(same[i].second - same[i].first, total % 2);
      EXPECT_EQ(lower[i].first - lower[i].second, total % 2);
      EXPECT_EQ(valid[i], (std::pair<int64_t, int64_t>{0, 0}));
    }
  }
}

TEST(LaxPadding, Errors) {
  EXPECT_ERROR(Error, lax::padtype_to_pads(Ints{4}, Ints{2}, Ints{1}, "FULL"),
               "Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got FULL.");
  EXPECT_ERROR(ValueError, lax::padtype_to_pads(Ints{4, 4}, Ints{2}, Ints{1, 1}, "SAME"),
               "must have one length");
  EXPECT_ERROR(ValueError, lax::padtype_to_pads(Ints{4}, Ints{2}, Ints{0}, "SAME"),
               "window_strides must be positive");
  EXPECT_ERROR(TypeError,
               lax::padtype_to_pads(Ints{4}, Ints{2}, Ints{1}, static_cast<lax::PaddingType>(7)),
               "Unknown padding type");
}

}  // namespace
}  // namespace tessera
