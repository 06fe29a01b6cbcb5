#include "common/module/protocol.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <sys/socket.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>

namespace genvm::module {

namespace {

Error bad(std::string what) { return make_error("bad_payload", std::move(what)); }
Error protocol(std::string what) { return make_error("module_protocol", std::move(what)); }

bool is_u256(const Value& v) { return v.is_int() && !v.as_int().is_negative() && v.as_int().bit_length() <= 256; }

// A closed map: every key in `allowed`, every key in `required` present.
Result<const Value::Map*> closed_map(const Value& v, std::string_view what, std::initializer_list<std::string_view> allowed,
                                     std::initializer_list<std::string_view> required) {
  if (!v.is_map()) return bad(std::string(what) + " is not a map");
  for (const auto& [k, _] : v.as_map()) {
    bool known = false;
    for (auto a : allowed) known = known || k == a;
    if (!known) return bad(std::string(what) + ": unknown field `" + k + "`");
  }
  for (auto r : required) {
    if (!v.find(r)) return bad(std::string(what) + ": missing field `" + std::string(r) + "`");
  }
  return &v.as_map();
}

Result<std::string> string_field(const Value& m, std::string_view key, std::string_view what) {
  const Value* f = m.find(key);
  if (!f || !f->is_string()) return bad(std::string(what) + "." + std::string(key) + " is not a string");
  return f->as_string();
}

// A single-key map {"Variant": payload}.
Result<std::pair<std::string, const Value*>> variant_of(const Value& v) {
  if (!v.is_map() || v.as_map().size() != 1) return protocol("expected a single-key map (an enum variant)");
  const auto& [k, val] = *v.as_map().begin();
  return std::pair<std::string, const Value*>(k, &val);
}

std::optional<std::uint64_t> parse_u64_digits(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  std::uint64_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    std::uint64_t d = std::uint64_t(c - '0');
    if (n > (UINT64_MAX - d) / 10) return std::nullopt;
    n = n * 10 + d;
  }
  return n;
}

struct TemplateInfo {
  Template kind;
  std::string_view name;
  std::vector<std::string_view> fields;
};
const std::vector<TemplateInfo>& templates() {
  static const std::vector<TemplateInfo> t = {
      {Template::kEqComparative, "EqComparative", {"leader_answer", "principle", "validator_answer"}},
      {Template::kEqNonComparativeValidator, "EqNonComparativeValidator", {"criteria", "input", "output", "task"}},
      {Template::kEqNonComparativeLeader, "EqNonComparativeLeader", {"criteria", "input", "task"}},
  };
  return t;
}

const char* render_mode_name(RenderMode m) {
  switch (m) {
    case RenderMode::kText: return "text";
    case RenderMode::kHtml: return "html";
    case RenderMode::kScreenshot: return "screenshot";
  }
  return "text";
}

Result<std::uint32_t> size_limit_of(const Value& v) {
  auto n = v.is_int() ? v.as_int().to_uint64() : std::nullopt;
  if (!n || *n > UINT32_MAX) return protocol("size_limit is not a u32");
  return static_cast<std::uint32_t>(*n);
}

Result<Value> yaml_json_to_value(const YAML::Node& n, int depth) {
  if (depth > 128) return make_error("bad_host_data", "nested deeper than 128");
  switch (n.Type()) {
    case YAML::NodeType::Null:
      return Value();
    case YAML::NodeType::Map: {
      Value::Map m;
      for (const auto& kv : n) {
        if (!kv.first.IsScalar()) return make_error("bad_host_data", "a key is not a string");
        auto v = yaml_json_to_value(kv.second, depth + 1);
        if (!v) return v;
        m[kv.first.Scalar()] = std::move(*v);
      }
      return Value(std::move(m));
    }
    case YAML::NodeType::Sequence: {
      Value::Array a;
      for (const auto& item : n) {
        auto v = yaml_json_to_value(item, depth + 1);
        if (!v) return v;
        a.push_back(std::move(*v));
      }
      return Value(std::move(a));
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (n.Tag() == "!") return Value(s);  // quoted: a JSON string
      if (s == "null") return Value();
      if (s == "true") return Value(true);
      if (s == "false") return Value(false);
      auto i = BigInt::parse_decimal(s);
      if (i) return Value(std::move(*i));
      return make_error("bad_host_data", "`" + s + "` is not a JSON integer, string, bool or null");
    }
    default:
      return make_error("bad_host_data", "not JSON");
  }
}

}  // namespace

// ---- frames

