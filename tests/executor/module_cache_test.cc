// `genvm run --module-cache DIR` end to end: a second run of the same contract takes its
// compiled module from DIR, and a cached, a corrupted-cache and an unwritable-cache run all
// deliver byte for byte the result of a run without any cache. A forged entry (re-sealed without
// the cache's key) is never executed, and a directory others could write is never used.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "common/blake3.h"
#include "executor_fixture.h"

namespace genvm {
namespace {

using calldata::Value;
using exec_test::addr;
using exec_test::read_file;
using exec_test::RunResult;
using exec_test::ExecutorTest;

class ModuleCacheTest : public ExecutorTest {
 protected:
  // One run of counter.add(41) without applying its changes (so every run sees the same state),
  // with its --log-fd lines collected in *log.
  RunResult add(std::vector<std::string> extra, std::string* log) {
    std::string path = dir_ + "/log.jsonl";
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);  // inherited by genvm
    EXPECT_GE(fd, 0);
    extra.push_back("--log-fd");
    extra.push_back(std::to_string(fd));
    extra.push_back("--log-level=debug");  // cache events are debug lines
    auto r = run(data(addr(1), addr(0xaa), call("add", {Value(41)}), false, std::nullopt), "wscn", extra, false);
    ::close(fd);
    auto text = read_file(path);
    log->assign(text.begin(), text.end());
    EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
    return r;
  }
  // Every file in the cache directory but its seal key (entries and any leftover temp file).
  std::vector<std::string> files(const std::string& cache) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(cache, ec))
      if (e.path().filename() != "seal.key") out.push_back(e.path().string());
    return out;
  }
};

TEST_F(ModuleCacheTest, SecondRunHitsTheCacheAndEveryRunDeliversTheSameBytes) {
  deploy("counter.wasm", addr(1));
  std::string log;
  RunResult plain = add({}, &log);
  ASSERT_FALSE(plain.result_bytes.empty());
  EXPECT_EQ(*plain.report.find("data"), Value(41));  // a fresh counter is 0
  EXPECT_EQ(log.find("module cache"), std::string::npos) << "no cache unless asked: " << log;

  const std::string cache = dir_ + "/cache";  // made by genvm on first use
  RunResult first = add({"--module-cache", cache}, &log);
  EXPECT_NE(log.find("module cache miss"), std::string::npos) << log;
  EXPECT_NE(log.find("module cache stored"), std::string::npos) << log;
  auto entries = files(cache);
  ASSERT_EQ(entries.size(), 1u) << "one entry, no temp file left";
  EXPECT_EQ(std::filesystem::path(entries[0]).extension(), ".gvmc");
  const auto entry = read_file(entries[0]);
  EXPECT_EQ(first.result_bytes, plain.result_bytes);

  RunResult second = add({"--module-cache", cache}, &log);
  EXPECT_NE(log.find("module cache hit"), std::string::npos) << log;
  EXPECT_EQ(log.find("module cache miss"), std::string::npos) << log;
  EXPECT_EQ(second.result_bytes, plain.result_bytes);

  // The environment variable is the default for the flag.
  ::setenv("GENVM_MODULE_CACHE", cache.c_str(), 1);
  RunResult env = add({}, &log);
  ::unsetenv("GENVM_MODULE_CACHE");
  EXPECT_NE(log.find("module cache hit"), std::string::npos) << log;
  EXPECT_EQ(env.result_bytes, plain.result_bytes);

  // A corrupted entry is refused (never run), the module is compiled again, the result is the
  // same, and the entry is rewritten whole.
  auto bad = entry;
  bad[bad.size() / 2] ^= 0x5a;
  exec_test::write_file(entries[0], bad);
  RunResult corrupt = add({"--module-cache", cache}, &log);
  EXPECT_NE(log.find("module cache entry refused"), std::string::npos) << log;
  EXPECT_EQ(corrupt.result_bytes, plain.result_bytes);
  EXPECT_EQ(read_file(entries[0]), entry);
  EXPECT_EQ(files(cache).size(), 1u);

  // A truncated entry: the same.
  exec_test::write_file(entries[0], calldata::Bytes(entry.begin(), entry.begin() + 40));
  RunResult truncated = add({"--module-cache", cache}, &log);
  EXPECT_NE(log.find("module cache entry refused"), std::string::npos) << log;
  EXPECT_EQ(truncated.result_bytes, plain.result_bytes);
  EXPECT_EQ(read_file(entries[0]), entry);
}

