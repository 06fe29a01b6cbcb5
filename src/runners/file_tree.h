// FileTree: a plan's mapped files (Plan::files) as the read-only directory tree the guest's
// WASI file system serves. Nodes are numbered in path order, so inode numbers and directory
// listings are the same on every machine.
//
//   FileTree tree = FileTree::build(plan.files).value();
//   auto n = tree.resolve(FileTree::kRoot, "usr/lib/python3.13/os.py");   // relative to a dir
//   tree.node(*n).contents, tree.children(FileTree::kRoot)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace genvm::runners {

class FileTree {
 public:
  static constexpr std::uint32_t kRoot = 0;
  // Bounds on what a path lookup walks (WASI paths come from the guest).
  static constexpr std::size_t kMaxPathLen = 4096;
  static constexpr std::size_t kMaxComponents = 256;

  struct Node {
    std::string name;            // its last component ("" for the root)
    std::uint32_t parent = 0;    // the root is its own parent
    bool is_dir = false;
    std::string_view contents;   // files only
    std::vector<std::uint32_t> children;  // directories only, by name
  };

  // Fails (invalid_contract runner malformed) when a path is both a file and a folder.
  static Result<FileTree> build(const std::map<std::string, std::string_view, std::less<>>& files);

  enum class Lookup { kFound, kNotFound, kNotDir, kInvalid };
  // `path` relative to directory `from` (a leading '/' starts at the root); `.` and empty
  // components are skipped, `..` goes up and stops at the root, as a preopened "/" does.
  Lookup resolve(std::uint32_t from, std::string_view path, std::uint32_t& out) const;

  const Node& node(std::uint32_t index) const { return nodes_[index]; }
  std::size_t size() const { return nodes_.size(); }

 private:
  std::vector<Node> nodes_;
};

}  // namespace genvm::runners
