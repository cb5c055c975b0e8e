// The index-map rule registry and the affine helpers fusion composes with (index_map.h).
#include "compiler/index_map.h"

#include "compiler/rule_table.h"

namespace tessera::compiler {

namespace {
RuleTable<DynamicIndexMapRule>& table() {
  static auto* t = new RuleTable<DynamicIndexMapRule>;  // never destroyed: read at exit
  return *t;
}
}  // namespace

void register_index_map(const Primitive& p, IndexMapRule rule) {
  table().set(
      p, [rule = std::move(rule)](std::span<const Aval> in, const Aval& out, const Params& params,
                                  std::span<const kir::Affine> at,
                                  const DynamicValue&) { return rule(in, out, params, at); });
}

void register_index_map(const Primitive& p, DynamicIndexMapRule rule) {
  table().set(p, std::move(rule));
}

const DynamicIndexMapRule* index_map_rule(const Primitive& p) { return table().get(p); }

kir::Affine linear_offset(std::span<const kir::Affine> point, const Shape& shape) {
  const size_t rank = point.empty() ? 0 : point[0].coeff.size();
  kir::Affine l = kir::Affine::constant(0, rank);
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (d < point.size()) l = l + point[d].scaled(stride);
    stride *= shape[d];
  }
  return l;
}

std::optional<std::vector<kir::Affine>> delinearize(const kir::Affine& linear, const Shape& shape,
                                                    std::span<const int64_t> dims) {
  const size_t rank = linear.coeff.size();
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  std::vector<kir::Affine> point(shape.size(), kir::Affine::constant(0, rank));
  for (int64_t s : shape)
    if (s == 0) return std::nullopt;
  // Each iteration term goes to the outermost coordinate whose stride divides its coefficient.
  for (size_t i = 0; i < rank; ++i) {
    const int64_t c = linear.coeff[i];
    if (c == 0) continue;
    bool placed = false;
    for (size_t d = 0; d < shape.size() && !placed; ++d)
      if (c % strides[d] == 0) {
        point[d].coeff[i] = c / strides[d];
        placed = true;
      }
    if (!placed) return std::nullopt;
  }
  // The offset's mixed-radix digits.
  if (linear.offset < 0) return std::nullopt;
  for (size_t d = 0; d < shape.size(); ++d)
    point[d].offset = d == 0 ? linear.offset / strides[0] : (linear.offset / strides[d]) % shape[d];
  if (!shape.empty() && linear.offset / strides[0] >= shape[0]) return std::nullopt;
  // Exact when every coordinate stays in range: the digits of an in-range multi-index are unique.
  for (size_t d = 0; d < shape.size(); ++d)
    if (point[d].min_over(dims) < 0 || point[d].max_over(dims) >= shape[d]) return std::nullopt;
  return point;
}

}  // namespace tessera::compiler
