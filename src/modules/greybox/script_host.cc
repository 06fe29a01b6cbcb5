#include "modules/greybox/script_host.h"

#include <atomic>
#include <map>

namespace genvm::greybox {

namespace {

std::atomic<std::uint64_t> next_host_id{1};

struct Session {
  module::Hello hello;
  std::unique_ptr<LuaVm> vm;
  int ctx_ref = -1;
  Session() = default;
  Session(Session&&) = default;
  Session& operator=(Session&&) = default;
  ~Session() {
    if (vm && ctx_ref >= 0 && vm->has_function("Teardown")) (void)vm->call("Teardown", {ctx_ref}, {});
  }
};

// Per connection thread: the sessions of each host, by the host's id.
thread_local std::map<std::uint64_t, Session> sessions;

}  // namespace

Value::Map hello_fields(const module::Hello& hello) {
  Value::Map gas;
  for (const auto& [k, v] : hello.gas_data) gas[k] = Value(v);
  return {{"genvm_id", Value(hello.genvm_id)},
          {"role", Value(std::string(module::role_name(hello.role)))},
          {"host_data", Value(hello.host_data)},
          {"gas_data", Value(std::move(gas))},
          {"initial_time_units_allocation", Value(hello.initial_time_units_allocation)}};
}

Result<std::unique_ptr<LuaVm>> ScriptHost::new_vm() const {
  auto vm = LuaVm::create(options_.limits, options_.lua_path);
  if (!vm) return vm.take_error();
  if (options_.register_host) {
    if (auto s = options_.register_host(**vm); !s) return s.take_error();
  }
  if (auto s = (*vm)->run_file(options_.script_path); !s) return s.take_error();
  for (const auto& e : options_.entry_points) {
    if (!(*vm)->has_function(e.c_str())) {
      return make_error("script_error", options_.script_path + " defines no function " + e);
    }
  }
  return vm;
}

Result<std::unique_ptr<ScriptHost>> ScriptHost::create(Options options) {
  std::unique_ptr<ScriptHost> host(new ScriptHost(std::move(options)));
  if (auto vm = host->new_vm(); !vm) return vm.take_error();  // refuse to start on a bad script
  host->id_ = next_host_id++;
  return host;
}

Result<Value, ScriptError> ScriptHost::call(const module::Hello& hello, const char* entry, const std::vector<Value>& args) const {
  std::uint64_t id = id_;
  auto it = sessions.find(id);
  if (it != sessions.end() && !(it->second.hello == hello)) {
    sessions.erase(it);
    it = sessions.end();
  }
  if (it == sessions.end()) {
    Session s;
    s.hello = hello;
    auto vm = new_vm();
    if (!vm) return ScriptError{ScriptFailure::kScriptError, {}, {}, vm.error().to_string()};
    s.vm = std::move(*vm);
    auto ctx = s.vm->make_table_ref(hello_fields(hello));
    if (!ctx) return ctx.take_error();
    s.ctx_ref = *ctx;
    if (s.vm->has_function("Setup")) {
      if (auto r = s.vm->call("Setup", {s.ctx_ref}, {}); !r) return r.take_error();
    }
    it = sessions.emplace(id, std::move(s)).first;
  }
  auto r = it->second.vm->call(entry, {it->second.ctx_ref}, args);
  if (!r) {
    ScriptFailure k = r.error().kind;
    if (k == ScriptFailure::kMemoryLimit || k == ScriptFailure::kInstructionLimit || k == ScriptFailure::kTimeLimit) {
      it->second.ctx_ref = -1;  // no Teardown in a state that ran out of budget
      sessions.erase(it);
    }
  }
  return r;
}

}  // namespace genvm::greybox
