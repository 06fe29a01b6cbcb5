// The text the node keeps or prints of a contract's result: calldata text form, bounded in size
// and in the work spent on it, so a hostile result cannot keep the node busy after its run or
// grow a receipt past a bound (issue 19 items 7 and 13).
//
//   std::string t = result_text(value);                 // exact calldata text when small
//   std::string t = result_text(value, {.max_chars = 4096});
//
// Within the limits the text is calldata::to_text's, exact. Past them it is cut: an integer
// above `max_int_bits` is shown as a quoted note with its bit length and leading hex digits
// (its decimal form is never computed), bytes and strings are cut, arrays and maps stop once
// the text is long enough, and a note at the end says how long the full text would have been.
#pragma once

#include <cstddef>
#include <string>

#include "common/calldata.h"

namespace genvm::node {

struct ResultTextLimits {
  std::size_t max_chars = 64 * 1024;  // the text's length before the closing note
  std::size_t max_int_bits = 32768;   // about 9,900 decimal digits
};

std::string result_text(const calldata::Value& value, const ResultTextLimits& limits = {});

}  // namespace genvm::node
