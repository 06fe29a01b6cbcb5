// Executor lines as versioning.rs and run.rs resolve them.
#include "manager/versioning.h"

#include "manager/version_pattern.h"

#include <gtest/gtest.h>

namespace genvm::manager {
namespace {

UtcTime at(const char* text) { return *parse_rfc3339(text); }

Manifest manifest(const std::string& body) {
  auto m = parse_manifest("executor_versions:\n" + body);
  EXPECT_TRUE(m.ok()) << m.error().to_string();
  return m.ok() ? *m : Manifest{};
}

ExecutorSelector major(std::uint32_t m) { return {ExecutorSelector::Kind::kMajor, m, ""}; }
ExecutorSelector version(std::string v) { return {ExecutorSelector::Kind::kVersion, 0, std::move(v)}; }

std::string key_of(const Manifest& m, const ExecutorSelector& s, const char* when = "2025-01-01T00:00:00Z") {
  auto r = resolve_selector(m, s, at(when));
  return r.ok() ? r->key : "error: " + r.error().message;
}

TEST(ManagerVersioning, KeysParseAsVersioningRsReadsThem) {
  auto v = parse_executor_version("v0.3.0-rc7");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, (ExecutorVersion{0, 3, 0}));
  EXPECT_EQ(*parse_executor_version("1.2.3"), (ExecutorVersion{1, 2, 3})) << "the v is optional";
  EXPECT_EQ(*parse_executor_version("v+1.2.3"), (ExecutorVersion{1, 2, 3})) << "Rust's integer parse takes a +";
  for (const char* bad : {"v1.2", "v1.2.3.4", "vx.2.3", "v1..3", "v1.2.-rc", "v0.3.0-rc.1", "latest"}) {
    EXPECT_FALSE(parse_executor_version(bad).ok()) << bad;
  }
}

TEST(ManagerVersioning, TheManifestRefusesDuplicatesAndBadEntries) {
  auto dup = parse_manifest(
      "executor_versions:\n  v0.3.0-rc7: {available_after: 2024-09-01T00:00:00Z}\n"
      "  v0.3.0: {available_after: 2024-09-01T00:00:00Z}\n");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.error().message.find("duplicate version 0.3.0"), std::string::npos) << dup.error().message;
  EXPECT_FALSE(parse_manifest("executor_versions:\n  v0.1.0: {}\n").ok());
  EXPECT_FALSE(parse_manifest("executor_versions:\n  v0.1.0: {available_after: yesterday}\n").ok());
  EXPECT_FALSE(parse_manifest("lines: {}\n").ok());
  EXPECT_TRUE(parse_manifest("executor_versions: {}\nnote: ignored\n").ok()) << "serde ignores other keys";
  EXPECT_EQ(load_manifest("/nonexistent/manifest.yaml").error().code, "bad_manifest");
}

// versioning_test.rs: both released lines are major 0, so a major cannot separate them.
TEST(ManagerVersioning, AMajorTakesTheNewestOpenLineAndFallsBackToTheNewestOfAll) {
  Manifest m = manifest("  \"v0.2.17\": {available_after: 2024-09-01T00:00:00Z}\n"
                        "  \"v0.3.0-rc7\": {available_after: 2024-09-01T00:00:00Z}\n"
                        "  \"v1.0.0\": {available_after: 2030-01-01T00:00:00Z}\n");
  EXPECT_EQ(key_of(m, major(0)), "v0.3.0-rc7");
  EXPECT_EQ(key_of(m, major(1)), "v0.3.0-rc7") << "not open yet: the fallback is the newest open line";
  EXPECT_EQ(key_of(m, major(1), "2030-01-01T00:00:00Z"), "v1.0.0");
  EXPECT_EQ(key_of(m, major(7)), "v0.3.0-rc7");
  EXPECT_EQ(key_of(m, major(0), "2020-01-01T00:00:00Z"),
            "error: no compatible version found for major 0 and no line is available at all");
  EXPECT_FALSE(version_for_major(m, 7, at("2025-01-01T00:00:00Z")));
  EXPECT_EQ(latest_major(m, at("2025-01-01T00:00:00Z")), 0u);
  EXPECT_EQ(latest_major(m, at("2031-01-01T00:00:00Z")), 1u);
  EXPECT_FALSE(latest_major(m, at("2020-01-01T00:00:00Z")));
}

