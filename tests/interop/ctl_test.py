#!/usr/bin/python3
"""`radiusward ctl` against an independent admin server: Python's own
http.server answering on Unix sockets laid out as a deployment folder
(DIR/admin/<process>.sock, docs/admin_api.md). Checks what ctl prints and
its exit statuses: 0 on 200, 1 when unreachable or on an error answer,
2 on usage errors."""

import http.server
import json
import os
import socketserver
import subprocess
import tempfile
import threading
import unittest

from radiusward_fixture import binary_from_argv

BINARY = binary_from_argv()

ANSWERS = {
    "/status": (200, "application/json", json.dumps({"role": "leader", "term": 3}) + "\n"),
    "/records": (200, "application/x-ndjson",
                 '{"index":1,"key":"00"}\n{"index":2,"key":"01"}\n'),
    "/metrics": (200, "text/plain; version=0.0.4", "# TYPE up gauge\nup 1\n"),
    "/version": (200, "application/json", '{"name":"radiusward","version":"0.1.0"}'),
    "/sessions": (503, "application/json", '{"error":"not ready"}\n'),
}


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's naming)
        status, content_type, body = ANSWERS.get(
            self.path, (404, "application/json", '{"error":"no such endpoint"}\n'))
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
        cls.servers = []
        for name in ("gateway", "member-1"):
            server = UnixServer(os.path.join(cls.dir, "admin", name + ".sock"), Handler)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            cls.servers.append(server)

    @classmethod
    def tearDownClass(cls):
        for server in cls.servers:
            server.shutdown()
            server.server_close()
        cls.tmp.cleanup()

    def ctl(self, *args):
        done = subprocess.run([BINARY, "ctl", *args], capture_output=True, text=True, timeout=30)
        return done.returncode, done.stdout, done.stderr

    def test_status_from_the_gateway_by_dir(self):
        code, out, _ = self.ctl("--dir", self.dir, "status")
        self.assertEqual(code, 0)
        self.assertEqual(json.loads(out)["role"], "leader")

    def test_records_from_a_member_one_object_per_line(self):
        code, out, _ = self.ctl("--dir", self.dir, "--member", "1", "records")
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


if __name__ == "__main__":
    unittest.main(verbosity=2)
