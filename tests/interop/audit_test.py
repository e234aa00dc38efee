#!/usr/bin/python3
"""Interop: the audit log of a real `radiusward gateway --audit-log FILE`
(docs/operations.md "Audit log") fed by FreeRADIUS's radclient: one line per
accepted and rejected Access-Request naming client, identity, decision, rule
and reason; `radiusward audit verify` passes on the file and names the line
of a deleted and of an edited line in copies; the head on /audit and
/metrics matches the file; a restart continues the chain in the same file."""

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest

from radiusward_fixture import *  # noqa: F401,F403

BINARY = binary_from_argv()

USERS = r'''
alice   Cleartext-Password := "wonderland"
        Reply-Message = "Hello"

dave    Auth-Type := Reject
'''

CLIENTS = '''
client localhost {
    ipaddr = 127.0.0.1
    secret = testing123
}
'''

EXIT_AUDIT_BROKEN = 7  # src/app/exit_codes.h kExitAuditBroken


def radclient(port, user, password):
    attributes = 'User-Name = "%s"\nUser-Password = "%s"\nMessage-Authenticator = 0x00\n' % (user, password)
    done = subprocess.run(["radclient", "-x", "-r", "1", "127.0.0.1:%d" % port, "auth", "testing123"],
                          input=attributes, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=30)
    return done.stdout


