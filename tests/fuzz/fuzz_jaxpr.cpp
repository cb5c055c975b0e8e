// Fuzz target for the jaxpr text parser: any bytes are parsed; a typed error is the right
// answer to bad text. A text that parses must print, and the printed text must parse back and
// print identically (the printer and parser are inverses); a mismatch is a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "tessera/jaxpr.h"
#include "tessera/jaxpr_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  return tessera::fuzz::guard([&] {
    const tessera::Jaxpr j = tessera::parse_jaxpr(text);
    const std::string printed = tessera::to_string(j);
    std::string again;
    try {
      again = tessera::to_string(tessera::parse_jaxpr(printed));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fuzz finding: the printed jaxpr does not parse: %s\n%s\n", e.what(),
                   printed.c_str());
      std::abort();
    }
    if (again != printed) {
      std::fprintf(stderr, "fuzz finding: round trip differs:\n%s\n-- reprinted --\n%s\n",
                   printed.c_str(), again.c_str());
      std::abort();
    }
  });
}
