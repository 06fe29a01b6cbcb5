// JSON-RPC 2.0 over one HTTP body (genvm-node serve): parses the envelope, dispatches each call
// to a registered method with its positional params, and writes the reply, single or batch.
//
//   Rpc rpc;
//   rpc.add("ping", [](const Params&) -> RpcResult { return json_string("OK"); });
//   std::optional<std::string> reply = rpc.handle(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
//
// Errors: -32700 the body is not JSON; -32600 not a request object (or an empty or oversized
// batch); -32601 unknown method; -32602 params that are not an array (by-name params are not
// served) or that a method refuses; methods return their own codes (Studio's -32000 family).
// A request without "id" is a notification: it runs and gets no reply entry.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/result.h"

namespace genvm::node::serve {

inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kServerError = -32000;  // Studio's application errors (execution failed, not found, ...)

// Calls in one batch: a larger batch is one -32600 error.
inline constexpr std::size_t kMaxBatch = 100;

struct RpcError {
  int code = kInternalError;
  std::string message;
  std::string data_json;  // the error's "data", already JSON; empty: none
};

using Params = std::vector<JsonValue>;
// A method's result as JSON text.
using RpcResult = Result<std::string, RpcError>;
using Method = std::function<RpcResult(const Params&)>;

inline RpcError rpc_error(int code, std::string message, std::string data_json = {}) {
  return RpcError{code, std::move(message), std::move(data_json)};
}
std::string json_string(std::string_view s);  // s as a JSON string literal

class Rpc {
 public:
  void add(std::string name, Method m) { methods_[std::move(name)] = std::move(m); }
  // The reply body; nullopt when the body held only notifications (nothing to send).
  std::optional<std::string> handle(std::string_view body) const;

 private:
  // One request object's reply, or nullopt for a notification.
  std::optional<std::string> call_one(const JsonValue& req) const;
  std::map<std::string, Method, std::less<>> methods_;
};

std::string error_reply(const std::string& id_json, const RpcError& e);

}  // namespace genvm::node::serve
