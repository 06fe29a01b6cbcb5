#include "executor/log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace genvm::executor {
namespace {

std::string drain(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<std::size_t>(n));
  return out;
}

// The public manager's reader (run.rs read_log_pipe) takes one JSON object per line and reads
// its `level`: the line must start with it and be valid JSON whatever the message holds.
TEST(Logger, WritesOneJsonObjectPerLineWithALevel) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  {
    Logger log(p[1], LogLevel::kInfo);
    log.info("genvm::run", "result", {{"kind", LogValue::str("Return")}, {"n", LogValue::num(std::uint64_t(7))}});
    log.debug("genvm::run", "not written: below the level");
    log.warn("genvm::vm", std::string("bad \xff utf8 \"q\"\n\x01", 17));
  }
  ::close(p[1]);
  std::string text = drain(p[0]);
  ::close(p[0]);
  auto nl = text.find('\n');
  ASSERT_NE(nl, std::string::npos);
  std::string first = text.substr(0, nl);
  EXPECT_EQ(first.rfind("{\"level\":\"info\",\"target\":\"genvm::run\",\"message\":\"result\",\"kind\":\"Return\",\"n\":7,\"ts\":\"", 0), 0u) << first;
  std::string second = text.substr(nl + 1);
  EXPECT_EQ(second.rfind("{\"level\":\"warn\"", 0), 0u) << second;
  EXPECT_NE(second.find("bad \\u00ff utf8 \\\"q\\\"\\n\\u0001"), std::string::npos) << second;
  EXPECT_EQ(second.back(), '\n');
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
}

TEST(Logger, LevelsParseAsThePublicLoggerDoes) {
  EXPECT_EQ(*parse_log_level("WARNING"), LogLevel::kWarn);
  EXPECT_EQ(*parse_log_level("trace"), LogLevel::kTrace);
  EXPECT_EQ(parse_log_level("loud").error().code, "bad_log_level");
  EXPECT_FALSE(Logger().enabled(LogLevel::kError));  // no descriptor: nothing at all
}

}  // namespace
}  // namespace genvm::executor
