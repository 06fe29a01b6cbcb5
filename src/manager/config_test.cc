#include "manager/config.h"

#include <gtest/gtest.h>

namespace genvm::manager {
namespace {

TEST(ManagerConfig, EmptyFileIsEveryDocumentedDefault) {
  auto c = parse_config("");
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->execution_retention, std::chrono::minutes(5));
  EXPECT_EQ(c->max_message_bytes, 64u * 1024 * 1024);
  EXPECT_FALSE(c->permits.total.has_value());
  EXPECT_EQ(c->permits.sync, 4u);
  EXPECT_EQ(c->permits.nondet, 8u);
  EXPECT_EQ(c->permits.per_gib_num, 1u);
  EXPECT_EQ(c->debug.untrusted_max, DebugMode::kSafe);
  EXPECT_FALSE(c->debug.clamp);
  EXPECT_TRUE(c->executor.empty()) << "the executor is resolved by version";
  EXPECT_TRUE(c->executors_dir.empty());
  EXPECT_TRUE(c->manifest_path.empty());
  EXPECT_EQ(c->executor_protocol, Config::ExecutorProtocol::kGenvm);
  EXPECT_EQ(c->log_level, LogLevel::kInfo);
  EXPECT_EQ(c->port, 3999);
  EXPECT_TRUE(c->socket.empty());
  EXPECT_TRUE(c->extra_args.untrusted_allowed.empty()) << "an untrusted caller passes no extra_args by default";
  EXPECT_EQ(c->connections.max, 0u) << "derived from the fd limit";
  EXPECT_EQ(c->connections.idle_timeout, std::chrono::seconds(60));
  EXPECT_EQ(c->connections.max_queued_bytes, 16u * 1024 * 1024);
  EXPECT_EQ(c->connections.stall_timeout, std::chrono::seconds(10));
  EXPECT_EQ(c->connections.max_per_peer, 0u) << "half the connection cap";
  EXPECT_EQ(c->ownership, RunOwnership::kShared) << "the public manager's model";
  EXPECT_EQ(c->retention.max_bytes, 1ull << 30);
  EXPECT_EQ(c->retention.max_bytes_per_peer, 256ull << 20);
  EXPECT_TRUE(c->allowed_origins.empty()) << "no browser page by default";
  // 2.5 x the 4 GiB run budget + 1 GiB: the executor's measured host cost with room.
  EXPECT_EQ(c->executor_memory_max_bytes, 4294967295ull * 5 / 2 + (1ull << 30));
}

TEST(ManagerConfig, ParsesEveryKey) {
  auto c = parse_config(R"(
executors_dir: ${exeDir}/../executor
manifest_path: /opt/genvm/manifest.yaml
executor: [sh, -c, "cat"]
executor_protocol: plain
log_level: WARNING
env_pass_through: [HOME]
execution_retention: 90s
max_message_bytes: 1048576
permits: {total: 16, per_gib: "1/4", sync: 2, nondet: 3}
debug_mode: {untrusted_max: safe-unbounded, on_untrusted_above_max: clamp}
trusted: {uids: [0, 1000], tokens: ["0123456789abcdef0123"]}
extra_args: {untrusted_allowed: ["--nondet-fuel=*", "--x"]}
connections: {max: 200, idle_timeout: 30s, max_queued_bytes: 4096, stall_timeout: 2s, max_per_peer: 20}
retention: {max_bytes: 1000000, max_bytes_per_peer: 2000}
ownership: per_caller
allowed_origins: ["https://dashboard.example:8443"]
containment: false
host: 0.0.0.0
port: 4000
socket: /tmp/m.sock
)");
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->executors_dir, "${exeDir}/../executor");
  EXPECT_EQ(c->manifest_path, "/opt/genvm/manifest.yaml");
  EXPECT_EQ(c->log_level, LogLevel::kWarn);
  EXPECT_EQ(c->executor.size(), 3u);
  EXPECT_EQ(c->executor_protocol, Config::ExecutorProtocol::kPlain);
  EXPECT_EQ(c->execution_retention, std::chrono::seconds(90));
  EXPECT_EQ(c->max_message_bytes, 1048576u);
  EXPECT_EQ(*c->permits.total, 16u);
  EXPECT_EQ(c->permits.per_gib_num, 1u);
  EXPECT_EQ(c->permits.per_gib_den, 4u);
  EXPECT_EQ(c->permits.sync, 2u);
  EXPECT_EQ(c->permits.nondet, 3u);
  EXPECT_EQ(c->debug.untrusted_max, DebugMode::kSafeUnbounded);
  EXPECT_TRUE(c->debug.clamp);
  EXPECT_EQ(c->trusted_uids, (std::vector<uid_t>{0, 1000}));
  EXPECT_EQ(c->trusted_tokens.size(), 1u);
  EXPECT_EQ(c->extra_args.untrusted_allowed, (std::vector<std::string>{"--nondet-fuel=*", "--x"}));
  EXPECT_EQ(c->connections.max, 200u);
  EXPECT_EQ(c->connections.idle_timeout, std::chrono::seconds(30));
  EXPECT_EQ(c->connections.max_queued_bytes, 4096u);
  EXPECT_EQ(c->connections.stall_timeout, std::chrono::seconds(2));
  EXPECT_EQ(c->connections.max_per_peer, 20u);
  EXPECT_EQ(c->retention.max_bytes, 1000000u);
  EXPECT_EQ(c->retention.max_bytes_per_peer, 2000u);
  EXPECT_EQ(c->ownership, RunOwnership::kPerCaller);
  EXPECT_EQ(c->allowed_origins, (std::vector<std::string>{"https://dashboard.example:8443"}));
  EXPECT_FALSE(c->containment);
  EXPECT_EQ(c->port, 4000);
  EXPECT_EQ(c->socket, "/tmp/m.sock");
}

