// The host-socket folders of nodes that died without removing them.
//
// node::Runner serves host 0 on TMPDIR/genvm-node-XXXXXX/host.sock (a 0700 mkdtemp folder) and
// removes it when the node exits; a kill -9 leaves it. With modules, the ModuleSet's own folder
// (genvm-modules-XXXXXX: the modules' sockets and written configs) is made inside it, so it
// shares its fate. A node sweeps such folders when it starts: one of ours (same uid, 0700, the
// mkdtemp name), holding nothing but a socket nobody listens on (connect is refused) or, past a
// grace, nothing at all — besides at most such a modules' folder (ours too, holding only
// `*.sock` and `*-config.json`) — is removed with what it holds. A live node's socket always
// listens (the runner binds and listens once and keeps it to its end), so a folder is never
// taken from under a running node; the modules of a dead node ended with it (their parent).
#pragma once

#include <chrono>
#include <string>

namespace genvm::node {

// Removes the stale folders under `tmpdir` (empty: $TMPDIR, else /tmp); returns how many.
// `empty_grace`: how old a folder without a socket must be (a node between mkdtemp and bind).
int sweep_stale_host_dirs(const std::string& tmpdir = {},
                          std::chrono::seconds empty_grace = std::chrono::seconds(10));

}  // namespace genvm::node
