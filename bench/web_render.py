#!/usr/bin/env python3
"""WebRender latency with the module's browser warm: the real genvm-module-web (its headless
Chromium started once, at module start) on a unix socket, one executor-style connection (hello
frame, then Render frames, as src/common/module's wire has them), N renders of a small page
served by an HTTP server on 127.0.0.1 in each mode; prints the module's start-to-listening
time, the first render, then min / median / p90 / max per mode.

  bench/web_render.py [-b BUILD_DIR] [-n RENDERS] [--gap MS]

Needs the genvm-module-web target built and Debian's chromium.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from module_wire import cd, connect, frame, read_frame, serve_page, start_module  # noqa: E402

PAGE = (b"<!doctype html><html><head><title>bench</title><style>body{font:16px sans-serif}</style></head>"
        b"<body><h1>Price list</h1><p id=v>price: <b>42</b></p>" + b"<p>row</p>" * 50 + b"</body></html>")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-b", "--build", default=os.path.join(HERE, "..", "build-render"))
    ap.add_argument("-n", "--renders", type=int, default=50)
    ap.add_argument("--gap", type=float, default=0.0,
                    help="milliseconds between renders (0: back to back; a run does other work between renders, "
                         "and the module prepares the next page meanwhile)")
    args = ap.parse_args()
    module = os.path.join(args.build, "tools", "genvm-module-web", "genvm-module-web")
    if not os.path.exists(module):
        sys.exit(f"bench/web_render.py: no {module} (build the genvm-module-web target)")
    http_server, url = serve_page(PAGE)
    tmp = tempfile.mkdtemp(prefix="gvm-bench-render-")
    proc, sock_path, start_ms = start_module(module, tmp, "web", "always_allow_hosts: [\"127.0.0.1\"]\n")
    try:
        print(f"module start (browser included) to listening: {start_ms:.0f} ms")
        s = connect(sock_path)

        def render(mode):
            if args.gap:
                time.sleep(args.gap / 1000)
            t = time.monotonic()
            s.sendall(frame({"Render": [{"mode": mode, "url": url, "wait_after_loaded": "0ms"}, 64 << 20]}))
            answer = read_frame(s)
            if "Ok" not in answer:
                sys.exit(f"bench/web_render.py: render failed: {cd.describe(answer)}")
            return (time.monotonic() - t) * 1000

        print(f"first render (text): {render('text'):.1f} ms")
        for mode in ("text", "html", "screenshot"):
            times = sorted(render(mode) for _ in range(args.renders))
            p90 = times[min(len(times) - 1, int(len(times) * 0.9))]
            print(f"{mode:10s} n={len(times)} min {times[0]:.1f}  median {statistics.median(times):.1f}  "
                  f"p90 {p90:.1f}  max {times[-1]:.1f} ms")
        s.close()
    finally:
        proc.terminate()
        proc.wait(10)
        http_server.shutdown()


if __name__ == "__main__":
    main()
