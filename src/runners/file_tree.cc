#include "runners/file_tree.h"

#include <algorithm>

#include "runners/errors.h"

namespace genvm::runners {

Result<FileTree> FileTree::build(const std::map<std::string, std::string_view, std::less<>>& files) {
  FileTree t;
  t.nodes_.push_back(Node{"", 0, true, {}, {}});
  // Built through a path -> index map, then children sorted by name so listings are ordered.
  std::map<std::string, std::uint32_t, std::less<>> dirs{{"", kRoot}};
  for (const auto& [path, contents] : files) {
    std::string_view rest = path;
    if (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
    std::uint32_t parent = kRoot;
    std::string prefix;
    while (true) {
      auto slash = rest.find('/');
      std::string_view part = rest.substr(0, slash);
      if (part.empty()) return malformed("mapped path \"" + path + "\" has an empty component");
      if (!prefix.empty()) prefix += '/';
      prefix.append(part);
      if (slash == std::string_view::npos) {
        if (dirs.count(prefix)) return malformed("mapped path \"" + path + "\" is also a folder");
        t.nodes_.push_back(Node{std::string(part), parent, false, contents, {}});
        t.nodes_[parent].children.push_back(static_cast<std::uint32_t>(t.nodes_.size() - 1));
        break;
      }
      auto it = dirs.find(prefix);
      if (it == dirs.end()) {
        if (files.count("/" + prefix) || files.count(prefix)) {
          return malformed("mapped path \"" + prefix + "\" is both a file and a folder");
        }
        t.nodes_.push_back(Node{std::string(part), parent, true, {}, {}});
        auto index = static_cast<std::uint32_t>(t.nodes_.size() - 1);
        t.nodes_[parent].children.push_back(index);
        it = dirs.emplace(prefix, index).first;
      }
      parent = it->second;
      rest = rest.substr(slash + 1);
    }
  }
  for (auto& n : t.nodes_) {
    std::sort(n.children.begin(), n.children.end(),
              [&](std::uint32_t a, std::uint32_t b) { return t.nodes_[a].name < t.nodes_[b].name; });
  }
  return t;
}

FileTree::Lookup FileTree::resolve(std::uint32_t from, std::string_view path, std::uint32_t& out) const {
  if (path.size() > kMaxPathLen || from >= nodes_.size() || path.find('\0') != std::string_view::npos) {
    return Lookup::kInvalid;
  }
  std::uint32_t at = path.starts_with('/') ? kRoot : from;
  std::size_t components = 0;
  std::size_t pos = 0;
  while (pos <= path.size()) {
    auto slash = path.find('/', pos);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view part = path.substr(pos, slash - pos);
    pos = slash + 1;
    if (part.empty() || part == ".") continue;
    if (++components > kMaxComponents) return Lookup::kInvalid;
    if (!nodes_[at].is_dir) return Lookup::kNotDir;
    if (part == "..") {
      at = nodes_[at].parent;
      continue;
    }
    const auto& kids = nodes_[at].children;
    auto it = std::lower_bound(kids.begin(), kids.end(), part,
                               [&](std::uint32_t k, std::string_view name) { return nodes_[k].name < name; });
    if (it == kids.end() || nodes_[*it].name != part) return Lookup::kNotFound;
    at = *it;
  }
  // "a/file/" names a directory: a file there is not one.
  if (!path.empty() && path.back() == '/' && !nodes_[at].is_dir) return Lookup::kNotDir;
  out = at;
  return Lookup::kFound;
}

}  // namespace genvm::runners
