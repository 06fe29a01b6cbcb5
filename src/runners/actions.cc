// runner.json to an Action tree (docs/schemas/runners.json).
#include "common/json.h"
#include "runners/errors.h"
#include "runners/runners.h"

namespace genvm::runners {

namespace {

Result<std::string> get_string(const JsonValue& v, std::string_view what) {
  if (!v.is_string()) return malformed(std::string(what) + " must be a string");
  if (v.text().find('\0') != std::string::npos) return malformed(std::string(what) + " contains a NUL octet");
  return v.text();
}

// An object with exactly the named string members.
Result<void> expect_keys(const JsonValue& v, std::string_view what,
                         std::initializer_list<std::string_view> keys) {
  if (!v.is_object()) return malformed(std::string(what) + " must be an object");
  for (const auto& [k, _] : v.members()) {
    bool known = false;
    for (auto key : keys) known = known || k == key;
    if (!known) return malformed(std::string(what) + " has an unknown field \"" + k + "\"");
  }
  for (auto key : keys) {
    if (!v.find(key)) return malformed(std::string(what) + " lacks \"" + std::string(key) + "\"");
  }
  return {};
}

Result<Action> parse_action(const JsonValue& v, std::size_t depth, bool top) {
  if (depth > kMaxActionDepth) return malformed("runner.json nests deeper than 128 actions");
  if (!v.is_object()) return malformed("an action must be an object");
  const JsonValue* body = nullptr;
  std::string kind;
  for (const auto& [k, value] : v.members()) {
    if (k == "$schema" && top) {
      if (!value.is_string()) return malformed("$schema must be a string");
      continue;
    }
    if (body) return malformed("an action has more than one field (\"" + kind + "\", \"" + k + "\")");
    body = &value;
    kind = k;
  }
  if (!body) return malformed("an action object is empty");
  Action a;
  const JsonValue& b = *body;
  if (kind == "AddEnv" || kind == "MapFile") {
    bool env = kind == "AddEnv";
    const char* k1 = env ? "name" : "file";
    const char* k2 = env ? "val" : "to";
    if (auto s = expect_keys(b, kind, {k1, k2}); !s) return s.take_error();
    auto first = get_string(*b.find(k1), kind + "." + k1);
    if (!first) return first.take_error();
    auto second = get_string(*b.find(k2), kind + "." + k2);
    if (!second) return second.take_error();
    a.kind = env ? Action::Kind::kAddEnv : Action::Kind::kMapFile;
    a.first = std::move(*first);
    a.second = std::move(*second);
    return a;
  }
  if (kind == "SetArgs") {
    if (b.kind() != JsonValue::Kind::kArray) return malformed("SetArgs must be an array of strings");
    a.kind = Action::Kind::kSetArgs;
    for (const auto& item : b.items()) {
      auto s = get_string(item, "SetArgs item");
      if (!s) return s.take_error();
      a.args.push_back(std::move(*s));
    }
    return a;
  }
  if (kind == "LinkWasm" || kind == "StartWasm" || kind == "Depends") {
    auto s = get_string(b, kind);
    if (!s) return s.take_error();
    a.kind = kind == "LinkWasm" ? Action::Kind::kLinkWasm
             : kind == "StartWasm" ? Action::Kind::kStartWasm : Action::Kind::kDepends;
    if (a.kind == Action::Kind::kDepends) {
      if (auto id = parse_runner_id(*s); !id) return id.take_error();
    }
    a.first = std::move(*s);
    return a;
  }
  if (kind == "Seq") {
    if (b.kind() != JsonValue::Kind::kArray) return malformed("Seq must be an array of actions");
    a.kind = Action::Kind::kSeq;
    for (const auto& item : b.items()) {
      auto child = parse_action(item, depth + 1, false);
      if (!child) return child.take_error();
      a.children.push_back(std::move(*child));
    }
    return a;
  }
  if (kind == "When" || kind == "With") {
    bool when = kind == "When";
    const char* k1 = when ? "cond" : "runner";
    if (auto s = expect_keys(b, kind, {k1, "action"}); !s) return s.take_error();
    auto first = get_string(*b.find(k1), kind + "." + k1);
    if (!first) return first.take_error();
    if (when) {
      if (*first != "det" && *first != "nondet") return malformed("When.cond must be \"det\" or \"nondet\"");
      a.det = *first == "det";
    } else if (auto id = parse_runner_id(*first); !id) {
      return id.take_error();
    }
    auto child = parse_action(*b.find("action"), depth + 1, false);
    if (!child) return child.take_error();
    a.kind = when ? Action::Kind::kWhen : Action::Kind::kWith;
    a.first = std::move(*first);
    a.children.push_back(std::move(*child));
    return a;
  }
  return malformed("unknown action \"" + kind.substr(0, 64) + "\"");
}

}  // namespace

Result<Action> parse_runner_json(std::string_view text) {
  auto json = parse_json(text);
  if (!json) return malformed("runner.json: " + json.error().to_string());
  return parse_action(*json, 1, true);
}

}  // namespace genvm::runners