Bytes frame(std::span<const std::uint8_t> body) {
  std::uint32_t n = static_cast<std::uint32_t>(body.size());
  Bytes out(4 + body.size());
  out[0] = std::uint8_t(n >> 24);
  out[1] = std::uint8_t(n >> 16);
  out[2] = std::uint8_t(n >> 8);
  out[3] = std::uint8_t(n);
  if (!body.empty()) std::memcpy(out.data() + 4, body.data(), body.size());
  return out;
}

std::uint32_t frame_length(const std::uint8_t h[4]) {
  return std::uint32_t(h[0]) << 24 | std::uint32_t(h[1]) << 16 | std::uint32_t(h[2]) << 8 | h[3];
}

namespace {
// Reads exactly n bytes; returns the count read before EOF (n when complete), -1 on error.
ssize_t read_full(int fd, std::uint8_t* p, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  return static_cast<ssize_t>(got);
}
}  // namespace

Result<std::optional<Bytes>> read_frame(int fd) {
  std::uint32_t dropped = 0;
  return read_frame(fd, kMaxFrame, &dropped);
}

Result<std::optional<Bytes>> read_frame(int fd, std::uint32_t limit, std::uint32_t* dropped) {
  *dropped = 0;
  std::uint8_t h[4];
  ssize_t got = read_full(fd, h, 4);
  if (got == 0) return std::optional<Bytes>();
  if (got < 0) return make_error("module_io", std::strerror(errno));
  if (got != 4) return make_error("module_io", "stream ended inside a frame header");
  std::uint32_t n = frame_length(h);
  if (n > kMaxFrame) return make_error("module_oversized", "frame of " + std::to_string(n) + " bytes");
  if (n > limit) {
    std::uint8_t sink[64 * 1024];
    for (std::uint32_t left = n; left > 0;) {
      std::size_t piece = std::min<std::size_t>(left, sizeof(sink));
      got = read_full(fd, sink, piece);
      if (got < 0) return make_error("module_io", std::strerror(errno));
      if (static_cast<std::size_t>(got) != piece) return make_error("module_io", "stream ended inside a frame");
      left -= static_cast<std::uint32_t>(piece);
    }
    *dropped = n;
    return std::optional<Bytes>(Bytes());
  }
  Bytes body(n);
  got = read_full(fd, body.data(), n);
  if (got < 0) return make_error("module_io", std::strerror(errno));
  if (static_cast<std::uint32_t>(got) != n) return make_error("module_io", "stream ended inside a frame");
  return std::optional<Bytes>(std::move(body));
}

Status write_frame(int fd, std::span<const std::uint8_t> body) {
  if (body.size() > kMaxFrame) return make_error("module_oversized", "frame of " + std::to_string(body.size()) + " bytes");
  Bytes f = frame(body);
  std::size_t done = 0;
  while (done < f.size()) {
    ssize_t w = ::send(fd, f.data() + done, f.size() - done, MSG_NOSIGNAL);
    if (w < 0 && errno == ENOTSOCK) w = ::write(fd, f.data() + done, f.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return make_error("module_io", std::strerror(errno));
    done += static_cast<std::size_t>(w);
  }
  return {};
}

// ---- hello

std::string_view role_name(Role r) { return r == Role::kLeader ? "Leader" : "Validator"; }

Value hello_value(const Hello& h) {
  Value::Map gas;
  for (const auto& [k, v] : h.gas_data) gas[k] = Value(v);
  return Value::map({{"gas_data", Value(std::move(gas))},
                     {"genvm_id", Value(h.genvm_id)},
                     {"host_data", Value(h.host_data)},
                     {"initial_time_units_allocation", Value(h.initial_time_units_allocation)},
                     {"role", Value(std::string(role_name(h.role)))}});
}

Result<Hello> parse_hello(const Value& v) {
  // gas_data has a serde default; the calldata derive reads it as a required field, so do we.
  auto m = closed_map(v, "hello", {"gas_data", "genvm_id", "host_data", "initial_time_units_allocation", "role"},
                      {"gas_data", "genvm_id", "host_data", "initial_time_units_allocation", "role"});
  if (!m) return protocol(m.error().message);
  Hello h;
  auto id = v.find("genvm_id")->is_int() ? v.find("genvm_id")->as_int().to_uint64() : std::nullopt;
  if (!id) return protocol("hello.genvm_id is not a u64");
  h.genvm_id = *id;
  const Value* role = v.find("role");
  if (!role->is_string() || (role->as_string() != "Leader" && role->as_string() != "Validator")) {
    return protocol("hello.role is not Leader or Validator");
  }
  h.role = role->as_string() == "Leader" ? Role::kLeader : Role::kValidator;
  const Value* hd = v.find("host_data");
  if (!hd->is_map()) return protocol("hello.host_data is not a map");
  for (const char* k : {"node_address", "tx_id"}) {
    const Value* f = hd->find(k);
    if (!f || !f->is_string()) return protocol(std::string("hello.host_data.") + k + " is not a string");
  }
  h.host_data = hd->as_map();
  const Value* gas = v.find("gas_data");
  if (!gas->is_map()) return protocol("hello.gas_data is not a map");
  for (const auto& [k, val] : gas->as_map()) {
    if (!val.is_string()) return protocol("hello.gas_data." + k + " is not a string");
    h.gas_data[k] = val.as_string();
  }
  auto units = v.find("initial_time_units_allocation")->is_int()
                   ? v.find("initial_time_units_allocation")->as_int().to_uint64()
                   : std::nullopt;
  if (!units || *units > UINT32_MAX) return protocol("hello.initial_time_units_allocation is not a u32");
  h.initial_time_units_allocation = static_cast<std::uint32_t>(*units);
  return h;
}

Result<Value::Map> host_data_from_json(std::string_view json) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(json));
  } catch (const YAML::Exception& e) {
    return make_error("bad_host_data", std::string("not JSON: ") + e.what());
  }
  if (!root.IsMap()) return make_error("bad_host_data", "host_data is not a JSON object");
  auto v = yaml_json_to_value(root, 0);
  if (!v) return v.take_error();
  for (const char* k : {"node_address", "tx_id"}) {
    const Value* f = v->find(k);
    if (!f || !f->is_string()) return make_error("bad_host_data", std::string("host_data.") + k + " is not a string");
  }
  return std::move(v->as_map());
}

