// Validators as Studio serves them: sim_getAllValidators, sim_getValidator, sim_countValidators,
// sim_createValidator, sim_createRandomValidator(s), sim_updateValidator, sim_deleteValidator,
// sim_deleteAllValidators, sim_getProvidersAndModels; the built-in provider catalog; and the
// round plan a transaction runs with (the stored validators or its sim_config's).
#include <algorithm>
#include <ctime>
#include <mutex>
#include <random>

#include "common/json.h"
#include "common/rfc3339.h"
#include "node/serve/service_core.h"

namespace genvm::node::serve {

namespace {

struct CatalogEntry {
  const char* provider;
  const char* model;
  const char* plugin;
  const char* plugin_config;  // JSON
};

// The default providers (Studio's default_providers files name the same providers and plugins;
// ours are a short list). "mock" is ours: a validator on it answers only from its mocks.
constexpr CatalogEntry kCatalog[] = {
    {"openai", "gpt-4.1-mini", "openai-compatible", R"({"api_key_env_var":"OPENAIKEY","api_url":"https://api.openai.com"})"},
    {"openai", "gpt-4.1-nano", "openai-compatible", R"({"api_key_env_var":"OPENAIKEY","api_url":"https://api.openai.com"})"},
    {"anthropic", "claude-3-5-haiku-20241022", "anthropic",
     R"({"api_key_env_var":"ANTHROPIC_API_KEY","api_url":"https://api.anthropic.com"})"},
    {"google", "gemini-2.5-flash", "google",
     R"({"api_key_env_var":"GEMINI_API_KEY","api_url":"https://generativelanguage.googleapis.com"})"},
    {"ollama", "llama3", "ollama", R"({"api_key_env_var":"","api_url":"http://localhost:11434"})"},
    {"mock", "mock", "mock", R"({})"},
};
constexpr const char* kDefaultConfig = R"({"temperature":0.75,"max_tokens":500})";
constexpr const char* kPlugins[] = {"openai-compatible", "anthropic", "google", "ollama", "mock"};

std::vector<StoredProvider> default_providers() {
  std::vector<StoredProvider> out;
  for (const auto& e : kCatalog) {
    StoredProvider p;
    p.provider = e.provider;
    p.model = e.model;
    p.plugin = e.plugin;
    p.plugin_config = e.plugin_config;
    p.config = kDefaultConfig;
    p.is_default = true;
    out.push_back(std::move(p));
  }
  return out;
}

// The providers validators are made from: the table, filled with the built-in catalog the first
// time (sim_addProvider & co. change it).
Result<std::vector<StoredProvider>> catalog(ServiceCore& c) {
  std::lock_guard g(c.store_mu);
  return c.store.providers(default_providers());
}

Address random_address() {
  static std::mutex mu;
  static std::random_device rd;
  std::lock_guard g(mu);
  Address a;
  for (auto& b : a.bytes) b = static_cast<std::uint8_t>(rd());
  return a;
}

std::string iso_time(std::int64_t s) {
  std::time_t t = static_cast<std::time_t>(s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
  return buf;
}

void write_validator(JsonWriter& w, const StoredValidator& v) {
  w.begin_object();
  w.key("id").number(v.id).key("address").string(address_text(v.address)).key("stake").number(v.stake);
  w.key("provider").string(v.provider).key("model").string(v.model);
  w.key("config").raw(v.config.empty() ? "{}" : v.config);
  w.key("plugin").string(v.plugin);
  w.key("plugin_config").raw(v.plugin_config.empty() ? "{}" : v.plugin_config);
  w.key("created_at").string(iso_time(v.created_at));
  w.end_object();
}

std::string validator_json(const StoredValidator& v) {
  JsonWriter w;
  write_validator(w, v);
  return w.take();
}

RpcError not_local() {
  return server_error("Operation not available: this node does not listen on a loopback address");
}

std::string json_text(const JsonValue& v) {
  JsonWriter w;
  write_json(w, v);
  return w.take();
}

bool present(const Params& p, std::size_t i) { return i < p.size() && p[i].kind() != JsonValue::Kind::kNull; }

Result<std::int64_t, RpcError> stake_at(const Params& p, std::size_t i) {
  if (i >= p.size() || p[i].kind() != JsonValue::Kind::kNumber) return bad_params("a stake (a number) at position " + std::to_string(i));
  const std::string& t = p[i].text();
  // Studio's stake is an int; a float stake (random_validators once made them) is cut.
  std::string whole = t.substr(0, t.find_first_of(".eE"));
  auto u = parse_decimal_u64(whole);
  if (!u || *u > std::uint64_t(INT64_MAX) || t.find_first_of("eE") != std::string::npos) {
    return bad_params("a stake is a whole number from 0 to 2^63-1");
  }
  return static_cast<std::int64_t>(*u);
}

// provider, model and the optional config, plugin, plugin_config from `at`: all three given
// are taken as they are (plugin one of ours); otherwise the catalog's entry for provider/model,
// with `config` kept when given.
Result<StoredValidator, RpcError> llm_fields(ServiceCore& c, const Params& p, std::size_t at) {
  auto provider = string_at(p, at, "the provider");
  if (!provider) return provider.take_error();
  auto model = string_at(p, at + 1, "the model");
  if (!model) return model.take_error();
  StoredValidator v;
  v.provider = *provider;
  v.model = *model;
  const bool has_config = present(p, at + 2), has_plugin = present(p, at + 3), has_plugin_config = present(p, at + 4);
  if (has_config && !p[at + 2].is_object()) return bad_params("config is an object");
  if (has_plugin && !p[at + 3].is_string()) return bad_params("plugin is a string");
  if (has_plugin_config && !p[at + 4].is_object()) return bad_params("plugin_config is an object");
  if (has_plugin && has_plugin_config) {
    v.plugin = p[at + 3].text();
    if (std::find_if(std::begin(kPlugins), std::end(kPlugins), [&](const char* k) { return v.plugin == k; }) ==
        std::end(kPlugins)) {
      return bad_params("plugin " + v.plugin.substr(0, 64) +
                        " is not one of openai-compatible, anthropic, google, ollama, mock");
    }
    v.plugin_config = json_text(p[at + 4]);
    v.config = has_config ? json_text(p[at + 2]) : kDefaultConfig;
    return v;
  }
  auto all = catalog(c);
  if (!all) return node_error(all.error());
  const StoredProvider* e = nullptr;
  for (const auto& x : *all) {
    if (x.provider == v.provider && x.model == v.model) {
      e = &x;
      break;
    }
  }
  if (!e) {
    return bad_params("no provider entry for " + v.provider.substr(0, 64) + "/" + v.model.substr(0, 64) +
                      " (sim_getProvidersAndModels lists them); give config, plugin and plugin_config");
  }
  v.plugin = e->plugin;
  v.plugin_config = e->plugin_config;
  v.config = has_config ? json_text(p[at + 2]) : e->config;
  return v;
}

template <class F>
auto locked(ServiceCore& c, F f) {
  std::lock_guard g(c.store_mu);
  return f(c.store);
}

RpcResult all(ServiceCore& c) {
  auto vs = locked(c, [](TxStore& s) { return s.validators(); });
  if (!vs) return node_error(vs.error());
  JsonWriter w;
  w.begin_array();
  for (const auto& v : *vs) write_validator(w, v);
  w.end_array();
  return w.take();
}

RpcError validator_not_found(const Address& a) {
  return not_found("Validator " + address_text(a) + " not found", "{\"address\":" + json_string(address_text(a)) + "}");
}

RpcResult one(ServiceCore& c, const Params& p) {
  auto a = address_at(p, 0);
  if (!a) return a.take_error();
  auto v = locked(c, [&](TxStore& s) { return s.validator(*a); });
  if (!v) return node_error(v.error());
  if (!*v) return validator_not_found(*a);
  return validator_json(**v);
}

RpcResult count(ServiceCore& c) {
  auto vs = locked(c, [](TxStore& s) { return s.validators(); });
  if (!vs) return node_error(vs.error());
  return std::to_string(vs->size());
}

RpcResult create(ServiceCore& c, const Params& p) {
  if (!c.opts.local) return not_local();
  auto stake = stake_at(p, 0);
  if (!stake) return stake.take_error();
  auto v = llm_fields(c, p, 1);
  if (!v) return v.take_error();
  v->stake = *stake;
  v->address = random_address();
  auto stored = locked(c, [&](TxStore& s) { return s.add_validator(*v); });
  if (!stored) return node_error(stored.error());
  return validator_json(*stored);
}

RpcResult create_random(ServiceCore& c, const Params& p, bool many) {
  if (!c.opts.local) return not_local();
  std::uint64_t n = 1;
  std::size_t at = 0;
  if (many) {
    if (p.empty() || !p[0].as_u64() || *p[0].as_u64() < 1 || *p[0].as_u64() > 100) {
      return bad_params("a count from 1 to 100 at position 0");
    }
    n = *p[0].as_u64();
    at = 1;
  }
  auto lo = stake_at(p, at);
  if (!lo) return lo.take_error();
  std::int64_t hi_v = *lo;
  if (many) {
    auto hi = stake_at(p, at + 1);
    if (!hi) return hi.take_error();
    hi_v = *hi;
    if (hi_v < *lo) return bad_params("max_stake is below min_stake");
  }
  auto names = [&](std::size_t i, const char* what) -> Result<std::vector<std::string>, RpcError> {
    std::vector<std::string> out;
    if (!present(p, i)) return out;
    if (p[i].kind() != JsonValue::Kind::kArray) return bad_params(std::string(what) + " is a list of names");
    for (const auto& x : p[i].items()) {
      if (!x.is_string()) return bad_params(std::string(what) + " is a list of names");
      out.push_back(x.text());
    }
    return out;
  };
  auto providers = names(at + 2, "limit_providers");
  if (!providers) return providers.take_error();
  auto models = names(at + 3, "limit_models");
  if (!models) return models.take_error();
  auto all = catalog(c);
  if (!all) return node_error(all.error());
  std::vector<const StoredProvider*> pool;
  for (const auto& e : *all) {
    auto in = [](const std::vector<std::string>& l, const std::string& s) { return std::find(l.begin(), l.end(), s) != l.end(); };
    // The mock provider only when asked for: a random validator answers from a model.
    const bool ok_provider = providers->empty() ? e.plugin != "mock" : in(*providers, e.provider);
    if (ok_provider && (models->empty() || in(*models, e.model))) pool.push_back(&e);
  }
  if (pool.empty()) return bad_params("no provider and model matches limit_providers and limit_models");
  std::random_device rd;
  std::mt19937_64 rng(rd());
  std::vector<StoredValidator> made;
  for (std::uint64_t i = 0; i < n; ++i) {
    const StoredProvider* e = pool[rng() % pool.size()];
    StoredValidator v;
    v.address = random_address();
    v.stake = *lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi_v - *lo + 1));
    v.provider = e->provider;
    v.model = e->model;
    v.plugin = e->plugin;
    v.plugin_config = e->plugin_config;
    v.config = e->config;
    auto stored = locked(c, [&](TxStore& s) { return s.add_validator(v); });
    if (!stored) return node_error(stored.error());
    made.push_back(std::move(*stored));
  }
  if (!many) return validator_json(made.front());
  JsonWriter w;
  w.begin_array();
  for (const auto& v : made) write_validator(w, v);
  w.end_array();
  return w.take();
}

RpcResult update(ServiceCore& c, const Params& p) {
  if (!c.opts.local) return not_local();
  auto a = address_at(p, 0);
  if (!a) return a.take_error();
  auto stake = stake_at(p, 1);
  if (!stake) return stake.take_error();
  auto v = llm_fields(c, p, 2);
  if (!v) return v.take_error();
  v->address = *a;
  v->stake = *stake;
  auto done = locked(c, [&](TxStore& s) { return s.update_validator(*v); });
  if (!done) return node_error(done.error());
  if (!*done) return validator_not_found(*a);
  auto now = locked(c, [&](TxStore& s) { return s.validator(*a); });
  if (!now) return node_error(now.error());
  if (!*now) return validator_not_found(*a);
  return validator_json(**now);
}

RpcResult remove(ServiceCore& c, const Params& p) {
  if (!c.opts.local) return not_local();
  auto a = address_at(p, 0);
  if (!a) return a.take_error();
  auto done = locked(c, [&](TxStore& s) { return s.delete_validator(*a); });
  if (!done) return node_error(done.error());
  if (!*done) return validator_not_found(*a);
  return json_string(address_text(*a));
}

RpcResult remove_all(ServiceCore& c) {
  if (!c.opts.local) return not_local();
  auto n = locked(c, [](TxStore& s) { return s.delete_all_validators(); });
  if (!n) return node_error(n.error());
  return all(c);
}

RpcResult providers(ServiceCore& c) {
  auto all = catalog(c);
  if (!all) return node_error(all.error());
  JsonWriter w;
  w.begin_array();
  for (const auto& e : *all) {
    w.begin_object();
    w.key("id").number(e.id).key("provider").string(e.provider).key("model").string(e.model);
    w.key("config").raw(e.config).key("plugin").string(e.plugin).key("plugin_config").raw(e.plugin_config);
    w.key("is_default").boolean(e.is_default);
    // Available when this node's runs have an LLM module to ask (the mock needs none of a model).
    w.key("is_model_available").boolean(e.plugin == "mock" || !c.opts.modules.llm_config.empty());
    w.end_object();
  }
  w.end_array();
  return w.take();
}

// Studio's provider params {provider, model, config, plugin, plugin_config}, all required.
Result<StoredProvider, RpcError> provider_params(const Params& p, std::size_t i) {
  if (i >= p.size() || !p[i].is_object()) return bad_params("provider params (an object) at position " + std::to_string(i));
  const JsonValue& o = p[i];
  StoredProvider out;
  for (auto [key, dest] : {std::pair{"provider", &out.provider}, std::pair{"model", &out.model}, std::pair{"plugin", &out.plugin}}) {
    const JsonValue* f = o.find(key);
    if (!f || !f->is_string() || f->text().empty()) return bad_params(std::string(key) + " is a non-empty string");
    *dest = f->text();
  }
  if (std::find_if(std::begin(kPlugins), std::end(kPlugins), [&](const char* k) { return out.plugin == k; }) == std::end(kPlugins)) {
    return bad_params("plugin " + out.plugin.substr(0, 64) + " is not one of openai-compatible, anthropic, google, ollama, mock");
  }
  for (auto [key, dest] : {std::pair{"config", &out.config}, std::pair{"plugin_config", &out.plugin_config}}) {
    const JsonValue* f = o.find(key);
    if (!f || !f->is_object()) return bad_params(std::string(key) + " is an object");
    *dest = json_text(*f);
  }
  return out;
}

RpcResult add_provider(ServiceCore& c, const Params& p) {
  if (!c.opts.local) return not_local();
  auto v = provider_params(p, 0);
  if (!v) return v.take_error();
  if (auto all = catalog(c); !all) return node_error(all.error());  // the defaults first
  auto id = locked(c, [&](TxStore& s) { return s.add_provider(*v); });
  if (!id) return node_error(id.error());
  return std::to_string(*id);
}

RpcResult update_provider(ServiceCore& c, const Params& p) {
  if (!c.opts.local) return not_local();
  auto id = p.empty() ? std::nullopt : p[0].as_u64();
  if (!id || *id > std::uint64_t(INT64_MAX)) return bad_params("a provider id (a number) at position 0");
  auto v = provider_params(p, 1);
  if (!v) return v.take_error();
  v->id = static_cast<std::int64_t>(*id);
  if (auto all = catalog(c); !all) return node_error(all.error());
  auto done = locked(c, [&](TxStore& s) { return s.update_provider(*v); });
  if (!done) return node_error(done.error());
  if (!*done) return not_found("Provider " + std::to_string(*id) + " not found");
  return std::string("null");
}

RpcResult delete_provider(ServiceCore& c, const Params& p) {
  if (!c.opts.local) return not_local();
  auto id = p.empty() ? std::nullopt : p[0].as_u64();
  if (!id || *id > std::uint64_t(INT64_MAX)) return bad_params("a provider id (a number) at position 0");
  if (auto all = catalog(c); !all) return node_error(all.error());
  auto done = locked(c, [&](TxStore& s) { return s.delete_provider(static_cast<std::int64_t>(*id)); });
  if (!done) return node_error(done.error());
  if (!*done) return not_found("Provider " + std::to_string(*id) + " not found");
  return std::string("null");
}

RpcResult reset_providers(ServiceCore& c) {
  if (!c.opts.local) return not_local();
  auto s = locked(c, [](TxStore& st) { return st.reset_providers(default_providers()); });
  if (!s) return node_error(s.error());
  return std::string("null");
}

// A mock answer as host_data carries it: strings and bools as they are, anything else (an
// object, a number, a list) as its JSON text, so host_data never holds a fraction (calldata has
// none: the executor would refuse the hello) and the module reads the text in the prompt's format.
void write_mock_value(JsonWriter& w, const JsonValue& v) {
  if (v.is_string()) {
    w.string(v.text());
  } else if (v.kind() == JsonValue::Kind::kBool) {
    w.boolean(v.as_bool());
  } else {
    w.string(json_text(v));
  }
}

// Studio's plugin_config.mock_response {response, eq_principle_prompt_comparative,
// eq_principle_prompt_non_comparative}, each {substring: answer}.
void write_mock_response(JsonWriter& w, const JsonValue& m) {
  w.begin_object();
  for (const auto& [section, table] : m.members()) {
    if (!table.is_object()) continue;
    w.key(section).begin_object();
    for (const auto& [k, v] : table.members()) {
      w.key(k);
      write_mock_value(w, v);
    }
    w.end_object();
  }
  w.end_object();
}

// {nondet_web_request: {url: {method, status, body}}}; a body that is not a string is its JSON text.
void write_mock_web(JsonWriter& w, const JsonValue& m) {
  w.begin_object();
  const JsonValue* urls = m.find("nondet_web_request");
  w.key("nondet_web_request").begin_object();
  if (urls && urls->is_object()) {
    for (const auto& [url, r] : urls->members()) {
      if (!r.is_object()) continue;
      w.key(url).begin_object();
      const JsonValue* method = r.find("method");
      w.key("method").string(method && method->is_string() ? method->text() : "GET");
      const JsonValue* status = r.find("status");
      std::int64_t code = 200;
      if (status != nullptr) code = static_cast<std::int64_t>(std::min<std::uint64_t>(status->as_u64().value_or(200), 999));
      w.key("status").number(code);
      const JsonValue* body = r.find("body");
      w.key("body");
      if (body && body->is_string()) {
        w.string(body->text());
      } else if (body) {
        w.string(json_text(*body));
      } else {
        w.string("");
      }
      w.end_object();
    }
  }
  w.end_object();
  w.end_object();
}

// One node's host_data: node_address and tx_id (the executor requires both), the validator's
// LLM provider and model (llm_provider / llm_model: the LLM module's backend and model), and
// its mocks (plugin_config.mock_response, plugin_config.mock_web_response or gltest's older
// mock_web_request).
std::string node_host_data(const Address& address, const Hash& tx, const std::string& provider,
                           const std::string& model, const std::string& plugin_config) {
  JsonWriter w;
  w.begin_object();
  w.key("node_address").string(address_text(address)).key("tx_id").string(hash_hex(tx));
  w.key("llm_provider").string(provider).key("llm_model").string(model);
  auto pc = parse_json(plugin_config);
  if (pc && pc->is_object()) {
    if (const JsonValue* m = pc->find("mock_response"); m && m->is_object() && !m->members().empty()) {
      w.key("mock_response");
      write_mock_response(w, *m);
    }
    const JsonValue* web = pc->find("mock_web_response");
    if (!web || !web->is_object()) web = pc->find("mock_web_request");
    if (web && web->is_object()) {
      w.key("mock_web_response");
      write_mock_web(w, *web);
    }
  }
  w.end_object();
  return w.take();
}

// Studio's node_config of one node: what the receipt says the node ran with.
void write_node_config(JsonWriter& w, const Address& address, std::int64_t stake, const std::string& provider,
                       const std::string& model, const std::string& config, const std::string& plugin,
                       const std::string& plugin_config) {
  auto object_or_empty = [](const std::string& j) {
    auto v = parse_json(j);
    return v && v->is_object() ? j : std::string("{}");
  };
  w.begin_object();
  w.key("address").string(address_text(address)).key("provider").string(provider).key("model").string(model);
  w.key("config").raw(object_or_empty(config)).key("plugin").string(plugin);
  w.key("plugin_config").raw(object_or_empty(plugin_config)).key("stake").number(stake);
  w.end_object();
}

}  // namespace

Status check_sim_config(const std::string& json) {
  if (json.empty()) return {};
  auto v = parse_json(json);
  if (!v || !v->is_object()) return make_error("bad_sim_config", "sim_config is an object");
  if (const JsonValue* vs = v->find("validators"); vs && vs->kind() != JsonValue::Kind::kNull) {
    if (vs->kind() != JsonValue::Kind::kArray) return make_error("bad_sim_config", "sim_config.validators is a list");
    if (vs->items().size() > 100) return make_error("bad_sim_config", "sim_config.validators has at most 100 validators");
    for (const auto& x : vs->items()) {
      const JsonValue* provider = x.is_object() ? x.find("provider") : nullptr;
      const JsonValue* model = x.is_object() ? x.find("model") : nullptr;
      if (!provider || !provider->is_string() || !model || !model->is_string()) {
        return make_error("bad_sim_config", "each of sim_config.validators is an object with provider and model strings");
      }
      const JsonValue* pc = x.find("plugin_config");
      if (pc && pc->kind() != JsonValue::Kind::kNull && !pc->is_object()) {
        return make_error("bad_sim_config", "a validator's plugin_config is an object");
      }
    }
  }
  if (const JsonValue* dt = v->find("genvm_datetime"); dt && dt->kind() != JsonValue::Kind::kNull) {
    if (!dt->is_string() || !parse_rfc3339(dt->text())) {
      return make_error("bad_sim_config", "sim_config.genvm_datetime is an RFC 3339 date and time");
    }
  }
  return {};
}

Result<RoundPlan> round_plan(ServiceCore& c, const QueuedTx& tx) {
  RoundPlan plan;
  JsonWriter nodes;
  nodes.begin_array();
  if (!tx.sim_config.empty()) {
    auto v = parse_json(tx.sim_config);
    if (v && v->is_object()) {
      if (const JsonValue* dt = v->find("genvm_datetime"); dt && dt->is_string()) plan.datetime = dt->text();
      if (const JsonValue* vs = v->find("validators"); vs && vs->kind() == JsonValue::Kind::kArray) {
        int i = 0;
        for (const auto& x : vs->items()) {
          if (!x.is_object()) continue;
          // sim_config's validators have no address: each gets 0xc0 00..00 (i+1), stable per
          // position, so a receipt's node names the same one every time.
          Address a;
          a.bytes[0] = 0xc0;
          a.bytes[18] = static_cast<std::uint8_t>((i + 1) >> 8);
          a.bytes[19] = static_cast<std::uint8_t>(i + 1);
          ++i;
          auto str = [&](const char* k) {
            const JsonValue* f = x.find(k);
            return f && f->is_string() ? f->text() : std::string();
          };
          const JsonValue* pc = x.find("plugin_config");
          const std::string pc_text = pc && pc->is_object() ? json_text(*pc) : "{}";
          plan.host_data.push_back(node_host_data(a, tx.hash, str("provider"), str("model"), pc_text));
          const JsonValue* config = x.find("config");
          const JsonValue* stake = x.find("stake");
          write_node_config(nodes, a, stake ? static_cast<std::int64_t>(std::min<std::uint64_t>(stake->as_u64().value_or(0), INT64_MAX)) : 0,
                            str("provider"), str("model"), config && config->is_object() ? json_text(*config) : "{}",
                            str("plugin"), pc_text);
        }
      }
    }
  }
  if (plan.host_data.empty()) {
    Result<std::vector<StoredValidator>> vs = std::vector<StoredValidator>{};
    {
      std::lock_guard g(c.store_mu);
      vs = c.store.validators();
    }
    if (!vs) return vs.take_error();
    // Studio's num_of_initial_validators: the first that many of the stored ones (all when 0).
    std::size_t take = vs->size();
    if (tx.num_validators > 0) take = std::min<std::size_t>(take, static_cast<std::size_t>(tx.num_validators));
    for (std::size_t i = 0; i < take; ++i) {
      const auto& s = (*vs)[i];
      plan.host_data.push_back(node_host_data(s.address, tx.hash, s.provider, s.model, s.plugin_config));
      write_node_config(nodes, s.address, s.stake, s.provider, s.model, s.config, s.plugin, s.plugin_config);
    }
  }
  nodes.end_array();
  if (!plan.host_data.empty()) plan.nodes = nodes.take();
  plan.count = plan.host_data.empty() ? c.opts.validators + 1 : static_cast<int>(plan.host_data.size());
  return plan;
}

std::vector<StoredValidator> default_validators(int n) {
  std::vector<StoredValidator> out;
  const CatalogEntry& e = kCatalog[0];
  for (int i = 0; i < n; ++i) {
    StoredValidator v;
    v.address = random_address();
    v.stake = 1;
    v.provider = e.provider;
    v.model = e.model;
    v.plugin = e.plugin;
    v.plugin_config = e.plugin_config;
    v.config = kDefaultConfig;
    out.push_back(std::move(v));
  }
  return out;
}

void add_validator_methods(Rpc& rpc, ServiceCore& c) {
  rpc.add("sim_getAllValidators", [&c](const Params&) { return all(c); });
  rpc.add("sim_getValidator", [&c](const Params& p) { return one(c, p); });
  rpc.add("sim_countValidators", [&c](const Params&) { return count(c); });
  rpc.add("sim_createValidator", [&c](const Params& p) { return create(c, p); });
  rpc.add("sim_createRandomValidator", [&c](const Params& p) { return create_random(c, p, false); });
  rpc.add("sim_createRandomValidators", [&c](const Params& p) { return create_random(c, p, true); });
  rpc.add("sim_updateValidator", [&c](const Params& p) { return update(c, p); });
  rpc.add("sim_deleteValidator", [&c](const Params& p) { return remove(c, p); });
  rpc.add("sim_deleteAllValidators", [&c](const Params&) { return remove_all(c); });
  rpc.add("sim_getProvidersAndModels", [&c](const Params&) { return providers(c); });
  rpc.add("sim_addProvider", [&c](const Params& p) { return add_provider(c, p); });
  rpc.add("sim_updateProvider", [&c](const Params& p) { return update_provider(c, p); });
  rpc.add("sim_deleteProvider", [&c](const Params& p) { return delete_provider(c, p); });
  rpc.add("sim_resetDefaultsLlmProviders", [&c](const Params&) { return reset_providers(c); });
}

}  // namespace genvm::node::serve
