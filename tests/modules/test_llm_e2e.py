"""ExecPrompt and ExecPromptTemplate end to end against a real inference server.

The real genvm (started as the public manager starts it, tests/conformance/gvm/runner.py) runs
the C probe contract; its nondet leader block calls ExecPrompt / ExecPromptTemplate
(02-gl_call.rst); the real genvm-module-llm (unix socket, a test configuration) sends them to
an OpenAI-compatible server on 127.0.0.1: llm_server/server.mjs over node-llama-cpp, running on
the CPU a tiny llama model with random weights from a fixed seed that llm_server/make_model.py
writes here with the gguf-py bundled in node-llama-cpp's llama.cpp sources. Temperature 0 and a
seed make answers repeat; JSON answers are grammar-constrained. Failing providers are real HTTP
servers here that answer 500, never answer, or close the connection.
"""

import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "conformance"))

BUILD = os.environ.get("GENVM_BUILD_DIR", "")
MODULE = os.path.join(BUILD, "tools", "genvm-module-llm", "genvm-module-llm")
SERVER_DIR = os.path.join(HERE, "llm_server")
os.environ.setdefault("GENVM_CONFORMANCE_PROBE", os.path.join(BUILD, "tests", "conformance", "probe.wasm"))

from gvm import calldata as cd  # noqa: E402
from gvm import runner  # noqa: E402
from test_executor import ExecutorCase, RETURN_ANSWERS, call, run_nondet, script  # noqa: E402

TEMPLATES = """
prompt_templates:
  eq_comparative:
    system: 'Compare two outputs. Answer JSON {"reason": str, "result": bool}.'
    user: "<a>#{leader_answer}</a><b>#{validator_answer}</b><p>#{principle}</p>"
  eq_non_comparative_leader:
    system: Perform the task.
    user: "<task>#{task}</task><criteria>#{criteria}</criteria><input>#{input}</input>"
  eq_non_comparative_validator:
    system: 'Judge the output. Answer JSON {"reason": str, "result": bool}.'
    user: "<task>#{task}</task><input>#{input}</input><criteria>#{criteria}</criteria><output>#{output}</output>"
"""


def make_model(tmp):
    """gguf-py from the llama.cpp git bundle node-llama-cpp ships, then our random model."""
    bundle = os.path.join(SERVER_DIR, "node_modules", "node-llama-cpp", "llama", "gitRelease.bundle")
    if not os.path.exists(bundle):
        raise AssertionError(f"{bundle} missing: run scripts/bootstrap (npm ci in tests/modules/llm_server)")
    src = os.path.join(tmp, "llama.cpp")
    os.makedirs(src)
    subprocess.run(["git", "init", "-q"], cwd=src, check=True)
    subprocess.run(["git", "fetch", "-q", bundle, "HEAD"], cwd=src, check=True)
    archive = subprocess.run(["git", "archive", "FETCH_HEAD", "gguf-py"], cwd=src, check=True, capture_output=True)
    subprocess.run(["tar", "x"], cwd=src, input=archive.stdout, check=True)
    # Debian's python3-numpy: the system interpreter, whatever python runs this test.
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    model = os.path.join(tmp, "random-llama.gguf")
    subprocess.run([python, os.path.join(SERVER_DIR, "make_model.py"), os.path.join(src, "gguf-py"), model], check=True)
    return model


class FailingProvider(http.server.BaseHTTPRequestHandler):
    """/e500/... answers 500, /hang/... never answers, /close/... closes the connection."""
    hits = {}

    def log_message(self, *args):
        pass

    def do_POST(self):
        prefix = self.path.split("/")[1]
        FailingProvider.hits[prefix] = FailingProvider.hits.get(prefix, 0) + 1
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if prefix == "e500":
            body = b'{"error": {"message": "overloaded"}}'
            self.send_response(500)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif prefix == "hang":
            time.sleep(5)
        else:
            self.close_connection = True
            self.connection.shutdown(2)


