#!/usr/bin/env python3
"""The manager owns the modules (issue 16), end to end with real parts only: a genvm-manager
process from the build tree (it finds its genvm line and genvm-module-web / -llm from its own
directory), modules started and stopped over HTTP (API /module/start, /module/stop; MOD
modules.rs), the real genvm running the C probe contract, whose nondet leader block calls
WebRequest (02-gl_call.rst) through the manager-started web module against an HTTP server on
127.0.0.1 (allow-listed in the inline module config). The LLM module runs in the public
`user_error` mode (modules.rs: every request answered UserError MODULE_USER_ERROR), so no
inference server is needed for the run to need both modules.

    python3 tests/conformance/manager/modules_e2e.py --build-dir build [-v]
"""

import argparse
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", required=True)
    args, rest = p.parse_known_args()
    build = os.path.abspath(args.build_dir)
    os.environ["GENVM_BUILD_DIR"] = build
    os.environ.setdefault("GENVM_CONFORMANCE_PROBE", os.path.join(build, "tests", "conformance", "probe.wasm"))
    return build, [sys.argv[0]] + rest


BUILD, UNITTEST_ARGV = parse_args() if __name__ == "__main__" else (os.environ.get("GENVM_BUILD_DIR", ""), None)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import mgr  # noqa: E402
from gvm import calldata as cd  # noqa: E402
from gvm import fees, host, result  # noqa: E402
from gvm import execution_data as xd  # noqa: E402
from test_executor import CONTRACT, ORIGIN, RETURN_ANSWERS, SENDER, SIGNER, call, run_nondet, script  # noqa: E402

MODULES_TESTS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "modules")
MANAGER = os.path.join(BUILD, "tools", "genvm-manager", "genvm-manager")
PROBE = os.environ["GENVM_CONFORMANCE_PROBE"]
NEEDED = [MANAGER, PROBE, os.path.join(BUILD, "tools", "genvm-module-web", "genvm-module-web"),
          os.path.join(BUILD, "tools", "data", "manifest.yaml")]
NOT_RUNNING_HTTP = "modules are required but not running (is_sync=false with 'n' permission)"


