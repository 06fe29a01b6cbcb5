// Test-only (included by src/node/*_test.cc): a temporary folder holding a node database,
// removed with everything in it when the test ends, so no test leaves files in /tmp.
//
//   class MyTest : public node::testing::StateDir {};   // dir_, path_ (dir_/state.db)
//   TEST_F(MyTest, X) { ASSERT_TRUE(open_state()); state_->... }
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "node/state.h"

namespace genvm::node::testing {

class StateDir : public ::testing::Test {
 protected:
  void SetUp() override { make_dir(); }
  void TearDown() override {
    state_.reset();  // close the database before its files go
    if (dir_.empty()) return;
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  // Fixtures whose SetUp may skip first call this themselves, so a skip creates nothing.
  void make_dir() {
    if (!dir_.empty()) return;
    char tmpl[] = "/tmp/genvm-node-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/state.db";
  }
  // Opens (creating if needed) path_ into state_; false with a test failure when it cannot.
  bool open_state() {
    auto st = State::open(path_);
    EXPECT_TRUE(st.ok()) << st.error().to_string();
    if (!st.ok()) return false;
    state_ = std::move(*st);
    return true;
  }

  std::string dir_, path_;
  std::unique_ptr<State> state_;
};

}  // namespace genvm::node::testing
