#include "common/host/fee_params.h"
#include "common/host/fee_params_test_data.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace genvm::host {
namespace {

using calldata::Value;

using namespace test_data;  // NOLINT: the shared test data reads as local

TEST(FeeParams, RoundTripsThroughCalldata) {
  AllocationNode root = internal_node(1000, MessageOn::kAccepted, address(0x11), key(0x22));
  root.children.push_back(external_node(5, address(0x33)));
  root.children.push_back(internal_node(6));
  root.children[1].children.push_back(internal_node(7, MessageOn::kFinalized, std::nullopt, key(1)));
  std::vector<AllocationNode> tree{root, external_node(9)};
  Value v = allocation_to_value(tree);
  // The wire is calldata: encode and decode it as a host would send it.
  auto decoded = calldata::decode(calldata::encode(v));
  ASSERT_TRUE(decoded);
  auto back = parse_allocation(*decoded, "message_fee_allocation");
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(*back, tree);
  EXPECT_EQ(calldata::to_text(v).substr(0, 40), calldata::to_text(allocation_to_value(*back)).substr(0, 40));
}

TEST(FeeParams, TheNodeShapeIsTheDomainType) {
  Value node = allocation_to_value({internal_node(5, MessageOn::kAccepted)}).as_array()[0];
  EXPECT_EQ(calldata::to_text(node),
            "{\"budget\": 5, \"call_key\": null, \"children\": [], \"fee_params\": {\"Internal\": "
            "{\"execution_budget_per_round\": 3, \"leader_timeunits_allocation\": 1, \"max_price_gen_per_time_unit\": 11, "
            "\"receipt_fee_max_gas_price\": 13, \"rotations\": [0, 2], \"storage_fee_max_gas_price\": 12, "
            "\"validator_timeunits_allocation\": 2}}, \"on\": \"accepted\", \"recipient\": null}");
  Value ext = allocation_to_value({external_node(5)}).as_array()[0];
  EXPECT_EQ(calldata::to_text(*ext.find("fee_params")), "{\"External\": {\"gas_limit\": 7, \"max_gas_price\": 9}}");
}

// Every key is required and no other is allowed, at every level.
TEST(FeeParams, ParsingIsStrict) {
  Value good = allocation_to_value({internal_node(5)});
  ASSERT_TRUE(parse_allocation(good, "t"));
  auto mutate = [&](auto change) {
    Value v = good;
    change(v.as_array()[0].as_map());
    return parse_allocation(v, "message_fee_allocation");
  };
  struct Case {
    std::function<void(Value::Map&)> change;
    const char* code;
    const char* message;
  };
  const char* kType = "execution_data_type";
  for (const Case& c : std::vector<Case>{
           {[](Value::Map& m) { m.erase("budget"); }, "execution_data_missing", "message_fee_allocation[0].budget"},
           {[](Value::Map& m) { m["extra"] = 1; }, "execution_data_unknown_key", "message_fee_allocation[0].extra"},
           {[](Value::Map& m) { m["budget"] = -1; }, kType, "[0].budget: expected an unsigned 256-bit integer"},
           {[](Value::Map& m) {
              m["budget"] = *BigInt::parse_decimal(
                  "115792089237316195423570985008687907853269984665640564039457584007913129639936");
            },
            kType, "[0].budget"},
           {[](Value::Map& m) { m["call_key"] = calldata::Bytes(31, 0); }, kType, ".call_key: expected 32 bytes"},
           {[](Value::Map& m) { m["recipient"] = calldata::Bytes(20, 0); }, kType, ".recipient"},
           {[](Value::Map& m) { m["on"] = "decided"; }, kType, ".on"},
           {[](Value::Map& m) { m["children"] = Value::map({}); }, kType, ".children: expected an array"},
           {[](Value::Map& m) { m["fee_params"] = Value::map({{"Other", Value::map({})}}); }, kType, "not Other"},
           {[](Value::Map& m) { m["fee_params"] = Value::map({{"Internal", 1}, {"External", 2}}); }, kType, ".fee_params"},
           {[](Value::Map& m) { m["fee_params"].as_map()["Internal"].as_map().erase("rotations"); },
            "execution_data_missing", ".fee_params.Internal.rotations"},
           {[](Value::Map& m) { m["fee_params"].as_map()["Internal"].as_map()["rotations"] = Value::array({-1}); }, kType,
            ".rotations[0]"},
           {[](Value::Map& m) { m["fee_params"].as_map()["Internal"].as_map()["appeal_rounds"] = 1; },
            "execution_data_unknown_key", ".appeal_rounds"},
       }) {
    auto r = mutate(c.change);
    ASSERT_FALSE(r) << c.message;
    EXPECT_EQ(r.error().code, c.code) << c.message;
    EXPECT_NE(r.error().message.find(c.message), std::string::npos) << r.error().message;
  }
  EXPECT_FALSE(parse_allocation(Value::map({}), "t"));
}

TEST(FeeParams, DepthIsBounded) {
  AllocationNode deep = internal_node(1);
  for (std::size_t i = 0; i < kMaxAllocationDepth; ++i) {
    AllocationNode parent = internal_node(1);
    parent.children.push_back(std::move(deep));
    deep = std::move(parent);
  }
  auto r = parse_allocation(allocation_to_value({deep}), "t");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("at most 64 deep"), std::string::npos);
  ASSERT_TRUE(parse_allocation(allocation_to_value({deep.children[0]}), "t"));
}

TEST(FeeParams, GuestFeeParamsAreReadWithExactKeys) {
  Value p = internal_params_to_value(internal_params({4}));
  auto back = parse_internal_params(p, "fee_params");
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, internal_params({4}));
  Value extra = p;
  extra.as_map()["x"] = 1;
  EXPECT_FALSE(parse_internal_params(extra, "fee_params"));
  EXPECT_FALSE(parse_internal_params(Value(1), "fee_params"));
  auto ext = parse_external_params(external_params_to_value({BigInt(1), BigInt(2)}), "fee_params");
  ASSERT_TRUE(ext);
  EXPECT_EQ(*ext, (ExternalMessageParams{BigInt(1), BigInt(2)}));
  EXPECT_FALSE(parse_external_params(Value::map({{"gas_limit", 1}}), "fee_params"));
}

}  // namespace
}  // namespace genvm::host
