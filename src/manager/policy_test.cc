#include "manager/policy.h"

#include <gtest/gtest.h>

namespace genvm::manager {
namespace {

// The whole table: caller x requested level x config -> accepted / clamped to X / rejected.
TEST(ManagerPolicy, DecisionTable) {
  const char* kLevels[] = {"disabled", "safe", "safe-unbounded", "unsafe", "unsafe-tracing"};
  struct Cfg { DebugPolicy p; const char* name; };
  const Cfg configs[] = {
      {{DebugMode::kSafe, false}, "max=safe,reject"},
      {{DebugMode::kSafe, true}, "max=safe,clamp"},
      {{DebugMode::kDisabled, false}, "max=disabled,reject"},
      {{DebugMode::kSafeUnbounded, true}, "max=safe-unbounded,clamp"},
  };
  // expected[config][trusted][level]: "A" accepted as asked, "C:<level>" clamped, "R" rejected.
  const char* expected[4][2][5] = {
      {{"A", "A", "R", "R", "R"}, {"A", "A", "A", "A", "A"}},
      {{"A", "A", "C:safe", "C:safe", "C:safe"}, {"A", "A", "A", "A", "A"}},
      {{"A", "R", "R", "R", "R"}, {"A", "A", "A", "A", "A"}},
      {{"A", "A", "A", "C:safe-unbounded", "C:safe-unbounded"}, {"A", "A", "A", "A", "A"}},
  };
  for (int c = 0; c < 4; ++c) {
    for (int t = 0; t < 2; ++t) {
      for (int l = 0; l < 5; ++l) {
        Caller caller{t == 1, t == 1 ? "uid:0" : "tcp:127.0.0.1"};
        PolicyDecision d = decide_debug_mode(caller, kLevels[l], configs[c].p);
        std::string want = expected[c][t][l];
        std::string got;
        switch (d.outcome) {
          case PolicyOutcome::kAccepted:
            got = "A";
            EXPECT_EQ(to_string(d.granted), kLevels[l]);
            break;
          case PolicyOutcome::kClamped: got = "C:" + std::string(to_string(d.granted)); break;
          case PolicyOutcome::kRejected: got = "R"; break;
        }
        EXPECT_EQ(got, want) << configs[c].name << " trusted=" << t << " level=" << kLevels[l];
        EXPECT_FALSE(d.reason.empty());
      }
    }
  }
}

TEST(ManagerPolicy, UnknownLevelIsRejectedEvenForTrustedCallers) {
  for (bool clamp : {false, true}) {
    for (bool trusted : {false, true}) {
      PolicyDecision d = decide_debug_mode({trusted, "x"}, "debug", {DebugMode::kSafe, clamp});
      EXPECT_EQ(d.outcome, PolicyOutcome::kRejected);
      EXPECT_FALSE(d.requested.has_value());
    }
  }
  EXPECT_EQ(decide_debug_mode({true, "x"}, "SAFE", {}).outcome, PolicyOutcome::kRejected);
  EXPECT_EQ(decide_debug_mode({true, "x"}, "", {}).outcome, PolicyOutcome::kRejected);
}

TEST(ManagerPolicy, DefaultPolicyTreatsEveryLevelAboveSafeAsPrivileged) {
  DebugPolicy p;
  for (int l = 0; l <= 4; ++l) {
    auto mode = static_cast<DebugMode>(l);
    auto d = decide_debug_mode({false, "anon"}, to_string(mode), p);
    EXPECT_EQ(d.outcome == PolicyOutcome::kRejected, is_privileged(mode)) << to_string(mode);
  }
}

TEST(ManagerPolicy, DecisionLogLineIsOneJsonObject) {
  auto d = decide_debug_mode({false, "uid:1000"}, "unsafe", {DebugMode::kSafe, true});
  std::string line = to_json({false, "uid:1000"}, "unsafe", d);
  EXPECT_EQ(line,
            "{\"event\":\"debug_mode_decision\",\"caller\":\"uid:1000\",\"trusted\":false,"
            "\"requested\":\"unsafe\",\"outcome\":\"clamped\",\"granted\":\"safe\","
            "\"reason\":\"untrusted caller: unsafe clamped to safe\"}");
  auto r = decide_debug_mode({false, "t"}, "bad\"\n\x01", {});
  std::string bad = to_json({false, "t"}, "bad\"\n\x01", r);
  EXPECT_NE(bad.find("\"requested\":\"bad\\\"\\n\\u0001\""), std::string::npos) << bad;
  EXPECT_EQ(bad.find('\n'), std::string::npos);
}

// Every flag the manager sets on genvm's command line (executor_link.cc), and the ones no request
// may choose; a value after '=' does not hide the name. Fails if one is missing from the list.
TEST(ManagerPolicy, ReservedExecutorFlagsAreRecognisedWithOrWithoutAValue) {
  for (const char* f : {"--debug-mode", "--host", "--permissions", "--genvm-id", "--sync", "--module-llm",
                        "--module-web", "--module-cache", "--config", "--execution-data", "--log-fd"}) {
    EXPECT_TRUE(is_reserved_executor_flag(f)) << f;
    EXPECT_TRUE(is_reserved_executor_flag(std::string(f) + "=x")) << f;
  }
  for (const char* a : {"--nondet-fuel=5", "--debug-modes", "debug-mode", "-", "exit 0"}) {
    EXPECT_FALSE(is_reserved_executor_flag(a)) << a;
  }
}

TEST(ManagerPolicy, ExtraArgsAreAllowedToTrustedCallersAndTheAllowlistOnly) {
  ExtraArgsPolicy p{{"--nondet-fuel=*", "--x"}};
  Caller untrusted{false, "tcp:127.0.0.1", "conn:1"}, trusted{true, "uid:0", "uid:0"};
  EXPECT_FALSE(refuse_extra_args(untrusted, {}, p));
  EXPECT_FALSE(refuse_extra_args(untrusted, {"--nondet-fuel=9", "--x"}, p));
  EXPECT_TRUE(refuse_extra_args(untrusted, {"--x", "--y"}, p));
  EXPECT_TRUE(refuse_extra_args(untrusted, {"--x"}, {}));
  EXPECT_FALSE(refuse_extra_args(trusted, {"--y"}, {}));
  auto reserved = refuse_extra_args(trusted, {"--y", "--debug-mode", "unsafe-tracing"}, {{"*"}});
  ASSERT_TRUE(reserved);
  EXPECT_NE(reserved->find("\"--debug-mode\""), std::string::npos) << *reserved;
  EXPECT_TRUE(refuse_extra_args(untrusted, {"--module-cache=/tmp"}, {{"*"}})) << "'*' never reaches a reserved flag";
}

TEST(ManagerPolicy, PerCallerARunIsUsableByItsOwnerAndTrustedCallers) {
  constexpr auto kStrict = RunOwnership::kPerCaller;
  EXPECT_TRUE(may_use_run({false, "tcp:x", "conn:1"}, "conn:1", kStrict));
  EXPECT_FALSE(may_use_run({false, "tcp:x", "conn:2"}, "conn:1", kStrict));
  EXPECT_TRUE(may_use_run({true, "uid:0", "uid:0"}, "conn:1", kStrict));
}

// The public manager's model: a host that reconnects uses its runs from the new connection.
TEST(ManagerPolicy, SharedEveryCallerMayUseEveryRun) {
  EXPECT_TRUE(may_use_run({false, "tcp:x", "conn:2"}, "conn:1", RunOwnership::kShared));
  EXPECT_TRUE(may_use_run({false, "uid:5", "uid:5"}, "token:ab", RunOwnership::kShared));
}

}  // namespace
}  // namespace genvm::manager
