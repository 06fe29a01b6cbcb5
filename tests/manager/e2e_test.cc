// End to end through the manager's run registry: the real `genvm run` executes the example
// counter contract, host 0 is the in-memory test host (tests/test_host) on a unix socket, host 1
// is the manager's own socketpair, and the finished event carries the checked consume_result.
// Skips (naming what is missing) when the genvm binary or the example contracts are not built.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "manager/registry.h"
#include "manager/test_util.h"
#include "test_host.h"

namespace genvm::manager {
namespace {

using calldata::Value;

std::string binary_dir() {
  const char* env = std::getenv("GENVM_BINARY_DIR");
  return env ? env : GENVM_BINARY_DIR;
}

calldata::Address addr(std::uint8_t fill) {
  calldata::Address a;
  a.bytes.fill(fill);
  return a;
}

struct Sink : EventSink {
  std::vector<Value> events;
  void on_event(std::uint64_t, const Value& e) override { events.push_back(e); }
  const Value* terminal() const {
    for (const auto& e : events) {
      auto k = e.as_map().begin()->first;
      if (k == "finished" || k == "failed_to_start") return &e;
    }
    return nullptr;
  }
};

TEST(ManagerEndToEnd, RealGenvmRunsACounterAndTheManagerRetainsItsResult) {
  std::string genvm = binary_dir() + "/tools/genvm/genvm";
  std::string wasm = binary_dir() + "/examples/counter.wasm";
  if (::access(genvm.c_str(), X_OK) != 0 || ::access(wasm.c_str(), R_OK) != 0) {
    GTEST_SKIP() << "needs " << genvm << " and " << wasm << " (set GENVM_BINARY_DIR)";
  }
  char tmpl[] = "/tmp/genvm-mgr-e2e-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  test_host::TestHost host;
  auto uri = host.listen_unix(dir + "/host.sock");
  ASSERT_TRUE(uri.ok());

  auto config = parse_config("executor: [" + genvm + ", run]\nexecutor_protocol: genvm\n");
  ASSERT_TRUE(config.ok());
  boost::asio::io_context io;
  Log log(-1);
  Registry reg(io, *config, log, 64ull << 30);

  std::ifstream f(wasm, std::ios::binary);
  calldata::Bytes code((std::istreambuf_iterator<char>(f)), {});
  Value message = Value::map({{"contract_address", addr(1)}, {"sender_address", addr(0xaa)},
                              {"origin_address", addr(0xaa)}, {"signer_address", addr(0xaa)},
                              {"chain_id", "61999"}, {"value", "0"}, {"is_init", true}});
  Value body = testing::run_body(false, {{"message", message}, {"code", code}, {"host", *uri},
                                         {"calldata", calldata::encode(Value::map({}))},
                                         {"debug_mode", "safe"}});
  auto sink = std::make_shared<Sink>();
  reg.submit(body, {false, "test"}, sink);
  ASSERT_TRUE(testing::run_until(io, [&] { return sink->terminal() != nullptr; }));
  host.stop();
  const Value& fin = *sink->terminal();
  ASSERT_EQ(fin.as_map().begin()->first, "finished") << calldata::to_text(fin);
  const Value& b = fin.as_map().begin()->second;
  EXPECT_EQ(*b.find("exit_code"), Value(0)) << calldata::to_text(b);
  const Value* consumed = b.find("consumed_result");
  ASSERT_TRUE(consumed && consumed->is_bytes()) << calldata::to_text(b);
  const auto& bytes = consumed->as_bytes();
  ASSERT_GT(bytes.size(), 1u);
  EXPECT_EQ(bytes[0], 0) << "Return";
  auto report = calldata::decode(std::span<const std::uint8_t>(bytes.data() + 1, bytes.size() - 1));
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(*report->find("kind"), Value(0));
  EXPECT_EQ(report->find("execution_hash")->as_bytes().size(), 32u);
  // Host 0 never saw the result: in the manager deployment it goes to host 1.
  EXPECT_TRUE(host.with_state([](test_host::State& s) { return s.results.empty(); }));
  ::unlink((dir + "/host.sock").c_str());
  ::rmdir(dir.c_str());
}

}  // namespace
}  // namespace genvm::manager
