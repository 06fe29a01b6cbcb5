#include "manager/metrics.h"

#include <gtest/gtest.h>

#include "common/json.h"

namespace genvm::manager {
namespace {

TEST(ManagerMetrics, HistogramBucketsAreCumulativeWithInf) {
  Histogram h({1, 10});
  for (double v : {0.5, 1.0, 5.0, 50.0}) h.observe(v);
  std::string out;
  h.render(out, "x_seconds", "help text");
  EXPECT_EQ(out,
            "# HELP x_seconds help text\n# TYPE x_seconds histogram\n"
            "x_seconds_bucket{le=\"1\"} 2\nx_seconds_bucket{le=\"10\"} 3\n"
            "x_seconds_bucket{le=\"+Inf\"} 4\nx_seconds_sum 56.5\nx_seconds_count 4\n");
}

TEST(ManagerMetrics, CounterAndGaugeLines) {
  std::string out;
  render_counter(out, "runs_total", "h", "outcome", {{"exited", 3}, {"deadline", 0}});
  render_gauge(out, "depth", "h", 2);
  EXPECT_EQ(out,
            "# HELP runs_total h\n# TYPE runs_total counter\nruns_total{outcome=\"exited\"} 3\n"
            "runs_total{outcome=\"deadline\"} 0\n# HELP depth h\n# TYPE depth gauge\ndepth 2\n");
  EXPECT_EQ(format_metric_number(16e6), "16000000");
  EXPECT_EQ(format_metric_number(0.1), "0.1");
}

TEST(ManagerJson, WriterEscapesAndPlacesCommas) {
  JsonWriter w;
  w.begin_object().key("a").number(-1).key("b").begin_array().string("x").boolean(true).null().end_array();
  // serde_json's escapes: \b and \f by name, other control characters as \u00xx, DEL as is.
  w.key("c").string("q\"\\\x7f\xff\xc3\xa9\b\f\x01").end_object();
  EXPECT_EQ(w.take(), "{\"a\":-1,\"b\":[\"x\",true,null],\"c\":\"q\\\"\\\\\x7f\xEF\xBF\xBD\xC3\xA9\\b\\f\\u0001\"}");
}

TEST(ManagerJson, Base64MatchesRfc4648Vectors) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64_encode(std::string("\xff\x00", 2)), "/wA=");
}

}  // namespace
}  // namespace genvm::manager
