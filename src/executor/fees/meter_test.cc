#include "executor/fees/meter.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace genvm::executor::fees {
namespace {

BigInt big(const char* decimal) { return *BigInt::parse_decimal(decimal); }

const char* kU256Max = "115792089237316195423570985008687907853269984665640564039457584007913129639935";

// A config whose five rules are "free" unless a test sets one.
FeesConfig free_config() {
  FeesConfig c;
  for (BucketRule* r : {&c.storage, &c.message_receipt, &c.nondet_output, &c.message_fee, &c.event}) {
    r->bucket_no = {0};
    r->delta_expr = "\\a = 0";
  }
  return c;
}

FeeMeter meter(const FeesConfig& c, std::vector<BigInt> totals, std::map<std::string, std::string> gas = {}) {
  auto m = FeeMeter::create(c, totals, gas);
  EXPECT_TRUE(m) << m.error().to_string();
  return std::move(*m);
}

std::string vm_error_of(const FeeError& e) { return e.vm_error ? e.vm_error->to_string() : "internal: " + e.message; }

TEST(FeeMeter, StoragePagesAreChargedOneAtATime) {
  FeesConfig c = free_config();
  // A rule that sees a page count other than 1 would charge 100.
  c.storage.delta_expr = "\\a = if a.pages == 1 then 3 else 100";
  FeeMeter m = meter(c, {BigInt(10)});
  ASSERT_TRUE(m.charge_storage_pages(2).ok());
  EXPECT_EQ(m.remaining(), std::vector<BigInt>{BigInt(4)});
  // Two more: the first still fits and stays taken, the second does not.
  auto over = m.charge_storage_pages(2);
  ASSERT_FALSE(over);
  EXPECT_EQ(vm_error_of(over.error()), "out_of storage");
  EXPECT_EQ(m.remaining(), std::vector<BigInt>{BigInt(1)});
  EXPECT_EQ(m.consumed().storage, BigInt(9));
  EXPECT_TRUE(m.charge_storage_pages(0).ok());
}

TEST(FeeMeter, AChargeTakesItsCostOrNothing) {
  FeesConfig c = free_config();
  c.nondet_output.delta_expr = "\\a = a.outputLength * 3";
  FeeMeter m = meter(c, {BigInt(10)});
  ASSERT_TRUE(m.charge_nondet_output(2).ok());
  EXPECT_EQ(m.remaining(), std::vector<BigInt>{BigInt(4)});
  auto over = m.charge_nondet_output(2);
  ASSERT_FALSE(over);
  EXPECT_EQ(vm_error_of(over.error()), "out_of receipt nondet_output");
  EXPECT_EQ(m.remaining(), std::vector<BigInt>{BigInt(4)});
  EXPECT_EQ(m.consumed().nondet_output, BigInt(6));
}

TEST(FeeMeter, ArrayCostsGoEntryByEntryAndAllOrNothing) {
  FeesConfig c = free_config();
  c.nondet_output.bucket_no = {0, 1};
  c.nondet_output.delta_expr = "\\a = [a.outputLength, a.outputLength * 2]";
  FeeMeter m = meter(c, {BigInt(5), BigInt(5)});
  ASSERT_TRUE(m.charge_nondet_output(2).ok());
  EXPECT_EQ(m.remaining(), (std::vector<BigInt>{BigInt(3), BigInt(1)}));
  ASSERT_FALSE(m.charge_nondet_output(1).ok());  // bucket 0 could pay 1, bucket 1 cannot pay 2
  EXPECT_EQ(m.remaining(), (std::vector<BigInt>{BigInt(3), BigInt(1)}));
  EXPECT_EQ(m.consumed().nondet_output, BigInt(6));  // 2 + 4, summed over the rule's buckets
}

TEST(FeeMeter, AScalarCostIsChargedToEveryNamedBucket) {
  FeesConfig c = free_config();
  c.event.bucket_no = {0, 1};
  c.event.delta_expr = "\\a = a.topicsCount + a.blobSize";
  FeeMeter m = meter(c, {BigInt(10), BigInt(10)});
  auto fee = m.charge_event(3, 1);
  ASSERT_TRUE(fee) << vm_error_of(fee.error());
  EXPECT_EQ(*fee, BigInt(4));  // the first bucket's cost is the reported one
  EXPECT_EQ(m.remaining(), (std::vector<BigInt>{BigInt(6), BigInt(6)}));
  EXPECT_EQ(m.consumed().event, BigInt(8));
}

TEST(FeeMeter, ABucketNamedTwiceMustHoldTheSum) {
  FeesConfig c = free_config();
  c.storage.bucket_no = {0, 0};
  c.storage.delta_expr = "\\a = 3";
  FeeMeter low = meter(c, {BigInt(5)});
  EXPECT_FALSE(low.charge_storage_pages(1).ok());
  EXPECT_EQ(low.remaining(), std::vector<BigInt>{BigInt(5)});
  FeeMeter exact = meter(c, {BigInt(6)});
  EXPECT_TRUE(exact.charge_storage_pages(1).ok());
  EXPECT_EQ(exact.remaining(), std::vector<BigInt>{BigInt(0)});
}

TEST(FeeMeter, ABucketTheHostDidNotSendCannotPay) {
  FeesConfig c = free_config();
  c.nondet_output.bucket_no = {2};
  FeeMeter m = meter(c, {BigInt(100)});
  auto r = m.charge_nondet_output(0);  // even a zero cost needs the bucket
  ASSERT_FALSE(r);
  EXPECT_EQ(vm_error_of(r.error()), "out_of receipt nondet_output");
}

TEST(FeeMeter, StartCostsAreTakenInOrderAndTheFirstShortfallEndsTheRun) {
  FeesConfig c = free_config();
  c.storage.subtract_on_start_expr = "2";
  c.message_receipt.subtract_on_start_expr = "5";
  c.nondet_output.subtract_on_start_expr = "1";
  {
    FeeMeter m = meter(c, {BigInt(6)});
    auto oom = m.charge_start();
    ASSERT_TRUE(oom);
    EXPECT_EQ(oom->to_string(), "out_of receipt message");
    EXPECT_EQ(m.remaining(), std::vector<BigInt>{BigInt(4)});  // storage's 2 stays taken
    EXPECT_EQ(m.consumed().storage, BigInt(2));
  }
  {
    FeeMeter m = meter(c, {BigInt(8)});
    EXPECT_FALSE(m.charge_start());
    EXPECT_EQ(m.remaining(), std::vector<BigInt>{BigInt(0)});
    EXPECT_EQ(m.consumed().nondet_output, BigInt(1));
  }
  struct Case {
    BucketRule FeesConfig::*rule;
    const char* error;
  };
  for (Case k : {Case{&FeesConfig::storage, "out_of storage"}, Case{&FeesConfig::nondet_output, "out_of receipt nondet_output"},
                 Case{&FeesConfig::message_fee, "out_of message_fee total"},
                 Case{&FeesConfig::event, "out_of receipt event"}}) {
    FeesConfig one = free_config();
    (one.*k.rule).subtract_on_start_expr = "1";
    FeeMeter m = meter(one, {BigInt(0)});
    auto oom = m.charge_start();
    ASSERT_TRUE(oom);
    EXPECT_EQ(oom->to_string(), k.error);
  }
}

TEST(FeeMeter, CostsMustBeNonNegativeIntegersAndSaturateAtU256) {
  struct Case {
    const char* delta;
    const char* internal;
  };
  for (Case k : {Case{"\\a = 1 / 2", "must yield an integer, got 1/2"}, Case{"\\a = 0 - 1", "must be non-negative"},
                 Case{"\\a = [1, 2]", "array of length 2 for 1 buckets"}, Case{"\\a = \"x\"", "number or array"},
                 Case{"\\a = a.nope", "object has no key `nope`"}, Case{"5", "expected function"}}) {
    FeesConfig c = free_config();
    c.storage.delta_expr = k.delta;
    FeeMeter m = meter(c, {BigInt(100)});
    auto r = m.charge_storage_pages(1);
    ASSERT_FALSE(r) << k.delta;
    EXPECT_FALSE(r.error().vm_error) << k.delta;
    EXPECT_NE(r.error().message.find(k.internal), std::string::npos) << r.error().message;
    EXPECT_EQ(m.remaining(), std::vector<BigInt>{BigInt(100)});
  }
  FeesConfig c = free_config();
  c.storage.delta_expr = "\\a = pow 2 300";
  FeeMeter full = meter(c, {big(kU256Max)});
  EXPECT_TRUE(full.charge_storage_pages(1).ok());  // saturated to 2^256 - 1: the whole bucket
  EXPECT_EQ(full.remaining(), std::vector<BigInt>{BigInt(0)});
  FeeMeter short_of_it = meter(c, {big(kU256Max) - BigInt(1)});
  EXPECT_FALSE(short_of_it.charge_storage_pages(1).ok());
}

TEST(FeeMeter, VmErrorInARuleEndsTheRunWithThatError) {
  FeesConfig c = free_config();
  c.nondet_output.delta_expr = "\\a = if a.outputLength > 3 then vmError \"fee below_minimum\" else 0";
  FeeMeter m = meter(c, {BigInt(100)});
  auto r = m.charge_nondet_output(4);
  ASSERT_FALSE(r);
  ASSERT_TRUE(r.error().vm_error);
  EXPECT_EQ(r.error().vm_error->to_string(), "fee below_minimum");
  c.storage.delta_expr = "\\a = vmError \"no such code\"";
  FeeMeter unknown = meter(c, {BigInt(100)});
  auto u = unknown.charge_storage_pages(1);
  ASSERT_FALSE(u);
  EXPECT_FALSE(u.error().vm_error);  // a code outside the trie is the rules' fault
}

TEST(FeeMeter, SetupFailsOnBadRulesGasDataOrTotals) {
  struct Case {
    FeesConfig config;
    std::map<std::string, std::string> gas;
    std::vector<BigInt> totals;
    const char* message;
  };
  FeesConfig bad_parse = free_config();
  bad_parse.event.delta_expr = "\\a = (";
  FeesConfig bad_start = free_config();
  bad_start.storage.subtract_on_start_expr = "node.missing";
  FeesConfig bad_prelude = free_config();
  bad_prelude.expr_prelude = "let x = in";
  FeesConfig start_shape = free_config();
  start_shape.storage.subtract_on_start_expr = "[1, 2]";
  FeesConfig no_bucket = free_config();
  no_bucket.storage.bucket_no.clear();
  for (const Case& k : {
           Case{bad_parse, {}, {}, "parse of event delta"},
           Case{bad_start, {}, {}, "storage subtract_on_start: object has no key `missing`"},
           Case{bad_prelude, {}, {}, "parsing gas_data constant `k`"},
           Case{free_config(), {{"k", "1 +"}}, {}, "parsing gas_data constant `k`"},
           Case{free_config(), {{"k", "1 / 0"}}, {}, "evaluating gas_data constant `k`"},
           Case{start_shape, {}, {}, "storage subtract_on_start: fee expression returned an array"},
           Case{no_bucket, {}, {}, "at least one bucket"},
           Case{free_config(), {}, {BigInt(-1)}, "bucket_totals[0]"},
           Case{free_config(), {}, {BigInt(1), big(kU256Max) + BigInt(1)}, "bucket_totals[1]"},
       }) {
    std::map<std::string, std::string> gas = k.gas;
    if (k.config.expr_prelude == "let x = in") gas = {{"k", "1"}};
    auto m = FeeMeter::create(k.config, k.totals, gas);
    ASSERT_FALSE(m) << k.message;
    EXPECT_EQ(m.error().code, "fees_setup");
    EXPECT_NE(m.error().message.find(k.message), std::string::npos) << m.error().message;
  }
}

TEST(FeeMeter, GasDataEntriesAreExpressionsOverThePrelude) {
  FeesConfig c = free_config();
  c.expr_prelude = "let two = 2 in";
  c.storage.delta_expr = "\\a = a.pages * node.price";
  FeeMeter m = meter(c, {BigInt(100)}, {{"price", "two * 3 + 1 / 2 + 1 / 2"}});
  ASSERT_TRUE(m.charge_storage_pages(2).ok());
  EXPECT_EQ(m.remaining(), std::vector<BigInt>{BigInt(86)});
}

TEST(FeeMeter, AMessagePaysFeeAndReceiptTogetherOrNeither) {
  FeesConfig c = free_config();
  c.message_fee.bucket_no = {1};
  c.message_receipt.bucket_no = {0, 2};
  FeeMeter m = meter(c, {BigInt(10), BigInt(5), BigInt(3)});
  EXPECT_FALSE(m.pay_message({BigInt(6)}, {BigInt(1), BigInt(1)}));  // the fee bucket is short
  EXPECT_FALSE(m.pay_message({BigInt(1)}, {BigInt(1), BigInt(4)}));  // a receipt bucket is short
  EXPECT_EQ(m.remaining(), (std::vector<BigInt>{BigInt(10), BigInt(5), BigInt(3)}));
  EXPECT_TRUE(m.pay_message({BigInt(5)}, {BigInt(2), BigInt(3)}));
  EXPECT_EQ(m.remaining(), (std::vector<BigInt>{BigInt(8), BigInt(0), BigInt(0)}));
  EXPECT_EQ(m.consumed().message_fee, BigInt(5));
  EXPECT_EQ(m.consumed().message_receipt, BigInt(5));
  EXPECT_TRUE(m.pay_receipt({BigInt(8), BigInt(0)}));
  EXPECT_EQ(m.remaining(), (std::vector<BigInt>{BigInt(0), BigInt(0), BigInt(0)}));

  // Fee and receipt drawing on one bucket need their sum.
  FeesConfig shared = free_config();
  FeeMeter s = meter(shared, {BigInt(6)});
  EXPECT_FALSE(s.pay_message({BigInt(3)}, {BigInt(4)}));
  EXPECT_TRUE(s.pay_message({BigInt(3)}, {BigInt(3)}));
}

TEST(FeeMeter, NondetOutputCanBeCheckedWithoutTakingIt) {
  FeesConfig c = free_config();
  c.nondet_output.delta_expr = "\\a = a.outputLength";
  FeeMeter m = meter(c, {BigInt(5)});
  auto yes = m.can_charge_nondet_output(5);
  ASSERT_TRUE(yes);
  EXPECT_TRUE(*yes);
  auto no = m.can_charge_nondet_output(6);
  ASSERT_TRUE(no);
  EXPECT_FALSE(*no);
  EXPECT_EQ(m.remaining(), std::vector<BigInt>{BigInt(5)});
  EXPECT_TRUE(m.charge_nondet_output(5).ok());
  EXPECT_EQ(m.consumed().nondet_output, BigInt(5));
}

TEST(FeeMeter, RulesSeeTheAttributesThePublicExecutorPasses) {
  FeesConfig c = free_config();
  c.message_receipt.delta_expr =
      "\\a = if a.isInternal then (if a.isDeploy then a.codeLength else a.calldataLength + a.subtreeLength) else 1000";
  c.message_fee.delta_expr =
      "\\a = if a.isInternal then (if a.onAcceptance then 1 else 0) + (if a.balanceFunded then 10 else 0) "
      "+ arrayLen a.matchedFeeParams.rotations * 100 + a.matchedFeeParams.maxPriceGenPerTimeUnit "
      "+ a.matchedFeeParams.storageFeeMaxGasPrice + a.matchedFeeParams.receiptFeeMaxGasPrice "
      "+ a.matchedFeeParams.leaderTimeunitsAllocation + a.matchedFeeParams.validatorTimeunitsAllocation "
      "+ a.matchedFeeParams.executionBudgetPerRound "
      "else a.matchedFeeParams.gasLimit * a.matchedFeeParams.maxGasPrice";
  FeeMeter m = meter(c, {BigInt(0)});
  auto r = m.price_receipt({.is_internal = true, .is_deploy = false, .calldata_length = 7, .code_length = 100, .subtree_length = 64});
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)[0], BigInt(71));
  r = m.price_receipt({.is_internal = true, .is_deploy = true, .calldata_length = 7, .code_length = 100, .subtree_length = 64});
  EXPECT_EQ((*r)[0], BigInt(100));
  r = m.price_receipt({});
  EXPECT_EQ((*r)[0], BigInt(1000));
  InternalMessageParams p{BigInt(1000), BigInt(20000), BigInt(300000), {BigInt(0), BigInt(0)}, BigInt(4), BigInt(50), BigInt(600)};
  auto f = m.price_internal_message(true, true, p);
  ASSERT_TRUE(f) << vm_error_of(f.error());
  EXPECT_EQ((*f)[0], BigInt(1 + 10 + 200 + 4 + 50 + 600 + 1000 + 20000 + 300000));
  f = m.price_internal_message(false, false, p);
  EXPECT_EQ((*f)[0], BigInt(200 + 4 + 50 + 600 + 1000 + 20000 + 300000));
  auto e = m.price_external_message({BigInt(21000), BigInt(3)});
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)[0], BigInt(63000));
}

