// libFuzzer target for both calldata parsers. The input is tried as binary calldata and as the
// text form; whatever is accepted must round-trip exactly:
//   decode(in) = v     =>  encode(v) == in, parse_text(to_text(v)) == v and prints identically
//   parse_text(in) = v =>  decode(encode(v)) == v, parse_text(to_text(v)) == v
// and validate(in) answers exactly as decode(in) does, error for error; a decode under a
// footprint limit succeeds exactly when the unlimited decode's footprint is within it.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/calldata.h"

namespace cd = genvm::calldata;

namespace {

void check(bool ok) {
  if (!ok) std::abort();  // libFuzzer reports the abort with the input that caused it
}

void check_text_round_trip(const cd::Value& v) {
  std::string text = cd::to_text(v);
  genvm::Result<cd::Value> again = cd::parse_text(text);
  check(again.ok());
  check(*again == v);
  check(cd::to_text(*again) == text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  uint64_t footprint = 0;
  genvm::Result<cd::Value> v = cd::decode(in, cd::DecodeLimits{}, &footprint);
  genvm::Status valid = cd::validate(in);
  check(valid.ok() == v.ok());
  if (!v) check(valid.error().to_string() == v.error().to_string());
  if (v) {
    check(cd::decode(in, cd::DecodeLimits{.max_footprint = footprint}).ok());
    genvm::Result<cd::Value> under = cd::decode(in, cd::DecodeLimits{.max_footprint = footprint - 1});
    check(!under.ok() && under.error().errc == static_cast<int>(cd::DecodeErrc::kFootprintExceeded));
    std::vector<uint8_t> back = cd::encode(*v);
    check(back.size() == size && std::equal(back.begin(), back.end(), data));
    check_text_round_trip(*v);
  }
  genvm::Result<cd::Value> t = cd::parse_text(std::string_view(reinterpret_cast<const char*>(data), size));
  if (t) {
    genvm::Result<cd::Value> d = cd::decode(cd::encode(*t));
    check(d.ok());
    check(*d == *t);
    check_text_round_trip(*t);
  }
  return 0;
}
