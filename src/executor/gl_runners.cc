// The MapFile gl_call (spec 02-execution-environment/03-wasi_genlayer_sdk/02-gl_call.rst):
// {"MapFile": {"runner", "path_in_runner", "path_in_vfs"}} maps a runner's file (or folder,
// ending in '/') into the running sub-VM's read-only file system, as the MapFile action does.
// Resolving the runner is a load action: charged runner_load_cost + its size the first time
// this sub-VM loads it (the plan's loads count), free after. A runner that does not resolve or
// a mapping the action would refuse ends the sub-VM with that VM error (the public executor's
// choice); success answers no descriptor. Only a runner contract has a file system: a raw
// wasm contract's MapFile answers INVAL.
//
// RegisterRunner {"RegisterRunner": {"code": bytes}}: in deterministic mode with the
// register_runners permission (else FORBIDDEN, nothing charged), a load action for
// custom:<GVM32 of SHA3-256(code)>: already loaded is a free no-op; else runner_load_cost + the
// code's length is charged (over budget: out_of memory), then the code is read as a runner
// (malformed: the sub-VM ends with that VM error, the charge kept); the answer is the id, a
// calldata string on a descriptor. The runner is then this sub-VM's (MapFile custom:...).
#include <algorithm>
#include <string>
#include <vector>

#include "executor/vm_state.h"

namespace genvm::executor {

using calldata::Value;
using wasm::Trap;

namespace {

const std::string* string_field(const Value& body, const char* name) {
  const Value* v = body.find(name);
  return v && v->is_string() ? &v->as_string() : nullptr;
}

}  // namespace

std::optional<Trap> VmState::gl_map_file(GlCall& g) {
  if (!tree_) return answer(g, kInval);
  if (!g.body.is_map() || g.body.as_map().size() != 3) return answer(g, kInval);
  const std::string* runner = string_field(g.body, "runner");
  const std::string* from = string_field(g.body, "path_in_runner");
  const std::string* to = string_field(g.body, "path_in_vfs");
  if (!runner || !from || !to) return answer(g, kInval);
  // A runner error ends the sub-VM with its public code; the detail goes to the log only.
  auto fail = [this](const Error& e) {
    log(LogLevel::kInfo, "runner", e.to_string());
    auto code = VmError::parse(e.code);
    return end(ResultCode::kVmError, Value(code ? code->public_code() : std::string("invalid_contract runner malformed")));
  };
  auto id = runners::parse_runner_id(*runner);
  if (!id) return fail(id.error());
  std::shared_ptr<const runners::Archive> arch;
  if (id->kind == runners::RunnerId::Kind::kContract) {
    arch = contract_archive_;
  } else if (id->kind == runners::RunnerId::Kind::kCustom) {
    // Only what this sub-VM registered (spec "Custom Runner Loading": its own loaded set).
    auto it = mapped_runners_.find(id->canonical());
    if (it == mapped_runners_.end()) {
      return fail(make_error("invalid_contract runner malformed", id->canonical() + " is not registered in this sub-VM"));
    }
    arch = it->second;
  } else if (id->kind != runners::RunnerId::Kind::kPackaged) {
    return fail(make_error("invalid_contract runner malformed", "MapFile of " + id->canonical() + ": not loadable here"));
  } else {
    if (auto s = runners::resolve_packaged_tag(ctx_.runners.get(), ctx_.debug, *id); !s) return fail(s.error());
    std::string canonical = id->canonical();
    if (auto it = mapped_runners_.find(canonical); it != mapped_runners_.end()) {
      arch = it->second;
    } else {
      // The plan's own loads (Plan::loaded and keep_alive are in the same order).
      for (std::size_t i = 0; i < plan_->loaded.size() && i < plan_->keep_alive.size(); ++i) {
        if (plan_->loaded[i] == canonical) arch = plan_->keep_alive[i];
      }
    }
    if (!arch) {
      if (!ctx_.runners) return fail(make_error("invalid_contract runner malformed", "no runner directory"));
      auto loaded = ctx_.runners->load(*id);
      if (!loaded) return fail(loaded.error());
      auto charge = RamCharge::take(*ctx_.ram, runners::kRunnerLoadCost + (*loaded)->blob->size());
      if (!charge) return out_of_memory();
      mapping_charges_.push_back(std::move(*charge));
      mapped_runners_.emplace(canonical, *loaded);
      arch = *loaded;
    }
  }
  auto files = files_;
  auto cost = runners::map_archive_file(*arch, *from, *to, files);
  if (!cost) return fail(cost.error());
  auto tree = runners::FileTree::build(files);
  if (!tree) return fail(tree.error());
  auto charge = RamCharge::take(*ctx_.ram, *cost);
  if (!charge) return out_of_memory();
  mapping_charges_.push_back(std::move(*charge));
  // Open descriptors keep naming what they named: their paths are found again in the new tree
  // (mapping only adds or replaces files, so every open path still exists).
  for (auto& [fd, open] : tree_fds_) {
    std::string path;
    for (std::uint32_t at = open.node; at != runners::FileTree::kRoot; at = tree_->node(at).parent) {
      path.insert(0, "/" + tree_->node(at).name);
    }
    std::uint32_t node = runners::FileTree::kRoot;
    if (tree->resolve(runners::FileTree::kRoot, path, node) == runners::FileTree::Lookup::kFound) open.node = node;
  }
  files_ = std::move(files);
  tree_ = std::move(*tree);
  return no_fd(g);
}

std::optional<Trap> VmState::gl_register_runner(GlCall& g) {
  const Value* code = g.body.is_map() ? g.body.find("code") : nullptr;
  if (!code || !code->is_bytes() || g.body.as_map().size() != 1) return answer(g, kInval);
  if (!frame_.deterministic || !frame_.permissions.register_runners) return answer(g, kForbidden);
  const calldata::Bytes& bytes = code->as_bytes();
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  std::string id = runners::custom_runner_id(text);
  if (mapped_runners_.count(id)) return give_fd(g, calldata::encode(Value(id)));
  auto charge = RamCharge::take(*ctx_.ram, runners::kRunnerLoadCost + bytes.size());
  if (!charge) return out_of_memory();
  mapping_charges_.push_back(std::move(*charge));
  auto parsed = runners::parse_custom_runner(std::make_shared<const std::string>(text));
  if (!parsed) {
    log(LogLevel::kInfo, "runner", parsed.error().to_string());
    auto e = VmError::parse(parsed.error().code);
    return end(ResultCode::kVmError, Value(e ? e->public_code() : std::string("invalid_contract runner malformed")));
  }
  mapped_runners_.emplace(parsed->id, parsed->archive);
  return give_fd(g, calldata::encode(Value(parsed->id)));
}

}  // namespace genvm::executor
