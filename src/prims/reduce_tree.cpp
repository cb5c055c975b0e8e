#include "prims/reduce_tree.h"

#include <algorithm>
#include <cstring>

#include "tessera/lax.h"
#include "tessera/primitive.h"

namespace tessera::prims::reduce_tree {

Array to_rows(const Array& x, const std::vector<int64_t>& dims) {
  std::vector<int64_t> red = dims;
  std::sort(red.begin(), red.end());
  std::vector<int64_t> perm = red;
  int64_t n = 1, m = 1;
  for (int64_t a : red) n *= x.shape()[a];
  for (int64_t d = 0; d < x.ndim(); ++d) {
    if (std::find(red.begin(), red.end(), d) != red.end()) continue;
    perm.push_back(d);
    m *= x.shape()[d];
  }
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == int64_t(i);
  Array y = identity ? x : lax::transpose(x, perm);
  return lax::reshape(y, {n, m});
}

Array take(const Array& x, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  const int64_t rows = x.shape()[0], cols = x.shape()[1];
  if (r0 == 0 && r1 == rows && c0 == 0 && c1 == cols) return x;
  if (!x.is_concrete() || dynamic_cast<EvalTrace*>(current_trace()) == nullptr)
    return lax::slice(x, {r0, c0}, {r1, c1});
  Array out = empty_array(Aval{{r1 - r0, c1 - c0}, x.dtype(), x.weak_type()}, "reduce", x.device());
  const size_t item = itemsize(x.dtype());
  const auto* src = static_cast<const char*>(x.raw_data());
  auto* dst = static_cast<char*>(out.buffer()->data());
  const size_t w = static_cast<size_t>(c1 - c0) * item;
  for (int64_t r = r0; r < r1; ++r)
    std::memcpy(dst + static_cast<size_t>(r - r0) * w,
                src + (static_cast<size_t>(r * cols + c0)) * item, w);
  return out;
}

std::vector<Array> reduce_rows(std::vector<Array> xs, const Combine& f) {
  int64_t n = xs[0].shape()[0];
  const int64_t m = xs[0].shape()[1];
  std::vector<std::vector<Array>> leftovers;  // the odd row out of each level
  while (n > 1) {
    const int64_t half = n / 2;
    if (n % 2 == 1) {
      std::vector<Array> last;
      for (Array& x : xs) {
        last.push_back(take(x, n - 1, n, 0, m));
        x = take(x, 0, n - 1, 0, m);
      }
      leftovers.push_back(std::move(last));
    }
    // Adjacent rows side by side: [2h, M] -> [h, 2M]; the left half is rows 0, 2, 4, ...
    std::vector<Array> even, odd;
    for (const Array& x : xs) {
      Array pairs = lax::reshape(x, {half, 2 * m});
      even.push_back(take(pairs, 0, half, 0, m));
      odd.push_back(take(pairs, 0, half, m, 2 * m));
    }
    xs = f(even, odd);
    n = half;
  }
  // A later level's odd row precedes an earlier one's in the original order.
  for (auto it = leftovers.rbegin(); it != leftovers.rend(); ++it) xs = f(xs, *it);
  return xs;
}

}  // namespace tessera::prims::reduce_tree