// --- The compiled-in rules, evaluated on sample gas_data ---

// gas_data with distinct values, so a formula that swaps two constants shows.
std::map<std::string, std::string> sample_gas() {
  return {{"storageUnitPrice", "3"},      {"receiptGasPerByte", "2"},   {"gasPerChangedSlot", "5"},
          {"intrinsicGas", "7"},          {"bootloaderOverhead", "11"}, {"fixedProposeReceiptGas", "13"},
          {"fixedMessageRevealGas", "17"}, {"genPerTimeUnit", "19"}};
}

const BigInt kBig = big("1000000000000000000000");

FeeMeter default_meter(std::map<std::string, std::string> gas = sample_gas()) {
  return meter(default_fees_config(), {kBig, kBig, kBig, kBig}, std::move(gas));
}

// The funding floor of an internal message, written out here as its definition reads
// (impl-spec 04-fees.rst; default_fees.yaml): an independent check of the expression text.
BigInt reference_floor(const InternalMessageParams& p, bool on_acceptance, bool balance_funded,
                       const std::vector<std::int64_t>& validators, std::int64_t gen_per_time_unit) {
  const std::int64_t appeals = static_cast<std::int64_t>(p.rotations.size()) - 1;
  BigInt time_units;
  for (std::int64_t round = 0; round <= 2 * appeals; ++round) {
    BigInt rotations = round == 0 ? p.rotations[0] + BigInt(1)
                       : round % 2 == 1 ? BigInt(1)
                                        : p.rotations[static_cast<std::size_t>(round / 2)] + BigInt(1);
    time_units = time_units + rotations * (p.leader_timeunits_allocation +
                                           BigInt(validators[static_cast<std::size_t>(round)]) * p.validator_timeunits_allocation);
  }
  BigInt leader_rounds(appeals);
  for (const BigInt& r : p.rotations) leader_rounds = leader_rounds + r + BigInt(1);
  BigInt price = balance_funded ? p.max_price_gen_per_time_unit : BigInt(gen_per_time_unit);
  BigInt primary = (price > BigInt(0) ? price * time_units : time_units) + p.execution_budget_per_round * leader_rounds;
  return primary * (on_acceptance ? BigInt(appeals + 1) : BigInt(1));
}

