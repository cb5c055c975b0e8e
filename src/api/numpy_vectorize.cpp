// jnp.vectorize over flat C++ functions: the gufunc signature parser (shared with the Python
// package) and the loop over broadcast leading dims as nested vmaps. Semantics:
// include/tessera/numpy_vectorize.h.
#include "tessera/numpy_vectorize.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "api/numpy_internal.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/numpy.h"
#include "tessera/numpy_manip.h"
#include "tessera/transforms_flat.h"

namespace tessera::numpy {

namespace {

using detail::tuple_str;

constexpr const char* kOp = "vectorize";

bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// "(a,b),(c)" -> {{a, b}, {c}}; false when s is not such a list (at least one argument).
bool parse_args(const std::string& s, std::vector<std::vector<std::string>>& out) {
  size_t i = 0;
  while (true) {
    if (i >= s.size() || s[i] != '(') return false;
    ++i;
    std::vector<std::string> dims;
    if (i < s.size() && s[i] != ')') {
      while (true) {
        const size_t start = i;
        while (i < s.size() && is_word(s[i])) ++i;
        if (i == start) return false;
        dims.push_back(s.substr(start, i - start));
        if (i < s.size() && s[i] == ',') {
          ++i;
          continue;
        }
        break;
      }
    }
    if (i >= s.size() || s[i] != ')') return false;
    ++i;
    out.push_back(std::move(dims));
    if (i == s.size()) return true;
    if (s[i] != ',') return false;
    ++i;
  }
}

std::string names_str(const std::vector<std::string>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", '" : "'") + dims[i] + "'";
  return s + (dims.size() == 1 ? ",)" : ")");
}

// Records the sizes of x's core dims in sizes (ValueError for a disagreement). Inputs need at
// least the core dims; outputs exactly them.
void core_sizes(std::map<std::string, int64_t>& sizes, const Shape& shape,
                const std::vector<std::string>& dims, const std::string& context, bool input) {
  if (input && shape.size() < dims.size())
    throw ValueError(op_message(kOp, "input with shape " + tuple_str(shape) +
                                         " does not have enough dimensions for all core "
                                         "dimensions " +
                                         names_str(dims) + " " + context));
  if (!input && shape.size() != dims.size())
    throw ValueError(op_message(kOp, "output shape " + tuple_str(shape) +
                                         " does not match core dimensions " + names_str(dims) +
                                         " " + context));
  const size_t off = shape.size() - dims.size();
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t s = shape[off + d];
    auto [it, fresh] = sizes.emplace(dims[d], s);
    if (!fresh && it->second != s)
      throw ValueError(op_message(kOp, "inconsistent size for core dimension '" + dims[d] +
                                           "': " + std::to_string(s) + " vs " +
                                           std::to_string(it->second) + " " + context));
  }
}

}  // namespace

GufuncSignature parse_gufunc_signature(const std::string& signature) {
  std::string s;
  for (char c : signature)
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  GufuncSignature sig;
  const size_t arrow = s.find("->");
  if (arrow == std::string::npos || s.find("->", arrow + 2) != std::string::npos ||
      !parse_args(s.substr(0, arrow), sig.inputs) || !parse_args(s.substr(arrow + 2), sig.outputs))
    throw ValueError(op_message(kOp, "not a valid gufunc signature: " + signature));
  return sig;
}

flat::Fun vectorize(flat::Fun f, const std::optional<std::string>& signature) {
  std::optional<GufuncSignature> sig;
  if (signature) sig = parse_gufunc_signature(*signature);
  const std::string context =
      "on vectorized function with signature=" + (signature ? "'" + *signature + "'" : "None");
  return [f = std::move(f), sig, context](std::span<const Array> args) {
    const size_t na = args.size();
    if (sig && sig->inputs.size() != na)
      throw TypeError(op_message(kOp, "wrong number of positional arguments: expected " +
                                          std::to_string(sig->inputs.size()) + ", got " +
                                          std::to_string(na) + " " + context));
    std::map<std::string, int64_t> sizes;
    std::vector<Shape> loop(na);
    Shape bshape;
    for (size_t i = 0; i < na; ++i) {
      const Shape& s = args[i].shape();
      const size_t core = sig ? sig->inputs[i].size() : 0;
      if (sig) core_sizes(sizes, s, sig->inputs[i], context, true);
      loop[i] = Shape(s.begin(), s.end() - static_cast<std::ptrdiff_t>(core));
      bshape = broadcast_shapes(bshape, loop[i], kOp);
    }
    // f at one point of the loop, checking its outputs against the signature.
    flat::Fun g = [f, sig, sizes, context](std::span<const Array> xs) {
      std::vector<Array> outs = f(xs);
      if (sig) {
        if (outs.size() != sig->outputs.size())
          throw TypeError(op_message(kOp, "wrong number of output arguments: expected " +
                                              std::to_string(sig->outputs.size()) + ", got " +
                                              std::to_string(outs.size()) + " " + context));
        std::map<std::string, int64_t> osizes = sizes;
        for (size_t o = 0; o < outs.size(); ++o)
          core_sizes(osizes, outs[o].shape(), sig->outputs[o], context, false);
      }
      return outs;
    };
    // Size-1 loop axes are squeezed away; each remaining loop axis is one vmap (the innermost
    // wraps f first), over the arguments that have it.
    const size_t nl = bshape.size();
    std::vector<Array> squeezed;
    std::vector<Shape> padded;
    for (size_t i = 0; i < na; ++i) {
      Shape p(nl - loop[i].size(), 1);
      p.insert(p.end(), loop[i].begin(), loop[i].end());
      padded.push_back(p);
      std::vector<int64_t> ones;
      for (size_t d = 0; d < loop[i].size(); ++d)
        if (loop[i][d] == 1) ones.push_back(static_cast<int64_t>(d));
      squeezed.push_back(ones.empty() ? args[i] : lax::squeeze(args[i], ones));
    }
    std::vector<int64_t> expand;
    for (size_t d = nl; d-- > 0;) {
      std::vector<std::optional<int64_t>> in_axes(na);
      bool mapped = false;
      for (size_t i = 0; i < na; ++i)
        if (padded[i][d] != 1) {
          in_axes[i] = 0;
          mapped = true;
        }
      if (!mapped) {
        expand.push_back(static_cast<int64_t>(d));
        continue;
      }
      g = [inner = std::move(g), in_axes](std::span<const Array> xs) {
        return flat::vmap(inner, xs, in_axes, [](size_t n) {
          return std::vector<std::optional<int64_t>>(n, int64_t{0});
        });
      };
    }
    std::vector<Array> outs = g(squeezed);
    if (!expand.empty()) {
      std::sort(expand.begin(), expand.end());
      for (Array& o : outs) o = expand_dims(o, expand);
    }
    return outs;
  };
}

}  // namespace tessera::numpy
