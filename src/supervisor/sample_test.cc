// Tree sampling through /proc, by parent pid.
#include <gtest/gtest.h>

#include "supervisor/test_util.h"

namespace genvm::supervisor {
namespace {

using namespace std::chrono_literals;

TEST(SampleTrees, ABurningGrandchildsCpuIsCountedInItsRootsTree) {
  // The burner is a grandchild of the shell (the root): fails without the descendant walk.
  // It burns 800 ms of CPU time (not wall), so a loaded machine only stretches the wall.
  Supervisor sup;
  SpawnRequest req;
  req.argv = {"/bin/sh", "-c", "\"$0\" & wait", testing::self_exe()};
  req.env = {{"GENVM_SUPERVISOR_HELPER", "burn"}, {"GENVM_SUPERVISOR_HELPER_ARG", "800"}};
  auto c = sup.spawn(req);
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  TreeWatcher watcher;
  int h = watcher.watch(c->pid());
  c->wait();
  auto peak = watcher.stop(h);
  ASSERT_TRUE(peak.has_value());
  EXPECT_GE(peak->cpu_ms, 300u);   // at least one look landed late in the burn
  EXPECT_LE(peak->cpu_ms, 2000u);  // ticks are 1/100 s: not mistaken for ms
}

TEST(SampleTrees, ResidentMemoryOfTheTreeIsSummed) {
  Supervisor sup;
  SpawnRequest req;
  req.argv = {"/bin/sh", "-c", "\"$0\" & wait", testing::self_exe()};
  req.env = {{"GENVM_SUPERVISOR_HELPER", "hold"}, {"GENVM_SUPERVISOR_HELPER_ARG", "64"}};
  auto c = sup.spawn(req);
  ASSERT_TRUE(c.ok());
  std::uint64_t most = 0;
  testing::wait_until(
      [&] {
        pid_t root = c->pid();
        auto seen = sample_trees(std::span<const pid_t>(&root, 1));
        if (seen.count(root)) most = std::max(most, seen[root].rss_bytes);
        return most >= (60ull << 20);
      },
      3s);
  EXPECT_GE(most, 60ull << 20);
  EXPECT_LE(most, 400ull << 20);
  c->wait();
}

TEST(SampleTrees, AGoneRootHasNoEntry) {
  Supervisor sup;
  SpawnRequest req;
  req.argv = {"/bin/true"};
  auto c = sup.spawn(req);
  ASSERT_TRUE(c.ok());
  c->wait();
  pid_t root = c->pid();
  EXPECT_EQ(sample_trees(std::span<const pid_t>(&root, 1)).count(root), 0u);
}

TEST(ExecuteUsage, CpuAndPeakRssAreReported) {
  Supervisor sup;
  ExecuteRequest req;
  req.argv = {testing::self_exe()};
  req.env = {{"GENVM_SUPERVISOR_HELPER", "burn"}, {"GENVM_SUPERVISOR_HELPER_ARG", "300"}};
  auto r = sup.execute(req);
  ASSERT_TRUE(r.ok());
  EXPECT_GE(r->cpu_ms, 250u);
  EXPECT_GT(r->peak_rss_bytes, 0u);
}

}  // namespace
}  // namespace genvm::supervisor
