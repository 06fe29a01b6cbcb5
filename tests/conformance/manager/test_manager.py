"""Our genvm-manager against the public manager's spec: every socket method, event and error
code, every HTTP route (the admin ones included), the executor's command line, stdin, log fd
and host connection 1, line selection by version. Each expectation names its source; the
abbreviations are mgr.py's (MS, MSC, API, RUN, VER, MOD; SOCK = implementation/src/manager/
socket.rs, HND = handlers.rs, DOM = crates/modules-interfaces/src/domain.rs).

Environment: GENVM_BUILD_DIR (set by run.py) holds tools/genvm-manager/genvm-manager, and for
the real-executor cases tools/genvm/genvm, tools/data/manifest.yaml and examples/counter.wasm.
"""

import base64
import json
import os
import re
import signal
import socket
import struct
import tempfile
import time
import unittest

import mgr
from mgr import ERRORS, METHODS, calldata, xd

BUILD = os.environ.get("GENVM_BUILD_DIR", "")
MANAGER = os.path.join(BUILD, "tools", "genvm-manager", "genvm-manager")

# install/config/genvm-manager.yaml of the public manager, as shipped (with a shorter retention
# where a test needs one): our manager must take the public file as it stands.
PUBLIC_CONFIG = """\
threads: 4
blocking_threads: 48
log_disable: tracing*,polling*,tungstenite*,tokio_tungstenite*
log_level: info

manifest_path: ${exeDir}/../data/manifest.yaml
permits: # 1 permit is 1 GiB of RAM
  total: %(total)s
  per_gib: 1
  sync: 4
  nondet: 8
execution_retention: %(retention)s
max_message_bytes: %(max_message)s
"""

LINES = {"v0.1.0": "2024-01-01T00:00:00Z", "v0.2.0-a": "2024-01-01T00:00:00Z", "v0.3.0-late": "2030-01-01T00:00:00Z"}
RFC3339_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.(\d{3}|\d{6}|\d{9}))?Z$")  # chrono AutoSi, use_z


# Ours, added to the public file: the public manager trusts every caller, ours only those the
# operator names (docs/PROTOCOLS.md "Trust model"). This suite's client is trusted by a bearer
# token (mgr.Manager sends it), so it may pass the stand-in's extra_args and read every run.
SUITE_TOKEN = "conformance-suite-token-0001"
OPERATOR_TRUST = f"trusted:\n  tokens: [{SUITE_TOKEN}]\n"


def public_config(total="null", retention="5m", max_message=67108864):
    return PUBLIC_CONFIG % {"total": total, "retention": retention, "max_message": max_message} + OPERATOR_TRUST


def reported(kind, data="x", hashes=32):
    """DOM ReportedResult: exactly its 13 fields, kind the ResultCode variant name (the public
    derive encodes a unit variant as its name)."""
    zero = {"storage": 0, "message_receipt": 0, "nondet_output": 0, "message_fee": 0, "event": 0}
    return {"execution_hash": b"\x01" * hashes, "small_hash": b"\x02" * hashes, "kind": kind, "data": data,
            "backtrace": None, "wasm_store_hashes": {}, "storage_changes": [], "emissions": [],
            "nondet_disagreement": None, "nondet_results": [], "data_fees_remaining": [], "data_fees_consumed": zero,
            "llm_consumption": 0}


CODES = {"Return": 0, "UserError": 1, "VmError": 2, "InternalError": 3, "FatalVmError": 4}  # DOM ResultCode


def consume_payload(kind, **kw):
    """MS finished: "one outer ResultCode byte followed by a calldata-encoded ReportedResult"."""
    return bytes([CODES[kind]]) + calldata.encode(reported(kind, **kw))


def needs(*paths):
    missing = [p for p in paths if not os.path.exists(p)]
    return unittest.skipIf(missing, f"not built: {missing}")


