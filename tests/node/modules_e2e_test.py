"""The module examples on genvm-node, end to end, with 4 validators.

genvm-node (--module-llm-config / --module-web-config) starts the real genvm-module-llm and
genvm-module-web through src/manager's ModuleSet; every leader and validator run is the real
genvm with its own connection to each. examples/llm.wasm asks the real inference server of
tests/modules/llm_server (node-llama-cpp on the CPU, a random-weight model written at set-up by
make_model.py, temperature 0 and a seed so every node gets the same answer) and judges with
EqComparative; examples/render.wasm renders a page served here on 127.0.0.1 (allow-listed in the
web module's configuration) with the module's Chromium and stores the number it reads. Then the
LLM module is killed while the leader's prompt is in flight (a relay in front of the inference
server holds that request): the leader's contract gets the spec's module error
(MODULE_UNAVAILABLE) and its block ends with that UserError, the validators (given a started-again
module) disagree, the node leads again, the next round is accepted, and nothing is lost.

Environment: GENVM_BUILD_DIR (the build tree), GENVM_NODE (another genvm-node binary).
"""

import http.server
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("GENVM_BUILD_DIR", "")
NODE = os.environ.get("GENVM_NODE") or os.path.join(BUILD, "tools", "genvm-node", "genvm-node")
GENVM = os.path.join(BUILD, "tools", "genvm", "genvm")
EXAMPLES = os.path.join(BUILD, "examples")
SERVER_DIR = os.path.join(HERE, "..", "modules", "llm_server")
sys.path.insert(0, os.path.join(HERE, "..", "modules"))
os.environ.setdefault("GENVM_BUILD_DIR", BUILD)

from test_llm_e2e import TEMPLATES, make_model  # noqa: E402  (the model and templates the LLM e2e test uses)

PAGE = b"<html><body><h1>Today</h1><p>The price is 4217 coins.</p></body></html>"


class PageServer(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)


