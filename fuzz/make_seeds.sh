#!/usr/bin/env bash
# Regenerates the committed seed corpora of the fuzz targets other than calldata_fuzz
# (fuzz/make_calldata_seeds.sh) and wasm_reader_fuzz: blake3_fuzz, execution_data_fuzz,
# host_client_fuzz, manager_protocol_fuzz, fee_expr_fuzz and module_wire_fuzz. Each seed is a
# well-formed input of the target's layout (or a near miss), so the fuzzer starts inside the
# accepting paths instead of spending its first minutes discovering the framing.
#   fuzz/make_seeds.sh [path/to/genvm-calldata]
set -euo pipefail
cd "$(dirname "$0")/.."
cli="${1:-build/tools/genvm-calldata/genvm-calldata}"
[ -x "$cli" ] || { echo "make_seeds.sh: $cli is not built (cmake --build build --target genvm-calldata)" >&2; exit 2; }

enc() { printf '%s' "$1" | "$cli" encode; }        # text form -> calldata bytes
enc_hex() { printf '%s' "$1" | "$cli" encode --hex | tr -d '\n'; }
unhex() { printf "$(printf %s "$1" | sed 's/../\\x&/g')"; }
fresh() { rm -rf "fuzz/$1"; mkdir -p "fuzz/$1"; }

# --- blake3_fuzz: byte 0 repetitions, byte 1 mode, bytes 2..9 split seed, then the message.
# Lengths straddle the chunk (1024) and block (64) edges after repetition.
fresh blake3_fuzz
python3 - <<'EOF'
import random
rng = random.Random(1)
for i, (reps, mode, n) in enumerate([(0, 0, 0), (0, 1, 1), (0, 2, 63), (0, 0, 64), (0, 1, 65),
                                      (15, 2, 64), (16, 0, 128), (63, 1, 100), (3, 2, 1025),
                                      (1, 0, 2049), (7, 1, 4097), (0, 2, 7000)]):
    head = bytes([reps, mode]) + rng.randbytes(8)
    open(f"fuzz/blake3_fuzz/seed_{i:02d}", "wb").write(head + rng.randbytes(n))
EOF

# --- execution_data_fuzz: the ExecutionData calldata map (deployment, call, nondet leader data).
fresh execution_data_fuzz
msg='"message": {"chain_id": 61999, "contract_address": addr#0101010101010101010101010101010101010101, "datetime": "2024-11-26T06:42:42.424242Z", "is_init": IS_INIT, "origin_address": addr#0202020202020202020202020202020202020202, "sender_address": addr#0202020202020202020202020202020202020202, "signer_address": addr#0202020202020202020202020202020202020202, "value": 0}'
tail_fields='"bucket_totals": [], "gas_data": {}, "host_data": "", "initial_time_units_allocation": 0, "message_fee_allocation": [], "method_hosts": [0, 0, 0, 0, 0, 0, 1, 1, 1]'
deploy_cd=$(enc_hex '{}')
call_cd=$(enc_hex '{"": "get"}')
args_cd=$(enc_hex '{"args": [1, "two", b#03], "kwargs": {"k": null}, "method": "transfer"}')
enc "{\"calldata\": b#$deploy_cd, \"code\": b#0061736d01000000, \"leader_nondet_results\": null, ${msg/IS_INIT/true}, $tail_fields}" >fuzz/execution_data_fuzz/deploy
enc "{\"calldata\": b#$call_cd, \"code\": null, \"leader_nondet_results\": null, ${msg/IS_INIT/false}, $tail_fields}" >fuzz/execution_data_fuzz/call
enc "{\"calldata\": b#$args_cd, \"code\": null, ${msg/IS_INIT/false}, $tail_fields, \"leader_nondet_results\": [b#00, b#0104], \"host_hello_data\": [b#01]}" >fuzz/execution_data_fuzz/call_args_leader
enc "{\"calldata\": b#$call_cd, \"code\": null, \"leader_nondet_results\": null, ${msg/IS_INIT/false}, $tail_fields, \"remaining_recursion\": 3}" >fuzz/execution_data_fuzz/recursion
enc "{\"calldata\": b#$call_cd, ${msg/IS_INIT/false}}" >fuzz/execution_data_fuzz/bad_missing_fields
enc "{\"calldata\": 5, \"code\": null, ${msg/IS_INIT/false}, $tail_fields}" >fuzz/execution_data_fuzz/bad_calldata_type

