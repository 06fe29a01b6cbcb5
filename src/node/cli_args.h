// genvm-node's command-line inputs: contract files, transaction arguments, short quotes.
//
//   auto code = read_input_file("token.wasm", kMaxContractBytes);   // one clear error line
//   ArgReader args;                                                 // stdin: at most once
//   auto v = args.parse("0x00000000000000000000000000000000000000a1");  // an address
//
// An argument is one calldata text value (docs/PROTOCOLS.md, calldata text), with three
// additions for a command line:
//   0x + 40 hex       an address (the same as addr#<40 hex>); other 0x... is refused
//   @FILE / @-        the value's calldata text read from FILE / standard input (long values)
//   b@FILE / b@-      FILE's / standard input's raw bytes as a bytes value (binary data)
// Errors name the syntax that was meant and quote at most kQuoteMax characters of the input.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/calldata.h"
#include "common/result.h"

namespace genvm::node {

inline constexpr std::size_t kMaxContractBytes = 64u << 20;  // a contract module file
inline constexpr std::size_t kMaxArgBytes = 16u << 20;       // one @FILE / b@FILE argument
inline constexpr std::size_t kQuoteMax = 32;                 // characters of input an error quotes

// `s` in single quotes, cut to kQuoteMax characters with "..." and its full length when longer;
// control and non-ASCII bytes shown as '?'.
std::string quote_prefix(std::string_view s);

// The whole file (or standard input for "-"), at most `max` bytes. Errors (code bad_file): a
// missing or unreadable file, a directory, anything that is not a regular file or a pipe, a
// file over `max` — each one line naming the path.
Result<calldata::Bytes> read_input_file(const std::string& path, std::size_t max);

class ArgReader {
 public:
  // Argument `index` (1-based, for messages) of a transaction. Error code bad_arg.
  Result<calldata::Value> parse(std::string_view raw, std::size_t index = 1);

 private:
  bool stdin_used_ = false;
};

}  // namespace genvm::node