const std::vector<std::int64_t> kGovernanceValidators = {5,   7,   11,  13,  23,  25,  47,   49,   95,
                                                         97,  191, 193, 383, 385, 767, 769, 1535, 1537};

InternalMessageParams params(std::vector<std::int64_t> rotations, std::int64_t leader = 30, std::int64_t validator = 40,
                             std::int64_t budget = 1000, std::int64_t max_price = 3) {
  InternalMessageParams p{BigInt(leader), BigInt(validator), BigInt(budget), {}, BigInt(max_price), BigInt(1), BigInt(1)};
  for (std::int64_t r : rotations) p.rotations.push_back(BigInt(r));
  return p;
}

TEST(DefaultFeeRules, StartCostsAreTheReceiptsFixedParts) {
  FeeMeter m = default_meter();
  ASSERT_FALSE(m.charge_start());
  // propose: 13 + 7 + 11 + 7 * 5; reveal: 17 + 7 + 11 + 32 * 5; nondet outputs: 32 * 2
  EXPECT_EQ(m.consumed().message_receipt, BigInt(261));
  EXPECT_EQ(m.consumed().nondet_output, BigInt(64));
  EXPECT_EQ(m.remaining(), (std::vector<BigInt>{kBig - BigInt(325), kBig, kBig, kBig}));
}

