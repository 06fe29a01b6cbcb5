// genvm-node serve's server against bad input, over real HTTP on 127.0.0.1: each class of
// error answers its JSON-RPC code, stores nothing, and the server keeps serving. Signed
// transactions are made here with libsecp256k1 as viem makes them (legacy EIP-155).
#include <secp256k1.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <secp256k1_recovery.h>
#include <stdlib.h>
#include <sqlite3.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <unistd.h>
#include <sys/wait.h>
#include <csignal>
#include <fstream>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "common/json.h"
#include "common/sha3.h"
#include "eth/eth.h"
#include "node/readable_error.h"
#include "node/serve/dashboard.h"
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

// addTransaction(sender, recipient, 5, 3, txData) for a deploy (recipient zero) or a call, with
// `entry` as the calldata (default: the empty map).
eth::Bytes add_transaction(const eth::Address& sender, const eth::Address& recipient, const eth::Bytes& code,
                           const calldata::Value& entry = calldata::Value(calldata::Value::Map{})) {
  eth::AddTransactionCall c;
  c.sender = sender;
  c.recipient = recipient;
  c.num_of_initial_validators = 5;
  c.max_rotations = 3;
  eth::GenTxData d;
  d.deploy = recipient == eth::Address{};
  d.code = code;
  d.calldata = calldata::encode(entry);
  c.tx_data = eth::encode_gen_tx_data(d);
  return eth::encode_add_transaction(c);
}

