// RFC 3339 as chrono parses it and prints it with SecondsFormat::AutoSi in UTC.
#include "common/rfc3339.h"

#include <gtest/gtest.h>

namespace genvm {
namespace {

std::string normalized(std::string_view text) {
  auto t = parse_rfc3339(text);
  EXPECT_TRUE(t.ok()) << text << ": " << t.error().to_string();
  return t.ok() ? format_rfc3339_utc(*t) : "<error>";
}

TEST(ManagerRfc3339, OffsetsBecomeUtcAndFractionsPrintInAutoSiWidths) {
  EXPECT_EQ(normalized("2024-11-26T06:42:42.424242Z"), "2024-11-26T06:42:42.424242Z");
  EXPECT_EQ(normalized("2025-01-01T01:00:00+01:00"), "2025-01-01T00:00:00Z");
  EXPECT_EQ(normalized("2024-12-31t23:30:00.5-00:45"), "2025-01-01T00:15:00.500Z");
  EXPECT_EQ(normalized("2024-02-29 12:00:00.000000001z"), "2024-02-29T12:00:00.000000001Z");
  EXPECT_EQ(normalized("2024-02-29T12:00:00.1000Z"), "2024-02-29T12:00:00.100Z");
  EXPECT_EQ(normalized("2024-02-29T12:00:00.000100Z"), "2024-02-29T12:00:00.000100Z");
  EXPECT_EQ(normalized("2024-02-29T12:00:00.1234567891234Z"), "2024-02-29T12:00:00.123456789Z") << "past 9 digits";
  EXPECT_EQ(normalized("2024-02-29T12:00:00.000Z"), "2024-02-29T12:00:00Z");
  EXPECT_EQ(normalized("1969-12-31T23:59:59Z"), "1969-12-31T23:59:59Z");
  EXPECT_EQ(normalized("0000-01-01T00:00:00Z"), "0000-01-01T00:00:00Z");
  EXPECT_EQ(normalized("9999-12-31T23:59:59-01:00"), "+10000-01-01T00:59:59Z");
  EXPECT_EQ(normalized("2016-12-31T23:59:60.5Z"), "2016-12-31T23:59:60.500Z") << "a leap second is kept";
  EXPECT_EQ(format_rfc3339_utc(*parse_rfc3339("2025-01-01T00:00:00.5Z"), false), "2025-01-01T00:00:00.500+00:00");
}

TEST(ManagerRfc3339, InstantsCompareAndGiveEpochMillis) {
  auto a = parse_rfc3339("2024-09-01T00:00:00Z");
  auto b = parse_rfc3339("2024-09-01T02:00:00+02:00");
  auto c = parse_rfc3339("2024-09-01T00:00:00.001Z");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_LT(*a, *c);
  EXPECT_EQ(unix_millis(*c), 1725148800001);
  EXPECT_EQ(unix_millis(*parse_rfc3339("1970-01-01T00:00:00Z")), 0);
  EXPECT_GT(unix_millis(utc_now()), unix_millis(*a));
}

TEST(ManagerRfc3339, RefusesWhatChronoRefuses) {
  for (std::string_view bad : {"", "2024-09-01", "2024-09-01T00:00Z", "2024-09-01T00:00:00", "2024-9-01T00:00:00Z",
                               "2024-13-01T00:00:00Z", "2023-02-29T00:00:00Z", "2024-04-31T00:00:00Z",
                               "2024-09-01T24:00:00Z", "2024-09-01T00:60:00Z", "2024-09-01T00:00:61Z",
                               "2024-09-01T00:00:00.Z", "2024-09-01T00:00:00+0100", "2024-09-01T00:00:00+24:00",
                               "2024-09-01T00:00:00ZZ", "2024-09-01X00:00:00Z", "+2024-09-01T00:00:00Z",
                               "1725148800"}) {
    auto t = parse_rfc3339(bad);
    EXPECT_FALSE(t.ok()) << "accepted: " << bad;
    if (!t.ok()) {
      EXPECT_EQ(t.error().code, "bad_timestamp");
    }
  }
}

}  // namespace
}  // namespace genvm
