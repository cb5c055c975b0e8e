// The sweep table's rows, by primitive family: test_sweep.cpp's make_table holds the first
// families and appends the rows of each file below (one file per family, so that families
// grow independently).
#pragma once

#include <vector>

#include "util/sweep.h"

namespace tessera::sweep {

// lax broadcasting: equal shapes, rank-0 on either side, size-1 dims, rank 0, zero-size dims.
inline const std::vector<std::vector<Shape>> kBinaryShapes = {
    {{3, 4}, {3, 4}}, {{}, {3, 4}},     {{3, 4}, {}},          {{3, 1}, {1, 4}},
    {{}, {}},         {{0, 3}, {1, 3}}, {{2, 1, 3}, {2, 4, 3}}};
inline const std::vector<std::vector<Shape>> kUnaryShapes = {
    {{3, 4}}, {{}}, {{5}}, {{0, 3}}, {{2, 1, 3}}, {{2, 1, 3, 2}}, {{1}}};

std::vector<Row> rows_math();        // sweep_rows_math.cpp: the math primitives
std::vector<Row> rows_special();     // sweep_rows_special.cpp: special.cpp
std::vector<Row> rows_bitwise();     // sweep_rows_bitwise.cpp: bitwise.cpp
std::vector<Row> rows_slicing();     // sweep_rows_slicing.cpp: squeeze_rev, slicing, concat_pad
std::vector<Row> rows_reductions();  // sweep_rows_reductions.cpp: the new reductions, argmax,
                                     // argmin, generic reduce
std::vector<Row> rows_cumulative();  // sweep_rows_cumulative.cpp: cumsum, cumprod, cummax, ...
std::vector<Row> rows_gather();      // sweep_rows_gather.cpp: gather and the scatters
std::vector<Row> rows_sort();        // sweep_rows_sort.cpp: sort
std::vector<Row> rows_linalg_spectral();  // sweep_rows_linalg_spectral.cpp: eigh, svd, qr
// sweep_rows_linalg_qr.cpp: geqrf, geqp3, householder_product, qr with pivoting
std::vector<Row> rows_linalg_qr();

// sweep_rows_linalg_solve.cpp: triangular_solve, cholesky, lu, lu_pivots_to_permutation
std::vector<Row> rows_linalg_solve();
std::vector<Row> rows_window();  // sweep_rows_window.cpp: windowed reductions, select_and_*
std::vector<Row> rows_conv();    // sweep_rows_conv.cpp: conv_general_dilated

}  // namespace tessera::sweep
