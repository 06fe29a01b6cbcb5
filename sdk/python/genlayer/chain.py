"""The transaction's message, balances, other contracts, messages, deployments and events."""

import typing

from genlayer import _calls, _host, calldata
from genlayer._record import Record
from genlayer._keccak import keccak256
from genlayer.types import Address
from genlayer.vm import Return, unpack_result

__all__ = ["MessageType", "message", "get_contract_at", "deploy_contract", "Event", "emit_event",
           "get_balance", "get_self_balance", "get_timestamp", "STATE_DEFAULT", "STATE_LATEST_FINAL",
           "STATE_LATEST_NON_FINAL"]

STATE_DEFAULT, STATE_LATEST_FINAL, STATE_LATEST_NON_FINAL = 0, 1, 2

ENTRY_MAIN, ENTRY_SANDBOX, ENTRY_CONSENSUS_STAGE = 0, 1, 2


class MessageType(Record):
    """The startup message's fields (spec 03-vm/01-startup.rst "Startup Message"): contract_address,
    sender_address, origin_address, signer_address (Address or None), stack (list of Address),
    chain_id, value, is_init, datetime (str), entry_kind, raw (the whole message, a dict)."""

    _fields = ("contract_address", "sender_address", "origin_address", "signer_address", "stack", "chain_id",
               "value", "is_init", "datetime", "entry_kind", "raw")
    __slots__ = _fields


message: typing.Optional[MessageType] = None


def set_message(raw: dict) -> MessageType:
    global message
    message = MessageType(
        contract_address=raw.get("contract_address"),
        sender_address=raw.get("sender_address"),
        origin_address=raw.get("origin_address"),
        signer_address=raw.get("signer_address"),
        stack=list(raw.get("stack") or []),
        chain_id=raw.get("chain_id", 0),
        value=raw.get("value", 0) or 0,
        is_init=raw.get("is_init") is True,
        datetime=raw.get("datetime", ""),
        entry_kind=raw.get("entry_kind", ENTRY_MAIN),
        raw=raw,
    )
    return message


def get_balance(address: Address) -> int:
    return _host.get_balance(address.as_bytes)


def get_self_balance() -> int:
    return _host.get_self_balance()


def get_timestamp() -> int:
    """Seconds since the Unix epoch: the transaction's in deterministic mode (GetTimestamp)."""
    return calldata.decode(_calls.send_read("GetTimestamp", None))


def call_data(method: typing.Optional[str], args, kwargs) -> dict:
    """The method calling convention (spec 04-contract-interface/02-abi.rst)."""
    out = {}
    if method is not None:
        out[""] = method
    if args:
        out["args"] = list(args)
    if kwargs:
        out["kwargs"] = dict(kwargs)
    return out


class _ViewProxy:
    def __init__(self, address: Address, state: int):
        self._address = address
        self._state = state

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)

        def call(*args, **kwargs):
            body = {"address": self._address, "calldata": call_data(name, args, kwargs), "state": self._state}
            result = unpack_result(_calls.send_read("CallContract", body))
            if isinstance(result, Return):
                return result.calldata
            raise result

        return call


class _EmitProxy:
    def __init__(self, address: Address, value: int, on: str):
        if on not in ("accepted", "finalized"):
            raise ValueError("on is 'accepted' or 'finalized'")
        self._address = address
        self._value = value
        self._on = on

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)

        def call(*args, **kwargs):
            _post(self._address, call_data(name, args, kwargs), self._value, self._on)

        return call


def _post(address: Address, data: dict, value: int, on: str) -> None:
    _calls.send("PostMessage", {"address": address, "calldata": data, "on": on, "value": value})


class ContractAt:
    """Another contract: .view() calls its methods now (read-only), .emit() posts messages."""

    def __init__(self, address: Address):
        self.address = Address(address)

    def view(self, *, state: int = STATE_DEFAULT) -> _ViewProxy:
        return _ViewProxy(self.address, state)

    def emit(self, *, value: int = 0, on: str = "finalized") -> _EmitProxy:
        return _EmitProxy(self.address, value, on)

    def emit_transfer(self, *, value: int, on: str = "finalized") -> None:
        """Sends value with no method call."""
        _post(self.address, {}, value, on)

    @property
    def balance(self) -> int:
        return get_balance(self.address)


def get_contract_at(address: Address) -> ContractAt:
    return ContractAt(address)


def deploy_contract(*, code: bytes, args: typing.Sequence = (), kwargs: typing.Optional[dict] = None,
                    salt_nonce: int = 0, value: int = 0, on: str = "finalized") -> None:
    """Posts a deployment of `code` with constructor arguments (DeployContract)."""
    if on not in ("accepted", "finalized"):
        raise ValueError("on is 'accepted' or 'finalized'")
    body = {"calldata": call_data(None, args, kwargs or {}), "code": bytes(code), "on": on,
            "salt_nonce": salt_nonce, "value": value}
    _calls.send("DeployContract", body)


_TOPIC_SIZE = 32
_MAX_TOPICS = 4


def _topic(value) -> bytes:
    """An indexed value as a 32-byte topic: Address and bytes left as they are (zero-padded on
    the right), integers as 32-byte big-endian two's complement, anything else (or longer) as
    keccak256 of its calldata."""
    if isinstance(value, Address):
        return value.as_bytes.ljust(_TOPIC_SIZE, b"\0")
    if isinstance(value, (bytes, bytearray)) and len(value) <= _TOPIC_SIZE:
        return bytes(value).ljust(_TOPIC_SIZE, b"\0")
    if isinstance(value, int) and not isinstance(value, bool) and -(1 << 255) <= value < (1 << 256):
        return (value % (1 << 256)).to_bytes(_TOPIC_SIZE, "big")
    return keccak256(calldata.encode(value))


def emit_event(topics: typing.Sequence[bytes], blob: dict) -> None:
    """EmitEvent with raw 32-byte topics (at most 4) and a str-keyed blob."""
    topics = [bytes(t) for t in topics]
    if len(topics) > _MAX_TOPICS or any(len(t) != _TOPIC_SIZE for t in topics):
        raise ValueError("an event has at most 4 topics of 32 bytes")
    _calls.send("EmitEvent", {"blob": dict(blob), "topics": topics})


class Event:
    """An event: positional arguments are indexed (topics), keyword arguments its data.

        class Transfer(gl.Event):
            pass
        Transfer(sender, receiver, amount=5).emit()

    Topic 0 is keccak256 of the event's name (the class name, or `name` set on the class); each
    positional value becomes one more topic (at most 3).
    """

    name: typing.ClassVar[typing.Optional[str]] = None

    def __init__(self, *indexed, **blob):
        if len(indexed) > _MAX_TOPICS - 1:
            raise ValueError("an event has at most 3 indexed values")
        self.indexed = indexed
        self.blob = blob

    def topics(self) -> typing.List[bytes]:
        name = type(self).name or type(self).__name__
        return [keccak256(name.encode("utf-8"))] + [_topic(v) for v in self.indexed]

    def emit(self) -> None:
        emit_event(self.topics(), self.blob)