@needs(MANAGER)
class StandInLines(unittest.TestCase):
    """One manager in the public install layout (MOD), its lines stand-in executors that record
    how they were started (mgr.STAND_IN)."""

    @classmethod
    def setUpClass(cls):
        cls.install = mgr.Install(MANAGER, LINES)
        cls.m = mgr.Manager(cls.install.manager, public_config(), token=SUITE_TOKEN)
        cls.s = cls.m.session()

    @classmethod
    def tearDownClass(cls):
        cls.s.close()
        cls.m.stop()
        cls.install.remove()

    def start(self, acts=(), session=None, **fields):
        """Submits a run whose stand-in does `acts`; (genvm_id, report path, reply frame)."""
        s = session or self.s
        report = self.install.report_path()
        extra = [f"--report={report}"] + [f"--act={a}" for a in acts] + list(fields.pop("extra_args", []))
        fields.setdefault("debug_mode", "safe")
        reply = s.request("run", mgr.run_request(extra_args=extra, **fields))
        self.assertEqual(reply[0], METHODS["run"], f"run answered {reply}")
        return reply[2]["genvm_id"], report, reply

    def finish(self, acts=(), **fields):
        gid, report, _ = self.start(acts, **fields)
        term = self.s.wait_terminal(gid)
        return gid, report, term

    def artifact(self, gid, field, offset=0, max_len=1 << 30, session=None):
        s = session or self.s
        return s.request("get_artifact", {"genvm_id": gid, "field": field, "offset": offset, "max_len": max_len})

    def expect_error(self, reply, code, request_id=None):
        method, rid, payload = reply
        self.assertEqual(method, METHODS["error"], f"expected an error, got {reply}")
        # MS Error messages: { "code": u8, "message": str }
        self.assertEqual(set(payload), {"code", "message"})
        self.assertIsInstance(payload["message"], str)
        self.assertEqual(payload["code"], ERRORS[code], payload)
        if request_id is not None:
            self.assertEqual(rid, request_id)
        return payload["message"]

    # ---- MS Connection hello ---------------------------------------------------------------
    def test_hello(self):
        method, rid, payload = self.s.hello
        self.assertEqual(method, METHODS["hello"])
        self.assertEqual(rid, 0, "MS: a notification has request_id 0")
        self.assertEqual(set(payload), {"hello"}, "MS: externally tagged")
        self.assertEqual(set(payload["hello"]), {"boot_id", "protocol_major"})
        self.assertEqual(payload["hello"]["protocol_major"], mgr.CURRENT_MAJOR, "MSC current_major")
        other = self.m.session()
        self.assertEqual(other.boot_id, self.s.boot_id, "MS: boot_id is generated once per manager process")
        other.close()

    # ---- MS run, event notifications; RUN build_genvm_command, execution_data_from_request --
    def test_run_reply_events_and_the_executor_command_line(self):
        msg = xd.message(mgr.address(1), mgr.address(0xAA), mgr.address(0xBB), mgr.address(0xCC), is_init=True,
                         datetime="2025-01-01T01:00:00.250+01:00")
        gid, report, reply = self.start(["stdout:" + b"out".hex(), "exit:3"], message=msg, host="unix:///host0.sock",
                                        is_sync=False, no_modules=True, permissions="wsc", code=b"\0asm",
                                        extra_args=["--flag-x"], host_data='{"node_address":"n"}',
                                        bucket_totals=[5, 6], gas_data={"k": "v"}, initial_time_units_allocation=7)
        self.assertEqual(reply[1], self.s.next_id - 1, "MS: the request id is echoed")
        self.assertEqual(set(reply[2]), {"genvm_id"}, "MS run Response: { genvm_id: u64 }")
        started = self.s.wait_event(gid, ("started",))["started"]
        self.assertEqual(started, {"genvm_id": gid, "host_genvm_id": None}, "MS started; SOCK: an absent token is null")
        fin = self.s.wait_terminal(gid)
        self.assertEqual(set(fin), {"finished"})
        body = fin["finished"]
        self.assertEqual(set(body), {"genvm_id", "host_genvm_id", "cause", "exit_code", "consumed_result", "metrics",
                                     "finished_at", "version_major", "version_minor", "artifact_sizes"}, "MS finished")
        self.assertEqual(body["cause"], "exited")
        self.assertEqual(body["exit_code"], 3)
        self.assertIsNone(body["consumed_result"], "nothing sent on host 1")
        self.assertRegex(body["finished_at"], RFC3339_Z, "MS: RFC3339 (SOCK: AutoSi, Z)")
        self.assertEqual(set(body["artifact_sizes"]), {"stdout", "stderr", "genvm_log"})
        self.assertEqual(body["artifact_sizes"]["stdout"], 3)
        self.assertEqual((body["version_major"], body["version_minor"]), (0, 2), "VER: the newest open major-0 line")
        self.assertEqual(self.s.events_of(gid), [], "MS: exactly one terminal event, nothing after it")

        rec = mgr.read_report(report)
        self.assertEqual(rec["key"], "v0.2.0-a")
        argv = rec["argv"]
        # RUN build_genvm_command + run_genvm_process: --log-fd=N run <extra> [--sync] --host H
        # --permissions P --genvm-id=ID --debug-mode L --host fd://M (modules only when needed).
        self.assertRegex(argv[0], r"^--log-fd=\d+$")
        self.assertRegex(argv[-1], r"^fd://\d+$")
        extra = [f"--report={report}", "--act=" + "stdout:" + b"out".hex(), "--act=exit:3", "--flag-x"]
        self.assertEqual(argv[1:-1], ["run", *extra, "--host", "unix:///host0.sock", "--permissions", "wsc",
                                      f"--genvm-id={gid}", "--debug-mode", "safe", "--host"])
        # RUN execution_data_from_request, encoded by the derive (gvm/execution_data.py).
        want = xd.execution_data(calldata_bytes=calldata.encode({}), message=dict(msg, datetime="2025-01-01T00:00:00.250Z"),
                                 host_data='{"node_address":"n"}', code=b"\0asm", bucket_totals=[5, 6],
                                 gas_data={"k": "v"}, initial_time_units_allocation=7)
        got = calldata.decode(bytes.fromhex(rec["stdin"]))
        self.assertEqual(got, want, "RUN: the ExecutionData on stdin")
        self.assertEqual(bytes.fromhex(rec["stdin"]), calldata.encode(want), "byte for byte")

    def test_sync_and_the_default_datetime(self):
        gid, report, fin = self.finish(["exit:0"], hook_cross_contract_calls=True,
                                       unsafe_overrides={"initial_recursion": 3})
        rec = mgr.read_report(report)
        self.assertIn("--sync", rec["argv"], "RUN: --sync for is_sync")
        self.assertEqual(rec["argv"].index("--sync"), rec["argv"].index("--host") - 1, "RUN: right after extra_args")
        got = calldata.decode(bytes.fromhex(rec["stdin"]))
        self.assertEqual(got["message"]["datetime"], xd.DEFAULT_DATETIME, "abi_stub.rs default_datetime")
        self.assertEqual(got["method_hosts"], xd.manager_method_hosts(True), "RUN: hooked resolve stays on host 0")
        self.assertIsNone(got["remaining_recursion"], "RUN: initial_recursion is honoured from unsafe only")

    # ---- VER, RUN resolve_selector ---------------------------------------------------------
    def test_the_selector_picks_the_line(self):
        def line(selector, **kw):
            gid, report, fin = self.finish(["exit:0"], selector=selector, **kw)
            if "failed_to_start" in fin:
                return "failed: " + fin["failed_to_start"]["error"]
            return mgr.read_report(report)["key"], fin["finished"]["version_minor"]

        self.assertEqual(line({"kind": "major", "major": 0}), ("v0.2.0-a", 2))
        self.assertEqual(line({"kind": "major", "major": 0}, timestamp="2031-01-01T00:00:00Z"), ("v0.3.0-late", 3),
                         "VER: available_after against the request's timestamp")
        self.assertEqual(line({"kind": "major", "major": 9}), ("v0.2.0-a", 2), "RUN: an unserved major falls back")
        self.assertEqual(line({"kind": "version", "version": "v0.1.0"}), ("v0.1.0", 1), "an exact directory")
        self.assertEqual(line({"kind": "version", "version": "re:^v0\\.1"}), ("v0.1.0", 1), "API: re: pattern")
        self.assertEqual(line({"kind": "version", "version": "re:^v9"}), "failed: no line matches version selector `^v9`")
        self.assertEqual(line({"kind": "major", "major": 0}, timestamp="2023-01-01T00:00:00Z"),
                         "failed: no compatible version found for major 0 and no line is available at all")
        self.assertEqual(line({"kind": "major", "major": 0}, unsafe_overrides={"reroute_to": "v0.1.0"}), ("v0.1.0", 1),
                         "MS unsafe_overrides.reroute_to, honoured from safe")

    # ---- MS finished consumed_result; RUN guard_top_level_consumed_result --------------------
    def test_consumed_result_is_checked_and_acknowledged(self):
        sent = consume_payload("UserError", data="no")
        gid, report, fin = self.finish(["result:" + sent.hex(), "exit:0"])
        self.assertEqual(fin["finished"]["consumed_result"], sent, "kept byte for byte")
        self.assertEqual(mgr.read_report(report)["acks"], ["00"], "host-loop: the single 0x00 acknowledgement")

        gid, report, fin = self.finish(["result:" + consume_payload("FatalVmError").hex(), "exit:0"])
        got = fin["finished"]["consumed_result"]
        self.assertEqual(got[0], CODES["VmError"], "MS: FatalVmError is rewritten to VmError in the byte...")
        self.assertEqual(calldata.decode(got[1:])["kind"], "VmError", "...and in the map")
        self.assertEqual(got, consume_payload("VmError"))

        for bad in (bytes([0]) + calldata.encode(dict(reported("Return"), kind=0)),  # an integer kind
                    bytes([1]) + calldata.encode(reported("Return")),  # byte and kind disagree
                    calldata.encode(reported("Return")),  # no outer byte
                    consume_payload("Return", hashes=31),  # MS: 32-byte hashes
                    bytes([0]) + calldata.encode({k: v for k, v in reported("Return").items() if k != "emissions"})):
            gid, report, fin = self.finish(["result:" + bad.hex(), "exit:0"])
            self.assertIsNone(fin["finished"]["consumed_result"], f"MS: an invalid report is not published: {bad.hex()}")
            self.assertEqual(mgr.read_report(report)["acks"], [""], "MS: refused without an acknowledgement")

    def test_resolve_callcontract_executor_is_answered_null(self):
        gid, report, fin = self.finish(["resolve", "exit:0"])
        # MS run hook_cross_contract_calls (default false): the manager answers itself with null:
        # status ok, then a slice holding calldata null.
        self.assertEqual(mgr.read_report(report)["replies"], ["00" + "01000000" + "00"])

    # ---- RUN read_log_pipe; MS get_artifact ("genvm_log is served as JSON Lines") ---------------
    def test_the_log_fd_becomes_genvm_log(self):
        lines = b'{"level":"warning","msg":"a","n":1}\n\n   \nnot json\n{"msg":"b"}\n[1]\n{"level":"DEBUG"}'
        gid, report, fin = self.finish(["log:" + lines.hex(), "exit:0"])
        got = self.artifact(gid, "genvm_log")[2]
        want = (b'{"msg":"a","n":1,"level":"warn"}\n'
                b'{"level":"info","message":"genvm log","line":"not json"}\n'
                b'{"msg":"b","level":"info"}\n'
                b'{"level":"info","message":"genvm log","line":"[1]"}\n'
                b'{"level":"debug"}\n')
        self.assertEqual(got["data"], want)
        self.assertEqual(got["total_len"], len(want))
        self.assertEqual(fin["finished"]["artifact_sizes"]["genvm_log"], len(want), "MS: the terminal event's sizes")

    def test_artifacts_page_within_the_chunk_cap(self):
        blob = bytes(range(256)) * 1200  # 300 KiB
        gid, report, fin = self.finish([f"fill:{len(blob)}", "stderr:" + b"e".hex(), "exit:0"])
        first = self.artifact(gid, "stdout")
        self.assertEqual(first[0], METHODS["get_artifact"])
        self.assertEqual(set(first[2]), {"total_len", "data"}, "MS get_artifact Response")
        self.assertEqual(first[2]["total_len"], len(blob))
        self.assertEqual(len(first[2]["data"]), mgr.CHUNK_CAP, "MS: at most min(max_len, chunk_cap)")
        data, offset = b"", 0
        while offset < len(blob):
            chunk = self.artifact(gid, "stdout", offset, 100_000)[2]["data"]
            data += chunk
            offset += len(chunk)
        self.assertEqual(data, blob, "MS: clients page until offset + len(data) == total_len")
        self.assertEqual(self.artifact(gid, "stdout", len(blob) + 5, 10)[2], {"total_len": len(blob), "data": b""})
        self.assertEqual(self.artifact(gid, "stderr")[2]["data"], b"e")
        self.expect_error(self.artifact(gid, "environ"), "malformed_frame")  # SOCK: another field

    def test_capture_disabled_keeps_nothing(self):
        gid, report, fin = self.finish(["stdout:6869", "log:" + b'{"m":1}\n'.hex(), "exit:0"], debug_mode="disabled")
        self.assertEqual(fin["finished"]["artifact_sizes"], {"stdout": 0, "stderr": 0, "genvm_log": 0},
                         "seed 000 Debug modes: disabled captures nothing")
        self.assertIn("--debug-mode", mgr.read_report(report)["argv"])

    # ---- MS run host_genvm_id (idempotency key) ---------------------------------------------
    def test_host_genvm_id_is_echoed_and_idempotent(self):
        token = f"tx-{time.time()}"
        gid, report, fin = self.finish(["exit:4"], host_genvm_id=token)
        self.assertEqual(fin["finished"]["host_genvm_id"], token)
        again = self.s.request("run", mgr.run_request(host_genvm_id=token, extra_args=["--act=exit:0"]))
        self.assertEqual(again[2], {"genvm_id": gid}, "MS: the id already allocated")
        event = self.s.wait_terminal(gid)  # SOCK handle_run: the current snapshot follows the reply
        self.assertEqual(event["finished"]["exit_code"], 4, "no second execution")

    # ---- MS attach, cancel, ack --------------------------------------------------------------
    def test_attach_cancel_ack(self):
        gid, report, _ = self.start(["sleep"])
        self.s.wait_event(gid, ("started",))
        snap = self.s.request("attach", {"boot_id": self.s.boot_id, "genvm_id": gid})
        self.assertEqual(snap[0], METHODS["attach"])
        self.assertEqual(snap[2], {"snapshot": {"started": {"genvm_id": gid, "host_genvm_id": None}}},
                         "MS attach: the most recent lifecycle event")
        self.expect_error(self.s.request("attach", {"boot_id": self.s.boot_id ^ 1, "genvm_id": gid}), "boot_id_mismatch")
        self.expect_error(self.s.request("attach", {"boot_id": self.s.boot_id, "genvm_id": 10 ** 15}), "unknown_id")
        self.expect_error(self.s.request("ack", {"genvm_id": gid}), "not_finished")  # MS ack before a terminal event
        self.expect_error(self.artifact(gid, "stdout"), "unknown_id")  # RUN get_artifact: no result yet
        c = self.s.request("cancel", {"genvm_id": gid})
        self.assertEqual((c[0], c[2]), (METHODS["cancel"], {}), "MS cancel: an empty map")
        fin = self.s.wait_terminal(gid)["finished"]
        self.assertEqual(fin["cause"], "cancelled")
        self.assertIsNone(fin["exit_code"], "MS: null when killed")
        self.assertEqual(self.s.request("cancel", {"genvm_id": gid})[2], {}, "cancelling a finished run is harmless")
        a = self.s.request("ack", {"genvm_id": gid})
        self.assertEqual((a[0], a[2]), (METHODS["ack"], {}), "MS ack: an empty map")
        # MS ack: after ack, attach and get_artifact answer unknown_id.
        self.expect_error(self.s.request("attach", {"boot_id": self.s.boot_id, "genvm_id": gid}), "unknown_id")
        self.expect_error(self.artifact(gid, "stdout"), "unknown_id")
        self.expect_error(self.s.request("cancel", {"genvm_id": gid}), "unknown_id")
        self.expect_error(self.s.request("ack", {"genvm_id": gid}), "unknown_id")

    def test_the_deadline_is_the_managers(self):
        gid, report, fin = self.finish(["sleep"], deadline="300ms")
        self.assertEqual(fin["finished"]["cause"], "deadline", "MS deadline: the manager enforces it")
        self.assertIsNone(fin["finished"]["exit_code"])
        for bad in ("30", "1d", "1.s", "", "-1s"):  # MS Duration strings: the unit is mandatory
            rid = self.s.next_id
            self.expect_error(self.s.request("run", mgr.run_request(deadline=bad)), "malformed_frame", rid)

    def test_disconnect_does_not_kill_a_run(self):
        s2 = self.m.session()
        gid, report, _ = self.start(["sleep:0.5", "exit:6"], session=s2)
        s2.wait_event(gid, ("started",))
        s2.close()
        time.sleep(0.8)
        s3 = self.m.session()
        snap = s3.request("attach", {"boot_id": s3.boot_id, "genvm_id": gid})[2]["snapshot"]
        fin = snap if "finished" in snap else s3.wait_terminal(gid)
        self.assertEqual(fin["finished"]["exit_code"], 6, "MS: disconnect does not kill a run")
        s3.close()

    # ---- MS Error messages, every code ------------------------------------------------------
    def test_every_error_code(self):
        s = self.s
        s.c.send_text("hello")
        self.expect_error(s.reply(0), "malformed_frame", 0)  # MS: text messages
        s.c.send_binary(b"\x00\x03\x00")
        self.expect_error(s.reply(0), "malformed_frame", 0)  # shorter than the header
        s.send(METHODS["cancel"], 0, {"cancel": {"genvm_id": 1}})
        self.expect_error(s.reply(0), "bad_request_id", 0)
        s.send(99, 41, {})
        self.expect_error(s.reply(41), "unknown_method", 41)
        s.send(99, 0, {})
        self.expect_error(s.reply(0), "unknown_method", 0)  # SOCK: the method before the request id
        for manager_only in ("error", "hello", "event"):
            s.send(METHODS[manager_only], 42, {manager_only: {}})
            self.expect_error(s.reply(42), "unknown_method", 42)
        s.c.send_binary(struct.pack(">HQ", METHODS["ack"], 43) + b"\xff\xff")
        self.expect_error(s.reply(43), "malformed_frame", 43)  # undecodable payload
        s.send(METHODS["ack"], 44, {"cancel": {"genvm_id": 1}})
        self.expect_error(s.reply(44), "malformed_frame", 44)  # MS: the tag names the method
        s.send(METHODS["ack"], 45, {"ack": {"genvm_id": "1"}})
        self.expect_error(s.reply(45), "malformed_frame", 45)
        s.send(METHODS["run"], 46, {"run": {"is_sync": True}})
        self.expect_error(s.reply(46), "malformed_frame", 46)  # a request the decoder refuses
        s.send(METHODS["run"], 47, {"run": mgr.run_request(host_hello_data=[b"", b"\x01"])})
        self.expect_error(s.reply(47), "malformed_frame", 47)  # MS: host index 1 is the manager's
        s.send(METHODS["run"], 48, {"run": mgr.run_request(is_sync=False)})
        message = self.expect_error(s.reply(48), "internal", 48)
        self.assertEqual(message, "modules are required but not running", "SOCK handle_run")
        # unknown_id, boot_id_mismatch, not_finished: test_attach_cancel_ack.
        self.assertEqual(s.request("cancel", {"genvm_id": 10 ** 12})[2]["code"], ERRORS["unknown_id"], "still up")

    # ---- API routes --------------------------------------------------------------------------
    def test_http_run_status_and_shutdown_adapters(self):
        sent = consume_payload("Return")
        report = self.install.report_path()
        body = calldata.encode(mgr.run_request(debug_mode="safe", extra_args=[
            f"--report={report}", "--act=stdout:" + b"so".hex(), "--act=result:" + sent.hex(), "--act=exit:0"]))
        status, r = self.m.http("POST", "/genvm/run", body, {"Content-Type": "application/octet-stream"})
        self.assertEqual(status, 200, r)
        self.assertEqual(set(r), {"result", "id"})
        self.assertEqual(r["result"], "started", "API runGenvm 200")
        gid = r["id"]
        status, st = self.m.http("GET", f"/genvm/{gid}?wait=30s")
        self.assertEqual(status, 200)
        self.assertEqual(set(st), {"genvm_id", "status"})
        self.assertEqual(st["genvm_id"], gid)
        # HND handle_genvm_status + RUN SingleGenVMContextDone's serialization.
        self.assertEqual(set(st["status"]), {"finished_at", "stdout", "stderr", "genvm_log", "metrics",
                                             "consumed_result", "version_major", "version_minor"})
        self.assertIsInstance(st["status"]["finished_at"], int, "RUN: timestamp_millis")
        self.assertAlmostEqual(st["status"]["finished_at"] / 1000, time.time(), delta=60)
        self.assertEqual(st["status"]["stdout"], "so")
        self.assertEqual(base64.b64decode(st["status"]["consumed_result"]), sent, "API: format byte")
        self.assertEqual((st["status"]["version_major"], st["status"]["version_minor"]), (0, 2))
        status, again = self.m.http("GET", f"/genvm/{gid}")
        self.assertEqual(again, {"genvm_id": gid, "status": None}, "API: a returned status acknowledges the run")
        self.assertEqual(self.m.http("GET", "/genvm/1?wait=5")[0], 400, "API: a duration needs its unit")
        self.assertEqual(self.m.http("GET", f"/genvm/{10 ** 12}"), (200, {"genvm_id": 10 ** 12, "status": None}))

        body = calldata.encode(mgr.run_request(extra_args=["--act=sleep"]))
        sid = self.m.http("POST", "/genvm/run", body)[1]["id"]
        self.assertEqual(self.m.http("GET", f"/genvm/{sid}?wait=50ms"), (200, {"genvm_id": sid, "status": None}),
                         "API wait: a timeout answers a null status")
        self.assertEqual(self.m.http("DELETE", f"/genvm/{sid}"), (200, {"result": "shutdown_completed", "genvm_id": sid}))
        status, gone = self.m.http("GET", f"/genvm/{sid}")
        self.assertIsNotNone(gone["status"], "a cancelled run keeps its result until read")
        status, missing = self.m.http("DELETE", f"/genvm/{sid}")
        self.assertEqual(set(missing), {"error", "genvm_id"}, "API shutdownGenvm: the error variant")

    def test_http_run_failures_are_500_with_an_error(self):
        for body, mention in ((b"\xff\xff", None),
                              (calldata.encode(mgr.run_request(deadline="30")), "ms, s, m, or h"),
                              (calldata.encode(mgr.run_request(is_sync=False)),
                               "modules are required but not running (is_sync=false with 'n' permission)"),
                              (calldata.encode(mgr.run_request(selector={"kind": "version", "version": "re:^v9"})),
                               "no line matches")):
            status, r = self.m.http("POST", "/genvm/run", body)
            self.assertEqual(status, 500, r)  # API runGenvm: 500 ErrorResponse
            self.assertEqual(set(r), {"error"})
            if mention:
                self.assertIn(mention, r["error"])

    def test_http_artifact_route(self):
        gid, report, fin = self.finish(["stdout:" + b"hello".hex(), "exit:0"])
        status, a = self.m.http("GET", f"/genvm/{gid}/artifact?field=stdout&offset=1&max_len=3")
        self.assertEqual(status, 200)
        self.assertEqual(a, {"genvm_id": gid, "field": "stdout", "total_len": 5,
                             "data_base64": base64.b64encode(b"ell").decode()}, "API getGenvmArtifact")
        self.assertEqual(self.m.http("GET", f"/genvm/{gid}/artifact?field=stdout")[0], 400, "max_len is required")
        self.assertEqual(self.m.http("GET", f"/genvm/{gid}/artifact?field=stdout&max_len=x")[0], 400)

    def test_http_status_permits_log_level_describe_manifest(self):
        status, st = self.m.http("GET", "/status")
        self.assertEqual(status, 200)
        for key in ("llm_module", "web_module", "permits", "executions"):  # API getStatus
            self.assertIn(key, st)
        self.assertEqual(set(st["permits"]), {"current", "max", "per_sync_run", "per_nondet_run"})
        self.assertEqual((st["permits"]["per_sync_run"], st["permits"]["per_nondet_run"]), (4, 8))
        for e in st["executions"].values():  # HND status_executions
            self.assertEqual(set(e), {"result", "version", "started_at", "strict_deadline"})
        status, p = self.m.http("GET", "/permits")
        self.assertEqual(set(p), {"permits"}, "API getPermits")
        was = p["permits"]
        self.assertEqual(self.m.http("POST", "/permits", json.dumps({"permits": was + 3})),
                         (200, {"result": "permits_set", "permits": was + 3}), "API setPermits")
        self.assertEqual(self.m.http("POST", "/permits", json.dumps({"permits": 1})),
                         (200, {"result": "permits_set", "permits": was + 3}),
                         "API: below the most expensive run: rejected, the unchanged maximum")
        self.assertEqual(self.m.http("POST", "/permits", json.dumps({"permits": was})[1:])[0], 400)
        self.assertEqual(self.m.http("POST", "/permits", json.dumps({"permits": "many"})), (500, {"error": "invalid permits"}))
        self.m.http("POST", "/permits", json.dumps({"permits": was}))
        self.assertEqual(self.m.http("POST", "/log/level", json.dumps({"level": "debug"})),
                         (200, {"result": "log_level_set", "level": "Debug"}), "API setLogLevel (HND: serde's name)")
        self.assertEqual(self.m.http("POST", "/log/level", json.dumps({"level": "verbose"})),
                         (500, {"error": "invalid log level"}))
        self.m.http("POST", "/log/level", json.dumps({"level": "info"}))
        self.assertEqual(self.m.http("GET", "/vm-error/describe?error=exit_code%201"),
                         (200, {"description": "Non-zero exit code from the contract. Check stderr for "
                                               "contract-provided details"}), "API describeVmError")
        self.assertEqual(self.m.http("GET", "/vm-error/describe?error=nothing"), (200, {"description": None}))
        self.assertEqual(self.m.http("GET", "/vm-error/describe")[0], 400)
        self.assertEqual(self.m.http("POST", "/manifest/reload"), (200, {"result": "manifest_reloaded"}), "API reloadManifest")

    def test_http_detect_version(self):
        # VER detect_major_spec: the newest open major's line reads the code on stdin (the
        # stand-in prints its first line back) and its answer is never above that major.
        def detect(code, ts):
            headers = {"Deployment-Timestamp": ts} if ts else {}
            return self.m.http("POST", "/contract/detect-version", code, headers)
        self.assertEqual(detect(b"v0.9.9\nrest", "2025-01-01T00:00:00Z"), (200, {"specified_major": 0}), "API")
        self.assertEqual(detect(b"garbage", "2025-01-01T00:00:00Z"), (200, {"specified_major": 0}))
        self.assertEqual(detect(b"v0.1.0", "2020-01-01T00:00:00Z"), (500, {"error": "no_executor_version_available"}))
        self.assertEqual(detect(b"v0.1.0", None), (400, {"error": "missing Deployment-Timestamp header"}))
        self.assertEqual(detect(b"v0.1.0", "not a time")[0], 500)

    def test_http_routes_and_errors(self):
        status, r = self.m.http("GET", "/ws")
        self.assertEqual(status, 426, "API managerSocket: upgrade required")
        for method, path in (("GET", "/nope"), ("PUT", "/status"), ("GET", "/genvm/abc"), ("POST", "/genvm/1")):
            self.assertEqual(self.m.http(method, path), (404, {"error": "Not Found"}), f"MOD fallback: {method} {path}")


