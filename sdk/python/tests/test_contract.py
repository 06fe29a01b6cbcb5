"""Contracts end to end inside the SDK: the startup message on "stdin", the entry's dispatch,
the gl_call shapes it sends (02-gl_call.rst), the schema, and non-deterministic blocks whose
leader and validator run as child entries (entry_kind 2) as the executor would start them."""

import io
import json
import textwrap
import unittest

from memory_host import MemoryHost, VmExit

from genlayer import calldata, chain, entry
from genlayer.types import Address

SENDER = Address(b"\x11" * 20)
ME = Address(b"\x22" * 20)
OTHER = Address(b"\x33" * 20)

SOURCE = textwrap.dedent('''
    # v0.1.0
    from genlayer import *
    import typing
    from dataclasses import dataclass

    @allow_storage
    @dataclass
    class Entry:
        who: Address
        amount: u256

    class Transfer(gl.Event):
        pass

    class Bank(gl.Contract):
        owner: Address
        balances: TreeMap[Address, u256]
        log: DynArray[str]

        def __init__(self, note: str, *, start: u64 = 0):
            self.owner = gl.message.sender_address
            self.log.append(note)
            self.balances[gl.message.sender_address] = start

        @gl.public.view
        def balance_of(self, who: Address) -> u256:
            return self.balances.get(who, 0)

        @gl.public.view
        def notes(self) -> list[str]:
            return list(self.log)

        @gl.public.view
        def sneaky(self) -> None:
            self.log.append("x")

        @gl.public.write
        def give(self, to: Address, amount: u64) -> bool:
            if self.balances.get(gl.message.sender_address, 0) < amount:
                raise gl.vm.UserError("not enough")
            self.balances[gl.message.sender_address] -= amount
            self.balances[to] = self.balances.get(to, 0) + amount
            Transfer(gl.message.sender_address, to, amount=amount).emit()
            return True

        @gl.public.write.payable
        def deposit(self) -> None:
            self.balances[gl.message.sender_address] = self.balances.get(gl.message.sender_address, 0) + gl.message.value

        @gl.public.write
        def poke(self, other: Address) -> typing.Any:
            c = gl.get_contract_at(other)
            c.emit(on="accepted").ping(1, x="y")
            gl.deploy_contract(code=b"code", args=[1], salt_nonce=5)
            return c.view().answer()

        @gl.public.write
        def crash(self) -> None:
            raise ValueError("boom")

        @gl.public.write
        def fetch(self, url: str) -> str:
            return gl.eq_principle.strict_eq(lambda: gl.nondet.web.render(url, mode="text").strip())

        @gl.public.write
        def judged(self, x: int) -> int:
            def leader():
                return x * 2
            def validator(leader_result):
                return isinstance(leader_result, gl.vm.Return) and leader_result.calldata == x * 2
            return gl.vm.run_nondet_unsafe(leader, validator)

        @gl.public.write
        def llm_judged(self) -> str:
            return gl.eq_principle.prompt_comparative(
                lambda: gl.nondet.exec_prompt("say hi"), "the same greeting")

        @gl.public.write
        def summary(self, text: str) -> str:
            return gl.eq_principle.prompt_non_comparative(lambda: text, task="summarize", criteria="short")

        @gl.public.write
        def api(self) -> typing.Any:
            def leader():
                r = gl.nondet.web.post("https://api.example/x", body="{}", headers={"a": "1"})
                return [r.status, r.body]
            return gl.vm.run_nondet(leader, lambda value: value[0] == 200)

        @gl.public.write
        def sandboxed(self) -> typing.Any:
            r = gl.vm.spawn_sandbox(lambda: 40 + 2)
            return r.calldata
''')


def message(entry_data, *, is_init=False, value=0, kind=0, stage=None):
    return calldata.encode({
        "chain_id": 61999, "contract_address": ME, "datetime": "2026-12-01T00:00:00Z", "entry_data": entry_data,
        "entry_kind": kind, "entry_stage_data": stage, "is_init": is_init, "origin_address": SENDER,
        "sender_address": SENDER, "stack": [], "value": value,
    })