TEST(DefaultFeeRules, StorageNondetEventAndReceiptCharges) {
  FeeMeter m = default_meter();
  ASSERT_TRUE(m.charge_storage_pages(4).ok());
  EXPECT_EQ(m.consumed().storage, BigInt(12));
  // 100 output bytes: 32 + 32 + 128 ABI bytes at 2 each; the byte cap bucket takes the 100.
  ASSERT_TRUE(m.charge_nondet_output(100).ok());
  EXPECT_EQ(m.remaining()[2], kBig - BigInt(100));
  EXPECT_EQ(m.consumed().nondet_output, BigInt(384 + 100));
  // 2 topics and 65 blob bytes (3 words) at 3 each.
  auto ev = m.charge_event(65, 2);
  ASSERT_TRUE(ev);
  EXPECT_EQ(*ev, BigInt(15));
  // calldata 70 bytes (64 + 96), subtree 64 (64 + 64): 288 ABI bytes, at 2 each, + one slot.
  auto r = m.price_receipt({.is_internal = true, .is_deploy = false, .calldata_length = 70, .code_length = 0, .subtree_length = 64});
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (Costs{BigInt(581), BigInt(288)}));
  // A deploy carries its code too: 1000 bytes are 64 + 1024 more.
  r = m.price_receipt({.is_internal = true, .is_deploy = true, .calldata_length = 70, .code_length = 1000, .subtree_length = 64});
  EXPECT_EQ(*r, (Costs{BigInt(2757), BigInt(1376)}));
  // The code length counts only for a deploy.
  r = m.price_receipt({.is_internal = false, .is_deploy = false, .calldata_length = 0, .code_length = 1000, .subtree_length = 0});
  EXPECT_EQ(*r, (Costs{BigInt(128 * 2 + 5), BigInt(128)}));
}

