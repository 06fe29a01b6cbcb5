// genvm-node serve's server against bad input, over real HTTP on 127.0.0.1: each class of
// error answers its JSON-RPC code, stores nothing, and the server keeps serving. Signed
// transactions are made here with libsecp256k1 as viem makes them (legacy EIP-155).
#include <secp256k1.h>
#include <secp256k1_recovery.h>

#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "common/sha3.h"
#include "eth/eth.h"
#include "node/serve/http.h"
#include "node/serve/service.h"
#include "node/test_state_dir.h"

namespace genvm::node::serve {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

using Key = std::array<std::uint8_t, 32>;

Key key_of(std::uint8_t b) {
  Key k{};
  k[31] = b;
  k[0] = 0x11;
  return k;
}

eth::Address address_of(const Key& k) {
  secp256k1_context* ctx = secp256k1_context_create(SECP256K1_CONTEXT_SIGN);
  secp256k1_pubkey pub;
  EXPECT_TRUE(secp256k1_ec_pubkey_create(ctx, &pub, k.data()));
  std::uint8_t out[65];
  std::size_t n = sizeof out;
  secp256k1_ec_pubkey_serialize(ctx, out, &n, &pub, SECP256K1_EC_UNCOMPRESSED);
  secp256k1_context_destroy(ctx);
  return eth::address_of_public_key(std::span<const std::uint8_t, 64>(out + 1, 64));
}

// A legacy EIP-155 transaction to `to` with `data`, signed by `k`.
eth::Bytes sign_legacy(const Key& k, std::uint64_t nonce, const eth::Address& to, const eth::Bytes& data,
                       std::uint64_t chain_id = kChainId) {
  auto fields = [&](eth::Bytes& items) {
    eth::rlp_append_uint(items, nonce);
    eth::rlp_append_uint(items, 0);        // gas price
    eth::rlp_append_uint(items, 500000);   // gas
    eth::rlp_append_string(items, to);
    eth::rlp_append_uint(items, 0);        // value
    eth::rlp_append_string(items, data);
  };
  eth::Bytes unsigned_items;
  fields(unsigned_items);
  eth::rlp_append_uint(unsigned_items, chain_id);
  eth::rlp_append_uint(unsigned_items, 0);
  eth::rlp_append_uint(unsigned_items, 0);
  auto digest = keccak256(eth::rlp_list(unsigned_items));
  secp256k1_context* ctx = secp256k1_context_create(SECP256K1_CONTEXT_SIGN);
  secp256k1_ecdsa_recoverable_signature sig;
  EXPECT_TRUE(secp256k1_ecdsa_sign_recoverable(ctx, &sig, digest.data(), k.data(), nullptr, nullptr));
  std::uint8_t rs[64];
  int recid = 0;
  secp256k1_ecdsa_recoverable_signature_serialize_compact(ctx, rs, &recid, &sig);
  secp256k1_context_destroy(ctx);
  auto trim = [](const std::uint8_t* p) {
    std::size_t i = 0;
    while (i < 32 && p[i] == 0) ++i;
    return eth::Bytes(p + i, p + 32);
  };
  eth::Bytes items;
  fields(items);
  eth::rlp_append_uint(items, chain_id * 2 + 35 + static_cast<std::uint64_t>(recid));
  eth::rlp_append_string(items, trim(rs));
  eth::rlp_append_string(items, trim(rs + 32));
  return eth::rlp_list(items);
}

// addTransaction(sender, recipient, 5, 3, txData) for a deploy (recipient zero) or a call.
eth::Bytes add_transaction(const eth::Address& sender, const eth::Address& recipient, const eth::Bytes& code) {
  eth::AddTransactionCall c;
  c.sender = sender;
  c.recipient = recipient;
  c.num_of_initial_validators = 5;
  c.max_rotations = 3;
  eth::GenTxData d;
  d.deploy = recipient == eth::Address{};
  d.code = code;
  d.calldata = calldata::encode(calldata::Value(calldata::Value::Map{}));
  c.tx_data = eth::encode_gen_tx_data(d);
  return eth::encode_add_transaction(c);
}

class ServeServer : public node::testing::StateDir {
 protected:
  void SetUp() override {
    StateDir::SetUp();
    ASSERT_TRUE(open_state());
    state_.reset();
    auto store = open_sqlite_store(path_, 5000);
    ASSERT_TRUE(store.ok()) << store.error().to_string();
    store_ = std::move(*store);
    ServeOptions o;
    o.state_path = path_;
    o.genvm = std::string(GENVM_BINARY_DIR) + "/tools/genvm/genvm";
    svc_ = std::make_unique<Service>(o, *store_);  // no worker: transactions stay queued
    svc_->register_methods(rpc_);
    auto server = HttpServer::listen("127.0.0.1", 0, rpc_);
    ASSERT_TRUE(server.ok()) << server.error().to_string();
    server_ = std::move(*server);
    thread_ = std::thread([this] { server_->run(); });
  }
  void TearDown() override {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
    server_.reset();
    svc_.reset();
    store_.reset();
    StateDir::TearDown();
  }

