#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "runners/runners.h"
#include "runners/zip_writer_test_util.h"

namespace genvm::runners {
namespace {

using testing::make_zip;
using testing::ZipEntry;

// A runner directory in a fresh temporary folder, removed at the end.
class RunnerDir {
 public:
  RunnerDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "runners_test_XXXXXX").string();
    root_ = mkdtemp(tmpl.data());
  }
  ~RunnerDir() { std::filesystem::remove_all(root_); }
  // Installs `zip` as `name:<its sha-256>` (or under `as_hash`) and returns the id text.
  std::string install(const std::string& name, const std::string& zip, const Hash32* as_hash = nullptr) {
    RunnerId id;
    id.kind = RunnerId::Kind::kPackaged;
    id.name = name;
    id.hash = as_hash ? *as_hash : sha256(zip);
    auto path = dir().path_of(id);
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << zip;
    return id.canonical();
  }
  void write_latest(const std::string& json) { std::ofstream(root_ / "latest.json") << json; }
  RunnerDirectory dir() const { return RunnerDirectory(root_); }

 private:
  std::filesystem::path root_;
};

std::shared_ptr<const Archive> contract(const std::string& code) {
  auto a = archive_from_code(std::make_shared<const std::string>(code));
  EXPECT_TRUE(a.ok()) << a.error().to_string();
  return std::make_shared<const Archive>(std::move(*a));
}

std::string python_like_runner() {
  return make_zip({{"runner.json", R"({"Seq": [
      {"AddEnv": {"name": "PYTHONHOME", "val": "/py"}},
      {"AddEnv": {"name": "PYTHONPATH", "val": "${PYTHONHOME}/lib:${UNSET}"}},
      {"MapFile": {"file": "lib/", "to": "/py/lib"}},
      {"With": {"runner": "contract", "action": {"MapFile": {"file": "file", "to": "/entry.py"}}}},
      {"When": {"cond": "nondet", "action": {"AddEnv": {"name": "MODE", "val": "nondet"}}}},
      {"SetArgs": ["py", "/entry.py"]},
      {"LinkWasm": "softfloat.wasm"},
      {"StartWasm": "python.wasm"},
      {"AddEnv": {"name": "AFTER", "val": "start"}}
    ]})"},
                   {"python.wasm", "PYWASM"}, {"softfloat.wasm", "SF"}, {"lib/a.py", "A"},
                   {"lib/sub/b.py", "B"}, {"libx", "not under lib/"}});
}

TEST(RunnersPlan, TextContractDependsOnAPackagedRunner) {
  RunnerDir d;
  std::string runner_zip = python_like_runner();
  std::string id = d.install("py", runner_zip);
  std::string code = "# v0.1.0\n# { \"Depends\": \"" + id + "\" }\nprint(1)\n";
  auto dir = d.dir();
  auto plan = make_plan(contract(code), &dir, PlanOptions{});
  ASSERT_TRUE(plan.ok()) << plan.error().to_string();
  EXPECT_EQ(plan->version, "v0.1.0");
  ASSERT_EQ(plan->env.size(), 2u);
  EXPECT_EQ(plan->env[1], (std::pair<std::string, std::string>{"PYTHONPATH", "/py/lib:"}));
  EXPECT_EQ(plan->args, (std::vector<std::string>{"py", "/entry.py"}));
  ASSERT_EQ(plan->files.size(), 3u);
  EXPECT_EQ(plan->files.at("/py/lib/a.py"), "A");
  EXPECT_EQ(plan->files.at("/py/lib/sub/b.py"), "B");
  EXPECT_EQ(plan->files.at("/entry.py"), code);
  ASSERT_EQ(plan->link.size(), 1u);
  EXPECT_EQ(plan->link[0].bytes, "SF");
  EXPECT_EQ(plan->start.runner, id);
  EXPECT_EQ(plan->start.bytes, "PYWASM");
  EXPECT_EQ(plan->loaded, (std::vector<std::string>{"contract", id}));
  std::uint64_t mapped = 3 * kFileMappingCost + std::string("/py/lib/a.py/py/lib/sub/b.py/entry.py").size();
  std::uint64_t env = 3 + 8;
  EXPECT_EQ(plan->ram_charged, 2 * kRunnerLoadCost + code.size() + runner_zip.size() + mapped + env);
}

TEST(RunnersPlan, WhenSelectsTheMode) {
  RunnerDir d;
  std::string id = d.install("py", python_like_runner());
  auto dir = d.dir();
  PlanOptions nondet;
  nondet.deterministic = false;
  auto plan = make_plan(contract("# {\"Depends\": \"" + id + "\"}\n"), &dir, nondet);
  ASSERT_TRUE(plan.ok()) << plan.error().to_string();
  EXPECT_EQ(plan->env.back(), (std::pair<std::string, std::string>{"MODE", "nondet"}));
  EXPECT_EQ(plan->version, kDefaultRunnerVersion);
}

