#include "manager/metrics.h"

#include <cmath>
#include <cstdio>

namespace genvm::manager {

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double v) {
  std::size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += v;
  ++count_;
}

std::string format_metric_number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

void Histogram::render(std::string& out, std::string_view name, std::string_view help) const {
  std::string n(name);
  out += "# HELP " + n + " " + std::string(help) + "\n# TYPE " + n + " histogram\n";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    std::string le = i < bounds_.size() ? format_metric_number(bounds_[i]) : "+Inf";
    out += n + "_bucket{le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
  }
  out += n + "_sum " + format_metric_number(sum_) + "\n";
  out += n + "_count " + std::to_string(count_) + "\n";
}

void render_gauge(std::string& out, std::string_view name, std::string_view help, double value) {
  std::string n(name);
  out += "# HELP " + n + " " + std::string(help) + "\n# TYPE " + n + " gauge\n";
  out += n + " " + format_metric_number(value) + "\n";
}

void render_counter(std::string& out, std::string_view name, std::string_view help,
                    std::string_view label, const std::vector<std::pair<std::string, std::uint64_t>>& values) {
  std::string n(name);
  out += "# HELP " + n + " " + std::string(help) + "\n# TYPE " + n + " counter\n";
  for (const auto& [value, count] : values) {
    out += n + "{" + std::string(label) + "=\"" + value + "\"} " + std::to_string(count) + "\n";
  }
}

}  // namespace genvm::manager
