#include "executor/run.h"

#include <cerrno>
#include <charconv>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include "executor/host_client.h"
#include "executor/result.h"
#include "executor/storage.h"
#include "executor/vm.h"

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

void log_line(int fd, const std::string& json) {
  if (fd < 0) return;
  std::string line = json + "\n";
  [[maybe_unused]] ssize_t n = ::write(fd, line.data(), line.size());
}

}  // namespace

int run_execution(const RunOptions& opts, std::string* err) {
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
  if (opts.hosts.empty()) {
    *err = "at least one --host is required";
    return 2;
  }
  auto client = HostClient::connect(opts.hosts, data->method_hosts, data->host_hello_data);
  if (!client) {
    *err = client.error().to_string();
    return client.error().code == "host_uri" || client.error().code == "host_route" ? 2 : 1;
  }
  log_line(opts.log_fd, "{\"event\":\"start\",\"genvm_id\":\"" + opts.genvm_id + "\"}");

  HostStorageReader reader(**client);
  Storage storage(reader, data->message.contract_address);
  RunContext ctx;
  ctx.host = client->get();
  ctx.storage = &storage;
  ctx.debug = opts.debug;
  ctx.log_fd = opts.log_fd;

  RunOutcome o;
  o.data_fees_remaining = data->bucket_totals;
  o.subvm_hashes = SubVmHashAccumulator().finalize();
  if (auto s = validate_entry(data->calldata, data->message.is_init); !s) {
    o.kind = ResultCode::kVmError;
    o.data = calldata::Value(VmError(VmError::malformed_entry()).to_string());
  } else {
    Result<calldata::Bytes> code = make_error("unset");
    if (data->code) {
      code = *data->code;
      if (data->message.is_init) {
        if (auto w = write_deployed_code(storage, *data->code); !w) code = w.take_error();
      }
    } else {
      code = read_contract_code(storage, data->message.contract_address, StorageType::kDefault);
    }
    if (!code) {
      o.kind = ResultCode::kInternalError;
      o.data = calldata::Value(code.error().to_string());
    } else {
      VmFrame frame;
      frame.self = data->message.contract_address;
      frame.permissions = opts.permissions;
      frame.startup_message = startup_message(*data, EntryKind::kMain);
      VmResult r = run_vm(ctx, frame, *code);
      o.kind = r.kind;
      o.data = std::move(r.data);
      o.backtrace = std::move(r.backtrace);
      o.wasm_store_hashes = std::move(r.wasm_store_hashes);
      o.subvm_hashes = r.subvm_hashes;
      o.storage_changes = storage.changes();
      o.emissions = std::move(ctx.emissions);
    }
  }
  // No non-deterministic block is run here yet, so every leader result is surplus.
  if (data->leader_nondet_results && o.kind != ResultCode::kInternalError) {
    apply_leader_surplus(o, data->leader_nondet_results->size(), 0);
  }
  o = publish(std::move(o));
  log_line(opts.log_fd, "{\"event\":\"result\",\"kind\":" + std::to_string(static_cast<int>(o.kind)) + "}");
  auto delivered = (*client)->consume_result(encode_reported_result(o));
  if (!delivered) {
    *err = "result not delivered: " + delivered.error().to_string();
    return 1;
  }
  return 0;
}

}  // namespace genvm::executor