TEST(RunnersPlan, ArchiveThatLiesAboutItsHashIsRefused) {
  RunnerDir d;
  Hash32 other = sha256("another archive");
  std::string id = d.install("py", python_like_runner(), &other);
  auto dir = d.dir();
  auto plan = make_plan(contract("# {\"Depends\": \"" + id + "\"}\n"), &dir, PlanOptions{});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().code, "invalid_contract runner malformed");
  EXPECT_NE(plan.error().message.find("SHA-256"), std::string::npos) << plan.error().message;
}

TEST(RunnersPlan, MissingOrUnknownDependsIsMalformed) {
  RunnerDir d;
  auto dir = d.dir();
  auto missing = make_plan(contract("# {\"Depends\": \"py:" + gvm32_encode(sha256("x")) + "\"}\n"), &dir, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("not installed"), std::string::npos) << missing.error().message;
  auto bad_id = make_plan(contract("# {\"Depends\": \"py\"}\n"), &dir, {});
  ASSERT_FALSE(bad_id.ok());
  EXPECT_EQ(bad_id.error().code, "invalid_contract runner malformed");
  auto custom = make_plan(contract("# {\"Depends\": \"custom:" + gvm32_encode(sha256("x")) + "\"}\n"), &dir, {});
  ASSERT_FALSE(custom.ok());
  EXPECT_NE(custom.error().message.find("not registered"), std::string::npos);
}

TEST(RunnersPlan, DependencyCyclesEndAndEachRunnerLoadsOnce) {
  RunnerDir d;
  // b's hash must be known to a, and a's to b: b names a by the `With contract` form instead,
  // and both depend on a third runner twice.
  std::string base = d.install("base", make_zip({{"runner.json", R"({"AddEnv": {"name": "BASE", "val": "${BASE}x"}})"}}));
  std::string b = d.install("b", make_zip({{"runner.json", R"({"Seq": [{"Depends": ")" + base +
                                                           R"("}, {"Depends": "contract"}, {"StartWasm": "m.wasm"}]})"},
                                          {"m.wasm", "M"}}));
  std::string a = d.install("a", make_zip({{"runner.json", R"({"Seq": [{"Depends": ")" + base +
                                                           R"("}, {"Depends": ")" + b + R"("}]})"}}));
  auto dir = d.dir();
  auto plan = make_plan(contract("# {\"Seq\": [{\"Depends\": \"" + a + "\"}, {\"Depends\": \"" + b + "\"}]}\n"), &dir, {});
  ASSERT_TRUE(plan.ok()) << plan.error().to_string();
  EXPECT_EQ(plan->env, (std::vector<std::pair<std::string, std::string>>{{"BASE", "x"}}));
  EXPECT_EQ(plan->loaded, (std::vector<std::string>{"contract", a, base, b}));
  EXPECT_EQ(plan->start.bytes, "M");
}

TEST(RunnersPlan, LatestResolvesOnlyInUnsafeDebugModes) {
  RunnerDir d;
  std::string id = d.install("py", python_like_runner());
  d.write_latest("{\"py\": \"" + id.substr(3) + "\"}");
  auto dir = d.dir();
  auto code = contract("# {\"Depends\": \"py:latest\"}\n");
  auto refused = make_plan(code, &dir, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("debug mode"), std::string::npos) << refused.error().message;
  PlanOptions unsafe;
  unsafe.debug_mode = DebugMode::kUnsafe;
  auto plan = make_plan(code, &dir, unsafe);
  ASSERT_TRUE(plan.ok()) << plan.error().to_string();
  EXPECT_EQ(plan->loaded.back(), id);
  // The dev-mode test hash: only in unsafe modes, and its contents are not hashed.
  Hash32 test = test_runner_hash();
  std::string test_id = d.install("dev", python_like_runner(), &test);
  auto dev = contract("# {\"Depends\": \"" + test_id + "\"}\n");
  EXPECT_FALSE(make_plan(dev, &dir, {}).ok());
  EXPECT_TRUE(make_plan(dev, &dir, unsafe).ok());
}

TEST(RunnersPlan, CustomRunnersComeFromTheRegisteredSet) {
  std::string code = make_zip({{"runner.json", R"({"StartWasm": "w"})"}, {"w", "W"}});
  auto custom = parse_custom_runner(std::make_shared<const std::string>(code));
  ASSERT_TRUE(custom.ok()) << custom.error().to_string();
  // GVM32 of SHA3-256: the id's hash decodes back to the digest of the code.
  ASSERT_EQ(custom->id.substr(0, 7), "custom:");
  auto parsed = parse_runner_id(custom->id);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->canonical(), custom->id);
  EXPECT_NE(parsed->hash, sha256(code));
  EXPECT_EQ(custom_runner_id(""), "custom:" + gvm32_encode(std::vector<std::uint8_t>{
      0xa7, 0xff, 0xc6, 0xf8, 0xbf, 0x1e, 0xd7, 0x66, 0x51, 0xc1, 0x47, 0x56, 0xa0, 0x61, 0xd6, 0x62,
      0xf5, 0x80, 0xff, 0x4d, 0xe4, 0x3b, 0x49, 0xfa, 0x82, 0xd8, 0x0a, 0x4b, 0x80, 0xf8, 0x43, 0x4a}));
  PlanOptions options;
  options.custom.emplace(custom->id, custom->archive);
  auto plan = make_plan(contract("# {\"Depends\": \"" + custom->id + "\"}\n"), nullptr, options);
  ASSERT_TRUE(plan.ok()) << plan.error().to_string();
  EXPECT_EQ(plan->start.bytes, "W");
  EXPECT_EQ(plan->start.runner, custom->id);
  auto bad = parse_custom_runner(std::make_shared<const std::string>("no header"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, "invalid_contract runner absent");
}

