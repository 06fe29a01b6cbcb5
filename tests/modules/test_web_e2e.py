"""WebRequest and WebRender end to end: the real genvm, started as the public manager starts it
(tests/conformance/gvm/runner.py), runs the C probe contract; its nondet leader block calls
WebRequest and WebRender (02-gl_call.rst); the real genvm-module-web (started here on a unix
socket with a test configuration that allow-lists 127.0.0.1) fetches from, or renders in its
headless Chromium, pages of an HTTP server on 127.0.0.1; the
contract's answer, in the spec's module result encoding (03-schemas.rst), comes back in the
run's result. Nothing in between is simulated.
"""

import http.server
import os
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "conformance"))

BUILD = os.environ.get("GENVM_BUILD_DIR", "")
MODULE = os.path.join(BUILD, "tools", "genvm-module-web", "genvm-module-web")
os.environ.setdefault("GENVM_CONFORMANCE_PROBE", os.path.join(BUILD, "tests", "conformance", "probe.wasm"))

from gvm import calldata as cd  # noqa: E402
from gvm import runner  # noqa: E402
from test_executor import ExecutorCase, RETURN_ANSWERS, call, run_nondet, script  # noqa: E402


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/hello":
            body = b"hello from 127.0.0.1"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif self.path == "/chain":
            self.send_response(302)
            self.send_header("Location", "/hello")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/downgrade":
            # served over https only: a redirect to the plain-http server
            self.send_response(302)
            self.send_header("Location", self.server.plain_base + "/hello")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/page":
            body = b"<html><body><p id=v>price: <b>42</b></p>" \
                   b"<img src='http://internal.example.com/pixel'></body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif self.path == "/to-internal":
            # to a name that passes the URL checks but resolves (pinned in the config) to loopback
            self.send_response(302)
            self.send_header("Location", "http://internal.example.com/secret")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = b"got " + self.rfile.read(n)
        self.send_response(201)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def web_render(url, mode="text", wait="0ms"):
    return {"WebRender": {"mode": mode, "url": url, "wait_after_loaded": wait}}


def web_request(url, method="GET", body=None):
    req = {"method": method, "url": url, "headers": {}}
    if body is not None:
        req["body"] = body
    return {"WebRequest": req}


