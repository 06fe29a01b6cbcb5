// The C SDK inside a real run (tests/executor/contracts/sdk_probe.c): typed arguments and their
// error messages, keyword arguments, string/bytes storage laid out as the spec's default
// derivation says, and a contract function that returns without a result.
#include "executor/sha3.h"
#include "executor_fixture.h"

namespace genvm {
namespace {

using calldata::Value;
using exec_test::addr;
using exec_test::read_file;
using exec_test::RunResult;

class SdkEntryTest : public exec_test::ExecutorTest {
 protected:
  void SetUp() override {
    ExecutorTest::SetUp();
    if (IsSkipped()) return;
    auto code = read_file(contracts_ + "sdk_probe.wasm");
    if (code.empty()) GTEST_SKIP() << "needs " << contracts_ << "sdk_probe.wasm (target genvm_executor_test_contracts)";
    deploy_code(code, kContract);
  }
  RunResult call_probe(Value entry) { return run(data(kContract, addr(0xaa), std::move(entry), false, std::nullopt)); }
  const calldata::Address kContract = addr(5);
};

TEST_F(SdkEntryTest, AFunctionThatReturnsWithoutAResultIsAUserErrorNotANull) {
  auto r = call_probe(call("forget"));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(*r.report.find("kind"), Value("UserError"));
  EXPECT_EQ(*r.report.find("data"), Value("the contract function returned without gl_return or gl_user_error"));
  // The leader of a block: its [code][data] is the UserError, handed back to the caller.
  auto b = call_probe(call("forget_block"));
  ASSERT_EQ(*b.report.find("kind"), Value("Return")) << calldata::to_text(*b.report.find("data"));
  const auto& leader = b.report.find("data")->as_bytes();
  ASSERT_FALSE(leader.empty());
  EXPECT_EQ(leader[0], 1);  // UserError
  auto text = calldata::decode(std::span<const std::uint8_t>(leader.data() + 1, leader.size() - 1));
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, Value("a non-deterministic block's leader function returned without gl_return or gl_user_error"));
}

TEST_F(SdkEntryTest, TypedArgumentsAndKeywordArguments) {
  Value args = Value::array({Value(addr(0x11)), Value(~std::uint64_t(0)), Value(INT64_MIN), Value("s"),
                             Value(calldata::Bytes{9, 8}), Value(true)});
  auto plain = call_probe(Value::map({{"", "typed"}, {"args", args}}));
  ASSERT_EQ(*plain.report.find("kind"), Value("Return")) << calldata::to_text(*plain.report.find("data"));
  auto want = args.as_array();
  want.push_back(Value());
  EXPECT_EQ(*plain.report.find("data"), Value(want));
  auto with_memo = call_probe(Value::map({{"", "typed"}, {"args", args}, {"kwargs", Value::map({{"memo", "m"}})}}));
  want.back() = Value("m");
  EXPECT_EQ(*with_memo.report.find("data"), Value(want));
}

TEST_F(SdkEntryTest, ArgumentErrorsNameTheArgumentAndTheKinds) {
  auto wrong = call_probe(Value::map({{"", "typed"},
                                      {"args", Value::array({Value(addr(1)), Value(-1), Value(0), Value("s"),
                                                             Value(calldata::Bytes{}), Value(true)})}}));
  EXPECT_EQ(*wrong.report.find("kind"), Value("UserError"));
  EXPECT_EQ(*wrong.report.find("data"), Value("argument 2 of typed: expected an unsigned 64-bit integer, got a negative integer"));
  auto few = call_probe(Value::map({{"", "typed"}, {"args", Value::array({1})}}));
  EXPECT_EQ(*few.report.find("data"), Value("typed takes 6 arguments, got 1"));
  Value args = Value::array({Value(addr(1)), Value(1), Value(0), Value("s"), Value(calldata::Bytes{}), Value(true)});
  auto memo = call_probe(Value::map({{"", "typed"}, {"args", args}, {"kwargs", Value::map({{"memo", 3}})}}));
  EXPECT_EQ(*memo.report.find("data"), Value("keyword argument memo of typed: expected a string, got an unsigned integer"));
}

// 04-contract-interface/03-storage.rst: the length as u32 little-endian at the field's offset,
// the content at sha3_256(slot || offset as u32 little-endian).
TEST_F(SdkEntryTest, BytesInStorageFollowTheDefaultDerivation) {
  calldata::Bytes content(5000);
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<std::uint8_t>(i * 7);
  auto st = call_probe(call("store", {Value(content)}));
  ASSERT_EQ(*st.report.find("kind"), Value("Return")) << calldata::to_text(*st.report.find("data"));
  auto ld = call_probe(call("load"));
  EXPECT_EQ(*ld.report.find("data"), Value(content));

  auto derive = [](std::span<const std::uint8_t> slot, std::uint32_t offset) {
    calldata::Bytes in(slot.begin(), slot.end());
    for (int i = 0; i < 4; ++i) in.push_back(static_cast<std::uint8_t>(offset >> (8 * i)));
    return executor::sha3_256(in);
  };
  std::array<std::uint8_t, 32> root{};
  auto contract_slot = derive(root, 1);
  auto content_slot = derive(contract_slot, 4);
  host_.with_state([&](test_host::State& s) {
    auto at = [&](const std::array<std::uint8_t, 32>& slot) -> const calldata::Bytes* {
      for (const auto& [key, bytes] : s.storage) {
        if (key.first == kContract.bytes && std::equal(key.second.begin(), key.second.end(), slot.begin())) return &bytes;
      }
      return nullptr;
    };
    const calldata::Bytes* head = at(contract_slot);
    EXPECT_TRUE(head && head->size() >= 8);
    if (head && head->size() >= 8) {
      EXPECT_EQ(calldata::Bytes(head->begin() + 4, head->begin() + 8), (calldata::Bytes{0x88, 0x13, 0, 0}));  // 5000
    }
    const calldata::Bytes* body = at(content_slot);
    EXPECT_TRUE(body && body->size() >= content.size());
    if (body && body->size() >= content.size()) {
      EXPECT_EQ(calldata::Bytes(body->begin(), body->begin() + static_cast<std::ptrdiff_t>(content.size())), content);
    }
    return 0;
  });
}

}  // namespace
}  // namespace genvm
