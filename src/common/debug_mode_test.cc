#include "common/debug_mode.h"

#include <gtest/gtest.h>

namespace genvm {
namespace {

TEST(DebugMode, ParsesAndPrintsEveryLevel) {
  for (auto name : {"disabled", "safe", "safe-unbounded", "unsafe", "unsafe-tracing"}) {
    auto mode = parse_debug_mode(name);
    ASSERT_TRUE(mode) << name;
    EXPECT_EQ(to_string(*mode), name);
  }
}

TEST(DebugMode, UnknownNameIsAnErrorNotADowngrade) {
  for (auto name : {"", "Safe", "debug", "unsafe_tracing", "disabled ", "safe-unbounded2"}) {
    auto mode = parse_debug_mode(name);
    ASSERT_FALSE(mode) << name;
    EXPECT_EQ(mode.error().code, "unknown_debug_mode");
  }
}

TEST(DebugMode, LevelsAreOrdered) {
  EXPECT_LT(DebugMode::kDisabled, DebugMode::kSafe);
  EXPECT_LT(DebugMode::kSafe, DebugMode::kSafeUnbounded);
  EXPECT_LT(DebugMode::kSafeUnbounded, DebugMode::kUnsafe);
  EXPECT_LT(DebugMode::kUnsafe, DebugMode::kUnsafeTracing);
  EXPECT_EQ(kDefaultDebugMode, DebugMode::kDisabled);
}

// The seed's table, row by row: capture, tracing, latest resolution, nondeterminism.
TEST(DebugMode, CapabilitiesMatchTheSeedTable) {
  struct Row {
    DebugMode mode;
    Capture capture;
    bool tracing, latest, nondet, privileged;
  };
  const Row rows[] = {
      {DebugMode::kDisabled, Capture::kDisabled, false, false, false, false},
      {DebugMode::kSafe, Capture::kBounded, false, false, false, false},
      {DebugMode::kSafeUnbounded, Capture::kUnbounded, true, false, false, true},
      {DebugMode::kUnsafe, Capture::kUnbounded, true, true, false, true},
      {DebugMode::kUnsafeTracing, Capture::kUnbounded, true, true, true, true},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(std::string(to_string(r.mode)));
    EXPECT_EQ(capture(r.mode), r.capture);
    EXPECT_EQ(allows_tracing(r.mode), r.tracing);
    EXPECT_EQ(allows_latest_resolution(r.mode), r.latest);
    EXPECT_EQ(allows_nondeterminism(r.mode), r.nondet);
    EXPECT_EQ(is_privileged(r.mode), r.privileged);
  }
}

TEST(DebugMode, BoundedCaptureLimits) {
  EXPECT_EQ(kBoundedLogEntries, 128u);
  EXPECT_EQ(kBoundedStreamTailBytes, 4u * 1024 * 1024);
  EXPECT_EQ(to_string(Capture::kBounded), "bounded");
}

}  // namespace
}  // namespace genvm
