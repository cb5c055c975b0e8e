// The direct convolution reference (conv_reference.h).
#include "util/conv_reference.h"

#include <algorithm>

namespace tessera::testing {

namespace {

using Ints = std::vector<int64_t>;

int64_t dil(int64_t d, int64_t k) { return d == 0 ? 0 : 1 + k * (d - 1); }

// Linear offset of the element at canonical index `canon` (dims listed by spec) of an array.
int64_t offset(const Shape& shape, const Ints& spec, const Ints& canon) {
  const std::vector<int64_t> st = row_major_strides(shape);
  int64_t off = 0;
  for (size_t i = 0; i < spec.size(); ++i) off += canon[i] * st[static_cast<size_t>(spec[i])];
  return off;
}

bool next_index(Ints& idx, const Ints& sizes) {
  for (size_t d = sizes.size(); d-- > 0;) {
    if (++idx[d] < sizes[d]) return true;
    idx[d] = 0;
  }
  return false;
}

}  // namespace

std::pair<Shape, std::vector<double>> ref_conv(const std::vector<double>& l,
                                               const std::vector<double>& r, const ConvConfig& c) {
  const size_t ns = c.lhs.size() - 2;
  auto canon = [](const Shape& s, const Ints& spec) {
    Ints out;
    for (int64_t d : spec) out.push_back(s[static_cast<size_t>(d)]);
    return out;
  };
  const Ints lc = canon(c.lhs, c.dn.lhs_spec), rc = canon(c.rhs, c.dn.rhs_spec);
  const int64_t groups = c.fgc * c.bgc, og = rc[0] / groups, cin = rc[1];
  Ints oc{lc[0] / c.bgc, rc[0]};
  for (size_t i = 0; i < ns; ++i) {
    const int64_t padded = dil(lc[2 + i], c.ld[i]) + c.pads[i].first + c.pads[i].second;
    const int64_t win = dil(rc[2 + i], c.rd[i]);
    oc.push_back(padded < win ? 0 : (padded - win) / c.strides[i] + 1);
  }
  Shape out_shape(oc.size());
  for (size_t i = 0; i < oc.size(); ++i) out_shape[static_cast<size_t>(c.dn.out_spec[i])] = oc[i];
  std::vector<double> out(static_cast<size_t>(shape_size(out_shape)), 0.0);
  if (out.empty()) return {out_shape, out};
  Ints oi(oc.size(), 0);
  const Ints window(rc.begin() + 2, rc.end());
  do {
    const int64_t grp = oi[1] / og;
    const int64_t nb = c.bgc > 1 ? grp * (lc[0] / c.bgc) + oi[0] : oi[0];
    double acc = 0;
    for (int64_t ci = 0; ci < cin; ++ci) {
      const int64_t feat = c.fgc > 1 ? grp * cin + ci : ci;
      Ints k(ns, 0);
      if (std::any_of(window.begin(), window.end(), [](int64_t w) { return w == 0; })) break;
      do {
        Ints li{nb, feat}, ri{oi[1], ci};
        bool ok = true;
        for (size_t d = 0; d < ns && ok; ++d) {
          const int64_t pos = oi[2 + d] * c.strides[d] + k[d] * c.rd[d] - c.pads[d].first;
          ok = pos >= 0 && pos < dil(lc[2 + d], c.ld[d]) && pos % c.ld[d] == 0;
          li.push_back(pos / c.ld[d]);
          ri.push_back(k[d]);
        }
        if (ok)
          acc += l[static_cast<size_t>(offset(c.lhs, c.dn.lhs_spec, li))] *
                 r[static_cast<size_t>(offset(c.rhs, c.dn.rhs_spec, ri))];
      } while (next_index(k, window));
    }
    out[static_cast<size_t>(offset(out_shape, c.dn.out_spec, oi))] = acc;
  } while (next_index(oi, oc));
  return {out_shape, out};
}

}  // namespace tessera::testing
