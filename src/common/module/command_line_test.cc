#include "common/module/command_line.h"

#include <gtest/gtest.h>

#include <vector>

namespace genvm::module {
namespace {

Result<ModuleCommandLine> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "genvm-module-test");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return parse_module_command_line(static_cast<int>(argv.size()), argv.data(), "${exeDir}/../config/m.yaml");
}

TEST(ModuleCommandLine, DefaultsExpandExeDirAndFlagsTakeBothSpellings) {
  auto d = parse({});
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->help);
  EXPECT_EQ(d->config_path, d->exe_dir + "/../config/m.yaml");
  EXPECT_TRUE(d->bind.empty());
  auto both = parse({"--config=/etc/m.yaml", "--bind", "127.0.0.1:3031"});
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->config_path, "/etc/m.yaml");
  EXPECT_EQ(both->bind, "127.0.0.1:3031");
  EXPECT_TRUE(parse({"--help"})->help);
}

TEST(ModuleCommandLine, AnUnknownArgumentIsOneLineNamingIt) {
  auto r = parse({"--configx=1"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "unknown argument '--configx=1' (see --help)");
  auto dangling = parse({"--bind"});  // a flag without its value is unknown, not a crash
  EXPECT_FALSE(dangling.ok());
}

}  // namespace
}  // namespace genvm::module
