"""Starting `genvm` the way the public manager does.

implementation/src/manager/run.rs `build_genvm_command` and `run_genvm_process`:

    genvm --log-fd=N run [extra_args...] [--sync] --host <request.host> --permissions <p>
          --genvm-id=<id> --debug-mode <level> --host fd://<M> [--module-llm=fd://A --module-web=fd://B]

with the encoded ExecutionData written to stdin (there is no --execution-data flag), stdout and
stderr at /dev/null when the debug mode's capture is disabled (impl-spec 04-executor.rst
"Debug modes": only `disabled` has capture disabled), the log pipe's write end as fd N and the
manager's socketpair end as fd M (both inherited, everything else close-on-exec). The log pipe
is read as run.rs `read_log_pipe` does: lines, trimmed, empty ones skipped, each a JSON object
whose `level` is a string naming a level.
"""

import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time

from . import calldata
from .host import Host0, Host1, World, make_socket_path

DEBUG_MODES = ("disabled", "safe", "safe-unbounded", "unsafe", "unsafe-tracing")  # 04-executor.rst
LOG_LEVELS = ("trace", "debug", "info", "warning", "warn", "error")  # genvm-common logger::Level names
DEFAULT_TIMEOUT = 60.0


def find_genvm(explicit=None):
    """The executor: `explicit`, else $GENVM_BINARY, else $GENVM_BUILD_DIR/tools/genvm/genvm."""
    for candidate in (explicit, os.environ.get("GENVM_BINARY"),
                      os.path.join(os.environ["GENVM_BUILD_DIR"], "tools", "genvm", "genvm")
                      if os.environ.get("GENVM_BUILD_DIR") else None):
        if candidate:
            return candidate
    return None


def find_probe(explicit=None):
    for candidate in (explicit, os.environ.get("GENVM_CONFORMANCE_PROBE"),
                      os.path.join(os.environ["GENVM_BUILD_DIR"], "tests", "conformance", "probe.wasm")
                      if os.environ.get("GENVM_BUILD_DIR") else None):
        if candidate:
            return candidate
    return None


def manager_argv(genvm, *, log_fd, host0_uri, host1_fd, permissions, genvm_id, debug_mode, sync=False,
                 extra_args=(), module_fds=None):
    """run.rs build_genvm_command + run_genvm_process, argument for argument."""
    argv = [genvm, f"--log-fd={log_fd}", "run", *extra_args]
    if sync:
        argv.append("--sync")
    argv += ["--host", host0_uri, "--permissions", permissions, f"--genvm-id={genvm_id}",
             "--debug-mode", debug_mode, "--host", f"fd://{host1_fd}"]
    if module_fds is not None:
        argv += [f"--module-llm=fd://{module_fds[0]}", f"--module-web=fd://{module_fds[1]}"]
    return argv


class Outcome:
    """What one run produced, as the manager and the hosts saw it."""

    def __init__(self):
        self.argv = []
        self.returncode = None
        self.timed_out = False
        self.stdout = b""
        self.stderr = b""
        self.log_records = []  # parsed JSON objects
        self.log_faults = []  # lines read_log_pipe would not take as structured records
        self.host0 = None
        self.host1 = None
        self.world = None
        self.failures = []  # host protocol faults (both hosts)
        self.module_peers = []  # gvm/module_peer.py peers, (llm, web), when the run had them

    @property
    def results(self):
        """consume_result payloads that reached host 1 (the manager)."""
        return list(self.host1.results) if self.host1 else []


def _read_log(fd, outcome):
    with os.fdopen(fd, "rb") as f:
        for raw in f:
            line = raw.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except (ValueError, UnicodeDecodeError) as e:
                outcome.log_faults.append(f"not JSON ({e}): {line[:200]!r}")
                continue
            if not isinstance(record, dict):
                outcome.log_faults.append(f"not a JSON object: {line[:200]!r}")
                continue
            level = record.get("level")
            if not isinstance(level, str) or level.lower() not in LOG_LEVELS:
                outcome.log_faults.append(f"no string `level` naming a level: {line[:200]!r}")
            outcome.log_records.append(record)