class Page(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        body = b"page served to the manager's module"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class ManagerOwnsTheModules(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        missing = [p for p in NEEDED if not os.path.exists(p)]
        if missing:
            raise AssertionError(f"not built: {missing}")
        cls.http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
        threading.Thread(target=cls.http.serve_forever, daemon=True).start()
        cls.url = f"http://127.0.0.1:{cls.http.server_address[1]}/page"
        with open(PROBE, "rb") as f:
            cls.code = f.read()
        cls.tmp = tempfile.mkdtemp(prefix="genvm-mgr-modules-")
        world = host.World()
        world.install_code(CONTRACT.raw, cls.code)
        cls.h0 = host.Host0(world, host.make_socket_path(cls.tmp))
        # No module configuration at all: the binaries are found beside the manager's directory.
        cls.m = mgr.Manager(MANAGER, "")

    @classmethod
    def tearDownClass(cls):
        cls.m.stop()
        cls.h0.close()
        cls.http.shutdown()

    def post(self, path, body):
        return self.m.http("POST", path, json.dumps(body))

    def status(self):
        code, body = self.m.http("GET", "/status")
        self.assertEqual(code, 200, body)
        return body["llm_module"], body["web_module"]

    def run_request(self):
        block = [call({"WebRequest": {"method": "GET", "url": self.url, "headers": {}}}), RETURN_ANSWERS]
        payload = script(run_nondet(block, [call({"Return": True})]), RETURN_ANSWERS)
        # API GenvmRunRequest: async, permissions wscn (the default): run.rs needs_modules.
        return mgr.run_request(calldata=payload, host=self.h0.uri, debug_mode="safe", is_sync=False,
                               message=xd.message(CONTRACT, SENDER, ORIGIN, SIGNER),
                               bucket_totals=fees.BUCKETS, gas_data=fees.GAS_DATA,
                               # lib.rs HostData: what the module's hello carries
                               host_data=json.dumps({"node_address": "0x" + "11" * 20, "tx_id": "0x" + "22" * 32}))

    def test_start_run_stop(self):
        self.assertEqual(self.status(), ("stopped", "stopped"))
        self.assertEqual(self.post("/module/stop", {"module_type": "web"}), (200, {"result": "module_not_running"}))
        code, body = self.post("/module/start", {"module_type": "gpu"})
        self.assertEqual(code, 500, body)

        # modules.rs StartRequest: an inline config object; user_error for the LLM module.
        web_config = {"always_allow_hosts": ["127.0.0.1"], "request_timeout": 10,
                      "chromium_path": "/nonexistent/chromium"}  # WebRequest only: no browser needed
        self.assertEqual(self.post("/module/start", {"module_type": "web", "config": web_config}),
                         (200, {"result": "module_started"}), self.m.log_text()[-2000:])
        self.assertEqual(self.status(), ("stopped", "running"))

        s = self.m.session()
        reply = s.request("run", self.run_request())
        self.assertEqual(reply[0], mgr.METHODS["error"], "one module down: refused before a run exists")
        self.assertIn("modules are required but not running", repr(reply[2]))

        self.assertEqual(self.post("/module/start", {"module_type": "llm", "config": None, "user_error": True}),
                         (200, {"result": "module_started"}))
        self.assertEqual(self.status(), ("running", "running"))
        code, body = self.post("/module/start", {"module_type": "web", "config": web_config})
        self.assertEqual((code, body.get("error")), (500, "module_already_running"))

        # A run that needs modules: its WebRequest reaches the module, the page comes back.
        reply = s.request("run", self.run_request())
        self.assertEqual(reply[0], mgr.METHODS["run"], reply)
        gid = reply[2]["genvm_id"]
        fin = s.wait_terminal(gid)
        self.assertIn("finished", fin, fin)
        rep = result.Reported(fin["finished"]["consumed_result"]).require_valid()
        if rep.kind != "Return":
            log = s.request("get_artifact", {"genvm_id": gid, "field": "genvm_log", "offset": 0, "max_len": 1 << 20})
            self.fail(f"{rep.kind}: {rep.data!r}\n{log[2]['data'].decode(errors='replace')[-3000:]}")
        entry = rep.nondet_results[0]
        self.assertEqual(entry[:1], b"\x00", f"the leader block did not return: {entry[:300]!r}")
        answers = [(rc, cd.decode(b) if rc == 0 else b) for rc, b in cd.decode(entry[1:])]
        response = answers[0][1]["ok"]
        self.assertEqual((response["status"], response["body"]), (200, b"page served to the manager's module"))

        # Stopped: the same run fails to start with the public error, on both adapters.
        self.assertEqual(self.post("/module/stop", {"module_type": "web"}), (200, {"result": "module_stopped"}))
        self.assertEqual(self.status(), ("running", "stopped"))
        reply = s.request("run", self.run_request())
        self.assertEqual(reply[0], mgr.METHODS["error"])
        self.assertIn("modules are required but not running", repr(reply[2]))
        code, body = self.m.http("POST", "/genvm/run", cd.encode(self.run_request()))
        self.assertEqual((code, body), (500, {"error": NOT_RUNNING_HTTP}))

        # Restart brings it back under the same rules.
        self.assertEqual(self.post("/module/restart", {"module_type": "web", "config": web_config}),
                         (200, {"result": "module_restarted"}))
        self.assertEqual(self.status(), ("running", "running"))
        self.assertEqual(self.post("/module/stop", {"module_type": "llm"}), (200, {"result": "module_stopped"}))
        self.assertEqual(self.post("/module/stop", {"module_type": "web"}), (200, {"result": "module_stopped"}))
        self.assertEqual(self.status(), ("stopped", "stopped"))
        s.close()


class LlmCheck(unittest.TestCase):
    """API /llm/check (handlers.rs handle_llm_check): each config asked each test prompt directly,
    here a real inference server (tests/modules/llm_server: node-llama-cpp on the CPU with the
    random-weight model make_model.py writes) and an address where nothing listens."""

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, MODULES_TESTS)
        from test_llm_e2e import SERVER_DIR, make_model  # noqa: E402

        cls.tmp = tempfile.mkdtemp(prefix="genvm-mgr-llm-check-")
        cls.server = subprocess.Popen(["node", os.path.join(SERVER_DIR, "server.mjs"), "--model", make_model(cls.tmp)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = cls.server.stdout.readline().decode()
        if not line.startswith("listening "):
            raise AssertionError("inference server did not start: " + line + cls.server.stderr.read().decode())
        cls.llm = f"http://127.0.0.1:{int(line.split()[1])}"
        cls.m = mgr.Manager(MANAGER, "")

    @classmethod
    def tearDownClass(cls):
        cls.m.stop()
        cls.server.terminate()
        cls.server.wait(10)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_each_config_with_each_prompt(self):
        prompt = {"system_message": None, "user_message": "Say hello.", "temperature": 0, "images": [],
                  "max_tokens": 8, "use_max_completion_tokens": False}
        body = {"configs": [{"host": self.llm, "provider": "openai-compatible", "model": "local", "key": ""},
                            {"host": "http://127.0.0.1:1", "provider": "openai-compatible", "model": "m",
                             "key": "${ENV[GENVM_TEST_UNSET_KEY]}"}],
                "test_prompts": [prompt, dict(prompt, system_message="Answer briefly.", seed=1)]}
        code, got = self.m.http("POST", "/llm/check", json.dumps(body))
        self.assertEqual(code, 200, got)
        self.assertEqual([(r["config_index"], r["prompt_index"]) for r in got], [(0, 0), (0, 1), (1, 0), (1, 1)])
        for r in got[:2]:
            self.assertTrue(r["available"], r)
            self.assertIsNone(r["error"])
            self.assertIsInstance(r["response"], str)
        for r in got[2:]:
            self.assertFalse(r["available"], r)
            self.assertIsInstance(r["error"], str)
            self.assertIsNone(r["response"])

    def test_bad_bodies(self):
        self.assertEqual(self.m.http("POST", "/llm/check", "{")[0], 400)
        code, got = self.m.http("POST", "/llm/check", json.dumps({"configs": 1, "test_prompts": []}))
        self.assertEqual(code, 500, got)
        self.assertIn("configs", got["error"])


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV)
