"""The ExecutionData a GenVM manager writes to the executor's stdin.

Shape: crates/modules-interfaces/src/domain.rs `ExecutionData`, filled as
implementation/src/manager/run.rs `execution_data_from_request` does, encoded by the public
calldata derive (executor/crates/calldata-derive/src/encode.rs in genlayerlabs/genvm-executor):
a struct is a map of all its fields sorted by name; `Option` fields are always present (null
when None: the derive writes every field; `#[calldata(default)]` only matters when decoding);
`Vec<u8>` is an array of integers (no byte-string special case in the derive), `Bytes` a byte
string, `BigInt`/`U256` integers, unit enum variants their (renamed) name as a string, a
one-field tuple variant `{"Variant": payload}`.
"""

import datetime as _dt
import re

from . import calldata
from .host import METHOD_ID

DEFAULT_DATETIME = "2024-11-26T06:42:42.424242Z"  # abi_stub.rs default_datetime

# run.rs execution_data_from_request: consume_result and run_nested always go to host 1;
# resolve_callcontract_executor too unless the request hooks cross-contract calls.
METHODS_SIZE = 9  # host_fns.rs Methods::SIZE


def manager_method_hosts(hook_cross_contract_calls=False):
    hosts = [0] * METHODS_SIZE
    hosts[METHOD_ID["consume_result"]] = 1
    hosts[METHOD_ID["run_nested"]] = 1
    if not hook_cross_contract_calls:
        hosts[METHOD_ID["resolve_callcontract_executor"]] = 1
    return hosts


def rfc3339_utc(moment):
    """chrono's `to_rfc3339_opts(SecondsFormat::AutoSi, true)` (abi_stub.rs encode_datetime_rfc3339):
    UTC, `Z` suffix, and the shortest of 0 / 3 / 6 / 9 fraction digits that shows every non-zero
    sub-second digit. `moment` is (datetime in UTC, nanoseconds within the second)."""
    dt, nanos = moment
    base = dt.strftime("%Y-%m-%dT%H:%M:%S")
    if nanos == 0:
        frac = ""
    elif nanos % 1_000_000 == 0:
        frac = f".{nanos // 1_000_000:03d}"
    elif nanos % 1_000 == 0:
        frac = f".{nanos // 1_000:06d}"
    else:
        frac = f".{nanos:09d}"
    return base + frac + "Z"


_RFC3339 = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|z|[+-]\d{2}:\d{2})\Z")


def parse_rfc3339(text):
    """RFC 3339 date-time (what chrono `parse_from_rfc3339` reads) -> (UTC datetime, nanoseconds);
    the forms our tests write: YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)."""
    m = _RFC3339.match(text)
    if not m:
        raise ValueError(f"not an RFC 3339 date-time: {text!r}")
    dt = _dt.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")
    nanos = int(((m.group(2) or "") + "000000000")[:9])
    tz = m.group(3)
    offset = _dt.timedelta(0)
    if tz not in ("Z", "z"):
        sign = 1 if tz[0] == "+" else -1
        offset = sign * _dt.timedelta(hours=int(tz[1:3]), minutes=int(tz[4:6]))
    return (dt - offset, nanos)


def utc_reencoded(text):
    """The string a public executor or manager writes for a datetime it read as `text`."""
    return rfc3339_utc(parse_rfc3339(text))


def message(contract, sender, origin, signer, *, chain_id=61999, value=0, is_init=False,
            datetime=DEFAULT_DATETIME):
    """abi_stub.rs MessageData: eight fields, datetime as the manager re-encodes it (UTC)."""
    return {
        "contract_address": contract,
        "sender_address": sender,
        "origin_address": origin,
        "signer_address": signer,
        "chain_id": chain_id,
        "value": value,
        "is_init": is_init,
        "datetime": datetime,
    }


def internal_params(leader, validator, budget, rotations, max_price=1, storage_cap=1, receipt_cap=1):
    """domain/fees/mod.rs InternalMessageParams (and the gl_call FeeParams of 02-gl_call.rst)."""
    return {
        "leader_timeunits_allocation": leader,
        "validator_timeunits_allocation": validator,
        "execution_budget_per_round": budget,
        "rotations": list(rotations),
        "max_price_gen_per_time_unit": max_price,
        "storage_fee_max_gas_price": storage_cap,
        "receipt_fee_max_gas_price": receipt_cap,
    }


def external_params(gas_limit, max_gas_price):
    """domain/fees/mod.rs ExternalMessageParams."""
    return {"gas_limit": gas_limit, "max_gas_price": max_gas_price}


def allocation_node(*, budget, on="finalized", internal=None, external=None, recipient=None, call_key=None,
                    children=()):
    """domain/fees/mod.rs MessageAllocationNode: fee_params is the externally tagged enum
    MessageAllocationNodeParams ({"Internal": ...} / {"External": ...}); on is abi_stub.rs On,
    renamed "finalized"/"accepted"; recipient and call_key are Option (null = wildcard)."""
    assert (internal is None) != (external is None)
    return {
        "recipient": recipient,
        "call_key": call_key,
        "budget": budget,
        "on": on,
        "fee_params": {"Internal": internal} if internal is not None else {"External": external},
        "children": list(children),
    }


def execution_data(*, calldata_bytes, message, host_data="", code=None, leader_nondet_results=None,
                   hook_cross_contract_calls=False, method_hosts=None, host_hello_data=(), bucket_totals=(),
                   gas_data=None, message_fee_allocation=(), initial_time_units_allocation=0,
                   record_actions=(), remaining_recursion=None, nested=None):
    """domain.rs ExecutionData as a calldata value (run.rs execution_data_from_request)."""
    return {
        "calldata": bytes(calldata_bytes),
        "message": message,
        "host_data": host_data,
        "code": None if code is None else bytes(code),
        "leader_nondet_results": None if leader_nondet_results is None else [bytes(e) for e in leader_nondet_results],
        "method_hosts": list(method_hosts if method_hosts is not None else manager_method_hosts(hook_cross_contract_calls)),
        "host_hello_data": [bytes(h) for h in host_hello_data],
        "bucket_totals": list(bucket_totals),
        "gas_data": dict(gas_data or {}),
        "message_fee_allocation": list(message_fee_allocation),
        "initial_time_units_allocation": initial_time_units_allocation,
        "record_actions": list(record_actions),
        "remaining_recursion": remaining_recursion,
        "nested": nested,
    }


def encode(value):
    return calldata.encode(value)