@needs(MANAGER)
class Limits(unittest.TestCase):
    """Permits, retention, the message cap, shutdown: a manager per case (MS, MOD Config)."""

    def setUp(self):
        self.install = mgr.Install(MANAGER, {"v0.1.0": "2024-01-01T00:00:00Z"})
        self.m = None

    def tearDown(self):
        if self.m:
            self.m.stop(signal.SIGKILL)
        self.install.remove()

    def manager(self, **config):
        self.m = mgr.Manager(self.install.manager, public_config(**config), token=SUITE_TOKEN)
        return self.m.session()

    def test_a_run_waiting_for_permits_is_queued(self):
        s = self.manager(total=8)
        hold = s.request("run", mgr.run_request(extra_args=["--act=sleep"]))[2]["genvm_id"]
        s.wait_event(hold, ("started",))
        two = s.request("run", mgr.run_request(extra_args=["--act=sleep"]))[2]["genvm_id"]
        s.wait_event(two, ("started",))  # 4 + 4 of 8
        waiter = s.request("run", mgr.run_request(extra_args=["--act=exit:0"]))[2]["genvm_id"]
        snap = s.request("attach", {"boot_id": s.boot_id, "genvm_id": waiter})[2]
        self.assertEqual(snap, {"snapshot": {"queued": {"genvm_id": waiter, "host_genvm_id": None}}}, "MS queued")
        self.assertEqual(s.request("cancel", {"genvm_id": waiter})[2], {})
        fin = s.wait_terminal(waiter)["finished"]
        self.assertEqual(fin["cause"], "cancelled", "MS cancel: a queued run is aborted before spawn...")
        self.assertEqual(s.events_of(waiter), [], "...with exactly one terminal event, nothing started")
        self.assertIsNone(fin["exit_code"])

    def test_results_are_forgotten_after_the_retention(self):
        s = self.manager(retention="400ms")
        gid = s.request("run", mgr.run_request(extra_args=["--act=exit:0"]))[2]["genvm_id"]
        s.wait_terminal(gid)
        self.assertIn("snapshot", s.request("attach", {"boot_id": s.boot_id, "genvm_id": gid})[2])
        time.sleep(1.2)
        reply = s.request("attach", {"boot_id": s.boot_id, "genvm_id": gid})
        self.assertEqual(reply[2]["code"], ERRORS["unknown_id"], "MS: the retention TTL expired")

    def test_an_oversized_message_drops_the_connection_without_a_close_frame(self):
        s = self.manager(max_message=65536)
        s.c.send_binary(mgr.frame(METHODS["run"], 1, b"\0" * 70000))
        kind, _ = s.c.recv()
        self.assertEqual(kind, "dropped", "MS Framing: an abnormal closure (1006), no close frame, no error")
        other = self.m.session()
        self.assertEqual(other.request("ack", {"genvm_id": 1})[2]["code"], ERRORS["unknown_id"], "others unaffected")

    def test_sigterm_ends_every_run_with_cause_shutdown(self):
        s = self.manager()
        gid = s.request("run", mgr.run_request(extra_args=["--act=sleep"]))[2]["genvm_id"]
        s.wait_event(gid, ("started",))
        self.m.proc.send_signal(signal.SIGTERM)
        self.assertEqual(s.wait_terminal(gid)["finished"]["cause"], "shutdown", "MS finished cause")
        self.assertEqual(self.m.proc.wait(timeout=30), 0)

    def test_the_unix_socket_listener(self):
        path = os.path.join(self.install.root, "m.sock")
        self.m = mgr.Manager(self.install.manager, public_config(), socket_path=path, token=SUITE_TOKEN)
        s = self.m.session()
        self.assertEqual(s.hello[0], METHODS["hello"], "MS: GET /ws on the unix socket too")
        self.assertEqual(self.m.http("GET", "/permits")[0], 200)