TEST_F(ModuleCacheTest, ACacheThatCannotBeWrittenNeverFailsTheRun) {
  deploy("counter.wasm", addr(1));
  std::string log;
  RunResult plain = add({}, &log);
  // A regular file where the directory should be: nothing can be created under it.
  exec_test::write_file(dir_ + "/not-a-dir", calldata::Bytes{1});
  RunResult r = add({"--module-cache", dir_ + "/not-a-dir/cache"}, &log);
  EXPECT_NE(log.find("refused (cannot open"), std::string::npos) << log;
  EXPECT_EQ(r.result_bytes, plain.result_bytes);
  // A directory that opens but cannot be written: the store fails, the run does not.
  const std::string ro = dir_ + "/ro-cache";
  ASSERT_EQ(::mkdir(ro.c_str(), 0700), 0);
  RunResult keyed = add({"--module-cache", ro}, &log);  // makes the key
  ASSERT_EQ(::chmod(ro.c_str(), 0500), 0);
  for (const auto& f : files(ro)) std::filesystem::remove(f);
  if (::geteuid() != 0) {  // root writes through a mode
    RunResult r2 = add({"--module-cache", ro}, &log);
    EXPECT_NE(log.find("module cache write failed"), std::string::npos) << log;
    EXPECT_EQ(r2.result_bytes, plain.result_bytes);
  }
  EXPECT_EQ(keyed.result_bytes, plain.result_bytes);
}

// Issue 19: an entry mutated and re-sealed with a correct, unkeyed BLAKE3 was loaded (seven
// such blobs crashed the executor). Now the seal is keyed with DIR/seal.key: every forged
// entry is refused at the seal, the module is compiled afresh, and the result is the plain one.
TEST_F(ModuleCacheTest, ForgedEntriesResealedWithoutTheKeyAreNeverExecuted) {
  deploy("counter.wasm", addr(1));
  std::string log;
  RunResult plain = add({}, &log);
  const std::string cache = dir_ + "/cache";
  add({"--module-cache", cache}, &log);
  auto entries = files(cache);
  ASSERT_EQ(entries.size(), 1u);
  const auto entry = read_file(entries[0]);
  ASSERT_GT(entry.size(), 200u);
  std::uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (int forgery = 0; forgery < 7; ++forgery) {
    auto forged = entry;
    forged.resize(forged.size() - 32);
    for (int k = 0; k < 8; ++k) {  // code words and operand slots past the 72-byte header
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      forged[72 + (seed >> 33) % (forged.size() - 72)] ^= static_cast<std::uint8_t>(1 + (seed >> 24) % 255);
    }
    auto seal = blake3::hash(forged);
    forged.insert(forged.end(), seal.begin(), seal.end());
    exec_test::write_file(entries[0], forged);
    RunResult r = add({"--module-cache", cache}, &log);
    EXPECT_NE(log.find("seal mismatch"), std::string::npos) << log;
    EXPECT_EQ(log.find("module cache hit"), std::string::npos) << log;
    EXPECT_EQ(r.result_bytes, plain.result_bytes) << "forgery " << forgery;
    EXPECT_EQ(read_file(entries[0]), entry) << "rewritten by the executor's own compile";
  }
}

