"""The Python examples (examples/python/) on genvm-node, end to end, with 4 validators.

Every leader and validator run is the real genvm running the real Python runners that the build
packs (runners/cpython, target cpython_runners: cpython + py-genlayer with sdk/python) from
<build>/runners/cpython/installed, which genvm-node passes on to genvm as GENVM_RUNNERS_DIR.
The examples name their runner as `py-genlayer:latest` (readable, and what a developer writes
against a dev node); a GenVM node resolves `:latest` only in its unsafe debug modes, so the test
deploys each example with its header pinned to the exact `py-genlayer:<hash>` of latest.json, as
a deployment to a real chain would.

Then bad input: a .py with a syntax error (deploy fails, no contract) and a method that raises
(VMError, storage unchanged); and bombs: a recursion under sys.setrecursionlimit(2^30), a
bytearray over the RAM budget, an import of a missing module (each a VMError agreed by all,
nothing written).

PythonModuleExamplesOnNode runs the examples that need the LLM and web modules, with the real
modules in front of the real inference server and a page served here, set up by
modules_e2e_test.py's helpers: a strict_eq page read, a prompt_comparative answer and an
LLM-judged prediction (ctest node_python_module_examples_*, one entry per example). Each block
runs in a non-deterministic child VM: python.wasm starting again, importing the SDK and
cloudpickle, unpickling the block; it fits genvm's default --nondet-fuel (2^38) since the SDK
imports only what it needs at start and the default was raised from 2^32.

Environment: GENVM_BUILD_DIR (a build tree configured with -DGENVM_BUILD_CPYTHON=ON),
GENVM_NODE (another genvm-node binary).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("GENVM_BUILD_DIR", "")
NODE = os.environ.get("GENVM_NODE") or os.path.join(BUILD, "tools", "genvm-node", "genvm-node")
GENVM = os.path.join(BUILD, "tools", "genvm", "genvm")
RUNNERS = os.path.join(BUILD, "runners", "cpython", "installed")
EXAMPLES = os.path.join(HERE, "..", "..", "examples", "python")

ALICE = "0x00000000000000000000000000000000000000a1"
BOB = "0x00000000000000000000000000000000000000b0"


def py_genlayer_id():
    with open(os.path.join(RUNNERS, "latest.json")) as f:
        return "py-genlayer:" + json.load(f)["py-genlayer"]


def pinned(text, runner_id):
    """A contract's text with its `py-genlayer:latest` dependency replaced by runner_id."""
    header = '# { "Depends": "py-genlayer:latest" }\n'
    if header not in text:
        raise AssertionError("the example's header does not depend on py-genlayer:latest")
    return text.replace(header, '# { "Depends": "' + runner_id + '" }\n', 1)


