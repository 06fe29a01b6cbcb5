// `genvm-node serve [OPTIONS]`: a node GenLayer's tools (genlayer-js, the genlayer CLI,
// genlayer-py) talk to as they talk to GenLayer Studio — JSON-RPC 2.0 at POST /api — over the
// same state file the other genvm-node commands use. docs/PROTOCOLS.md, "Studio JSON-RPC".
#pragma once

#include <string>

namespace genvm::node::serve {

inline constexpr const char* kServeUsage =
    "usage: genvm-node serve [--host 127.0.0.1] [--port 4000] [--state FILE] [--validators N]\n"
    "                        [--timeout SECONDS] [--finality-window MS] [--genvm PATH]\n"
    "                        [--debug-mode LEVEL] [--module-llm-config FILE] [--module-web-config FILE]\n"
    "\n"
    "JSON-RPC 2.0 at POST http://HOST:PORT/api, as GenLayer Studio serves it (chain id 61127,\n"
    "61999 also accepted in signed transactions). Transactions queue in the state file and run\n"
    "one at a time through the stored validators (sim_createValidator & co.; --validators N,\n"
    "default 5, creates N at the state file's first start), one leading, PENDING -> PROPOSING ->\n"
    "COMMITTING -> REVEALING -> ACCEPTED | UNDETERMINED, then FINALIZED after the finality\n"
    "window (default 2000 ms). --port 0 picks a free port. The first stdout line is\n"
    "`listening on http://HOST:PORT/api`. SIGINT/SIGTERM stop it; a transaction in progress\n"
    "rolls back and runs again at the next start. On a loopback --host (the default) the\n"
    "administrative methods (snapshots, sim_clearDbTables, validators) and unsigned cancels are\n"
    "open, as in Studio's local mode; on another address they are refused. --debug-mode\n"
    "(default safe) is the runs' level; from safe up each run's stdout, stderr and GenVM log\n"
    "tails are kept with the transaction for gen_dbg_traceTransaction and the receipts\n"
    "(disabled: none).\n"
    "A browser dashboard (deploy, read, write, the transactions live) is at\n"
    "http://HOST:PORT/, its event stream at /events.\n";

// argv[0] is "serve". Returns the process's exit status.
int serve_main(int argc, char** argv, const std::string& default_genvm);

}  // namespace genvm::node::serve
