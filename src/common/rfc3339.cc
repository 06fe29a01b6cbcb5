#include "common/rfc3339.h"

#include <chrono>
#include <cstdio>

namespace genvm {
namespace {

Error bad(std::string_view text, const std::string& why) {
  return make_error("bad_timestamp", "\"" + std::string(text.substr(0, 64)) + "\" is not an RFC 3339 timestamp: " + why);
}

bool is_leap(std::int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(std::int64_t y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, int m, int d) {
  y -= m <= 2;
  std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  auto yoe = static_cast<std::int64_t>(y - era * 400);
  std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

struct Civil {
  std::int64_t y;
  int m, d;
};
Civil civil_from_days(std::int64_t z) {
  z += 719468;
  std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  std::int64_t doe = z - era * 146097;
  std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  std::int64_t mp = (5 * doy + 2) / 153;
  int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return {yoe + era * 400 + (m <= 2), m, d};
}

class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}
  bool digits(int n, int& out) {
    if (s_.size() - pos_ < static_cast<std::size_t>(n)) return false;
    out = 0;
    for (int i = 0; i < n; ++i) {
      char c = s_[pos_ + static_cast<std::size_t>(i)];
      if (c < '0' || c > '9') return false;
      out = out * 10 + (c - '0');
    }
    pos_ += static_cast<std::size_t>(n);
    return true;
  }
  bool one_of(std::string_view chars, char* got = nullptr) {
    if (pos_ >= s_.size() || chars.find(s_[pos_]) == std::string_view::npos) return false;
    if (got) *got = s_[pos_];
    ++pos_;
    return true;
  }
  bool at_digit() const { return pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9'; }
  char take() { return s_[pos_++]; }
  bool done() const { return pos_ == s_.size(); }

 private:
  std::string_view s_;
  std::size_t pos_ = 0;
};

}  // namespace

Result<UtcTime> parse_rfc3339(std::string_view text) {
  Scanner sc(text);
  int year, month, day, hour, minute, second;
  if (!sc.digits(4, year) || !sc.one_of("-") || !sc.digits(2, month) || !sc.one_of("-") || !sc.digits(2, day)) {
    return bad(text, "the date must be YYYY-MM-DD");
  }
  if (!sc.one_of("Tt ")) return bad(text, "the date and time must be separated by T");
  if (!sc.digits(2, hour) || !sc.one_of(":") || !sc.digits(2, minute) || !sc.one_of(":") || !sc.digits(2, second)) {
    return bad(text, "the time must be hh:mm:ss");
  }
  std::uint32_t nanos = 0;
  if (sc.one_of(".")) {
    if (!sc.at_digit()) return bad(text, "a '.' must be followed by digits");
    std::uint32_t scale = 100'000'000;
    while (sc.at_digit()) {
      auto d = static_cast<std::uint32_t>(sc.take() - '0');
      nanos += d * scale;
      scale /= 10;  // 0 after the ninth digit: the rest are read and dropped
    }
  }
  std::int64_t offset_seconds = 0;
  char sign = 0;
  if (sc.one_of("+-", &sign)) {
    int oh, om;
    if (!sc.digits(2, oh) || !sc.one_of(":") || !sc.digits(2, om) || oh > 23 || om > 59) {
      return bad(text, "the offset must be Z or +hh:mm");
    }
    offset_seconds = (oh * 3600 + om * 60) * (sign == '-' ? -1 : 1);
  } else if (!sc.one_of("Zz")) {
    return bad(text, "the offset must be Z or +hh:mm");
  }
  if (!sc.done()) return bad(text, "trailing characters");
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month)) return bad(text, "no such date");
  if (hour > 23 || minute > 59 || second > 60) return bad(text, "no such time");
  if (second == 60) {
    second = 59;
    nanos += 1'000'000'000;
  }
  std::int64_t local = days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
  return UtcTime{local - offset_seconds, nanos};
}

std::string format_rfc3339_utc(const UtcTime& t, bool use_z) {
  std::int64_t days = t.unix_seconds >= 0 ? t.unix_seconds / 86400 : -((-t.unix_seconds + 86399) / 86400);
  std::int64_t secs_of_day = t.unix_seconds - days * 86400;
  Civil c = civil_from_days(days);
  std::uint32_t nanos = t.nanos;
  int second = static_cast<int>(secs_of_day % 60);
  if (nanos >= 1'000'000'000) {
    nanos -= 1'000'000'000;
    second += 1;  // the leap second prints as :60
  }
  char year[32];
  if (c.y >= 0 && c.y <= 9999) {
    std::snprintf(year, sizeof year, "%04lld", static_cast<long long>(c.y));
  } else {
    std::snprintf(year, sizeof year, "%c%04lld", c.y < 0 ? '-' : '+', static_cast<long long>(c.y < 0 ? -c.y : c.y));
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s-%02d-%02dT%02d:%02d:%02d", year, c.m, c.d, static_cast<int>(secs_of_day / 3600),
                static_cast<int>(secs_of_day / 60 % 60), second);
  std::string out = buf;
  if (nanos != 0) {
    char frac[16];
    if (nanos % 1'000'000 == 0) {
      std::snprintf(frac, sizeof frac, ".%03u", nanos / 1'000'000);
    } else if (nanos % 1000 == 0) {
      std::snprintf(frac, sizeof frac, ".%06u", nanos / 1000);
    } else {
      std::snprintf(frac, sizeof frac, ".%09u", nanos);
    }
    out += frac;
  }
  out += use_z ? "Z" : "+00:00";
  return out;
}

std::int64_t unix_millis(const UtcTime& t) { return t.unix_seconds * 1000 + t.nanos / 1'000'000; }

UtcTime utc_now() {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::int64_t secs = ns / 1'000'000'000;
  std::int64_t rem = ns % 1'000'000'000;
  if (rem < 0) {
    rem += 1'000'000'000;
    --secs;
  }
  return UtcTime{secs, static_cast<std::uint32_t>(rem)};
}

}  // namespace genvm
