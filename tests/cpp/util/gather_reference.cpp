// The naive gather/scatter reference (gather_reference.h).
#include "util/gather_reference.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "tessera/dtype.h"

namespace tessera::testing {

bool contains(const Ints& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

namespace {

Ints unravel(int64_t flat, const Shape& s) {
  Ints r(s.size());
  for (int64_t d = static_cast<int64_t>(s.size()) - 1; d >= 0; --d) {
    r[d] = flat % s[d];
    flat /= s[d];
  }
  return r;
}
int64_t ravel(const Ints& at, const Shape& s) {
  int64_t f = 0;
  for (size_t d = 0; d < s.size(); ++d) f = f * s[d] + at[d];
  return f;
}

// The operand index of window element `win` (per window dim, operand order) at point `pt`;
// false when out of bounds and not clamping.
bool operand_index(const Config& c, const std::vector<double>& idx, const Ints& pt, const Ints& win,
                   bool clamp, Ints* at) {
  const int64_t r = static_cast<int64_t>(c.operand.size());
  const int64_t K = c.indices.back();
  Ints start(static_cast<size_t>(r), 0);
  Ints ipt = pt;
  ipt.push_back(0);
  for (int64_t k = 0; k < K; ++k) {
    ipt.back() = k;
    const int64_t d = c.dn.start_index_map[k];
    int64_t s = static_cast<int64_t>(idx[ravel(ipt, c.indices)]);
    const int64_t hi = c.operand[d] - c.slice_sizes[d];
    if (s < 0 || s > hi) {
      if (!clamp) return false;
      s = std::clamp<int64_t>(s, 0, hi);
    }
    start[d] = s;
  }
  for (size_t i = 0; i < c.dn.operand_batching_dims.size(); ++i)
    start[c.dn.operand_batching_dims[i]] = pt[c.dn.start_indices_batching_dims[i]];
  at->assign(start.begin(), start.end());
  size_t wi = 0;
  for (int64_t d = 0; d < r; ++d)
    if (!contains(c.dn.collapsed_slice_dims, d) && !contains(c.dn.operand_batching_dims, d))
      (*at)[d] += win[wi++];
  return true;
}

// Splits an output (or update) index into its point and window parts.
void split(const Config& c, const Ints& o, Ints* pt, Ints* win) {
  pt->clear();
  win->clear();
  for (size_t i = 0; i < o.size(); ++i)
    (contains(c.dn.offset_dims, static_cast<int64_t>(i)) ? win : pt)->push_back(o[i]);
}

}  // namespace

std::vector<double> naive_gather(const Config& c, const std::vector<double>& x,
                                 const std::vector<double>& idx, bool clamp, double fill) {
  int64_t n = 1;
  for (int64_t d : c.out) n *= d;
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t f = 0; f < n; ++f) {
    Ints pt, win, at;
    split(c, unravel(f, c.out), &pt, &win);
    out[f] = operand_index(c, idx, pt, win, clamp, &at) ? x[ravel(at, c.operand)] : fill;
  }
  return out;
}

// The reference scatter in T's own arithmetic, update elements in row-major order.
template <class T>
std::vector<double> naive_scatter_t(const Config& c, const std::vector<double>& x,
                                    const std::vector<double>& idx, const std::vector<double>& u,
                                    bool clamp, const std::string& op) {
  std::vector<T> out(x.begin(), x.end());
  // Updates apply point by point (row-major over the points), each point's window in order:
  // XLA's CPU order, and the one Tessera promises for duplicates.
  Shape pts(c.indices.begin(), c.indices.end() - 1);
  std::vector<std::pair<int64_t, int64_t>> order;  // (point, update element)
  for (size_t f = 0; f < u.size(); ++f) {
    Ints pt, win;
    split(c, unravel(static_cast<int64_t>(f), c.out), &pt, &win);
    order.push_back({ravel(pt, pts), static_cast<int64_t>(f)});
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto [unused, f] : order) {
    Ints pt, win, at;
    split(c, unravel(f, c.out), &pt, &win);
    if (!operand_index(c, idx, pt, win, clamp, &at)) continue;
    T& o = out[ravel(at, c.operand)];
    const T v = static_cast<T>(u[f]);
    if (op == "scatter") o = v;
    // Integers wrap (two's complement, as the kernel and XLA): computed unsigned, no UB.
    if (op == "add") {
      if constexpr (std::is_integral_v<T>)
        o = static_cast<T>(static_cast<uint64_t>(o) + static_cast<uint64_t>(v));
      else
        o = static_cast<T>(o + v);
    }
    if (op == "mul") {
      if constexpr (std::is_integral_v<T>)
        o = static_cast<T>(static_cast<uint64_t>(o) * static_cast<uint64_t>(v));
      else
        o = static_cast<T>(o * v);
    }
    if (op == "min") o = (v < o || v != v) ? v : o;
    if (op == "max") o = (v > o || v != v) ? v : o;
  }
  return std::vector<double>(out.begin(), out.end());
}

std::vector<double> naive_scatter(const Config& c, const std::vector<double>& x,
                                  const std::vector<double>& idx, const std::vector<double>& u,
                                  bool clamp, const std::string& op, DType dtype) {
  if (dtype == DType::kFloat64) return naive_scatter_t<double>(c, x, idx, u, clamp, op);
  if (dtype == DType::kFloat32) return naive_scatter_t<float>(c, x, idx, u, clamp, op);
  return naive_scatter_t<int32_t>(c, x, idx, u, clamp, op);
}

}  // namespace tessera::testing