// ---- LLM payloads

std::string_view template_name(Template t) {
  for (const auto& info : templates()) {
    if (info.kind == t) return info.name;
  }
  return "";
}

Result<PromptPayload> parse_prompt_payload(const Value& v) {
  auto m = closed_map(v, "prompt payload", {"response_format", "prompt", "images"}, {"prompt", "images"});
  if (!m) return m.take_error();
  PromptPayload p;
  if (const Value* f = v.find("response_format")) {
    if (!f->is_string() || (f->as_string() != "text" && f->as_string() != "json")) {
      return bad("response_format is not \"text\" or \"json\"");
    }
    p.response_format = f->as_string() == "json" ? OutputFormat::kJson : OutputFormat::kText;
  }
  auto prompt = string_field(v, "prompt", "prompt payload");
  if (!prompt) return prompt.take_error();
  p.prompt = std::move(*prompt);
  const Value* images = v.find("images");
  if (!images->is_array()) return bad("images is not an array");
  for (const Value& img : images->as_array()) {
    if (!img.is_bytes()) return bad("an image is not bytes");
    p.images.push_back(img.as_bytes());
  }
  return p;
}

Result<PromptTemplatePayload> parse_template_payload(const Value& v) {
  if (!v.is_map()) return bad("template payload is not a map");
  auto tag = string_field(v, "template", "template payload");
  if (!tag) return tag.take_error();
  for (const auto& info : templates()) {
    if (info.name != *tag) continue;
    PromptTemplatePayload p;
    p.kind = info.kind;
    if (v.as_map().size() != info.fields.size() + 1) return bad(std::string(info.name) + ": fields differ from the template's");
    for (auto f : info.fields) {
      auto s = string_field(v, f, info.name);
      if (!s) return s.take_error();
      p.fields[std::string(f)] = std::move(*s);
    }
    return p;
  }
  return bad("unknown template `" + *tag + "`");
}

Value payload_value(const PromptPayload& p) {
  Value::Array images;
  for (const Bytes& b : p.images) images.emplace_back(b);
  return Value::map({{"images", Value(std::move(images))},
                     {"prompt", Value(p.prompt)},
                     {"response_format", Value(p.response_format == OutputFormat::kJson ? "json" : "text")}});
}

Value payload_value(const PromptTemplatePayload& p) {
  Value::Map m;
  for (const auto& [k, s] : p.fields) m[k] = Value(s);
  m["template"] = Value(std::string(template_name(p.kind)));
  return Value(std::move(m));
}

// ---- web payloads