// genlayer-js's cancelTransaction signature: personal_sign (EIP-191) of
// keccak256("cancel_transaction" ‖ hash), as r ‖ s ‖ v (27/28), hex.
std::string cancel_signature(const Key& k, const eth::Hash32& hash) {
  eth::Bytes m{'c', 'a', 'n', 'c', 'e', 'l', '_', 't', 'r', 'a', 'n', 's', 'a', 'c', 't', 'i', 'o', 'n'};
  m.insert(m.end(), hash.begin(), hash.end());
  auto message = keccak256(m);
  std::string prefix = "\x19" "Ethereum Signed Message:\n32";
  eth::Bytes signed_bytes(prefix.begin(), prefix.end());
  signed_bytes.insert(signed_bytes.end(), message.begin(), message.end());
  auto digest = keccak256(signed_bytes);
  secp256k1_context* ctx = secp256k1_context_create(SECP256K1_CONTEXT_SIGN);
  secp256k1_ecdsa_recoverable_signature sig;
  EXPECT_TRUE(secp256k1_ecdsa_sign_recoverable(ctx, &sig, digest.data(), k.data(), nullptr, nullptr));
  std::uint8_t rs[65];
  int recid = 0;
  secp256k1_ecdsa_recoverable_signature_serialize_compact(ctx, rs, &recid, &sig);
  secp256k1_context_destroy(ctx);
  rs[64] = static_cast<std::uint8_t>(27 + recid);
  return eth::to_hex(eth::ByteView(rs, 65));
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// How many times `needle` occurs in `hay`.
int count_of(const std::string& hay, const std::string& needle) {
  int n = 0;
  for (auto i = hay.find(needle); i != std::string::npos; i = hay.find(needle, i + 1)) ++n;
  return n;
}

class ServeServer : public node::testing::StateDir {
 protected:
  void SetUp() override {
    StateDir::SetUp();
    ASSERT_TRUE(open_state());
    state_.reset();
    start_server(true);
  }
  void TearDown() override {
    stop_server();
    StateDir::TearDown();
  }
  // A server over path_ with a fresh store and service (no worker: transactions stay queued).
  void start_server(bool local, int max_snapshots = 16) {
    auto store = open_sqlite_store(path_, 5000);
    ASSERT_TRUE(store.ok()) << store.error().to_string();
    store_ = std::move(*store);
    ServeOptions o;
    o.state_path = path_;
    o.genvm = std::string(GENVM_BINARY_DIR) + "/tools/genvm/genvm";
    o.local = local;
    o.max_snapshots = max_snapshots;
    o.validators = validators_;
    o.timeout_s = timeout_s_;
    o.debug_mode = debug_mode_;
    rpc_ = std::make_unique<Rpc>();
    svc_ = std::make_unique<Service>(o, *store_);
    svc_->register_methods(*rpc_);
    auto server = HttpServer::listen("127.0.0.1", 0, *rpc_, &svc_->events());
    ASSERT_TRUE(server.ok()) << server.error().to_string();
    server_ = std::move(*server);
    thread_ = std::thread([this] { server_->run(); });
  }
  void stop_server() {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
    server_.reset();
    svc_.reset();
    rpc_.reset();
    store_.reset();
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
  struct Reply {
    int status = 0;
    std::string content_type, length, body;
  };
  // One request without a body on a fresh connection.
  Reply request(http::verb verb, const std::string& target) {
    asio::io_context io;
    asio::ip::tcp::socket sock(io);
    sock.connect({asio::ip::make_address("127.0.0.1"), server_->port()});
    timeval tv{120, 0};  // a bound against a hang (a stream answered where none was expected)
    ::setsockopt(sock.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    http::request<http::empty_body> req{verb, target, 11};
    req.set(http::field::host, "127.0.0.1");
    beast::error_code ec;
    http::write(sock, req, ec);
    beast::flat_buffer buf;
    http::response_parser<http::string_body> parser;
    parser.skip(verb == http::verb::head);
    http::read(sock, buf, parser, ec);
    if (ec) return {0, "", "", ec.message()};
    auto& res = parser.get();
    return {static_cast<int>(res.result_int()), std::string(res[http::field::content_type]),
            std::string(res[http::field::content_length]), res.body()};
  }
  std::string call(const std::string& method, const std::string& params_json) {
    return post(R"({"jsonrpc":"2.0","id":1,"method":")" + method + R"(","params":)" + params_json + "}").second;
  }
  void expect_alive() { EXPECT_EQ(call("ping", "[]"), R"({"jsonrpc":"2.0","result":"OK","id":1})"); }
  std::string send_raw(const eth::Bytes& raw) { return call("eth_sendRawTransaction", "[\"" + eth::to_hex(raw) + "\"]"); }
  // A deploy signed by `k` with `nonce`, queued; its hash.
  eth::Hash32 queue_deploy(const Key& k, std::uint64_t nonce, std::uint8_t code_byte) {
    eth::Bytes raw = sign_legacy(k, nonce, eth::kStudioConsensusMain, add_transaction(address_of(k), {}, eth::Bytes{code_byte}));
    std::string r = send_raw(raw);
    EXPECT_NE(r.find("\"result\":\"0x"), std::string::npos) << r;
    return keccak256(raw);
  }

  // Polls until the transaction is decided (or a generous bound passes); its last status reply.
  std::string wait_decided(const eth::Hash32& h) {
    std::string status;
    for (int i = 0; i < 1200; ++i) {
      status = call("gen_getTransactionStatus", "[" + quoted(eth::to_hex(h)) + "]");
      if (status.find("ACCEPTED") != std::string::npos || status.find("UNDETERMINED") != std::string::npos ||
          status.find("FINALIZED") != std::string::npos) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return status;
  }

  int validators_ = 5;
  int timeout_s_ = 5;
  DebugMode debug_mode_ = DebugMode::kSafe;
  std::unique_ptr<Rpc> rpc_;
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

TEST_F(ServeServer, CancelTurnsAPendingTransactionCanceledAndNothingElse) {
  const Key k = key_of(5);
  const eth::Hash32 first = queue_deploy(k, 0, 1), second = queue_deploy(k, 1, 2);
  const std::string h1 = eth::to_hex(first), h2 = eth::to_hex(second);
  // Someone else's signature, and one that is not a signature.
  std::string r = call("sim_cancelTransaction", "[" + quoted(h1) + "," + quoted(cancel_signature(key_of(6), first)) + "]");
  EXPECT_TRUE(has_code(r, kServerError)) << r;
  EXPECT_NE(r.find("Only transaction sender can cancel"), std::string::npos) << r;
  EXPECT_TRUE(has_code(call("sim_cancelTransaction", "[" + quoted(h1) + ",\"0x1234\"]"), kServerError));
  EXPECT_NE(call("gen_getTransactionStatus", "[" + quoted(h1) + "]").find("\"PENDING\""), std::string::npos);
  // The sender's signature, as genlayer-js makes it.
  r = call("sim_cancelTransaction", "[" + quoted(h1) + "," + quoted(cancel_signature(k, first)) + "]");
  EXPECT_EQ(r, R"({"jsonrpc":"2.0","result":{"transaction_hash":")" + h1 + R"(","status":"CANCELED"},"id":1})");
  EXPECT_EQ(call("gen_getTransactionStatus", "[" + quoted(h1) + "]"),
            R"({"jsonrpc":"2.0","result":{"status":"CANCELED","statusCode":8},"id":1})");
  EXPECT_NE(call("eth_getTransactionByHash", "[" + quoted(h1) + "]").find("\"status\":\"CANCELED\""), std::string::npos);
  // Never run: the worker's next transaction is the second, and the first cannot be claimed.
  auto next = store_->next_undecided();
  ASSERT_TRUE(next.ok() && next->has_value());
  EXPECT_EQ(eth::to_hex((*next)->hash), h2);
  Hash fh;
  std::copy(first.begin(), first.end(), fh.begin());
  auto claimed = store_->claim(fh);
  ASSERT_TRUE(claimed.ok());
  EXPECT_FALSE(*claimed);
  // Past PENDING: canceled already, or claimed by the worker.
  r = call("sim_cancelTransaction", "[" + quoted(h1) + "," + quoted(cancel_signature(k, first)) + "]");
  EXPECT_NE(r.find("cannot be cancelled: it is CANCELED"), std::string::npos) << r;
  auto claimed2 = store_->claim((*next)->hash);
  ASSERT_TRUE(claimed2.ok() && *claimed2);
  r = call("sim_cancelTransaction", "[" + quoted(h2) + "," + quoted(cancel_signature(k, second)) + "]");
  EXPECT_TRUE(has_code(r, kServerError)) << r;
  EXPECT_NE(r.find("cannot be cancelled: it is PROPOSING"), std::string::npos) << r;
  EXPECT_NE(call("gen_getTransactionStatus", "[" + quoted(h2) + "]").find("\"PROPOSING\""), std::string::npos);
  // Unknown and malformed hashes.
  EXPECT_TRUE(has_code(call("sim_cancelTransaction", "[\"0x" + std::string(64, '2') + "\"]"), -32001));
  EXPECT_TRUE(has_code(call("sim_cancelTransaction", R"(["0x12"])"), -32602));
  // A local node (loopback) also takes an unsigned cancel, as Studio's local mode does.
  const eth::Hash32 third = queue_deploy(k, 2, 3);
  EXPECT_NE(call("sim_cancelTransaction", "[" + quoted(eth::to_hex(third)) + "]").find("\"CANCELED\""), std::string::npos);
  expect_alive();
}

TEST_F(ServeServer, TheWorkerNeverRunsACanceledTransaction) {
  const Key k = key_of(14);
  const eth::Hash32 canceled = queue_deploy(k, 0, 1);
  ASSERT_NE(call("sim_cancelTransaction", "[" + quoted(eth::to_hex(canceled)) + "]").find("\"CANCELED\""),
            std::string::npos);
  const eth::Hash32 next = queue_deploy(k, 1, 2);
  svc_->start();
  // The worker decides the transaction after the canceled one (its code is not wasm: it runs
  // and fails); the canceled one stays CANCELED without a receipt.
  std::string status;
  for (int i = 0; i < 600; ++i) {
    status = call("gen_getTransactionStatus", "[" + quoted(eth::to_hex(next)) + "]");
    if (status.find("PENDING") == std::string::npos && status.find("PROPOSING") == std::string::npos &&
        status.find("COMMITTING") == std::string::npos && status.find("REVEALING") == std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  svc_->stop();
  EXPECT_TRUE(status.find("ACCEPTED") != std::string::npos || status.find("UNDETERMINED") != std::string::npos ||
              status.find("FINALIZED") != std::string::npos)
      << status;
  EXPECT_NE(call("gen_getTransactionStatus", "[" + quoted(eth::to_hex(canceled)) + "]").find("\"CANCELED\""),
            std::string::npos);
  Hash ch;
  std::copy(canceled.begin(), canceled.end(), ch.begin());
  auto row = store_->get(ch);
  ASSERT_TRUE(row.ok() && row->has_value());
  EXPECT_EQ((*row)->state_tx, 0);
  auto st = State::open(path_, OpenMode::kExisting);
  ASSERT_TRUE(st.ok());
  auto receipts = (*st)->txs(10, 0, std::nullopt, nullptr);
  ASSERT_TRUE(receipts.ok());
  EXPECT_LE(receipts->size(), 1u);  // the second one's, if its run left a receipt
}

// A server killed after the node committed a transaction's receipt (which links it) and before
// the queue recorded the decision: the next worker decides it from the receipt, with the same
// result, and runs nothing again. The kill is stood in for by taking the decision back out of the
// queue's row, leaving exactly what such a kill leaves (PROPOSING, linked, no result).
TEST_F(ServeServer, ATransactionCommittedButNotDecidedIsDecidedFromItsReceiptNotRunAgain) {
  std::ifstream in(std::string(GENVM_BINARY_DIR) + "/examples/counter.wasm", std::ios::binary);
  const eth::Bytes code((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(code.empty()) << "build genvm_examples";
  const Key k = key_of(21);
  const eth::Bytes deploy = sign_legacy(k, 0, eth::kStudioConsensusMain, add_transaction(address_of(k), {}, code));
  ASSERT_NE(send_raw(deploy).find("\"result\":\"0x"), std::string::npos);
  svc_->start();
  ASSERT_NE(wait_decided(keccak256(deploy)).find("ACCEPTED"), std::string::npos);
  Hash dh;
  const auto deploy_hash = keccak256(deploy);
  std::copy(deploy_hash.begin(), deploy_hash.end(), dh.begin());
  auto deployed = store_->get(dh);
  ASSERT_TRUE(deployed.ok() && deployed->has_value());
  const Address counter = (*deployed)->to;
  const calldata::Value increment(calldata::Value::Map{{"", calldata::Value("increment")}});
  const eth::Bytes write =
      sign_legacy(k, 1, eth::kStudioConsensusMain, add_transaction(address_of(k), counter.bytes, {}, increment));
  ASSERT_NE(send_raw(write).find("\"result\":\"0x"), std::string::npos);
  const std::string first = wait_decided(keccak256(write));
  svc_->stop();
  ASSERT_NE(first.find("ACCEPTED"), std::string::npos) << first;
  Hash wh;
  const auto write_hash = keccak256(write);
  std::copy(write_hash.begin(), write_hash.end(), wh.begin());
  auto decided = store_->get(wh);
  ASSERT_TRUE(decided.ok() && decided->has_value());
  ASSERT_NE((*decided)->state_tx, 0);
  ASSERT_FALSE((*decided)->result.empty());
  const QueuedTx before = **decided;
  auto receipts = [&] {
    auto st = State::open(path_, OpenMode::kExisting);
    EXPECT_TRUE(st.ok());
    auto all = (*st)->txs(100, 0, std::nullopt, nullptr);
    EXPECT_TRUE(all.ok());
    return all->size();
  };
  const std::size_t receipts_before = receipts();

  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* q = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "UPDATE serve_txs SET status='PROPOSING', result=x'', decided_at=0 WHERE hash=?", -1,
                                 &q, nullptr),
              SQLITE_OK);
    sqlite3_bind_blob(q, 1, wh.data(), 32, SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(q), SQLITE_DONE);
    sqlite3_finalize(q);
    sqlite3_close(db);
  }
  EXPECT_NE(call("gen_getTransactionStatus", "[" + quoted(eth::to_hex(write_hash)) + "]").find("\"PROPOSING\""),
            std::string::npos);

  svc_->start();  // the restarted server's worker
  const std::string again = wait_decided(write_hash);
  EXPECT_NE(again.find("ACCEPTED"), std::string::npos) << again;
  // The restarted worker runs what comes next, on the counter the first increment left (1).
  const eth::Bytes next =
      sign_legacy(k, 2, eth::kStudioConsensusMain, add_transaction(address_of(k), counter.bytes, {}, increment));
  ASSERT_NE(send_raw(next).find("\"result\":\"0x"), std::string::npos);
  const std::string next_status = wait_decided(keccak256(next));
  svc_->stop();
  EXPECT_NE(next_status.find("ACCEPTED"), std::string::npos) << next_status;
  Hash nh;
  const auto next_hash = keccak256(next);
  std::copy(next_hash.begin(), next_hash.end(), nh.begin());
  auto next_row = store_->get(nh);
  ASSERT_TRUE(next_row.ok() && next_row->has_value());
  Bytes two{0};
  for (std::uint8_t b : calldata::encode(calldata::Value(2))) two.push_back(b);
  EXPECT_EQ((*next_row)->result, two);
  Bytes one{0};
  for (std::uint8_t b : calldata::encode(calldata::Value(1))) one.push_back(b);
  auto after = store_->get(wh);
  ASSERT_TRUE(after.ok() && after->has_value());
  EXPECT_EQ((*after)->state_tx, before.state_tx);
  EXPECT_EQ(before.result, one);
  EXPECT_EQ((*after)->result, one);  // increment's answer, as the first time
  EXPECT_EQ((*after)->to, before.to);
  EXPECT_EQ(receipts(), receipts_before + 1);  // the next one's only: the resumed one ran once
  auto st = State::open(path_, OpenMode::kExisting);
  ASSERT_TRUE(st.ok());
  auto problems = (*st)->inconsistencies();
  ASSERT_TRUE(problems.ok());
  EXPECT_TRUE(problems->empty());
}

TEST_F(ServeServer, ANodeNotOnLoopbackNeedsTheSendersSignatureAndServesNoAdministration) {
  stop_server();
  start_server(false);
  const Key k = key_of(7);
  const eth::Hash32 h = queue_deploy(k, 0, 1);
  std::string r = call("sim_cancelTransaction", "[" + quoted(eth::to_hex(h)) + "]");
  EXPECT_NE(r.find("requires the sender's signature"), std::string::npos) << r;
  EXPECT_TRUE(has_code(call("sim_createSnapshot", "[]"), kServerError));
  EXPECT_TRUE(has_code(call("sim_restoreSnapshot", "[1]"), kServerError));
  EXPECT_TRUE(has_code(call("sim_deleteAllSnapshots", "[]"), kServerError));
  EXPECT_TRUE(has_code(call("sim_clearDbTables", R"([["transactions"]])"), kServerError));
  r = call("sim_cancelTransaction", "[" + quoted(eth::to_hex(h)) + "," + quoted(cancel_signature(k, h)) + "]");
  EXPECT_NE(r.find("\"CANCELED\""), std::string::npos) << r;
}

TEST_F(ServeServer, BlocksAreTheQueuedTransactions) {
  auto genesis = call("eth_getBlockByNumber", R"(["latest",false])");
  EXPECT_NE(genesis.find("\"number\":\"0x0\""), std::string::npos) << genesis;
  EXPECT_NE(genesis.find("\"hash\":\"0x" + std::string(64, '0') + "\""), std::string::npos) << genesis;
  EXPECT_NE(genesis.find("\"transactions\":[]"), std::string::npos) << genesis;
  const Key k = key_of(8), k2 = key_of(9);
  const eth::Hash32 b1 = queue_deploy(k, 0, 1), b2 = queue_deploy(k, 1, 2), b3 = queue_deploy(k2, 0, 3);
  std::string block = call("eth_getBlockByNumber", R"(["0x2",false])");
  EXPECT_NE(block.find("\"number\":\"0x2\""), std::string::npos) << block;
  EXPECT_NE(block.find("\"hash\":\"" + eth::to_hex(b2) + "\""), std::string::npos) << block;
  EXPECT_NE(block.find("\"parentHash\":\"" + eth::to_hex(b1) + "\""), std::string::npos) << block;
  EXPECT_NE(block.find("\"transactions\":[\"" + eth::to_hex(b2) + "\"]"), std::string::npos) << block;
  // The receipt names the same block.
  std::string receipt = call("eth_getTransactionReceipt", "[" + quoted(eth::to_hex(b2)) + "]");
  EXPECT_NE(receipt.find("\"blockNumber\":\"0x2\""), std::string::npos) << receipt;
  std::string full = call("eth_getBlockByNumber", R"(["0x3",true])");
  EXPECT_NE(full.find("\"from\":\"" + eth::to_hex(address_of(k2)) + "\""), std::string::npos) << full;
  EXPECT_NE(full.find("\"blockNumber\":\"0x3\""), std::string::npos) << full;
  EXPECT_NE(call("eth_getBlockByNumber", R"(["latest",false])").find("\"number\":\"0x3\""), std::string::npos);
  EXPECT_EQ(call("eth_blockNumber", "[]"), R"({"jsonrpc":"2.0","result":"0x3","id":1})");
  EXPECT_EQ(call("eth_getBlockByNumber", R"(["0x4",false])"), R"({"jsonrpc":"2.0","result":null,"id":1})");
  EXPECT_TRUE(has_code(call("eth_getBlockByNumber", R"(["12",false])"), -32602));
  EXPECT_TRUE(has_code(call("eth_getBlockByNumber", R"(["0x1","yes"])"), -32602));
  std::string by_hash = call("eth_getBlockByHash", "[" + quoted(eth::to_hex(b3)) + ",false]");
  EXPECT_NE(by_hash.find("\"number\":\"0x3\""), std::string::npos) << by_hash;
  EXPECT_EQ(call("eth_getBlockByHash", "[\"0x" + std::string(64, '3') + "\",false]"),
            R"({"jsonrpc":"2.0","result":null,"id":1})");
  expect_alive();
}

TEST_F(ServeServer, LogsFilterByRangeAddressAndTopics) {
  const Key k = key_of(10), k2 = key_of(11);
  const eth::Hash32 b1 = queue_deploy(k, 0, 1), b2 = queue_deploy(k, 1, 2), b3 = queue_deploy(k2, 0, 3);
  (void)b1;
  const std::string topic0 = eth::to_hex(eth::new_transaction_topic());
  const std::string consensus = eth::to_hex(eth::kStudioConsensusMain);
  auto logs = [&](const std::string& filter) { return call("eth_getLogs", "[" + filter + "]"); };
  std::string all = logs(R"({"fromBlock":"0x1","toBlock":"latest"})");
  EXPECT_EQ(count_of(all, "\"logIndex\""), 3) << all;
  EXPECT_EQ(count_of(logs(R"({"fromBlock":"0x2","toBlock":"0x2"})"), "\"logIndex\""), 1);
  EXPECT_EQ(count_of(logs("{}"), "\"logIndex\""), 1);  // latest only
  EXPECT_EQ(count_of(logs(R"({"fromBlock":"earliest","address":")" + consensus + "\"}"), "\"logIndex\""), 3);
  EXPECT_EQ(count_of(logs(R"({"fromBlock":"earliest","address":["0x0000000000000000000000000000000000000001"]})"),
                     "\"logIndex\""),
            0);
  // Topic 3 is the sender, left-padded; topic 1 the transaction.
  const std::string pad2 = "0x000000000000000000000000" + eth::to_hex(address_of(k2)).substr(2);
  std::string by_sender = logs(R"({"fromBlock":"0x0","topics":[")" + topic0 + R"(",null,null,[")" + pad2 + "\"]]}");
  EXPECT_EQ(count_of(by_sender, "\"logIndex\""), 1) << by_sender;
  EXPECT_NE(by_sender.find(eth::to_hex(b3)), std::string::npos);
  std::string by_tx = logs(R"({"fromBlock":"0x0","topics":[null,[")" + eth::to_hex(b2) + "\"]]}");
  EXPECT_EQ(count_of(by_tx, "\"logIndex\""), 1) << by_tx;
  std::string by_hash = logs(R"({"blockHash":")" + eth::to_hex(b2) + "\"}");
  EXPECT_EQ(count_of(by_hash, "\"logIndex\""), 1) << by_hash;
  EXPECT_EQ(count_of(logs(R"({"topics":["0x)" + std::string(64, '5') + "\"]}"), "\"logIndex\""), 0);
  // Bounds and malformed filters.
  std::string wide = logs(R"({"fromBlock":"0x0","toBlock":"0x3e8"})");
  EXPECT_TRUE(has_code(wide, -32005)) << wide;
  EXPECT_NE(wide.find("at most 1000"), std::string::npos) << wide;
  EXPECT_EQ(count_of(logs(R"({"fromBlock":"0x0","toBlock":"0x3e7"})"), "\"logIndex\""), 3);
  EXPECT_TRUE(has_code(logs(R"({"fromBlock":"0x3","toBlock":"0x1"})"), -32602));
  EXPECT_TRUE(has_code(logs(R"({"topics":[null,null,null,null,null]})"), -32602));
  EXPECT_TRUE(has_code(logs(R"({"topics":["0x12"]})"), -32602));
  EXPECT_TRUE(has_code(logs(R"({"blockHash":")" + eth::to_hex(b2) + R"(","fromBlock":"0x1"})"), -32602));
  EXPECT_TRUE(has_code(call("eth_getLogs", "[5]"), -32602));
  expect_alive();
}

TEST_F(ServeServer, SnapshotsRestoreBalancesContractsReceiptsAndTheQueue) {
  stop_server();
  start_server(true, 3);
  const std::string a = "\"0x00000000000000000000000000000000000000aa\"";
  const Key k = key_of(12);
  const std::string me = quoted(eth::to_hex(address_of(k)));
  ASSERT_NE(call("sim_fundAccount", "[" + a + ",100]").find("\"result\""), std::string::npos);
  const eth::Hash32 before = queue_deploy(k, 0, 1);
  EXPECT_EQ(call("sim_createSnapshot", "[]"), R"({"jsonrpc":"2.0","result":1,"id":1})");
  ASSERT_NE(call("sim_fundAccount", "[" + a + ",50]").find("\"result\""), std::string::npos);
  const eth::Hash32 after = queue_deploy(k, 1, 2);
  EXPECT_NE(call("eth_getBalance", "[" + a + "]").find("\"0x96\""), std::string::npos);
  // Durable: a new server process over the same file restores it.
  stop_server();
  start_server(true, 3);
  EXPECT_EQ(call("sim_restoreSnapshot", "[1]"), R"({"jsonrpc":"2.0","result":true,"id":1})");
  EXPECT_NE(call("eth_getBalance", "[" + a + "]").find("\"0x64\""), std::string::npos);
  EXPECT_NE(call("eth_getTransactionCount", "[" + me + "]").find("\"0x1\""), std::string::npos);
  EXPECT_NE(call("gen_getTransactionStatus", "[" + quoted(eth::to_hex(before)) + "]").find("PENDING"),
            std::string::npos);
  EXPECT_TRUE(has_code(call("eth_getTransactionByHash", "[" + quoted(eth::to_hex(after)) + "]"), -32001));
  EXPECT_EQ(call("eth_blockNumber", "[]"), R"({"jsonrpc":"2.0","result":"0x1","id":1})");
  {
    auto st = State::open(path_, OpenMode::kExisting);
    ASSERT_TRUE(st.ok());
    auto ok = (*st)->check_consistency();
    EXPECT_TRUE(ok.ok()) << ok.error().to_string();
    auto fund_receipts = (*st)->txs(10, 0, std::nullopt, nullptr);
    ASSERT_TRUE(fund_receipts.ok());
    EXPECT_EQ(fund_receipts->size(), 1u);
  }
  // The same nonce again after the restore: the queue continues from the snapshot.
  queue_deploy(k, 1, 3);
  EXPECT_EQ(call("sim_restoreSnapshot", "[99]"), R"({"jsonrpc":"2.0","result":false,"id":1})");
  EXPECT_TRUE(has_code(call("sim_restoreSnapshot", R"(["x"])"), -32602));
  // At most 3 kept.
  EXPECT_EQ(call("sim_createSnapshot", "[]"), R"({"jsonrpc":"2.0","result":2,"id":1})");
  EXPECT_EQ(call("sim_createSnapshot", "[]"), R"({"jsonrpc":"2.0","result":3,"id":1})");
  std::string full = call("sim_createSnapshot", "[]");
  EXPECT_TRUE(has_code(full, kServerError)) << full;
  EXPECT_NE(full.find("at most 3"), std::string::npos) << full;
  EXPECT_EQ(call("sim_deleteAllSnapshots", "[]"), R"({"jsonrpc":"2.0","result":{"deleted_count":3},"id":1})");
  EXPECT_EQ(call("sim_restoreSnapshot", "[1]"), R"({"jsonrpc":"2.0","result":false,"id":1})");
  EXPECT_FALSE(std::filesystem::exists(path_ + ".snapshots/1.db"));
  EXPECT_EQ(call("sim_createSnapshot", "[]"), R"({"jsonrpc":"2.0","result":4,"id":1})");  // ids are never reused
  expect_alive();
}

TEST_F(ServeServer, ClearDbTables) {
  const std::string a = "\"0x00000000000000000000000000000000000000bb\"";
  const Key k = key_of(13);
  const std::string me = quoted(eth::to_hex(address_of(k)));
  ASSERT_NE(call("sim_fundAccount", "[" + a + ",7]").find("\"result\""), std::string::npos);
  const eth::Hash32 h = queue_deploy(k, 0, 1);
  EXPECT_TRUE(has_code(call("sim_clearDbTables", R"([["validators"]])"), -32602));
  EXPECT_TRUE(has_code(call("sim_clearDbTables", R"(["transactions"])"), -32602));
  // "transactions": the served transactions go, the node's balances stay.
  EXPECT_EQ(call("sim_clearDbTables", R"([["transactions"]])"), R"({"jsonrpc":"2.0","result":null,"id":1})");
  EXPECT_TRUE(has_code(call("eth_getTransactionByHash", "[" + quoted(eth::to_hex(h)) + "]"), -32001));
  EXPECT_NE(call("eth_getTransactionCount", "[" + me + "]").find("\"0x0\""), std::string::npos);
  EXPECT_EQ(call("eth_blockNumber", "[]"), R"({"jsonrpc":"2.0","result":"0x0","id":1})");
  EXPECT_NE(call("eth_getBalance", "[" + a + "]").find("\"0x7\""), std::string::npos);
  // Block numbers start again at 1.
  const eth::Hash32 again = queue_deploy(k, 0, 2);
  EXPECT_NE(call("eth_getTransactionReceipt", "[" + quoted(eth::to_hex(again)) + "]").find("\"blockNumber\":\"0x1\""),
            std::string::npos);
  // "current_state": everything.
  EXPECT_EQ(call("sim_clearDbTables", R"([["current_state"]])"), R"({"jsonrpc":"2.0","result":null,"id":1})");
  EXPECT_NE(call("eth_getBalance", "[" + a + "]").find("\"0x0\""), std::string::npos);
  EXPECT_TRUE(has_code(call("eth_getTransactionByHash", "[" + quoted(eth::to_hex(again)) + "]"), -32001));
  auto st = State::open(path_, OpenMode::kExisting);
  ASSERT_TRUE(st.ok());
  auto ok = (*st)->check_consistency();
  EXPECT_TRUE(ok.ok()) << ok.error().to_string();
  expect_alive();
}

// GET /events on its own connection: the response head, then one event at a time. Reads wait
// at most 120 s (a bound against a hang, not a timing assertion).
class EventStream {
 public:
  explicit EventStream(std::uint16_t port) : sock_(io_) {
    sock_.connect({asio::ip::make_address("127.0.0.1"), port});
    timeval tv{120, 0};
    ::setsockopt(sock_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    const std::string req = "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n";
    asio::write(sock_, asio::buffer(req));
    head_ = read_until("\r\n\r\n");
  }
  const std::string& head() const { return head_; }
  // The next block up to a blank line ("event: ...\ndata: ..." or a comment); empty at the end.
  std::string next() { return read_until("\n\n"); }
  // The data line of the next `status` event for `hash` (other events are skipped).
  std::string next_status_of(const std::string& hash) {
    for (;;) {
      std::string e = next();
      if (e.empty()) return "";
      if (e.rfind("event: status\n", 0) == 0 && e.find(hash) != std::string::npos) return e.substr(e.find("data: ") + 6);
    }
  }
  void close() { sock_.close(); }

 private:
  std::string read_until(const std::string& end) {
    for (;;) {
      if (auto i = buf_.find(end); i != std::string::npos) {
        std::string out = buf_.substr(0, i);
        buf_.erase(0, i + end.size());
        return out;
      }
      char chunk[4096];
      beast::error_code ec;
      std::size_t n = sock_.read_some(asio::buffer(chunk), ec);
      if (ec || n == 0) return "";
      buf_.append(chunk, n);
    }
  }
  asio::io_context io_;
  asio::ip::tcp::socket sock_;
  std::string buf_, head_;
};

TEST_F(ServeServer, TheDashboardsFilesAndNothingElse) {
  Reply index = request(http::verb::get, "/");
  EXPECT_EQ(index.status, 200);
  EXPECT_EQ(index.content_type, "text/html; charset=utf-8");
  EXPECT_NE(index.body.find("src=\"/app.js\""), std::string::npos) << index.body.substr(0, 300);
  EXPECT_EQ(request(http::verb::get, "/index.html?from=test").body, index.body);
  for (const char* js : {"/app.js", "/crypto.js", "/genvm.js"}) {
    Reply r = request(http::verb::get, js);
    EXPECT_EQ(r.status, 200) << js;
    EXPECT_EQ(r.content_type, "text/javascript; charset=utf-8") << js;
    const StaticFile* f = dashboard_file(js);
    ASSERT_NE(f, nullptr) << js;
    EXPECT_EQ(r.body, f->body) << js;
  }
  EXPECT_EQ(request(http::verb::get, "/style.css").content_type, "text/css; charset=utf-8");
  Reply head = request(http::verb::head, "/");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.length, std::to_string(index.body.size()));
  EXPECT_EQ(head.body, "");
  // Paths outside the embedded list, however spelled, are not files: nothing is read from disk.
  for (const char* path : {"/nope.js", "/../CMakeLists.txt", "/..%2fCMakeLists.txt", "/%2e%2e/http.cc", "/dashboard/app.js",
                           "//etc/passwd", "/app.js/", "/./app.js", "/APP.JS", "/app.js%00.html", "/http.cc",
                           "/embed_dashboard.cmake", "/../../../../../../etc/passwd"}) {
    Reply r = request(http::verb::get, path);
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_EQ(r.body.find("<html"), std::string::npos) << path;
  }
  EXPECT_EQ(request(http::verb::post, "/app.js").status, 405);
  EXPECT_EQ(request(http::verb::get, "/api").status, 405);
  expect_alive();
}

TEST_F(ServeServer, TheEventStreamCarriesEachStatusChange) {
  EventStream events(server_->port());
  EXPECT_EQ(events.head().rfind("HTTP/1.1 200", 0), 0u) << events.head();
  EXPECT_NE(events.head().find("Content-Type: text/event-stream"), std::string::npos) << events.head();
  EXPECT_EQ(events.next(), "retry: 1000\n: connected");
  const Key k = key_of(15);
  const std::string queued = eth::to_hex(queue_deploy(k, 0, 1));
  EXPECT_EQ(events.next(), "event: status\ndata: {\"hash\":\"" + queued + "\",\"status\":\"PENDING\",\"statusCode\":1}");
  ASSERT_NE(call("sim_cancelTransaction", "[" + quoted(queued) + "]").find("\"CANCELED\""), std::string::npos);
  EXPECT_EQ(events.next_status_of(queued), "{\"hash\":\"" + queued + "\",\"status\":\"CANCELED\",\"statusCode\":8}");
  // The worker's steps, through the decision to FINALIZED (its code is not wasm: it runs and
  // fails, and is decided all the same).
  const std::string run = eth::to_hex(queue_deploy(k, 1, 2));
  EXPECT_NE(events.next_status_of(run).find("\"PENDING\""), std::string::npos);
  request_interrupt(0);  // a worker stopped by an earlier test left the process-wide interrupt set
  svc_->start();
  std::vector<std::string> seen;
  while (seen.size() < 100) {  // a bound against a worker retrying forever
    std::string data = events.next_status_of(run);
    if (data.empty()) break;
    auto at = data.find("\"status\":\"") + 10;
    seen.push_back(data.substr(at, data.find('"', at) - at));
    if (seen.back() == "FINALIZED") break;
  }
  svc_->stop();
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front(), "PROPOSING");
  EXPECT_EQ(seen.back(), "FINALIZED");
  EXPECT_TRUE(std::find(seen.begin(), seen.end(), "ACCEPTED") != seen.end() ||
              std::find(seen.begin(), seen.end(), "UNDETERMINED") != seen.end());
  // The stored status agrees with the last event.
  EXPECT_NE(call("gen_getTransactionStatus", "[" + quoted(run) + "]").find("\"FINALIZED\""), std::string::npos);
  // Clearing the tables tells the subscribers to reload.
  EXPECT_EQ(call("sim_clearDbTables", R"([["transactions"]])"), R"({"jsonrpc":"2.0","result":null,"id":1})");
  std::string e;
  do e = events.next(); while (!e.empty() && e.rfind("event: reset", 0) != 0);
  EXPECT_EQ(e, "event: reset\ndata: {}");
  expect_alive();
}