TEST(DefaultFeeRules, ExternalMessagesReserveGasLimitTimesPrice) {
  FeeMeter m = default_meter();
  auto f = m.price_external_message({BigInt(21000), BigInt(7)});
  ASSERT_TRUE(f);
  EXPECT_EQ(*f, Costs{BigInt(147000)});
}

TEST(DefaultFeeRules, InternalMessageFloorMatchesItsDefinition) {
  FeeMeter m = default_meter();
  for (const auto& rotations : std::vector<std::vector<std::int64_t>>{
           {0}, {1}, {2, 1, 3}, {0, 0}, {5, 4, 3, 2, 1, 0, 7, 8, 9}}) {
    for (bool on_acceptance : {false, true}) {
      for (bool balance_funded : {false, true}) {
        InternalMessageParams p = params(rotations);
        auto f = m.price_internal_message(on_acceptance, balance_funded, p);
        ASSERT_TRUE(f) << vm_error_of(f.error());
        EXPECT_EQ(f->size(), 1u);
        EXPECT_EQ((*f)[0], reference_floor(p, on_acceptance, balance_funded, kGovernanceValidators, 19))
            << rotations.size() << " rotations, acceptance " << on_acceptance << ", balance " << balance_funded;
      }
    }
  }
  // A hand-checked case: rotations [2], leader 30, validator 40, budget 1000, price 19:
  // time units (2 + 1) * (30 + 5 * 40) = 690; leader rounds 3; 19 * 690 + 1000 * 3 = 16110.
  auto f = m.price_internal_message(false, false, params({2}));
  ASSERT_TRUE(f);
  EXPECT_EQ((*f)[0], BigInt(16110));
}