TEST(ManagerVersioning, ThePatchWalkStopsAtAClosedGateOrWhereThePatternStops) {
  Manifest m = manifest("  \"v0.3.0\": {available_after: 2024-09-01T00:00:00Z}\n"
                        "  \"v0.3.1\": {available_after: 2024-09-01T00:00:00Z}\n"
                        "  \"v0.3.2\": {available_after: 2024-09-01T00:00:00Z}\n"
                        "  \"v0.3.3\": {available_after: 2026-01-01T00:00:00Z}\n"
                        "  \"v0.3.5\": {available_after: 2024-09-01T00:00:00Z}\n");
  EXPECT_EQ(key_of(m, major(0)), "v0.3.5") << "the newest open line first";
  EXPECT_EQ(key_of(m, version("re:^v0\\.3\\.[0-3]$")), "v0.3.2") << "v0.3.3 has not opened";
  EXPECT_EQ(key_of(m, version("re:^v0\\.3\\.[0-3]$"), "2026-06-01T00:00:00Z"), "v0.3.3");
  EXPECT_EQ(key_of(m, version("re:^v0\\.3\\.[01]$")), "v0.3.1") << "the walk keeps to the pattern";
}

TEST(ManagerVersioning, AVersionNamesADirectoryOrAPattern) {
  Manifest m = manifest("  \"v0.2.17\": {available_after: 2024-09-01T00:00:00Z}\n"
                        "  \"v0.3.0-rc7\": {available_after: 2024-09-01T00:00:00Z}\n");
  EXPECT_EQ(key_of(m, version("my-dev-build")), "my-dev-build") << "no manifest lookup";
  auto exact = resolve_selector(m, version("v0.2.17"), at("2025-01-01T00:00:00Z"));
  EXPECT_EQ(exact->version.minor, 2u);
  EXPECT_EQ(key_of(m, version("re:^v0\\.2\\.")), "v0.2.17");
  EXPECT_EQ(key_of(m, version("re:rc")), "v0.3.0-rc7") << "searched, not anchored";
  EXPECT_EQ(key_of(m, version("re:^v9\\.")), "error: no line matches version selector `^v9\\.`");
  EXPECT_NE(key_of(m, version("re:(")).find("is not a valid regex"), std::string::npos);
}

// A selector is request data: a pattern of 30,000 nested groups made std::regex recurse until
// the manager died of SIGSEGV (this test crashed the binary before the matcher of our own).
// Now it is refused by its length, and nesting, counted repetitions and the program it expands
// to are bounded too; each refusal is a version_resolution error naming the limit.
TEST(ManagerVersioning, HostilePatternsAreRefusedWithAReasonNotFollowed) {
  Manifest m = manifest("  \"v0.3.0\": {available_after: 2024-09-01T00:00:00Z}\n");
  auto error_of = [&](const std::string& v) {
    auto r = resolve_selector(m, version(v), at("2025-01-01T00:00:00Z"));
    EXPECT_FALSE(r.ok()) << v.substr(0, 80);
    return r.ok() ? std::string() : r.error().code + ": " + r.error().message;
  };
  std::string deep = "re:" + std::string(30000, '(') + std::string(30000, ')');
  std::string e = error_of(deep);
  EXPECT_NE(e.find("version_resolution: version selector `((((("), std::string::npos) << e;
  EXPECT_NE(e.find("the pattern is 60000 bytes; at most 256 are accepted"), std::string::npos) << e;
  EXPECT_LT(e.size(), 300u) << "the refusal quotes the pattern's start only";
  std::string nested = "re:" + std::string(17, '(') + "v" + std::string(17, ')');
  EXPECT_NE(error_of(nested).find("groups nest deeper than 16"), std::string::npos) << error_of(nested);
  EXPECT_EQ(key_of(m, version("re:" + std::string(16, '(') + "v0" + std::string(16, ')'))), "v0.3.0");
  EXPECT_NE(error_of("re:((a{32}){32}){32}").find("more than 4096 instructions"), std::string::npos);
  EXPECT_NE(error_of("re:a{33}").find("repetition bound above 32"), std::string::npos);
}