def call(method, *args, **kwargs):
    return calldata.encode(chain.call_data(method, args, kwargs))


class Runner:
    """Runs entries against one MemoryHost, as the executor runs VMs one after another."""

    def __init__(self):
        self.host = MemoryHost().install()
        self.host.handlers["RunNondet"] = self.run_nondet
        self.host.handlers["Sandbox"] = self.sandbox
        self.validator_votes = []

    def run(self, msg):
        try:
            entry.run(SOURCE, "<bank>", stdin=io.BytesIO(msg))
        except VmExit as e:
            return e.kind, e.value
        raise AssertionError("the entry ended without Return or UserError")

    def child(self, data, kind, stage=None):
        saved = chain.message
        saved_calls = len(self.host.calls)
        try:
            result = self.run(message(data, kind=kind, stage=stage))
        finally:
            chain.message = saved
            del self.host.calls[saved_calls:]
        kind_name, value = result
        return bytes([0 if kind_name == "Return" else 1]) + calldata.encode(value)

    def run_nondet(self, body):
        leader = self.child(body["data_leader"], 2)
        # one validator, as the executor would run it on another node
        vote = self.child(body["data_validator"], 2, stage={"leader_result": leader})
        self.validator_votes.append(calldata.decode(vote[1:]))
        return leader

    def sandbox(self, body):
        assert body["runner"] == "contract" and body["allow_write_storage"] is False
        return self.child(body["data"], 1)


try:
    import cloudpickle  # noqa: F401
    HAVE_CLOUDPICKLE = True
except ImportError:
    HAVE_CLOUDPICKLE = False
needs_cloudpickle = unittest.skipUnless(HAVE_CLOUDPICKLE, "cloudpickle is not installed (blocks use lambdas)")


