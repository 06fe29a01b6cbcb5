// libFuzzer: execution data from arbitrary bytes must parse or fail with an error value, and
// what parses must survive a round trip through execution_data_to_value.
#include <cstdint>
#include <cstdlib>

#include "common/host/execution_data.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto d = genvm::host::parse_execution_data({data, size});
  if (!d) return 0;
  auto v = genvm::host::execution_data_to_value(*d);
  auto again = genvm::host::execution_data_from_value(v);
  if (!again || !(genvm::host::execution_data_to_value(*again) == v)) std::abort();
  return 0;
}