TEST(ManagerVersioning, ThePatternSubsetMatchesAsECMAScriptSearchDoes) {
  struct Case {
    const char* pattern;
    const char* text;
    bool hit;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"", "anything", true},
           {"rc", "v0.3.0-rc7", true},
           {"^v0\\.3\\.", "v0.3.0", true},
           {"^v0\\.3\\.", "xv0.3.0", false},
           {"0$", "v0.3.0", true},
           {"0$", "v0.3.0-rc7", false},
           {"^v0\\.3\\.[0-3]$", "v0.3.3", true},
           {"^v0\\.3\\.[0-3]$", "v0.3.4", false},
           {"^v0\\.3\\.[^0-3]$", "v0.3.4", true},
           {"^v\\d+\\.\\d+\\.\\d+$", "v12.0.345", true},
           {"^v\\d+\\.\\d+\\.\\d+$", "v12.0.x", false},
           {"^v0\\.(2|3)\\.", "v0.2.17", true},
           {"^v0\\.(?:2|3)\\.", "v0.4.1", false},
           {"^v0\\.3\\.0(-rc\\d+)?$", "v0.3.0", true},
           {"^v0\\.3\\.0(-rc\\d+)?$", "v0.3.0-rc12", true},
           {"^v0\\.3\\.0(-rc\\d+)?$", "v0.3.0-beta", false},
           {"^v0\\.3\\.\\d{1,2}$", "v0.3.17", true},
           {"^v0\\.3\\.\\d{1,2}$", "v0.3.170", false},
           {"^v0\\.3\\.\\d{2,}$", "v0.3.170", true},
           {"^v0\\.3\\.\\d{2}$", "v0.3.1", false},
           {"^.*rc.*$", "v0.3.0-rc7", true},
           {"^v.?0", "v0.1.0", true},
           {"\\brc", "v0.3.0-rc7", true},
           {"\\Brc", "v0.3.0-rc7", false},
           {"[\\w.-]+", "-", true},
           {"[a\\-z]", "-", true},
           {"[a-]", "-", true},
           {"\\x76", "v0", true},
           {"a+?b", "aab", true},
           {"(a*)*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac", false},
           {"(|x)v", "v0", true},
       }) {
    auto p = VersionPattern::compile(c.pattern);
    ASSERT_TRUE(p.ok()) << c.pattern << ": " << p.error().message;
    EXPECT_EQ(p->search(c.text), c.hit) << c.pattern << " on " << c.text;
  }
  for (const char* bad : {"(", ")", "a)", "[a", "*a", "a**", "a{2,1}", "a{", "\\1", "(?=a)", "(?<n>a)", "\\u0041",
                          "\\q", "^*", "[z-a]", "\\", "\\x4"}) {
    EXPECT_FALSE(VersionPattern::compile(bad).ok()) << bad;
  }
}

TEST(ManagerVersioning, DetectedMajorIsReadAsDetectMajorSpecReadsIt) {
  EXPECT_EQ(detected_major("v0.2.3\n", 5), 0u);
  EXPECT_EQ(detected_major("  3  ", 5), 3u);
  EXPECT_EQ(detected_major("v9.0.0", 5), 5u) << "never above the newest major";
  EXPECT_EQ(detected_major("", 2), 2u) << "nothing printed: the newest major";
  EXPECT_EQ(detected_major("py-genlayer:latest", 2), 2u);
}

}  // namespace
}  // namespace genvm::manager
