// The sub-VM's ends of a run, on small hand-made modules (bytes from wat2wasm; the .wat text is
// beside each). These modules never touch storage or a host, so none is connected: a call into
// either would crash the test, which is the point — these ends need neither.
#include "executor/vm.h"

#include <gtest/gtest.h>

#include "executor/wasm_check.h"

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
  EXPECT_EQ(run_hex("00").data, Value("invalid_contract runner malformed # code is not a wasm module"));
}

TEST(Vm, EmptySubVmAccumulatorIsReported) {
  VmResult r = run_hex(kReturns);
  EXPECT_EQ(r.subvm_hashes, SubVmHashAccumulator().finalize());
}

TEST(CallKey, ShortNamesAreLeftAlignedAndDeployIsZero) {
  auto k = call_key(Value::map({{"", "get"}}), false);
  ASSERT_TRUE(k.ok());
  calldata::Bytes want(32, 0);
  want[0] = 'g';
  want[1] = 'e';
  want[2] = 't';
  EXPECT_EQ(*k, want);
  EXPECT_EQ(*call_key(Value::map({{"", "get"}}), true), calldata::Bytes(32, 0));
  EXPECT_EQ(*call_key(Value(Value::Map{}), false), calldata::Bytes(32, 0));
}

// 02-abi.rst: names of 32 bytes or more hash with keccak256 and force the lowest bit to 1.
// Expected digests from @noble/hashes keccak_256 (tests/interop/node_modules), an independent
// implementation; the first ends in 0x68, so it also fails if the forced bit were missing.
TEST(CallKey, LongNamesAreKeccakWithTheLowestBitSet) {
  auto hex_of = [](const calldata::Bytes& b) {
    std::string s;
    for (auto c : b) {
      s += "0123456789abcdef"[c >> 4];
      s += "0123456789abcdef"[c & 15];
    }
    return s;
  };
  auto k32 = call_key(Value::map({{"", std::string(32, 'x')}}), false);
  ASSERT_TRUE(k32.ok());
  EXPECT_EQ(hex_of(*k32), "5601c4475f2f6aa73d6a70a56f9c756f24d211a914cc7aff3fb80d2d8741c869");
  auto k41 = call_key(Value::map({{"", "a_method_name_that_is_long_enough_to_hash"}}), false);
  ASSERT_TRUE(k41.ok());
  EXPECT_EQ(hex_of(*k41), "1cae55e9c882f749db28158b37f0bc7eaa2880e8746a897e56cc3104a224adfb");
  // 31 bytes is still the short form.
  auto k31 = call_key(Value::map({{"", std::string(31, 'x')}}), false);
  ASSERT_TRUE(k31.ok());
  EXPECT_EQ((*k31)[30], 'x');
  EXPECT_EQ((*k31)[31], 0);
}

TEST(U256, AddSubCompareAcrossBytes) {
  U256Le a{}, b{};
  a[0] = 0xff;
  a[1] = 0x01;  // 0x1ff
  b[0] = 0x01;  // 1
  U256Le sum = u256_add(a, b);
  EXPECT_EQ(sum[0], 0x00);
  EXPECT_EQ(sum[1], 0x02);
  U256Le diff = u256_sub(sum, a);
  EXPECT_EQ(diff, b);
  EXPECT_EQ(u256_sub(b, a), U256Le{});  // clamped, never wraps
  EXPECT_TRUE(u256_less(b, a));
  EXPECT_FALSE(u256_less(a, a));
  U256Le max;
  max.fill(0xff);
  EXPECT_EQ(u256_add(max, b), max);  // saturates
  EXPECT_EQ(u256_from(BigInt(0x1ff)), a);
}

TEST(CheckContractModule, AcceptsSdkModulesAndRejectsOthers) {
  EXPECT_TRUE(check_contract_module(from_hex(kExit3)).ok());
  EXPECT_EQ(check_contract_module(from_hex(kNoStart)).error().code, "no_entrypoint");
  EXPECT_EQ(check_contract_module(from_hex(kUnknownImport)).error().code, "bad_import");
  EXPECT_EQ(check_contract_module(from_hex("00")).error().code, "invalid_module");
}

}  // namespace
}  // namespace genvm::executor