TEST(ManagerConfig, ModuleProgramsAndTheirDefaults) {
  auto d = parse_config("");
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->modules.web.binary.empty());
  EXPECT_TRUE(d->modules.llm.default_config.empty());
  EXPECT_FALSE(d->modules.llm.autostart);
  EXPECT_EQ(d->modules.start_timeout, std::chrono::seconds(60));
  EXPECT_EQ(d->modules.stop_timeout, std::chrono::seconds(5));
  auto c = parse_config(
      "modules:\n"
      "  llm: {binary: /opt/llm, default_config: \"${exeDir}/llm.yaml\", autostart: true}\n"
      "  web: {autostart: false}\n"
      "  runtime_dir: /run/genvm\n"
      "  start_timeout: 90s\n"
      "  stop_timeout: 250ms\n");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->modules.llm.binary, "/opt/llm");
  EXPECT_EQ(c->modules.llm.default_config, "${exeDir}/llm.yaml");
  EXPECT_TRUE(c->modules.llm.autostart);
  EXPECT_FALSE(c->modules.web.autostart);
  EXPECT_EQ(c->modules.runtime_dir, "/run/genvm");
  EXPECT_EQ(c->modules.start_timeout, std::chrono::seconds(90));
  EXPECT_EQ(c->modules.stop_timeout, std::chrono::milliseconds(250));
}

