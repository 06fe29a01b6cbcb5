"""Executor ⇄ module conformance (issue 16, "The wire (executor ⇄ module), as GenVM has it").

A run starts as the public manager starts it (gvm/runner.py: --module-llm=fd://A
--module-web=fd://B, socketpairs), the module ends are served by gvm/module_peer.py, a peer
written from modules-interfaces lib.rs and the public module loop, and host 0 is the suite's
spec-written host. The contract is the probe: a RunNondet block whose leader (or validator)
script makes the module gl_call, and the answers it saw come back in the run's result.

Expectations and their sources:
  * the hello and each request, byte for byte: lib.rs GenVMHello / llm::Message / web::Message, as
    the public calldata derive encodes them (a struct is a map sorted by key, an externally tagged
    enum {"Variant": payload}, a tuple variant's payload an array); goldens/modules.txt;
  * the host calls around an LLM call: the public executor asks remaining_fuel_as_gen before the
    request and sends it as the request's remaining_fuel_as_gen, then consume_fuel(consumed_gen)
    after an Ok answer (host-fns.json method ids; host-loop.rst reads consume_fuel's amount as u64);
  * what the contract reads: 03-schemas.rst "Module Result Encoding" ({"ok": ..} / {"error": ..});
  * FatalError: the public executor's module error, an internal error of the run; consumed_gen
    2^256-1: the public executor's fatal `timeout`, published as VMError (05-result.rst).
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from gvm import calldata as cd  # noqa: E402
from gvm import fees  # noqa: E402
from gvm import golden  # noqa: E402
from gvm import host  # noqa: E402
from gvm import module_peer as mp  # noqa: E402
from test_executor import ExecutorCase, RETURN_ANSWERS, call, run_nondet, script  # noqa: E402

HOST_DATA = '{"node_address": "0x00000000000000000000000000000000000000aa", "tx_id": "0x01", ' \
            '"extra": [1, "two", true, null, {"n": -3}]}'
HOST_DATA_MAP = {"extra": [1, "two", True, None, {"n": -3}],
                 "node_address": "0x00000000000000000000000000000000000000aa", "tx_id": "0x01"}
TIME_UNITS = 7
FUEL = 12345
U256_MAX = (1 << 256) - 1

PROMPT = {"ExecPrompt": {"prompt": "hi", "images": []}}
TEMPLATE = {"ExecPromptTemplate": {"template": "EqComparative", "leader_answer": "a", "validator_answer": "b",
                                   "principle": "same"}}
WEB_REQUEST = {"WebRequest": {"method": "GET", "url": "https://example.com/", "headers": {"accept": b"*/*"}}}
WEB_RENDER = {"WebRender": {"mode": "text", "url": "https://example.com/", "wait_after_loaded": "500ms"}}


class ModuleWire(ExecutorCase):
    GOLDEN = "modules"

    def run_block(self, steps, *, llm=(), web=(), fuel=FUEL, validator=False, nested=None, permissions="wscn"):
        """Runs a nondet block making the calls `steps` (as leader, or as validator over a leader
        entry), with module peers answering `llm` / `web`. Returns (outcome, report, the block's
        answers or None, llm peer, web peer)."""
        world = self.world()
        world.remaining_fuel = (host.OK, fuel)
        block = [call(s) for s in steps] + [RETURN_ANSWERS]
        if validator:
            outer = run_nondet([call({"Return": "unused"})], block)
            leader = [b"\x00" + cd.encode("leader says")]
        else:
            outer = run_nondet(block, [call({"Return": True})])
            leader = None
        data = self.execution(script(outer, RETURN_ANSWERS), leader=leader, host_data=HOST_DATA,
                              initial_time_units_allocation=TIME_UNITS, nested=nested)
        peers = {}

        def make(name, answers):
            def start(sock):
                peers[name] = mp.ModulePeer(sock, answers)
                return peers[name]
            return start

        o = self.run_genvm(data, world, module_peers=(make("llm", llm), make("web", web)), permissions=permissions)
        rep = self.delivered(o)
        for name, peer in peers.items():
            self.assertEqual(peer.faults, [], f"{name} module peer saw faults (lib.rs shapes)")
        block_answers = None
        if rep.kind == "Return" and not validator:
            # the leader's entry: [code][data], data = the block's answers [[rc, bytes], ...]
            entry = rep.nondet_results[0]
            self.assertEqual(entry[:1], b"\x00", f"the leader block did not return: {entry[:120]!r}")
            block_answers = cd.decode(entry[1:])
        return o, rep, block_answers, peers.get("llm"), peers.get("web")

    def expected_hello(self, role):
        # lib.rs GenVMHello; run.rs passes --genvm-id=1 (gvm/runner.py default); gas_data and
        # initial_time_units_allocation from ExecutionData; host_data the JSON as HostData
        return cd.encode({"gas_data": dict(fees.GAS_DATA), "genvm_id": 1, "host_data": HOST_DATA_MAP,
                          "initial_time_units_allocation": TIME_UNITS, "role": role})

    def assert_contract_saw(self, block_answers, index, expected):
        rc, got = block_answers[index]
        self.assertEqual(rc, 0, f"gl_call {index} answered rc {rc}")
        self.assertEqual(cd.decode(got), expected, "03-schemas.rst Module Result Encoding")

    def host_methods(self, o):
        return [m for m, _ in o.host0.calls if m in ("remaining_fuel_as_gen", "consume_fuel")]

    # ---- LLM

    def test_prompt_hello_request_and_fuel(self):
        o, rep, answers, llm, web = self.run_block([PROMPT], llm=[mp.ok({"consumed_gen": 77, "data": "the answer"})])
        want_hello = self.expected_hello("Leader")
        self.golden("hello_leader", want_hello, "lib.rs GenVMHello (calldata derive: sorted map, Role variant name)")
        self.assertEqual(llm.hello_bytes, want_hello, "the executor's hello frame")
        self.assertIsNone(web.hello_bytes, "no web call, no web connection traffic")
        want_request = cd.encode({"Prompt": {"payload": {"images": [], "prompt": "hi", "response_format": "text"},
                                             "remaining_fuel_as_gen": FUEL}})
        self.golden("request_prompt", want_request,
                    "lib.rs llm::Message::Prompt {payload, remaining_fuel_as_gen}; PromptPayload default text")
        self.assertEqual(llm.request_bytes, [want_request])
        self.assertEqual(self.host_methods(o), ["remaining_fuel_as_gen", "consume_fuel"],
                         "public executor: remaining_fuel_as_gen before the request, consume_fuel after")
        self.assertEqual(o.host0.calls_of("consume_fuel"), [{"gas": 77}])
        self.assert_contract_saw(answers, 0, {"ok": "the answer"})
        self.assertEqual(rep.value["llm_consumption"], 77, "public executor: consumed_gen added to llm_consumption")

    def test_two_prompts_one_connection_and_consumption_adds_up(self):
        o, rep, answers, llm, _ = self.run_block(
            [PROMPT, PROMPT], llm=[mp.ok({"consumed_gen": 5, "data": "x"}), mp.ok({"consumed_gen": 6, "data": "y"})])
        self.assertEqual(len(llm.request_bytes), 2, "one connection per run, one hello (modules.rs)")
        self.assertEqual(o.host0.calls_of("consume_fuel"), [{"gas": 5}, {"gas": 6}])
        self.assertEqual(rep.value["llm_consumption"], 11)
        self.assert_contract_saw(answers, 1, {"ok": "y"})

    def test_json_prompt_object_answer(self):
        step = {"ExecPrompt": {"prompt": "give json", "images": [b"\x89PNG"], "response_format": "json"}}
        _, _, answers, llm, _ = self.run_block([step], llm=[mp.ok({"consumed_gen": 1, "data": {"a": 1}})])
        want = cd.encode({"Prompt": {"payload": {"images": [b"\x89PNG"], "prompt": "give json",
                                                 "response_format": "json"}, "remaining_fuel_as_gen": FUEL}})
        self.golden("request_prompt_json", want, "lib.rs PromptPayload {response_format json, images: Vec<Bytes>}")
        self.assertEqual(llm.request_bytes, [want])
        self.assert_contract_saw(answers, 0, {"ok": {"a": 1}})

    def test_template_request_and_bool_answer(self):
        _, _, answers, llm, _ = self.run_block([TEMPLATE], llm=[mp.ok({"consumed_gen": 2, "data": True})])
        want = cd.encode({"PromptTemplate": {"payload": {"leader_answer": "a", "principle": "same",
                                                         "template": "EqComparative", "validator_answer": "b"},
                                             "remaining_fuel_as_gen": FUEL}})
        self.golden("request_template", want, "lib.rs PromptTemplatePayload encode: sorted fields with the template tag")
        self.assertEqual(llm.request_bytes, [want])
        self.assert_contract_saw(answers, 0, {"ok": True})

    def test_user_error_reaches_the_contract_and_costs_nothing(self):
        o, rep, answers, _, _ = self.run_block([PROMPT], llm=[mp.user_error(["NO_PROVIDER"], {"tried": 3})])
        self.assert_contract_saw(answers, 0, {"error": {"causes": ["NO_PROVIDER"], "ctx": {"tried": 3}}})
        self.assertEqual(self.host_methods(o), ["remaining_fuel_as_gen"], "no consume_fuel for a user error")
        self.assertEqual(rep.value["llm_consumption"], 0)

    def test_fatal_error_is_an_internal_error(self):
        _, rep, _, _, _ = self.run_block([PROMPT], llm=[mp.fatal("provider exploded")])
        self.assertEqual(rep.kind, "InternalError", "public executor: a module FatalError is the run's error")

    def test_template_answer_of_the_wrong_kind_is_an_internal_error(self):
        _, rep, _, _, _ = self.run_block([TEMPLATE], llm=[mp.ok({"consumed_gen": 0, "data": "yes"})])
        self.assertEqual(rep.kind, "InternalError", "public executor: EqComparative must answer a bool")

    def test_out_of_time_is_a_timeout(self):
        o, rep, _, _, _ = self.run_block([PROMPT], llm=[mp.ok({"consumed_gen": U256_MAX, "data": ""})])
        self.assert_error(rep, "VmError", "timeout")
        self.assertEqual(o.host0.calls_of("consume_fuel"), [{"gas": (1 << 64) - 1}],
                         "the amount is reported first, as a u64 (host-loop.rst), saturated")

    def test_nested_run_sends_at_most_its_imported_fuel(self):
        # public rt/mod.rs DetFuelBudget: remaining = min(imported, host's), and each LLM spend
        # comes off the imported budget. domain.rs NestedExecutionData; NestedPermissions bits
        # (deterministic 1<<0, read storage 1<<1, spawn nondet 1<<5), state_mode by variant name.
        nested = {"memory_limit": 1 << 30, "stack": [], "permissions": 1 | (1 << 1) | (1 << 5),
                  "state_mode": "Default", "topmost_runner_id": "contract", "remaining_det_fuel": 100}
        o, rep, answers, llm, _ = self.run_block(
            [PROMPT, PROMPT], llm=[mp.ok({"consumed_gen": 30, "data": "a"}), mp.ok({"consumed_gen": 1, "data": "b"})],
            nested=nested, permissions="n")
        self.assertEqual([r["Prompt"]["remaining_fuel_as_gen"] for r in llm.requests], [100, 70])
        self.assertEqual(o.host0.calls_of("consume_fuel"), [{"gas": 30}, {"gas": 1}])
        self.assert_contract_saw(answers, 1, {"ok": "b"})

    def test_validator_hello(self):
        _, rep, _, llm, _ = self.run_block([PROMPT, {"Return": True}], llm=[mp.ok({"consumed_gen": 0, "data": "v"})],
                                           validator=True)
        want = self.expected_hello("Validator")
        self.golden("hello_validator", want, "lib.rs GenVMHello role Validator (a run given leader results)")
        self.assertEqual(llm.hello_bytes, want)

    # ---- web

    def test_web_request(self):
        response = {"body": b"hello", "headers": {"content-type": b"text/plain"}, "status": 200}
        _, _, answers, llm, web = self.run_block([WEB_REQUEST], web=[mp.ok({"response": response})])
        self.assertIsNone(llm.hello_bytes)
        self.assertEqual(web.hello_bytes, self.expected_hello("Leader"))
        (req,) = web.requests
        self.assertEqual(list(req), ["Request"], "lib.rs web::Message::Request(payload, size_limit)")
        payload, size_limit = req["Request"]
        want_payload = cd.encode({"body": None, "headers": {"accept": b"*/*"}, "method": "GET", "sign": False,
                                  "url": "https://example.com/"})
        self.golden("request_web_payload", want_payload,
                    "lib.rs RequestPayload (body as_bytes: null when absent; sign default false)")
        self.assertEqual(cd.encode(payload), want_payload)
        # public executor: 3/4 of the sub-VM's remaining memory, which must be at least
        # web_request_min_space (internal-constants.json) for the call to be made
        self.assertTrue(isinstance(size_limit, int) and 65536 * 3 // 4 <= size_limit < 1 << 32, size_limit)
        self.assert_contract_saw(answers, 0, {"ok": response})

    def test_web_render(self):
        _, _, answers, _, web = self.run_block([WEB_RENDER], web=[mp.ok({"text": "page text"})])
        payload, _ = web.requests[0]["Render"]
        want_payload = cd.encode({"mode": "text", "url": "https://example.com/", "wait_after_loaded": "500ms"})
        self.golden("request_render_payload", want_payload, "lib.rs RenderPayload (wait_after_loaded as written)")
        self.assertEqual(cd.encode(payload), want_payload)
        self.assert_contract_saw(answers, 0, {"ok": {"text": "page text"}})

    def test_web_user_error(self):
        _, _, answers, _, _ = self.run_block([WEB_REQUEST], web=[mp.user_error(["TLD_FORBIDDEN"], {"tld": "x"})])
        self.assert_contract_saw(answers, 0, {"error": {"causes": ["TLD_FORBIDDEN"], "ctx": {"tld": "x"}}})

    def test_bad_request_is_inval_and_sends_nothing(self):
        bad = {"WebRequest": {"method": "BREW", "url": "https://example.com/", "headers": {}}}
        _, _, answers, _, web = self.run_block([bad])
        self.assertEqual(answers[0][0], 2, "02-gl_call.rst: a payload that does not parse is INVAL")
        self.assertEqual(web.requests, [])


def tearDownModule():
    if golden.updating():
        golden.write_pending()


if __name__ == "__main__":
    unittest.main()
