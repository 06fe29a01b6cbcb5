// The differential test against the clients (ctest eth_interop, label integration):
// tests/interop/eth_vectors.mjs signs transactions with viem and genlayer-js and writes what they
// put in; every vector must decode here to exactly that. Run alone (the unit label) it skips,
// naming the variable the ctest sets.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "common/json.h"
#include "eth/eth.h"
#include "eth/test_util.h"

namespace genvm::eth {
namespace {

using testing::hex;

std::string str(const JsonValue& v, const char* key) {
  const JsonValue* m = v.find(key);
  return m != nullptr && m->is_string() ? m->text() : std::string("<missing ") + key + ">";
}

std::uint64_t num(const JsonValue& v, const char* key) {
  const JsonValue* m = v.find(key);
  auto n = m != nullptr ? m->as_u64() : std::nullopt;
  EXPECT_TRUE(n.has_value()) << key;
  return n.value_or(~std::uint64_t{0});
}

bool is_null(const JsonValue& v, const char* key) {
  const JsonValue* m = v.find(key);
  return m == nullptr || m->kind() == JsonValue::Kind::kNull;
}

std::string lower_addr(const Address& a) { return to_hex(ByteView(a)); }

TEST(EthInterop, ClientVectors) {
  const char* path = std::getenv("GENVM_ETH_VECTORS");
  if (path == nullptr) GTEST_SKIP() << "GENVM_ETH_VECTORS is not set (ctest eth_interop makes the file and sets it)";
  std::ifstream f(path);
  ASSERT_TRUE(f) << "cannot read " << path;
  std::stringstream ss;
  ss << f.rdbuf();
  auto doc = parse_json(ss.str());
  ASSERT_TRUE(doc.ok()) << doc.error().to_string();
  const JsonValue* vectors = doc->find("vectors");
  ASSERT_NE(vectors, nullptr);
  ASSERT_GE(vectors->items().size(), 12u) << "too few vectors: the generator failed quietly?";
  std::size_t legacy = 0, typed = 0, v6 = 0, deploys = 0, logs = 0;
  for (const JsonValue& v : vectors->items()) {
    SCOPED_TRACE(str(v, "name"));
    const Bytes raw = hex(str(v, "raw"));
    auto sub = decode_submission(raw);
    ASSERT_TRUE(sub.ok()) << sub.error().to_string();
    const SignedTx& tx = sub->tx;
    EXPECT_EQ(to_hex(tx.hash), str(v, "hash"));
    EXPECT_EQ(lower_addr(tx.sender), str(v, "sender"));
    EXPECT_EQ(static_cast<std::uint64_t>(tx.type), num(v, "type"));
    EXPECT_EQ(tx.chain_id.value_or(0), num(v, "chainId"));
    EXPECT_EQ(tx.nonce, num(v, "nonce"));
    EXPECT_EQ(tx.gas_limit, num(v, "gas"));
    EXPECT_EQ(to_hex(tx.gas_price), str(v, "gasPrice"));
    EXPECT_EQ(to_hex(tx.max_fee_per_gas), str(v, "maxFeePerGas"));
    EXPECT_EQ(to_hex(tx.max_priority_fee_per_gas), str(v, "maxPriorityFeePerGas"));
    ASSERT_TRUE(tx.to.has_value());
    EXPECT_EQ(lower_addr(*tx.to), str(v, "to"));
    EXPECT_EQ(to_hex(tx.value), str(v, "value"));
    EXPECT_EQ(to_hex(tx.data), str(v, "data"));
    EXPECT_EQ(tx.access_list_entries, num(v, "accessListEntries"));
    (tx.type == TxType::legacy ? legacy : typed)++;

    const JsonValue* add = v.find("add");
    ASSERT_NE(add, nullptr);
    EXPECT_EQ(lower_addr(sub->call.sender), str(*add, "sender"));
    EXPECT_EQ(lower_addr(sub->call.recipient), str(*add, "recipient"));
    EXPECT_EQ(sub->call.num_of_initial_validators, num(*add, "numOfInitialValidators"));
    EXPECT_EQ(sub->call.max_rotations, num(*add, "maxRotations"));
    EXPECT_EQ(to_hex(sub->call.tx_data), str(*add, "txData"));
    const bool six = num(*add, "form") == 6;
    EXPECT_EQ(sub->call.valid_until.has_value(), six);
    if (six) {
      EXPECT_EQ(*sub->call.valid_until, num(*add, "validUntil"));
      ++v6;
    }

    const JsonValue* gen = v.find("gen");
    ASSERT_NE(gen, nullptr);
    const JsonValue* deploy = gen->find("deploy");
    ASSERT_NE(deploy, nullptr);
    EXPECT_EQ(sub->gen.deploy, deploy->as_bool());
    if (sub->gen.deploy) {
      EXPECT_EQ(to_hex(sub->gen.code), str(*gen, "code"));
      ++deploys;
    }
    EXPECT_EQ(to_hex(sub->gen.calldata), str(*gen, "calldata"));
    EXPECT_EQ(static_cast<std::uint64_t>(sub->gen.mode), num(*gen, "mode"));

    if (!is_null(v, "log")) {
      const JsonValue& log = *v.find("log");
      auto id = hex(str(log, "txId"));
      ASSERT_EQ(id.size(), 32u);
      Hash32 tx_id;
      std::copy(id.begin(), id.end(), tx_id.begin());
      auto recipient = parse_address(str(log, "recipient"));
      ASSERT_TRUE(recipient.ok());
      Log ours = new_transaction_log(kStudioConsensusMain, tx_id, *recipient, tx.sender);
      const JsonValue* topics = log.find("topics");
      ASSERT_NE(topics, nullptr);
      ASSERT_EQ(topics->items().size(), ours.topics.size());
      for (std::size_t i = 0; i < ours.topics.size(); ++i) {
        EXPECT_EQ(to_hex(ours.topics[i]), topics->items()[i].text()) << "topic " << i;
      }
      ++logs;
    }
  }
  // Every kind the generator makes must be present, or the comparison proves less than it says.
  EXPECT_GT(legacy, 0u);
  EXPECT_GT(typed, 0u);
  EXPECT_GT(v6, 0u);
  EXPECT_GT(deploys, 0u);
  EXPECT_GT(logs, 0u);
}

}  // namespace
}  // namespace genvm::eth