Error plan_error(const std::string& runner_json, PlanOptions options = {}) {
  auto plan = make_plan(contract("# " + runner_json + "\n"), nullptr, options);
  EXPECT_FALSE(plan.ok()) << runner_json;
  return plan.ok() ? Error{} : plan.error();
}

TEST(RunnersPlan, MalformedRunnerJsonAndPlans) {
  EXPECT_NE(plan_error(R"({"AddEnv": {"name": "X", "val": "1"}})").message.find("never reaches StartWasm"), std::string::npos);
  EXPECT_NE(plan_error(R"({"StartWasm": "nope"})").message.find("no file nope"), std::string::npos);
  EXPECT_NE(plan_error(R"({"Frobnicate": 1})").message.find("unknown action"), std::string::npos);
  EXPECT_NE(plan_error(R"({"StartWasm": "file", "SetArgs": []})").message.find("more than one"), std::string::npos);
  EXPECT_NE(plan_error(R"({"MapFile": {"file": "file", "to": "/x", "extra": 1}})").message.find("unknown field"), std::string::npos);
  EXPECT_NE(plan_error(R"({"StartWasm": "fi\u0000le"})").message.find("NUL"), std::string::npos);
  EXPECT_NE(plan_error(R"({"When": {"cond": "maybe", "action": {"StartWasm": "file"}}})").message.find("cond"), std::string::npos);
  EXPECT_NE(plan_error(R"({"AddEnv": {"name": "A=B", "val": ""}})").message.find("not allowed"), std::string::npos);
  EXPECT_NE(plan_error(R"({"AddEnv": {"name": "A", "val": "${A"}})").message.find("unterminated"), std::string::npos);
  EXPECT_NE(plan_error(R"({"MapFile": {"file": "file", "to": "/vm/x"}})").message.find("/vm/"), std::string::npos);
  EXPECT_NE(plan_error(R"({"MapFile": {"file": "file", "to": "rel"}})").message.find("absolute"), std::string::npos);
  EXPECT_NE(plan_error(R"({"MapFile": {"file": "file", "to": "/etc/"}})").message.find("folder path"), std::string::npos);
  EXPECT_NE(plan_error(R"({"MapFile": {"file": "file", "to": "/a/../vm"}})").message.find("clean"), std::string::npos);
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += R"({"Seq": [)";
  deep += R"({"StartWasm": "file"})";
  for (int i = 0; i < 200; ++i) deep += "]}";
  EXPECT_EQ(plan_error(deep).code, "invalid_contract runner malformed");
  // A value doubling itself passes 1 MiB after 20 rounds.
  std::string doubling = R"({"Seq": [{"AddEnv": {"name": "A", "val": "x"}})";
  for (int i = 0; i < 21; ++i) doubling += R"(, {"AddEnv": {"name": "A", "val": "${A}${A}"}})";
  doubling += R"(, {"StartWasm": "file"}]})";
  EXPECT_NE(plan_error(doubling).message.find("exceeds 1 MiB"), std::string::npos);
}

TEST(RunnersPlan, VersionMustBeMajorMinorPatch) {
  for (std::string bad : {"v1", "v1.2", "v1.2.3.4", "1.2.3", "v1..3", "v1.2.x", "vx"}) {
    auto plan = make_plan(contract("# " + bad + "\n# {\"StartWasm\": \"file\"}\n"), nullptr, {});
    EXPECT_FALSE(plan.ok()) << bad;
  }
  auto plan = make_plan(contract("#  v10.20.30 \n# {\"StartWasm\": \"file\"}\n"), nullptr, {});
  ASSERT_TRUE(plan.ok()) << plan.error().to_string();
  EXPECT_EQ(plan->version, "v10.20.30");
}

TEST(RunnersPlan, RamBudgetIsEnforced) {
  PlanOptions small;
  small.ram_budget = kRunnerLoadCost + 10;
  Error e = plan_error(R"({"StartWasm": "file"})", small);
  EXPECT_EQ(e.code, "out_of memory");
  EXPECT_EQ(e.errc, static_cast<int>(RunnerErrc::kOutOfMemory));
}

}  // namespace
}  // namespace genvm::runners
