#include "executor/run.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>
#include <random>

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include "common/host/wire.h"
#include "common/module/protocol.h"
#include "executor/host_client.h"
#include "executor/nested.h"
#include "executor/result.h"
#include "executor/engine_choice.h"
#include "executor/runner_location.h"
#include "executor/runner_marks.h"
#include "executor/storage.h"
#include "executor/u256.h"
#include "executor/vm.h"
#include "runners/runners.h"
#include "wasm/wasm.h"

namespace genvm::executor {

Result<calldata::Bytes> read_source(const std::string& source) {
  int fd = -1;
  bool owned = false;
  if (source == "-") {
    fd = 0;
  } else if (source.starts_with("fd://")) {
    std::string_view n = std::string_view(source).substr(5);
    auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), fd);
    if (ec != std::errc() || p != n.data() + n.size() || fd < 0) {
      return make_error("bad_source", "fd:// needs a descriptor number");
    }
  } else {
    fd = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return make_error("bad_source", "cannot open " + source + ": " + std::strerror(errno));
    owned = true;
  }
  calldata::Bytes out;
  std::uint8_t buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Error e = make_error("bad_source", "cannot read " + source + ": " + std::strerror(errno));
      if (owned) ::close(fd);
      return e;
    }
    if (n == 0) break;
    out.insert(out.end(), buf, buf + n);
  }
  if (owned) ::close(fd);
  return out;
}

namespace {

// The run proper, after the hosts are connected: every way it can end is a RunOutcome. `top` is
// the top sub-VM's derivation (nested.h: the command line's, or a nested run's imports).
RunOutcome execute(const ExecutionData& d, const ImportedFrame& top, RunContext& ctx, Storage& storage) {
  RunOutcome o;
  o.subvm_hashes = SubVmHashAccumulator().finalize();
  auto vm_error = [&](const VmError& e) {
    o.kind = ResultCode::kVmError;
    o.data = calldata::Value(e.to_string());
    return o;
  };
  auto internal = [&](const Error& e) {
    o.kind = ResultCode::kInternalError;
    o.data = calldata::Value(e.to_string());
    return o;
  };
  // The fee rules' start costs come first; a run that cannot pay them ends here with the
  // bucket's VM error (a nested run's were paid by the run that delegated it).
  if (!d.nested) {
    if (auto oom = ctx.fees->charge_start()) return vm_error(*oom);
  }
  if (!validate_entry(d.calldata, d.message.is_init)) return vm_error(VmError(VmError::malformed_entry()));
  // Locked slots only constrain writes: a run that may not write does not read them.
  if (top.permissions.write_storage) {
    auto wp = read_write_protection(storage, d.message.contract_address);
    if (!wp) {
      // A list over its limit is the contract's VM error; anything else is the host's failure.
      auto as_vm_error = VmError::parse(wp.error().code);
      return as_vm_error ? vm_error(*as_vm_error) : internal(wp.error());
    }
    ctx.locked_slots = std::move(wp->locked_slots);
    for (const auto& u : wp->upgraders) {
      if (u == d.message.sender_address) ctx.sender_is_upgrader = true;
    }
  }
  calldata::Bytes code;
  if (d.code) {
    code = *d.code;
    if (d.message.is_init) {
      std::size_t pages_before = storage.written_page_count();
      if (auto w = write_deployed_code(storage, code); !w) return internal(w.error());
      // The deployment's pages pay the storage fee too, as a contract's own writes do.
      auto paid = ctx.fees->charge_storage_pages(storage.written_page_count() - pages_before);
      if (!paid) {
        const fees::FeeError& e = paid.error();
        return e.vm_error ? vm_error(*e.vm_error) : internal(make_error("fees", e.message));
      }
    }
  } else {
    auto major = storage.read(top.state, d.message.contract_address, kRootSlot, kRootOffsetMajor, 1);
    if (!major) return internal(major.error());
    if ((*major)[0] != kCurrentMajor) {
      return vm_error(VmError(VmError::invalid_contract().major_mismatch()));
    }
    auto stored = read_contract_code(storage, d.message.contract_address, top.state);
    if (!stored) return internal(stored.error());
    code = std::move(*stored);
  }
  // No recursion left for the top VM itself (an imported remaining_recursion of 0).
  if (top.recursion_exhausted) return vm_error(VmError(VmError::out_of().vm_recursion()));
  VmFrame frame;
  frame.self = d.message.contract_address;
  frame.state = top.state;
  frame.permissions = top.permissions;
  frame.deterministic = top.deterministic;
  frame.depth = top.depth;
  if (top.ram_budget) frame.ram_budget = *top.ram_budget;
  // The run's one RAM budget: every sub-VM, nondet block and sandbox of it charges this.
  ctx.ram = std::make_shared<wasm::RamBudget>(frame.ram_budget);
  frame.startup_message = startup_message(d, EntryKind::kMain);
  VmResult r = run_vm(ctx, frame, code);
  o.kind = r.kind;
  o.data = std::move(r.data);
  o.backtrace = std::move(r.backtrace);
  o.wasm_store_hashes = std::move(r.wasm_store_hashes);
  o.subvm_hashes = r.subvm_hashes;
  o.storage_changes = storage.take_changes();
  o.emissions = std::move(ctx.emissions);
  return o;
}

// The GenVMHello every module connection of this run starts with (modules.rs): the run's id
// (random when --genvm-id is not given, as the public run.rs draws one), its role, the host's
// host_data as the HostData map, and gas_data and the time-unit budget from the execution data.
Result<module::Hello> module_hello(const ExecutionData& d, const std::string& genvm_id, bool is_leader) {
  module::Hello h;
  if (genvm_id.empty()) {
    std::random_device rd;
    h.genvm_id = std::uint64_t(rd()) << 32 | rd();
  } else {
    auto [p, ec] = std::from_chars(genvm_id.data(), genvm_id.data() + genvm_id.size(), h.genvm_id);
    if (ec != std::errc() || p != genvm_id.data() + genvm_id.size()) {
      return make_error("bad_genvm_id", "--genvm-id is not a u64: " + genvm_id);
    }
  }
  h.role = is_leader ? module::Role::kLeader : module::Role::kValidator;
  // No host_data at all (our node and test hosts send none) is HostData with both fields
  // empty; anything else must be the JSON object HostData is.
  if (d.host_data.empty()) {
    h.host_data = {{"node_address", calldata::Value("")}, {"tx_id", calldata::Value("")}};
  } else {
    auto host_data = module::host_data_from_json(d.host_data);
    if (!host_data) return host_data.take_error();
    h.host_data = std::move(*host_data);
  }
  h.gas_data = d.gas_data;
  h.initial_time_units_allocation = d.initial_time_units_allocation;
  return h;
}

}  // namespace