TEST_F(ServeServer, EventStreamsAreBounded) {
  std::vector<std::unique_ptr<EventStream>> streams;
  for (int i = 0; i < kMaxEventClients; ++i) {
    streams.push_back(std::make_unique<EventStream>(server_->port()));
    ASSERT_EQ(streams.back()->head().rfind("HTTP/1.1 200", 0), 0u) << i;
  }
  EXPECT_EQ(request(http::verb::get, "/events").status, 503);
  // A stream whose peer went frees its place (the server notices within its wait of a second;
  // the loop below is bounded by the 120 s read timeout of EventStream, not timed).
  streams.back()->close();
  streams.pop_back();
  std::unique_ptr<EventStream> again;
  for (int i = 0; i < 1200; ++i) {
    again = std::make_unique<EventStream>(server_->port());
    if (again->head().rfind("HTTP/1.1 200", 0) == 0) break;
    again.reset();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_NE(again, nullptr);
  // Every stream sees the same event.
  const std::string h = eth::to_hex(queue_deploy(key_of(16), 0, 1));
  streams.push_back(std::move(again));
  for (auto& s : streams) EXPECT_NE(s->next_status_of(h).find("\"PENDING\""), std::string::npos);
  expect_alive();
}

TEST(EventHub, ASubscriberThatFallsBehindIsDroppedNotBuffered) {
  EventHub hub;
  auto slow = hub.subscribe(), fast = hub.subscribe();
  for (std::size_t i = 0; i < kMaxQueuedEvents; ++i) hub.publish("status", std::to_string(i));
  EXPECT_EQ(fast->wait(std::chrono::steady_clock::now()).size(), kMaxQueuedEvents);
  hub.publish("status", "one more");
  EXPECT_TRUE(slow->lagged());
  EXPECT_TRUE(slow->wait(std::chrono::steady_clock::now()).empty());
  EXPECT_FALSE(fast->lagged());
  auto got = fast->wait(std::chrono::steady_clock::now());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].data, "one more");
  // Released subscribers free their places.
  std::vector<std::shared_ptr<EventHub::Subscriber>> more;
  while (auto s = hub.subscribe()) more.push_back(std::move(s));
  EXPECT_EQ(more.size(), static_cast<std::size_t>(kMaxEventClients - 2));
  more.clear();
  slow.reset();
  EXPECT_EQ(hub.subscribers(), 1);
}

}  // namespace
}  // namespace genvm::node::serve

