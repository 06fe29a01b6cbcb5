// Seal marks of module_cache_file.h with a real cache folder: a large sealed file is hashed until
// its mark is written (only once the file is settled), then taken by its mark; a file altered,
// truncated or replaced after its mark is hashed again, and refused when its seal does not check.
#include "executor/module_cache_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/blake3.h"

namespace genvm::executor {
namespace {

namespace fs = std::filesystem;

class ModuleCacheSealMarks : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "seal_marks_test_XXXXXX").string();
    root_ = ::mkdtemp(tmpl.data());
    cache_ = (root_ / "cache").string();
  }
  void TearDown() override { fs::remove_all(root_); }

  // A body of `size` bytes that differ by `salt`.
  static std::vector<std::uint8_t> body(std::size_t size, std::uint8_t salt) {
    std::vector<std::uint8_t> b(size);
    for (std::size_t i = 0; i < size; ++i) b[i] = std::uint8_t(i * 131 + salt);
    return b;
  }
  void store(const std::string& name, const std::vector<std::uint8_t>& b) {
    ASSERT_TRUE(write_sealed_file(cache_, name, b).ok());
  }
  bool has_mark(const std::string& name) const { return fs::exists(fs::path(cache_) / (name + ".gvmk")); }
  std::string path(const std::string& name) const { return (fs::path(cache_) / name).string(); }
  // Maps `name`, expecting its body to be `want`; returns how the seal was taken.
  SealCheck map_ok(const std::string& name, const std::vector<std::uint8_t>& want) {
    auto f = map_sealed_file(cache_, name);
    EXPECT_TRUE(f.ok()) << name << ": " << (f ? "" : f.error().to_string());
    if (!f) return SealCheck::kHashed;
    EXPECT_TRUE(std::equal(f->body().begin(), f->body().end(), want.begin(), want.end())) << name;
    return f->seal_check();
  }
  void expect_refused(const std::string& name, const char* why) {
    auto f = map_sealed_file(cache_, name);
    ASSERT_FALSE(f.ok()) << why;
    EXPECT_EQ(f.error().code, "module_cache") << why;
  }
  static void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(2100)); }

  fs::path root_;
  std::string cache_;
};

constexpr std::size_t kLarge = std::size_t(2) << 20;  // above the 1 MiB from which files are marked

TEST_F(ModuleCacheSealMarks, ALargeFileIsMarkedOnceSettledAndThenNotHashedAgain) {
  auto large = body(kLarge, 1), small = body(4096, 2);
  store("large.gvms", large);
  store("small.gvms", small);
  // Fresh: its ctime is this clock tick's, and a write in the same tick could leave it unchanged.
  EXPECT_EQ(map_ok("large.gvms", large), SealCheck::kHashed);
  EXPECT_FALSE(has_mark("large.gvms"));
  settle();
  EXPECT_EQ(map_ok("large.gvms", large), SealCheck::kHashed);
  EXPECT_TRUE(has_mark("large.gvms"));
  EXPECT_EQ(map_ok("large.gvms", large), SealCheck::kByMark);
  EXPECT_EQ(read_sealed_file(cache_, "large.gvms").value(), large);
  // A small file is hashed every time (a mark would cost as much to read).
  EXPECT_EQ(map_ok("small.gvms", small), SealCheck::kHashed);
  EXPECT_FALSE(has_mark("small.gvms"));
}

