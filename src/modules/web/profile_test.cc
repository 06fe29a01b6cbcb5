// Chromium profile directories: removed with their browser (and the socket directory Chromium
// made beside them), and the stale ones of modules that are gone swept at a browser start,
// never one whose owner still runs, one being made now, or something that is not ours.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "modules/web/browser.h"

namespace genvm::web {
namespace {

namespace fs = std::filesystem;

std::string own_start_time() {
  std::ifstream f("/proc/self/stat");
  std::string stat;
  std::getline(f, stat);
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 22 && (rest >> field); ++i) {
  }
  return field;
}

pid_t dead_pid() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

fs::path make_profile(const fs::path& root, const std::string& name, const std::string& owner) {
  fs::path dir = root / ("genvm-chromium-" + name);
  fs::create_directory(dir);
  if (!owner.empty()) std::ofstream(dir / "genvm-owner") << owner << "\n";
  return dir;
}

// Pins: which profiles a sweep removes (before the fix nothing removed any, and every module
// start left one behind).
TEST(module_web_profiles, SweepRemovesOnlyProfilesWhoseOwnerIsGone) {
  char tmpl[] = "/tmp/genvm-web-profile-test-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  fs::path root = tmpl;
  char host[256] = "";
  ::gethostname(host, sizeof(host) - 1);
  pid_t dead = dead_pid();

  fs::path gone = make_profile(root, "dead", std::to_string(dead) + " 12345");
  fs::path socket_dir = root / "org.chromium.Chromium.test1";
  fs::create_directory(socket_dir);
  fs::create_symlink(socket_dir / "SingletonSocket", gone / "SingletonSocket");
  fs::path reused = make_profile(root, "reused", std::to_string(::getpid()) + " 1");
  fs::path alive = make_profile(root, "alive", std::to_string(::getpid()) + " " + own_start_time());
  fs::path young = make_profile(root, "young", "");
  fs::path locked_dead = make_profile(root, "lockdead", "");
  fs::create_symlink(std::string(host) + "-" + std::to_string(dead), locked_dead / "SingletonLock");
  fs::path elsewhere = root / "elsewhere";
  fs::create_directory(elsewhere);
  std::ofstream(elsewhere / "genvm-owner") << dead << " 1\n";
  fs::create_directory_symlink(elsewhere, root / "genvm-chromium-link");

  EXPECT_EQ(sweep_stale_profiles(root.string()), 3);
  EXPECT_FALSE(fs::exists(gone));
  EXPECT_FALSE(fs::exists(socket_dir));
  EXPECT_FALSE(fs::exists(reused));
  EXPECT_FALSE(fs::exists(locked_dead));
  EXPECT_TRUE(fs::exists(alive));
  EXPECT_TRUE(fs::exists(young));
  EXPECT_TRUE(fs::is_symlink(root / "genvm-chromium-link"));
  EXPECT_TRUE(fs::exists(elsewhere / "genvm-owner"));
  fs::remove_all(root);
}

// Pins: a stopped browser leaves neither its profile nor Chromium's socket directory behind.
TEST(module_web_profiles, AStoppedBrowserLeavesNothingInTmp) {
  WebConfig c;
  Browser b(c);
  auto s = b.ensure_started();
  ASSERT_TRUE(s) << s.error().to_string();
  fs::path dir = b.profile_dir();
  ASSERT_TRUE(fs::is_directory(dir));
  std::error_code ec;
  fs::path socket = fs::read_symlink(dir / "SingletonSocket", ec);
  ASSERT_FALSE(ec) << "no SingletonSocket in " << dir;
  ASSERT_TRUE(fs::exists(socket.parent_path()));
  b.shutdown();
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_FALSE(fs::exists(socket.parent_path()));
}

}  // namespace
}  // namespace genvm::web