class ContractEntryTest(unittest.TestCase):
    def setUp(self):
        self.r = Runner()
        self.assertEqual(self.r.run(message(call(None, "hello", start=100), is_init=True)), ("Return", None))

    def test_deploy_and_views(self):
        self.assertEqual(self.r.run(message(call("balance_of", SENDER))), ("Return", 100))
        self.assertEqual(self.r.run(message(call("balance_of", SENDER.as_hex))), ("Return", 100))
        self.assertEqual(self.r.run(message(call("balance_of", "0x12"))),
                         ("UserError", "balance_of: argument who must be an address, got '0x12'"))
        self.assertEqual(self.r.run(message(call("notes"))), ("Return", ["hello"]))

    def test_write_then_read_and_event(self):
        self.assertEqual(self.r.run(message(call("give", OTHER, 30))), ("Return", True))
        name, body = self.r.host.calls[-2]
        self.assertEqual(name, "EmitEvent")
        from genlayer._keccak import keccak256
        self.assertEqual(body, {"blob": {"amount": 30}, "topics": [
            keccak256(b"Transfer"), SENDER.as_bytes + bytes(12), OTHER.as_bytes + bytes(12)]})
        self.assertEqual(self.r.run(message(call("balance_of", OTHER))), ("Return", 30))
        self.assertEqual(self.r.run(message(call("give", OTHER, 1000))), ("UserError", "not enough"))

    def test_refusals(self):
        self.assertEqual(self.r.run(message(call("sneaky"))), ("UserError", "view method sneaky wrote storage"))
        kind, text = self.r.run(message(call("nope")))
        self.assertEqual((kind, text), ("UserError", "no public method 'nope'"))
        kind, text = self.r.run(message(call("give", OTHER)))
        self.assertEqual(kind, "UserError")
        self.assertIn("missing a required argument", text)
        kind, text = self.r.run(message(call("give", OTHER, 2**64)))
        self.assertEqual((kind, text), ("UserError", "give: argument amount must be a u64, got 18446744073709551616"))
        self.assertEqual(self.r.run(message(call("give", OTHER, 1), value=5)),
                         ("UserError", "method give is not payable"))
        self.assertEqual(self.r.run(message(call("deposit"), value=5)), ("Return", None))
        self.assertEqual(self.r.run(message(call("balance_of", SENDER))), ("Return", 105))

    def test_uncaught_exception_propagates(self):
        with self.assertRaises(ValueError):
            self.r.run(message(call("crash")))

    def test_messages_deploy_and_view_call(self):
        self.r.host.handlers["CallContract"] = lambda body: b"\x00" + calldata.encode(["answer", body])
        kind, value = self.r.run(message(call("poke", OTHER)))
        self.assertEqual(kind, "Return")
        self.assertEqual(value[0], "answer")
        self.assertEqual(value[1], {"address": OTHER, "calldata": {"": "answer"}, "state": 0})
        names = [n for n, _ in self.r.host.calls]
        self.assertEqual(names[-4:], ["PostMessage", "DeployContract", "CallContract", "Return"])
        self.assertEqual(self.r.host.calls[-4][1], {
            "address": OTHER, "calldata": {"": "ping", "args": [1], "kwargs": {"x": "y"}}, "on": "accepted", "value": 0})
        self.assertEqual(self.r.host.calls[-3][1], {
            "calldata": {"args": [1]}, "code": b"code", "on": "finalized", "salt_nonce": 5, "value": 0})

    @needs_cloudpickle
    def test_run_nondet_leader_and_validator(self):
        self.assertEqual(self.r.run(message(call("judged", 21))), ("Return", 42))
        self.assertEqual(self.r.validator_votes, [True])

    @needs_cloudpickle
    def test_strict_eq_web_render(self):
        pages = iter([" 42\n", "42"])
        seen = []

        def render(body):
            seen.append(body)
            return calldata.encode({"ok": {"text": next(pages)}})

        self.r.host.handlers["WebRender"] = render
        self.assertEqual(self.r.run(message(call("fetch", "https://example.org/"))), ("Return", "42"))
        self.assertEqual(self.r.validator_votes, [True])
        self.assertEqual(seen[0], {"mode": "text", "url": "https://example.org/", "wait_after_loaded": "0ms"})

    @needs_cloudpickle
    def test_strict_eq_disagreement(self):
        pages = iter(["1", "2"])
        self.r.host.handlers["WebRender"] = lambda body: calldata.encode({"ok": {"text": next(pages)}})
        self.assertEqual(self.r.run(message(call("fetch", "https://example.org/"))), ("Return", "1"))
        self.assertEqual(self.r.validator_votes, [False])

    @needs_cloudpickle
    def test_prompt_comparative(self):
        prompts, templates = [], []
        answers = iter(["hi!", "hello"])

        def prompt(body):
            prompts.append(body)
            return calldata.encode({"ok": next(answers)})

        def template(body):
            templates.append(body)
            return calldata.encode({"ok": True})

        self.r.host.handlers["ExecPrompt"] = prompt
        self.r.host.handlers["ExecPromptTemplate"] = template
        self.assertEqual(self.r.run(message(call("llm_judged"))), ("Return", "hi!"))
        self.assertEqual(prompts[0], {"images": [], "prompt": "say hi", "response_format": "text"})
        self.assertEqual(templates, [{"leader_answer": "hi!", "principle": "the same greeting",
                                      "template": "EqComparative", "validator_answer": "hello"}])
        self.assertEqual(self.r.validator_votes, [True])

    @needs_cloudpickle
    def test_prompt_non_comparative(self):
        templates = []

        def template(body):
            templates.append(body)
            return calldata.encode({"ok": "short text" if body["template"] == "EqNonComparativeLeader" else False})

        self.r.host.handlers["ExecPromptTemplate"] = template
        self.assertEqual(self.r.run(message(call("summary", "a long text"))), ("Return", "short text"))
        self.assertEqual(templates, [
            {"criteria": "short", "input": "a long text", "task": "summarize", "template": "EqNonComparativeLeader"},
            {"criteria": "short", "input": "a long text", "output": "short text", "task": "summarize",
             "template": "EqNonComparativeValidator"}])
        self.assertEqual(self.r.validator_votes, [False])

    @needs_cloudpickle
    def test_web_request_and_module_error(self):
        requests = []

        def web(body):
            requests.append(body)
            return calldata.encode({"ok": {"body": b"{}", "headers": {}, "status": 200}})

        self.r.host.handlers["WebRequest"] = web
        self.assertEqual(self.r.run(message(call("api"))), ("Return", [200, b"{}"]))
        self.assertEqual(requests[0], {"body": b"{}", "headers": {"a": b"1"}, "method": "POST", "sign": False,
                                       "url": "https://api.example/x"})
        self.assertEqual(self.r.validator_votes, [True])
        self.r.host.handlers["WebRequest"] = lambda body: calldata.encode(
            {"error": {"causes": ["NOT_ALLOWED"], "ctx": {"url": "https://api.example/x"}}})
        self.assertEqual(self.r.run(message(call("api"))),
                         ("UserError", "WebRequest: NOT_ALLOWED (url: https://api.example/x)"))
        # the leader's UserError: the validator reran the leader and met the same error
        self.assertEqual(self.r.validator_votes[-1], True)

    @needs_cloudpickle
    def test_sandbox(self):
        self.assertEqual(self.r.run(message(call("sandboxed"))), ("Return", 42))

    def test_schema(self):
        kind, text = self.r.run(message(call("#get-schema")))
        self.assertEqual(kind, "Return")
        schema = json.loads(text)
        self.assertEqual(schema["ctor"], {"kwparams": {"start": "int"}, "params": [["note", "string"]]})
        self.assertEqual(schema["methods"]["balance_of"],
                         {"kwparams": {}, "params": [["who", "address"]], "payable": False, "readonly": True,
                          "ret": "int"})
        self.assertEqual(schema["methods"]["give"],
                         {"kwparams": {}, "params": [["to", "address"], ["amount", "int"]], "payable": False,
                          "readonly": False, "ret": "bool"})
        self.assertEqual(schema["methods"]["deposit"]["payable"], True)
        self.assertEqual(schema["methods"]["deposit"]["ret"], "null")
        self.assertEqual(schema["methods"]["notes"]["ret"], [{"$rep": "string"}])
        self.assertEqual(schema["methods"]["poke"]["ret"], "any")
        self.assertEqual(sorted(schema["methods"]), ["api", "balance_of", "crash", "deposit", "fetch", "give",
                                                     "judged", "llm_judged", "notes", "poke", "sandboxed", "sneaky",
                                                     "summary"])
        self.assertEqual(text, json.dumps(schema, sort_keys=True, separators=(",", ":")))