def run(genvm, execution_data, *, world=None, permissions="wscn", debug_mode="disabled", genvm_id=1, sync=False,
        extra_args=(), with_modules=False, hook_cross_contract_calls=False, host0_hello=b"", timeout=DEFAULT_TIMEOUT,
        argv_hook=None, stdin_bytes=None, host0_extra_methods=(), module_peers=None):
    """Runs `genvm` once as the public manager would, with a fresh host 0 over `world` and the
    manager's host 1. `execution_data` is a calldata value (encoded here) unless `stdin_bytes`
    gives the exact stdin. `argv_hook(argv) -> argv` lets command-line tests alter the argv.
    `module_peers` (llm, web): callables taking the manager's end of each module socketpair and
    returning the peer serving it (gvm/module_peer.py); implies with_modules."""
    with_modules = with_modules or module_peers is not None
    outcome = Outcome()
    outcome.world = world = world if world is not None else World()
    tmp = tempfile.mkdtemp(prefix="gvmconf-")
    path = make_socket_path(tmp)
    host1_served = {"consume_result", "run_nested"} | (set() if hook_cross_contract_calls
                                                         else {"resolve_callcontract_executor"})
    host0_served = set(Host0.NODE_METHODS) | set(host0_extra_methods) | \
        ({"resolve_callcontract_executor"} if hook_cross_contract_calls else set())
    host0 = Host0(world, path, served=host0_served, hello=host0_hello)
    host1 = Host1(served=host1_served)
    outcome.host0, outcome.host1 = host0, host1
    log_r, log_w = os.pipe()
    os.set_inheritable(log_w, True)
    module_pairs = []
    pass_fds = [log_w, host1.child_fd()]
    if with_modules:
        for _ in range(2):
            parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            child.set_inheritable(True)
            module_pairs.append((parent, child))
            pass_fds.append(child.fileno())
    argv = manager_argv(genvm, log_fd=log_w, host0_uri=host0.uri, host1_fd=host1.child_fd(),
                        permissions=permissions, genvm_id=genvm_id, debug_mode=debug_mode, sync=sync,
                        extra_args=extra_args,
                        module_fds=[c.fileno() for _, c in module_pairs] if with_modules else None)
    if argv_hook:
        argv = argv_hook(argv)
    outcome.argv = argv
    capture = debug_mode != "disabled"
    data = stdin_bytes if stdin_bytes is not None else calldata.encode(execution_data)
    log_thread = None
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                                stderr=subprocess.PIPE if capture else subprocess.DEVNULL,
                                pass_fds=pass_fds, close_fds=True)
        os.close(log_w)
        log_w = None
        host1.close_child()
        for _, child in module_pairs:
            child.close()
        if module_peers is not None:
            outcome.module_peers = [make(parent) for make, (parent, _) in zip(module_peers, module_pairs)]
        log_thread = threading.Thread(target=_read_log, args=(log_r, outcome), daemon=True)
        log_thread.start()
        log_r = None
        try:
            out, err = proc.communicate(data, timeout=timeout)
        except subprocess.TimeoutExpired:
            outcome.timed_out = True
            proc.kill()
            out, err = proc.communicate()
        except BrokenPipeError:
            out, err = proc.communicate()
        outcome.stdout, outcome.stderr = out or b"", err or b""
        outcome.returncode = proc.returncode
    finally:
        if log_w is not None:
            os.close(log_w)
        if log_r is not None:
            os.close(log_r)
        deadline = time.monotonic() + 10
        for peer in outcome.module_peers:
            peer.join(max(0.1, deadline - time.monotonic()))
        for parent, _ in module_pairs:
            parent.close()
        if log_thread:
            log_thread.join(max(0.1, deadline - time.monotonic()))
        host0.close()
        host1.join(max(0.1, deadline - time.monotonic()))
        host0.join(max(0.1, deadline - time.monotonic()))
        shutil.rmtree(tmp, ignore_errors=True)
    outcome.failures = host0.failures + host1.failures
    return outcome
