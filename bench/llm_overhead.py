#!/usr/bin/env python3
"""What the LLM module adds to a prompt: the same chat-completions request sent to the same
inference server directly and through the real genvm-module-llm (one executor-style connection
on a unix socket: hello, then Prompt frames), interleaved, N of each; prints min / median of
both and the median of the per-pair difference.

  bench/llm_overhead.py [-b BUILD_DIR] [-n PAIRS] [--max-tokens N]

The server is tests/modules/llm_server (node-llama-cpp on the CPU, the random-weight model that
tests/modules/llm_server/make_model.py writes; `scripts/bootstrap` installs it). The direct
request is the module's own: its first request goes to a recorder on 127.0.0.1 that keeps the
body byte for byte, and every direct call sends that body, on a new connection as the module's
libcurl handle does.
"""

import argparse
import http.client
import http.server
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "modules"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "node"))
from module_wire import connect, frame, read_frame, start_module  # noqa: E402
from modules_e2e_test import start_inference_server  # noqa: E402
from test_llm_e2e import TEMPLATES  # noqa: E402

PROMPT = "Name one colour of the sky. Answer in one word."


class Recorder(http.server.BaseHTTPRequestHandler):
    bodies = []

    def log_message(self, *args):
        pass

    def do_POST(self):
        Recorder.bodies.append((self.path, self.rfile.read(int(self.headers.get("Content-Length", "0")))))
        self.send_response(500)
        self.send_header("Content-Length", "0")
        self.end_headers()


def module_config(host, max_tokens):
    return (f"temperature: 0\nseed: 1\nretries: 0\nmax_tokens: {max_tokens}\n"
            f"backends:\n  local:\n    host: {host}\n    provider: openai-compatible\n    key: ''\n"
            f"    models:\n      local: {{supports_json: true}}\n" + TEMPLATES)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-b", "--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("-n", "--pairs", type=int, default=50)
    ap.add_argument("--max-tokens", type=int, default=4)
    args = ap.parse_args()
    module = os.path.join(args.build, "tools", "genvm-module-llm", "genvm-module-llm")
    if not os.path.exists(module):
        sys.exit(f"bench/llm_overhead.py: no {module} (build the genvm-module-llm target)")
    tmp = tempfile.mkdtemp(prefix="gvm-bench-llm-")
    procs = []
    try:
        server, llm_url = start_inference_server(tmp)
        procs.append(server)
        recorder = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
        threading.Thread(target=recorder.serve_forever, daemon=True).start()
        rec, rec_sock, _ = start_module(module, tmp, "recorded",
                                        module_config(f"http://127.0.0.1:{recorder.server_address[1]}",
                                                      args.max_tokens))
        procs.append(rec)
        prompt = frame({"Prompt": {"payload": {"images": [], "prompt": PROMPT, "response_format": "text"},
                                   "remaining_fuel_as_gen": 1 << 40}})
        s = connect(rec_sock)
        s.sendall(prompt)
        read_frame(s)
        s.close()
        recorder.shutdown()
        if not Recorder.bodies:
            sys.exit("bench/llm_overhead.py: the module sent no request to the recorder")
        path, body = Recorder.bodies[0]

        proc, sock_path, _ = start_module(module, tmp, "llm", module_config(llm_url, args.max_tokens))
        procs.append(proc)
        conn = connect(sock_path)

        def via_module():
            t = time.monotonic()
            conn.sendall(prompt)
            answer = read_frame(conn)
            if "Ok" not in answer:
                sys.exit(f"bench/llm_overhead.py: the module answered {answer}")
            return (time.monotonic() - t) * 1000

        def direct():
            t = time.monotonic()
            c = http.client.HTTPConnection(urllib.parse.urlsplit(llm_url).netloc)
            c.request("POST", path, body=body, headers={"Content-Type": "application/json"})
            r = c.getresponse()
            r.read()
            c.close()
            if r.status != 200:
                sys.exit(f"bench/llm_overhead.py: the server answered {r.status}")
            return (time.monotonic() - t) * 1000

        via_module()
        direct()  # warm both paths (the model's first evaluation)
        pairs = []
        for i in range(args.pairs):
            # Alternate which goes first, so neither always follows the other.
            if i % 2:
                m, d = via_module(), direct()
            else:
                d, m = direct(), via_module()
            pairs.append((d, m))
        ds = [d for d, _ in pairs]
        ms = [m for _, m in pairs]
        diff = [m - d for d, m in pairs]
        print(f"request body: {len(body)} bytes to {path}, max_tokens {args.max_tokens}")
        print(f"direct HTTP   n={len(ds)} min {min(ds):.2f}  median {statistics.median(ds):.2f} ms")
        print(f"via module    n={len(ms)} min {min(ms):.2f}  median {statistics.median(ms):.2f} ms")
        print(f"added by the module: median of pair differences {statistics.median(diff):.2f} ms, "
              f"difference of minimums {min(ms) - min(ds):.2f} ms")
        conn.close()
    finally:
        for p in procs:
            p.terminate()
            p.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
