#!/usr/bin/env python3
"""Memory of the modules at rest and under 8 concurrent runs: the real genvm-module-llm
(against tests/modules/llm_server's inference server, whose memory is not counted) and the real
genvm-module-web (its Chromium and renderers counted: the whole process tree), each started on
a unix socket; at rest after start-up (and, for web, one render), then with 8 executor-style
connections at once (hello, then prompts or renders), sampled every 20 ms. Memory is the sum of
PSS (proportional set size: shared pages split among the processes sharing them) over the tree,
from /proc/PID/smaps_rollup; RSS sums are printed beside it.

  bench/modules_memory.py [-b BUILD_DIR] [-c CONNECTIONS] [-k REQUESTS_PER_CONNECTION]
"""

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "modules"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "node"))
from module_wire import connect, frame, read_frame, serve_page, start_module  # noqa: E402
from modules_e2e_test import start_inference_server  # noqa: E402
from test_llm_e2e import TEMPLATES  # noqa: E402

PAGE = b"<!doctype html><html><body><h1>Price list</h1><p>price: <b>42</b></p>" + b"<p>row</p>" * 200 + b"</body></html>"


def tree(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for t in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{t}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return out


def memory_kib(pid):
    """(PSS, RSS) in KiB summed over pid's process tree."""
    pss = rss = 0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        pss += int(line.split()[1])
                    elif line.startswith("Rss:"):
                        rss += int(line.split()[1])
        except OSError:
            pass
    return pss, rss


def under_load(pid, connections, requests, sock_path, request, name):
    peak = [0, 0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            pss, rss = memory_kib(pid)
            peak[0], peak[1] = max(peak[0], pss), max(peak[1], rss)
            time.sleep(0.02)

    errors = []

    def client():
        try:
            s = connect(sock_path)
            for _ in range(requests):
                s.sendall(frame(request))
                a = read_frame(s)
                if "Ok" not in a:
                    errors.append(repr(a)[:200])
            s.close()
        except Exception as e:  # noqa: BLE001 — reported below
            errors.append(str(e))

    sampler = threading.Thread(target=sample)
    sampler.start()
    t0 = time.monotonic()
    clients = [threading.Thread(target=client) for _ in range(connections)]
    for c in clients:
        c.start()
    for c in clients:
        c.join()
    done.set()
    sampler.join()
    if errors:
        sys.exit(f"bench/modules_memory.py: {name}: {len(errors)} failed requests, e.g. {errors[0]}")
    return peak, time.monotonic() - t0


def report(name, rest, peak, connections, requests, seconds):
    print(f"{name}: at rest PSS {rest[0] / 1024:.1f} MiB (RSS {rest[1] / 1024:.1f}); "
          f"{connections} connections x {requests} requests ({seconds:.1f} s): peak PSS {peak[0] / 1024:.1f} MiB "
          f"(RSS {peak[1] / 1024:.1f})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-b", "--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("-c", "--connections", type=int, default=8)
    ap.add_argument("-k", "--requests", type=int, default=5)
    args = ap.parse_args()
    llm_bin = os.path.join(args.build, "tools", "genvm-module-llm", "genvm-module-llm")
    web_bin = os.path.join(args.build, "tools", "genvm-module-web", "genvm-module-web")
    for b in (llm_bin, web_bin):
        if not os.path.exists(b):
            sys.exit(f"bench/modules_memory.py: no {b} (build the module targets)")
    tmp = tempfile.mkdtemp(prefix="gvm-bench-modmem-")
    procs = []
    try:
        server, llm_url = start_inference_server(tmp)
        procs.append(server)
        llm_config = (f"temperature: 0\nseed: 1\nmax_tokens: 8\nbackends:\n  local:\n"
                      f"    host: {llm_url}\n    provider: openai-compatible\n"
                      f"    key: ''\n    models:\n      local: {{supports_json: true}}\n" + TEMPLATES)
        llm, llm_sock, _ = start_module(llm_bin, tmp, "llm", llm_config)
        procs.append(llm)
        time.sleep(0.5)
        rest = memory_kib(llm.pid)
        prompt = {"Prompt": {"payload": {"images": [], "prompt": "Say hi.", "response_format": "text"},
                             "remaining_fuel_as_gen": 1 << 40}}
        peak, secs = under_load(llm.pid, args.connections, args.requests, llm_sock, prompt, "llm")
        report("genvm-module-llm", rest, peak, args.connections, args.requests, secs)

        pages, url = serve_page(PAGE)
        web, web_sock, _ = start_module(web_bin, tmp, "web", "always_allow_hosts: [\"127.0.0.1\"]\n")
        procs.append(web)
        render = {"Render": [{"mode": "text", "url": url, "wait_after_loaded": "0ms"}, 1 << 24]}
        s = connect(web_sock)
        s.sendall(frame(render))
        read_frame(s)
        s.close()
        time.sleep(1.0)  # the spare page is ready, the used one closed
        rest = memory_kib(web.pid)
        peak, secs = under_load(web.pid, args.connections, args.requests, web_sock, render, "web")
        report("genvm-module-web (Chromium included)", rest, peak, args.connections, args.requests, secs)
        pages.shutdown()
    finally:
        for p in procs:
            p.terminate()
            p.wait(10)
        if os.environ.get("GENVM_BENCH_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
