#include <gtest/gtest.h>

#include "supervisor/supervisor.h"

namespace genvm::supervisor {
namespace {

const char* const kSource[] = {"PATH=/usr/bin:/bin", "HOME=/root", "SECRET=hunter2", "FOO=foo",
                               "EMPTY=", nullptr};

TEST(BuildEnv, CopiesEssentialsAndStripsUndeclared) {
  auto env = build_env({}, kSource);
  EXPECT_EQ(env.at("PATH"), "/usr/bin:/bin");
  EXPECT_EQ(env.at("HOME"), "/root");
  EXPECT_EQ(env.count("SECRET"), 0u);
  EXPECT_EQ(env.count("FOO"), 0u);
}

TEST(BuildEnv, EssentialMissingFromSourceIsAbsentNotEmpty) {
  auto env = build_env({}, kSource);
  EXPECT_EQ(env.count("TMPDIR"), 0u);
  EXPECT_EQ(env.count("USER"), 0u);
  EXPECT_EQ(env.size(), 2u);
}

TEST(BuildEnv, PassThroughForwardsPresentNamesOnly) {
  EnvOptions o;
  o.pass_through = {"FOO", "MISSING", "EMPTY"};
  auto env = build_env(o, kSource);
  EXPECT_EQ(env.at("FOO"), "foo");
  EXPECT_EQ(env.count("MISSING"), 0u);
  EXPECT_EQ(env.at("EMPTY"), "");  // present in the source as empty: passed as empty
}

TEST(BuildEnv, DefineOverridesPassThroughAndEssentials) {
  EnvOptions o;
  o.pass_through = {"FOO"};
  o.define = {{"FOO", "defined"}, {"HOME", "/elsewhere"}, {"NEW", "1"}};
  auto env = build_env(o, kSource);
  EXPECT_EQ(env.at("FOO"), "defined");
  EXPECT_EQ(env.at("HOME"), "/elsewhere");
  EXPECT_EQ(env.at("NEW"), "1");
}

TEST(BuildEnv, PathPrefixesGoFirstAfterDefineAndSkipEntriesHoldingColon) {
  EnvOptions o;
  o.define = {{"PATH", "/defined"}};
  o.path_prefixes = {"/a/bin", "/b:c", "/d/bin"};
  auto env = build_env(o, kSource);
  EXPECT_EQ(env.at("PATH"), "/a/bin:/d/bin:/defined");
}

TEST(BuildEnv, PathPrefixWithoutAnyPathBecomesThePath) {
  EnvOptions o;
  o.path_prefixes = {"/only"};
  const char* const src[] = {"HOME=/h", nullptr};
  EXPECT_EQ(build_env(o, src).at("PATH"), "/only");
}

}  // namespace
}  // namespace genvm::supervisor
