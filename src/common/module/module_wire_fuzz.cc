// libFuzzer: any calldata read as each of the wire's messages (hello, LLM and web requests,
// answers and their Ok payloads) must parse or fail with an error value; what parses must
// re-encode to a value that parses to the same encoding (the readers and writers agree).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/module/protocol.h"

namespace {

using genvm::calldata::Value;
namespace m = genvm::module;

template <class Parse, class Encode>
void stable(const Value& v, Parse parse, Encode encode) {
  auto first = parse(v);
  if (!first) return;
  Value once = encode(*first);
  auto second = parse(once);
  if (!second || !(encode(*second) == once)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto v = genvm::calldata::decode({data, size});
  if (!v) {
    // Not calldata: as host_data text instead (bounded depth, errors as values).
    (void)m::host_data_from_json(std::string_view(reinterpret_cast<const char*>(data), size));
    return 0;
  }
  stable(*v, m::parse_hello, m::hello_value);
  stable(*v, m::parse_llm_message, m::llm_message_value);
  stable(*v, m::parse_web_message, m::web_message_value);
  stable(*v, m::parse_answer, m::answer_value);
  stable(*v, m::parse_prompt_answer, m::prompt_answer_value);
  (void)m::check_render_answer(*v);
  return 0;
}
