// The fee rules: for each of the five charges, which host buckets pay it and what it costs, as
// fee expressions (expr.h). The shape is the `fees` block of the public executor's config
// (impl-spec 04-fees.rst, "Configuration"):
//
//   fees:
//     expr_prelude: "<text put before every expression>"
//     storage:         { bucket_no: N | [N, ...], subtract_on_start_expr: "...", delta_expr: "..." }
//     message_receipt: { ... }    nondet_output: { ... }    message_fee: { ... }    event: { ... }
//
// bucket_no indexes ExecutionData.bucket_totals (0..255); subtract_on_start_expr defaults to "0".
//
//   Result<FeesConfig> c = parse_fees_config(yaml_text);   // a whole config file; reads `fees`
//   Result<FeesConfig> f = load_fees_config(path);          // the same, from a file
//   const FeesConfig& d = default_fees_config();            // the rules this executor ships
//
// Error code: "fees_config" (the message names the key).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace genvm::executor::fees {

struct BucketRule {
  std::vector<std::uint8_t> bucket_no;  // at least one
  std::string subtract_on_start_expr = "0";
  std::string delta_expr;
};

struct FeesConfig {
  std::string expr_prelude;
  BucketRule storage;
  BucketRule message_receipt;
  BucketRule nondet_output;
  BucketRule message_fee;
  BucketRule event;
};

// Reads the `fees` map of a YAML document (other top-level keys are left to their owners).
// Inside `fees` the key sets are exact: a misspelt key is an error, not a silent default.
Result<FeesConfig> parse_fees_config(std::string_view yaml_text);

// parse_fees_config of a file's contents (`genvm --config FILE`); "fees_config" errors name it.
Result<FeesConfig> load_fees_config(const std::string& path);

// The compiled-in rules (src/executor/fees/default_fees.yaml), parsed once.
const FeesConfig& default_fees_config();
// Their text, for `--help`-style dumps and tests.
std::string_view default_fees_yaml();

}  // namespace genvm::executor::fees
