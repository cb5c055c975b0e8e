// jax.lax's collectives over named axes. Today a named axis is a vmap's:
//
//   auto f = [](const Array& x) { return lax::div(x, lax::psum(x, "batch")); };
//   Array y = vmap(f, {0}, 0, {.axis_name = "batch"})(xs);   // each row over the column sums
//
// Inside a function mapped with an axis name, psum/pmean/pmax/pmin reduce over the members of the
// axis and give every member the result; all_gather stacks the members' values; axis_index is
// this member's position; psum_scatter sums and gives each member its slice; ppermute sends each
// member's value along the (source, destination) pairs. Names no enclosing transformation binds
// raise NameError. Rules and semantics: src/prims/collectives.cpp.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tessera/array.h"

namespace tessera::lax {

Array psum(const Array& x, const std::vector<std::string>& axis_names);
Array psum(const Array& x, const std::string& axis_name);
Array pmean(const Array& x, const std::vector<std::string>& axis_names);
Array pmean(const Array& x, const std::string& axis_name);
Array pmax(const Array& x, const std::vector<std::string>& axis_names);
Array pmax(const Array& x, const std::string& axis_name);
Array pmin(const Array& x, const std::vector<std::string>& axis_names);
Array pmin(const Array& x, const std::string& axis_name);
// The members' values stacked at `axis` (tiled: concatenated along it).
Array all_gather(const Array& x, const std::string& axis_name, int64_t axis = 0,
                 bool tiled = false);
// This member's index along the axis (int32, rank 0).
Array axis_index(const std::string& axis_name);
// The size of a bound axis (NameError when unbound).
int64_t axis_size(const std::string& axis_name);
// psum, then this member's slice along scatter_dimension: that dim has the axis size (and is
// removed) or, tiled, a multiple of it (this member's block is kept).
Array psum_scatter(const Array& x, const std::string& axis_name, int64_t scatter_dimension = 0,
                   bool tiled = false);
// perm: (source, destination) member pairs, each source and destination at most once; a member
// no pair sends to receives zeros.
Array ppermute(const Array& x, const std::string& axis_name,
               const std::vector<std::pair<int64_t, int64_t>>& perm);

}  // namespace tessera::lax