# --- host_client_fuzz: byte 0 picks four methods (2 bits each: storage_read, eth_call,
# resolve_callcontract_executor, run_nested), then get_balance and consume_result; the rest is
# what the host answers: a u8 status (0 ok, 1 evm reverted, 2 forbidden) and the method's reply.
fresh host_client_fuzz
ok40="00$(printf '%080x' 0)"
le32() { local v=$1; printf '%02x%02x%02x%02x' $((v & 255)) $((v >> 8 & 255)) $((v >> 16 & 255)) $((v >> 24 & 255)); }
balance="00$(printf '%064x' 1000)"
unhex "00${ok40}${ok40}${ok40}${ok40}${balance}00" >fuzz/host_client_fuzz/reads_ok
eth="000102"; unhex "55${ok40}00$(le32 3)${eth}${ok40}00$(le32 3)${eth}${balance}00" >fuzz/host_client_fuzz/reads_and_eth_calls
nested=$(enc_hex '{"ok": [1, 2]}')
unhex "ff00$(le32 $(( ${#nested} / 2 )))${nested}0100$(le32 2)0102$(le32 0)" >fuzz/host_client_fuzz/run_nested_then_errors
unhex "aa0100$(le32 1)00" >fuzz/host_client_fuzz/resolve_reverted
unhex "00ff" >fuzz/host_client_fuzz/bad_status
unhex "0000$(le32 4294967295)" >fuzz/host_client_fuzz/bad_huge_slice

# --- manager_protocol_fuzz: a socket frame, u16 method | u64 request id (big-endian) | calldata.
fresh manager_protocol_fuzz
frame() { unhex "$(printf '%04x%016x' "$1" "$2")$(enc_hex "$3")"; }
run_body='{"run": {"debug_mode": "disabled", "deadline": "30s", "extra_args": [], "host_genvm_id": "node-1", "is_sync": false, "major": 0, "message": {"chain_id": "61999", "contract_address": "0x0101010101010101010101010101010101010101", "is_init": false, "origin_address": "0x0202020202020202020202020202020202020202", "sender_address": "0x0202020202020202020202020202020202020202", "value": "0"}, "timestamp": "2024-11-26T06:42:42Z"}}'
frame 3 1 "$run_body" >fuzz/manager_protocol_fuzz/run
frame 4 2 '{"attach": {"boot_id": 12345, "genvm_id": 1}}' >fuzz/manager_protocol_fuzz/attach
frame 5 3 '{"cancel": {"genvm_id": 1}}' >fuzz/manager_protocol_fuzz/cancel
frame 6 4 '{"ack": {"genvm_id": 1}}' >fuzz/manager_protocol_fuzz/ack
frame 7 5 '{"get_artifact": {"field": "stdout", "genvm_id": 1, "max_len": 100, "offset": 1}}' >fuzz/manager_protocol_fuzz/get_artifact
frame 9 6 '{}' >fuzz/manager_protocol_fuzz/bad_unknown_method
frame 3 0 '{}' >fuzz/manager_protocol_fuzz/bad_request_id_0
printf '90s' >fuzz/manager_protocol_fuzz/duration
unhex "06$(le32 2)0000" >fuzz/manager_protocol_fuzz/host_one_consume_result

# --- fee_expr_fuzz: fee expression text: each default rule bound as the executor binds it
# (`\node = prelude code`) and applied to a node object and the charge's attrs, a gas_data
# entry, and near misses.
fresh fee_expr_fuzz
python3 - <<'PY'
import yaml
fees = yaml.safe_load(open("src/executor/fees/default_fees.yaml"))["fees"]
prelude = fees["expr_prelude"]
T, F = "(0 < 1)", "(1 < 0)"  # the language has no boolean literals
node = ("{ storageUnitPrice = 3; receiptGasPerByte = 5; gasPerChangedSlot = 7; intrinsicGas = 11; "
        "bootloaderOverhead = 13; fixedProposeReceiptGas = 17; fixedMessageRevealGas = 19; genPerTimeUnit = 2; }")
