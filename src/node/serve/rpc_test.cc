// The JSON-RPC envelope: each error class and the batch rules, with no server or state.
#include "node/serve/rpc.h"

#include <gtest/gtest.h>

namespace genvm::node::serve {
namespace {

Rpc make_rpc() {
  Rpc rpc;
  rpc.add("ping", [](const Params&) -> RpcResult { return json_string("OK"); });
  rpc.add("echo", [](const Params& p) -> RpcResult {
    if (p.size() != 1 || !p[0].is_string()) return rpc_error(kInvalidParams, "one string");
    return json_string(p[0].text());
  });
  return rpc;
}

TEST(ServeRpc, Single) {
  auto r = make_rpc().handle(R"({"jsonrpc":"2.0","id":7,"method":"ping","params":[]})");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, R"({"jsonrpc":"2.0","result":"OK","id":7})");
}

TEST(ServeRpc, Errors) {
  Rpc rpc = make_rpc();
  EXPECT_NE(rpc.handle("{not json")->find("-32700"), std::string::npos);
  EXPECT_NE(rpc.handle(R"({"id":1,"method":"ping"})")->find("-32600"), std::string::npos);  // no jsonrpc
  EXPECT_NE(rpc.handle(R"({"jsonrpc":"2.0","id":1,"method":5})")->find("-32600"), std::string::npos);
  EXPECT_NE(rpc.handle(R"({"jsonrpc":"2.0","id":{},"method":"ping"})")->find("-32600"), std::string::npos);
  EXPECT_NE(rpc.handle("42")->find("-32600"), std::string::npos);
  EXPECT_NE(rpc.handle(R"({"jsonrpc":"2.0","id":1,"method":"nope"})")->find("-32601"), std::string::npos);
  EXPECT_NE(rpc.handle(R"({"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1}})")->find("-32602"), std::string::npos);
  EXPECT_NE(rpc.handle(R"({"jsonrpc":"2.0","id":1,"method":"echo","params":[1]})")->find("-32602"), std::string::npos);
  EXPECT_NE(rpc.handle("[]")->find("-32600"), std::string::npos);
}

TEST(ServeRpc, Batch) {
  Rpc rpc = make_rpc();
  auto r = rpc.handle(R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"ping"},)"
                      R"({"jsonrpc":"2.0","id":"b","method":"echo","params":["x"]},5])");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, R"([{"jsonrpc":"2.0","result":"OK","id":1},{"jsonrpc":"2.0","result":"x","id":"b"},)"
                R"({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":null}])");
  // Only notifications: nothing to send.
  EXPECT_FALSE(rpc.handle(R"([{"jsonrpc":"2.0","method":"ping"}])"));
  std::string big = "[";
  for (std::size_t i = 0; i <= kMaxBatch; ++i) big += std::string(i ? "," : "") + R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
  EXPECT_NE(rpc.handle(big + "]")->find("-32600"), std::string::npos);
}

}  // namespace
}  // namespace genvm::node::serve
