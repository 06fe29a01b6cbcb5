#include "common/exe_dir.h"

#include <unistd.h>

#include <gtest/gtest.h>

namespace genvm {
namespace {

TEST(CommonExeDir, ExpandsEveryOccurrenceAndNothingElse) {
  EXPECT_EQ(expand_exe_dir("${exeDir}/../config/a.yaml", "/opt/g/bin"), "/opt/g/bin/../config/a.yaml");
  EXPECT_EQ(expand_exe_dir("${exeDir}:${exeDir}", "/x"), "/x:/x");
  EXPECT_EQ(expand_exe_dir("no variable, ${exedir} ${exeDir", "/x"), "no variable, ${exedir} ${exeDir");
  // A directory that itself contains the variable is not expanded again.
  EXPECT_EQ(expand_exe_dir("${exeDir}/a", "/${exeDir}"), "/${exeDir}/a");
}

TEST(CommonExeDir, IsTheDirectoryOfTheRunningBinary) {
  std::string dir = executable_dir();
  ASSERT_FALSE(dir.empty());
  EXPECT_EQ(dir.front(), '/');
  EXPECT_EQ(::access((dir + "/common_test").c_str(), X_OK), 0) << dir;
}

}  // namespace
}  // namespace genvm
