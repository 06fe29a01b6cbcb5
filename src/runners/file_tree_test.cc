#include "runners/file_tree.h"

#include <gtest/gtest.h>

namespace genvm::runners {
namespace {

using Files = std::map<std::string, std::string_view, std::less<>>;

TEST(RunnersFileTree, BuildsOrderedFoldersAndResolvesPaths) {
  auto t = FileTree::build(Files{{"/py/lib/os.py", "OS"}, {"/py/lib/abc.py", "ABC"}, {"/entry.py", "E"},
                                 {"/py/lib/enc/utf8.py", "U"}});
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  const auto& root = t->node(FileTree::kRoot);
  ASSERT_EQ(root.children.size(), 2u);
  EXPECT_EQ(t->node(root.children[0]).name, "entry.py");
  EXPECT_EQ(t->node(root.children[1]).name, "py");
  std::uint32_t lib = 0, n = 0;
  ASSERT_EQ(t->resolve(FileTree::kRoot, "py/lib", lib), FileTree::Lookup::kFound);
  EXPECT_TRUE(t->node(lib).is_dir);
  std::vector<std::string> names;
  for (auto c : t->node(lib).children) names.push_back(t->node(c).name);
  EXPECT_EQ(names, (std::vector<std::string>{"abc.py", "enc", "os.py"}));
  ASSERT_EQ(t->resolve(lib, "os.py", n), FileTree::Lookup::kFound);
  EXPECT_EQ(t->node(n).contents, "OS");
  ASSERT_EQ(t->resolve(lib, "./enc/../../../../entry.py", n), FileTree::Lookup::kFound);  // .. stops at /
  EXPECT_EQ(t->node(n).contents, "E");
  ASSERT_EQ(t->resolve(lib, "/py//lib/enc/utf8.py", n), FileTree::Lookup::kFound);
  EXPECT_EQ(t->node(n).contents, "U");
  EXPECT_EQ(t->resolve(lib, "missing.py", n), FileTree::Lookup::kNotFound);
  EXPECT_EQ(t->resolve(lib, "os.py/x", n), FileTree::Lookup::kNotDir);
  EXPECT_EQ(t->resolve(lib, "os.py/", n), FileTree::Lookup::kNotDir);
  EXPECT_EQ(t->resolve(lib, std::string("o\0s", 3), n), FileTree::Lookup::kInvalid);
  std::string deep;
  for (int i = 0; i < 300; ++i) deep += "../";
  EXPECT_EQ(t->resolve(lib, deep, n), FileTree::Lookup::kInvalid);
  ASSERT_EQ(t->resolve(lib, "", n), FileTree::Lookup::kFound);
  EXPECT_EQ(n, lib);
}

TEST(RunnersFileTree, RefusesAPathThatIsFileAndFolder) {
  auto t = FileTree::build(Files{{"/a", "file"}, {"/a/b", "under it"}});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, "invalid_contract runner malformed");
  EXPECT_FALSE(FileTree::build(Files{{"/a//b", "x"}}).ok());
}

}  // namespace
}  // namespace genvm::runners
