// Fuzz target: parse and evaluate arbitrary text as a fee expression (gas_data entries reach the
// parser from the host). Every input must end in a value or an error, within the limits.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "executor/fees/expr.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace genvm::executor::fees::expr;
  Limits limits;
  limits.max_steps = 200'000;  // keeps each input fast; the bounds themselves are what is tested
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto program = parse(text, limits);
  if (!program) return 0;
  auto value = evaluate(*program, limits);
  if (value) (void)display(*value);
  return 0;
}
