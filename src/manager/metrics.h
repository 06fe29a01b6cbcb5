// Prometheus text exposition for the manager: counters, gauges and fixed-bucket histograms.
// Pure formatting over numbers the registry keeps; no global state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace genvm::manager {

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);  // ascending; +Inf is implicit
  void observe(double v);
  // `name`_bucket{le=...}, `name`_sum, `name`_count, with HELP and TYPE lines.
  void render(std::string& out, std::string_view name, std::string_view help) const;
  std::uint64_t count() const { return count_; }

 private:
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;  // per bucket, not cumulative; the last is +Inf
  double sum_ = 0;
  std::uint64_t count_ = 0;
};

void render_gauge(std::string& out, std::string_view name, std::string_view help, double value);
// One counter family with a single label: name{label="value"} n for every pair.
void render_counter(std::string& out, std::string_view name, std::string_view help,
                    std::string_view label, const std::vector<std::pair<std::string, std::uint64_t>>& values);
std::string format_metric_number(double v);

}  // namespace genvm::manager
