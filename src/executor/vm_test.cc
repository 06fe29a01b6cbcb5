// The sub-VM's ends of a run, on small hand-made modules (bytes from wat2wasm; the .wat text is
// beside each). These modules never touch storage or a host, so none is connected: a call into
// either would crash the test, which is the point — these ends need neither.
#include "executor/vm.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include "executor/wasm_check.h"
#include "wasm/wasm.h"

namespace genvm::executor {
namespace {

using calldata::Value;

calldata::Bytes from_hex(std::string_view h) {
  calldata::Bytes out;
  for (std::size_t i = 0; i + 1 < h.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// (module (import "wasi_snapshot_preview1" "proc_exit" (func (param i32))) (memory (export "memory") 1)
//   (func (export "_start") i32.const 3 call 0))
const char* kExit3 =
    "0061736d0100000001080260017f0060000002240116776173695f736e617073686f745f70726576696577310970726f635f"
    "657869740000030201010503010001071302066d656d6f72790200065f737461727400010a08010600410310000b";
// (module (memory 1) (func (export "_start") unreachable))
const char* kUnreachable = "0061736d01000000010401600000030201000503010001070a01065f737461727400000a05010300000b";
// (module (func (export "main")))
const char* kNoStart = "0061736d0100000001040160000003020100070801046d61696e00000a040102000b";
// (module (import "env" "foo" (func)) (func (export "_start") call 0))
const char* kUnknownImport =
    "0061736d01000000010401600000020b0103656e7603666f6f000003020100070a01065f737461727400010a0601040010000b";
// (module (func (export "_start")))
const char* kReturns = "0061736d0100000001040160000003020100070a01065f737461727400000a040102000b";

class NeverReader : public StorageReader {
 public:
  Result<calldata::Bytes> read(StorageType, const calldata::Address&, const SlotId&, std::uint32_t,
                               std::uint32_t) override {
    ADD_FAILURE() << "storage was read";
    return make_error("unexpected");
  }
};

VmResult run_hex(const char* hex) {
  NeverReader reader;
  Storage storage(reader, calldata::Address{});
  RunContext ctx;
  ctx.storage = &storage;
  VmFrame frame;
  frame.startup_message = Value(Value::Map{});
  return run_vm(ctx, frame, from_hex(hex));
}

TEST(Vm, ProcExitIsAnExitCodeErrorWithAFingerprint) {
  VmResult r = run_hex(kExit3);
  EXPECT_EQ(r.kind, ResultCode::kVmError);
  EXPECT_EQ(r.data, Value("exit_code 3"));
  ASSERT_EQ(r.wasm_store_hashes.count("contract"), 1u);
  // BLAKE3 of one zeroed 64 KiB page, as `head -c 65536 /dev/zero | b3sum` prints it.
  const auto& m = r.wasm_store_hashes.at("contract").memories;
  ASSERT_EQ(m.size(), 1u);
  std::string got;
  for (auto b : m[0]) {
    got += "0123456789abcdef"[b >> 4];
    got += "0123456789abcdef"[b & 15];
  }
  EXPECT_EQ(got, "3bdeaf8f8e98780b318106aafdc3ca257f73df123d97b69112b26044c91a7d56");
  ASSERT_TRUE(r.backtrace.has_value());
}

TEST(Vm, TrapsAreWasmTrapErrors) {
  VmResult r = run_hex(kUnreachable);
  EXPECT_EQ(r.kind, ResultCode::kVmError);
  EXPECT_EQ(r.data, Value("wasm_trap unreachable"));
}

TEST(Vm, ReturningFromStartIsExitCodeZero) {
  VmResult r = run_hex(kReturns);
  EXPECT_EQ(r.kind, ResultCode::kVmError);
  EXPECT_EQ(r.data, Value("exit_code 0"));
}

TEST(Vm, ModulesThatCannotRunAreInvalidContracts) {
  EXPECT_EQ(run_hex(kNoStart).data, Value("invalid_contract wasm entrypoint"));
  EXPECT_EQ(run_hex(kUnknownImport).data, Value("invalid_contract wasm linking"));
  EXPECT_EQ(run_hex("0061736d01000000ff").data, Value("invalid_contract wasm validating"));
  // Not wasm, so text (a NUL is UTF-8): without a comment header it names no runner.
  EXPECT_EQ(run_hex("00").data, Value("invalid_contract runner absent"));
  EXPECT_EQ(run_hex("ff").data, Value("invalid_contract not_utf8_text"));
}

TEST(Vm, EmptySubVmAccumulatorIsReported) {
  VmResult r = run_hex(kReturns);
  EXPECT_EQ(r.subvm_hashes, SubVmHashAccumulator().finalize());
}

// A nondet block runs the contract's module again: the run compiles it once per (code,
// deterministic, metered), and the key is a view of the module's own bytes, so the caller's
// buffer may be gone by the next sub-VM (under ASan a key into it would be a use after free).
TEST(Vm, SubVmsOfOneRunShareTheCompiledModule) {
  NeverReader reader;
  Storage storage(reader, calldata::Address{});
  RunContext ctx;
  ctx.storage = &storage;
  auto run_fresh_copy = [&](std::optional<std::uint64_t> fuel, bool deterministic) {
    VmFrame frame;
    frame.startup_message = Value(Value::Map{});
    frame.fuel = fuel;
    frame.deterministic = deterministic;
    auto code = std::make_unique<calldata::Bytes>(from_hex(kExit3));
    VmResult r = run_vm(ctx, frame, *code);
    code.reset();
    return r;
  };
  EXPECT_EQ(run_fresh_copy(std::nullopt, true).data, Value("exit_code 3"));
  ASSERT_EQ(ctx.modules.size(), 1u);
  const wasm::Module* first = ctx.modules.begin()->second.get();
  EXPECT_EQ(run_fresh_copy(std::nullopt, true).data, Value("exit_code 3"));
  ASSERT_EQ(ctx.modules.size(), 1u) << "the same code in the same mode is not compiled again";
  EXPECT_EQ(ctx.modules.begin()->second.get(), first);
  EXPECT_EQ(run_fresh_copy(std::uint64_t{1} << 30, true).data, Value("exit_code 3"));
  EXPECT_EQ(run_fresh_copy(std::nullopt, false).data, Value("exit_code 3"));
  EXPECT_EQ(ctx.modules.size(), 3u) << "metered and non-deterministic builds are their own entries";
  for (const auto& [key, module] : ctx.modules) {
    EXPECT_EQ(key.code.data(), module->bytes().data()) << "a key views its module's bytes";
    EXPECT_EQ(key.code.size(), module->bytes().size());
  }
}

TEST(CheckContractModule, AcceptsSdkModulesAndRejectsOthers) {
  EXPECT_TRUE(check_contract_module(from_hex(kExit3)).ok());
  EXPECT_EQ(check_contract_module(from_hex(kNoStart)).error().code, "no_entrypoint");
  EXPECT_EQ(check_contract_module(from_hex(kUnknownImport)).error().code, "bad_import");
  EXPECT_EQ(check_contract_module(from_hex("00")).error().code, "invalid_module");
}

}  // namespace
}  // namespace genvm::executor