TEST_F(ModuleCacheSealMarks, AMarkVouchesOnlyForItsOwnFileAndOnlyWhileItsSealChecks) {
  auto a = body(kLarge, 3), b = body(kLarge, 4);
  store("a.gvms", a);
  store("b.gvms", b);
  settle();
  map_ok("a.gvms", a);
  map_ok("b.gvms", b);
  ASSERT_TRUE(has_mark("a.gvms") && has_mark("b.gvms"));
  // a's mark under b's name: it names a's stamp, seal and name, so b is hashed (and remarked).
  fs::copy_file(path("a.gvms.gvmk"), path("b.gvms.gvmk"), fs::copy_options::overwrite_existing);
  EXPECT_EQ(map_ok("b.gvms", b), SealCheck::kHashed);
  EXPECT_EQ(map_ok("b.gvms", b), SealCheck::kByMark);
  // A mark with one byte changed no longer checks its own seal.
  {
    std::fstream f(path("a.gvms.gvmk"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.put('\x7f');
  }
  EXPECT_EQ(map_ok("a.gvms", a), SealCheck::kHashed);
  // Nor is a mark used in a folder others may write to: the folder is not used at all.
  fs::permissions(cache_, fs::perms::group_write, fs::perm_options::add);
  expect_refused("b.gvms", "cache folder writable by group");
}

TEST_F(ModuleCacheSealMarks, AFileChangedAfterItsMarkIsHashedAgainAndRefusedOrReadAnew) {
  const std::vector<std::pair<std::string, std::vector<std::uint8_t>>> files = {
      {"altered.gvms", body(kLarge, 5)}, {"truncated.gvms", body(kLarge, 6)},
      {"replaced.gvms", body(kLarge, 7)}, {"forged.gvms", body(kLarge, 8)}};
  for (const auto& [name, b] : files) store(name, b);
  settle();
  for (const auto& [name, b] : files) {
    map_ok(name, b);
    ASSERT_TRUE(has_mark(name)) << name;
    ASSERT_EQ(map_ok(name, b), SealCheck::kByMark) << name;
  }
  // One byte rewritten in place: same size and inode; only the ctime says so, and then the hash
  // finds the seal wrong (without the stamp in the mark this would be served).
  {
    int fd = ::open(path("altered.gvms").c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, "z", 1, off_t(kLarge / 2)), 1);
    ::close(fd);
  }
  expect_refused("altered.gvms", "a byte changed in place after its mark");
  fs::resize_file(path("truncated.gvms"), fs::file_size(path("truncated.gvms")) - 7);
  expect_refused("truncated.gvms", "truncated after its mark");
  // Another properly sealed file renamed over the name (what a later run's write does): read anew.
  auto newer = body(kLarge, 9);
  store("replaced.gvms", newer);
  EXPECT_EQ(map_ok("replaced.gvms", newer), SealCheck::kHashed);
  // A file sealed without the key (plain BLAKE3) renamed over the name is refused.
  {
    auto f = body(kLarge, 10);
    blake3::Digest plain = blake3::hash(f);
    f.insert(f.end(), plain.begin(), plain.end());
    std::ofstream(path("forged.gvms.new"), std::ios::binary).write(reinterpret_cast<const char*>(f.data()), std::streamsize(f.size()));
    fs::rename(path("forged.gvms.new"), path("forged.gvms"));
  }
  expect_refused("forged.gvms", "resealed without the key after its mark");
}

// The permissions of every /proc/self/maps line that maps `file`.
std::vector<std::string> mappings_of(const std::string& file) {
  std::ifstream maps("/proc/self/maps");
  std::vector<std::string> out;
  std::string line;
  while (std::getline(maps, line)) {
    char perms[5] = {};
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%*x-%*x %4s %*s %*s %*s %n", perms, &path_at) < 1 || path_at == 0) continue;
    if (line.substr(std::size_t(path_at)) == file) out.emplace_back(perms);
  }
  return out;
}

using ModuleCacheJitCode = ModuleCacheSealMarks;

// A JIT hit runs on code mapped from the entry itself (read+execute, private), not on a copy,
// reads its slot code from the entry in place, and both mappings live as long as the module.
TEST_F(ModuleCacheJitCode, AHitRunsOnCodeMappedFromItsEntry) {
  // (module (func (export "f") (result i32) i32.const 42))
  const calldata::Bytes code = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00,
                                0x01, 0x7f, 0x03, 0x02, 0x01, 0x00, 0x07, 0x05, 0x01, 0x01, 0x66, 0x00, 0x00,
                                0x0a, 0x06, 0x01, 0x04, 0x00, 0x41, 0x2a, 0x0b};
  wasm::LoadOptions lo;
  lo.engine = wasm::Engine::kJit;
  std::vector<std::string> lines;
  auto log = [&](bool, std::string_view line) { lines.emplace_back(line); };
  auto miss = load_module_cached(cache_, code, lo, log);
  ASSERT_TRUE(miss) << miss.error().to_string();
  if (wasm::jit_code_origin(**miss) != wasm::JitCodeOrigin::kCompiled) GTEST_SKIP() << wasm::engine_note(**miss);
  std::string entry;
  for (const auto& e : fs::directory_iterator(cache_))
    if (e.path().extension() == ".gvmc") entry = e.path().string();
  ASSERT_FALSE(entry.empty());
  EXPECT_TRUE(mappings_of(entry).empty()) << "a miss compiles into anonymous memory";
  auto hit = load_module_cached(cache_, code, lo, log);
  ASSERT_TRUE(hit) << hit.error().to_string();
  ASSERT_EQ(wasm::jit_code_origin(**hit), wasm::JitCodeOrigin::kFromCache) << lines.back();
  // The module holds two mappings of its entry: the whole file read-only (its slot code and
  // offsets are read in place) and the JIT code read+execute; none writable.
  auto perms = mappings_of(entry);
  std::sort(perms.begin(), perms.end());
  EXPECT_EQ(perms, (std::vector<std::string>{"r--p", "r-xp"}));
  {
    wasm::Store store;
    wasm::Linker linker;
    auto inst = linker.instantiate(store, *hit);
    ASSERT_TRUE(inst) << inst.error().to_string();
    auto f = (*inst)->get_export("f");
    ASSERT_TRUE(f);
    auto out = store.call(*f, {});
    ASSERT_TRUE(out && out->ok());
    ASSERT_EQ(out->values.size(), 1u);
    EXPECT_EQ(out->values[0].as_i32(), 42);
  }
  hit->reset();
  EXPECT_TRUE(mappings_of(entry).empty()) << "the module's mapping goes with it";
}

}  // namespace
}  // namespace genvm::executor
