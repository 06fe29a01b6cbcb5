#include "common/host/nested_run.h"

#include <gtest/gtest.h>

namespace genvm::host {
namespace {

using calldata::Value;

Address addr(std::uint8_t fill) {
  Address a;
  a.bytes.fill(fill);
  return a;
}

NestedRunEnvelope sample() {
  NestedRunEnvelope e;
  e.routing_payload = calldata::encode(Value::map({{"kind", "major"}, {"major", 1}}));
  e.calldata = calldata::encode(Value::map({{"", "get"}}));
  e.message.contract_address = addr(2);
  e.message.sender_address = addr(3);
  e.message.origin_address = addr(3);
  e.message.signer_address = addr(3);
  e.message.chain_id = 61999;
  e.message.datetime = "2025-01-02T03:04:05Z";
  e.stack = {addr(1)};
  e.permissions = kNestedDeterministic | kNestedReadStorage | kNestedCallOthers;
  e.state_mode = StorageType::kLatestFinal;
  e.remaining_recursion = 5;
  e.remaining_det_fuel = 123456;
  e.memory_limit = 1 << 20;
  return e;
}

TEST(NestedRunEnvelope, RoundTripsThroughCalldata) {
  NestedRunEnvelope e = sample();
  Value v = nested_envelope_to_value(e);
  auto back = nested_envelope_from_value(*calldata::decode(calldata::encode(v)));
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(calldata::encode(nested_envelope_to_value(*back)), calldata::encode(v));
  EXPECT_EQ(back->state_mode, StorageType::kLatestFinal);
  EXPECT_EQ(v.find("state_mode")->as_string(), "LatestFinal");  // the variant name, not a number
}

TEST(NestedRunEnvelope, UnknownPermissionBitsDeny) {
  Value v = nested_envelope_to_value(sample());
  v.as_map()["permissions"] = (1u << 31) | kNestedCallOthers;
  auto e = nested_envelope_from_value(v);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->permissions, kNestedCallOthers);
}

TEST(NestedRunEnvelope, IsAClosedMapOfTypedFields) {
  Value extra = nested_envelope_to_value(sample());
  extra.as_map()["more"] = 1;
  EXPECT_EQ(nested_envelope_from_value(extra).error().message, "envelope.more: unknown key");
  Value missing = nested_envelope_to_value(sample());
  missing.as_map().erase("memory_limit");
  EXPECT_EQ(nested_envelope_from_value(missing).error().message, "envelope.memory_limit: required key is absent");
  Value big = nested_envelope_to_value(sample());
  big.as_map()["remaining_recursion"] = std::uint64_t{1} << 32;
  EXPECT_EQ(nested_envelope_from_value(big).error().code, "nested_envelope");
  Value mode = nested_envelope_to_value(sample());
  mode.as_map()["state_mode"] = 1;
  EXPECT_FALSE(nested_envelope_from_value(mode));
  Value message = nested_envelope_to_value(sample());
  message.as_map()["message"].as_map().erase("is_init");
  EXPECT_EQ(nested_envelope_from_value(message).error().message, "envelope.message.is_init: required key is absent");
}

TEST(NestedRunReply, RoundTripsAndNamesTheKind) {
  NestedRunReply r{ResultCode::kUserError, Value("nope"), calldata::Bytes(32, 7), true};
  Value v = nested_reply_to_value(r);
  EXPECT_EQ(v.find("result")->find("kind")->as_string(), "UserError");
  auto back = nested_reply_from_value(v);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->kind, ResultCode::kUserError);
  EXPECT_EQ(back->data.as_string(), "nope");
  EXPECT_EQ(back->small_hash, calldata::Bytes(32, 7));
  EXPECT_TRUE(back->effect_free);
  v.as_map()["result"].as_map()["kind"] = "Returned";
  EXPECT_EQ(nested_reply_from_value(v).error().message, "reply.result.kind: expected a result code name");
  Value extra = nested_reply_to_value(r);
  extra.as_map()["x"] = 1;
  EXPECT_FALSE(nested_reply_from_value(extra));
}

}  // namespace
}  // namespace genvm::host
