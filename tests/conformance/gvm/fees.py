"""Fee amounts a GenVM node's executor charges, computed independently.

impl-spec/04-fees.rst defines the mechanism (buckets from `bucket_totals`, `node` from
`gas_data`, per-bucket `subtract_on_start_expr` charged once at start and `delta_expr` per
charge, every charge debiting a reservoir and counted in `data_fees_consumed`) but leaves the
expressions to the operator's configuration. The expressions below are the public executor's
shipped configuration, executor/install/config/genvm.yaml at commit be5cfe9 of
genlayerlabs/genvm-executor (the line whose fee surface matches the spec's 02-gl_call.rst:
balance-funded messages, the node floors), translated by hand; the spec is silent on them, so a
node that wants the same execution hash as a GenVM node must charge exactly these.

  storage          bucket 0     start 0             delta pages * node.storageUnitPrice
  message_receipt  buckets 0,3  start [RECEIPT_START, 0]
                                delta [size * receiptGasPerByte + gasPerChangedSlot, size]
                                (size: receipt_size(); bucket 3 caps the bytes)
  nondet_output    buckets 0,2  start [32 * node.receiptGasPerByte, 0]
                                delta [(32 + 32 + ceilDiv(outputLength, 32) * 32) * receiptGasPerByte,
                                       outputLength]   (bucket 2 caps the bytes)
  message_fee      bucket 1  start 0                delta messageFeeFloor / gasLimit * maxGasPrice
  event            bucket 0  start 0                delta (topicsCount + ceilDiv(blobSize, 32)) * node.storageUnitPrice

A charge naming two buckets debits both; data_fees_consumed counts both parts, an emission's
fee field only the first. A storage page is 32 octets, charged once per page a run first writes (rt/vm/storage.rs
`StoragePagesOverride::write_page`).
"""

# Values for every `node.*` constant the configuration reads (distinct primes, so a sum names
# its parts); genPerTimeUnit 0 selects the plain consensus term.
GAS_DATA = {
    "storageUnitPrice": "3",
    "receiptGasPerByte": "5",
    "gasPerChangedSlot": "7",
    "intrinsicGas": "11",
    "bootloaderOverhead": "13",
    "fixedProposeReceiptGas": "17",
    "fixedMessageRevealGas": "19",
    "genPerTimeUnit": "0",
}
NODE = {k: int(v) for k, v in GAS_DATA.items()}
# bucket_totals of every run: the configuration above charges buckets 0 to 3.
BUCKETS = [1_000_000, 1_000_000, 1_000_000, 1_000_000]
DEFAULT_VALIDATORS_PER_ROUND = [5, 7, 11, 13, 23, 25, 47, 49, 95, 97, 191, 193, 383, 385, 767, 769, 1535, 1537]


def ceil_div(a, b):
    return (a + b - 1) // b


def receipt_start(node=NODE):
    return (node["fixedProposeReceiptGas"] + node["intrinsicGas"] + node["bootloaderOverhead"]
            + 7 * node["gasPerChangedSlot"] + node["fixedMessageRevealGas"] + node["intrinsicGas"]
            + node["bootloaderOverhead"] + 32 * node["gasPerChangedSlot"])


def nondet_start(node=NODE):
    return 32 * node["receiptGasPerByte"]


def startup_consumed(node=NODE):
    """data_fees_consumed right after start: each bucket's subtract_on_start."""
    return {"storage": 0, "message_receipt": receipt_start(node), "nondet_output": nondet_start(node),
            "message_fee": 0, "event": 0}


def storage_pages(pages, node=NODE):
    return pages * node["storageUnitPrice"]


def nondet_output(length, node=NODE):
    return (32 + 32 + ceil_div(length, 32) * 32) * node["receiptGasPerByte"]


def event(topics_count, blob_size, node=NODE):
    return (topics_count + ceil_div(blob_size, 32)) * node["storageUnitPrice"]


def receipt_size(calldata_length, subtree_length, code_length=0, is_deploy=False):
    """The ABI size of a message receipt's bytes fields (what bucket 3 caps)."""
    calldata_bytes = 32 + 32 + ceil_div(calldata_length, 32) * 32
    subtree_bytes = 32 + 32 + ceil_div(subtree_length, 32) * 32
    code_bytes = 32 + 32 + ceil_div(code_length, 32) * 32 if is_deploy else 0
    return calldata_bytes + subtree_bytes + code_bytes


def receipt(calldata_length, subtree_length, code_length=0, is_deploy=False, node=NODE):
    """A receipt's gas part (bucket 0): the emission's receipt_fee."""
    size = receipt_size(calldata_length, subtree_length, code_length, is_deploy)
    return size * node["receiptGasPerByte"] + node["gasPerChangedSlot"]


def receipt_size_of_fee(receipt_fee, node=NODE):
    """The byte part of a receipt whose gas part is receipt_fee."""
    return (receipt_fee - node["gasPerChangedSlot"]) // node["receiptGasPerByte"]


def message_fee_floor(params, on_acceptance, node=NODE, validators=DEFAULT_VALIDATORS_PER_ROUND):
    """The configuration's `messageFeeFloor feeParams onAcceptance`."""
    rotations = params["rotations"]
    appeal_rounds = len(rotations) - 1
    leader_tu = params["leader_timeunits_allocation"]
    validator_tu = params["validator_timeunits_allocation"]

    def rotations_for_round(r):
        if r == 0:
            return rotations[0] + 1
        if r % 2 == 1:
            return 1
        return rotations[r // 2] + 1

    consensus = sum(rotations_for_round(r) * (leader_tu + validators[r] * validator_tu)
                    for r in range(2 * appeal_rounds + 1))
    leader_rounds = sum(rotations[i] + 1 for i in range(appeal_rounds + 1)) + appeal_rounds
    execution = params["execution_budget_per_round"] * leader_rounds
    gen = node["genPerTimeUnit"]
    primary = (gen * consensus if gen > 0 else consensus) + execution
    return primary * (appeal_rounds + 1 if on_acceptance else 1)


def external_fee(params):
    return params["gas_limit"] * params["max_gas_price"]