GENVM = os.path.join(BUILD, "tools", "genvm", "genvm")
COUNTER = os.path.join(BUILD, "examples", "counter.wasm")
BUILD_MANIFEST = os.path.join(BUILD, "tools", "data", "manifest.yaml")


@needs(MANAGER, GENVM, COUNTER, BUILD_MANIFEST)
class RealExecutor(unittest.TestCase):
    """The build tree as installed (tools/genvm-manager/CMakeLists.txt): our genvm is the line of
    tools/data/manifest.yaml, found by the manager from its own directory as run.rs finds lines;
    host 0 is gvm/host.py's spec host."""

    def test_a_deployment_runs_through_the_installed_line(self):
        from gvm import fees, host, result

        tmp = tempfile.mkdtemp(prefix="genvm-mgr-real-")
        world = host.World()
        h0 = host.Host0(world, host.make_socket_path(tmp))
        m = mgr.Manager(MANAGER, public_config(), token=SUITE_TOKEN)
        try:
            s = m.session()
            with open(COUNTER, "rb") as f:
                code = f.read()
            req = mgr.run_request(code=code, host=h0.uri, debug_mode="safe", is_sync=False, no_modules=True,
                                  message=xd.message(mgr.address(1), mgr.address(0xAA), mgr.address(0xAA),
                                                     mgr.address(0xAA), is_init=True),
                                  bucket_totals=fees.BUCKETS, gas_data=fees.GAS_DATA)
            gid = s.request("run", req)[2]["genvm_id"]
            fin = s.wait_terminal(gid)
            self.assertIn("finished", fin, fin)
            body = fin["finished"]
            stderr = s.request("get_artifact", {"genvm_id": gid, "field": "stderr", "offset": 0, "max_len": 4096})[2]
            self.assertEqual(body["exit_code"], 0, stderr["data"])
            self.assertEqual(body["version_major"], 0, "the build's line, resolved by major 0")
            r = result.Reported(body["consumed_result"]).require_valid()  # DOM, strictly
            self.assertEqual(r.kind, "Return")
            self.assertEqual(h0.failures, [], "the spec host saw a clean host loop")
            self.assertEqual(h0.results, [], "MS Scope note: the result goes to host 1, the manager's")
            log = s.request("get_artifact", {"genvm_id": gid, "field": "genvm_log", "offset": 0, "max_len": 1 << 30})[2]
            for line in log["data"].decode().splitlines():
                item = json.loads(line)  # MS: JSON Lines
                self.assertIsInstance(item.get("level"), str, f"RUN read_log_pipe: every item has a level: {line}")
            s.close()
        finally:
            m.stop()
            h0.close()