namespace genvm::node::serve {
namespace {

std::string read_binary(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return {};
  std::string out;
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

// The `result` of a JSON-RPC reply, parsed.
JsonValue result_of(const std::string& reply) {
  auto v = parse_json(reply);
  EXPECT_TRUE(v.ok()) << reply;
  if (!v.ok()) return {};
  const JsonValue* r = v->find("result");
  EXPECT_NE(r, nullptr) << reply;
  return r ? *r : JsonValue();
}

std::string text_at(const JsonValue& v, const char* key) {
  const JsonValue* m = v.find(key);
  return m && m->is_string() ? m->text() : std::string("<missing ") + key + ">";
}

// gen_dbg_traceTransaction over real runs of counter.wasm: genlayer-js's DebugTraceResult
// members for the round's leader, every node's run under "runs", a contract's UserError
// readable in the trace and in eth_getTransactionByHash's receipts, Studio's not-found error for
// an unknown hash. (Fails without the method, and without the run records serve now keeps.)
TEST_F(ServeServer, TraceShowsEveryRunOfARoundAndAUserErrorReadably) {
  const std::string counter = read_binary(std::string(GENVM_BINARY_DIR) + "/examples/counter.wasm");
  if (counter.empty()) GTEST_SKIP() << "needs examples/counter.wasm (genvm_examples)";
  stop_server();
  validators_ = 2;
  start_server(true);
  const Key k = key_of(20);
  const eth::Address me = address_of(k);
  const eth::Bytes code(counter.begin(), counter.end());
  const eth::Bytes deploy_raw = sign_legacy(k, 0, eth::kStudioConsensusMain, add_transaction(me, {}, code));
  ASSERT_NE(send_raw(deploy_raw).find("\"result\":\"0x"), std::string::npos);
  const eth::Hash32 deploy = keccak256(deploy_raw);
  svc_->start();
  ASSERT_NE(wait_decided(deploy).find("ACCEPTED"), std::string::npos);
  const JsonValue tx = result_of(call("eth_getTransactionByHash", "[" + quoted(eth::to_hex(deploy)) + "]"));
  const JsonValue* data = tx.find("data");
  ASSERT_TRUE(data && data->find("contract_address"));
  auto contract = eth::parse_address(data->find("contract_address")->text());
  ASSERT_TRUE(contract);

  const JsonValue t = result_of(call("gen_dbg_traceTransaction", R"([{"txID":")" + eth::to_hex(deploy) + R"(","round":0}])"));
  EXPECT_EQ(text_at(t, "transaction_id"), eth::to_hex(deploy));
  ASSERT_TRUE(t.find("result_code"));
  EXPECT_EQ(t.find("result_code")->as_u64(), 0u);
  EXPECT_EQ(text_at(t, "return_data"), "0x00");  // a deploy returns null (calldata 0x00)
  for (const char* key : {"stdout", "stderr", "storage_proof", "run_time"}) EXPECT_TRUE(t.find(key) && t.find(key)->is_string()) << key;
  EXPECT_NE(text_at(t, "run_time"), "");
  ASSERT_TRUE(t.find("genvm_log") && t.find("genvm_log")->kind() == JsonValue::Kind::kArray);
  EXPECT_FALSE(t.find("genvm_log")->items().empty());  // safe mode logs the run's start and end
  for (const JsonValue& e : t.find("genvm_log")->items()) EXPECT_TRUE(e.is_object());
  ASSERT_TRUE(t.find("eq_outputs") && t.find("eq_outputs")->kind() == JsonValue::Kind::kArray);
  EXPECT_EQ(t.find("error")->kind(), JsonValue::Kind::kNull);
  const JsonValue* runs = t.find("runs");
  ASSERT_TRUE(runs && runs->kind() == JsonValue::Kind::kArray);
  ASSERT_EQ(runs->items().size(), 3u);  // the leader and two validators
  EXPECT_EQ(text_at(runs->items()[0], "role"), "leader");
  for (std::size_t i = 1; i < 3; ++i) {
    EXPECT_EQ(text_at(runs->items()[i], "role"), "validator");
    EXPECT_EQ(text_at(runs->items()[i], "vote"), "agree");
    EXPECT_EQ(runs->items()[i].find("result_code")->as_u64(), 0u);
    EXPECT_EQ(runs->items()[i].find("recorded")->as_bool(), true);
  }
  // The hash-and-number form, a round the transaction did not run, an unknown hash.
  EXPECT_NE(call("gen_dbg_traceTransaction", "[" + quoted(eth::to_hex(deploy)) + ",0]").find("\"result_code\":0"),
            std::string::npos);
  EXPECT_TRUE(has_code(call("gen_dbg_traceTransaction", R"([{"txID":")" + eth::to_hex(deploy) + R"(","round":1}])"), -32602));
  std::string unknown = call("gen_dbg_traceTransaction", R"([{"txID":"0x)" + std::string(64, '4') + R"(","round":0}])");
  EXPECT_TRUE(has_code(unknown, -32001)) << unknown;
  EXPECT_NE(unknown.find("not found"), std::string::npos) << unknown;

  // A call of a method the contract does not have: its UserError "unknown method".
  calldata::Value entry(calldata::Value::Map{{"", calldata::Value("no_such_method")}});
  const eth::Bytes call_raw =
      sign_legacy(k, 1, eth::kStudioConsensusMain, add_transaction(me, *contract, {}, entry));
  ASSERT_NE(send_raw(call_raw).find("\"result\":\"0x"), std::string::npos);
  const eth::Hash32 failing = keccak256(call_raw);
  svc_->wake();
  ASSERT_NE(wait_decided(failing).find("ACCEPTED"), std::string::npos);
  svc_->stop();
  const JsonValue u = result_of(call("gen_dbg_traceTransaction", R"([{"txID":")" + eth::to_hex(failing) + R"("}])"));
  EXPECT_EQ(u.find("result_code")->as_u64(), 1u);
  EXPECT_EQ(text_at(u, "result_name"), "UserError");
  EXPECT_EQ(text_at(u, "return_data"), "0x" + hex(Bytes{'u', 'n', 'k', 'n', 'o', 'w', 'n', ' ', 'm', 'e', 't', 'h', 'o', 'd'}));
  EXPECT_EQ(text_at(u, "error"), "unknown method");
  const JsonValue* details = u.find("error_details");
  ASSERT_TRUE(details && details->is_object());
  EXPECT_EQ(text_at(*details, "kind"), "UserError");
  EXPECT_EQ(text_at(*details, "raw"), "unknown method");

  const JsonValue ft = result_of(call("eth_getTransactionByHash", "[" + quoted(eth::to_hex(failing)) + "]"));
  const JsonValue* cd = ft.find("consensus_data");
  ASSERT_TRUE(cd && cd->is_object());
  const JsonValue* leader = cd->find("leader_receipt");
  ASSERT_TRUE(leader && leader->kind() == JsonValue::Kind::kArray && leader->items().size() == 1);
  EXPECT_EQ(text_at(leader->items()[0], "execution_result"), "ERROR");
  EXPECT_EQ(text_at(leader->items()[0], "error"), "unknown method");
  ASSERT_TRUE(leader->items()[0].find("error_details"));
  EXPECT_EQ(text_at(*leader->items()[0].find("error_details"), "kind"), "UserError");
  const JsonValue* validators = cd->find("validators");
  ASSERT_TRUE(validators && validators->items().size() == 2);
  EXPECT_EQ(text_at(validators->items()[0], "error"), "unknown method");
  expect_alive();
}


// At --debug-mode disabled no run records are kept: the trace still has every node's result
// code and, for the accepted leader and the validators that agreed with it, the receipt's
// result, so a UserError stays readable; the streams are empty and `recorded` false.
TEST_F(ServeServer, WithoutDebugRecordsTheTraceHasTheReceiptsResults) {
  const std::string counter = read_binary(std::string(GENVM_BINARY_DIR) + "/examples/counter.wasm");
  if (counter.empty()) GTEST_SKIP() << "needs examples/counter.wasm (genvm_examples)";
  stop_server();
  validators_ = 1;
  debug_mode_ = DebugMode::kDisabled;
  start_server(true);
  const Key k = key_of(22);
  const eth::Address me = address_of(k);
  const eth::Bytes deploy_raw =
      sign_legacy(k, 0, eth::kStudioConsensusMain, add_transaction(me, {}, eth::Bytes(counter.begin(), counter.end())));
  ASSERT_NE(send_raw(deploy_raw).find("\"result\":\"0x"), std::string::npos);
  svc_->start();
  ASSERT_NE(wait_decided(keccak256(deploy_raw)).find("ACCEPTED"), std::string::npos);
  const JsonValue tx = result_of(call("eth_getTransactionByHash", "[" + quoted(eth::to_hex(keccak256(deploy_raw))) + "]"));
  auto contract = eth::parse_address(text_at(*tx.find("data"), "contract_address"));
  ASSERT_TRUE(contract);
  calldata::Value entry(calldata::Value::Map{{"", calldata::Value("no_such_method")}});
  const eth::Bytes call_raw = sign_legacy(k, 1, eth::kStudioConsensusMain, add_transaction(me, *contract, {}, entry));
  ASSERT_NE(send_raw(call_raw).find("\"result\":\"0x"), std::string::npos);
  svc_->wake();
  ASSERT_NE(wait_decided(keccak256(call_raw)).find("ACCEPTED"), std::string::npos);
  svc_->stop();
  const JsonValue t = result_of(call("gen_dbg_traceTransaction", "[" + quoted(eth::to_hex(keccak256(call_raw))) + "]"));
  EXPECT_EQ(t.find("result_code")->as_u64(), 1u);
  EXPECT_EQ(text_at(t, "error"), "unknown method");
  EXPECT_EQ(text_at(t, "stdout"), "");
  EXPECT_EQ(text_at(t, "run_time"), "");
  const JsonValue* runs = t.find("runs");
  ASSERT_TRUE(runs && runs->items().size() == 2u);
  for (const JsonValue& r : runs->items()) {
    EXPECT_FALSE(r.find("recorded")->as_bool());
    EXPECT_EQ(text_at(r, "error"), "unknown method");
  }
}

// An uncaught Python exception (the VM error exit_code 1, its traceback on stderr) reads as its
// type, message and line in the trace and in the receipts. Needs the Python runners of a build
// with -DGENVM_BUILD_CPYTHON=ON (skipped without them).
TEST_F(ServeServer, APythonExceptionReadsAsItsTypeMessageAndLine) {
  const std::string runners = std::string(GENVM_BINARY_DIR) + "/runners/cpython/installed";
  const std::string latest = read_binary(runners + "/latest.json");
  const std::size_t at = latest.find("\"py-genlayer\"");
  if (at == std::string::npos) GTEST_SKIP() << "needs " << runners << " (cpython_runners)";
  const std::size_t q1 = latest.find('"', latest.find(':', at) + 1), q2 = latest.find('"', q1 + 1);
  ASSERT_NE(q2, std::string::npos) << latest;
  const std::string runner_id = latest.substr(q1 + 1, q2 - q1 - 1);
  ::setenv("GENVM_RUNNERS_DIR", runners.c_str(), 1);  // the manager passes it on to genvm
  const std::string contract = "# { \"Depends\": \"py-genlayer:" + runner_id + "\" }\n"
                               "from genlayer import *\n"
                               "\n"
                               "class Contract(gl.Contract):\n"
                               "    n: u256\n"
                               "    def __init__(self):\n"
                               "        self.n = u256(0)\n"
                               "\n"
                               "    @gl.public.write\n"
                               "    def withdraw(self, amount: int):\n"
                               "        if amount < 0:\n"
                               "            raise ValueError(f\"amount {amount} must be positive\")\n"
                               "        self.n = u256(amount)\n";
  stop_server();
  validators_ = 1;
  timeout_s_ = 120;  // python.wasm starts in about a second, more on a loaded machine
  start_server(true);
  const Key k = key_of(21);
  const eth::Address me = address_of(k);
  const eth::Bytes deploy_raw =
      sign_legacy(k, 0, eth::kStudioConsensusMain, add_transaction(me, {}, eth::Bytes(contract.begin(), contract.end())));
  ASSERT_NE(send_raw(deploy_raw).find("\"result\":\"0x"), std::string::npos);
  svc_->start();
  ASSERT_NE(wait_decided(keccak256(deploy_raw)).find("ACCEPTED"), std::string::npos);
  const JsonValue tx = result_of(call("eth_getTransactionByHash", "[" + quoted(eth::to_hex(keccak256(deploy_raw))) + "]"));
  ASSERT_EQ(tx.find("txExecutionResult")->as_u64(), 1u) << "the deploy did not return";
  auto address = eth::parse_address(text_at(*tx.find("data"), "contract_address"));
  ASSERT_TRUE(address);
  calldata::Value entry(calldata::Value::Map{{"", calldata::Value("withdraw")},
                                             {"args", calldata::Value(calldata::Value::Array{calldata::Value(-3)})}});
  const eth::Bytes call_raw = sign_legacy(k, 1, eth::kStudioConsensusMain, add_transaction(me, *address, {}, entry));
  ASSERT_NE(send_raw(call_raw).find("\"result\":\"0x"), std::string::npos);
  svc_->wake();
  ASSERT_NE(wait_decided(keccak256(call_raw)).find("ACCEPTED"), std::string::npos);
  svc_->stop();
  const JsonValue t = result_of(call("gen_dbg_traceTransaction", "[" + quoted(eth::to_hex(keccak256(call_raw))) + "]"));
  EXPECT_EQ(t.find("result_code")->as_u64(), 2u);
  EXPECT_EQ(text_at(t, "error"), "ValueError: amount -3 must be positive (line 12, in withdraw)");
  const JsonValue* details = t.find("error_details");
  ASSERT_TRUE(details && details->is_object());
  EXPECT_EQ(text_at(*details, "code"), "exit_code 1");
  EXPECT_EQ(text_at(*details, "meaning"), std::string(vm_error_meaning("exit_code")));
  EXPECT_EQ(text_at(*details, "raw"), "exit_code 1");
  const JsonValue* ex = details->find("exception");
  ASSERT_TRUE(ex && ex->is_object());
  EXPECT_EQ(text_at(*ex, "type"), "ValueError");
  EXPECT_EQ(text_at(*ex, "message"), "amount -3 must be positive");
  EXPECT_EQ(ex->find("line")->as_u64(), 12u);
  EXPECT_NE(text_at(t, "stderr").find("Traceback (most recent call last):"), std::string::npos);
  const JsonValue ft = result_of(call("eth_getTransactionByHash", "[" + quoted(eth::to_hex(keccak256(call_raw))) + "]"));
  const JsonValue* leader = ft.find("consensus_data")->find("leader_receipt");
  ASSERT_TRUE(leader && !leader->items().empty());
  EXPECT_EQ(text_at(*leader->items()[0].find("genvm_result"), "error"), text_at(t, "error"));
}

std::string field(const JsonValue& o, const char* k) {
  const JsonValue* f = o.is_object() ? o.find(k) : nullptr;
  return f ? f->text() : std::string();
}

TEST_F(ServeServer, ValidatorsAreStudiosMethodsOverTheStore) {
  // --validators N at the first start only: the marker keeps a second start (and a deletion of
  // them all) from seeding again.
  auto seeded = svc_->seed_validators();
  ASSERT_TRUE(seeded.ok()) << seeded.error().to_string();
  EXPECT_EQ(*seeded, 5);
  auto again = svc_->seed_validators();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0);
  EXPECT_EQ(call("sim_countValidators", "[]"), R"({"jsonrpc":"2.0","result":5,"id":1})");
  JsonValue all = result_of(call("sim_getAllValidators", "[]"));
  ASSERT_EQ(all.items().size(), 5u);
  const JsonValue& first = all.items()[0];
  for (const char* k : {"id", "address", "stake", "provider", "model", "config", "plugin", "plugin_config", "created_at"}) {
    EXPECT_NE(first.find(k), nullptr) << k;
  }
  EXPECT_EQ(field(first, "provider"), "openai");
  EXPECT_EQ(field(first, "plugin"), "openai-compatible");
  EXPECT_TRUE(first.find("plugin_config")->is_object());

  // Created on the catalog's mock provider (plugin and plugin_config from the catalog).
  JsonValue made = result_of(call("sim_createValidator", R"([7,"mock","mock"])"));
  ASSERT_TRUE(made.is_object());
  EXPECT_EQ(made.find("stake")->text(), "7");
  EXPECT_EQ(field(made, "plugin"), "mock");
  const std::string addr = field(made, "address");
  ASSERT_EQ(addr.size(), 42u);
  EXPECT_EQ(field(result_of(call("sim_getValidator", "[" + quoted(addr) + "]")), "model"), "mock");
  // Given in full, with a mock table in plugin_config (gltest's shape).
  JsonValue upd = result_of(call("sim_updateValidator", "[" + quoted(addr) +
                                                            R"(,9,"openai","gpt-4o",{"temperature":0.5},"openai-compatible",)"
                                                            R"({"api_url":"x","mock_response":{"response":{"hi":"there"}}}])"));
  ASSERT_TRUE(upd.is_object()) << call("sim_getValidator", "[" + quoted(addr) + "]");
  EXPECT_EQ(upd.find("stake")->text(), "9");
  EXPECT_EQ(field(upd, "model"), "gpt-4o");
  EXPECT_EQ(field(*upd.find("plugin_config")->find("mock_response")->find("response"), "hi"), "there");
  EXPECT_EQ(call("sim_countValidators", "[]"), R"({"jsonrpc":"2.0","result":6,"id":1})");
  // No default for an unknown provider/model unless plugin and plugin_config are given.
  EXPECT_TRUE(has_code(call("sim_createValidator", R"([1,"nobody","nothing"])"), -32602));
  EXPECT_TRUE(has_code(call("sim_createValidator", R"([1,"x","y",{},"no-such-plugin",{}])"), -32602));
  EXPECT_TRUE(has_code(call("sim_getValidator", "[\"0x" + std::string(40, '1') + "\"]"), -32001));
  EXPECT_TRUE(has_code(call("sim_updateValidator", "[\"0x" + std::string(40, '1') + "\",1,\"mock\",\"mock\"]"), -32001));
  // Random ones: the stake in range, never the mock unless asked for.
  JsonValue random = result_of(call("sim_createRandomValidators", "[3,2,4]"));
  ASSERT_EQ(random.items().size(), 3u);
  for (const auto& v : random.items()) {
    auto st = v.find("stake")->as_u64();
    ASSERT_TRUE(st.has_value());
    EXPECT_GE(*st, 2u);
    EXPECT_LE(*st, 4u);
    EXPECT_NE(field(v, "provider"), "mock");
  }
  JsonValue mocks = result_of(call("sim_createRandomValidators", R"([2,1,1,["mock"]])"));
  ASSERT_EQ(mocks.items().size(), 2u);
  EXPECT_EQ(field(mocks.items()[1], "provider"), "mock");
  EXPECT_EQ(call("sim_countValidators", "[]"), R"({"jsonrpc":"2.0","result":11,"id":1})");
  JsonValue providers = result_of(call("sim_getProvidersAndModels", "[]"));
  bool has_mock = false;
  for (const auto& p : providers.items()) has_mock = has_mock || field(p, "provider") == "mock";
  EXPECT_TRUE(has_mock);

  // The provider registry: an added entry is a default validators can be created from.
  const std::string acme = R"({"provider":"acme","model":"m1","config":{"temperature":0},"plugin":"openai-compatible",)"
                           R"("plugin_config":{"api_url":"http://127.0.0.1:1","api_key_env_var":"K"}})";
  JsonValue acme_id = result_of(call("sim_addProvider", "[" + acme + "]"));
  ASSERT_TRUE(acme_id.as_u64().has_value()) << call("sim_getProvidersAndModels", "[]");
  const std::string id_text = std::to_string(*acme_id.as_u64());
  JsonValue on_acme = result_of(call("sim_createValidator", R"([1,"acme","m1"])"));
  EXPECT_EQ(field(on_acme, "plugin"), "openai-compatible");
  EXPECT_EQ(on_acme.find("config")->find("temperature")->text(), "0");
  EXPECT_EQ(call("sim_updateProvider", "[" + id_text + "," + acme + "]"), R"({"jsonrpc":"2.0","result":null,"id":1})");
  EXPECT_TRUE(has_code(call("sim_addProvider", R"([{"provider":"x"}])"), -32602));
  EXPECT_EQ(call("sim_deleteProvider", "[" + id_text + "]"), R"({"jsonrpc":"2.0","result":null,"id":1})");
  EXPECT_TRUE(has_code(call("sim_deleteProvider", "[" + id_text + "]"), -32001));
  EXPECT_TRUE(has_code(call("sim_createValidator", R"([1,"acme","m1"])"), -32602));
  EXPECT_EQ(call("sim_resetDefaultsLlmProviders", "[]"), R"({"jsonrpc":"2.0","result":null,"id":1})");
  EXPECT_EQ(result_of(call("sim_getProvidersAndModels", "[]")).items().size(), providers.items().size());
  EXPECT_EQ(call("sim_deleteValidator", "[" + quoted(field(on_acme, "address")) + "]").find("error"), std::string::npos);

  EXPECT_EQ(call("sim_deleteValidator", "[" + quoted(addr) + "]"),
            R"({"jsonrpc":"2.0","result":")" + addr + R"(","id":1})");
  EXPECT_TRUE(has_code(call("sim_deleteValidator", "[" + quoted(addr) + "]"), -32001));
  EXPECT_EQ(call("sim_countValidators", "[]"), R"({"jsonrpc":"2.0","result":10,"id":1})");
  // Kept across a restart, and sim_clearDbTables leaves them (configuration, not state).
  stop_server();
  start_server(true);
  EXPECT_EQ(call("sim_countValidators", "[]"), R"({"jsonrpc":"2.0","result":10,"id":1})");
  EXPECT_EQ(call("sim_clearDbTables", R"([["current_state"]])"), R"({"jsonrpc":"2.0","result":null,"id":1})");
  EXPECT_EQ(call("sim_countValidators", "[]"), R"({"jsonrpc":"2.0","result":10,"id":1})");
  EXPECT_EQ(call("sim_deleteAllValidators", "[]"), R"({"jsonrpc":"2.0","result":[],"id":1})");
  auto after = svc_->seed_validators();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*after, 0);
  EXPECT_EQ(call("sim_countValidators", "[]"), R"({"jsonrpc":"2.0","result":0,"id":1})");

