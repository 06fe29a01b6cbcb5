// SealedArchiveChecks with a real runner directory and module-cache folder: a mark is written
// only for a settled file, vouches only for the stamp and central directory it names, and an
// archive altered, truncated or replaced after its mark is checked in full again (and refused).
#include "executor/runner_marks.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "runners/zip_writer_test_util.h"

namespace genvm::executor {
namespace {

namespace fs = std::filesystem;
using runners::FileStamp;
using runners::RunnerId;

class RunnerArchiveChecks : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "runner_marks_test_XXXXXX").string();
    root_ = ::mkdtemp(tmpl.data());
    cache_ = (root_ / "cache").string();
    fs::create_directory(cache_);
    fs::permissions(cache_, fs::perms::owner_all, fs::perm_options::replace);
  }
  void TearDown() override { fs::remove_all(root_); }

  // Installs a stored ZIP under its SHA-256 and returns its id.
  RunnerId install(const std::string& name, const std::string& payload) {
    std::string zip = runners::testing::make_zip({{"runner.json", R"({"StartWasm": "a.wasm"})"}, {"a.wasm", payload}});
    RunnerId id;
    id.kind = RunnerId::Kind::kPackaged;
    id.name = name;
    id.hash = runners::sha256(zip);
    fs::path path = dir().path_of(id);
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << zip;
    return id;
  }
  runners::RunnerDirectory dir() const {
    runners::RunnerDirectory d(root_ / "runners");
    d.remember_checks(std::make_shared<SealedArchiveChecks>(cache_));
    return d;
  }
  bool has_mark(const RunnerId& id) const { return fs::exists(fs::path(cache_) / SealedArchiveChecks::file_name(id)); }
  void expect_refused(const RunnerId& id, const std::string& why) {
    auto loaded = dir().load(id);
    ASSERT_FALSE(loaded.ok()) << why;
    EXPECT_EQ(loaded.error().code, "invalid_contract runner malformed") << why;
  }

  fs::path root_;
  std::string cache_;
};

TEST_F(RunnerArchiveChecks, AMarkVouchesOnlyForItsStampAndDirectory) {
  SealedArchiveChecks checks(cache_);
  RunnerId id = install("r", "payload");
  RunnerId other = install("other", "payload");
  const FileStamp stamp{1, 2, 3, 4, 5};
  EXPECT_FALSE(checks.was_checked(id, stamp, "directory"));
  checks.mark_checked(id, stamp, "directory");
  EXPECT_TRUE(checks.was_checked(id, stamp, "directory"));
  EXPECT_FALSE(checks.was_checked(other, stamp, "directory"));
  EXPECT_FALSE(checks.was_checked(id, stamp, "directorY"));
  for (int field = 0; field < 5; ++field) {
    FileStamp changed = stamp;
    std::uint64_t* parts[] = {&changed.dev, &changed.ino, &changed.size};
    if (field < 3) ++*parts[field];
    if (field == 3) ++changed.mtime_ns;
    if (field == 4) ++changed.ctime_ns;
    EXPECT_FALSE(checks.was_checked(id, changed, "directory")) << "stamp field " << field;
  }
  // A mark whose bytes were changed no longer carries the directory's seal.
  fs::path mark = fs::path(cache_) / SealedArchiveChecks::file_name(id);
  {
    std::fstream f(mark, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(9);
    f.put('\x7f');
  }
  EXPECT_FALSE(checks.was_checked(id, stamp, "directory"));
  // A cache folder others may write to is not used at all.
  checks.mark_checked(id, stamp, "directory");
  ASSERT_TRUE(checks.was_checked(id, stamp, "directory"));
  fs::permissions(cache_, fs::perms::group_write, fs::perm_options::add);
  EXPECT_FALSE(checks.was_checked(id, stamp, "directory"));
}

TEST_F(RunnerArchiveChecks, AFreshlyWrittenArchiveIsCheckedButNotMarked) {
  RunnerId id = install("r", "payload");
  ASSERT_TRUE(dir().load(id).ok());
  // Its ctime is this clock tick's: a write in the same tick could leave it unchanged.
  EXPECT_FALSE(has_mark(id));
}

TEST_F(RunnerArchiveChecks, AnArchiveChangedAfterItsMarkIsCheckedAgainAndRefused) {
  RunnerId altered = install("altered", std::string(200, 'a'));
  RunnerId truncated = install("truncated", std::string(200, 'b'));
  RunnerId replaced = install("replaced", std::string(200, 'c'));
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));  // past the settling margin
  for (const RunnerId* id : {&altered, &truncated, &replaced}) {
    auto first = dir().load(*id);
    ASSERT_TRUE(first.ok()) << first.error().to_string();
    ASSERT_TRUE(has_mark(*id)) << id->canonical();
    auto again = dir().load(*id);
    ASSERT_TRUE(again.ok()) << again.error().to_string();
    EXPECT_EQ(*(*again)->find("a.wasm"), *(*first)->find("a.wasm"));
  }
  // One payload byte rewritten in place: same size, inode and ZIP structure; only the ctime
  // says so, and then the full check finds the hash (and CRC) wrong.
  {
    std::string path = dir().path_of(altered).string();
    int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    off_t at = off_t(fs::file_size(path) / 2);
    ASSERT_EQ(::pwrite(fd, "z", 1, at), 1);
    ::close(fd);
  }
  expect_refused(altered, "a payload byte changed in place");
  fs::resize_file(dir().path_of(truncated), fs::file_size(dir().path_of(truncated)) - 7);
  expect_refused(truncated, "truncated after its mark");
  // Another valid archive renamed over the name: a new inode, and its hash is not the id's.
  {
    std::string zip = runners::testing::make_zip({{"runner.json", R"({"StartWasm": "a.wasm"})"}, {"a.wasm", "other"}});
    fs::path path = dir().path_of(replaced);
    std::ofstream(path.string() + ".new", std::ios::binary) << zip;
    fs::rename(path.string() + ".new", path);
  }
  expect_refused(replaced, "replaced by an archive that lies about its hash");
}

}  // namespace
}  // namespace genvm::executor