CALLER = os.path.join(BUILD, "examples", "caller.wasm")


@needs(MANAGER, GENVM, COUNTER, CALLER, BUILD_MANIFEST)
class NestedRuns(unittest.TestCase):
    """run_nested on host 1 (host-loop.rst `run_nested`; ADR-015; RUN start_nested,
    nested_reply_from_consumed_result): examples/caller.wasm at 0x0A calls `get` on a callee, and
    the call is delegated to a second genvm the manager starts. Host 0 is gvm/host.py's spec
    host, which both executors dial."""

    CALLER_AT = mgr.address(0x0A)
    CALLEE_AT = mgr.address(0x0C)

    def setUp(self):
        from gvm import host
        self.host = host
        self.tmp = tempfile.mkdtemp(prefix="genvm-mgr-nested-")
        self.world = host.World()
        self.world.remaining_fuel = (host.OK, 10 ** 12)
        with open(CALLER, "rb") as f:
            self.world.install_code(bytes(self.CALLER_AT.raw), f.read())
        with open(COUNTER, "rb") as f:
            self.world.install_code(bytes(self.CALLEE_AT.raw), f.read())
        # examples/counter.c keeps its u64 (LE) at index 0 of the slot derived from the root at
        # offset 1 (sdk/c gl_contract_slot); 41 is what `get` answers.
        self.world.put(bytes(self.CALLEE_AT.raw), host.slot_indirection(host.ROOT_SLOT, 1), 0, struct.pack("<Q", 41))
        served = set(host.Host0.NODE_METHODS) | {"resolve_callcontract_executor"}
        self.h0 = host.Host0(self.world, host.make_socket_path(self.tmp), served=served)
        self.m = mgr.Manager(MANAGER, public_config(), token=SUITE_TOKEN)

    def tearDown(self):
        self.m.stop()
        self.h0.close()

    def call_get(self, **fields):
        from gvm import fees, result
        s = self.m.session()
        req = mgr.run_request(host=self.h0.uri, debug_mode="safe", is_sync=False, no_modules=True,
                              message=xd.message(self.CALLER_AT, mgr.address(0xAA), mgr.address(0xAA),
                                                 mgr.address(0xAA)),
                              calldata=calldata.encode({"": "call_get", "args": [self.CALLEE_AT]}),
                              bucket_totals=fees.BUCKETS, gas_data=fees.GAS_DATA, **fields)
        gid = s.request("run", req)[2]["genvm_id"]
        fin = s.wait_terminal(gid)
        s.close()
        self.assertIn("finished", fin, fin)
        self.assertEqual(fin["finished"]["exit_code"], 0, self.m.log_text())
        self.assertEqual(self.h0.failures, [], "the spec host saw clean host loops")
        return result.Reported(fin["finished"]["consumed_result"]).require_valid()

    def nested_log(self):
        return [json.loads(line) for line in self.m.log_text().splitlines()
                if line.startswith("{") and '"nested_run_finished"' in line]

    def test_a_call_the_host_routes_runs_in_a_nested_executor(self):
        # host-loop.rst: with hook_cross_contract_calls, host 0 answers the resolution; a version
        # names a line outright (the build's one line, tools/genvm-manager/CMakeLists.txt).
        line = os.listdir(os.path.join(BUILD, "tools", "executor"))[0]
        self.world.routes[bytes(self.CALLEE_AT.raw)] = calldata.encode({"kind": "version", "version": line})
        r = self.call_get(hook_cross_contract_calls=True)
        self.assertEqual(r.kind, "Return", r.data)
        self.assertEqual(r.data, 41, "the callee's `get`, through the caller")
        self.assertEqual([c["address"] for c in self.h0.calls_of("resolve_callcontract_executor")],
                         [bytes(self.CALLEE_AT.raw)], "asked once, of host 0")
        self.assertEqual(self.h0.connections, 2, "the nested executor re-dialed host 0")
        nested = self.nested_log()
        self.assertEqual([(n["outcome"], n["version"]) for n in nested], [("Return", line)], self.m.log_text())

    def test_a_major_the_line_does_not_serve_is_delegated_to_the_manager(self):
        # ADR-015 "What a null resolution means": the manager answers null on host 1, the callee's
        # root records major 1, so the caller mints {"kind": "major", "major": 1}; no line
        # provides it, the newest runs and raises invalid_contract major_mismatch itself, and
        # the caller contract sees a VM error from its callee (examples/caller.c: "callee failed").
        self.world.put(bytes(self.CALLEE_AT.raw), self.host.ROOT_SLOT, 0, b"\x01")
        r = self.call_get()
        self.assertEqual((r.kind, r.data), ("UserError", "callee failed"))
        self.assertEqual(self.h0.calls_of("resolve_callcontract_executor"), [], "not hooked: host 1 answered")
        self.assertEqual([n["outcome"] for n in self.nested_log()], ["VmError"], self.m.log_text())
        self.assertIn('"version_fallback"', self.m.log_text(), "RUN resolve_selector: major 1 falls back")

    def test_the_nested_executor_dies_with_its_caller(self):
        # ADR-015: "A nested run has no independent lifetime"; the deadline propagates from the
        # outermost run. Host 0 never answers the nested executor (its second connection), so
        # the chain waits until the caller's deadline kills both.
        line = os.listdir(os.path.join(BUILD, "tools", "executor"))[0]
        self.world.routes[bytes(self.CALLEE_AT.raw)] = calldata.encode({"kind": "version", "version": line})
        self.world.silent_connections = {2}
        from gvm import fees
        s = self.m.session()
        req = mgr.run_request(host=self.h0.uri, debug_mode="safe", is_sync=False, no_modules=True, deadline="2s",
                              hook_cross_contract_calls=True,
                              message=xd.message(self.CALLER_AT, mgr.address(0xAA), mgr.address(0xAA),
                                                 mgr.address(0xAA)),
                              calldata=calldata.encode({"": "call_get", "args": [self.CALLEE_AT]}),
                              bucket_totals=fees.BUCKETS, gas_data=fees.GAS_DATA)
        gid = s.request("run", req)[2]["genvm_id"]
        fin = s.wait_terminal(gid)
        s.close()
        self.assertEqual(fin["finished"]["cause"], "deadline", fin)
        starts = [json.loads(line) for line in self.m.log_text().splitlines()
                  if line.startswith("{") and '"run_started"' in line]
        child = [e for e in starts if e.get("nested_in") == gid]
        self.assertEqual(len(child), 1, self.m.log_text())
        status = f"/proc/{child[0]['pid']}/status"
        alive = os.path.exists(status) and "(zombie)" not in open(status).read()
        self.assertFalse(alive, "the nested executor is gone once its caller's finished event is out")
        nested = self.nested_log()
        self.assertEqual([(n["outcome"], n.get("error")) for n in nested],
                         [("refused", "nested executor stopped: deadline")], self.m.log_text())


if __name__ == "__main__":
    unittest.main()
