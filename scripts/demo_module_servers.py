#!/usr/bin/env python3
"""The local servers `make demo`'s module step needs (scripts/demo.d/60-modules.sh): the
inference server of tests/modules/llm_server (a random-weight model written into FOLDER, served
by node-llama-cpp on 127.0.0.1) and a page on 127.0.0.1, plus the two module configurations
genvm-node is given. The same pieces as tests/node/modules_e2e_test.py, imported from it.

Usage: demo_module_servers.py BUILD_DIR FOLDER
Prints one line "ready PAGE_URL LLM_CONFIG WEB_CONFIG", then serves until SIGTERM or SIGINT.
"""
import os
import signal
import sys

here = os.path.dirname(os.path.abspath(__file__))
if len(sys.argv) != 3:
    sys.exit("usage: demo_module_servers.py BUILD_DIR FOLDER")
os.environ["GENVM_BUILD_DIR"] = os.path.abspath(sys.argv[1])
sys.path.insert(0, os.path.join(here, "..", "tests", "node"))
import modules_e2e_test as e2e  # noqa: E402

folder = sys.argv[2]
for sig in (signal.SIGTERM, signal.SIGINT):
    signal.signal(sig, lambda *_: sys.exit(0))  # the finally below ends the inference server
inference, llm_url = e2e.start_inference_server(folder)
try:
    pages, page_url = e2e.serve(e2e.PageServer)
    llm_config, web_config = e2e.write_module_configs(folder, llm_url)
    print("ready", page_url + "/price.html", llm_config, web_config, flush=True)
    while True:
        signal.pause()
finally:
    inference.terminate()
    inference.wait(10)
