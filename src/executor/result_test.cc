// Golden bytes for the reported result. The expected hex was produced independently of this
// code: the same values encoded by genlayer-js (`abi.calldata.encode`, the public JS client)
// and hashed by node's crypto `sha3-256` (script in docs/PROTOCOLS.md, ## Executor choices).
#include "executor/result.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <string>

namespace genvm::executor {
namespace {

using calldata::Value;

std::string hex(std::span<const std::uint8_t> b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (auto c : b) {
    s += d[c >> 4];
    s += d[c & 15];
  }
  return s;
}

Digest32 filled(std::uint8_t v) {
  Digest32 d;
  d.fill(v);
  return d;
}

WasmStoreHashes store() { return {{"contract", ModuleFingerprint{{filled(0x11)}}}}; }

RunOutcome returning() {
  RunOutcome o;
  o.kind = ResultCode::kReturn;
  o.data = Value::map({{"x", 1}});
  o.wasm_store_hashes = store();
  StorageDelta d;
  d.key.fill(0);
  std::fill(d.key.begin(), d.key.begin() + 32, 0xaa);
  d.key[32] = 32;  // page at byte offset 32
  d.value = calldata::Bytes(32, 5);
  o.storage_changes = {d};
  o.emissions = {Value::map({{"type", "EmitEvent"},
                             {"topics", Value::array({calldata::Bytes(32, 1)})},
                             {"blob", Value::map({{"a", 1}})},
                             {"storage_fee", 0}})};
  o.data_fees_remaining = {BigInt(10)};
  o.subvm_hashes = SubVmHashAccumulator().finalize();
  return o;
}

TEST(SubVmHashAccumulator, EmptyFinalizesToTheFixedDigestOfNothing) {
  EXPECT_EQ(hex(SubVmHashAccumulator().finalize()),
            "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a");
}

TEST(ExecutionHash, ReturnGoldenBytesAndHash) {
  RunOutcome o = publish(returning());
  EXPECT_EQ(hex(calldata::encode(execution_hash_input(o))),
            "4e096261636b74726163650004646174610e01780912646174615f666565735f636f6e73756d65642e056576"
            "656e74010b6d6573736167655f666565010f6d6573736167655f72656365697074010d6e6f6e6465745f6f75"
            "74707574010773746f726167650113646174615f666565735f72656d61696e696e670d5109656d697373696f"
            "6e730d2604626c6f620e0161090b73746f726167655f6665650106746f706963730d83020101010101010101"
            "01010101010101010101010101010101010101010101010104747970654c456d69744576656e74046b696e64"
            "3452657475726e0f73746f726167655f6368616e6765730d15a302aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2000000083020505050505050505050505050505050505050505050505"
            "0505050505050505050c737562766d5f6861736865738302a7ffc6f8bf1ed76651c14756a061d662f580ff4d"
            "e43b49fa82d80a4b80f8434a117761736d5f73746f72655f6861736865730e08636f6e74726163740e086d65"
            "6d6f726965730d83021111111111111111111111111111111111111111111111111111111111111111");
  EXPECT_EQ(hex(execution_hash(o)), "74b0d60869c02e0da2005724dc33cf47fec050eb5b5cbc490a4df41597b423ff");
  EXPECT_EQ(hex(small_hash(o.kind, o.data, o.subvm_hashes, o.wasm_store_hashes)),
            "c75d3c787b9e332be82ae4ad6e66f19ef227418a1a149df9dffd81b6bf909c57");
}

// A fatal VM error is published as an ordinary VMError and, not having returned, reports no
// effects: removing either step of publish() changes these bytes.
TEST(ReportedResult, FatalErrorIsDowngradedAndEffectsAreDropped) {
  RunOutcome o = returning();
  o.kind = ResultCode::kFatalVmError;
  o.data = "exit_code 3";
  o.backtrace = std::vector<Frame>{{"contract", 7}};
  o.data_fees_remaining.clear();
  RunOutcome p = publish(o);
  EXPECT_EQ(p.kind, ResultCode::kVmError);
  EXPECT_TRUE(p.storage_changes.empty());
  EXPECT_TRUE(p.emissions.empty());
  // Recomputed independently with the spec-derived codec of tests/conformance/gvm/calldata.py
  // (sha3_256 of the map with kind "VmError").
  EXPECT_EQ(hex(execution_hash(p)), "7b5d291002b9fa12aaa3001251d3d674d8a29eff83c3ba15d295891cc6018f7d");
  // Fatality is not an outcome: the small hash is the same for the fatal and the plain error.
  EXPECT_EQ(small_hash(ResultCode::kFatalVmError, o.data, o.subvm_hashes, o.wasm_store_hashes),
            small_hash(ResultCode::kVmError, o.data, o.subvm_hashes, o.wasm_store_hashes));
  EXPECT_EQ(hex(small_hash(p.kind, p.data, p.subvm_hashes, p.wasm_store_hashes)),
            "3ce1b33ece63c50fec99c55c03d1e7cd77363d53224d5ff57e70011f383c3149");
  EXPECT_EQ(hex(encode_reported_result(p)),
            "6e096261636b74726163650d160466756e63390b6d6f64756c655f6e616d6544636f6e747261637404646174"
            "615c657869745f636f6465203312646174615f666565735f636f6e73756d65642e056576656e74010b6d6573"
            "736167655f666565010f6d6573736167655f72656365697074010d6e6f6e6465745f6f757470757401077374"
            "6f726167650113646174615f666565735f72656d61696e696e670509656d697373696f6e73050e6578656375"
            "74696f6e5f6861736883027b5d291002b9fa12aaa3001251d3d674d8a29eff83c3ba15d295891cc6018f7d04"
            "6b696e643c566d4572726f720f6c6c6d5f636f6e73756d7074696f6e01136e6f6e6465745f64697361677265"
            "656d656e74000e6e6f6e6465745f726573756c7473050a736d616c6c5f6861736883023ce1b33ece63c50fec"
            "99c55c03d1e7cd77363d53224d5ff57e70011f383c31490f73746f726167655f6368616e6765730511776173"
            "6d5f73746f72655f6861736865730e08636f6e74726163740e086d656d6f726965730d830211111111111111"
            "11111111111111111111111111111111111111111111111111");
}

// A UserError publishes no effects; kind is the variant name in both the map and the hash.
// Expected values recomputed with tests/conformance/gvm/calldata.py (spec 01-calldata.rst) over
// the spec's key list (05-result.rst "Execution Hash").
TEST(ExecutionHash, UserErrorGoldenHashes) {
  RunOutcome o = returning();
  o.kind = ResultCode::kUserError;
  o.data = Value("not enough");
  o.backtrace = std::vector<Frame>{};
  RunOutcome p = publish(o);
  EXPECT_TRUE(p.storage_changes.empty());
  EXPECT_TRUE(p.emissions.empty());
  EXPECT_EQ(hex(execution_hash(p)), "a3807a1b3987b5864663beb04fe7dcc6f469c361dbb288a12148f1765bd9cda1");
  EXPECT_EQ(hex(small_hash(p.kind, p.data, p.subvm_hashes, p.wasm_store_hashes)),
            "36403e93421f537fd7ae51155f4cdd3558b9bd245b42293d1c2240ae3113181c");
  auto v = calldata::decode(encode_reported_result(p));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v->find("kind"), Value("UserError"));
}

// An internal error commits to nothing: both hashes are empty byte strings, kind is
// "InternalError", and the outer byte is 3.
TEST(ExecutionHash, InternalErrorReportsEmptyHashes) {
  RunOutcome o;
  o.kind = ResultCode::kInternalError;
  o.data = Value("host_closed: storage_read");
  auto wire = encode_consumed_result(publish(o));
  ASSERT_FALSE(wire.empty());
  EXPECT_EQ(wire[0], 3);
  auto v = calldata::decode(std::span<const std::uint8_t>(wire.data() + 1, wire.size() - 1));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v->find("kind"), Value("InternalError"));
  EXPECT_EQ(*v->find("execution_hash"), Value(calldata::Bytes{}));
  EXPECT_EQ(*v->find("small_hash"), Value(calldata::Bytes{}));
}

