// Must not compile: a struct never registered with TESSERA_REGISTER_PYTREE passed to a
// transformation. run.py compiles it once per TESSERA_CASE and expects exactly one error, the
// static_assert that names the macro.
#include "tessera/tessera.h"

namespace user {
struct Params {
  tessera::Array w;
};
}  // namespace user

int main() {
  namespace tnp = tessera::numpy;
  user::Params p{tnp::ones({2})};
  auto loss = [](const user::Params& q) { return tnp::sum(q.w); };
#if TESSERA_CASE == 1
  auto g = tessera::grad(loss)(p);
#elif TESSERA_CASE == 2
  auto g = tessera::vjp(loss, p);
#elif TESSERA_CASE == 3
  auto g = tessera::vmap(loss)(p);
#elif TESSERA_CASE == 4
  auto g = tessera::jvp(loss, std::make_tuple(p), std::make_tuple(p));
#elif TESSERA_CASE == 5
  auto g = tessera::lax::scan(
      [](const user::Params& c, const tessera::Array& x) { return std::make_pair(c, x); }, p,
      tnp::ones({3}));
#elif TESSERA_CASE == 6
  // A result that is not a pytree.
  auto g = tessera::vmap([](const tessera::Array& x) { return user::Params{x}; })(tnp::ones({2}));
#endif
  (void)g;
  return 0;
}