TEST(ManagerConfig, RejectsWithOneLineNamingTheKey) {
  struct Case { const char* yaml; const char* mentions; };
  for (auto c : {Case{"retention: 5m", "retention: must be a mapping"},
                 Case{"retention: {max_bytes: 0}", "retention.max_bytes"},
                 Case{"retention: {per_peer: 1}", "unknown key \"per_peer\""},
                 Case{"ownership: mine", "shared or per_caller"},
                 Case{"allowed_origins: https://x", "allowed_origins"},
                 Case{"connections: {max_per_peer: 0}", "connections.max_per_peer"},
                 Case{"execution_retention: 300", "execution_retention"},
                 Case{"permits: {sync: 0}", "permits.sync"},
                 Case{"permits: {total: -3}", "permits.total"},
                 Case{"permits: {bogus: 1}", "unknown key \"bogus\""},
                 Case{"permits: {per_gib: \"1/0\"}", "per_gib"},
                 Case{"debug_mode: {untrusted_max: unsafe}", "untrusted_max"},
                 Case{"debug_mode: {untrusted_max: loud}", "untrusted_max"},
                 Case{"debug_mode: {on_untrusted_above_max: maybe}", "reject or clamp"},
                 Case{"trusted: {tokens: [short]}", "16 characters"},
                 Case{"trusted: {uids: [root]}", "trusted.uids"},
                 Case{"extra_args: {untrusted_allowed: [\"--debug-mode=*\"]}", "flag the manager owns"},
                 Case{"extra_args: {untrusted_allowed: [\"--module-cache\"]}", "flag the manager owns"},
                 Case{"extra_args: {allowed: []}", "unknown key \"allowed\""},
                 Case{"connections: {idle_timeout: 0s}", "connections.idle_timeout"},
                 Case{"connections: {max_queued_bytes: 10}", "at least 1024"},
                 Case{"connections: {max: 0}", "connections.max"},
                 Case{"executor: []", "executor"},
                 Case{"executor_protocol: grpc", "genvm or plain"},
                 Case{"executor_protocol: plain", "plain needs an executor"},
                 Case{"log_level: loud", "log_level"},
                 Case{"manifest_path: [a]", "manifest_path"},
                 Case{"max_message_bytes: 10", "max_message_bytes"},
                 Case{"port: 70000", "port"},
                 Case{"modules: {gpu: {}}", "unknown key \"gpu\""},
                 Case{"modules: {web: {path: x}}", "modules.web: unknown key \"path\""},
                 Case{"modules: {llm: {binary: [a]}}", "modules.llm.binary"},
                 Case{"modules: {start_timeout: 0s}", "modules.start_timeout"},
                 Case{"[1, 2", ""}}) {
    auto r = parse_config(c.yaml);
    ASSERT_FALSE(r.ok()) << c.yaml;
    EXPECT_EQ(r.error().code, "bad_config");
    EXPECT_NE(r.error().message.find(c.mentions), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos) << r.error().message;
  }
}

// install/config/genvm-manager.yaml of the public manager, as shipped (${exeDir} and all).
TEST(ManagerConfig, ThePublicConfigFileIsAccepted) {
  auto c = parse_config(R"(
threads: 4
blocking_threads: 48
log_disable: tracing*,polling*,tungstenite*,tokio_tungstenite*
log_level: info

manifest_path: ${exeDir}/../data/manifest.yaml
permits: # 1 permit is 1 GiB of RAM
  total: null # if null, free memory times `per_gib`
  per_gib: 1 # permits per gibibyte of free memory, an integer or a ratio (1/4 = one permit per 4 GiB)
  sync: 4 # permits a sync run costs
  nondet: 8 # permits a nondet run costs, also the minimum for `total`
execution_retention: 5m # finished executions are retained until ack or this TTL
max_message_bytes: 67108864 # 64 MiB manager websocket message cap
)");
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->manifest_path, "${exeDir}/../data/manifest.yaml");
  EXPECT_EQ(c->permits.nondet, 8u);
  EXPECT_EQ(c->execution_retention, std::chrono::minutes(5));
  EXPECT_FALSE(parse_config("threads: many").ok());
}

TEST(ManagerConfig, NullPermitsKeepDefaults) {
  auto c = parse_config("permits: null");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->permits.nondet, 8u);
}

TEST(ManagerConfig, TotalPermitsFollowMemoryAndNeverStarveTheDearestRun) {
  PermitsConfig p;
  EXPECT_EQ(resolve_total_permits(p, 32ull << 30), 32u);
  EXPECT_EQ(resolve_total_permits(p, (32ull << 30) + (1ull << 29)), 32u) << "whole GiB";
  EXPECT_EQ(resolve_total_permits(p, 2ull << 30), 8u) << "raised to the nondet cost";
  p.per_gib_num = 1;
  p.per_gib_den = 4;
  EXPECT_EQ(resolve_total_permits(p, 64ull << 30), 16u);
  p.per_gib_num = 3;
  p.per_gib_den = 1;
  EXPECT_EQ(resolve_total_permits(p, 64ull << 30), 192u);
  p.total = 5;
  p.nondet = 6;
  EXPECT_EQ(resolve_total_permits(p, 0), 6u);
  p.total = 100;
  EXPECT_EQ(resolve_total_permits(p, 0), 100u);
}

}  // namespace
}  // namespace genvm::manager
