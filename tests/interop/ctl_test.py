#!/usr/bin/python3
"""`radiusward ctl` against an independent admin server: Python's own
http.server answering on Unix sockets laid out as a deployment folder
(DIR/admin/<process>.sock, docs/admin_api.md). Checks what ctl prints (the
tables, and with --json the bodies exactly as received), the query its
session filters send, `top --count`, its handling of malformed answers, and
its exit statuses: 0 on 200, 1 when unreachable, on an error answer or an
unreadable one, 2 on usage errors, 3 when `status` finds the process
unhealthy."""

import http.server
import json
import os
import socketserver
import subprocess
import tempfile
import threading
import time
import unittest

from radiusward_fixture import binary_from_argv

BINARY = binary_from_argv()

GATEWAY_STATUS = json.dumps({"role": "gateway", "uptime_s": 61, "submission": {
    "state": "ready", "address": "127.0.0.1:7401", "pending_records": 0, "pending_bytes": 0,
    "queued_records": 0, "in_flight_batches": 0, "in_flight_records": 0,
    "counters": {"accepted": 5, "records_committed": 5}}}) + "\n"
MEMBER_STATUS = json.dumps({"role": "member", "id": 1, "raft_role": "follower", "ready_for_work": False,
                            "leader": None, "term": 3, "commit_index": 9, "applied_index": 9,
                            "pending_submissions": 0, "sessions": 2, "records_held": 0, "held_bytes": 0,
                            "accepting": True, "log_clock_unix_ms": 1764464823000})
SESSIONS = json.dumps({"sessions": [
    {"Acct-Unique-Session-Id": "9f1c", "client": "nas1", "User-Name": "alice", "NAS-IP-Address": "192.0.2.10",
     "Acct-Session-Id": "s1", "Acct-Status-Type": "Start", "started_unix_ms": 1764464823000,
     "updated_unix_ms": 1764464823000, "Acct-Session-Time": 0, "Acct-Input-Octets": 0,
     "Acct-Output-Octets": 0, "Calling-Station-Id": "aa:bb:cc:dd:ee:ff"},
    {"Acct-Unique-Session-Id": "77aa", "client": "nas1", "User-Name": "bob", "NAS-IP-Address": "192.0.2.10",
     "Acct-Session-Id": "s2", "Acct-Status-Type": "Start", "started_unix_ms": 1764464823000,
     "updated_unix_ms": 1764464823000, "Acct-Session-Time": 0, "Acct-Input-Octets": 0,
     "Acct-Output-Octets": 0}]}) + "\n"

# Per process: path -> (status, content type, body). The metrics bodies are
# functions of how often /metrics was asked, so that `top` sees rates.
ANSWERS = {
    "gateway": {
        "/status": (200, "application/json", GATEWAY_STATUS),
        "/records": (200, "application/x-ndjson", '{"index":1,"key":"00"}\n{"index":2,"key":"01"}\n'),
        "/metrics": (200, "text/plain; version=0.0.4", "# TYPE up gauge\nup 1\n"),
        "/version": (200, "application/json", '{"name":"radiusward","version":"0.1.0"}'),
        "/sessions": (503, "application/json", '{"error":"not ready"}\n'),
    },
    "member-1": {
        "/status": (200, "application/json", MEMBER_STATUS),
        "/sessions": (200, "application/json", SESSIONS),
        "/metrics": (200, "text/plain; version=0.0.4", lambda n: (
            "radiusward_member_ledger_events_total{reason=\"records_applied\"} %d\n"
            "radiusward_member_records_held 7\n" % (100 * n))),
    },
    # Answers that are not what the admin API sends.
    "member-3": {
        "/status": (200, "application/json", '{"role":"member","raft_role":'),
        "/sessions": (200, "application/json", '{"sessions":[1]}'),
        "/metrics": (200, "text/plain", "<html>nothing</html>\n"),
    },
}


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's naming)
        self.server.targets.append(self.path)
        path = self.path.split("?", 1)[0]
        status, content_type, body = self.server.answers.get(
            path, (404, "application/json", '{"error":"no such endpoint"}\n'))
        if callable(body):
            self.server.metrics_asked += 1
            body = body(self.server.metrics_asked)
        payload = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(payload)

    def address_string(self):
        return "unix"

    def log_message(self, *args):
        pass


class UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class CtlTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="rw_ctl_")
        cls.dir = cls.tmp.name
        os.makedirs(os.path.join(cls.dir, "admin"))
        cls.servers = {}
        for name, answers in ANSWERS.items():
            server = UnixServer(os.path.join(cls.dir, "admin", name + ".sock"), Handler)
            server.answers, server.targets, server.metrics_asked = answers, [], 0
            threading.Thread(target=server.serve_forever, daemon=True).start()
            cls.servers[name] = server

    @classmethod
    def tearDownClass(cls):
        for server in cls.servers.values():
            server.shutdown()
            server.server_close()
        cls.tmp.cleanup()

    def ctl(self, *args):
        done = subprocess.run([BINARY, "ctl", *args], capture_output=True, text=True, timeout=30)
        return done.returncode, done.stdout, done.stderr

    def test_status_json_is_the_body_exactly(self):
        code, out, _ = self.ctl("--dir", self.dir, "status", "--json")
        self.assertEqual((code, out), (0, GATEWAY_STATUS))

    def test_status_table_of_a_healthy_gateway(self):
        code, out, _ = self.ctl("--dir", self.dir, "status")
        self.assertEqual(code, 0, out)
        self.assertIn("submission  ", out)
        self.assertIn("ready, connected to 127.0.0.1:7401\n", out)
        self.assertIn("records_committed", out)
        self.assertTrue(out.endswith("health  ok\n") or out.rstrip().endswith(" ok"), out)

    def test_member_without_leader_exits_3_after_asking_again_for_the_grace(self):
        asked = len(self.servers["member-1"].targets)
        code, out, _ = self.ctl("--dir", self.dir, "--member", "1", "status", "--grace", "0")
        self.assertEqual(code, 3, out)
        self.assertIn("UNHEALTHY: no leader known", out)
        started = time.monotonic()
        code, out, _ = self.ctl("--dir", self.dir, "--member", "1", "status", "--json", "--grace", "0.6")
        self.assertEqual((code, out), (3, MEMBER_STATUS + "\n"))
        self.assertGreaterEqual(time.monotonic() - started, 0.6)
        self.assertGreaterEqual(len(self.servers["member-1"].targets) - asked, 1 + 3)

    def test_unreadable_answers_exit_1_with_a_clear_message(self):
        for query in ("status", "sessions", "top"):
            code, out, err = self.ctl("--dir", self.dir, "--member", "3", query)
            self.assertEqual(code, 1, (query, out, err))
            self.assertIn("with something unreadable", err)

    def test_sessions_table_filters_at_the_member_and_here(self):
        server = self.servers["member-1"]
        code, out, err = self.ctl("--dir", self.dir, "--member", "1", "sessions", "--user", "alice",
                                  "--mac", "AABB.CCDD.EEFF")
        self.assertEqual(code, 0, err)
        self.assertEqual(server.targets[-1], "/sessions?user=alice&mac=aa%3Abb%3Acc%3Add%3Aee%3Aff")
        self.assertIn("alice", out)
        self.assertNotIn("bob", out)  # This server ignores the query; ctl filters again.
        self.assertTrue(out.endswith("1 session matching the filter\n"), out)
        code, out, _ = self.ctl("--dir", self.dir, "--member", "1", "sessions", "--json", "--nas", "nas1")
        self.assertEqual((code, out), (0, SESSIONS))
        self.assertEqual(server.targets[-1], "/sessions?nas=nas1")

    def test_top_counts_its_refreshes_and_shows_rates(self):
        code, out, err = self.ctl("--dir", self.dir, "--member", "1", "top", "--count", "2", "--interval", "0.2")
        self.assertEqual(code, 0, err)
        self.assertEqual(out.count("refresh "), 2, out)
        self.assertNotIn("\x1b[", out)  # Not a terminal: no screen clearing.
        self.assertIn("records committed", out)
        self.assertIn("held records", out)
        rate = float(out.split("records committed")[1].split()[0])
        self.assertGreater(rate, 0)

    def test_records_from_a_member_one_object_per_line(self):
        code, out, _ = self.ctl("--dir", self.dir, "records")
        self.assertEqual(code, 0)
        lines = out.splitlines()
        self.assertEqual([json.loads(line)["index"] for line in lines], [1, 2])

    def test_socket_path_and_a_body_without_final_newline(self):
        code, out, _ = self.ctl("--socket", os.path.join(self.dir, "admin", "gateway.sock"), "version")
        self.assertEqual(code, 0)
        self.assertTrue(out.endswith("}\n"))

    def test_metrics_as_received(self):
        code, out, _ = self.ctl("--dir", self.dir, "metrics")
        self.assertEqual((code, out), (0, "# TYPE up gauge\nup 1\n"))

    def test_error_answer_exits_1(self):
        code, out, err = self.ctl("--dir", self.dir, "sessions")
        self.assertEqual(code, 1)
        self.assertEqual(out, "")
        self.assertIn("503", err)

    def test_unreachable_process_exits_1_with_a_clear_message(self):
        code, _, err = self.ctl("--dir", self.dir, "--member", "2", "status")
        self.assertEqual(code, 1)
        self.assertIn("member-2.sock", err)
        self.assertIn("is the process running?", err)

    def test_usage_errors_exit_2(self):
        self.assertEqual(self.ctl("status")[0], 2)
        self.assertEqual(self.ctl("--dir", self.dir, "bogus")[0], 2)
        self.assertEqual(self.ctl("--dir", self.dir, "--socket", "/x", "status")[0], 2)
        self.assertEqual(self.ctl("--member", "1", "status")[0], 2)
        self.assertEqual(self.ctl("--dir", self.dir)[0], 2)
        self.assertEqual(self.ctl("--dir", self.dir, "status", "--user", "alice")[0], 2)
        self.assertEqual(self.ctl("--dir", self.dir, "records", "--count", "1")[0], 2)
        self.assertEqual(self.ctl("--dir", self.dir, "top", "--json")[0], 2)
        self.assertEqual(self.ctl("--dir", self.dir, "sessions", "--grace", "1")[0], 2)
        code, _, err = self.ctl("--dir", self.dir, "--member", "1", "sessions", "--mac", "aa:bb")
        self.assertEqual(code, 2)
        self.assertIn("is not a MAC address", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
