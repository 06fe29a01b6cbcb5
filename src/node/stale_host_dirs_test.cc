// sweep_stale_host_dirs over folders made here as a node makes them (mkdtemp names, mode 0700,
// real unix sockets): a dead node's folder goes with its modules' folder, a live node's stays,
// and a folder holding anything else is not ours to remove.
#include "node/stale_host_dirs.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "node/test_state_dir.h"

namespace genvm::node {
namespace {

namespace fs = std::filesystem;

// A socket bound at `path`; listening when `listen`, else closed (a dead node's: refused).
// Returns the listening descriptor, or -1.
int make_socket(const std::string& path, bool listen) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << path;
  if (listen) {
    EXPECT_EQ(::listen(fd, 4), 0);
    return fd;
  }
  ::close(fd);
  return -1;
}

// Old enough for the sweep (it leaves sockets younger than 2 s alone).
void age(const std::string& path) {
  timespec times[2] = {{::time(nullptr) - 60, 0}, {::time(nullptr) - 60, 0}};
  EXPECT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0) << path;
}

std::string private_dir(const std::string& tmpl) {
  std::string t = tmpl;
  EXPECT_NE(::mkdtemp(t.data()), nullptr) << tmpl;
  return t;
}

class StaleHostDirs : public testing::StateDir {
 protected:
  // A node's folder under dir_ with its host.sock (listening or dead) and a modules' folder
  // holding the LLM and web sockets (dead) and a written config.
  std::string node_folder(bool alive, int* listen_fd) {
    std::string d = private_dir(dir_ + "/genvm-node-XXXXXX");
    *listen_fd = make_socket(d + "/host.sock", alive);
    std::string m = private_dir(d + "/genvm-modules-XXXXXX");
    make_socket(m + "/llm.sock", false);
    make_socket(m + "/web.sock", false);
    std::ofstream(m + "/llm-config.json") << "{}";
    age(d + "/host.sock");
    return d;
  }
};

TEST_F(StaleHostDirs, ADeadNodesFolderGoesWithItsModulesFolder) {
  int fd = -1;
  std::string dead = node_folder(false, &fd);
  EXPECT_EQ(sweep_stale_host_dirs(dir_), 1);
  EXPECT_FALSE(fs::exists(dead));
}

TEST_F(StaleHostDirs, ALiveNodesFolderStays) {
  int fd = -1;
  std::string live = node_folder(true, &fd);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(sweep_stale_host_dirs(dir_), 0);
  EXPECT_TRUE(fs::exists(live + "/host.sock"));
  ::close(fd);
  // Once its node is gone (nobody listens), the next sweep takes it.
  EXPECT_EQ(sweep_stale_host_dirs(dir_), 1);
  EXPECT_FALSE(fs::exists(live));
}

TEST_F(StaleHostDirs, AnythingElseInsideIsNotOursToRemove) {
  int fd = -1;
  std::string beside = node_folder(false, &fd);
  std::ofstream(beside + "/notes.txt") << "x";
  std::string inside = node_folder(false, &fd);
  std::string m;
  for (const auto& e : fs::directory_iterator(inside)) {
    if (e.path().filename().string().rfind("genvm-modules-", 0) == 0) m = e.path().string();
  }
  ASSERT_FALSE(m.empty());
  std::ofstream(m + "/notes.txt") << "x";
  // A modules' folder others may read is not one a ModuleSet made.
  std::string open_modules = node_folder(false, &fd);
  for (const auto& e : fs::directory_iterator(open_modules)) {
    if (e.is_directory()) fs::permissions(e.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
  }
  std::string plain = node_folder(false, &fd);
  EXPECT_EQ(sweep_stale_host_dirs(dir_), 1);  // `plain` only
  EXPECT_TRUE(fs::exists(beside + "/notes.txt"));
  EXPECT_TRUE(fs::exists(m + "/notes.txt"));
  EXPECT_TRUE(fs::exists(open_modules + "/host.sock"));
  EXPECT_FALSE(fs::exists(plain));
}

}  // namespace
}  // namespace genvm::node