TEST(DefaultFeeRules, APriceOfZeroCountsTimeUnitsAsTheyAre) {
  auto gas = sample_gas();
  gas["genPerTimeUnit"] = "0";
  FeeMeter m = default_meter(gas);
  auto f = m.price_internal_message(false, false, params({2}));
  ASSERT_TRUE(f);
  EXPECT_EQ((*f)[0], BigInt(690 + 3000));
  EXPECT_EQ((*f)[0], reference_floor(params({2}), false, false, kGovernanceValidators, 0));
}

TEST(DefaultFeeRules, TooManyRoundsForTheValidatorTable) {
  FeeMeter m = default_meter();
  // 18 validator counts cover rounds 0..17: 9 rotations are 8 appeals, rounds 0..16; 10 are too many.
  auto f = m.price_internal_message(false, false, params({0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  ASSERT_FALSE(f);
  ASSERT_TRUE(f.error().vm_error);
  EXPECT_EQ(f.error().vm_error->to_string(), "fee too_many_rounds");
  auto gas = sample_gas();
  gas["validatorsPerRound"] = "[1, 2, 3]";
  FeeMeter small = default_meter(gas);
  auto two = small.price_internal_message(false, false, params({1, 1}));
  ASSERT_TRUE(two) << vm_error_of(two.error());
  EXPECT_EQ((*two)[0], reference_floor(params({1, 1}), false, false, {1, 2, 3}, 19));
  auto three = small.price_internal_message(false, false, params({1, 1, 1}));
  ASSERT_FALSE(three);
  EXPECT_EQ(vm_error_of(three.error()), "fee too_many_rounds");
}

TEST(DefaultFeeRules, NodeMinimumsRefuseUnderfundedMessages) {
  auto gas = sample_gas();
  gas["minTimeUnitsPerPhase"] = "30";
  gas["messageBudgetFloor"] = "2000";
  FeeMeter m = default_meter(gas);
  EXPECT_EQ(vm_error_of(m.price_internal_message(false, false, params({0}, 29, 40, 5000)).error()), "fee below_minimum");
  EXPECT_EQ(vm_error_of(m.price_internal_message(false, false, params({0}, 30, 29, 5000)).error()), "fee below_minimum");
  EXPECT_EQ(vm_error_of(m.price_internal_message(false, true, params({0}, 30, 30, 1999)).error()), "fee below_minimum");
  auto at_floor = m.price_internal_message(false, true, params({0}, 30, 30, 2000));
  ASSERT_TRUE(at_floor) << vm_error_of(at_floor.error());
  // A zero budget is not "below the floor" (the spec: a non-zero budget below it is refused).
  auto zero = m.price_internal_message(false, false, params({0}, 30, 30, 0));
  ASSERT_TRUE(zero) << vm_error_of(zero.error());
  EXPECT_EQ((*zero)[0], reference_floor(params({0}, 30, 30, 0), false, false, kGovernanceValidators, 19));
  // External messages are not subject to them.
  EXPECT_TRUE(m.price_external_message({BigInt(1), BigInt(1)}).ok());
}

TEST(DefaultFeeRules, MissingGasConstantsStopTheStartOrTheCharge) {
  auto gas = sample_gas();
  gas.erase("intrinsicGas");  // the receipts' start cost needs it
  auto m = FeeMeter::create(default_fees_config(), {kBig, kBig, kBig, kBig}, gas);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("intrinsicGas"), std::string::npos) << m.error().message;
  gas = sample_gas();
  gas.erase("storageUnitPrice");  // only the storage and event charges need it
  FeeMeter lazy = default_meter(gas);
  EXPECT_FALSE(lazy.charge_start());
  auto r = lazy.charge_storage_pages(1);
  ASSERT_FALSE(r);
  EXPECT_FALSE(r.error().vm_error);
}

TEST(DefaultFeeRules, TheLargestRoundTableFitsTheEvaluatorBounds) {
  // 9 rotations is the most the governance table allows; the evaluation must fit well inside
  // the default bounds (here: a third of the recursion allowance).
  expr::Limits tight;
  tight.max_eval_depth = expr::Limits{}.max_eval_depth / 3;
  auto m = FeeMeter::create(default_fees_config(), {kBig, kBig, kBig, kBig}, sample_gas(), tight);
  ASSERT_TRUE(m) << m.error().to_string();
  auto f = m->price_internal_message(true, true, params({9, 9, 9, 9, 9, 9, 9, 9, 9}));
  ASSERT_TRUE(f) << vm_error_of(f.error());
}

}  // namespace
}  // namespace genvm::executor::fees
