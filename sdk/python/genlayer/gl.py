"""The `gl` namespace of contracts: gl.Contract, gl.public, gl.message, gl.nondet,
gl.eq_principle, gl.vm, gl.storage, and calls to other contracts."""

import sys as _sys

from genlayer import calldata, eq_principle, nondet, storage, vm
from genlayer.chain import (ContractAt, Event, deploy_contract, emit_event, get_balance, get_contract_at,
                            get_self_balance, get_timestamp)
from genlayer.contract import Contract, contract, public
from genlayer.vm import Rollback, UserError, VMError

__all__ = ["Contract", "contract", "public", "message", "nondet", "eq_principle", "vm", "storage", "calldata",
           "get_contract_at", "ContractAt", "deploy_contract", "Event", "emit_event", "get_balance",
           "get_self_balance", "get_timestamp", "UserError", "Rollback", "VMError", "trace"]

trace = vm.trace


def __getattr__(name):
    # gl.message is set when the entry reads the startup message.
    if name in ("message", "message_raw"):
        from genlayer import chain
        if name == "message_raw":
            return chain.message.raw if chain.message else None
        return chain.message
    raise AttributeError(f"module 'genlayer.gl' has no attribute {name!r}")


_sys.modules.setdefault("genlayer.gl", _sys.modules[__name__])