  // Not on loopback: readable, not administrable.
  stop_server();
  start_server(false);
  EXPECT_EQ(call("sim_countValidators", "[]"), R"({"jsonrpc":"2.0","result":0,"id":1})");
  for (const char* m : {"sim_createValidator", "sim_createRandomValidators", "sim_updateValidator", "sim_deleteValidator",
                        "sim_deleteAllValidators", "sim_addProvider", "sim_updateProvider", "sim_deleteProvider",
                        "sim_resetDefaultsLlmProviders"}) {
    EXPECT_TRUE(has_code(call(m, R"([1,"mock","mock"])"), kServerError)) << m;
  }
  expect_alive();
}

// ---- a real genvm-node serve with its LLM module: mocked validators

// `genvm-node serve` as a child process on 127.0.0.1 (any free port), with the LLM module
// configured; stopped with SIGTERM.
class ServeProcess {
 public:
  bool start(const std::vector<std::string>& args) {
    int out[2];
    if (::pipe(out) != 0) return false;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      ::close(out[0]);
      ::close(out[1]);
      std::vector<char*> argv;
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    std::string line;
    char ch;
    while (::read(out[0], &ch, 1) == 1 && ch != '\n') line += ch;
    ::close(out[0]);
    auto colon = line.rfind(':');
    if (line.rfind("listening on http://", 0) != 0 || colon == std::string::npos) return false;
    port_ = static_cast<std::uint16_t>(std::stoi(line.substr(colon + 1)));
    return true;
  }
  ~ServeProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int st = 0;
      ::waitpid(pid_, &st, 0);
    }
  }
  std::string call(const std::string& method, const std::string& params_json) {
    asio::io_context io;
    asio::ip::tcp::socket sock(io);
    sock.connect({asio::ip::make_address("127.0.0.1"), port_});
    http::request<http::string_body> req{http::verb::post, "/api", 11};
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::content_type, "application/json");
    req.body() = R"({"jsonrpc":"2.0","id":1,"method":")" + method + R"(","params":)" + params_json + "}";
    req.prepare_payload();
    beast::error_code ec;
    http::write(sock, req, ec);
    beast::flat_buffer buf;
    http::response<http::string_body> res;
    http::read(sock, buf, res, ec);
    return ec ? ec.message() : res.body();
  }
  // Polls until the transaction is decided (a bounded wait, not a timing assert).
  std::string decided(const std::string& hash) {
    for (int i = 0; i < 1200; ++i) {
      std::string st = field(result_of(call("gen_getTransactionStatus", "[" + quoted(hash) + "]")), "status");
      if (st == "ACCEPTED" || st == "FINALIZED" || st == "UNDETERMINED" || st == "CANCELED") return st;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return "TIMEOUT";
  }

 private:
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
};

