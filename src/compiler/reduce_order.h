// The order in which the eager reduction kernels (prims/reductions.cpp) combine elements, in one
// place. Floating-point reductions are not associative, so this order *is* the result's bits:
// the compiler's fused reductions (compiler/fusion.cpp decides what fuses, cpu/llvm_codegen.cpp
// emits the same order) read it from here, and a change here changes eager and jit together.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tessera::reduce_order {

// ---- rows (the reduced elements contiguous): reduce_rows / reduce_contig ----

// Rows shorter than this fold in order, one element after another.
inline constexpr int64_t kShortRow = 16;
// Rows up to this length fold in one piece (reduce_contig); longer ones are cut into chunks of
// this length whose partials are folded again.
inline constexpr int64_t kRowChunk = int64_t{1} << 15;
// Accumulator lanes of reduce_contig: 256 bytes of them (8 AVX registers), at least 8.
constexpr int64_t lanes_for_bytes(int64_t acc_bytes) {
  return std::max<int64_t>(8, 256 / acc_bytes);
}
// Elements each lane folds in order in a block (a block is kPerLane * lanes elements); blocks
// are paired as a binary counter. Rows shorter than one block fold in kSmallRowLanes lanes.
inline constexpr int64_t kPerLane = 8;
inline constexpr int kSmallRowLanes = 8;

// ---- columns (the reduced group followed by I kept elements): reduce_cols ----

// Columns accumulated together (one col_block call's width at most).
inline constexpr int64_t kColWidth = 4096;
// col_block folds at most this many rows in order; more are split at leaf_half and the two
// halves' results combined, left first.
inline constexpr int64_t kLeafRows = 8;
// Where col_block splits `rows` > kLeafRows rows: half of them rounded up to kLeafRows.
constexpr int64_t leaf_half(int64_t rows) {
  return (rows / 2 + kLeafRows - 1) / kLeafRows * kLeafRows;
}
// Rows of one column chunk: a column over R rows is folded chunk by chunk (col_block each)
// and the chunks' partials folded again by col_block. Depends on I only.
constexpr int64_t column_chunk_rows(int64_t I) {
  return std::max<int64_t>(256, (int64_t{1} << 18) / std::min(I, kColWidth));
}
// Narrow columns (I < kNarrowColumns) are first folded kFoldWidth / I rows at a time as rows
// of width ~kFoldWidth, when that gives at least two such rows: a different order.
inline constexpr int64_t kNarrowColumns = 32;
inline constexpr int64_t kFoldWidth = 256;
constexpr bool narrow_column_path(int64_t R, int64_t I) {
  return I < kNarrowColumns && R / (kFoldWidth / I) >= 2;
}

}  // namespace tessera::reduce_order
