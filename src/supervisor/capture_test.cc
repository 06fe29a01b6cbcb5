#include <gtest/gtest.h>

#include "supervisor/test_util.h"

namespace genvm::supervisor {
namespace {

using namespace std::chrono_literals;
using testing::shell;

TEST(StreamCapture, BoundedKeepsTheTailAcrossRingWraps) {
  StreamCapture c(Capture::kBounded, 10);
  c.append("0123456");
  c.append("789abc");   // wraps
  c.append("de");
  EXPECT_EQ(c.total_bytes(), 15u);
  EXPECT_TRUE(c.truncated());
  EXPECT_EQ(c.take(), "56789abcde");
}

TEST(StreamCapture, BoundedChunkLargerThanTheTailKeepsItsEnd) {
  StreamCapture c(Capture::kBounded, 4);
  c.append("ab");
  c.append("0123456789");
  EXPECT_EQ(c.take(), "6789");
}

TEST(StreamCapture, UnboundedKeepsAllAndDisabledNothing) {
  StreamCapture u(Capture::kUnbounded, 4), d(Capture::kDisabled, 4);
  for (auto* c : {&u, &d}) {
    c->append("hello ");
    c->append("world");
  }
  EXPECT_EQ(u.take(), "hello world");
  EXPECT_FALSE(u.truncated());
  EXPECT_EQ(d.take(), "");
  EXPECT_EQ(d.total_bytes(), 11u);
}

TEST(LogCapture, BoundedKeepsTheNewestEntriesInOrder) {
  LogCapture c(Capture::kBounded, 3);
  c.append("a\nb\nc");
  c.append("c\nd\ne\n");
  auto logs = c.take();
  ASSERT_EQ(logs.size(), 3u);
  EXPECT_EQ(logs[0], "cc");  // a line split across reads is one entry
  EXPECT_EQ(logs[1], "d");
  EXPECT_EQ(logs[2], "e");
  EXPECT_EQ(c.dropped(), 2u);
}

TEST(LogCapture, AFinalUnterminatedLineCounts) {
  LogCapture c(Capture::kUnbounded);
  c.append("x\ny");
  EXPECT_EQ(c.take(), (std::vector<std::string>{"x", "y"}));
}

// Real processes from here on.

TEST(ExecuteCapture, BoundedKeepsTheRightTailOfA100MiBBurst) {
  Supervisor sup;
  // 100 MiB of 'a' then a marker; the kept tail is the last 4 MiB, ending with the marker.
  auto req = shell("head -c 104857600 /dev/zero | tr '\\0' a; printf END; head -c 100 /dev/zero >&2");
  req.capture = Capture::kBounded;
  auto r = sup.execute(req);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->exit_code, 0);
  ASSERT_EQ(r->stdout_data.size(), kBoundedStreamTailBytes);
  EXPECT_TRUE(r->stdout_truncated);
  EXPECT_EQ(r->stdout_data.substr(r->stdout_data.size() - 4), "aEND");
  EXPECT_EQ(r->stdout_data.find_first_not_of('a'), kBoundedStreamTailBytes - 3);
  EXPECT_EQ(r->stderr_data.size(), 100u);
}

TEST(ExecuteCapture, OutputOfAGrandchildAfterTheLeaderExitedIsCaptured) {
  // The leader exits at once; its backgrounded child writes 300 ms later. Fails if reading
  // stops at the leader's exit.
  Supervisor sup;
  auto req = shell("(sleep 0.3; echo late) & echo early");
  req.capture = Capture::kUnbounded;
  auto r = sup.execute(req);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->stdout_data, "early\nlate\n");
  EXPECT_FALSE(r->left_running);
}

TEST(ExecuteCapture, BoundedLogCaptureKeepsThe128NewestEntries) {
  Supervisor sup;
  ExecuteRequest req;
  req.argv = {testing::self_exe()};
  req.env = {{"GENVM_SUPERVISOR_HELPER", "logs"}, {"GENVM_SUPERVISOR_HELPER_ARG", "1000"}};
  req.log_fd = 3;
  req.capture = Capture::kBounded;
  auto r = sup.execute(req);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->logs.size(), kBoundedLogEntries);
  EXPECT_EQ(r->logs.front(), "{\"n\":872}");
  EXPECT_EQ(r->logs.back(), "{\"n\":999}");
}

TEST(ExecuteCapture, DisabledSendsStreamsToDevNullAndReturnsEmptyFields) {
  Supervisor sup;
  auto req = shell("echo out; echo err >&2");
  req.capture = Capture::kDisabled;
  auto r = sup.execute(req);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_TRUE(r->stdout_data.empty());
  EXPECT_TRUE(r->stderr_data.empty());
}

TEST(ExecuteCapture, AnEscapeeHoldingThePipeIsCutAfterTheDrainAndReportedLeftRunning) {
  // Without containment a setsid'd process leaves the group but keeps stdout: the read must
  // end once the group is gone plus the drain bound, and say left_running.
  SupervisorOptions o;
  o.containment = false;
  Supervisor sup(o);
  testing::ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  auto req = shell("setsid sh -c 'echo $$ > " + dir + "/esc; exec sleep 30' & sleep 0.2; echo done");
  req.capture = Capture::kBounded;
  req.drain = 100ms;
  auto start = std::chrono::steady_clock::now();
  auto r = sup.execute(req);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_TRUE(r->left_running);
  EXPECT_EQ(r->stdout_data, "done\n");
  testing::kill_if_alive(testing::read_pid_file(dir + "/esc"));
}

}  // namespace
}  // namespace genvm::supervisor