Result<RenderPayload> parse_render_payload(const Value& v) {
  auto m = closed_map(v, "render payload", {"mode", "url", "wait_after_loaded"}, {"mode", "url", "wait_after_loaded"});
  if (!m) return m.take_error();
  RenderPayload p;
  auto mode = string_field(v, "mode", "render payload");
  if (!mode) return mode.take_error();
  if (*mode == "text") p.mode = RenderMode::kText;
  else if (*mode == "html") p.mode = RenderMode::kHtml;
  else if (*mode == "screenshot") p.mode = RenderMode::kScreenshot;
  else return bad("mode is not text, html or screenshot");
  auto url = string_field(v, "url", "render payload");
  if (!url) return url.take_error();
  p.url = std::move(*url);
  auto wait = string_field(v, "wait_after_loaded", "render payload");
  if (!wait) return wait.take_error();
  std::string_view w = *wait;
  std::optional<std::uint64_t> n;
  if (w.ends_with("ms")) {
    n = parse_u64_digits(w.substr(0, w.size() - 2));
  } else if (w.ends_with("s")) {
    n = parse_u64_digits(w.substr(0, w.size() - 1));
    if (n && *n > UINT64_MAX / 1000) n.reset();
    if (n) *n *= 1000;
  }
  if (!n) return bad("wait_after_loaded is not \"<n>s\" or \"<n>ms\"");
  p.wait_after_loaded = std::move(*wait);
  p.wait_after_loaded_ms = *n;
  return p;
}

Result<RequestPayload> parse_request_payload(const Value& v) {
  auto m = closed_map(v, "request payload", {"method", "url", "headers", "body", "sign"}, {"method", "url", "headers"});
  if (!m) return m.take_error();
  RequestPayload p;
  auto method = string_field(v, "method", "request payload");
  if (!method) return method.take_error();
  bool known = false;
  for (auto k : kRequestMethods) known = known || *method == k;
  if (!known) return bad("method `" + *method + "` is not one of GET POST HEAD PUT DELETE OPTIONS PATCH");
  p.method = std::move(*method);
  auto url = string_field(v, "url", "request payload");
  if (!url) return url.take_error();
  p.url = std::move(*url);
  const Value* headers = v.find("headers");
  if (!headers->is_map()) return bad("headers is not a map");
  for (const auto& [k, val] : headers->as_map()) {
    if (!val.is_bytes()) return bad("header `" + k + "` is not bytes");
    p.headers[k] = val.as_bytes();
  }
  if (const Value* body = v.find("body")) {
    if (body->is_bytes()) p.body = body->as_bytes();
    else if (!body->is_null()) return bad("body is not bytes or null");
  }
  if (const Value* sign = v.find("sign")) {
    if (!sign->is_bool()) return bad("sign is not a bool");
    p.sign = sign->as_bool();
  }
  return p;
}

Value payload_value(const RenderPayload& p) {
  return Value::map({{"mode", Value(render_mode_name(p.mode))},
                     {"url", Value(p.url)},
                     {"wait_after_loaded", Value(p.wait_after_loaded)}});
}

Value payload_value(const RequestPayload& p) {
  Value::Map headers;
  for (const auto& [k, b] : p.headers) headers[k] = Value(b);
  return Value::map({{"body", p.body ? Value(*p.body) : Value()},
                     {"headers", Value(std::move(headers))},
                     {"method", Value(p.method)},
                     {"sign", Value(p.sign)},
                     {"url", Value(p.url)}});
}

// ---- messages

Value llm_message_value(const LlmMessage& m) {
  bool prompt = std::holds_alternative<PromptPayload>(m.payload);
  Value payload = std::visit([](const auto& p) { return payload_value(p); }, m.payload);
  return Value::map({{prompt ? "Prompt" : "PromptTemplate",
                      Value::map({{"payload", std::move(payload)}, {"remaining_fuel_as_gen", Value(m.remaining_fuel_as_gen)}})}});
}

Value web_message_value(const WebMessage& m) {
  bool render = std::holds_alternative<RenderPayload>(m.payload);
  Value payload = std::visit([](const auto& p) { return payload_value(p); }, m.payload);
  return Value::map({{render ? "Render" : "Request", Value::array({std::move(payload), Value(m.size_limit)})}});
}

Result<LlmMessage> parse_llm_message(const Value& v) {
  auto var = variant_of(v);
  if (!var) return var.take_error();
  const auto& [name, body] = *var;
  if (name != "Prompt" && name != "PromptTemplate") return protocol("unknown LLM message `" + name + "`");
  auto m = closed_map(*body, name, {"payload", "remaining_fuel_as_gen"}, {"payload", "remaining_fuel_as_gen"});
  if (!m) return protocol(m.error().message);
  const Value* fuel = body->find("remaining_fuel_as_gen");
  if (!is_u256(*fuel)) return protocol("remaining_fuel_as_gen is not a u256");
  LlmMessage out;
  out.remaining_fuel_as_gen = fuel->as_int();
  if (name == "Prompt") {
    auto p = parse_prompt_payload(*body->find("payload"));
    if (!p) return protocol(p.error().message);
    out.payload = std::move(*p);
  } else {
    auto p = parse_template_payload(*body->find("payload"));
    if (!p) return protocol(p.error().message);
    out.payload = std::move(*p);
  }
  return out;
}