static int run_execution_on_this_thread(const RunOptions& opts, std::string* err) {
  auto bytes = read_source(opts.execution_data);
  if (!bytes) {
    *err = bytes.error().to_string();
    return 2;
  }
  auto data = parse_execution_data(*bytes);
  if (!data) {
    *err = data.error().to_string();
    return 2;
  }
  // The fee rules and the host's buckets and constants: rules or gas_data that do not evaluate
  // keep the run from starting (impl-spec 04-fees.rst, "Failure Modes").
  auto fee_rules = opts.fees_config.empty() ? Result<fees::FeesConfig>(fees::default_fees_config())
                                            : fees::load_fees_config(opts.fees_config);
  if (!fee_rules) {
    *err = fee_rules.error().to_string();
    return 2;
  }
  auto runner_location = locate_runners(opts.fees_config);
  if (!runner_location) {
    *err = runner_location.error().to_string();
    return 2;
  }
  auto engine = choose_engine(opts.fees_config);
  if (!engine) {
    *err = engine.error().to_string();
    return 2;
  }
  auto meter = fees::FeeMeter::create(*fee_rules, data->bucket_totals, data->gas_data);
  if (!meter) {
    *err = meter.error().to_string();
    return 2;
  }
  // What the top sub-VM starts with; a nested run takes it from the execution data.
  auto top = import_frame(*data, opts.permissions);
  if (!top) {
    *err = top.error().to_string();
    return 2;
  }
  if (opts.hosts.empty()) {
    *err = "at least one --host is required";
    return 2;
  }
  auto client = HostClient::connect(opts.hosts, data->method_hosts, data->host_hello_data);
  if (!client) {
    *err = client.error().to_string();
    HostError why = host_error(client.error());
    return why == HostError::kUri || why == HostError::kRoute ? 2 : 1;
  }
  Logger log(opts.log_fd, opts.log_level);
  log.info("genvm::run", "run started", {{"genvm_id", LogValue::str(opts.genvm_id)}});

  HostStorageReader reader(**client);
  Storage storage(reader, data->message.contract_address);
  RunContext ctx;
  ctx.host = client->get();
  ctx.storage = &storage;
  ctx.debug = opts.debug;
  ctx.log = &log;
  ctx.message_value = u256_from(data->message.value);

  // The role is fixed here, once: leader results handed in make this a validator run.
  ctx.is_leader = !data->leader_nondet_results.has_value();
  if (!ctx.is_leader) ctx.leader_results = &*data->leader_nondet_results;
  ctx.nondet_fuel = opts.nondet_fuel;
  ctx.imported_det_fuel = top->det_fuel_cap;
  ctx.sync = opts.sync;
  Result<module::Hello> hello = module_hello(*data, opts.genvm_id, ctx.is_leader);
  ctx.module_llm = std::make_unique<ModuleClient>(opts.module_llm, hello);
  ctx.module_web = std::make_unique<ModuleClient>(opts.module_web, hello);
  // --module-cache, else GENVM_MODULE_CACHE (cli.cc), else the config's cache_dir.
  ctx.module_cache_dir = opts.module_cache.empty() ? runner_location->cache_dir : opts.module_cache;
  ctx.engine = engine->engine;
  log.debug("genvm::run", "engine", {{"engine", LogValue::str(std::string(engine_name(engine->engine)))},
                                     {"why", LogValue::str(engine->why)}});
  auto runner_dir = std::make_shared<runners::RunnerDirectory>(runner_location->runners_dir, runner_location->registry_dir);
  // An archive checked whole once is remembered in the module cache (runner_marks.h).
  if (!ctx.module_cache_dir.empty()) runner_dir->remember_checks(std::make_shared<SealedArchiveChecks>(ctx.module_cache_dir));
  ctx.runners = std::move(runner_dir);
  ctx.fees = &*meter;
  ctx.fee_allocation = data->message_fee_allocation;

  RunOutcome o = execute(*data, *top, ctx, storage);
  // An internal error commits to no fees (the public executor reports none); every other
  // outcome reports the buckets as the run left them.
  if (o.kind != ResultCode::kInternalError) {
    o.data_fees_remaining = meter->remaining();
    fees::ConsumedTotals c = meter->consumed();
    o.data_fees_consumed = BucketsConsumed{c.storage, c.message_receipt, c.nondet_output, c.message_fee, c.event};
  }
  o.nondet_disagreement = ctx.nondet_disagreement;
  o.llm_consumption = ctx.llm_consumption;
  if (ctx.is_leader) o.nondet_results = std::move(ctx.nondet_results);
  // Entries the validator never consumed are the leader's fault (a fatal error already says
  // more, and the leader's fault of that kind must not be overwritten).
  if (data->leader_nondet_results && o.kind != ResultCode::kInternalError && o.kind != ResultCode::kFatalVmError) {
    apply_leader_surplus(o, data->leader_nondet_results->size(), ctx.nondet_calls);
  }
  // What one host slice can carry, less room for the report's other fields (common/host/wire.h).
  apply_result_size_limit(o, host::kMaxResultBytes);
  o = publish(std::move(o));
  // ram_peak: the most the run's one RAM budget held at once (docs/PROTOCOLS.md, "Memory model
  // of a run"), what its host memory is a constant factor of.
  log.info("genvm::run", "result",
           {{"kind", LogValue::str(wire_name(o.kind))}, {"ram_peak", LogValue::num(ctx.ram ? ctx.ram->peak() : 0)}});
  auto delivered = (*client)->consume_result(encode_consumed_result(std::move(o)));
  if (!delivered) {
    *err = "result not delivered: " + delivered.error().to_string();
    return 1;
  }
  return 0;
}

