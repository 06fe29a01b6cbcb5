// FeeMeter: the host's fee buckets and the charges a run makes against them
// (impl-spec 04-fees.rst, "Charge Lifecycle").
//
//   auto m = FeeMeter::create(config, execution_data.bucket_totals, execution_data.gas_data);
//   if (!m) ...                                   // the run cannot start (config or gas_data bad)
//   if (auto oom = m->charge_start()) ...         // the run ends at once with *oom
//   auto r = m->charge_storage_pages(1);          // per charge; r.error() says what it means
//
// Each charge applies its rule's delta function to an `attrs` object, converts the result to one
// cost per bucket the rule names (a number is charged to every one of them, an array entry by
// entry; each cost a non-negative integer, saturated at 2^256 - 1), and takes all of the costs
// or none. A charge fails three ways: the buckets cannot pay (a VM error of the out_of family,
// per charge), the expression raised `vmError` (that VM error), or the expression did something
// else wrong (internal: the rules are broken, not the contract). Every outcome depends only on
// the config, the ExecutionData and the charges made so far: the same on every machine.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/bigint.h"
#include "common/result.h"
#include "common/vm_error.h"
#include "executor/fees/allocation.h"
#include "executor/fees/config.h"
#include "executor/fees/expr.h"
#include "executor/fees/outcome.h"

namespace genvm::executor::fees {

struct FeeError {
  std::optional<VmError> vm_error;  // set: the run ends with this VM error; unset: internal error
  std::string message;
};

template <class T>
using FeeOutcome = Outcome<T, FeeError>;

// One cost per entry of a rule's bucket_no. The first is the one an emission reports.
using Costs = std::vector<BigInt>;

// What each rule has taken in total (data_fees_consumed): the sum over the rule's buckets.
struct ConsumedTotals {
  BigInt storage;
  BigInt message_receipt;
  BigInt nondet_output;
  BigInt message_fee;
  BigInt event;
  friend bool operator==(const ConsumedTotals&, const ConsumedTotals&) = default;
};

struct ReceiptAttrs {
  bool is_internal = false;
  bool is_deploy = false;
  std::uint64_t calldata_length = 0;
  std::uint64_t code_length = 0;
  std::uint64_t subtree_length = 0;
};

class FeeMeter {
 public:
  // Evaluates every gas_data entry (prelude + entry) into the `node` object, then each rule's
  // subtract_on_start_expr and delta_expr as `\node = prelude code` applied to it. Totals must be
  // U256s. Error code "fees_setup"; the message names the rule or the gas_data entry.
  static Result<FeeMeter> create(const FeesConfig& config, const std::vector<BigInt>& bucket_totals,
                                 const std::map<std::string, std::string>& gas_data,
                                 const expr::Limits& limits = {});

  // Takes every rule's start cost, in the order storage, message_receipt, nondet_output,
  // message_fee, event; the first that cannot be paid gives its VM error (the costs already
  // taken stay taken).
  std::optional<VmError> charge_start();

  // Storage pages a run writes for the first time: `out_of storage`. Priced and taken one page
  // at a time (attrs.pages is 1), as the public executor charges each page as it writes it:
  // when the buckets run out part way, the pages before stay charged.
  FeeOutcome<void> charge_storage_pages(std::uint64_t pages);
  // A nondet block's output: `out_of receipt nondet_output`. can_ checks without taking.
  FeeOutcome<bool> can_charge_nondet_output(std::uint64_t output_length);
  FeeOutcome<void> charge_nondet_output(std::uint64_t output_length);
  // An event: `out_of receipt event`; returns the first bucket's cost (the emission's storage_fee).
  FeeOutcome<BigInt> charge_event(std::uint64_t blob_size, std::uint64_t topics_count);

  // Messages are priced first, then paid in one step.
  FeeOutcome<Costs> price_receipt(const ReceiptAttrs& attrs);
  FeeOutcome<Costs> price_internal_message(bool on_acceptance, bool balance_funded, const InternalMessageParams& p);
  FeeOutcome<Costs> price_external_message(const ExternalMessageParams& p);
  // Takes both or neither (a bucket named by both rules must hold their sum).
  bool pay_message(const Costs& fee, const Costs& receipt);
  // A balance-funded message pays its receipt only.
  bool pay_receipt(const Costs& receipt);

  const std::vector<BigInt>& remaining() const { return totals_; }
  ConsumedTotals consumed() const;

 private:
  struct Rule {
    std::vector<std::uint8_t> buckets;
    Costs start;
    expr::Value delta;
    std::vector<BigInt> taken;  // per entry of `buckets`
  };

  FeeMeter() = default;
  FeeOutcome<Costs> price(const Rule& rule, expr::Value::Object attrs) const;
  bool fits(const Rule& rule, const Costs& costs) const;
  bool take(Rule& rule, const Costs& costs);

  std::vector<BigInt> totals_;
  Rule storage_, message_receipt_, nondet_output_, message_fee_, event_;
  expr::Limits limits_;
};

// The value a message-fee rule sees as `matchedFeeParams`.
expr::Value internal_params_expr(const InternalMessageParams& p);
expr::Value external_params_expr(const ExternalMessageParams& p);

}  // namespace genvm::executor::fees
