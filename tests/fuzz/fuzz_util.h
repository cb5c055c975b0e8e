// Shared by the fuzz targets: what counts as a finding. A target feeds arbitrary bytes to a
// parser or to bind; a typed user error (tessera::Error other than InternalError) is the right
// answer to bad input. Anything else — an InternalError, another exception type, a crash, a
// sanitizer report, a hang — is a finding: the target aborts so that libFuzzer (or the replay
// driver under ctest) records the input.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>

#include "tessera/errors.h"

namespace tessera::fuzz {

template <class F>
int guard(F&& body) {
  try {
    body();
  } catch (const InternalError& e) {
    std::fprintf(stderr, "fuzz finding: InternalError: %s\n", e.what());
    std::abort();
  } catch (const Error&) {
    // The typed error bad input deserves.
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "fuzz finding: std::bad_alloc (a size escaped the checks)\n");
    std::abort();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz finding: untyped exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}

}  // namespace tessera::fuzz
