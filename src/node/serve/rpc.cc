#include "node/serve/rpc.h"

#include <exception>

namespace genvm::node::serve {

std::string json_string(std::string_view s) {
  JsonWriter w;
  w.string(s);
  return w.take();
}

std::string error_reply(const std::string& id_json, const RpcError& e) {
  JsonWriter w;
  w.begin_object().key("jsonrpc").string("2.0").key("error").begin_object();
  w.key("code").number(e.code).key("message").string(e.message);
  if (!e.data_json.empty()) w.key("data").raw(e.data_json);
  w.end_object().key("id").raw(id_json).end_object();
  return w.take();
}

namespace {

std::string result_reply(const std::string& id_json, const std::string& result_json) {
  JsonWriter w;
  w.begin_object().key("jsonrpc").string("2.0").key("result").raw(result_json).key("id").raw(id_json).end_object();
  return w.take();
}

// The id echoed back: a string, a number or null are valid ids; anything else is answered with
// null, as the request is invalid.
bool valid_id(const JsonValue& id) {
  return id.kind() == JsonValue::Kind::kString || id.kind() == JsonValue::Kind::kNumber ||
         id.kind() == JsonValue::Kind::kNull;
}

std::string id_text(const JsonValue* id) {
  if (!id || !valid_id(*id)) return "null";
  JsonWriter w;
  write_json(w, *id);
  return w.take();
}

}  // namespace

std::optional<std::string> Rpc::call_one(const JsonValue& req) const {
  if (!req.is_object()) return error_reply("null", rpc_error(kInvalidRequest, "Invalid Request"));
  const JsonValue* id = req.find("id");
  const std::string idj = id_text(id);
  const JsonValue* version = req.find("jsonrpc");
  const JsonValue* method = req.find("method");
  if ((id && !valid_id(*id)) || !version || !version->is_string() || version->text() != "2.0" || !method ||
      !method->is_string()) {
    return error_reply(idj, rpc_error(kInvalidRequest, "Invalid Request"));
  }
  const JsonValue* params = req.find("params");
  Params args;
  if (params && params->kind() == JsonValue::Kind::kArray) {
    args = params->items();
  } else if (params && params->kind() != JsonValue::Kind::kNull) {
    if (!id) return std::nullopt;
    return error_reply(idj, rpc_error(kInvalidParams, "params must be an array (positional)"));
  }
  auto it = methods_.find(method->text());
  if (it == methods_.end()) {
    if (!id) return std::nullopt;
    return error_reply(idj, rpc_error(kMethodNotFound, "Method not found: " + method->text()));
  }
  RpcResult r = rpc_error(kInternalError, "Internal error");
  try {
    r = it->second(args);
  } catch (const std::exception& e) {  // an allocation failure in a method: one error, the server stays up
    r = rpc_error(kInternalError, std::string("Internal error: ") + e.what());
  }
  if (!id) return std::nullopt;
  return r ? result_reply(idj, *r) : error_reply(idj, r.error());
}

std::optional<std::string> Rpc::handle(std::string_view body) const {
  auto parsed = parse_json(body);
  if (!parsed) return error_reply("null", rpc_error(kParseError, "Parse error", json_string(parsed.error().message)));
  if (parsed->kind() != JsonValue::Kind::kArray) return call_one(*parsed);
  const auto& items = parsed->items();
  if (items.empty()) return error_reply("null", rpc_error(kInvalidRequest, "Invalid Request: an empty batch"));
  if (items.size() > kMaxBatch) {
    return error_reply("null", rpc_error(kInvalidRequest, "Invalid Request: a batch holds at most " +
                                                              std::to_string(kMaxBatch) + " calls"));
  }
  std::string out = "[";
  bool any = false;
  for (const auto& item : items) {
    auto r = call_one(item);
    if (!r) continue;
    if (any) out += ',';
    out += *r;
    any = true;
  }
  if (!any) return std::nullopt;
  return out + "]";
}

}  // namespace genvm::node::serve
