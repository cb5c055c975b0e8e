// JAX's structured static parameters, as typed C++ values that convert to and from ParamValues
// (primitive.h): the enums GatherScatterMode, RoundingMethod and Precision, and the dimension
// number records of dot_general, gather/scatter and convolutions. Each prints as JAX prints it
// in a jaxpr and is read back by the jaxpr parser.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "tessera/primitive.h"

namespace tessera {

// ---- Enums (member order is the value). ----
// lax.GatherScatterMode: printed "GatherScatterMode.CLIP".
enum class GatherScatterMode : int32_t { kClip, kFillOrDrop, kPromiseInBounds, kOneHot };
// lax.RoundingMethod (an IntEnum: printed as its value, as JAX prints round's rounding_method).
enum class RoundingMethod : int32_t { kAwayFromZero, kToNearestEven };
// lax.Precision: printed "Precision.HIGHEST".
enum class Precision : int32_t { kDefault, kHigh, kHighest };

extern const EnumDef kGatherScatterModeDef;
extern const EnumDef kRoundingMethodDef;
extern const EnumDef kPrecisionDef;

ParamValue to_param(GatherScatterMode m);
ParamValue to_param(RoundingMethod m);
ParamValue to_param(Precision p);

// ---- Records. ----
using DimList = std::vector<int64_t>;

// dot_general's dimension_numbers, printed as JAX does: ((lhs_contracting, rhs_contracting),
// (lhs_batch, rhs_batch)) with lists: `(([1], [0]), ([], []))`.
struct DotDimensionNumbers {
  DimList lhs_contracting, rhs_contracting, lhs_batch, rhs_batch;
  ParamValue to_param() const;
  static DotDimensionNumbers from_param(const ParamRecord& r);
  bool operator==(const DotDimensionNumbers&) const = default;
};
extern const RecordDef kDotDimensionNumbersDef;

// gather's dimension_numbers: GatherDimensionNumbers(offset_dims=(0,), collapsed_slice_dims=(1,),
// start_index_map=(1,), operand_batching_dims=(), start_indices_batching_dims=()).
struct GatherDimensionNumbers {
  DimList offset_dims, collapsed_slice_dims, start_index_map, operand_batching_dims,
      start_indices_batching_dims;
  ParamValue to_param() const;
  static GatherDimensionNumbers from_param(const ParamRecord& r);
  bool operator==(const GatherDimensionNumbers&) const = default;
};
extern const RecordDef kGatherDimensionNumbersDef;

// scatter's dimension_numbers: ScatterDimensionNumbers(update_window_dims=..., inserted_window_dims
// =..., scatter_dims_to_operand_dims=..., operand_batching_dims=..., scatter_indices_batching_dims
// =...).
struct ScatterDimensionNumbers {
  DimList update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
      operand_batching_dims, scatter_indices_batching_dims;
  ParamValue to_param() const;
  static ScatterDimensionNumbers from_param(const ParamRecord& r);
  bool operator==(const ScatterDimensionNumbers&) const = default;
};
extern const RecordDef kScatterDimensionNumbersDef;

// conv_general_dilated's dimension_numbers: ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3),
// rhs_spec=(...), out_spec=(...)): for each of lhs, rhs and out, the positions of the batch
// (or output-feature) dimension, the feature dimension, then the spatial dimensions.
struct ConvDimensionNumbers {
  DimList lhs_spec, rhs_spec, out_spec;
  ParamValue to_param() const;
  static ConvDimensionNumbers from_param(const ParamRecord& r);
  bool operator==(const ConvDimensionNumbers&) const = default;
};
extern const RecordDef kConvDimensionNumbersDef;

// Padding as nested tuples, as JAX prints them: pairs `((1, 1), (0, 2))` (convolution padding)
// and triples `((1, 2, 0),)` (pad's padding_config: low, high, interior).
ParamValue padding_pairs_param(const std::vector<std::pair<int64_t, int64_t>>& pairs);
std::vector<std::pair<int64_t, int64_t>> padding_pairs_from_param(const ParamValue& v);
ParamValue padding_config_param(const std::vector<std::array<int64_t, 3>>& config);
std::vector<std::array<int64_t, 3>> padding_config_from_param(const ParamValue& v);

// Every enum and record definition above (the jaxpr parser reads `Name.MEMBER` and
// `Name(field=...)` through these).
std::span<const EnumDef* const> param_enum_defs();
std::span<const RecordDef* const> param_record_defs();

// Reads one param value from its printed text: ints, floats, True/False, None, dtype names,
// strings, `Enum.MEMBER`, `Record(field=value, ...)`, records with a custom form, and nested
// tuples/lists of those. `spec` (may be null) says what the primitive expects, so that `(1, 2)`
// becomes a ParamTuple, an int list or a record as the signature says. nullopt when the text is
// not a value of that kind.
std::optional<ParamValue> parse_param_text(std::string_view text, const ParamSpec* spec);

}  // namespace tessera
