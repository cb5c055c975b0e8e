// Helpers shared by the pytree sources.
#pragma once

#include <string>
#include <string_view>

namespace tessera::detail {

// Python's repr() of a str: 'a', "it's", with backslash escapes for control characters.
std::string py_str_repr(std::string_view s);

}  // namespace tessera::detail