params = ("{ leaderTimeunitsAllocation = 3; validatorTimeunitsAllocation = 4; executionBudgetPerRound = 5; "
          "rotations = [1, 0, 2]; maxPriceGenPerTimeUnit = 6; storageFeeMaxGasPrice = 1; receiptFeeMaxGasPrice = 1; }")
attrs = {
    "storage": "{ pages = 1; }",
    "message_receipt": f"{{ isInternal = {T}; isDeploy = {T}; calldataLength = 70; codeLength = 900; subtreeLength = 64; }}",
    "nondet_output": "{ outputLength = 100; }",
    "message_fee": f"{{ isInternal = {T}; onAcceptance = {T}; balanceFunded = {F}; matchedFeeParams = {params}; }}",
    "event": "{ blobSize = 65; topicsCount = 2; }",
}
seeds = {"gas_constant": prelude + "\n7", "interpolation": '"a\\(1 + 1)b\\("c")"',
         "objects": '{ a = [1, 2.5e3, -3]; b = { c = hasKey { x = 1; } "x"; }; }.b.c',
         "y_loop": "let Y = \\f = (\\x = f (\\v = x x v)) (\\x = f (\\v = x x v)) in Y (\\go i = if i == 0 then 0 else go (i - 1)) 50",
         "bad_unterminated": '"abc \\(1 +', "bad_deep": "(" * 300 + "1" + ")" * 300}
for rule, a in attrs.items():
    bind = lambda code: f"(\\node = {prelude}\n{code}) {node}"
    seeds[f"{rule}_start"] = bind(fees[rule].get("subtract_on_start_expr", "0"))
    seeds[f"{rule}_delta"] = f"({bind(fees[rule]['delta_expr'])}) {a}"
for name, text in seeds.items():
    open(f"fuzz/fee_expr_fuzz/{name}", "w").write(text)
PY

# --- module_wire_fuzz: the executor ⇄ module frames' calldata (hello, each request, each answer
# and Ok payload), and a host_data JSON text (read when the bytes are not calldata).
fresh module_wire_fuzz
enc '{"gas_data": {"storageUnitPrice": "3"}, "genvm_id": 1, "host_data": {"node_address": "0xaa", "tx_id": "0x01", "n": [1, null]}, "initial_time_units_allocation": 7, "role": "Leader"}' >fuzz/module_wire_fuzz/hello
enc '{"Prompt": {"payload": {"images": [b#89504e47], "prompt": "hi", "response_format": "json"}, "remaining_fuel_as_gen": 12345}}' >fuzz/module_wire_fuzz/prompt
enc '{"PromptTemplate": {"payload": {"leader_answer": "a", "principle": "p", "template": "EqComparative", "validator_answer": "b"}, "remaining_fuel_as_gen": 0}}' >fuzz/module_wire_fuzz/template
enc '{"Request": [{"body": b#616263, "headers": {"accept": b#2a2f2a}, "method": "POST", "sign": false, "url": "https://example.com/"}, 1000]}' >fuzz/module_wire_fuzz/request
enc '{"Render": [{"mode": "screenshot", "url": "https://example.com/", "wait_after_loaded": "2s"}, 65536]}' >fuzz/module_wire_fuzz/render
enc '{"Ok": {"consumed_gen": 3, "data": true}}' >fuzz/module_wire_fuzz/answer_ok
enc '{"UserError": {"causes": ["TLD_FORBIDDEN"], "ctx": {"tld": "x"}}}' >fuzz/module_wire_fuzz/answer_user_error
enc '{"FatalError": "boom"}' >fuzz/module_wire_fuzz/answer_fatal
enc '{"response": {"body": b#00, "headers": {"content-type": b#74}, "status": 200}}' >fuzz/module_wire_fuzz/render_answer
printf '%s' '{"node_address": "a", "tx_id": "b", "x": [1, -2, {"y": null, "z": true}]}' >fuzz/module_wire_fuzz/host_data_json

for t in blake3_fuzz execution_data_fuzz host_client_fuzz manager_protocol_fuzz fee_expr_fuzz module_wire_fuzz; do
  echo "wrote $(ls "fuzz/$t" | wc -l) seeds to fuzz/$t"
done