TEST(SubVmHashAccumulator, FoldsSmallHashesInCallOrder) {
  RunOutcome a = publish(returning());
  RunOutcome b = returning();
  b.kind = ResultCode::kVmError;
  b.data = "exit_code 3";
  b = publish(b);
  SubVmHashAccumulator acc;
  acc.fold(small_hash(a.kind, a.data, a.subvm_hashes, a.wasm_store_hashes));
  acc.fold(small_hash(b.kind, b.data, b.subvm_hashes, b.wasm_store_hashes));
  EXPECT_EQ(hex(acc.finalize()), "7bdc82a321182ed22d2e626b66a13e4e5570ce2e9400e7af51777efdcfa99dc5");
  SubVmHashAccumulator swapped;
  swapped.fold(small_hash(b.kind, b.data, b.subvm_hashes, b.wasm_store_hashes));
  swapped.fold(small_hash(a.kind, a.data, a.subvm_hashes, a.wasm_store_hashes));
  EXPECT_NE(acc.finalize(), swapped.finalize());
}

TEST(ReportedResult, DecodesBackToTheSameMap) {
  RunOutcome o = publish(returning());
  auto v = calldata::decode(encode_reported_result(o));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, reported_result_value(o));
  EXPECT_EQ(*v->find("kind"), Value("Return"));
  EXPECT_EQ(v->find("execution_hash")->as_bytes().size(), 32u);
}