def admin_get(socket_path, path):
    """GET over the admin API's Unix socket; the body."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect(socket_path)
        s.sendall(("GET %s HTTP/1.1\r\nHost: radiusward\r\nConnection: close\r\n\r\n" % path).encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    return body.decode()


def read_lines(path):
    with open(path, "rb") as f:
        return f.read().decode().splitlines()


def decisions(path):
    return [json.loads(line) for line in read_lines(path) if '"decision":' in line]


def verify(*paths):
    done = subprocess.run([BINARY, "audit", "verify"] + list(paths), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=30)
    return done.returncode, done.stdout


class AuditInterop(RemembersFailure, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rw-audit-")
        cls.audit = os.path.join(cls.dir, "audit.log")
        cls.gateway = Gateway(BINARY, USERS, CLIENTS, extra_args=["--audit-log", cls.audit], admin=True)
        cls.outputs = [radclient(cls.gateway.auth_port, "alice", "wonderland"),
                       radclient(cls.gateway.auth_port, "alice", "wrong"),
                       radclient(cls.gateway.auth_port, "dave", "anything"),
                       radclient(cls.gateway.auth_port, "nobody", "anything")]
        cls.wait_for_decisions(4)

    @classmethod
    def wait_for_decisions(cls, count):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if os.path.exists(cls.audit) and len(decisions(cls.audit)) >= count:
                return
            time.sleep(0.05)
        raise AssertionError("the audit log has fewer than %d decisions:\n%s" % (count, cls.gateway.read_log()))

    @classmethod
    def tearDownClass(cls):
        cls.gateway.__exit__(None, None, None)
        if cls.failed:
            print("audit log kept in", cls.dir)
        else:
            shutil.rmtree(cls.dir, ignore_errors=True)

    def test_1_lines_name_client_identity_decision_rule_and_reason(self):
        self.assertIn("Received Access-Accept", self.outputs[0], self.outputs[0])
        self.assertIn("Received Access-Reject", self.outputs[1], self.outputs[1])
        lines = decisions(self.audit)
        self.assertEqual(len(lines), 4, lines)
        by_case = [(d["identity"], d["decision"], d["reason"]) for d in lines]
        self.assertEqual(by_case, [("alice", "accept", "ok"), ("alice", "reject", "wrong_password"),
                                   ("dave", "reject", "auth_type_reject"), ("nobody", "reject", "unknown_user")])
        for line in lines:
            self.assertEqual(line["client"]["name"], "localhost")
            self.assertTrue(line["client"]["address"].startswith("127.0.0.1:"), line)
            self.assertRegex(line["time"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
        # The method is known once a password is checked; a reject before that says none.
        self.assertEqual([d["method"] for d in lines], ["PAP", "PAP", "none", "none"])
        users = self.gateway.users_path
        self.assertEqual(lines[0]["rule"], users + ":2")
        self.assertEqual(lines[1]["rule"], users + ":2")
        self.assertEqual(lines[2]["rule"], users + ":5")
        self.assertEqual(lines[3]["rule"], "unknown_user")
        self.assertEqual(list(lines[0].keys()), ["seq", "time", "client", "identity", "method", "decision", "rule",
                                                 "reason", "prev", "hash"])

    def test_2_verify_passes_and_the_head_matches_the_admin_api(self):
        code, output = verify(self.audit)
        self.assertEqual(code, 0, output)
        last = json.loads(read_lines(self.audit)[-1])
        self.assertIn("OK: 5 lines in 1 file(s), head sequence %d hash %s" % (last["seq"], last["hash"]), output)
        head = json.loads(admin_get(self.gateway.admin_socket, "/audit"))["logs"][0]
        self.assertEqual((head["sequence"], head["hash"]), (last["seq"], last["hash"]))
        metrics = admin_get(self.gateway.admin_socket, "/metrics")
        self.assertIn('radiusward_audit_lines_total{path="%s",event="written"} 5' % self.audit, metrics)
        self.assertIn('radiusward_audit_head_sequence{path="%s"} %d' % (self.audit, last["seq"]), metrics)

    def test_3_a_deleted_and_an_edited_line_are_named(self):
        lines = read_lines(self.audit)
        deleted = os.path.join(self.dir, "deleted.log")
        with open(deleted, "w") as f:
            f.write("\n".join(lines[:2] + lines[3:]) + "\n")
        code, output = verify(deleted)
        self.assertEqual(code, EXIT_AUDIT_BROKEN, output)
        self.assertIn(deleted + ":3: missing lines: the sequence jumps from 2 to 4", output)
        edited = os.path.join(self.dir, "edited.log")
        with open(edited, "w") as f:
            f.write("\n".join(lines[:1] + [lines[1].replace('"accept"', '"reject"')] + lines[2:]) + "\n")
        code, output = verify(edited)
        self.assertEqual(code, EXIT_AUDIT_BROKEN, output)
        self.assertIn(edited + ":2: edited", output)
        self.assertIn("BROKEN", output)

    def test_4_a_restart_continues_the_chain(self):
        before = json.loads(read_lines(self.audit)[-1])
        self.gateway.__exit__(None, None, None)
        type(self).gateway = Gateway(BINARY, USERS, CLIENTS, extra_args=["--audit-log", self.audit], admin=True)
        output = radclient(self.gateway.auth_port, "alice", "wonderland")
        self.assertIn("Received Access-Accept", output, output)
        self.wait_for_decisions(5)
        lines = read_lines(self.audit)
        self.assertEqual(sum('"header"' in line for line in lines), 1)
        after = json.loads(lines[-1])
        self.assertEqual(after["seq"], before["seq"] + 1)
        self.assertEqual(after["prev"], before["hash"])
        code, output = verify(self.audit)
        self.assertEqual(code, 0, output)


class KeyedAuditInterop(unittest.TestCase):
    """audit.key_file from a config file: `check` refuses a short key at its
    line; with a good one the chain is HMAC-SHA256 and verifies only with
    --key."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="rw-audit-key-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        for name, text in (("users", USERS), ("clients.conf", CLIENTS), ("short.key", "short\n"),
                           ("audit.key", "0123456789abcdef0123456789abcdef\n")):
            with open(os.path.join(self.dir, name), "w") as f:
                f.write(text)

    def config(self, key):
        self.auth_port, self.acct_port = free_udp_port(), free_udp_port()
        path = os.path.join(self.dir, "gateway.yaml")
        with open(path, "w") as f:
            f.write("listen: [127.0.0.1]\nauth_port: %d\nacct_port: %d\nusers_file: users\n"
                    "clients_file: clients.conf\naudit:\n  path: audit.log\n  key_file: %s\n"
                    % (self.auth_port, self.acct_port, key))
        return path

    def test_short_key_is_refused_and_a_keyed_chain_needs_its_key(self):
        done = subprocess.run([BINARY, "check", "--config", self.config("short.key")], capture_output=True,
                              text=True, timeout=30)
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        self.assertIn("gateway.yaml:8:", done.stderr)
        self.assertIn("at least 16 needed", done.stderr)
        config = self.config("audit.key")
        log = open(os.path.join(self.dir, "gateway.log"), "w")
        process = subprocess.Popen([BINARY, "gateway", "--config", config], stdout=log, stderr=subprocess.STDOUT)
        try:
            audit = os.path.join(self.dir, "audit.log")
            deadline = time.monotonic() + 15
            output = ""
            while time.monotonic() < deadline and "Received Access-Accept" not in output:
                output = radclient(self.auth_port, "alice", "wonderland")
            self.assertIn("Received Access-Accept", output, output)
            while time.monotonic() < deadline and not decisions(audit):
                time.sleep(0.05)
            self.assertIn('"chain":"hmac-sha256"', read_lines(audit)[0])
        finally:
            process.terminate()
            process.wait(timeout=10)
            log.close()
        key = os.path.join(self.dir, "audit.key")
        code, output = verify("--key", key, audit)
        self.assertEqual(code, 0, output)
        code, output = verify(audit)
        self.assertEqual(code, EXIT_AUDIT_BROKEN, output)
        self.assertIn("needs the key", output)
        code, output = verify("--key", os.path.join(self.dir, "short.key"), audit)
        self.assertEqual(code, 2, output)


if __name__ == "__main__":
    unittest.main(verbosity=2)
