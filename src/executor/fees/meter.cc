#include "executor/fees/meter.h"

#include <map>
#include <utility>

namespace genvm::executor::fees {

namespace {

using expr::ExprError;
using expr::Value;

Value num(const BigInt& v) { return Value::number(Rational::integer(v)); }
Value num(std::uint64_t v) { return num(BigInt(v)); }

const BigInt& u256_max() {
  static const BigInt max = BigInt::from_magnitude(false, BigInt::Limbs(8, 0xffffffffu));
  return max;
}

Error setup_error(std::string message) { return make_error("fees_setup", std::move(message)); }

// A cost: a non-negative integer; above 2^256 - 1 it saturates there (and so fails against any
// bucket but a full one), as the public executor does.
Result<BigInt> cost_of(const Value& v) {
  const Rational* r = v.if_number();
  if (!r) return make_error("fee_cost", "fee expression must yield a number or array, got " + std::string(v.type_name()));
  if (!r->is_integer()) return make_error("fee_cost", "fee expression must yield an integer, got " + r->to_string());
  if (r->is_negative()) return make_error("fee_cost", "fee cost must be non-negative");
  if (r->numerator() > u256_max()) return u256_max();
  return r->numerator();
}

Result<Costs> costs_of(const Value& v, std::size_t buckets) {
  if (const Value::Array* a = v.if_array()) {
    if (a->size() != buckets) {
      return make_error("fee_cost", "fee expression returned an array of length " + std::to_string(a->size()) +
                                        " for " + std::to_string(buckets) + " buckets");
    }
    Costs out;
    for (const Value& e : *a) {
      if (!e.if_number()) return make_error("fee_cost", "fee array element must be a number");
      auto c = cost_of(e);
      if (!c) return c.error();
      out.push_back(std::move(*c));
    }
    return out;
  }
  auto c = cost_of(v);
  if (!c) return c.error();
  return Costs(buckets, *c);
}

Result<Value> evaluate_source(const std::string& source, const expr::Limits& limits) {
  auto p = expr::parse(source, limits);
  if (!p) return make_error("parse", expr::to_string(p.error()));
  auto v = expr::evaluate(*p, limits);
  if (!v) return make_error("evaluate", expr::to_string(v.error()));
  return std::move(*v);
}

// `\node = <prelude> <code>` applied to `node`: what the rule's code means for this run.
Result<Value> bind_node(const std::string& prelude, const std::string& label, const std::string& code,
                        const Value& node, const expr::Limits& limits) {
  auto lambda = evaluate_source("\\node = " + prelude + "\n" + code, limits);
  if (!lambda) return setup_error(lambda.error().code + " of " + label + ": " + lambda.error().message);
  auto bound = expr::apply(*lambda, node, limits);
  if (!bound) return setup_error("binding `node` in " + label + ": " + expr::to_string(bound.error()));
  return std::move(*bound);
}

FeeError internal(std::string message) { return FeeError{std::nullopt, std::move(message)}; }
FeeError out_of(VmErrorCode code) { return FeeError{VmError(code), {}}; }

BigInt sum(const std::vector<BigInt>& v) {
  BigInt s;
  for (const BigInt& x : v) s = s + x;
  return s;
}

}  // namespace

Value internal_params_expr(const InternalMessageParams& p) {
  Value::Array rotations;
  for (const BigInt& r : p.rotations) rotations.push_back(num(r));
  return Value::object({
      {"leaderTimeunitsAllocation", num(p.leader_timeunits_allocation)},
      {"validatorTimeunitsAllocation", num(p.validator_timeunits_allocation)},
      {"executionBudgetPerRound", num(p.execution_budget_per_round)},
      {"rotations", Value::array(std::move(rotations))},
      {"maxPriceGenPerTimeUnit", num(p.max_price_gen_per_time_unit)},
      {"storageFeeMaxGasPrice", num(p.storage_fee_max_gas_price)},
      {"receiptFeeMaxGasPrice", num(p.receipt_fee_max_gas_price)},
  });
}

Value external_params_expr(const ExternalMessageParams& p) {
  return Value::object({{"gasLimit", num(p.gas_limit)}, {"maxGasPrice", num(p.max_gas_price)}});
}

Result<FeeMeter> FeeMeter::create(const FeesConfig& config, const std::vector<BigInt>& bucket_totals,
                                  const std::map<std::string, std::string>& gas_data, const expr::Limits& limits) {
  FeeMeter m;
  m.limits_ = limits;
  for (std::size_t i = 0; i < bucket_totals.size(); ++i) {
    const BigInt& t = bucket_totals[i];
    if (t.is_negative() || t > u256_max()) {
      return setup_error("bucket_totals[" + std::to_string(i) + "] is not in [0, 2^256)");
    }
  }
  m.totals_ = bucket_totals;

  // The host's constants, each an expression of its own (it may use the prelude's names).
  Value::Object node;
  for (const auto& [name, raw] : gas_data) {
    auto p = expr::parse(config.expr_prelude + "\n" + raw, limits);
    if (!p) return setup_error("parsing gas_data constant `" + name + "`: " + expr::to_string(p.error()));
    auto v = expr::evaluate(*p, limits);
    if (!v) return setup_error("evaluating gas_data constant `" + name + "`: " + expr::to_string(v.error()));
    node.emplace(name, std::move(*v));
  }
  Value node_value = Value::object(std::move(node));

  struct Slot {
    const char* label;
    const BucketRule* config;
    Rule* rule;
  };
  for (Slot s : {Slot{"storage", &config.storage, &m.storage_},
                 Slot{"message_receipt", &config.message_receipt, &m.message_receipt_},
                 Slot{"nondet_output", &config.nondet_output, &m.nondet_output_},
                 Slot{"message_fee", &config.message_fee, &m.message_fee_}, Slot{"event", &config.event, &m.event_}}) {
    const std::size_t n = s.config->bucket_no.size();
    if (n == 0) return setup_error(std::string(s.label) + ": bucket_no must name at least one bucket");
    std::string label = std::string(s.label) + " subtract_on_start";
    auto start = bind_node(config.expr_prelude, label, s.config->subtract_on_start_expr, node_value, limits);
    if (!start) return start.error();
    auto start_costs = costs_of(*start, n);
    if (!start_costs) return setup_error(label + ": " + start_costs.error().message);
    auto delta = bind_node(config.expr_prelude, std::string(s.label) + " delta", s.config->delta_expr, node_value, limits);
    if (!delta) return delta.error();
    s.rule->buckets = s.config->bucket_no;
    s.rule->start = std::move(*start_costs);
    s.rule->delta = std::move(*delta);
    s.rule->taken.assign(n, BigInt());
  }
  return m;
}

FeeOutcome<Costs> FeeMeter::price(const Rule& rule, Value::Object attrs) const {
  auto v = expr::apply(rule.delta, Value::object(std::move(attrs)), limits_);
  if (!v) {
    const ExprError& e = v.error();
    if (e.failure == expr::Failure::kVmError) {
      auto vm = VmError::parse(e.message);
      if (!vm) return internal("fee expression raised an unknown VM error `" + e.message + "`");
      return FeeError{std::move(*vm), {}};
    }
    return internal("failed to evaluate fee expression: " + expr::to_string(e));
  }
  auto costs = costs_of(*v, rule.buckets.size());
  if (!costs) return internal("failed to evaluate fee expression: " + costs.error().message);
  return std::move(*costs);
}

bool FeeMeter::fits(const Rule& rule, const Costs& costs) const {
  // A bucket named twice must hold the sum of its entries.
  std::map<std::uint8_t, BigInt> need;
  for (std::size_t i = 0; i < rule.buckets.size(); ++i) {
    if (rule.buckets[i] >= totals_.size()) return false;
    BigInt& n = need[rule.buckets[i]];
    n = n + costs[i];
    if (n > totals_[rule.buckets[i]]) return false;
  }
  return true;
}

bool FeeMeter::take(Rule& rule, const Costs& costs) {
  if (!fits(rule, costs)) return false;
  for (std::size_t i = 0; i < rule.buckets.size(); ++i) {
    totals_[rule.buckets[i]] = totals_[rule.buckets[i]] - costs[i];
    rule.taken[i] = rule.taken[i] + costs[i];
  }
  return true;
}

std::optional<VmError> FeeMeter::charge_start() {
  struct Step {
    Rule* rule;
    VmErrorCode oom;
  };
  for (Step s : {Step{&storage_, VmError::out_of().storage()}, Step{&message_receipt_, VmError::out_of().receipt().message()},
                 Step{&nondet_output_, VmError::out_of().receipt().nondet_output()},
                 Step{&message_fee_, VmError::out_of().message_fee().total()},
                 Step{&event_, VmError::out_of().receipt().event()}}) {
    if (!take(*s.rule, s.rule->start)) return VmError(s.oom);
  }
  return std::nullopt;
}

FeeOutcome<void> FeeMeter::charge_storage_pages(std::uint64_t pages) {
  for (std::uint64_t i = 0; i < pages; ++i) {
    auto c = price(storage_, {{"pages", num(std::uint64_t{1})}});
    if (!c) return c.take_error();
    if (!take(storage_, *c)) return out_of(VmError::out_of().storage());
  }
  return {};
}

FeeOutcome<bool> FeeMeter::can_charge_nondet_output(std::uint64_t output_length) {
  auto c = price(nondet_output_, {{"outputLength", num(output_length)}});
  if (!c) return c.take_error();
  return fits(nondet_output_, *c);
}

FeeOutcome<void> FeeMeter::charge_nondet_output(std::uint64_t output_length) {
  auto c = price(nondet_output_, {{"outputLength", num(output_length)}});
  if (!c) return c.take_error();
  if (!take(nondet_output_, *c)) return out_of(VmError::out_of().receipt().nondet_output());
  return {};
}

FeeOutcome<BigInt> FeeMeter::charge_event(std::uint64_t blob_size, std::uint64_t topics_count) {
  auto c = price(event_, {{"blobSize", num(blob_size)}, {"topicsCount", num(topics_count)}});
  if (!c) return c.take_error();
  if (!take(event_, *c)) return out_of(VmError::out_of().receipt().event());
  return (*c)[0];
}

FeeOutcome<Costs> FeeMeter::price_receipt(const ReceiptAttrs& a) {
  return price(message_receipt_, {{"isInternal", Value::boolean(a.is_internal)},
                                  {"isDeploy", Value::boolean(a.is_deploy)},
                                  {"calldataLength", num(a.calldata_length)},
                                  {"codeLength", num(a.code_length)},
                                  {"subtreeLength", num(a.subtree_length)}});
}

FeeOutcome<Costs> FeeMeter::price_internal_message(bool on_acceptance, bool balance_funded,
                                                   const InternalMessageParams& p) {
  return price(message_fee_, {{"isInternal", Value::boolean(true)},
                              {"onAcceptance", Value::boolean(on_acceptance)},
                              {"balanceFunded", Value::boolean(balance_funded)},
                              {"matchedFeeParams", internal_params_expr(p)}});
}

FeeOutcome<Costs> FeeMeter::price_external_message(const ExternalMessageParams& p) {
  return price(message_fee_, {{"isInternal", Value::boolean(false)}, {"matchedFeeParams", external_params_expr(p)}});
}

bool FeeMeter::pay_message(const Costs& fee, const Costs& receipt) {
  std::map<std::uint8_t, BigInt> need;
  for (std::size_t i = 0; i < message_fee_.buckets.size(); ++i) need[message_fee_.buckets[i]] = need[message_fee_.buckets[i]] + fee[i];
  for (std::size_t i = 0; i < message_receipt_.buckets.size(); ++i) {
    need[message_receipt_.buckets[i]] = need[message_receipt_.buckets[i]] + receipt[i];
  }
  for (const auto& [bucket, amount] : need) {
    if (bucket >= totals_.size() || amount > totals_[bucket]) return false;
  }
  for (const auto& [bucket, amount] : need) totals_[bucket] = totals_[bucket] - amount;
  for (std::size_t i = 0; i < fee.size(); ++i) message_fee_.taken[i] = message_fee_.taken[i] + fee[i];
  for (std::size_t i = 0; i < receipt.size(); ++i) message_receipt_.taken[i] = message_receipt_.taken[i] + receipt[i];
  return true;
}

bool FeeMeter::pay_receipt(const Costs& receipt) { return take(message_receipt_, receipt); }

ConsumedTotals FeeMeter::consumed() const {
  return ConsumedTotals{sum(storage_.taken), sum(message_receipt_.taken), sum(nondet_output_.taken),
                        sum(message_fee_.taken), sum(event_.taken)};
}

}  // namespace genvm::executor::fees