TEST(ConsumedResult, OuterResultCodeByteThenTheMap) {
  RunOutcome o = returning();
  o.kind = ResultCode::kUserError;
  o.data = Value("no");
  o = publish(std::move(o));
  auto wire = encode_consumed_result(o);
  ASSERT_GT(wire.size(), 1u);
  EXPECT_EQ(wire[0], 1);
  EXPECT_EQ(calldata::Bytes(wire.begin() + 1, wire.end()), encode_reported_result(o));
}

TEST(SubVmResultBuffer, CodeByteThenCalldataOrText) {
  EXPECT_EQ(subvm_result_buffer(ResultCode::kReturn, Value(5)), (calldata::Bytes{0, 0x29}));
  EXPECT_EQ(subvm_result_buffer(ResultCode::kVmError, Value("oops")), (calldata::Bytes{2, 'o', 'o', 'p', 's'}));
  EXPECT_EQ(subvm_result_buffer(ResultCode::kUserError, Value("e")), (calldata::Bytes{1, 0x0c, 'e'}));
}

// Expected strings from the spec's Python reference encoder (06-gvm32.rst) run with python3.
TEST(Gvm32, MatchesTheSpecReferenceEncoder) {
  EXPECT_EQ(gvm32({}), "");
  EXPECT_EQ(gvm32(std::vector<std::uint8_t>{0xff}), "zw");
  std::string hw = "hello world";
  EXPECT_EQ(gvm32(std::vector<std::uint8_t>(hw.begin(), hw.end())), "d1jprv3f41vpywkccg");
  std::vector<std::uint8_t> seq(32);
  for (int i = 0; i < 32; ++i) seq[i] = static_cast<std::uint8_t>(i);
  EXPECT_EQ(gvm32(seq), "000g40r40m30e209185gr38e1w8124gk2gahc5rr34d1p70x3rfg");
}

TEST(LeaderSurplus, ReplacesTheResultWithExtraNamingItsBufferHash) {
  RunOutcome r;
  r.kind = ResultCode::kReturn;
  r.data = Value(5);
  apply_leader_surplus(r, 1, 0);
  EXPECT_EQ(r.kind, ResultCode::kVmError);
  EXPECT_EQ(r.data, Value("leader_fault nondet_output extra fr02qq"));  // sha3(00 29)
  RunOutcome e;
  e.kind = ResultCode::kVmError;
  e.data = Value("exit_code 3");
  apply_leader_surplus(e, 2, 1);
  EXPECT_EQ(e.data, Value("leader_fault nondet_output extra kbwqs6"));
  RunOutcome same;
  same.data = Value(1);
  apply_leader_surplus(same, 1, 1);
  EXPECT_EQ(same.kind, ResultCode::kReturn);
}

