#include "executor/engine_choice.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "wasm/jit/jit.h"

namespace genvm::executor {
namespace {

// Each test sets GENVM_ENGINE as it needs and puts back what the process had (the ctest
// _interp variants run with GENVM_ENGINE=interp).
class EngineChoiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* e = std::getenv("GENVM_ENGINE")) saved_ = e;
    ::unsetenv("GENVM_ENGINE");
    char tmpl[] = "/tmp/genvm-engine-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (saved_) ::setenv("GENVM_ENGINE", saved_->c_str(), 1);
    else ::unsetenv("GENVM_ENGINE");
    std::remove(config_.c_str());
    ::rmdir(dir_.c_str());
  }
  const std::string& config(const std::string& text) {
    config_ = dir_ + "/genvm.yaml";
    std::ofstream(config_) << text;
    return config_;
  }
  std::optional<std::string> saved_;
  std::string dir_, config_;
};

TEST_F(EngineChoiceTest, DefaultIsTheJitWhereTheCpuSupportsIt) {
  auto c = choose_engine("");
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->engine, wasm::jit::cpu_supports_jit() ? wasm::Engine::kJit : wasm::Engine::kInterp);
  EXPECT_EQ(c->why.rfind("default: this CPU ", 0), 0u) << c->why;
  // A config file without the key leaves the default.
  auto d = choose_engine(config("runners_dir: /nowhere\n"));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->engine, c->engine);
}

TEST_F(EngineChoiceTest, TheConfigKeyChoosesAndTheEnvironmentOverridesIt) {
  const std::string& file = config("engine: interp\n");
  auto c = choose_engine(file);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->engine, wasm::Engine::kInterp);
  EXPECT_EQ(c->why, "the --config file's engine key");
  ::setenv("GENVM_ENGINE", "jit", 1);
  auto e = choose_engine(file);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->engine, wasm::Engine::kJit);
  EXPECT_EQ(e->why, "GENVM_ENGINE=jit");
}

TEST_F(EngineChoiceTest, ABadValueIsAnErrorNamingWhereItCameFrom) {
  ::setenv("GENVM_ENGINE", "JIT", 1);  // names are exact
  auto e = choose_engine("");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, "engine");
  EXPECT_EQ(e.error().message, "GENVM_ENGINE: 'JIT' is not an engine (interp or jit)");
  ::unsetenv("GENVM_ENGINE");
  auto k = choose_engine(config("engine: wasmtime\n"));
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.error().message.find("engine: 'wasmtime' is not an engine"), std::string::npos) << k.error().message;
  auto y = choose_engine(config("engine: [unclosed\n"));
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.error().code, "engine_config");
}

}  // namespace
}  // namespace genvm::executor
