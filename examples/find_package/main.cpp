// The smallest real use of Tessera from another project: found with find_package(Tessera).
#include <cmath>
#include <iostream>

#include <tessera/tessera.h>

int main() {
  namespace tnp = tessera::numpy;
  tessera::Array x = tnp::arange(1, 5);  // int32 [1 2 3 4]
  tessera::Array y = tnp::sum(x * x);    // 1 + 4 + 9 + 16
  const int got = y.item<int>();
  int want = 0;
  for (int i = 1; i < 5; ++i) want += i * i;  // independent check
  std::cout << "consumer: sum(x*x) for x = " << x << " is " << got << "\n";
  if (got != want) {
    std::cerr << "consumer: expected " << want << "\n";
    return 1;
  }
  return 0;
}