calldata::Value ask_entry(const std::string& q) {
  return calldata::Value(calldata::Value::Map{{"", calldata::Value("ask")},
                                              {"args", calldata::Value(calldata::Value::Array{calldata::Value(q)})}});
}

// examples/llm.wasm on a real genvm-node serve whose validators (all on the mock provider) answer
// from their mock tables: every run is the real executor and the real LLM module, the leader's
// and the validators' answers agree, and the stored answer is the mock's. Then a transaction's own
// sim_config validators (a leader whose mock differs from the others', EqComparative mocked to
// false) make the same call undetermined, and examples/render.wasm reads its number off a page
// the web module answers from the validators' mock_web_response. Fails without the modules'
// mocks (the LLM module has no model to ask; no page is reachable) or without the node handing
// each validator's mocks to its runs.
TEST_F(ServeServer, MockedValidatorsAnswerAnLlmContractDeterministically) {
  const std::string build = GENVM_BINARY_DIR;
  const std::string node = build + "/tools/genvm-node/genvm-node", wasm = build + "/examples/llm.wasm";
  for (const auto& f : {node, wasm, build + "/examples/render.wasm", build + "/tools/genvm-module-llm/genvm-module-llm",
                        build + "/tools/genvm-module-web/genvm-module-web"}) {
    if (!std::filesystem::exists(f)) GTEST_SKIP() << f << " is not built";
  }
  stop_server();
  const std::string dir = std::filesystem::path(path_).parent_path().string();
  const std::string llm_yaml = dir + "/llm.yaml";
  {
    std::ofstream y(llm_yaml);
    y << "retries: 0\nmock_only: true\nbackends: {}\nprompt_templates:\n"
         "  eq_comparative: {system: s, user: \"#{leader_answer} #{validator_answer} #{principle}\"}\n"
         "  eq_non_comparative_leader: {system: s, user: \"#{task} #{criteria} #{input}\"}\n"
         "  eq_non_comparative_validator: {system: s, user: \"#{task} #{input} #{criteria} #{output}\"}\n";
  }
  const std::string web_yaml = dir + "/web.yaml";
  std::ofstream(web_yaml) << "render_timeout: 20\n";
  ServeProcess serve;
  ASSERT_TRUE(serve.start({node, "serve", "--port", "0", "--state", dir + "/e2e.db", "--genvm", build + "/tools/genvm/genvm",
                           "--validators", "2", "--timeout", "60", "--finality-window", "0", "--module-llm-config", llm_yaml,
                           "--module-web-config", web_yaml}));
  EXPECT_EQ(serve.call("sim_countValidators", "[]"), R"({"jsonrpc":"2.0","result":2,"id":1})");
  ASSERT_EQ(serve.call("sim_deleteAllValidators", "[]"), R"({"jsonrpc":"2.0","result":[],"id":1})");
  const std::string mock_config =
      R"({"mock_response":{"response":{"capital of France":"Paris"},"eq_principle_prompt_comparative":{},)"
      R"("eq_principle_prompt_non_comparative":{}},"mock_web_response":{"nondet_web_request":{)"
      R"("https://example.com/price":{"method":"GET","status":200,"body":"<p>The price is 4217 coins.</p>"}}}})";
  std::vector<std::string> validators;
  for (int i = 0; i < 3; ++i) {
    std::string r = serve.call("sim_createValidator", R"([1,"mock","mock",{},"mock",)" + mock_config + "]");
    ASSERT_NE(r.find("\"plugin\":\"mock\""), std::string::npos) << r;
    validators.push_back(field(result_of(r), "address"));
  }

  const Key k = key_of(40);
  const eth::Address me = address_of(k);
  std::ifstream in(wasm, std::ios::binary);
  eth::Bytes code((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  eth::Bytes deploy = sign_legacy(k, 0, eth::kStudioConsensusMain, add_transaction(me, {}, code));
  std::string sent = serve.call("eth_sendRawTransaction", "[" + quoted(eth::to_hex(deploy)) + "]");
  ASSERT_NE(sent.find("\"result\":\"0x"), std::string::npos) << sent;
  const std::string deploy_hash = eth::to_hex(keccak256(deploy));
  ASSERT_NE(serve.decided(deploy_hash), "TIMEOUT");
  JsonValue dtx = result_of(serve.call("eth_getTransactionByHash", "[" + quoted(deploy_hash) + "]"));
  const std::string contract = field(dtx, "to_address");
  ASSERT_EQ(contract.size(), 42u) << field(dtx, "error");
  auto contract_addr = eth::parse_address(contract);
  ASSERT_TRUE(contract_addr.ok());

  eth::Bytes ask = sign_legacy(k, 1, eth::kStudioConsensusMain,
                               add_transaction(me, *contract_addr, {}, ask_entry("What is the capital of France?")));
  ASSERT_NE(serve.call("eth_sendRawTransaction", "[" + quoted(eth::to_hex(ask)) + "]").find("\"result\":\"0x"),
            std::string::npos);
  const std::string ask_hash = eth::to_hex(keccak256(ask));
  ASSERT_NE(serve.decided(ask_hash), "TIMEOUT");
  std::string tx = serve.call("eth_getTransactionByHash", "[" + quoted(ask_hash) + "]");
  EXPECT_NE(tx.find("\"accepted\":true"), std::string::npos) << tx;
  EXPECT_EQ(tx.find("\"vote\":\"disagree\""), std::string::npos) << tx;
  // The receipt names the stored validators: votes by address, node_config as stored.
  EXPECT_NE(tx.find("\"" + validators[1] + "\":\"agree\""), std::string::npos) << tx;
  EXPECT_NE(tx.find("\"node_config\":{\"address\":\"" + validators[0] + "\",\"provider\":\"mock\""), std::string::npos)
      << tx;
  // The stored answer, read back: calldata string "Paris".
  std::string read_data = eth::to_hex(eth::rlp_list([] {
    eth::Bytes items;
    eth::rlp_append_string(items, calldata::encode(calldata::Value(calldata::Value::Map{{"", calldata::Value("answer")}})));
    eth::rlp_append_string(items, eth::Bytes{});
    return items;
  }()));
  std::string read = serve.call("gen_call", R"([{"type":"read","to":")" + contract + R"(","from":")" + eth::to_hex(me) +
                                                R"(","data":")" + read_data + R"("}])");
  const std::string paris_hex = eth::to_hex(calldata::encode(calldata::Value("Paris"))).substr(2);
  EXPECT_NE(read.find("\"result\":\"" + paris_hex + "\""), std::string::npos) << read;
  // A read takes a sim_config too (its first validator's host_data, its genvm_datetime), checked.
  std::string read2 = serve.call("gen_call", R"([{"type":"read","to":")" + contract + R"(","from":")" + eth::to_hex(me) +
                                                 R"(","data":")" + read_data +
                                                 R"(","sim_config":{"genvm_datetime":"2026-09-08T00:00:00Z"}}])");
  EXPECT_NE(read2.find("\"result\":\"" + paris_hex + "\""), std::string::npos) << read2;
  EXPECT_TRUE(has_code(serve.call("gen_call", R"([{"type":"read","to":")" + contract + R"(","data":")" + read_data +
                                                  R"(","sim_config":{"genvm_datetime":"noon"}}])"),
                       -32602));

  // The transaction's own validators: the leader's mock says Paris, the others' Lyon, and their
  // EqComparative mock says "not equivalent": no majority in any round.
  auto sim_validator = [](const std::string& answer) {
    return R"({"stake":1,"provider":"mock","model":"mock","config":{},"plugin":"mock","plugin_config":{"mock_response":)"
           R"({"response":{"capital":")" + answer + R"("},"eq_principle_prompt_comparative":{"":false}}}})";
  };
  const std::string sim_config = R"({"validators":[)" + sim_validator("Paris") + "," + sim_validator("Lyon") + "," +
                                 sim_validator("Lyon") + R"(],"genvm_datetime":"2026-09-08T00:00:00Z"})";
  eth::Bytes ask2 = sign_legacy(k, 2, eth::kStudioConsensusMain,
                                add_transaction(me, *contract_addr, {}, ask_entry("And the capital of France?")));
  std::string queued = serve.call("eth_sendRawTransaction", "[" + quoted(eth::to_hex(ask2)) + "," + sim_config + "]");
  ASSERT_NE(queued.find("\"result\":\"0x"), std::string::npos) << queued;
  ASSERT_NE(serve.decided(eth::to_hex(keccak256(ask2))), "TIMEOUT");
  std::string tx2 = serve.call("eth_getTransactionByHash", "[" + quoted(eth::to_hex(keccak256(ask2))) + "]");
  EXPECT_NE(tx2.find("\"accepted\":false"), std::string::npos) << tx2;
  EXPECT_EQ(tx2.find("\"accepted\":true"), std::string::npos) << tx2;
  EXPECT_NE(tx2.find("\"vote\":\"disagree\""), std::string::npos) << tx2;  // their mocks differed: no error
  EXPECT_EQ(tx2.find("\"vote\":\"error\""), std::string::npos) << tx2;
  // examples/render.wasm reads a number off a page every node renders from its web mock (no
  // browser, no network): 4217 is stored.
  const std::string render_wasm = build + "/examples/render.wasm";
  std::ifstream rin(render_wasm, std::ios::binary);
  eth::Bytes rcode((std::istreambuf_iterator<char>(rin)), std::istreambuf_iterator<char>());
  eth::Bytes rdeploy = sign_legacy(k, 3, eth::kStudioConsensusMain, add_transaction(me, {}, rcode));
  ASSERT_NE(serve.call("eth_sendRawTransaction", "[" + quoted(eth::to_hex(rdeploy)) + "]").find("\"result\":\"0x"),
            std::string::npos);
  ASSERT_NE(serve.decided(eth::to_hex(keccak256(rdeploy))), "TIMEOUT");
  const std::string page_reader =
      field(result_of(serve.call("eth_getTransactionByHash", "[" + quoted(eth::to_hex(keccak256(rdeploy))) + "]")), "to_address");
  auto page_reader_addr = eth::parse_address(page_reader);
  ASSERT_TRUE(page_reader_addr.ok());
  calldata::Value fetch(calldata::Value::Map{{"", calldata::Value("fetch")},
                                             {"args", calldata::Value(calldata::Value::Array{calldata::Value("https://example.com/price")})}});
  eth::Bytes rcall = sign_legacy(k, 4, eth::kStudioConsensusMain, add_transaction(me, *page_reader_addr, {}, fetch));
  ASSERT_NE(serve.call("eth_sendRawTransaction", "[" + quoted(eth::to_hex(rcall)) + "]").find("\"result\":\"0x"),
            std::string::npos);
  ASSERT_NE(serve.decided(eth::to_hex(keccak256(rcall))), "TIMEOUT");
  std::string rtx = serve.call("eth_getTransactionByHash", "[" + quoted(eth::to_hex(keccak256(rcall))) + "]");
  EXPECT_NE(rtx.find("\"accepted\":true"), std::string::npos) << rtx;
  const std::string n_hex = eth::to_hex(calldata::encode(calldata::Value(BigInt(4217)))).substr(2);
  std::string value_data = eth::to_hex(eth::rlp_list([] {
    eth::Bytes items;
    eth::rlp_append_string(items, calldata::encode(calldata::Value(calldata::Value::Map{{"", calldata::Value("value")}})));
    eth::rlp_append_string(items, eth::Bytes{});
    return items;
  }()));
  std::string value = serve.call("gen_call", R"([{"type":"read","to":")" + page_reader + R"(","data":")" + value_data + R"("}])");
  EXPECT_NE(value.find("\"result\":\"" + n_hex + "\""), std::string::npos) << value << " " << rtx.substr(0, 3000);

  // A bad sim_config is refused before anything is queued.
  eth::Bytes ask3 = sign_legacy(k, 5, eth::kStudioConsensusMain, add_transaction(me, *contract_addr, {}, ask_entry("q")));
  EXPECT_TRUE(has_code(serve.call("eth_sendRawTransaction", "[" + quoted(eth::to_hex(ask3)) + R"(,{"genvm_datetime":"noon"}])"),
                       -32602));
}

}  // namespace
}  // namespace genvm::node::serve
