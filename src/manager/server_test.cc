// The server over real sockets (TCP and a unix socket): a Beast WebSocket/HTTP client in the
// test thread, the manager (registry + server) on its own io thread, `sh` as the executor.
#ifdef GENVM_MANAGER_HAS_SUPERVISOR
#include <filesystem>
#include <fstream>

#include "manager/server_test_util.h"

namespace genvm::manager {
namespace {

using namespace server_test;

constexpr const char* kClientToken = "server-test-client-0001";
TEST(ManagerServer, HelloRunEventsArtifactAckOverTcp) {
  Manager m("");
  asio::io_context io;
  TcpWs c(io, m.port());
  EXPECT_EQ(c.hello_.method, static_cast<std::uint16_t>(Method::kHello));
  EXPECT_EQ(c.hello_.request_id, 0u);
  EXPECT_EQ(c.boot_id(), m.on_thread([&] { return m.registry().boot_id(); }));
  EXPECT_EQ(*c.hello_.payload.find("hello")->find("protocol_major"), Value(0));

  c.send(Method::kRun, 5, run_payload("echo out; exit 4", {{"debug_mode", "safe"}, {"host_genvm_id", "h-1"}}));
  std::uint64_t id = genvm_id_of(c.reply(5));
  Value started = c.event("started", id);
  EXPECT_EQ(*started.find("host_genvm_id"), Value("h-1"));
  Value fin = c.terminal(id);
  const Value& body = fin.as_map().at("finished");
  EXPECT_EQ(*body.find("exit_code"), Value(4));
  EXPECT_EQ(*body.find("cause"), Value("exited"));

  c.send(Method::kAttach, 6, Value::map({{"attach", Value::map({{"boot_id", c.boot_id()}, {"genvm_id", id}})}}));
  Frame snap = c.reply(6);
  EXPECT_EQ(snap.method, static_cast<std::uint16_t>(Method::kAttach));
  EXPECT_EQ(*snap.payload.find("snapshot"), fin);

  c.send(Method::kGetArtifact, 7,
         Value::map({{"get_artifact", Value::map({{"genvm_id", id}, {"field", "stdout"}, {"offset", 1}, {"max_len", 100}})}}));
  Frame art = c.reply(7);
  EXPECT_EQ(*art.payload.find("total_len"), Value(4));
  EXPECT_EQ(*art.payload.find("data"), Value(calldata::Bytes{'u', 't', '\n'}));

  c.send(Method::kAck, 8, Value::map({{"ack", Value::map({{"genvm_id", id}})}}));
  Frame ack = c.reply(8);
  EXPECT_EQ(ack.method, static_cast<std::uint16_t>(Method::kAck));
  EXPECT_EQ(ack.payload, Value::map({}));
  c.send(Method::kAttach, 9, Value::map({{"attach", Value::map({{"boot_id", c.boot_id()}, {"genvm_id", id}})}}));
  EXPECT_EQ(error_code_of(c.reply(9)), static_cast<int>(ErrorCode::kUnknownId));
}

TEST(ManagerServer, ProtocolErrorsAreAnsweredAndTheConnectionStaysUp) {
  Manager m("");
  asio::io_context io;
  TcpWs c(io, m.port());
  c.send_raw({'h', 'i'}, /*binary=*/false);
  Frame text = c.read();
  EXPECT_EQ(error_code_of(text), static_cast<int>(ErrorCode::kMalformedFrame));
  EXPECT_EQ(text.request_id, 0u);
  c.send_raw({0, 3, 0});
  EXPECT_EQ(error_code_of(c.read()), static_cast<int>(ErrorCode::kMalformedFrame));
  c.send(Method::kCancel, 0, Value::map({{"cancel", Value::map({{"genvm_id", 1}})}}));
  EXPECT_EQ(error_code_of(c.read()), static_cast<int>(ErrorCode::kBadRequestId));
  c.send(static_cast<Method>(99), 11, Value::map({}));
  Frame unknown = c.read();
  EXPECT_EQ(error_code_of(unknown), static_cast<int>(ErrorCode::kUnknownMethod));
  EXPECT_EQ(unknown.request_id, 11u);
  c.send(Method::kAck, 12, Value::map({{"ack", Value::map({{"genvm_id", "x"}})}}));
  EXPECT_EQ(error_code_of(c.read()), static_cast<int>(ErrorCode::kMalformedFrame));
  c.send(Method::kCancel, 13, Value::map({{"cancel", Value::map({{"genvm_id", 424242}})}}));
  EXPECT_EQ(error_code_of(c.read()), static_cast<int>(ErrorCode::kUnknownId));
  c.send(Method::kAttach, 14, Value::map({{"attach", Value::map({{"boot_id", c.boot_id() + 1}, {"genvm_id", 1}})}}));
  EXPECT_EQ(error_code_of(c.read()), static_cast<int>(ErrorCode::kBootIdMismatch));
  // Still usable.
  c.send(Method::kRun, 15, run_payload("exec sleep 1000"));
  std::uint64_t id = genvm_id_of(c.reply(15));
  c.event("started", id);
  c.send(Method::kAck, 16, Value::map({{"ack", Value::map({{"genvm_id", id}})}}));
  EXPECT_EQ(error_code_of(c.reply(16)), static_cast<int>(ErrorCode::kNotFinished));
  c.send(Method::kCancel, 17, Value::map({{"cancel", Value::map({{"genvm_id", id}})}}));
  EXPECT_EQ(c.reply(17).payload, Value::map({}));
  EXPECT_EQ(*c.terminal(id).as_map().at("finished").find("cause"), Value("cancelled"));
}

// Fails if the cap is removed (the message would be answered) or left to Beast (close 1009).
TEST(ManagerServer, OversizedMessageDropsTheConnectionWithoutACloseFrame) {
  Manager m("max_message_bytes: 1024\n");
  asio::io_context io;
  TcpWs c(io, m.port());
  std::vector<std::uint8_t> big = encode_frame(Method::kRun, 1, Value(calldata::Bytes(4096, 7)));
  beast::error_code ec;
  c.ws().write(asio::buffer(big), ec);  // may already fail: the manager stops reading at the cap
  beast::flat_buffer buf;
  c.ws().read(buf, ec);
  EXPECT_TRUE(ec);
  EXPECT_NE(ec, websocket::error::closed) << "a close frame was sent";
  // A message just under the cap is still fine on a new connection.
  TcpWs d(io, m.port());
  d.send(Method::kAck, 2, Value::map({{"ack", Value::map({{"genvm_id", 1}})}}));
  EXPECT_EQ(error_code_of(d.read()), static_cast<int>(ErrorCode::kUnknownId));
}

TEST(ManagerServer, DisconnectDoesNotKillARunAndAttachRecoversTheResult) {
  Manager m("");
  asio::io_context io;
  std::uint64_t id, boot;
  // The run is the token's (an untrusted one), so a later connection bearing it may attach.
  const std::string token = "reattaching-client-0001";
  {
    TcpWs a(io, m.port(), token);
    boot = a.boot_id();
    // Waits for a file the test creates after the client is gone.
    std::string flag = ::testing::TempDir() + "mgr_flag_" + std::to_string(::getpid());
    ::unlink(flag.c_str());
    a.send(Method::kRun, 1, run_payload("while [ ! -e " + flag + " ]; do sleep 0.02; done; exit 9"));
    id = genvm_id_of(a.reply(1));
    a.event("started", id);
    a.ws().close(websocket::close_code::normal);
    FILE* f = std::fopen(flag.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  TcpWs b(io, m.port(), token);
  b.send(Method::kAttach, 2, Value::map({{"attach", Value::map({{"boot_id", boot}, {"genvm_id", id}})}}));
  Frame snap = b.reply(2);
  Value fin = snap.payload.find("snapshot")->as_map().begin()->first == "finished" ? *snap.payload.find("snapshot")
                                                                                   : b.terminal(id);
  EXPECT_EQ(*fin.as_map().at("finished").find("exit_code"), Value(9));
}

TEST(ManagerServer, UnixPeerUidAndBearerTokenAreTrustedOthersAreNot) {
  Manager m("trusted: {uids: [" + std::to_string(::getuid()) + "], tokens: [\"0123456789abcdef0123\"]}\n");
  asio::io_context io;
  auto outcome = [&](auto& client) {
    client.send(Method::kRun, 1, run_payload("exit 0", {{"debug_mode", "unsafe"}}));
    std::uint64_t id = genvm_id_of(client.reply(1));
    return client.terminal(id).as_map().begin()->first;
  };
  UnixWs local(io, m.socket_path());
  EXPECT_EQ(outcome(local), "finished");
  TcpWs anonymous(io, m.port());
  EXPECT_EQ(outcome(anonymous), "failed_to_start");
  TcpWs wrong(io, m.port(), "0123456789abcdef0124");
  EXPECT_EQ(outcome(wrong), "failed_to_start");
  TcpWs bearer(io, m.port(), "0123456789abcdef0123");
  EXPECT_EQ(outcome(bearer), "finished");
}

TEST(ManagerServer, UnixSocketUntrustedUidIsHeldToTheMaximum) {
  Manager m("trusted: {uids: [" + std::to_string(::getuid() + 1) + "]}\n");
  asio::io_context io;
  UnixWs local(io, m.socket_path());
  local.send(Method::kRun, 1, run_payload("exit 0", {{"debug_mode", "safe-unbounded"}}));
  std::uint64_t id = genvm_id_of(local.reply(1));
  EXPECT_EQ(local.terminal(id).as_map().begin()->first, "failed_to_start");
}

TEST(ManagerServer, HttpRunWaitStatusIsDestructiveAndCancelWorks) {
  Manager m("");
  // The runs are this (untrusted) token's: it reads them from any connection.
  auto call = [&](http::verb v, const std::string& target, std::string body = "") {
    return http_call(m.port(), v, target, std::move(body), kClientToken);
  };
  auto run = call(http::verb::post, "/genvm/run",
                       calldata_body(run_body(true, {{"extra_args", Value::array({"exit 5"})}})));
  ASSERT_EQ(run.result(), http::status::ok) << run.body();
  EXPECT_NE(run.body().find("\"result\":\"started\""), std::string::npos);
  std::string id = run.body().substr(run.body().find("\"id\":") + 5);
  id = id.substr(0, id.find('}'));
  auto st = call(http::verb::get, "/genvm/" + id + "?wait=60s");
  // handlers.rs + SingleGenVMContextDone: the retained result, finished_at in epoch ms.
  EXPECT_EQ(st.body().find("{\"genvm_id\":" + id + ",\"status\":{\"finished_at\":"), 0u) << st.body();
  EXPECT_NE(st.body().find(",\"stdout\":\"\",\"stderr\":\"\",\"genvm_log\":[],\"metrics\":{"), std::string::npos) << st.body();
  EXPECT_NE(st.body().find("\"consumed_result\":null,\"version_major\":0,\"version_minor\":0}}"), std::string::npos)
      << st.body();
  auto again = call(http::verb::get, "/genvm/" + id);
  EXPECT_NE(again.body().find("\"status\":null"), std::string::npos) << again.body();

  auto sleeper = call(http::verb::post, "/genvm/run",
                           calldata_body(run_body(true, {{"extra_args", Value::array({"exec sleep 1000"})}})));
  std::string sid = sleeper.body().substr(sleeper.body().find("\"id\":") + 5);
  sid = sid.substr(0, sid.find('}'));
  auto pending = call(http::verb::get, "/genvm/" + sid + "?wait=10ms");
  EXPECT_NE(pending.body().find("\"status\":null"), std::string::npos) << pending.body();
  auto del = call(http::verb::delete_, "/genvm/" + sid);
  EXPECT_NE(del.body().find("shutdown_completed"), std::string::npos) << del.body();
  auto fin = call(http::verb::get, "/genvm/" + sid);
  EXPECT_NE(fin.body().find("\"status\":{\"finished_at\""), std::string::npos) << fin.body();
  auto gone = call(http::verb::delete_, "/genvm/" + sid);
  EXPECT_EQ(gone.result(), http::status::ok);
  EXPECT_EQ(gone.body(), "{\"error\":\"GenVM with id " + sid + " not found\",\"genvm_id\":" + sid + "}");
}

TEST(ManagerServer, HttpRunThatFailsToStartAnswers500) {
  Manager m("");
  auto r = http_call(m.port(), http::verb::post, "/genvm/run",
                     calldata_body(run_body(true, {{"debug_mode", "unsafe"}})));
  EXPECT_EQ(r.result(), http::status::internal_server_error);
  EXPECT_NE(r.body().find("untrusted"), std::string::npos) << r.body();
  auto junk = http_call(m.port(), http::verb::post, "/genvm/run", "\xff\xff");
  EXPECT_EQ(junk.result(), http::status::internal_server_error) << "handlers.rs: a decode failure is a 500";
  auto modules = http_call(m.port(), http::verb::post, "/genvm/run", calldata_body(run_body(false)));
  EXPECT_EQ(modules.result(), http::status::internal_server_error);
  EXPECT_EQ(modules.body(), "{\"error\":\"modules are required but not running (is_sync=false with 'n' permission)\"}");
  auto bad = http_call(m.port(), http::verb::post, "/genvm/run", calldata_body(run_body(true, {{"deadline", "5"}})));
  EXPECT_EQ(bad.result(), http::status::internal_server_error);
  EXPECT_NE(bad.body().find("must end with ms, s, m, or h"), std::string::npos) << bad.body();
}

TEST(ManagerServer, HttpStatusMetricsArtifactAndErrors) {
  Manager m("permits: {total: 12}\nmax_message_bytes: 4096\n");
  // The runs are this (untrusted) token's: it reads them from any connection.
  auto call = [&](http::verb v, const std::string& target, std::string body = "") {
    return http_call(m.port(), v, target, std::move(body), kClientToken);
  };
  auto st = call(http::verb::get, "/status");
  EXPECT_NE(st.body().find("\"permits\":{\"current\":12,\"max\":12,\"per_sync_run\":4,\"per_nondet_run\":8}"),
            std::string::npos)
      << st.body();
  auto run = call(http::verb::post, "/genvm/run",
                       calldata_body(run_body(true, {{"debug_mode", "safe"}, {"extra_args", Value::array({"printf abc"})}})));
  std::string id = run.body().substr(run.body().find("\"id\":") + 5);
  id = id.substr(0, id.find('}'));
  auto w = call(http::verb::get, "/genvm/" + id + "/artifact?field=stdout&max_len=10");
  // Not yet terminal, or terminal: either way a well-formed answer; wait via the socket API.
  asio::io_context io;
  TcpWs c(io, m.port(), kClientToken);
  c.send(Method::kAttach, 1, Value::map({{"attach", Value::map({{"boot_id", c.boot_id()}, {"genvm_id", std::stoull(id)}})}}));
  Frame snap = c.reply(1);
  if (snap.payload.find("snapshot")->as_map().begin()->first != "finished") c.terminal(std::stoull(id));
  auto art = call(http::verb::get, "/genvm/" + id + "/artifact?field=stdout&offset=1&max_len=10");
  EXPECT_NE(art.body().find("\"total_len\":3,\"data_base64\":\"YmM=\""), std::string::npos) << art.body();
  auto metrics = call(http::verb::get, "/metrics");
  EXPECT_NE(metrics.body().find("genvm_manager_runs_total{outcome=\"exited\"} 1"), std::string::npos) << metrics.body();
  EXPECT_NE(metrics.body().find("genvm_manager_permits_total 12"), std::string::npos);
  EXPECT_EQ(call(http::verb::get, "/ws").result(), http::status::upgrade_required);
  EXPECT_EQ(call(http::verb::get, "/nope").result(), http::status::not_found);
  EXPECT_EQ(call(http::verb::get, "/genvm/abc").result(), http::status::not_found);
  EXPECT_EQ(call(http::verb::get, "/genvm/abc").body(), "{\"error\":\"Not Found\"}");
  EXPECT_EQ(call(http::verb::put, "/status").result(), http::status::not_found) << "mod.rs: 404";
  auto missing = call(http::verb::get, "/genvm/999/artifact?field=stdout&max_len=1");
  EXPECT_EQ(missing.result(), http::status::internal_server_error);
  EXPECT_EQ(missing.body(), "{\"error\":\"unknown_id\"}");
  EXPECT_EQ(call(http::verb::get, "/genvm/999/artifact?field=stdout").result(), http::status::bad_request);
  EXPECT_EQ(call(http::verb::get, "/genvm/1?wait=5").result(), http::status::bad_request);
  EXPECT_EQ(call(http::verb::post, "/genvm/run", std::string(5000, 'x')).result(),
            http::status::payload_too_large);
}

// socket.rs: a run request the decoder refuses, or one needing modules, is answered at once with
// an error echoing the request id; no run exists and no event follows.
TEST(ManagerServer, ABadRunIsAnErrorReplyNotARun) {
  Manager m("");
  asio::io_context io;
  TcpWs c(io, m.port());
  c.send(Method::kRun, 21, Value::map({{"run", run_body(true, {{"deadline", "30"}})}}));
  Frame bad = c.read();
  EXPECT_EQ(error_code_of(bad), static_cast<int>(ErrorCode::kMalformedFrame));
  EXPECT_EQ(bad.request_id, 21u);
  c.send(Method::kRun, 22, Value::map({{"run", run_body(false)}}));
  Frame modules = c.read();
  EXPECT_EQ(error_code_of(modules), static_cast<int>(ErrorCode::kInternal));
  EXPECT_EQ(*modules.payload.find("message"), Value("modules are required but not running"));
  c.send(Method::kAttach, 23, Value::map({{"attach", Value::map({{"boot_id", c.boot_id()}, {"genvm_id", 1}})}}));
  EXPECT_EQ(error_code_of(c.reply(23)), static_cast<int>(ErrorCode::kUnknownId)) << "no run was created";
  // A repeated host_genvm_id gets the run's current event right after the reply.
  c.send(Method::kRun, 24, run_payload("exit 3", {{"host_genvm_id", "tx"}}));
  std::uint64_t id = genvm_id_of(c.reply(24));
  c.terminal(id);
  c.send(Method::kRun, 25, run_payload("exit 3", {{"host_genvm_id", "tx"}}));
  EXPECT_EQ(genvm_id_of(c.reply(25)), id);
  Frame again = c.read();
  EXPECT_EQ(again.method, static_cast<std::uint16_t>(Method::kEvent));
  EXPECT_EQ(again.payload.as_map().begin()->first, "finished");
}

// The admin routes of manager-api.yaml, with handlers.rs's bodies and codes.
TEST(ManagerServer, AdminRoutes) {
  std::string root = ::testing::TempDir() + "mgr_admin_" + std::to_string(::getpid());
  std::filesystem::create_directories(root + "/executor/v3.0.0/bin");
  // Stands in for `genvm parse-version-pattern`: prints the first line of the contract.
  std::ofstream(root + "/executor/v3.0.0/bin/genvm") << "#!/bin/sh\n[ \"$1\" = parse-version-pattern ] || exit 2\nhead -n 1\n";
  std::filesystem::permissions(root + "/executor/v3.0.0/bin/genvm", std::filesystem::perms::owner_all);
  std::ofstream(root + "/manifest.yaml") << "executor_versions:\n  v3.0.0: {available_after: 2024-01-01T00:00:00Z}\n";
  Manager m("permits: {total: 12}\nexecutors_dir: " + root + "/executor\nmanifest_path: " + root + "/manifest.yaml\n");
  ASSERT_TRUE(m.on_thread([&] { return m.registry().load_manifest().ok(); }));
  auto call = [&](http::verb v, const std::string& target, std::string body = "") {
    auto r = http_call(m.port(), v, target, std::move(body));
    return std::to_string(r.result_int()) + " " + r.body();
  };
  EXPECT_EQ(call(http::verb::get, "/permits"), "200 {\"permits\":12}");
  EXPECT_EQ(call(http::verb::post, "/permits", "{\"permits\": 20}"), "200 {\"result\":\"permits_set\",\"permits\":20}");
  EXPECT_EQ(call(http::verb::post, "/permits", "{\"permits\": 3}"), "200 {\"result\":\"permits_set\",\"permits\":20}")
      << "below the dearest run: refused, the maximum unchanged";
  EXPECT_EQ(call(http::verb::post, "/permits", "{\"permits\": -1}"), "500 {\"error\":\"invalid permits\"}");
  EXPECT_EQ(call(http::verb::post, "/permits", "{bad").substr(0, 4), "400 ");
  EXPECT_EQ(call(http::verb::get, "/permits"), "200 {\"permits\":20}");
  EXPECT_EQ(call(http::verb::post, "/log/level", "{\"level\": \"debug\"}"),
            "200 {\"result\":\"log_level_set\",\"level\":\"Debug\"}");
  EXPECT_EQ(call(http::verb::post, "/log/level", "{\"level\": \"loud\"}"), "500 {\"error\":\"invalid log level\"}");
  EXPECT_EQ(call(http::verb::post, "/log/level", "[").substr(0, 4), "400 ");
  EXPECT_EQ(call(http::verb::get, "/vm-error/describe?error=wasm_trap%20unreachable"),
            "200 {\"description\":\"Web Assembly trap reached\"}");
  EXPECT_EQ(call(http::verb::get, "/vm-error/describe?error=wasm_trapped"), "200 {\"description\":null}");
  EXPECT_EQ(call(http::verb::get, "/vm-error/describe").substr(0, 4), "400 ");
  EXPECT_EQ(call(http::verb::post, "/manifest/reload"), "200 {\"result\":\"manifest_reloaded\"}");

  auto detect = [&](const char* code, const char* ts) {
    http::request<http::string_body> req(http::verb::post, "/contract/detect-version", 11);
    asio::io_context io;
    tcp::socket s = TcpWs::connect(io, m.port());
    req.set(http::field::host, "127.0.0.1");
    if (ts) req.set("Deployment-Timestamp", ts);
    req.body() = code;
    req.prepare_payload();
    http::write(s, req);
    beast::flat_buffer buf;
    http::response<http::string_body> res;
    http::read(s, buf, res);
    return std::to_string(res.result_int()) + " " + res.body();
  };
  EXPECT_EQ(detect("v2.1.0\nrest", "2025-01-01T00:00:00Z"), "200 {\"specified_major\":2}") << "the line read the code";
  EXPECT_EQ(detect("v7.0.0\n", "2025-01-01T00:00:00Z"), "200 {\"specified_major\":3}") << "never above the line";
  EXPECT_EQ(detect("no version\n", "2025-01-01T00:00:00Z"), "200 {\"specified_major\":3}");
  EXPECT_EQ(detect("v1.0.0\n", "2020-01-01T00:00:00Z"), "500 {\"error\":\"no_executor_version_available\"}");
  EXPECT_EQ(detect("v1.0.0\n", nullptr), "400 {\"error\":\"missing Deployment-Timestamp header\"}");
  EXPECT_EQ(detect("v1.0.0\n", "yesterday").substr(0, 4), "500 ");

  std::ofstream(root + "/manifest.yaml") << "executor_versions: [broken\n";
  EXPECT_EQ(call(http::verb::post, "/manifest/reload").substr(0, 4), "500 ");
  EXPECT_EQ(detect("v2.0.0\n", "2025-01-01T00:00:00Z"), "200 {\"specified_major\":2}") << "the old manifest stays";
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace genvm::manager
#endif  // GENVM_MANAGER_HAS_SUPERVISOR