namespace {

// Nested sub-VMs (CallContract, Sandbox, nondet blocks) recurse on the native stack, up to 512
// deep: the 8 MiB main-thread stack is not enough for that under ASan (found by the 512-deep
// sandbox test). The run gets a thread with a large stack; the pages are only reserved.
constexpr std::size_t kRunStackBytes = std::size_t(512) << 20;

struct RunJob {
  const RunOptions* opts;
  std::string* err;
  int code;
};

void* run_job(void* p) {
  auto* job = static_cast<RunJob*>(p);
  job->code = run_execution_on_this_thread(*job->opts, job->err);
  return nullptr;
}

}  // namespace

int run_execution(const RunOptions& opts, std::string* err) {
  RunJob job{&opts, err, 1};
  pthread_attr_t attr;
  pthread_t thread;
  bool started = false;
  if (pthread_attr_init(&attr) == 0) {
    started = pthread_attr_setstacksize(&attr, kRunStackBytes) == 0 && pthread_create(&thread, &attr, run_job, &job) == 0;
    pthread_attr_destroy(&attr);
  }
  // Without the big thread (an address-space limit) the run still happens, on this stack.
  if (!started) return run_execution_on_this_thread(opts, err);
  pthread_join(thread, nullptr);
  return job.code;
}

}  // namespace genvm::executor
