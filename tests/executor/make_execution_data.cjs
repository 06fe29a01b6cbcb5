// Writes an ExecutionData calldata file with genlayer-js (an independent encoder):
//   node tests/executor/make_execution_data.cjs CODE.wasm OUT.bin [METHOD [--attach]]
// Without METHOD: a deployment of CODE (is_init, code attached). With METHOD: a call {"": METHOD}
// to the same contract address (0x01…01) from 0x02…02, code taken from storage, or with
// --attach carried in the execution data (a call that runs CODE without storing it).
const path = require('path');
const dist = path.join(__dirname, '..', 'interop', 'node_modules', 'genlayer-js', 'dist');
const { abi } = require(path.join(dist, 'index.cjs'));
const { CalldataAddress } = require(path.join(dist, 'chunk-GJXSECNH.cjs'));
const fs = require('fs');

const [codePath, outPath, method, attachFlag] = process.argv.slice(2);
const attach = attachFlag === '--attach';
if (!codePath || !outPath) {
  console.error('usage: make_execution_data.cjs CODE.wasm OUT.bin [METHOD]');
  process.exit(2);
}
const M = (o) => new Map(Object.entries(o));
const addr = (v) => new CalldataAddress(new Uint8Array(20).fill(v));
const entry = method ? M({ '': method }) : M({});
const data = M({
  calldata: abi.calldata.encode(entry),
  message: M({
    contract_address: addr(1), sender_address: addr(2), origin_address: addr(2),
    signer_address: addr(2), chain_id: 61999n, value: 0n, is_init: !method,
  }),
  host_data: '',
  code: method && !attach ? null : new Uint8Array(fs.readFileSync(codePath)),
  leader_nondet_results: null,
  method_hosts: [],
  // The fee data the executor's default rules read (common/host/fee_params.h local_host_fees,
  // without the allocation: these runs send no messages).
  bucket_totals: [10n ** 18n, 10n ** 18n, 10n ** 18n, 10n ** 18n],
  gas_data: M({
    storageUnitPrice: '1', receiptGasPerByte: '1', gasPerChangedSlot: '1', intrinsicGas: '0',
    bootloaderOverhead: '0', fixedProposeReceiptGas: '0', fixedMessageRevealGas: '0', genPerTimeUnit: '0',
  }),
  message_fee_allocation: [],
  initial_time_units_allocation: 0n,
});
fs.writeFileSync(outPath, abi.calldata.encode(data));