// A cache directory that anyone else could write (or that someone else owns) is not used: one
// warning line, nothing read or written in it, and the run's result is the plain one.
TEST_F(ModuleCacheTest, DirectoryWritableByOthersOrOwnedByAnotherUidIsRefused) {
  deploy("counter.wasm", addr(1));
  std::string log;
  RunResult plain = add({}, &log);
  const std::string open_dir = dir_ + "/world";
  ASSERT_EQ(::mkdir(open_dir.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(open_dir.c_str(), 0777), 0);
  RunResult r = add({"--module-cache", open_dir}, &log);
  EXPECT_NE(log.find("refused (writable by group or others (mode 777))"), std::string::npos) << log;
  EXPECT_NE(log.find("\"warn\""), std::string::npos) << "a warning, not a debug line: " << log;
  EXPECT_EQ(r.result_bytes, plain.result_bytes);
  EXPECT_TRUE(std::filesystem::is_empty(open_dir));
  ASSERT_EQ(::chmod(open_dir.c_str(), 0720), 0);  // group-writable alone is refused too
  add({"--module-cache", open_dir}, &log);
  EXPECT_NE(log.find("writable by group or others (mode 720)"), std::string::npos) << log;

  // A seal key someone else can read is no secret: refused as well.
  const std::string leaky = dir_ + "/leaky";
  ASSERT_EQ(::mkdir(leaky.c_str(), 0700), 0);
  exec_test::write_file(leaky + "/seal.key", calldata::Bytes(32, 7));
  ASSERT_EQ(::chmod((leaky + "/seal.key").c_str(), 0644), 0);
  RunResult k = add({"--module-cache", leaky}, &log);
  EXPECT_NE(log.find("seal key is not a 32-byte file of this uid with mode 0600"), std::string::npos) << log;
  EXPECT_EQ(k.result_bytes, plain.result_bytes);
  EXPECT_TRUE(files(leaky).empty());

  if (::geteuid() != 0) GTEST_SKIP() << "giving a directory to another uid needs root";
  const std::string foreign = dir_ + "/foreign";
  ASSERT_EQ(::mkdir(foreign.c_str(), 0700), 0);
  ASSERT_EQ(::chown(foreign.c_str(), 4242, 4242), 0);
  RunResult f = add({"--module-cache", foreign}, &log);
  EXPECT_NE(log.find("refused (owned by uid 4242, not this executor's uid"), std::string::npos) << log;
  EXPECT_EQ(f.result_bytes, plain.result_bytes);
  EXPECT_TRUE(std::filesystem::is_empty(foreign));
}

// Many runs that start together on an empty cache all miss, compile and write the same entry:
// each writes its own temp file and renames it over the name, so every run delivers the plain
// result and the folder ends with exactly one whole entry and no temp file.
TEST_F(ModuleCacheTest, RunsRacingOnAnEmptyCacheLeaveOneWholeEntry) {
  deploy("counter.wasm", addr(1));
  std::string log;
  RunResult plain = add({}, &log);
  const std::string cache = dir_ + "/cache";
  ASSERT_EQ(::mkdir(cache.c_str(), 0700), 0);
  constexpr int kRuns = 6;
  std::vector<pid_t> pids;
  for (int i = 0; i < kRuns; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) {
      ::execl(genvm_.c_str(), genvm_.c_str(), "run", "--execution-data", (dir_ + "/data.bin").c_str(), "--host",
              uri_.c_str(), "--permissions", "wscn", "--module-cache", cache.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  auto results = host_.with_state([](test_host::State& s) { return s.results; });
  ASSERT_GE(results.size(), std::size_t(kRuns));
  for (std::size_t i = results.size() - kRuns; i < results.size(); ++i) EXPECT_EQ(results[i], plain.result_bytes);
  auto entries = files(cache);
  ASSERT_EQ(entries.size(), 1u);
  // The surviving entry is whole: the next run hits it.
  RunResult next = add({"--module-cache", cache}, &log);
  EXPECT_NE(log.find("module cache hit"), std::string::npos) << log;
  EXPECT_EQ(next.result_bytes, plain.result_bytes);
}

TEST_F(ModuleCacheTest, EmptyCacheFlagIsOneLineAndExitTwo) {
  RunResult r = exec_genvm({"run", "--execution-data", "-", "--host", uri_, "--module-cache", ""});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.stderr_text, "genvm: --module-cache needs a directory\n");
}

}  // namespace
}  // namespace genvm