class WebModuleEndToEnd(ExecutorCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if not os.path.exists(MODULE):
            raise AssertionError(f"genvm-module-web not found at {MODULE} (set GENVM_BUILD_DIR)")
        cls.http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=cls.http.serve_forever, daemon=True).start()
        cls.base = f"http://127.0.0.1:{cls.http.server_address[1]}"
        cls.tmp = tempfile.mkdtemp(prefix="gvm-web-e2e-")
        # An https server with a certificate made here for 127.0.0.1; the module trusts it
        # through ca_file, so TLS is verified for real.
        cert, key = os.path.join(cls.tmp, "cert.pem"), os.path.join(cls.tmp, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                        "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert],
                       check=True, capture_output=True)
        cls.https = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(cert, key)
        cls.https.socket = tls.wrap_socket(cls.https.socket, server_side=True)
        cls.https.plain_base = cls.base
        threading.Thread(target=cls.https.serve_forever, daemon=True).start()
        cls.tls_base = f"https://127.0.0.1:{cls.https.server_address[1]}"
        cls.socket_path = os.path.join(cls.tmp, "web.sock")
        config = os.path.join(cls.tmp, "web.yaml")
        with open(config, "w") as f:
            f.write(f"bind_address: unix://{cls.socket_path}\n"
                    "always_allow_hosts: [\"127.0.0.1\"]\n"
                    "resolve: [\"internal.example.com:80:127.0.0.1\"]\n"
                    "request_timeout: 10\n"
                    f"ca_file: {cert}\n")
        cls.module = subprocess.Popen([MODULE, "--config", config, "--die-with-parent"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while not os.path.exists(cls.socket_path):
            if cls.module.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("genvm-module-web did not start: " + cls.module.stderr.read().decode())
            time.sleep(0.02)

    @classmethod
    def tearDownClass(cls):
        cls.module.terminate()
        cls.module.wait(10)
        cls.http.shutdown()
        cls.https.shutdown()

    def leader_block(self, *requests, module_uri=None):
        """Runs the probe with one nondet block making `requests`; returns (report, answers)."""
        uri = module_uri or f"unix://{self.socket_path}"
        block = [call(r) for r in requests] + [RETURN_ANSWERS]
        data = self.execution(script(run_nondet(block, [call({"Return": True})]), RETURN_ANSWERS))
        o = runner.run(runner.find_genvm(), data, world=self.world(), debug_mode="safe",
                       extra_args=[f"--module-web={uri}"])
        rep = self.delivered(o)
        if rep.kind != "Return":
            return rep, None
        entry = rep.nondet_results[0]
        self.assertEqual(entry[:1], b"\x00", f"the leader block did not return: {entry[:200]!r}")
        return rep, [(rc, cd.decode(b) if rc == 0 else b) for rc, b in cd.decode(entry[1:])]

    def test_get_from_an_allow_listed_server(self):
        _, answers = self.leader_block(web_request(self.base + "/hello"))
        rc, got = answers[0]
        self.assertEqual(rc, 0)
        response = got["ok"]
        self.assertEqual(response["status"], 200)
        self.assertEqual(response["body"], b"hello from 127.0.0.1")
        self.assertEqual(response["headers"]["content-type"], b"text/plain")

    def test_redirect_and_post(self):
        _, answers = self.leader_block(web_request(self.base + "/chain"),
                                       web_request(self.base + "/post", "POST", b"abc"))
        self.assertEqual(answers[0][1]["ok"]["body"], b"hello from 127.0.0.1")
        self.assertEqual((answers[1][1]["ok"]["status"], answers[1][1]["ok"]["body"]), (201, b"got abc"))

    def test_refusals_reach_the_contract_as_errors(self):
        _, answers = self.leader_block(web_request(self.base + "/to-internal"),
                                       web_request("https://example.com:8443/"),
                                       web_request("ftp://example.com/"))
        causes = [got["error"]["causes"] for _, got in answers]
        self.assertEqual(causes, [["ADDRESS_FORBIDDEN"], ["PORT_FORBIDDEN"], ["SCHEMA_FORBIDDEN"]])

    def test_https_verified_and_no_downgrade(self):
        _, answers = self.leader_block(web_request(self.tls_base + "/hello"),
                                       web_request(self.tls_base + "/downgrade"))
        self.assertEqual(answers[0][1]["ok"]["body"], b"hello from 127.0.0.1")
        error = answers[1][1]["error"]
        self.assertEqual(error["causes"], ["SENDING_REQUEST"])
        self.assertIn("https to http", error["ctx"]["error"])

    def test_render_through_the_module_browser(self):
        """WebRender in the three modes through the module's Chromium; the page's image on
        internal.example.com (pinned to loopback, not allow-listed) is refused."""
        _, answers = self.leader_block(web_render(self.base + "/page"),
                                       web_render(self.base + "/page", "html"),
                                       web_render(self.base + "/page", "screenshot", "100ms"),
                                       web_render("http://internal.example.com/secret"))
        self.assertEqual(answers[0][1], {"ok": {"text": "price: 42"}})
        response = answers[1][1]["ok"]["response"]
        self.assertEqual(response["status"], 200)
        self.assertIn(b"<b>42</b>", response["body"])
        self.assertEqual(answers[2][1]["ok"]["image"][:8], b"\x89PNG\r\n\x1a\n")
        self.assertEqual(answers[3][1]["error"]["causes"], ["ADDRESS_FORBIDDEN"])

    def test_a_module_that_is_not_there_is_the_contracts_module_error(self):
        # 03-schemas.rst "Module Error Format": the contract reads {"error": ...} for every call,
        # the run goes on (docs/PROTOCOLS.md ## Modules: a departure from the public executor,
        # whose run ends with an internal error).
        _, answers = self.leader_block(web_request(self.base + "/hello"), web_request(self.base + "/hello"),
                                       module_uri="unix://" + os.path.join(self.tmp, "nobody.sock"))
        unavailable = {"error": {"causes": ["MODULE_UNAVAILABLE"], "ctx": {"module": "web"}}}
        self.assertEqual(answers, [(0, unavailable), (0, unavailable)])

    def test_scripts_that_are_missing_or_loop(self):
        # A missing greybox script: the module exits at once with one line.
        config = os.path.join(self.tmp, "noscript.yaml")
        with open(config, "w") as f:
            f.write(f"bind_address: unix://{self.tmp}/noscript.sock\nlua_script_path: /nonexistent/web.lua\n")
        p = subprocess.run([MODULE, "--config", config], capture_output=True, timeout=30)
        self.assertNotEqual(p.returncode, 0)
        lines = p.stderr.decode().strip().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("script_missing: cannot read the Lua script /nonexistent/web.lua", lines[0])
        # A script whose Request loops: the run ends with the module's bounded error, not a hang.
        script_path = os.path.join(self.tmp, "loop.lua")
        with open(script_path, "w") as f:
            f.write("function Render() end\nfunction Request() while true do end end\n")
        sock = os.path.join(self.tmp, "loop.sock")
        with open(config, "w") as f:
            f.write(f"bind_address: unix://{sock}\nlua_script_path: {script_path}\nlua_instruction_limit: 10000000\n")
        module = subprocess.Popen([MODULE, "--config", config, "--die-with-parent"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 10
            while not os.path.exists(sock) and module.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(0.2)  # bind() makes the file, listen() follows
            rep, _ = self.leader_block(web_request(self.base + "/hello"),
                                       module_uri=f"unix://{sock}")
            self.assertEqual(rep.kind, "InternalError")
            self.assertIn("LUA_INSTRUCTION_LIMIT", rep.data)
        finally:
            module.terminate()
            module.wait(10)


if __name__ == "__main__":
    unittest.main()