class LlmModuleEndToEnd(ExecutorCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if not os.path.exists(MODULE):
            raise AssertionError(f"genvm-module-llm not found at {MODULE} (set GENVM_BUILD_DIR)")
        cls.tmp = tempfile.mkdtemp(prefix="gvm-llm-e2e-")
        cls.procs = []
        model = make_model(cls.tmp)
        cls.server = subprocess.Popen(["node", os.path.join(SERVER_DIR, "server.mjs"), "--model", model],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        cls.procs.append(cls.server)
        line = cls.server.stdout.readline().decode()
        if not line.startswith("listening "):
            raise AssertionError("inference server did not start: " + line + cls.server.stderr.read().decode())
        cls.llm = f"http://127.0.0.1:{int(line.split()[1])}"
        cls.failing = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FailingProvider)
        threading.Thread(target=cls.failing.serve_forever, daemon=True).start()
        cls.bad = f"http://127.0.0.1:{cls.failing.server_address[1]}"

    @classmethod
    def tearDownClass(cls):
        for p in cls.procs:
            p.terminate()
            p.wait(10)
        cls.failing.shutdown()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def start_module(self, name, body, expect_start=True):
        sock = os.path.join(self.tmp, name + ".sock")
        config = os.path.join(self.tmp, name + ".yaml")
        with open(config, "w") as f:
            f.write(f"bind_address: unix://{sock}\ntemperature: 0\nseed: 1\nretries: 1\nretry_backoff: 50ms\n"
                    "gen_per_token: 1\n" + TEMPLATES + body)
        p = subprocess.Popen([MODULE, "--config", config, "--die-with-parent"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.procs.append(p)
        if not expect_start:
            p.wait(10)
            return p
        deadline = time.monotonic() + 10
        while not self.accepts(sock):  # the file exists from bind(); wait for listen() too
            if p.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("genvm-module-llm did not start: " + p.stderr.read().decode())
            time.sleep(0.02)
        return f"unix://{sock}"

    @staticmethod
    def accepts(sock):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(sock)
            return True
        except OSError:
            return False
        finally:
            s.close()

    def script(self, name, text):
        path = os.path.join(self.tmp, name + ".lua")
        with open(path, "w") as f:
            f.write(text)
        return path

    def local_backend(self, name="local", priority=0, json_ok=True):
        return (f"  {name}:\n    host: {self.llm}\n    provider: openai-compatible\n    key: ''\n"
                f"    models:\n      local: {{supports_json: {str(json_ok).lower()}}}\n"
                f"    meta: {{priority: {priority}}}\n")

    def failing_backend(self, prefix, priority):
        return (f"  {prefix}:\n    host: {self.bad}/{prefix}\n    provider: openai-compatible\n    key: ''\n"
                f"    models:\n      m: {{supports_json: true, timeout: 1s}}\n    meta: {{priority: {priority}}}\n")

    def leader_block(self, module_uri, *requests, fuel=10**12):
        """Runs the probe with one nondet block making `requests`; returns (report, answers).
        `fuel` is the host's remaining_fuel_as_gen (the default script bounds max_tokens by it)."""
        block = [call(r) for r in requests] + [RETURN_ANSWERS]
        data = self.execution(script(run_nondet(block, [call({"Return": True})]), RETURN_ANSWERS))
        world = self.world()
        world.remaining_fuel = (0, fuel)
        o = runner.run(runner.find_genvm(), data, world=world, debug_mode="safe",
                       extra_args=[f"--module-llm={module_uri}"])
        rep = self.delivered(o)
        if rep.kind != "Return":
            return rep, None
        entry = rep.nondet_results[0]
        self.assertEqual(entry[:1], b"\x00", f"the leader block did not return: {entry[:200]!r}")
        return rep, [(rc, cd.decode(b) if rc == 0 else b) for rc, b in cd.decode(entry[1:])]

    def module(self):
        if not hasattr(type(self), "main_uri"):
            type(self).main_uri = self.start_module(
                "main", "max_tokens: 24\ntemplate_max_tokens: 24\nmax_prompt_bytes: 4096\nbackends:\n" + self.local_backend())
        return type(self).main_uri

    def test_text_and_json_prompts_through_real_inference(self):
        text = {"ExecPrompt": {"prompt": "Say hello", "response_format": "text", "images": []}}
        as_json = {"ExecPrompt": {"prompt": "Give a JSON object", "response_format": "json", "images": []}}
        rep, answers = self.leader_block(self.module(), text, as_json, text)
        self.assertEqual(rep.kind, "Return")
        (rc1, first), (rc2, obj), (rc3, again) = answers
        self.assertEqual((rc1, rc2, rc3), (0, 0, 0))
        self.assertIsInstance(first["ok"], str)
        self.assertEqual(first, again, "temperature 0 and a seed: the same prompt, the same answer")
        self.assertIsInstance(obj["ok"], dict)
        # consumed_gen = tokens × gen_per_token 1, summed over the three prompts into the result
        self.assertGreater(rep.llm_consumption, 3)

    def test_templates_answer_the_specs_kinds(self):
        cmp = {"ExecPromptTemplate": {"template": "EqComparative", "leader_answer": "4", "validator_answer": "4",
                                      "principle": "equal numbers"}}
        leader = {"ExecPromptTemplate": {"template": "EqNonComparativeLeader", "task": "summarize",
                                         "criteria": "short", "input": "a long text"}}
        val = {"ExecPromptTemplate": {"template": "EqNonComparativeValidator", "task": "summarize",
                                      "criteria": "short", "input": "a long text", "output": "text"}}
        _, answers = self.leader_block(self.module(), cmp, leader, val)
        self.assertIsInstance(answers[0][1]["ok"], bool)
        self.assertIsInstance(answers[1][1]["ok"], str)
        self.assertIsInstance(answers[2][1]["ok"], bool)

    def test_refusals_reach_the_contract_as_errors(self):
        big = {"ExecPrompt": {"prompt": "x" * 5000, "response_format": "text", "images": []}}
        gif = {"ExecPrompt": {"prompt": "look", "response_format": "text", "images": [b"GIF89a......"]}}
        png = b"\x89PNG\r\n\x1a\n" + b"\0" * 16
        no_vision = {"ExecPrompt": {"prompt": "look", "response_format": "text", "images": [png]}}
        _, answers = self.leader_block(self.module(), big, gif)
        self.assertEqual([got["error"]["causes"] for _, got in answers], [["PROMPT_TOO_LARGE"], ["INVALID_IMAGE"]])
        # A valid image and no model flagged supports_image: no backend takes it (fatal, as GenVM).
        rep, _ = self.leader_block(self.module(), no_vision)
        self.assertEqual(rep.kind, "InternalError")
        self.assertIn("NO_PROVIDER_FOR_PROMPT: no enabled model", rep.data)

    def test_images_go_to_a_model_flagged_for_them(self):
        uri = self.start_module("vision", "max_tokens: 8\nbackends:\n" + self.local_backend().replace(
            "{supports_json: true}", "{supports_json: true, supports_image: true}"))
        png = b"\x89PNG\r\n\x1a\n" + b"\0" * 16
        jpeg = b"\xff\xd8\xff\xe1" + b"\0" * 16
        _, answers = self.leader_block(uri, {"ExecPrompt": {"prompt": "look", "response_format": "text",
                                                            "images": [png, jpeg]}})
        self.assertIsInstance(answers[0][1]["ok"], str)

    def test_json_that_does_not_parse_is_an_error_not_a_crash(self):
        # One token cannot close a JSON object: the real server's grammar-constrained answer is cut.
        uri = self.start_module("short", "max_tokens: 1\nbackends:\n" + self.local_backend())
        rep, _ = self.leader_block(uri, {"ExecPrompt": {"prompt": "json", "response_format": "json", "images": []}})
        self.assertEqual(rep.kind, "InternalError")
        self.assertIn("NO_PROVIDER_FOR_PROMPT: local/local: INVALID_JSON", rep.data)
        # The module is still up and answers the next run.
        _, answers = self.leader_block(uri, {"ExecPrompt": {"prompt": "hi", "response_format": "text", "images": []}})
        self.assertIsInstance(answers[0][1]["ok"], str)

    def test_failing_providers_fall_back_by_priority(self):
        FailingProvider.hits.clear()
        uri = self.start_module("fallback", "max_tokens: 24\ntimeout: 20s\nbackends:\n" +
                                self.failing_backend("e500", 30) + self.failing_backend("hang", 20) +
                                self.failing_backend("close", 10) + self.local_backend())
        start = time.monotonic()
        _, answers = self.leader_block(uri, {"ExecPrompt": {"prompt": "json", "response_format": "json", "images": []}})
        self.assertIsInstance(answers[0][1]["ok"], dict)
        # 500 and a closed connection are retried once (retries: 1); a hang costs its 1 s timeout once.
        self.assertEqual(FailingProvider.hits, {"e500": 2, "hang": 1, "close": 2})
        self.assertLess(time.monotonic() - start, 15)

    def test_only_failing_providers_is_an_internal_error(self):
        uri = self.start_module("allbad", "backends:\n" + self.failing_backend("e500", 1) +
                                self.failing_backend("close", 0))
        rep, _ = self.leader_block(uri, {"ExecPrompt": {"prompt": "hi", "response_format": "text", "images": []}})
        self.assertEqual(rep.kind, "InternalError")
        self.assertIn("e500/m: PROVIDER_STATUS HTTP 500", rep.data)
        self.assertIn("close/m: CLOSED", rep.data)

    def test_remaining_fuel_that_pays_for_no_token_ends_the_run(self):
        # gen_per_token 1 and 0 fuel left: the script exhausts, the module answers consumed_gen
        # 2^256-1 and the executor ends the run with the VM error timeout (host-loop.rst).
        rep, _ = self.leader_block(self.module(), {"ExecPrompt": {"prompt": "hi", "response_format": "text", "images": []}},
                                   fuel=0)
        self.assertEqual(rep.kind, "VmError")
        self.assertIn("timeout", rep.data)

    def test_a_missing_script_refuses_to_start_with_one_line(self):
        p = self.start_module("noscript", "lua_script_path: /nonexistent/genvm-llm-default.lua\nbackends:\n" +
                              self.local_backend(), expect_start=False)
        self.assertNotEqual(p.returncode, 0)
        err = p.stderr.read().decode().strip().splitlines()
        self.assertEqual(len(err), 1, err)
        self.assertIn("script_missing: cannot read the Lua script /nonexistent/genvm-llm-default.lua", err[0])

    def test_a_script_that_loops_or_fails_is_a_bounded_internal_error(self):
        loop = self.script("loop", "function ExecPromptTemplate() end\n"
                                   "function ExecPrompt() while true do pcall(function() while true do end end) end end\n")
        uri = self.start_module("loop", f"lua_script_path: {loop}\nlua_instruction_limit: 20000000\nbackends:\n" +
                                self.local_backend())
        start = time.monotonic()
        rep, _ = self.leader_block(uri, {"ExecPrompt": {"prompt": "hi", "response_format": "text", "images": []}})
        self.assertEqual(rep.kind, "InternalError")
        self.assertIn("LUA_INSTRUCTION_LIMIT", rep.data)
        self.assertLess(time.monotonic() - start, 30)
        fails = self.script("fails", "function ExecPromptTemplate() end\nfunction ExecPrompt() local t = nil; return t.x end\n")
        uri = self.start_module("fails", f"lua_script_path: {fails}\nbackends:\n" + self.local_backend())
        rep, _ = self.leader_block(uri, {"ExecPrompt": {"prompt": "hi", "response_format": "text", "images": []}})
        self.assertEqual(rep.kind, "InternalError")
        self.assertIn("LUA_ERROR", rep.data)
        # The module survives its script's faults: the next run is answered (by the same script).
        rep, _ = self.leader_block(uri, {"ExecPrompt": {"prompt": "hi", "response_format": "text", "images": []}})
        self.assertIn("LUA_ERROR", rep.data)


if __name__ == "__main__":
    unittest.main()
