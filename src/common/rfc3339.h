// RFC 3339 timestamps as the public manager reads and writes them (chrono's
// `DateTime::parse_from_rfc3339`, then `to_rfc3339_opts(SecondsFormat::AutoSi, true)` in UTC):
// the request's `timestamp` and `message.datetime`, and the manifest's `available_after`.
//
//   auto t = parse_rfc3339("2025-01-01T01:00:00.5+01:00");   // the same instant in UTC
//   format_rfc3339_utc(*t) == "2025-01-01T00:00:00.500Z"
//
// Accepted: YYYY-MM-DD, then 'T', 't' or ' ', then hh:mm:ss, an optional fraction of one or
// more digits (nanoseconds; digits past the ninth are dropped), then 'Z', 'z' or ±hh:mm. The
// calendar is checked (months, days of month, leap years); second 60 is a leap second, kept as
// chrono keeps it (nanoseconds from 1e9) and printed as :60.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace genvm {

struct UtcTime {
  std::int64_t unix_seconds = 0;  // the leap second counts as :59 of its minute...
  std::uint32_t nanos = 0;        // ...with nanos in [1e9, 2e9)
  friend auto operator<=>(const UtcTime&, const UtcTime&) = default;
};

// Error code "bad_timestamp".
Result<UtcTime> parse_rfc3339(std::string_view text);
// AutoSi: no fraction, or 3, 6 or 9 digits, whichever shows every non-zero digit; "Z", or
// "+00:00" when !use_z (chrono's plain to_rfc3339()).
std::string format_rfc3339_utc(const UtcTime& t, bool use_z = true);
// Milliseconds since the Unix epoch (chrono's timestamp_millis: floor division).
std::int64_t unix_millis(const UtcTime& t);
UtcTime utc_now();

}  // namespace genvm
