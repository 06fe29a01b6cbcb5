// readable_error: the code table covers every public VM error code, Python tracebacks are read
// down to type, message and line, and each result code renders its summary beside the raw text.
#include "node/readable_error.h"

#include <gtest/gtest.h>

namespace genvm::node {
namespace {

// The table is the one place a public code gets its sentence: a code added to
// common/vm_error.h without a row here fails this test.
TEST(NodeReadableError, EveryPublicVmErrorCodeHasASentence) {
  int codes = 0;
  for (const VmErrorNode& n : kVmErrorNodes) {
    if (!n.is_code || !n.wire.empty()) continue;  // aliases publish another code
    ++codes;
    std::string code(n.path);
    if (n.takes_param) code += " 7";
    EXPECT_FALSE(vm_error_meaning(code).empty()) << "no sentence for '" << code << "'";
  }
  EXPECT_GT(codes, 40);
  EXPECT_TRUE(vm_error_meaning("no_such_code").empty());
  EXPECT_EQ(vm_error_meaning("exit_code 1"), vm_error_meaning("exit_code"));
  EXPECT_NE(vm_error_meaning("out_of memory"), vm_error_meaning("out_of memory wasm_memory"));
}

constexpr const char* kTraceback =
    "some earlier output\n"
    "Traceback (most recent call last):\n"
    "  File \"/genlayer/entry.py\", line 199, in run\n"
    "    value = dispatch(contract, message)\n"
    "  File \"contract.py\", line 12, in withdraw\n"
    "    raise ValueError(f\"amount {amount} must be positive\")\n"
    "ValueError: amount -3 must be positive\n";

TEST(NodeReadableError, APythonTracebackGivesTheInnermostFrameAndTheException) {
  auto e = parse_python_traceback(kTraceback);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, "ValueError");
  EXPECT_EQ(e->message, "amount -3 must be positive");
  EXPECT_EQ(e->file, "contract.py");
  EXPECT_EQ(e->line, 12);
  EXPECT_EQ(e->function, "withdraw");
}

TEST(NodeReadableError, AChainedTracebackReportsTheLastExceptionAndBareTypesHaveNoMessage) {
  std::string chained = std::string(kTraceback) +
                        "\nDuring handling of the above exception, another exception occurred:\n\n"
                        "Traceback (most recent call last):\n"
                        "  File \"contract.py\", line 30, in on_error\n"
                        "    raise KeyError\n"
                        "KeyError\n";
  auto e = parse_python_traceback(chained);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, "KeyError");
  EXPECT_EQ(e->message, "");
  EXPECT_EQ(e->line, 30);
  EXPECT_FALSE(parse_python_traceback("plain stderr, no traceback\n"));
  EXPECT_FALSE(parse_python_traceback("Traceback (most recent call last):\n  File \"x\", line 1\n"));
}

TEST(NodeReadableError, EachResultCodeRendersItsSummaryBesideTheRawText) {
  EXPECT_FALSE(readable_error(ResultCode::kReturn, "", ""));

  auto user = readable_error(ResultCode::kUserError, "unknown method", "");
  ASSERT_TRUE(user);
  EXPECT_EQ(user->kind, "UserError");
  EXPECT_EQ(user->summary, "unknown method");
  EXPECT_EQ(user->raw, "unknown method");
  EXPECT_TRUE(user->code.empty());

  auto vm = readable_error(ResultCode::kVmError, "wasm_trap integer_divide_by_zero # in function 4", "");
  ASSERT_TRUE(vm);
  EXPECT_EQ(vm->kind, "VmError");
  EXPECT_EQ(vm->code, "wasm_trap integer_divide_by_zero");
  EXPECT_EQ(vm->meaning, vm_error_meaning("wasm_trap integer_divide_by_zero"));
  EXPECT_EQ(vm->summary, "wasm_trap integer_divide_by_zero: " + vm->meaning);
  EXPECT_EQ(vm->raw, "wasm_trap integer_divide_by_zero # in function 4");

  // An uncaught Python exception: exit_code 1 with the traceback on stderr.
  auto py = readable_error(ResultCode::kVmError, "exit_code 1", kTraceback);
  ASSERT_TRUE(py);
  EXPECT_EQ(py->code, "exit_code 1");
  EXPECT_FALSE(py->meaning.empty());
  ASSERT_TRUE(py->exception);
  EXPECT_EQ(py->summary, "ValueError: amount -3 must be positive (line 12, in withdraw)");

  auto unknown = readable_error(ResultCode::kVmError, "something_new", "");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->summary, "something_new");
  auto internal = readable_error(ResultCode::kInternalError, "host closed", "");
  ASSERT_TRUE(internal);
  EXPECT_EQ(internal->kind, "InternalError");
}

}  // namespace
}  // namespace genvm::node
