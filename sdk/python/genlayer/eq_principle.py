"""The equivalence principles: ready-made leader/validator pairs over gl.vm.run_nondet."""

import typing

from genlayer import calldata, nondet, vm

__all__ = ["strict_eq", "prompt_comparative", "prompt_non_comparative"]


def _same(a, b) -> bool:
    # Compared as their calldata bytes: exact, and 1 == True does not pass.
    try:
        return calldata.encode(a) == calldata.encode(b)
    except (TypeError, ValueError):
        return a == b


def strict_eq(fn: typing.Callable[[], typing.Any]):
    """Every validator runs fn() too and agrees iff it got exactly the leader's value (or the
    same UserError)."""

    def validator(leader_result) -> bool:
        mine = vm._capture(fn)
        if isinstance(leader_result, vm.Return) and isinstance(mine, vm.Return):
            return _same(leader_result.calldata, mine.calldata)
        if isinstance(leader_result, vm.UserError) and isinstance(mine, vm.UserError):
            return _same(leader_result.message, mine.message)
        return False

    return vm.run_nondet_unsafe(fn, validator)


def prompt_comparative(fn: typing.Callable[[], typing.Any], principle: str):
    """Every validator runs fn() and asks the LLM (template EqComparative) whether its answer and
    the leader's are equivalent under `principle`."""

    def validator(leader_result) -> bool:
        if not isinstance(leader_result, vm.Return):
            return False
        mine = fn()
        return nondet.exec_prompt_template(
            "EqComparative",
            leader_answer=nondet.as_text(leader_result.calldata),
            validator_answer=nondet.as_text(mine),
            principle=principle,
        ) is True

    return vm.run_nondet_unsafe(fn, validator)


def prompt_non_comparative(fn: typing.Callable[[], typing.Any], *, task: str, criteria: str) -> str:
    """The leader turns fn()'s output into an answer to `task` (template EqNonComparativeLeader);
    each validator runs fn() and asks whether the leader's answer meets `criteria` for that input
    (EqNonComparativeValidator). Returns the leader's answer."""

    def leader() -> str:
        return nondet.exec_prompt_template(
            "EqNonComparativeLeader", task=task, criteria=criteria, input=nondet.as_text(fn()))

    def validator(leader_result) -> bool:
        if not isinstance(leader_result, vm.Return) or not isinstance(leader_result.calldata, str):
            return False
        return nondet.exec_prompt_template(
            "EqNonComparativeValidator", task=task, criteria=criteria, input=nondet.as_text(fn()),
            output=leader_result.calldata,
        ) is True

    return vm.run_nondet_unsafe(leader, validator)