class Relay(http.server.BaseHTTPRequestHandler):
    """Forwards chat completions to the inference server. While `hold` is set, a request waits
    (in flight, the module waiting on it) until `hold` is cleared; `held` is set when one waits."""
    upstream = ""
    hold = threading.Event()
    held = threading.Event()

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if Relay.hold.is_set():
            Relay.held.set()
            deadline = time.monotonic() + 20
            while Relay.hold.is_set() and time.monotonic() < deadline:
                time.sleep(0.02)
        req = urllib.request.Request(Relay.upstream + self.path, data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                data, status = r.read(), r.status
        except Exception as e:  # the upstream's error status, passed on
            data, status = str(e).encode(), 502
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass  # the module that asked is gone


def serve(handler):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def children_named(pid, prefix):
    """Processes whose parent is `pid` and whose name starts with `prefix` (/proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        if ppid == pid and name.startswith(prefix):
            found.append(int(entry))
    return found


def write_module_configs(folder, llm_url):
    """The two module configurations (also scripts/demo_module_servers.py's): the LLM module with
    one OpenAI-compatible backend at llm_url, temperature 0 and a seed (every node gets the same
    answer), the web module allowing 127.0.0.1. template_max_tokens leaves the random model room
    to close its JSON object (its keys are free text), so EqComparative answers a bool when the
    model is asked."""
    llm_config = os.path.join(folder, "llm.yaml")
    with open(llm_config, "w") as f:
        f.write("temperature: 0\nseed: 1\nretries: 0\nmax_tokens: 24\ntemplate_max_tokens: 600\nmax_prompt_bytes: 2048\n"
                "backends:\n  local:\n    host: " + llm_url + "\n    provider: openai-compatible\n"
                "    key: ''\n    models:\n      local: {supports_json: true}\n" + TEMPLATES)
    web_config = os.path.join(folder, "web.yaml")
    with open(web_config, "w") as f:
        f.write('always_allow_hosts: ["127.0.0.1"]\nrender_timeout: 20\n')
    return llm_config, web_config


def start_inference_server(folder):
    """The model written into `folder`, served by llm_server/server.mjs: (process, its URL)."""
    model = make_model(folder)
    proc = subprocess.Popen(["node", os.path.join(SERVER_DIR, "server.mjs"), "--model", model],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = proc.stdout.readline().decode()
    if not line.startswith("listening "):
        raise AssertionError("inference server did not start: " + line + proc.stderr.read().decode())
    return proc, f"http://127.0.0.1:{int(line.split()[1])}"


class NodeModulesEndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for path in (NODE, GENVM, os.path.join(EXAMPLES, "llm.wasm"), os.path.join(EXAMPLES, "render.wasm")):
            if not os.path.exists(path):
                raise AssertionError(f"{path} missing (set GENVM_BUILD_DIR to a build tree)")
        cls.tmp = tempfile.mkdtemp(prefix="gvm-node-modules-")
        cls.inference, Relay.upstream = start_inference_server(cls.tmp)
        cls.relay, relay_url = serve(Relay)
        cls.pages, cls.page_url = serve(PageServer)
        cls.llm_config, cls.web_config = write_module_configs(cls.tmp, relay_url)

    @classmethod
    def tearDownClass(cls):
        cls.inference.terminate()
        cls.inference.wait(10)
        cls.relay.shutdown()
        cls.pages.shutdown()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        Relay.hold.clear()
        Relay.held.clear()
        self.state = os.path.join(self.tmp, self.id().rsplit(".", 1)[-1] + ".db")

    def argv(self, *args):
        return [NODE, "--state", self.state, "--genvm", GENVM, "--validators", "4", "--timeout", "20",
                "--module-llm-config", self.llm_config, "--module-web-config", self.web_config, "--json", *args]

    def node(self, *args, expect=0):
        p = subprocess.run(self.argv(*args), capture_output=True, timeout=50)
        out = p.stdout.decode()
        self.assertEqual(p.returncode, expect, f"genvm-node {' '.join(args)}: exit {p.returncode}\n{out}\n"
                                               f"{p.stderr.decode()[-2000:]}")
        return json.loads(out)

    def deploy(self, name):
        d = self.node("deploy", os.path.join(EXAMPLES, name + ".wasm"))
        self.assertEqual(d["status"], "accepted")
        return d["address"]

    def assert_accepted_by_all(self, tx, rounds=1):
        self.assertEqual(tx["status"], "accepted", tx)
        self.assertEqual(tx["result_kind"], "Return", tx)
        last = tx["rounds"][-1]
        self.assertEqual(len(tx["rounds"]), rounds, tx["rounds"])
        self.assertEqual([v["vote"] for v in last["votes"]], ["agree"] * 4, last)

    def test_llm_answer_judged_with_eq_comparative_by_4_validators(self):
        address = self.deploy("llm")
        tx = self.node("call", address, "ask", '"What is the capital of France?"')
        self.assert_accepted_by_all(tx)
        answer = json.loads(tx["result"])
        self.assertIsInstance(answer, str)
        self.assertEqual(self.node("view", address, "answer")["result"], tx["result"], "the leader's answer is stored")
        self.assertEqual(self.node("view", address, "question")["result"], '"What is the capital of France?"')
        # Temperature 0 and a seed: asked again, the same answer, accepted again.
        again = self.node("call", address, "ask", '"What is the capital of France?"')
        self.assert_accepted_by_all(again)
        self.assertEqual(again["result"], tx["result"])
        self.assertEqual(self.node("view", address, "count")["result"], "2")
        # A module refusal reaches the contract as the spec's {error}: a UserError saying why.
        refused = self.node("call", address, "ask", "\"" + "x" * 3000 + "\"", expect=3)
        self.assertEqual(refused["result_kind"], "UserError")
        self.assertIn("PROMPT_TOO_LARGE", refused["result"])
        self.assert_accepted_by_all(dict(refused, result_kind="Return"))  # every node got the refusal
        self.assertEqual(self.node("view", address, "count")["result"], "2")

    def test_render_number_read_by_4_validators(self):
        address = self.deploy("render")
        tx = self.node("call", address, "fetch", json.dumps(self.page_url + "/price.html"))
        self.assert_accepted_by_all(tx)
        self.assertEqual(tx["result"], "4217")
        self.assertEqual(self.node("view", address, "value")["result"], "4217")
        # A page the module refuses (a private address that is not allow-listed): every node
        # gets the same refusal, the contract ends with it as a UserError, nothing is stored.
        refused = self.node("call", address, "fetch", '"http://10.255.255.1:8080/"', expect=3)
        self.assertEqual(refused["result_kind"], "UserError", refused)
        self.assertEqual(self.node("view", address, "count")["result"], "1")

    def test_llm_module_killed_mid_prompt_loses_nothing(self):
        address = self.deploy("llm")
        Relay.hold.set()
        call = subprocess.Popen(self.argv("--debug-mode", "safe", "call", address, "ask", '"Name a colour."'),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            self.assertTrue(Relay.held.wait(30), "the leader's prompt never reached the inference server")
            modules = children_named(call.pid, "genvm-module-ll")
            self.assertEqual(len(modules), 1, "one LLM module process, started by the node")
            os.kill(modules[0], signal.SIGKILL)
            Relay.hold.clear()
            out, err = call.communicate(timeout=50)
        finally:
            Relay.hold.clear()
            if call.poll() is None:
                call.kill()
                call.wait()
        self.assertEqual(call.returncode, 0, out.decode() + err.decode()[-2000:])
        tx = json.loads(out)
        # Round 1: the leader's module died under its prompt, so the contract read
        # {"error": {"causes": ["MODULE_UNAVAILABLE"], ...}} and its block ended with that
        # UserError; each validator, whose module the node started again, got an answer of its
        # own, so its block rejected the leader's error: not accepted, nothing committed.
        # Round 2's leader has the started-again module and is accepted by all.
        self.assertEqual(len(tx["rounds"]), 2, tx["rounds"])
        lost = tx["rounds"][0]
        self.assertEqual((lost["leader_outcome"], lost["leader_kind"], lost["accepted"]), ("result", "UserError", False), lost)
        records = self.node("tx", str(tx["tx"]))["debug"]
        # On a failure, what each round-1 validator's executor logged says why it voted as it did.
        why = [d for d in records if d.get("round") == 1 and d.get("role") != "leader"]
        self.assertEqual([v["vote"] for v in lost["votes"]], ["disagree"] * 4, (lost, why))
        self.assertEqual([v["nondet_disagreement"] for v in lost["votes"]], [0] * 4, (lost, why))
        leader = [d for d in records if d.get("round") == 1 and d.get("role") == "leader"]
        self.assertEqual(len(leader), 1, records)
        self.assertIn("module_unavailable", json.dumps(leader[0]), "the leader's executor logged the module as gone")
        self.assert_accepted_by_all(tx, rounds=2)
        self.assertEqual(self.node("view", address, "count")["result"], "1")
        self.assertEqual(self.node("view", address, "answer")["result"], tx["result"])
        self.node("check")
        # The next transaction works, with a module of its own command.
        nxt = self.node("call", address, "ask", '"Name a colour."')
        self.assert_accepted_by_all(nxt)
        self.assertEqual(nxt["result"], tx["result"])
        self.assertEqual(self.node("view", address, "count")["result"], "2")
        self.assertEqual(self.node("tx", str(tx["tx"]))["rounds"][0]["leader_kind"], "UserError",
                         "the receipt keeps the lost round")


if __name__ == "__main__":
    unittest.main()
