// GenLayer's txData: the RLP list inside addTransaction's _txData argument.
#include <string>

#include "eth/eth.h"

namespace genvm::eth {

Result<GenTxData> decode_gen_tx_data(ByteView tx_data, bool deploy) {
  RlpLimits limits;
  limits.max_depth = 1;  // a list of strings; a nested list is refused below as a shape error
  limits.max_nodes = 16;
  auto top = rlp_decode(tx_data, limits);
  if (!top) {
    Error e = top.error();
    if (e.errc == static_cast<int>(Errc::rlp_too_deep) || e.errc == static_cast<int>(Errc::rlp_too_many)) {
      return make_eth_error(Errc::txdata_shape, "txData must be a flat list of at most 3 strings");
    }
    e.message = "txData: " + e.message;
    return e;
  }
  const std::size_t fixed = deploy ? 2 : 1;
  const char* form = deploy ? "a deploy's txData is [code, calldata, mode?]" : "a call's txData is [calldata, mode?]";
  if (!top->is_list || top->children.size() < fixed || top->children.size() > fixed + 1) {
    return make_eth_error(Errc::txdata_shape, std::string(form) + ", this has " +
                                                  (top->is_list ? std::to_string(top->children.size()) + " items"
                                                                : std::string("no list")));
  }
  for (const RlpNode& n : top->children) {
    if (n.is_list) return make_eth_error(Errc::txdata_shape, std::string(form) + ": an item is a list, not a string");
  }
  GenTxData d;
  d.deploy = deploy;
  std::size_t i = 0;
  if (deploy) {
    const ByteView code = top->children[i++].payload;
    d.code.assign(code.begin(), code.end());
  }
  const ByteView calldata = top->children[i++].payload;
  d.calldata.assign(calldata.begin(), calldata.end());
  if (i < top->children.size()) {
    // genlayer-js's leaderOnly (viem toHex(bool): 0x0 / 0x1, one octet each) and Studio's
    // execution mode integer (toHex(n): 00, 01, 02); a canonical RLP integer 0 (empty) too.
    const ByteView flag = top->children[i].payload;
    d.mode_given = true;
    if (flag.empty() || (flag.size() == 1 && flag[0] == 0)) {
      d.mode = ExecutionMode::normal;
    } else if (flag.size() == 1 && flag[0] == 1) {
      d.mode = ExecutionMode::leader_only;
    } else if (flag.size() == 1 && flag[0] == 2) {
      d.mode = ExecutionMode::leader_self_validator;
    } else {
      return make_eth_error(Errc::txdata_bad_mode, "the execution mode is " + to_hex(flag) +
                                                       ", expected empty, 0x00 (normal), 0x01 (leader only) or 0x02 "
                                                       "(leader self-validator)");
    }
  }
  return d;
}

Bytes encode_gen_tx_data(const GenTxData& d) {
  Bytes items;
  if (d.deploy) rlp_append_string(items, d.code);
  rlp_append_string(items, d.calldata);
  if (d.mode_given) {
    const std::uint8_t flag = static_cast<std::uint8_t>(d.mode);
    rlp_append_string(items, ByteView(&flag, 1));
  }
  return rlp_list(items);
}

}  // namespace genvm::eth
