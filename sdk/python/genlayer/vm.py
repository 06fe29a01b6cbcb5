"""Results of sub-VMs, non-deterministic blocks, sandboxes and the VM's own errors.

A sub-VM (CallContract, RunNondet, Sandbox) answers [result_code: u8][data]
(spec 02-execution-environment/03-wasi_genlayer_sdk/03-schemas.rst): 0 Return (calldata),
1 UserError (calldata), 2 VMError (UTF-8 code).
"""

import typing

from genlayer import _calls, calldata
from genlayer._record import Record

__all__ = ["Return", "UserError", "VMError", "Rollback", "Result", "unpack_result", "run_nondet",
           "run_nondet_unsafe", "spawn_sandbox", "trace", "trace_time_micro", "RESULT_RETURN",
           "RESULT_USER_ERROR", "RESULT_VM_ERROR"]

RESULT_RETURN, RESULT_USER_ERROR, RESULT_VM_ERROR = 0, 1, 2


class Return(Record):
    """A sub-VM's successful result: Return(calldata)."""

    __slots__ = ("calldata",)
    _fields = ("calldata",)


class UserError(Exception):
    """An error the contract raises on purpose: the call ends with UserError(message)."""

    def __init__(self, message, /):
        super().__init__(message)
        self.message = message

    def __eq__(self, other):
        return isinstance(other, UserError) and other.message == self.message

    def __hash__(self):
        return hash((UserError, repr(self.message)))

    def __repr__(self):
        return f"{type(self).__name__}({self.message!r})"


class Rollback(UserError):
    """Ends the call as a UserError, so nothing it wrote or emitted is kept."""


class VMError(Exception):
    """A sub-VM ended with a VM error; `message` is its code (e.g. "exit_code 1")."""

    def __init__(self, message: str, /):
        super().__init__(message)
        self.message = message

    def __eq__(self, other):
        return isinstance(other, VMError) and other.message == self.message

    def __hash__(self):
        return hash((VMError, self.message))

    def __repr__(self):
        return f"VMError({self.message!r})"


Result = typing.Union[Return, UserError, VMError]


def unpack_result(buf: bytes) -> Result:
    if not buf:
        raise ValueError("empty sub-VM result")
    code, data = buf[0], buf[1:]
    if code == RESULT_RETURN:
        return Return(calldata.decode(data))
    if code == RESULT_USER_ERROR:
        return UserError(calldata.decode(data))
    if code == RESULT_VM_ERROR:
        return VMError(data.decode("utf-8"))
    raise ValueError(f"unknown sub-VM result code {code}")


def _value_of(result: Result):
    if isinstance(result, Return):
        return result.calldata
    raise result


def run_nondet_unsafe(leader_fn: typing.Callable[[], typing.Any],
                      validator_fn: typing.Callable[[Result], bool]):
    """Runs a non-deterministic block (RunNondet).

    The leader runs leader_fn(); a validator runs validator_fn(leader's result), which answers
    whether it agrees. Every node continues with the leader's result: its value is returned, a
    UserError or VMError is raised.
    """
    body = {"data_leader": _calls.dump_callable(leader_fn), "data_validator": _calls.dump_callable(validator_fn)}
    return _value_of(unpack_result(_calls.send_read("RunNondet", body)))


def _capture(fn) -> Result:
    try:
        return Return(fn())
    except UserError as e:
        return e
    except VMError as e:
        return e


def run_nondet(leader_fn: typing.Callable[[], typing.Any], validator_fn: typing.Callable[[typing.Any], bool]):
    """As run_nondet_unsafe, but validator_fn sees only a leader's returned value. When the
    leader ended with a UserError, the validator agrees iff leader_fn ends with the same error
    on the validator too; a leader's VMError is never agreed with."""

    def validate(leader_result: Result) -> bool:
        if isinstance(leader_result, Return):
            return validator_fn(leader_result.calldata) is True
        if isinstance(leader_result, UserError):
            return _capture(leader_fn) == leader_result
        return False

    return run_nondet_unsafe(leader_fn, validate)


def spawn_sandbox(fn: typing.Callable[[], typing.Any], *, allow_write_ops: bool = False) -> Result:
    """Runs fn() in a sandboxed sub-VM of this contract's code (Sandbox). Its storage writes and
    messages are allowed only with allow_write_ops (and only if this VM may)."""
    body = {
        "allow_register_runners": False,
        "allow_send_messages": allow_write_ops,
        "allow_write_storage": allow_write_ops,
        "data": _calls.dump_callable(fn),
        "runner": "contract",
    }
    return unpack_result(_calls.send_read("Sandbox", body))


def trace(*items) -> None:
    """A debug line (Trace.Message); whether it is logged is up to the executor."""
    _calls.send("Trace", {"Message": " ".join(str(i) for i in items)})


def trace_time_micro() -> int:
    """Microseconds since the VM started (0 in deterministic mode)."""
    return calldata.decode(_calls.send_read("Trace", "RuntimeMicroSec"))
