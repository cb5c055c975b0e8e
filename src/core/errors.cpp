#include "tessera/errors.h"

namespace tessera {

std::string op_message(std::string_view op, std::string_view message) {
  std::string s;
  s.reserve(op.size() + message.size() + 3);
  s += '[';
  s += op;
  s += "] ";
  s += message;
  return s;
}

void throw_internal(std::string_view layer, std::string_view message) {
  throw InternalError("internal error in " + std::string(layer) + ": " + std::string(message) +
                      " (this is a bug in Tessera; please report it)");
}

}  // namespace tessera
