#!/usr/bin/python3
"""Interop: the explain log (docs/operations.md "Explain log") on a running
gateway, with FreeRADIUS's radtest as the NAS. `radiusward ctl explain
--user alice --count 2` follows alice's requests while the gateway serves:
its traces name the users-file entry, the method and the verdict, never
the password; other users are not followed; ctl removes its selector when
it is done. `--nas ADDRESS --json` follows a NAS that matches no client and
says why it gets no answer.
  tests/interop/explain_test.py RADIUSWARD_BINARY"""

import json
import os
import subprocess
import sys
import unittest

from radiusward_fixture import ACCESS_REQUEST, Gateway, binary_from_argv, build_request, exchange, run_tool

ROOT = os.environ.get("RW_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_sql  # noqa: E402  (admin_get: the admin API without ctl)

BINARY = binary_from_argv()

USERS = '''
alice   Cleartext-Password := "wonderland"
        Reply-Message = "Hello alice",
        Session-Timeout = 3600

bob     Cleartext-Password := "builder"
'''

CLIENTS = '''
client localhost {
    ipaddr = 127.0.0.1
    secret = testing123
}
'''


def radtest(gateway, user, password):
    return run_tool(["radtest", "-t", "pap", user, password, "127.0.0.1:%d" % gateway.auth_port, "0",
                     "testing123", "0", "127.0.0.1"])


class ExplainInterop(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.gateway = Gateway(BINARY, USERS, CLIENTS, listen=("127.0.0.1",), admin=True)

    @classmethod
    def tearDownClass(cls):
        cls.gateway.__exit__(None, None, None)

    def ctl(self, *args):
        return subprocess.Popen([BINARY, "ctl", "--socket", self.gateway.admin_socket, *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def follow(self, *args):
        """Starts `ctl explain ARGS` and waits until its selector is in force."""
        process = self.ctl("explain", *args)
        line = process.stderr.readline()
        self.assertIn("following selector", line)
        return process

    def selectors(self):
        body = bench_sql.admin_get(self.gateway.admin_socket, "/explain", timeout=10)
        self.assertIsNotNone(body)
        return json.loads(body)["selectors"]

    def test_follows_one_user_until_count(self):
        process = self.follow("--user", "alice", "--count", "2")
        code, output = radtest(self.gateway, "bob", "builder")
        self.assertIn("Received Access-Accept", output, output)
        code, output = radtest(self.gateway, "alice", "wonderland")
        self.assertIn("Received Access-Accept", output, output)
        code, output = radtest(self.gateway, "alice", "looking-glass")
        self.assertIn("Received Access-Reject", output, output)
        out, err = process.communicate(timeout=30)
        self.assertEqual(process.returncode, 0, err)
        blocks = [line for line in out.splitlines() if line.startswith("20")]
        self.assertEqual(len(blocks), 2, out)
        self.assertTrue(all('user "alice"' in line for line in blocks), out)
        self.assertIn("client: localhost", out)
        self.assertIn("entries applied: %s:2 (alice)" % self.gateway.users_path, out)
        self.assertIn("control: Cleartext-Password := <masked>", out)
        self.assertIn("method: PAP", out)
        self.assertIn("reply items: Reply-Message = Hello alice, Session-Timeout = 3600", out)
        self.assertIn("=> Access-Accept", out)
        self.assertIn("rejected: wrong_password", out)
        self.assertIn("=> Access-Reject", out)
        for secret in ("wonderland", "looking-glass", "builder"):
            self.assertNotIn(secret, out)
        self.assertEqual(self.selectors(), [], "ctl removes its selector")
        log = self.gateway.read_log()
        self.assertIn("explain #", log)
        self.assertNotIn("wonderland", log)

    def test_unknown_nas_is_explained_as_json(self):
        process = self.follow("--nas", "127.0.0.2", "--count", "1", "--json", "--seconds", "60")
        request = build_request(ACCESS_REQUEST, 9, [(1, b"alice"), (2, b"x" * 16)])
        self.assertIsNone(exchange(self.gateway.auth_port, request, timeout=0.5, source="127.0.0.2"))
        out, err = process.communicate(timeout=30)
        self.assertEqual(process.returncode, 0, err)
        trace = json.loads(out.strip())
        self.assertEqual(trace["outcome"], "dropped: unknown_client")
        self.assertEqual(trace["client"], "")
        self.assertTrue(trace["from"].startswith("127.0.0.2:"), trace)
        self.assertIn("client: none matches the source address", trace["steps"])

    def test_selects_nothing_is_a_usage_error(self):
        process = self.ctl("explain")
        out, err = process.communicate(timeout=30)
        self.assertEqual(process.returncode, 2, err)
        self.assertIn("explain needs --user, --nas, --mac or --fraction", err)

    def test_bad_selector_is_refused_by_the_gateway(self):
        process = self.ctl("explain", "--mac", "not-a-mac")
        out, err = process.communicate(timeout=30)
        self.assertEqual(process.returncode, 1, err)
        self.assertIn("not a MAC address", err)


if __name__ == "__main__":
    unittest.main()
