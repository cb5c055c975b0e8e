#include "prims/broadcast_iter.h"

namespace tessera::kernels {

std::string shapes_list(std::span<const Aval> in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (i) out += ", ";
    out += shape_str(in[i].shape);
  }
  return out;
}

std::string avals_list(std::span<const Aval> in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (i) out += i + 1 == in.size() ? " and " : ", ";
    out += in[i].str();
  }
  return out;
}

void check_num_operands(const char* op, std::span<const Aval> in, size_t n) {
  if (in.size() != n) {
    throw TypeError(op_message(op, "takes " + std::to_string(n) + " operand" + (n == 1 ? "" : "s") +
                                       ", got " + std::to_string(in.size())));
  }
}

void check_same_dtype(const char* op, std::span<const Aval> in, const std::string& hint) {
  for (const Aval& a : in) {
    if (a.dtype != in[0].dtype) {
      throw TypeError(
          op_message(op, "operands must have the same dtype, got " + avals_list(in) + "; " + hint));
    }
  }
}

void check_not_extended(const char* op, const Aval& a) {
  if (is_extended(a.dtype)) {
    throw TypeError(op_message(op, "does not accept the extended dtype " +
                                       std::string(dtype_name(a.dtype)) + " (got " + a.str() +
                                       "); it has no arithmetic"));
  }
}

Shape broadcast_shapes(const char* op, std::span<const Aval> in) {
  int64_t rank = -1;
  for (const Aval& a : in) {
    if (a.ndim() == 0) continue;
    if (rank >= 0 && a.ndim() != rank) {
      throw TypeError(op_message(op, "got arrays of different rank: " + shapes_list(in)));
    }
    rank = a.ndim();
  }
  if (rank < 0) return {};
  Shape out(static_cast<size_t>(rank), 1);
  for (int64_t d = 0; d < rank; ++d) {
    bool zero = false;
    for (const Aval& a : in) {
      if (a.ndim() == 0) continue;
      const int64_t s = a.shape[d];
      if (s == 0) zero = true;
      if (s == 1) continue;
      if (out[d] != 1 && out[d] != s) {
        throw TypeError(
            op_message(op, "got incompatible shapes for broadcasting: " + shapes_list(in)));
      }
      out[d] = s;
    }
    if (zero) out[d] = 0;
  }
  return out;
}

}  // namespace tessera::kernels