  // One POST on a fresh connection: the status and the body.
  std::pair<int, std::string> post(const std::string& body) {
    asio::io_context io;
    asio::ip::tcp::socket sock(io);
    sock.connect({asio::ip::make_address("127.0.0.1"), server_->port()});
    http::request<http::string_body> req{http::verb::post, "/api", 11};
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::content_type, "application/json");
    req.body() = body;
    req.prepare_payload();
    beast::error_code ec;
    http::write(sock, req, ec);
    beast::flat_buffer buf;
    http::response<http::string_body> res;
    http::read(sock, buf, res, ec);
    if (ec) return {0, ec.message()};
    return {static_cast<int>(res.result_int()), res.body()};
  }
  std::string call(const std::string& method, const std::string& params_json) {
    return post(R"({"jsonrpc":"2.0","id":1,"method":")" + method + R"(","params":)" + params_json + "}").second;
  }
  void expect_alive() { EXPECT_EQ(call("ping", "[]"), R"({"jsonrpc":"2.0","result":"OK","id":1})"); }
  std::string send_raw(const eth::Bytes& raw) { return call("eth_sendRawTransaction", "[\"" + eth::to_hex(raw) + "\"]"); }

  Rpc rpc_;
  std::unique_ptr<TxStore> store_;
  std::unique_ptr<Service> svc_;
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

bool has_code(const std::string& reply, int code) {
  return reply.find("\"code\":" + std::to_string(code) + ",") != std::string::npos;
}

TEST_F(ServeServer, EnvelopeErrorsAndTheServerKeepsServing) {
  EXPECT_TRUE(has_code(post("{\"jsonrpc\":\"2.0\",").second, -32700));
  expect_alive();
  EXPECT_TRUE(has_code(post(R"({"id":1,"method":"ping"})").second, -32600));
  EXPECT_TRUE(has_code(call("no_such_method", "[]"), -32601));
  EXPECT_TRUE(has_code(call("eth_getBalance", "[5]"), -32602));
  EXPECT_TRUE(has_code(call("eth_getTransactionByHash", R"(["0x12"])"), -32602));
  EXPECT_TRUE(has_code(call("gen_call", "[1]"), -32602));
  EXPECT_EQ(call("eth_chainId", "[]"), R"({"jsonrpc":"2.0","result":"0xeec7","id":1})");
  expect_alive();
}

TEST_F(ServeServer, OversizedBodyIsRefusedAndTheServerKeepsServing) {
  auto [status, body] = post(std::string(kMaxBody + 1024, ' '));
  EXPECT_EQ(status, 413);
  EXPECT_TRUE(has_code(body, -32600));
  expect_alive();
}

TEST_F(ServeServer, NonceReplayAndGapStoreNothing) {
  const Key k = key_of(1);
  const eth::Address me = address_of(k);
  auto deploy = [&](std::uint64_t nonce, std::uint8_t code_byte) {
    return sign_legacy(k, nonce, eth::kStudioConsensusMain, add_transaction(me, {}, eth::Bytes{code_byte}));
  };
  const eth::Bytes first = deploy(0, 1);
  std::string ok = send_raw(first);
  EXPECT_NE(ok.find("\"result\":\"" + eth::to_hex(keccak256(first)) + "\""), std::string::npos) << ok;
  EXPECT_TRUE(has_code(send_raw(first), kServerError));      // the same bytes again
  EXPECT_TRUE(has_code(send_raw(deploy(0, 2)), kServerError));  // another tx with a used nonce
  EXPECT_TRUE(has_code(send_raw(deploy(5, 3)), kServerError));  // a gap
  EXPECT_NE(call("eth_getTransactionCount", "[\"" + eth::to_hex(me) + "\",\"latest\"]").find("\"result\":\"0x1\""),
            std::string::npos);
  // The receipt genlayer-js reads the transaction id from: NewTransaction with the hash.
  std::string receipt = call("eth_getTransactionReceipt", "[\"" + eth::to_hex(keccak256(first)) + "\"]");
  EXPECT_NE(receipt.find(eth::to_hex(eth::new_transaction_topic())), std::string::npos) << receipt;
  EXPECT_NE(call("gen_getTransactionStatus", "[\"" + eth::to_hex(keccak256(first)) + "\"]").find("PENDING"),
            std::string::npos);
  expect_alive();
}

TEST_F(ServeServer, ForgedSignaturesAreRefused) {
  const Key k = key_of(2);
  const eth::Address me = address_of(k), other = address_of(key_of(3));
  // Signed by k but submitted in another's name.
  EXPECT_TRUE(has_code(send_raw(sign_legacy(k, 0, eth::kStudioConsensusMain, add_transaction(other, {}, {1}))),
                       kServerError));
  // A signature whose bytes were changed: it recovers no one, or someone else.
  eth::Bytes raw = sign_legacy(k, 0, eth::kStudioConsensusMain, add_transaction(me, {}, {1}));
  raw[raw.size() - 5] ^= 0x01;
  EXPECT_TRUE(has_code(send_raw(raw), kServerError));
  // Another chain.
  EXPECT_TRUE(has_code(send_raw(sign_legacy(k, 0, eth::kStudioConsensusMain, add_transaction(me, {}, {1}), 1)),
                       kServerError));
  EXPECT_TRUE(has_code(call("eth_sendRawTransaction", R"(["0xzz"])"), -32602));
  EXPECT_NE(call("eth_getTransactionCount", "[\"" + eth::to_hex(me) + "\"]").find("\"result\":\"0x0\""),
            std::string::npos);
  expect_alive();
}

TEST_F(ServeServer, UnknownContract) {
  const Key k = key_of(4);
  const eth::Address me = address_of(k);
  eth::Address nowhere{};
  nowhere[19] = 0x77;
  EXPECT_TRUE(has_code(send_raw(sign_legacy(k, 0, eth::kStudioConsensusMain, add_transaction(me, nowhere, {}))),
                       -32001));
  EXPECT_TRUE(has_code(call("gen_call", R"([{"type":"read","to":"0x0000000000000000000000000000000000000077",)"
                                        R"("from":"0x0000000000000000000000000000000000000001","data":"c20000"}])"),
                       -32001));
  EXPECT_TRUE(has_code(call("gen_getContractSchema", R"(["0x0000000000000000000000000000000000000077"])"), -32001));
  EXPECT_TRUE(has_code(call("eth_getTransactionByHash", "[\"0x" + std::string(64, '1') + "\"]"), -32001));
  EXPECT_EQ(call("eth_getTransactionReceipt", "[\"0x" + std::string(64, '1') + "\"]"),
            R"({"jsonrpc":"2.0","result":null,"id":1})");
  expect_alive();
}

}  // namespace
}  // namespace genvm::node::serve