class SchemaTypesTest(unittest.TestCase):
    def test_type_forms(self):
        import typing
        from genlayer import DynArray, TreeMap, u8
        from genlayer.contract import type_schema
        self.assertEqual(type_schema(typing.Optional[str]), {"$or": ["string", "null"]})
        self.assertEqual(type_schema(dict[str, u8]), {"$dict": "int"})
        self.assertEqual(type_schema(TreeMap[str, DynArray[bytes]]), {"$dict": [{"$rep": "bytes"}]})
        self.assertEqual(type_schema(tuple[int, str]), ["int", "string"])
        self.assertEqual(type_schema(list), "array")
        self.assertEqual(type_schema(dict), "dict")


class StartupImportsTest(unittest.TestCase):
    def test_import_genlayer_leaves_the_heavy_modules_out(self):
        # On python.wasm these are most of the start-up (docs/BENCHMARKS.md, "pyc and lazy
        # imports"): only the schema, a non-deterministic block or a contract's own dataclass
        # loads them. Checked in this process (python.wasm cannot start another): the SDK and
        # those modules are imported afresh, then sys.modules is put back as it was.
        import sys
        heavy = ("dataclasses", "inspect", "json", "pickle", "cloudpickle", "ast", "dis", "base64")
        saved = dict(sys.modules)
        try:
            for name in list(sys.modules):
                if name == "genlayer" or name.startswith("genlayer.") or name in heavy:
                    del sys.modules[name]
            exec("import genlayer.entry\nfrom genlayer import *", {})
            loaded = [m for m in heavy if m in sys.modules]
        finally:
            sys.modules.clear()
            sys.modules.update(saved)
        self.assertEqual(loaded, [])


if __name__ == "__main__":
    unittest.main()