// Sized up front: GCC 12 reports a false array-bounds error for insert() after a 1-byte init.
calldata::Bytes leader_entry(std::uint8_t code, std::span<const std::uint8_t> data) {
  calldata::Bytes e(1 + data.size());
  e[0] = code;
  std::copy(data.begin(), data.end(), e.begin() + 1);
  return e;
}
calldata::Bytes leader_entry(std::uint8_t code, std::string_view text) {
  return leader_entry(code, std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

TEST(LeaderEntry, AcceptsWellFormedEntriesByteForByte) {
  auto ret = calldata::encode(Value::map({{"a", 1}}));
  calldata::Bytes e = leader_entry(0, ret);
  EXPECT_EQ(check_leader_entry(e), std::nullopt);
  e[0] = 1;
  EXPECT_EQ(check_leader_entry(e), std::nullopt);
  EXPECT_EQ(check_leader_entry(leader_entry(2, "exit_code 3")), std::nullopt);
  EXPECT_EQ(check_leader_entry(leader_entry(2, "wasm_trap out_of_fuel")), std::nullopt);
}

TEST(LeaderEntry, RejectsWithTheDerivedCodes) {
  EXPECT_EQ(check_leader_entry({}), "leader_fault nondet_output absent");
  EXPECT_EQ(check_leader_entry(leader_entry(3, "x")), "leader_fault nondet_output malformed");
  EXPECT_EQ(check_leader_entry(leader_entry(4, "exit_code 1")), "leader_fault nondet_output malformed");
  EXPECT_EQ(check_leader_entry(leader_entry(0, "")), "leader_fault nondet_output malformed");
  EXPECT_EQ(check_leader_entry(leader_entry(2, "exit_code 1 # why")), "leader_fault nondet_output malformed");
  EXPECT_EQ(check_leader_entry(leader_entry(2, "exit_code")), "leader_fault nondet_output malformed");
  EXPECT_EQ(check_leader_entry(leader_entry(2, "no_such")), "leader_fault nondet_output malformed");
  EXPECT_EQ(check_leader_entry(leader_entry(2, "\xc0\xaf")), "leader_fault nondet_output malformed");
  // The derived namespace comes first, and its parameter is GVM32(sha3(code))[0..6].
  std::string code = "leader_fault nondet_output absent";
  auto expect = "leader_fault nondet_output uses_this_error " +
                gvm32(sha3_256(calldata::Bytes(code.begin(), code.end()))).substr(0, 6);
  EXPECT_EQ(check_leader_entry(leader_entry(2, code)), expect);
  EXPECT_EQ(check_leader_entry(leader_entry(2, "leader_fault nondet_output")).value().rfind(
                "leader_fault nondet_output uses_this_error ", 0),
            0u);
  // "leader_fault nondet_outputs" does not extend the code at a space boundary: just unknown.
  EXPECT_EQ(check_leader_entry(leader_entry(2, "leader_fault nondet_outputs")), "leader_fault nondet_output malformed");
}

TEST(LeaderEntry, StripsTheDetailForTheNondetChannel) {
  EXPECT_EQ(strip_vm_error_detail("exit_code 1 # because"), "exit_code 1");
  EXPECT_EQ(strip_vm_error_detail("exit_code 1"), "exit_code 1");
}

// A result the host protocol could not carry becomes the contract's VM error, delivered; one at
// the limit is left alone. The limit counts the storage changes as the report encodes them,
// headers included (a page's change is 73 octets there, not its 68 of key and value: counting
// 68, changes of just under the limit took more than a host slice and were lost).
TEST(ResultSizeLimit, AResultAboveTheLimitIsOutOfMemoryWithNothingWritten) {
  RunOutcome o;
  o.kind = ResultCode::kReturn;
  o.data = calldata::Value(calldata::Bytes(1000, 7));
  for (std::uint32_t i = 0; i < 1000; ++i) {
    StorageDelta d{};
    d.key[0] = static_cast<std::uint8_t>(i);
    d.key[1] = static_cast<std::uint8_t>(i >> 8);
    d.value = calldata::Bytes(i == 0 ? 64 : kPageSize, 1);
    o.storage_changes.push_back(d);
  }
  std::uint64_t exact = calldata::encode(o.data).size();
  const calldata::Value changes = storage_changes_value(o.storage_changes);
  for (const calldata::Value& change : changes.as_array()) {
    exact += calldata::encode(change).size();
  }
  RunOutcome fits = o;
  EXPECT_FALSE(apply_result_size_limit(fits, exact));
  EXPECT_EQ(fits.kind, ResultCode::kReturn);
  EXPECT_EQ(fits.storage_changes.size(), 1000u);
  ASSERT_TRUE(apply_result_size_limit(o, exact - 1));
  EXPECT_EQ(o.kind, ResultCode::kVmError);
  EXPECT_EQ(o.data, calldata::Value("out_of memory # result too large"));
  EXPECT_TRUE(o.storage_changes.empty());
  ASSERT_TRUE(o.backtrace.has_value());
  EXPECT_TRUE(o.backtrace->empty());
}

}  // namespace
}  // namespace genvm::executor