class PythonExamplesOnNode(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for path in (NODE, GENVM, os.path.join(RUNNERS, "latest.json")):
            if not os.path.exists(path):
                raise AssertionError(f"{path} missing (GENVM_BUILD_DIR: a build with -DGENVM_BUILD_CPYTHON=ON, "
                                     "targets genvm, genvm-node, cpython_runners)")
        cls.tmp = tempfile.mkdtemp(prefix="gvm-node-python-")
        cls.runner_id = py_genlayer_id()
        cls.env = dict(os.environ, GENVM_RUNNERS_DIR=RUNNERS)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.state = os.path.join(self.tmp, self.id().rsplit(".", 1)[-1] + ".db")

    module_options = ()  # the modules' --module-*-config options, for the class that needs them

    def node(self, *args, expect=0, sender=ALICE):
        argv = [NODE, "--state", self.state, "--genvm", GENVM, "--validators", "4", "--timeout", "30",
                "--from", sender, *self.module_options, "--json", *args]
        p = subprocess.run(argv, capture_output=True, timeout=300, env=self.env)
        out = p.stdout.decode()
        self.assertEqual(p.returncode, expect, f"genvm-node {' '.join(args)}: exit {p.returncode}\n{out}\n"
                                               f"{p.stderr.decode()[-3000:]}")
        return json.loads(out)

    def contract_file(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def example(self, name):
        with open(os.path.join(EXAMPLES, name + ".py")) as f:
            return self.contract_file(name + ".py", pinned(f.read(), self.runner_id))

    def assert_agreed(self, tx, kind="Return"):
        """Accepted in its first round with every validator agreeing."""
        self.assertEqual(tx["status"], "accepted", tx)
        self.assertEqual(tx["result_kind"], kind, tx)
        self.assertEqual(len(tx["rounds"]), 1, tx["rounds"])
        self.assertEqual([v["vote"] for v in tx["rounds"][0]["votes"]], ["agree"] * 4, tx["rounds"][0])

    def deploy(self, name, *args):
        tx = self.node("deploy", self.example(name), *args)
        self.assert_agreed(tx)
        return tx["address"]

    def call(self, address, method, *args, kind="Return", sender=ALICE):
        tx = self.node("call", address, method, *args, expect=0 if kind == "Return" else 3, sender=sender)
        self.assert_agreed(tx, kind)
        return tx

    def view(self, address, method, *args):
        return self.node("view", address, method, *args)["result"]

    def storage(self, address):
        return self.node("--limit", "1000", "--bytes", "4096", "storage", address)

    def test_storage_reads_and_updates_a_string(self):
        address = self.deploy("storage", '"hello"')
        self.assertEqual(self.view(address, "get_storage"), '"hello"')
        self.call(address, "update_storage", '"hello, world"')
        self.assertEqual(self.view(address, "get_storage"), '"hello, world"')

    def test_user_balances_deposit_transfer_and_insufficient_funds(self):
        address = self.deploy("user_balances")
        self.call(address, "deposit", "100")
        self.assertEqual(self.view(address, "balance_of", BOB), "0")
        self.call(address, "transfer", BOB, "30")
        self.assertEqual(self.view(address, "balance_of", ALICE), "70")
        self.assertEqual(self.view(address, "balance_of", BOB), "30")
        # Bob has 30: moving 31 is the contract's UserError, agreed by all, and changes nothing.
        before = self.storage(address)
        tx = self.call(address, "transfer", ALICE, "31", kind="UserError", sender=BOB)
        self.assertIn("insufficient funds: 30 < 31", tx["result"])
        self.assertEqual(self.storage(address), before)
        self.assertEqual(self.view(address, "balance_of", BOB), "30")
        self.assertEqual(self.view(address, "total_supply"), "100")

    def test_relay_reads_another_contract_and_posts_to_it(self):
        board = self.deploy("message_board")
        relay = self.deploy("board_relay", board)
        self.call(board, "post", '"first"', sender=BOB)
        tx = self.call(relay, "relay", '"hi"')
        self.assertEqual(tx["result"], "1", "the relay saw the board's one post through a view call")
        # The posted message ran as a follow-up transaction, from the relay, accepted by all.
        self.assertEqual(len(tx["follow_ups"]), 1, tx)
        follow = self.node("tx", str(tx["follow_ups"][0]))
        self.assertEqual(follow["status"], "accepted", follow)
        self.assertEqual(self.view(board, "count"), "2")
        self.assertEqual(self.view(relay, "board_count"), "2")
        post = json.loads(self.view(board, "read", "1"))
        self.assertEqual(post.lower(), relay.lower() + ": relay #1 (board had 1): hi")

    def test_syntax_error_deploys_nothing(self):
        path = self.contract_file("syntax_error.py", pinned(
            '# v0.1.0\n# { "Depends": "py-genlayer:latest" }\nfrom genlayer import *\n\n\n'
            "class Broken(gl.Contract):\n    def __init__(self:\n        pass\n", self.runner_id))
        tx = self.node("deploy", path, expect=3)
        self.assertEqual(tx["status"], "accepted", tx)
        self.assertEqual(tx["result_kind"], "VMError", tx)
        self.assertIsNone(tx["address"], "no contract created")
        self.assertEqual(self.node("contracts")["contracts"], [])

    def test_exception_in_a_method_writes_nothing(self):
        path = self.contract_file("raises.py", pinned(
            '# v0.1.0\n# { "Depends": "py-genlayer:latest" }\nfrom genlayer import *\n\n\n'
            "class Raises(gl.Contract):\n    note: str\n\n    def __init__(self):\n        self.note = 'kept'\n\n"
            "    @gl.public.write\n    def crash(self) -> None:\n        self.note = 'lost'\n"
            "        raise ValueError('boom')\n\n"
            "    @gl.public.view\n    def get(self) -> str:\n        return self.note\n", self.runner_id))
        tx = self.node("deploy", path)
        self.assert_agreed(tx)
        address = tx["address"]
        before = self.storage(address)
        crashed = self.call(address, "crash", kind="VMError")
        self.assertEqual(crashed["result"], '"exit_code 1"', crashed)
        self.assertEqual(self.storage(address), before)
        self.assertEqual(self.view(address, "get"), '"kept"')

    BOMBS = (
        "import sys\n\nfrom genlayer import *\n\n\n"
        "class Bombs(gl.Contract):\n    note: str\n\n    def __init__(self):\n        self.note = 'kept'\n\n"
        "    @gl.public.write\n    def recurse(self) -> int:\n        self.note = 'lost'\n"
        "        sys.setrecursionlimit(1 << 30)\n\n        def down(n):\n            return down(n + 1) + 1\n\n"
        "        return down(0)\n\n"
        "    @gl.public.write\n    def big_bytes(self) -> int:\n        self.note = 'lost'\n"
        "        return len(bytearray(2**31))\n\n"
        "    @gl.public.view\n    def get(self) -> str:\n        return self.note\n")

    def bombs(self):
        path = self.contract_file("bombs.py", pinned(
            '# v0.1.0\n# { "Depends": "py-genlayer:latest" }\n' + self.BOMBS, self.runner_id))
        tx = self.node("deploy", path)
        self.assert_agreed(tx)
        return tx["address"]

    def test_bomb_recursion_with_a_huge_limit_is_a_vm_error(self):
        # The SDK caps sys.setrecursionlimit (entry.MAX_RECURSION_LIMIT): without the cap the
        # frames filled the 4 GiB memory for ~50 s per run before the VM ended.
        address = self.bombs()
        before = self.storage(address)
        tx = self.call(address, "recurse", kind="VMError")
        self.assertIn(tx["result"], ('"wasm_trap stack_overflow"', '"exit_code 1"'), tx)
        self.assertEqual(self.storage(address), before)
        self.assertEqual(self.view(address, "get"), '"kept"')

    def test_bomb_memory_over_the_budget_is_a_vm_error(self):
        # 2 GiB more than the run's RAM budget allows: the memory does not grow, CPython raises
        # MemoryError, uncaught: exit_code 1, agreed by all, nothing written.
        address = self.bombs()
        before = self.storage(address)
        tx = self.call(address, "big_bytes", kind="VMError")
        self.assertEqual(tx["result"], '"exit_code 1"', tx)
        self.assertEqual(self.storage(address), before)

    def test_bomb_import_of_a_missing_module_deploys_nothing(self):
        path = self.contract_file("missing_module.py", pinned(
            '# v0.1.0\n# { "Depends": "py-genlayer:latest" }\nimport no_such_module\n\nfrom genlayer import *\n\n\n'
            "class Missing(gl.Contract):\n    def __init__(self):\n        pass\n", self.runner_id))
        tx = self.node("deploy", path, expect=3)
        self.assertEqual(tx["status"], "accepted", tx)
        self.assertEqual(tx["result_kind"], "VMError", tx)
        self.assertEqual(tx["result"], '"exit_code 1"', tx)
        self.assertIsNone(tx["address"], "no contract created")
        self.assertEqual(self.node("contracts")["contracts"], [])

    def test_text_without_a_header_is_refused_before_any_run(self):
        path = self.contract_file("no_header.py", "from genlayer import *\n")
        out = self.node("deploy", path, expect=2)
        self.assertEqual(out["error_code"], "invalid_contract runner absent", out)


def runner_has_cloudpickle():
    """Whether the installed py-genlayer runner ships cloudpickle (blocks go to the child VM as
    cloudpickled closures; plain pickle cannot send them)."""
    import zipfile
    h = py_genlayer_id().split(":", 1)[1]
    with zipfile.ZipFile(os.path.join(RUNNERS, "py-genlayer", h[:2], h[2:] + ".zip")) as z:
        return any(n.startswith("py/cloudpickle/") for n in z.namelist())


class PythonModuleExamplesOnNode(PythonExamplesOnNode):
    """The module examples with 4 validators agreeing: the real LLM and web modules, the real
    inference server, a page served here. Skips if the py-genlayer runner has no cloudpickle
    (its blocks could not be sent to their child VM)."""

    @classmethod
    def setUpClass(cls):
        if os.path.exists(os.path.join(RUNNERS, "latest.json")) and not runner_has_cloudpickle():
            raise unittest.SkipTest("the py-genlayer runner has no cloudpickle (runners/cpython/pack_runners.py)")
        super().setUpClass()
        sys.path.insert(0, HERE)
        from modules_e2e_test import PageServer, serve, start_inference_server, write_module_configs
        cls.inference, llm_url = start_inference_server(cls.tmp)
        cls.pages, cls.page_url = serve(PageServer)  # "The price is 4217 coins."
        llm_config, web_config = write_module_configs(cls.tmp, llm_url)
        cls.module_options = ("--module-llm-config", llm_config, "--module-web-config", web_config)

    @classmethod
    def tearDownClass(cls):
        cls.inference.terminate()
        cls.inference.wait(10)
        cls.pages.shutdown()
        super().tearDownClass()

    # The deterministic examples are PythonExamplesOnNode's; only the module ones run here.
    test_storage_reads_and_updates_a_string = None
    test_user_balances_deposit_transfer_and_insufficient_funds = None
    test_relay_reads_another_contract_and_posts_to_it = None
    test_syntax_error_deploys_nothing = None
    test_exception_in_a_method_writes_nothing = None
    test_text_without_a_header_is_refused_before_any_run = None
    test_bomb_recursion_with_a_huge_limit_is_a_vm_error = None
    test_bomb_memory_over_the_budget_is_a_vm_error = None
    test_bomb_import_of_a_missing_module_deploys_nothing = None

    def test_price_feed_reads_a_page_with_strict_eq(self):
        address = self.deploy("price_feed", json.dumps(self.page_url + "/price"))
        tx = self.call(address, "refresh")
        self.assertEqual(tx["result"], "4217")
        self.assertEqual(self.view(address, "get_price"), "4217")

    def test_wizard_answer_judged_with_prompt_comparative(self):
        address = self.deploy("wizard_of_coin")
        tx = self.call(address, "ask", '"Should the wizard give away the coin?"')
        answer = json.loads(tx["result"])
        self.assertIsInstance(answer, str)
        self.assertEqual(self.view(address, "get_answer"), tx["result"], "the leader's answer is stored")

    def test_prediction_resolved_by_an_llm_verdict(self):
        address = self.deploy("prediction_market", '"the price is above 4000 coins"', json.dumps(self.page_url + "/"))
        self.assertEqual(self.view(address, "status"), '"open: the price is above 4000 coins"')
        tx = self.call(address, "resolve")
        self.assertIn(tx["result"], ("true", "false"))
        happened = "happened" if tx["result"] == "true" else "did not happen"
        self.assertEqual(self.view(address, "status"), json.dumps(happened + ": the price is above 4000 coins"))
        again = self.call(address, "resolve", kind="UserError")
        self.assertIn("already resolved", again["result"])


if __name__ == "__main__":
    unittest.main()
