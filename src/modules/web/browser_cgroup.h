// The browser's memory cgroup: render_memory_limit over Chromium and every process it starts
// (the launcher's child joins it before exec). Made under the module's own cgroup, v1 (the
// memory controller's hierarchy, memory.limit_in_bytes) or v2 (memory.max, where the parent
// delegates the memory controller); the kernel's OOM killer then ends the largest process in
// it, normally the renderer that allocates, and the render sees its page crash.
//
//   auto cg = BrowserCgroup::create(2ull << 30);   // error "cgroup" when none can be made
//   spawn with cg->procs_path(); ...; cg.reset();   // after the browser is killed
//
// Its name is genvm-web-<module pid>-<n>; create() also removes the empty ones of modules that
// are gone. The destructor SIGKILLs what is left in it and removes it (retrying while the
// kernel still lists exiting processes).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"

namespace genvm::web {

class BrowserCgroup {
 public:
  static Result<std::unique_ptr<BrowserCgroup>> create(std::uint64_t limit_bytes,
                                                       const std::string& fs_root = "/sys/fs/cgroup");
  ~BrowserCgroup();
  BrowserCgroup(const BrowserCgroup&) = delete;
  BrowserCgroup& operator=(const BrowserCgroup&) = delete;

  const std::string& dir() const { return dir_; }
  std::string procs_path() const { return dir_ + "/cgroup.procs"; }
  // Processes the OOM killer ended in it so far (v1 memory.oom_control / v2 memory.events).
  std::uint64_t oom_kills() const;

 private:
  BrowserCgroup(std::string dir, bool v2) : dir_(std::move(dir)), v2_(v2) {}
  std::string dir_;
  bool v2_;
};

}  // namespace genvm::web