Result<WebMessage> parse_web_message(const Value& v) {
  auto var = variant_of(v);
  if (!var) return var.take_error();
  const auto& [name, body] = *var;
  if (name != "Render" && name != "Request") return protocol("unknown web message `" + name + "`");
  if (!body->is_array() || body->as_array().size() != 2) return protocol(name + " is not [payload, size_limit]");
  auto limit = size_limit_of(body->as_array()[1]);
  if (!limit) return limit.take_error();
  WebMessage out;
  out.size_limit = *limit;
  if (name == "Render") {
    auto p = parse_render_payload(body->as_array()[0]);
    if (!p) return protocol(p.error().message);
    out.payload = std::move(*p);
  } else {
    auto p = parse_request_payload(body->as_array()[0]);
    if (!p) return protocol(p.error().message);
    out.payload = std::move(*p);
  }
  return out;
}

// ---- answers

Answer Answer::user_error(std::vector<std::string> causes, Value::Map ctx) {
  Value::Array c;
  for (auto& s : causes) c.emplace_back(std::move(s));
  return {AnswerKind::kUserError, Value::map({{"causes", Value(std::move(c))}, {"ctx", Value(std::move(ctx))}})};
}

Value answer_value(const Answer& a) {
  const char* key = a.kind == AnswerKind::kOk ? "Ok" : a.kind == AnswerKind::kUserError ? "UserError" : "FatalError";
  return Value::map({{key, a.value}});
}

Result<Answer> parse_answer(const Value& v) {
  auto var = variant_of(v);
  if (!var) return var.take_error();
  const auto& [name, body] = *var;
  if (name == "Ok") return Answer{AnswerKind::kOk, *body};
  if (name == "UserError") return Answer{AnswerKind::kUserError, *body};
  if (name == "FatalError") {
    if (!body->is_string()) return protocol("FatalError's value is not a string");
    return Answer{AnswerKind::kFatalError, *body};
  }
  return protocol("unknown answer variant `" + name + "` (expected Ok, UserError or FatalError)");
}

Value prompt_answer_value(const PromptAnswer& a) {
  return Value::map({{"consumed_gen", Value(a.consumed_gen)}, {"data", a.data}});
}

Result<PromptAnswer> parse_prompt_answer(const Value& v) {
  auto m = closed_map(v, "prompt answer", {"consumed_gen", "data"}, {"consumed_gen", "data"});
  if (!m) return protocol(m.error().message);
  const Value* gen = v.find("consumed_gen");
  if (!is_u256(*gen)) return protocol("consumed_gen is not a u256");
  const Value* data = v.find("data");
  // PromptAnswerData, untagged: Text(String) | Object(map) | Bool.
  if (!data->is_string() && !data->is_map() && !data->is_bool()) return protocol("data is not text, a map or a bool");
  return PromptAnswer{*data, gen->as_int()};
}

Result<Value> check_render_answer(const Value& v) {
  auto var = variant_of(v);
  if (!var) return var.take_error();
  const auto& [name, body] = *var;
  if (name == "text") {
    if (!body->is_string()) return protocol("text answer is not a string");
  } else if (name == "image") {
    if (!body->is_bytes()) return protocol("image answer is not bytes");
  } else if (name == "response") {
    auto m = closed_map(*body, "response", {"body", "headers", "status"}, {"body", "headers", "status"});
    if (!m) return protocol(m.error().message);
    auto status = body->find("status")->is_int() ? body->find("status")->as_int().to_uint64() : std::nullopt;
    if (!status || *status > 0xffff) return protocol("response.status is not a u16");
    if (!body->find("body")->is_bytes()) return protocol("response.body is not bytes");
    const Value* headers = body->find("headers");
    if (!headers->is_map()) return protocol("response.headers is not a map");
    for (const auto& [k, h] : headers->as_map()) {
      if (!h.is_bytes()) return protocol("response header `" + k + "` is not bytes");
    }
  } else {
    return protocol("unknown render answer `" + name + "` (expected response, text or image)");
  }
  return v;
}

Value response_value(std::uint16_t status, const std::map<std::string, Bytes>& headers, const Bytes& body) {
  Value::Map h;
  for (const auto& [k, b] : headers) h[k] = Value(b);
  return Value::map({{"body", Value(body)}, {"headers", Value(std::move(h))}, {"status", Value(status)}});
}

}  // namespace genvm::module
