#include "node/serve/service.h"

#include <csignal>

#include "node/serve/service_core.h"

namespace genvm::node::serve {

Service::Service(ServeOptions opts, TxStore& store) : core_(std::make_unique<ServiceCore>(std::move(opts), store)) {}

Service::~Service() { stop(); }

void Service::register_methods(Rpc& rpc) {
  auto fixed = [](std::string json) { return [json](const Params&) -> RpcResult { return json; }; };
  rpc.add("ping", fixed(json_string("OK")));
  rpc.add("eth_chainId", fixed(hex_u64(kChainId)));
  rpc.add("net_version", fixed(json_string(std::to_string(kChainId))));
  rpc.add("eth_gasPrice", fixed(json_string("0x0")));
  rpc.add("eth_maxPriorityFeePerGas", fixed(json_string("0x0")));
  rpc.add("eth_estimateGas", fixed(hex_u64(500000)));
  rpc.add("eth_syncing", fixed("false"));
  add_account_methods(rpc, *core_);
  add_tx_methods(rpc, *core_);
  add_chain_methods(rpc, *core_);
  add_contract_methods(rpc, *core_);
  add_admin_methods(rpc, *core_);
  add_trace_methods(rpc, *core_);
  add_validator_methods(rpc, *core_);
}

Result<int> Service::seed_validators() {
  const int n = core_->opts.validators;
  std::lock_guard g(core_->store_mu);
  return core_->store.seed_validators_once([n] { return default_validators(n); });
}

void Service::wake() { core_->wake(); }

EventHub& Service::events() { return core_->events; }

void Service::start() {
  core_->stop = false;
  // stop() interrupts the runs through the process-wide flag; a service started again (in the
  // same process) runs transactions again.
  request_interrupt(0);
  core_->worker = std::thread([c = core_.get()] { worker_loop(*c); });
}

void Service::stop() {
  if (!core_->worker.joinable()) return;
  core_->stop = true;
  request_interrupt(SIGTERM);  // cancels a run in progress; its transaction rolls back and resumes on restart
  core_->wake();
  core_->worker.join();
}

}  // namespace genvm::node::serve
