// Runner contracts (spec 02-execution-environment/04-runners.rst): code that is not raw wasm
// (a runner archive, or text with the comment header) is read into an archive, its runner
// graph resolved against the run's runner directory into a plan (src/runners), the plan's RAM
// charged to the run's budget, and its files made the guest's read-only file tree. vm.cc then
// links the plan's modules and starts its StartWasm; wasi_fs.cc serves the tree.
#include <sys/stat.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "common/blake3.h"
#include "executor/module_cache_file.h"
#include "executor/runner_snapshot.h"
#include "executor/version.h"
#include "executor/vm_state.h"

namespace genvm::executor {

namespace {

// A runner error as the VM error it names (its code is a public code); the detail stays in the
// log, since a detail is part of the execution hash and may name host paths.
Error vm_error_of(const Error& e) {
  auto parsed = VmError::parse(e.code);
  std::string code = parsed ? parsed->public_code() : VmError(VmError::invalid_contract().runner().malformed()).public_code();
  return make_error(std::move(code), e.message);
}

bool within(std::string_view part, std::string_view whole) {
  return part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size();
}

// This executor binary's identity (device, inode, size, mtime of /proc/self/exe): a rebuilt
// engine never reads a snapshot an older one wrote, even where its version string is the same.
std::string executor_identity() {
  struct stat st {};
  if (::stat("/proc/self/exe", &st) != 0) return {};
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

void hash_field(blake3::Hasher& h, std::string_view field) {
  std::uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = std::uint8_t(std::uint64_t(field.size()) >> (8 * i));
  h.update(std::span<const std::uint8_t>(len, 8));
  h.update(field);
}

}  // namespace

// Everything genvm_preinit can observe, as the snapshot's key; nullopt when the run cannot
// have a snapshot: snapshots off (no module cache, GENVM_RUNNER_SNAPSHOT=0), modules linked
// before the start module (their instances' state is not in the snapshot), a start module or
// an init-visible file that is not from a packaged runner (content-addressed by its id).
static std::optional<blake3::Digest> snapshot_key(const RunContext& ctx, const VmFrame& frame, const runners::Plan& plan,
                                                  const std::map<std::string, std::string_view, std::less<>>& init_files,
                                                  const wasm::LoadOptions& lo) {
  if (ctx.module_cache_dir.empty()) return std::nullopt;
  if (const char* off = std::getenv("GENVM_RUNNER_SNAPSHOT"); off && std::string_view(off) == "0") return std::nullopt;
  if (!plan.link.empty() || plan.start.runner == "contract" || plan.start.runner.starts_with("custom:")) return std::nullopt;
  std::string exe = executor_identity();
  if (exe.empty()) return std::nullopt;
  blake3::Hasher h;
  hash_field(h, "genvm runner start-up snapshot 1");
  hash_field(h, kExecutorVersion);
  hash_field(h, exe);
  hash_field(h, std::string(1, char(lo.deterministic)) + char(lo.metering) + char(frame.deterministic));
  hash_field(h, plan.start.runner);
  hash_field(h, plan.start.path);
  for (const auto& [k, v] : plan.env) {
    hash_field(h, k);
    hash_field(h, v);
  }
  hash_field(h, "args");
  for (const auto& a : plan.args) hash_field(h, a);
  hash_field(h, "files");
  for (const auto& [path, bytes] : init_files) {
    std::size_t owner = plan.keep_alive.size();
    for (std::size_t i = 0; i < plan.keep_alive.size() && i < plan.loaded.size(); ++i) {
      if (plan.loaded[i] != "contract" && within(bytes, *plan.keep_alive[i]->blob)) owner = i;
    }
    if (owner == plan.keep_alive.size()) return std::nullopt;
    hash_field(h, path);
    hash_field(h, plan.loaded[owner]);
    hash_field(h, std::to_string(bytes.data() - plan.keep_alive[owner]->blob->data()) + "+" + std::to_string(bytes.size()));
  }
  return h.finalize();
}

Result<wasm::Outcome> VmState::run_preinit(wasm::Store& store, wasm::Instance& inst, wasm::FuncInst* preinit) {
  if (!wasm::func_type(preinit).params.empty() || !wasm::func_type(preinit).results.empty()) {
    wasm::Outcome o;
    o.trap = end_vm_error(VmError::invalid_contract().wasm().entrypoint(), "genvm_preinit is not [] -> []");
    return o;
  }
  // The init host's file tree: the plan's files without the contract's own.
  std::map<std::string, std::string_view, std::less<>> init_files;
  for (const auto& [path, bytes] : files_) {
    if (!contract_archive_ || !within(bytes, *contract_archive_->blob)) init_files.emplace(path, bytes);
  }
  auto init_tree = runners::FileTree::build(init_files);
  if (!init_tree) return init_tree.take_error();
  wasm::LoadOptions lo;
  lo.deterministic = frame_.deterministic;
  lo.metering = frame_.fuel.has_value();
  auto key = snapshot_key(ctx_, frame_, *plan_, init_files, lo);
  std::string name = key ? runner_snapshot_file_name(*key) : std::string();
  if (key) {
    // Mapped, not read: the memory image goes from the file straight into the instance.
    auto file = map_sealed_file(ctx_.module_cache_dir, name);
    auto snap = file ? decode_runner_snapshot_view(file->body()) : Result<RunnerSnapshotView>(file.take_error());
    if (snap) {
      // Only where the live run certainly gets as far: more fuel than genvm_preinit used (at
      // exactly as much, where the meter stops is the engine's to say, so that runs live too)
      // and the budget's peak left; else it runs live, to the same out_of_fuel or memory error.
      bool fits = (!frame_.fuel || store.fuel() > snap->fuel_used) && ctx_.ram->left() >= snap->ram_needed;
      if (fits) {
        auto restored = wasm::restore_instance(store, inst, snap->instance);  // the byte form
        if (restored) {
          if (frame_.fuel) store.set_fuel(store.fuel() - snap->fuel_used);
          random_counter_ = snap->random_counter;
          next_fd_ = snap->next_fd;
          stdin_closed_ = snap->stdin_closed;
          log(LogLevel::kDebug, "runner_snapshot", "start-up restored from " + name);
          return wasm::Outcome{};
        }
        // restore_instance checks before it changes anything, so the instance is still fresh.
        log(LogLevel::kWarn, "runner_snapshot", "snapshot " + name + " refused (" + restored.error().to_string() + "); running genvm_preinit");
      }
    } else if (snap.error().code != "absent") {
      log(LogLevel::kWarn, "runner_snapshot", "snapshot " + name + " ignored (" + snap.error().to_string() + "); rebuilding it");
    }
  }
  const std::uint64_t fuel_before = store.fuel();
  const std::uint64_t ram_before = ctx_.ram->used();
  const bool peak_known = ctx_.ram->peak() == ram_before;
  // The init host: no contract files, no message, clock 0 and no SDK imports (in_preinit_).
  std::swap(*tree_, *init_tree);
  calldata::Bytes message;
  std::swap(stdin_, message);
  in_preinit_ = true;
  Result<wasm::Outcome> outcome = store.call(preinit, {});
  in_preinit_ = false;
  std::swap(stdin_, message);
  stdin_pos_ = 0;
  std::swap(*tree_, *init_tree);
  if (ending_ || !outcome || !outcome->ok()) return outcome;
  // Descriptors on the init tree would name its nodes in the full one: none may stay open.
  if (tree_fds_.size() != 1 || !tree_fds_.count(3) || !fds_.empty()) {
    wasm::Outcome o;
    o.trap = end_vm_error(VmError::invalid_contract().runner().malformed(), "genvm_preinit left descriptors open");
    return o;
  }
  if (key && peak_known) {
    RunnerSnapshot snap;
    snap.fuel_used = frame_.fuel ? fuel_before - store.fuel() : 0;
    snap.ram_needed = ctx_.ram->peak() - ram_before;
    snap.random_counter = random_counter_;
    snap.next_fd = next_fd_;
    snap.stdin_closed = stdin_closed_;
    auto captured = wasm::capture_instance(inst);
    if (!captured) {
      log(LogLevel::kWarn, "runner_snapshot", "no snapshot: " + captured.error().to_string());
      return outcome;
    }
    snap.instance = std::move(*captured);
    if (auto w = write_sealed_file(ctx_.module_cache_dir, name, encode_runner_snapshot(snap)); !w) {
      log(LogLevel::kWarn, "runner_snapshot", "snapshot " + name + " not stored: " + w.error().to_string());
    } else {
      log(LogLevel::kDebug, "runner_snapshot", "snapshot stored: " + name);
    }
  }
  return outcome;
}

Status VmState::prepare_runner(const calldata::Bytes& code) {
  auto blob = std::make_shared<const std::string>(code.begin(), code.end());
  auto contract = runners::archive_from_code(std::move(blob));
  if (!contract) return vm_error_of(contract.error());
  runners::PlanOptions options;
  options.deterministic = frame_.deterministic;
  options.debug_mode = ctx_.debug;
  options.ram_budget = ctx_.ram->left();
  contract_archive_ = std::make_shared<const runners::Archive>(std::move(*contract));
  auto plan = runners::make_plan(contract_archive_, ctx_.runners.get(), options);
  if (!plan) return vm_error_of(plan.error());
  auto tree = runners::FileTree::build(plan->files);
  if (!tree) return vm_error_of(tree.error());
  plan_charge_ = RamCharge::take(*ctx_.ram, plan->ram_charged);
  if (!plan_charge_) return make_error(VmError(VmError::out_of().memory()).public_code(), "the runner plan");
  files_ = plan->files;
  plan_ = std::make_shared<const runners::Plan>(std::move(*plan));
  tree_ = std::move(*tree);
  // The spec's initial state: fd 3 is the directory "/" (02-wasip1.rst, "Initial State").
  tree_fds_.emplace(3, TreeFd{runners::FileTree::kRoot, 0, std::nullopt});
  next_fd_ = 4;
  return {};
}

}  // namespace genvm::executor
